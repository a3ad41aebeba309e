"""Caps on what a file may cost to open: a small file must not become gigabytes of memory or minutes of work.

The app takes files from anyone, so every file read goes through these caps, checked as the file is read and
inflated (never after). Each is set by an environment variable; a file over a cap is refused with one line
that names the cap and the variable that raises it. The defaults open the largest real traces seen (a
216,000-event rank of an 8-rank job, a 135,805-event transformer training trace) with room to spare.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import msgspec
from isal import isal_zlib  # ISA-L's inflate: zlib's stream API in about a third of its time

from fusionviz.errors import SessionFileError

MB = 1 << 20
_CHUNK = 1 << 20  # inflated bytes per step: the cap is checked at this granularity
_INFLATE_ERROR = cast(type[Exception], isal_zlib.error)  # its stub declares an instance, not the class


class Limits(msgspec.Struct, frozen=True):
    """The caps in force; `Limits.from_env()` reads each from its variable (VARIABLES)."""

    file_mb: int = 100  # a file as read or uploaded (gzipped or not); the app's upload limit is the same
    inflated_mb: int = 512  # the JSON text once decompressed
    events: int = 500_000  # events in a trace's traceEvents list
    name_chars: int = 16_384  # one event's or kernel's name (C++ template names run to a few thousand)
    steps: int = 10_000  # profiled iterations (ProfilerSteps, or compiled-region calls taken as iterations)

    @classmethod
    def from_env(cls) -> Limits:
        values = {}
        for name, variable in VARIABLES.items():
            text = os.environ.get(variable)
            if text is None:
                continue
            if not (text.isascii() and text.isdigit() and int(text) > 0):
                raise SessionFileError(f"{variable}={text!r}: a cap must be a whole number above 0")
            values[name] = int(text)
        return cls(**values)

    def check_file_size(self, size: int, name: object) -> None:
        """Refuse a file (read or uploaded) of `size` bytes over the file cap."""
        if size > self.file_mb * MB:
            raise self.refusal("file_mb", f"{name} is larger than {self.file_mb:,} MB")

    def refusal(self, cap: str, what: str) -> SessionFileError:
        """The one-line refusal for going over `cap` (a field name): what went over, the cap, how to raise it."""
        value = getattr(self, cap)
        unit = " MB" if cap.endswith("_mb") else ""
        return SessionFileError(f"{what}: over the cap of {value:,}{unit} {CAP_WORDS[cap]} "
                                f"(raise it with {VARIABLES[cap]})")


VARIABLES: dict[str, str] = {
    "file_mb": "FUSIONVIZ_MAX_FILE_MB",
    "inflated_mb": "FUSIONVIZ_MAX_INFLATED_MB",
    "events": "FUSIONVIZ_MAX_EVENTS",
    "name_chars": "FUSIONVIZ_MAX_NAME_CHARS",
    "steps": "FUSIONVIZ_MAX_STEPS",
}
CAP_WORDS: dict[str, str] = {
    "file_mb": "per file",
    "inflated_mb": "of decompressed JSON",
    "events": "trace events",
    "name_chars": "characters per name",
    "steps": "profiled iterations",
}


def read_file(path: Path, limits: Limits | None = None) -> bytes:
    """A file's bytes, read no further than the file cap (a device such as /dev/zero never ends); a
    directory or an unreadable path is a SessionFileError naming it."""
    limits = limits or Limits.from_env()
    cap = limits.file_mb * MB
    try:
        with path.open("rb") as f:
            raw = f.read(cap + 1)
    except IsADirectoryError:
        raise SessionFileError(f"{path} is a directory, not a session or trace file") from None
    except OSError as exc:
        raise SessionFileError(f"{path} cannot be read: {exc.strerror or exc}") from None
    limits.check_file_size(len(raw), path)
    return raw


def inflate(raw: bytes | bytearray, name: str, limits: Limits | None = None) -> bytes | bytearray:
    """`raw` decompressed when it is gzipped (every member), else as is, refused as soon as the text passes
    the inflated cap: a 2 MB gzip bomb stops after the cap's worth of work, not after its 2 GB. Plain text
    over the cap is refused too. A damaged or truncated stream is a SessionFileError naming the file."""
    if raw[:2] != b"\x1f\x8b":
        return next(_parts(raw, name, limits or Limits.from_env()))
    text = bytearray()  # grown in place: joining the parts would hold the text twice at its end
    for part in _parts(raw, name, limits or Limits.from_env()):
        text += part
    return text


def inflated(raw: bytes | bytearray, name: str, limits: Limits | None = None) -> Iterator[bytes | bytearray]:
    """`inflate`'s text in parts (`raw` itself when it is not gzipped), so that a reader may decode each part and
    let it go. The whole stream is first inflated once and counted, its parts dropped, so that a file over the cap
    is refused before anything decodes a byte of it, whatever its content (inflating is a small part of reading:
    a reader's work on a bomb's text could take many times as long)."""
    limits = limits or Limits.from_env()
    if raw[:2] == b"\x1f\x8b":
        for _ in _parts(raw, name, limits):
            pass
    return _parts(raw, name, limits)


def _parts(raw: bytes | bytearray, name: str, limits: Limits) -> Iterator[bytes | bytearray]:
    """The inflated text in parts, refused once it passes the cap."""
    cap = limits.inflated_mb * MB
    if raw[:2] != b"\x1f\x8b":
        if len(raw) > cap:
            raise limits.refusal("inflated_mb", f"{name} holds more than {limits.inflated_mb:,} MB of JSON")
        yield raw
        return
    size = 0
    rest = raw
    try:
        while rest:
            if len(rest) >= 4 and (rest[2] != 8 or rest[3] & 0xE0):  # ISA-L waits on a header zlib would refuse
                raise SessionFileError(f"{name} looks gzipped but cannot be decompressed: its header is not a "
                                       "gzip member's (deflate, no reserved flags)")
            stream = isal_zlib.decompressobj(31)
            data = rest
            while True:
                part = stream.decompress(data, _CHUNK)
                size += len(part)
                if size > cap:
                    raise limits.refusal("inflated_mb", f"{name} inflates to more than {limits.inflated_mb:,} MB")
                if part:
                    yield part
                data = stream.unconsumed_tail
                if stream.eof or not (data or part):
                    break
            if not stream.eof:
                raise SessionFileError(f"{name} ends early: it is a truncated gzip file, cut inside its "
                                       "compressed data; copy or download it again")
            rest = stream.unused_data
            if rest[:2] != b"\x1f\x8b":  # trailing padding after the last member, as gzip itself allows
                break
    except _INFLATE_ERROR as exc:
        raise SessionFileError(f"{name} looks gzipped but cannot be decompressed: {exc}") from None
