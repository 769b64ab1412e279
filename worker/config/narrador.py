"""The ``[narrador]`` table: the instance (folder, Redis, public URL, keystore, archive,
heartbeats, mail, metrics).  See :mod:`worker.config.settings` for how a table is loaded."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field, ValidationInfo, field_validator, model_validator

from worker.config.fields import (
    HttpUrl,
    RedisUrl,
    Section,
    base_dir,
    environment,
    http_url,
    id_list,
    networks,
    problem,
    secret,
)


class NarradorSettings(Section):
    """The ``[narrador]`` table.

    Attributes:
        instance_dir: folder for keys, seeds and the embedded Redis (absolute once loaded;
            a relative path is relative to the configuration file's folder).
        redis_url: Redis URL for state, broker and rate limits (``redis://``, ``rediss://``,
            ``unix://``, or ``redis+sentinel://h:p,h:p/<master name>[/db]`` for a master
            managed by Redis Sentinel: ``worker.adapters.redis.url``); empty means "start an embedded
            one" (``narrador up``, ``demo``).
        public_url: the web app's public root URL, used in links inside replies.
        contact_url: URL named in the bot's User-Agent.
        seed_reveal_grace: seconds after a game day ends before its seed is revealed (>= 0).
        keystore: where keys and day seeds live: ``files`` (the instance folder, default) or
            ``redis`` (shared by every machine; secrets from the keyring: ``worker.adapters.files.keyring``).
        keyring_file: ``keystore = "redis"``: the keyring file (a mounted secret; relative to
            the configuration file's folder); empty: read it from ``keyring_env``.
        keyring_env: ``keystore = "redis"``: the environment variable holding the keyring
            document when ``keyring_file`` is empty (default ``NARRADOR_KEYRING``).
        archive: run the archive job (``worker.service.archive``): every closed game day's records
            as JSON Lines, in ``archive_dir`` or an S3-compatible bucket (default true).
        archive_dir: the archive folder (default ``<instance_dir>/archive``; relative to the
            configuration file's folder).
        archive_s3_bucket: archive to this bucket instead of a folder (needs ``boto3``:
            ``pip install 'narrador[s3]'``; credentials from the usual ``AWS_*`` variables).
        archive_s3_prefix: prepended to the archive's object names (default ``narrador/``).
        archive_s3_endpoint_url: an S3-compatible service's URL (MinIO, Ceph...); empty: AWS.
        archive_s3_region: the bucket's region; empty: boto3's default.
        trusted_proxies: how many reverse proxies stand in front of the web app (0-5,
            default 0). With N > 0, werkzeug's ``ProxyFix`` takes the client address, scheme
            and host from the last N ``X-Forwarded-For`` / ``-Proto`` / ``-Host`` entries, so
            the login rate limit and ``metrics_allow`` see the client, not the proxy. Set it
            only behind a proxy that overwrites those headers: a client could forge them.
        metrics_token: a bearer token for ``GET /metrics`` (``Authorization: Bearer
            <token>``), accepted from any address; empty: no token (``metrics_token_env``:
            the name of an environment variable holding it).
        metrics_allow: networks (CIDR) whose clients read ``/metrics`` without the token
            (default the loopback: ``127.0.0.0/8``, ``::1/128``; ``[]``: the token only).
        worker_heartbeat_interval: seconds between two heartbeats of a worker, and of beat,
            in Redis (``worker.app.heartbeat``; 1 to 300, default 10).
        worker_heartbeat_max_age: a worker (or beat) whose last heartbeat is older than this
            many seconds is hung (``narrador health worker`` / ``health beat`` fail,
            ``narrador up`` restarts it); at least twice the interval (default 60).
        smtp_host, smtp_port, smtp_user, smtp_password, smtp_from, smtp_starttls: the mail
            server of the games' ``notify_email`` (``worker.service.notify``); no ``smtp_host``: no
            e-mail. A login only when ``smtp_user`` is set.
    """

    instance_dir: Path = Path("instance")
    redis_url: RedisUrl = ""
    public_url: HttpUrl = "http://127.0.0.1:5000"
    contact_url: HttpUrl = "https://github.com/narrador/narrador"
    seed_reveal_grace: int = Field(default=3600, ge=0)
    keystore: Literal["files", "redis"] = "files"
    keyring_file: str = ""
    keyring_env: str = Field(default="NARRADOR_KEYRING", pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")

    archive: bool = True
    archive_dir: str = ""
    archive_s3_bucket: str = Field(default="", pattern=r"^([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])?$")
    archive_s3_prefix: str = Field(default="narrador/", max_length=200)
    archive_s3_endpoint_url: Annotated[str, AfterValidator(lambda v: http_url(v) if v else v)] = ""
    archive_s3_region: str = Field(default="", max_length=50)
    worker_heartbeat_interval: float = Field(default=10.0, ge=1.0, le=300.0)
    worker_heartbeat_max_age: float = Field(default=60.0, ge=2.0, le=3600.0)

    @model_validator(mode="after")
    def _heartbeat_age(self) -> NarradorSettings:
        if self.worker_heartbeat_max_age < 2 * self.worker_heartbeat_interval:
            raise problem(("worker_heartbeat_max_age",),
                           f"worker_heartbeat_max_age ({self.worker_heartbeat_max_age:g} s) must be at least "
                           f"twice worker_heartbeat_interval ({self.worker_heartbeat_interval:g} s)")
        return self

    smtp_host: str = Field(default="", max_length=253)
    smtp_port: int = Field(default=25, ge=1, le=65535)
    smtp_user: str = Field(default="", max_length=200)
    smtp_password: str = secret(max_length=200)
    smtp_from: str = Field(default="narrador@localhost", pattern=r"^[^@\s]+@[^@\s]+$", max_length=254)
    smtp_starttls: bool = False

    trusted_proxies: int = Field(default=0, ge=0, le=5)
    metrics_token: str = secret(max_length=200)
    metrics_token_env: str = ""
    metrics_allow: Annotated[tuple[str, ...], BeforeValidator(id_list), AfterValidator(networks)] = (
        "127.0.0.0/8", "::1/128")

    @model_validator(mode="before")
    @classmethod
    def _token_from_environment(cls, data: Any, info: ValidationInfo) -> Any:
        """``metrics_token_env = "VAR"`` reads the token from ``$VAR`` when it is unset."""
        if not isinstance(data, dict) or data.get("metrics_token"):
            return data
        var = data.get("metrics_token_env")
        env = environment(info)
        if isinstance(var, str) and var and env.get(var):
            return {**data, "metrics_token": env[var]}
        return data

    @field_validator("keyring_file", "archive_dir", mode="after")
    @classmethod
    def _relative_path(cls, value: str, info: ValidationInfo) -> str:
        if not value:
            return value
        path = Path(value).expanduser()
        return str(path if path.is_absolute() else (base_dir(info) / path).resolve())

    @field_validator("instance_dir", mode="after")
    @classmethod
    def _absolute(cls, value: Path, info: ValidationInfo) -> Path:
        value = value.expanduser()
        return value if value.is_absolute() else (base_dir(info) / value).resolve()
