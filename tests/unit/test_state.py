"""The app's results store and key function (no page needed)."""

from __future__ import annotations

from fusionviz.records.config import RunConfig
from ui.state import ResultsStore, result_key


def test_result_key_is_stable_and_tells_configurations_apart() -> None:
    a, b = RunConfig(model="mlp"), RunConfig(model="mlp", batch=8)
    assert result_key("session", a) == result_key("session", RunConfig(model="mlp"))
    assert result_key("session", a) != result_key("session", b) != result_key("naive", b, 100)
    assert result_key("sweep", a).startswith("sweep|")


def test_results_store_keeps_the_most_recently_used() -> None:
    store = ResultsStore(limit=2)
    store.put("a", 1)
    store.put("b", 2)
    assert store.get("a") == 1  # a is now the most recent
    store.put("c", 3)
    assert "b" not in store and [k for k, _ in store.items()] == ["a", "c"]
    assert store.get(None) is None and store.pop("a") == 1 and "a" not in store
