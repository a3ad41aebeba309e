"""Values computed from an open session, kept while the session is in use: a rerun of a page (a toggle, a
page switch) or of a fragment finds its figures and tables here instead of building them again.

Sessions are opened once per content and shared (`backend.open_bytes`), and never changed after, so the
session object (or one of its runs) identifies what a value was computed from: entries are keyed by its
identity, checked through a weak reference, so a new object that reuses a freed one's id never sees them.
A value is made once even when two threads ask for it together (a page and the warm-up, ui/warm.py): the
second waits for the first's.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any

from fusionviz.lru import LRU

# Values kept, most recently used first: the desk's tables and figures of every session of the recorded library,
# which the warm-up builds (ui/warm.py; about 20 values a session, 40 sessions), and those of the sessions and
# views in use besides.
KEPT = 1024

_KEPT: LRU[tuple[Any, ...], tuple[weakref.ref[Any], Any]] = LRU(KEPT)
_MAKING: dict[tuple[Any, ...], threading.Lock] = {}  # a lock per value being made
_MAKING_LOCK = threading.Lock()


def memo(owner: Any, key: tuple[Any, ...], make: Callable[[], Any]) -> Any:
    """`make()`, computed once per `owner` object (a Session, a ModeRun) and `key` while both are in use."""
    full = (id(owner), *key)
    hit = _kept(full, owner)
    if hit is not None:
        return hit[0]
    with _MAKING_LOCK:
        making = _MAKING.setdefault(full, threading.Lock())
    with making:
        hit = _kept(full, owner)  # made meanwhile by the thread this one waited for
        if hit is not None:
            return hit[0]
        try:
            value = make()
            _KEPT.put(full, (weakref.ref(owner), value))
        finally:
            with _MAKING_LOCK:
                _MAKING.pop(full, None)
        return value


def _kept(full: tuple[Any, ...], owner: Any) -> tuple[Any] | None:
    """The value kept under `full`, in a tuple (a value may be None), if it was made from `owner`."""
    hit = _KEPT.get(full)
    return (hit[1],) if hit is not None and hit[0]() is owner else None


def figure_json(fig: Any) -> str:
    """`fig` as Plotly JSON, made once per figure object: the figures the pages keep are drawn again on every
    rerun."""
    return str(memo(fig, ("json",), fig.to_json))
