"""Where the archive job writes closed game days: one object ``<game>/<YYYY-MM-DD>.jsonl``
per day, in a folder (files 0600 written whole and renamed into place) or an S3-compatible
bucket; :func:`archive_target` picks the configured one (:mod:`worker.service.archive`)."""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterable
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from worker.service.archive import _DAY, ArchiveError

if TYPE_CHECKING:
    from worker.config.settings import Settings

__all__ = ["ArchiveTarget", "FolderArchive", "S3Archive", "archive_target"]


class ArchiveTarget(Protocol):
    """Where closed days are archived: one object per game day."""

    def write(self, game: str, day: date, data: bytes) -> None: ...
    def read(self, game: str, day: date) -> bytes | None: ...
    def describe(self) -> str: ...


def _object_name(game: str, day: date) -> str:
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}", game) or game in {".", ".."}:
        raise ArchiveError(f"game id not usable as an archive name: {game!r}")
    return f"{game}/{day.isoformat()}.jsonl"


class FolderArchive:
    """Day files under ``root`` (``<game>/<day>.jsonl``; folders 0700, files 0600), each
    written to a temporary name, fsynced and renamed into place."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    def describe(self) -> str:
        """The folder, for messages."""
        return str(self.root)

    def write(self, game: str, day: date, data: bytes) -> None:
        """Write one day's file whole.

        Raises:
            ArchiveError: the folder or the file cannot be written.
        """
        path = self.root / _object_name(game, day)
        try:
            for folder in (self.root, path.parent):
                folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".part")
            try:
                os.fchmod(fd, 0o600)
                os.write(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, path)
        except OSError as exc:
            raise ArchiveError(f"cannot write {path}: {exc.strerror or exc}") from None

    def read(self, game: str, day: date) -> bytes | None:
        """The day's file, or ``None``."""
        try:
            return (self.root / _object_name(game, day)).read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise ArchiveError(f"cannot read the archive of {game} {day}: {exc.strerror or exc}") from None


class S3Archive:
    """Day objects ``<prefix><game>/<day>.jsonl`` in an S3-compatible bucket (boto3).

    Args:
        bucket: the bucket's name.
        prefix: prepended to every object name (e.g. ``narrador/``).
        client: a boto3 S3 client (built from ``endpoint_url`` and ``region`` when None;
            credentials from boto3's usual chain: ``AWS_ACCESS_KEY_ID`` /
            ``AWS_SECRET_ACCESS_KEY``, a profile, an instance role).
    """

    def __init__(self, bucket: str, *, prefix: str = "", client: Any = None, endpoint_url: str = "",
                 region: str = "", timeout: float = 30.0) -> None:
        self.bucket, self.prefix = bucket, prefix
        if client is None:
            try:
                import boto3
                from botocore.config import Config
            except ImportError:
                raise ArchiveError("archive_s3_bucket needs boto3: pip install 'narrador[s3]'") from None
            client = boto3.client("s3", endpoint_url=endpoint_url or None, region_name=region or None,
                                  config=Config(connect_timeout=timeout, read_timeout=timeout,
                                                retries={"max_attempts": 3, "mode": "standard"}))
        self.client = client

    def describe(self) -> str:
        """``s3://bucket/prefix``, for messages."""
        return f"s3://{self.bucket}/{self.prefix}"

    def _key(self, game: str, day: date) -> str:
        return self.prefix + _object_name(game, day)

    def write(self, game: str, day: date, data: bytes) -> None:
        """Put one day's object (replacing it).

        Raises:
            ArchiveError: the bucket refused it or could not be reached.
        """
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            self.client.put_object(Bucket=self.bucket, Key=self._key(game, day), Body=data,
                                   ContentType="application/x-ndjson; charset=utf-8")
        except (BotoCoreError, ClientError) as exc:
            raise ArchiveError(f"cannot write {self.describe()}{_object_name(game, day)}: {exc}") from None

    def read(self, game: str, day: date) -> bytes | None:
        """The day's object, or ``None``."""
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return self.client.get_object(Bucket=self.bucket, Key=self._key(game, day))["Body"].read()
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                return None
            raise ArchiveError(f"cannot read {self.describe()}{_object_name(game, day)}: {exc}") from None
        except BotoCoreError as exc:
            raise ArchiveError(f"cannot read {self.describe()}{_object_name(game, day)}: {exc}") from None

    def download(self, folder: Path, games: Iterable[str]) -> list[Path]:
        """Copy every day object of ``games`` into ``folder/<game>/`` (for ``records import``)."""
        out = []
        for game in games:
            token: dict[str, str] = {}
            for _ in range(100_000):  # pages of up to 1,000 objects
                page = self.client.list_objects_v2(Bucket=self.bucket, Prefix=f"{self.prefix}{game}/", **token)
                for obj in page.get("Contents", []):
                    name = obj["Key"][len(self.prefix):]
                    day = name.rsplit("/", 1)[-1].removesuffix(".jsonl")
                    if _DAY.fullmatch(day):
                        data = self.read(game, date.fromisoformat(day)) or b""
                        FolderArchive(folder).write(game, date.fromisoformat(day), data)
                        out.append(folder / name)
                if not page.get("IsTruncated"):
                    break
                token = {"ContinuationToken": page["NextContinuationToken"]}
        return out


def archive_target(settings: Settings) -> ArchiveTarget | None:
    """The configured target: S3 when ``archive_s3_bucket`` is set, else the folder
    (``archive_dir``, default ``<instance_dir>/archive``); ``None`` when ``archive`` is off."""
    n = settings.narrador
    if not n.archive:
        return None
    if n.archive_s3_bucket:
        return S3Archive(n.archive_s3_bucket, prefix=n.archive_s3_prefix, endpoint_url=n.archive_s3_endpoint_url,
                         region=n.archive_s3_region)
    return FolderArchive(n.archive_dir or Path(n.instance_dir) / "archive")

