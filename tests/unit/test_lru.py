"""The one bounded cache type."""

from __future__ import annotations

from fusionviz.lru import LRU


def test_the_bounded_cache_keeps_the_most_recently_used() -> None:
    store: LRU[str, int] = LRU(limit=2)
    store.put("a", 1)
    store.put("b", 2)
    assert store.get("a") == 1  # a is now the most recent
    store.put("c", 3)
    assert "b" not in store and [k for k, _ in store.items()] == ["a", "c"]
    assert store.get(None) is None and store.pop("a") == 1 and "a" not in store
