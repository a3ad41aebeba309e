"""Values computed from an open session, kept while the session is in use: a rerun of a page (a toggle, a
page switch) or of a fragment finds its figures and tables here instead of building them again.

Sessions are opened once per content and shared (`backend.open_bytes`), and never changed after, so the
session object (or one of its runs) identifies what a value was computed from: entries are keyed by its
identity, checked through a weak reference, so a new object that reuses a freed one's id never sees them.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from fusionviz.lru import LRU

KEPT = 64  # values kept, most recently used first: a page's tables and figures for a few sessions and views

_KEPT: LRU[tuple[Any, ...], tuple[weakref.ref[Any], Any]] = LRU(KEPT)


def memo(owner: Any, key: tuple[Any, ...], make: Callable[[], Any]) -> Any:
    """`make()`, computed once per `owner` object (a Session, a ModeRun) and `key` while both are in use."""
    full = (id(owner), *key)
    hit = _KEPT.get(full)
    if hit is not None and hit[0]() is owner:
        return hit[1]
    value = make()
    _KEPT.put(full, (weakref.ref(owner), value))
    return value
