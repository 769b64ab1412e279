"""Where a configuration key was written, and how to say what is wrong with it.

:func:`key_lines` maps every key path of a TOML text to the line that sets it (``tomllib``
gives values, not positions), so a configuration error can say ``narrador.toml:12``.
:func:`did_you_mean` proposes the closest known name for a misspelled one.
:class:`ConfigProblem` is one located problem; :class:`worker.config.settings.ConfigError` carries
a list of them.

The locator reads the same TOML 1.0 the settings loader parses: table headers
(``[a."b c".d]``, ``[[x]]``), ``key = value`` lines with bare, quoted and dotted keys, and
inline tables (``options = { specialty = "double" }``: each inner key gets the line it is
written on). Strings (basic,
literal, multi-line) and comments are skipped. It is only used for messages: a key it
cannot place falls back to the nearest enclosing table that it can.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

Path = tuple[str, ...]

#: Bound on the text scanned (characters): configuration files are small.
MAX_SCAN_CHARS = 2_000_000


@dataclass(frozen=True)
class ConfigProblem:
    """One problem found in the configuration.

    Attributes:
        path: the key path (``("forums", "miforo", "watch_forum")``), ``()`` for the file.
        message: what is wrong, in English (``unknown key 'watch_forum' (did you mean
            'watch_forums'?)``).
        where: ``<file>:<line>``, ``<file>``, ``environment variable NARRADOR__...`` or ``""``.
    """

    path: Path
    message: str
    where: str = ""

    def __str__(self) -> str:
        dotted = ".".join(_show_key(p) for p in self.path)
        head = f"{self.where}: " if self.where else ""
        return f"{head}{dotted}: {self.message}" if dotted else f"{head}{self.message}"


def _show_key(part: str) -> str:
    bare = part and all(c.isalnum() or c in "_-" for c in part)
    return part if bare else f'"{part}"'


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``candidates`` to ``word``, else ``""``.

    Args:
        word: what was written.
        candidates: the names that would have been accepted.
    """
    options = [c for c in candidates if isinstance(c, str)]
    folded = {c.casefold(): c for c in options}
    if isinstance(word, str) and word.casefold() in folded:
        return f" (did you mean {folded[word.casefold()]!r}?)"
    close = difflib.get_close_matches(str(word), options, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def known_list(candidates: Iterable[str]) -> str:
    """``a, b, c`` (sorted) for a message's list of accepted names."""
    return ", ".join(sorted(candidates))


# --------------------------------------------------------------------------- the locator


class _Scanner:
    """A cursor over the text that knows lines, strings and comments."""

    def __init__(self, text: str) -> None:
        self.text = text[:MAX_SCAN_CHARS]
        self.i = 0
        self.line = 1

    def peek(self, n: int = 1) -> str:
        return self.text[self.i:self.i + n]

    def advance(self, n: int = 1) -> None:
        chunk = self.text[self.i:self.i + n]
        self.line += chunk.count("\n")
        self.i += len(chunk)

    def done(self) -> bool:
        return self.i >= len(self.text)

    def skip_blank(self, newlines: bool) -> None:
        while not self.done():
            c = self.peek()
            if c in " \t\r" or (newlines and c == "\n"):
                self.advance()
            elif c == "#":
                while not self.done() and self.peek() != "\n":
                    self.advance()
            else:
                return

    def skip_string(self) -> str:
        """Skip a string starting at the cursor; return its value (escapes kept raw)."""
        for quote in ('"""', "'''", '"', "'"):
            if self.text.startswith(quote, self.i):
                break
        else:  # pragma: no cover - callers check first
            return ""
        self.advance(len(quote))
        start = self.i
        while not self.done():
            if quote[0] == '"' and self.peek() == "\\":
                self.advance(2)
                continue
            closes = len(quote) == 1 or self.peek(len(quote) + 1) != quote + quote[0]
            if self.text.startswith(quote, self.i) and closes:
                value = self.text[start:self.i]
                self.advance(len(quote))
                return value
            if len(quote) == 1 and self.peek() == "\n":
                return self.text[start:self.i]  # broken string: stop at the line's end
            self.advance()
        return self.text[start:]

    def read_key(self) -> Path:
        """A dotted key (``a."b.c".d``) at the cursor; ``()`` when there is none."""
        parts: list[str] = []
        while not self.done():
            self.skip_blank(newlines=False)
            c = self.peek()
            if c in "\"'":
                parts.append(self.skip_string())
            else:
                start = self.i
                while not self.done() and (self.peek().isalnum() or self.peek() in "_-"):
                    self.advance()
                if self.i == start:
                    break
                parts.append(self.text[start:self.i])
            self.skip_blank(newlines=False)
            if self.peek() != ".":
                break
            self.advance()
        return tuple(parts)

    def skip_value(self, prefix: Path, found: dict[Path, int]) -> None:
        """Skip one value; record the keys of inline tables under ``prefix``."""
        self.skip_blank(newlines=False)
        c = self.peek()
        if c in "\"'":
            self.skip_string()
        elif c in "[{":
            close = "]" if c == "[" else "}"
            self.advance()
            while not self.done():
                self.skip_blank(newlines=True)
                if self.peek() == close:
                    self.advance()
                    return
                if self.peek() == ",":
                    self.advance()
                    continue
                before = self.i
                if close == "]":
                    self.skip_value(prefix, found)
                else:
                    self.key_value(prefix, found)
                if self.i == before:
                    self.advance()
        else:
            while not self.done() and self.peek() not in ",]}\n#":
                self.advance()

    def key_value(self, prefix: Path, found: dict[Path, int]) -> bool:
        """One ``key = value`` under ``prefix``; the key gets the line it is written on.

        Returns: False when no key starts at the cursor.
        """
        line = self.line
        key = self.read_key()
        if not key:
            return False
        for n in range(1, len(key) + 1):
            found.setdefault(prefix + key[:n], line)
        self.skip_blank(newlines=False)
        if self.peek() == "=":
            self.advance()
            self.skip_value(prefix + key, found)
        return True


def key_lines(text: str) -> dict[Path, int]:
    """Line (1-based) where each key path of the TOML ``text`` is set.

    Tables get the line of their header; a key set by a dotted key or an inline table
    also defines its parents' lines when no header did. Never raises: an unreadable line
    is skipped (the TOML parser reports real syntax errors).
    """
    found: dict[Path, int] = {}
    scan = _Scanner(text)
    table: Path = ()
    while True:
        scan.skip_blank(newlines=True)
        if scan.done():
            return found
        line = scan.line
        if scan.peek() == "[":
            double = scan.peek(2) == "[["
            scan.advance(2 if double else 1)
            table = scan.read_key()
            found.setdefault(table, line)
            for n in range(1, len(table)):
                found.setdefault(table[:n], line)
            while not scan.done() and scan.peek() not in "\n":
                scan.advance()
            continue
        if not scan.key_value(table, found):
            while not scan.done() and scan.peek() != "\n":
                scan.advance()
            continue
        while not scan.done() and scan.peek() != "\n":
            if scan.peek() == "#":
                scan.skip_blank(newlines=False)
                continue
            scan.advance()


def locate(path: Path, lines: Mapping[Path, int]) -> int | None:
    """The line of ``path``, else of its nearest ancestor with a known line, else None."""
    for n in range(len(path), 0, -1):
        if path[:n] in lines:
            return lines[path[:n]]
    return None
