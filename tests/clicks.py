"""A click on a figure drawn in Python, as the browser sends it (ui/plotly_view.js)."""

from __future__ import annotations

from typing import Any


def clicked(trace: Any, point: int) -> dict[str, Any]:
    """The `point`-th point of `trace` as a click sends it: its customdata by the field names in the trace's meta."""
    return dict(zip(trace.meta["fields"], list(trace.customdata[point]), strict=True))
