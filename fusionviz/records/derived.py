"""Facts derived from one record, made once per record object while it lives.

A run's provenance, op lines, origins and op arguments are each asked for by several analyses (the plan diff,
the collapse, the source view, the module table, the costs): on a transformer's session each took seconds
before it was made once. Records are not changed once a session is made or opened, so the object identifies
what a value came from; the values go with the record (a weak reference's finalizer drops them when it is
freed, before its id can be reused). Two threads asking at once may both make a value: the functions are pure,
so either answer is the same; they share one record's dict (`setdefault` is atomic), and where both registered a
finalizer, the second pops nothing.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

R = TypeVar("R")
T = TypeVar("T")

_VALUES: dict[int, dict[str, Any]] = {}  # by the record's id: each derived value by its function's name


def derived(fn: Callable[[R], T]) -> Callable[[R], T]:
    """`fn(record)`, made once per record object (one that allows weak references: every `Record` does). The
    value is shared by every caller: none may change it."""
    name = f"{fn.__module__}.{fn.__qualname__}"

    @functools.wraps(fn)
    def once(record: R) -> T:
        values = _VALUES.get(id(record))
        if values is None:
            values = _VALUES.setdefault(id(record), {})
            weakref.finalize(record, _VALUES.pop, id(record), None)
        if name not in values:
            values[name] = fn(record)
        return values[name]  # type: ignore[no-any-return]

    return once
