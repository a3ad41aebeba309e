"""Dataclass trees rebuilt from JSON values, every value checked against its declared type on the way in.

Session files come from anyone, so this is where a file's values are checked before any of them is used:
a string where a number belongs, a null list, an infinite time or a 400-digit count is refused here, with
the path of the value (`runs[0].summary.iterations`), instead of failing somewhere in a chart. The worker's
answers carry the same dataclasses and pass the same checks.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from functools import cache
from typing import Any, Literal

MAX_MAGNITUDE = 1e18  # no count, id, µs or ms fusionviz keeps comes near this (in µs: 31,700 years)
INT64 = 1 << 63  # ids and counts must fit a DataFrame's int64 column


def is_finite_number(value: Any) -> bool:
    """A JSON number (not a bool) that is finite and within ±MAX_MAGNITUDE: the rule for every time and
    duration a file gives, in sessions and traces alike."""
    return type(value) in (int, float) and abs(value) <= MAX_MAGNITUDE and math.isfinite(value)


def is_int64(value: Any) -> bool:
    return type(value) is int and -INT64 <= value < INT64


class DecodeError(ValueError):
    """A value that does not fit its declared type; the message starts with the value's path."""


def decode(tp: Any, value: Any, path: str = "") -> Any:
    """`value` (JSON values) as `tp`: a dataclass (unknown keys ignored, so newer files' additions are
    harmless; missing keys take their defaults), a list, dict, tuple, Literal, union with None, or a
    scalar. Raises DecodeError naming the first value that does not fit."""
    origin = typing.get_origin(tp)
    if tp is Any:
        return value
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(tp)
        if value is None and type(None) in options:
            return None
        errors = []
        for option in (o for o in options if o is not type(None)):
            try:
                return decode(option, value, path)
            except DecodeError as exc:
                errors.append(str(exc))
        raise DecodeError(errors[0] if len(errors) == 1 else f"{_at(path)}{shown(value)} fits none of {tp}")
    if origin is Literal:
        if value not in typing.get_args(tp) or type(value) is bool:
            allowed = ", ".join(repr(a) for a in typing.get_args(tp))
            raise DecodeError(f"{_at(path)}{shown(value)} is not one of {allowed}")
        return value
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return _dataclass(tp, value, path)
    if origin in (list, tuple):  # a tuple too: values built in memory (`dataclasses.asdict`) keep their tuples
        items = [decode(typing.get_args(tp)[0], v, f"{path}[{i}]") for i, v in enumerate(_sequence(value, path))]
        return items if origin is list else tuple(items)
    if origin is dict:
        key_type, value_type = typing.get_args(tp)
        mapping = _expect(value, dict, "an object", path)
        return {decode(key_type, k, path): decode(value_type, v, f"{path}.{k}") for k, v in mapping.items()}
    return _scalar(tp, value, path)


def _dataclass(tp: type, value: Any, path: str) -> Any:
    mapping = _expect(value, dict, f"an object ({tp.__name__})", path)
    hints = _hints(tp)
    kwargs = {}
    for f in dataclasses.fields(tp):
        where = f"{path}.{f.name}" if path else f.name
        if f.name in mapping:
            kwargs[f.name] = decode(hints[f.name], mapping[f.name], where)
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise DecodeError(f"{where}: missing")
    return tp(**kwargs)


@cache
def _hints(tp: type) -> dict[str, Any]:
    return typing.get_type_hints(tp)


def _scalar(tp: Any, value: Any, path: str) -> Any:
    if tp is bool:
        return _expect(value, bool, "true or false", path)
    if tp is str:
        return _expect(value, str, "a string", path)
    if tp is int:
        if not is_int64(value):
            raise DecodeError(f"{_at(path)}{shown(value)} is not a whole number within int64")
        return value
    if tp is float:
        if not is_finite_number(value):
            raise DecodeError(f"{_at(path)}{shown(value)} is not a finite number within ±1e18")
        return float(value)
    raise TypeError(f"decode has no rule for {tp!r}")  # a programming error: a declared type it cannot check


def _sequence(value: Any, path: str) -> list[Any] | tuple[Any, ...]:
    if type(value) not in (list, tuple):
        raise DecodeError(f"{_at(path)}{shown(value)} is not a list")
    return value  # type: ignore[no-any-return]


def _expect(value: Any, kind: type, words: str, path: str) -> Any:
    if type(value) is not kind:
        raise DecodeError(f"{_at(path)}{shown(value)} is not {words}")
    return value


def _at(path: str) -> str:
    return f"{path}: " if path else ""


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
