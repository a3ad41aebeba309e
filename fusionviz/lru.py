"""The one bounded cache type: what the app keeps (finished runs shared by every user, a user's own failed runs,
figures computed from an open session) is kept in an LRU, so memory stays bounded however long it runs."""

from __future__ import annotations

import _thread  # the lock `threading.Lock` is, without importing `threading` into a small `inspect`
from collections import OrderedDict
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class LRU(Generic[K, V]):
    """A thread-safe mapping of at most `limit` entries: reading or writing an entry makes it the most recently
    used, and the least recently used goes first."""

    def __init__(self, limit: int) -> None:
        self._items: OrderedDict[K, V] = OrderedDict()
        self._limit = limit
        self._lock = _thread.allocate_lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            if key not in self._items:
                return None
            self._items.move_to_end(key)
            return self._items[key]

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._limit:
                self._items.popitem(last=False)

    def pop(self, key: K) -> V | None:
        with self._lock:
            return self._items.pop(key, None)

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._items

    def items(self) -> list[tuple[K, V]]:
        """The entries, least recently used first."""
        with self._lock:
            return list(self._items.items())
