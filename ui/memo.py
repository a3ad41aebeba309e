"""Values computed from an open session, kept while the session is in use: a rerun of a page (a toggle, a
page switch) or of a fragment finds its figures and tables here instead of building them again.

Sessions are opened once per content and shared (`backend.open_bytes`), and never changed after, so the
session object (or one of its runs) identifies what a value was computed from.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

KEPT = 64  # values kept, most recently used first: a page's tables and figures for a few sessions and views


class _Memo:
    """A small LRU of values computed from a session: keyed by the session's identity (checked through a weak
    reference, so a new session that reuses a freed one's id never sees its entries) and the other inputs."""

    def __init__(self, limit: int = KEPT) -> None:
        self._items: OrderedDict[tuple[Any, ...], tuple[weakref.ref[Any], Any]] = OrderedDict()
        self._limit = limit
        self._lock = threading.Lock()

    def get(self, owner: Any, key: tuple[Any, ...], make: Callable[[], Any]) -> Any:
        full = (id(owner), *key)
        with self._lock:
            hit = self._items.get(full)
            if hit is not None and hit[0]() is owner:
                self._items.move_to_end(full)
                return hit[1]
        value = make()
        with self._lock:
            self._items[full] = (weakref.ref(owner), value)
            while len(self._items) > self._limit:
                self._items.popitem(last=False)
        return value


_MEMO = _Memo()


def memo(owner: Any, key: tuple[Any, ...], make: Callable[[], Any]) -> Any:
    """`make()`, computed once per `owner` object (a Session, a ModeRun) and `key` while both are in use."""
    return _MEMO.get(owner, key, make)
