"""The schema's bounds and its one check: records rebuilt from JSON values by msgspec, every value checked
against its declared type and bounds on the way in.

Every record that crosses a boundary (a session file, the worker's jobs and replies, a kernel row) is declared
once, as a dataclass or msgspec Struct whose numbers carry their bounds (`Finite`, `Int64`, `Count`). Files come
from anyone, so a string where a number belongs, a null list, an infinite time or a 400-digit count is refused
by `decode`, with the path of the value (`runs[0].summary.iterations`), instead of failing somewhere in a chart.
"""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

import msgspec
from msgspec import Meta

MAX_MAGNITUDE = 1e18  # no count, id, µs or ms fusionviz keeps comes near this (in µs: 31,700 years)
INT64 = 1 << 63  # ids and counts must fit a DataFrame's int64 column

Finite = Annotated[float, Meta(ge=-MAX_MAGNITUDE, le=MAX_MAGNITUDE)]  # every time and duration a file gives
Positive = Annotated[float, Meta(gt=0, le=MAX_MAGNITUDE)]  # a measured duration: analysis divides by it
Int64 = Annotated[int, Meta(ge=-INT64, le=INT64 - 1)]  # an id
Count = Annotated[int, Meta(ge=0, le=INT64 - 1)]  # a count or an index

T = TypeVar("T")


class DecodeError(ValueError):
    """A value that does not fit its declared type; the message starts with the value's path."""


def decode(tp: type[T], value: Any) -> T:
    """`value` (JSON values) as `tp`: unknown keys ignored (newer files' additions are harmless), missing
    keys taking their defaults. Raises DecodeError naming the first value that does not fit."""
    try:
        return msgspec.convert(value, tp)
    except msgspec.ValidationError as exc:
        raise DecodeError(located(str(exc))) from None


def located(message: str) -> str:
    """msgspec's `Expected `int`, got `str` - at `$.runs[0].dim`` as `runs[0].dim: expected `int`, got `str``:
    the path first, on one line, whatever the file's values hold."""
    line = " ".join(message.split())
    text, _, where = line.rpartition(" - at `$")
    if not text:
        return clip(line, 200)
    path = where.removesuffix("`").removeprefix(".")
    return f"{path}: " * bool(path) + clip(text[:1].lower() + text[1:], 200)


def shown(value: Any) -> str:
    """A value from a file, as an error message quotes it: short, whatever the file holds."""
    if value is None:
        return "null"
    if isinstance(value, dict | list):
        return f"a{'n object' if isinstance(value, dict) else ' list'}"
    return clip(repr(value), 40)


def clip(text: str, width: int) -> str:
    """`text` cut to `width` characters, an ellipsis marking the cut."""
    return text if len(text) <= width else text[: width - 1] + "…"


def is_int64(value: Any) -> bool:
    """A JSON integer (not a bool) that fits an int64 column."""
    return type(value) is int and -INT64 <= value < INT64
