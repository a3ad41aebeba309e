"""What the AppTest tests of the pages share: the app, its timeout, and reading a page's figures and errors."""

from __future__ import annotations

import base64
import json
from typing import Any

import numpy as np
from streamlit.testing.v1 import AppTest

from fusionviz.charts.style import CLASS_COLOURS
from fusionviz.records.kernels import MEMORY_CLASS
from tests.conftest import ROOT

APP = str(ROOT / "app.py")
TIMEOUT = 240  # a first-ever compile on a machine takes ~15 s; leave room for a slow CI box


def decode(value: Any) -> list[Any]:
    """A Plotly array as sent to the browser: a list, or base64 {"dtype", "bdata"}."""
    if isinstance(value, dict) and "bdata" in value:
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"]).tolist()
    return list(value)


def figures(at: Any) -> dict[str, dict[str, Any]]:
    """The Plotly figures of the page (or of one of its blocks) by title: Streamlit's charts and the plots kept
    in place (ui/plotly_view.py), each of these with its presentation layout under "present"."""
    specs = [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]
    for element in at.get("bidi_component"):
        if element.proto.component_name == "fusionviz.plotly_view":
            data = json.loads(element.proto.json)
            present = data["present"]
            specs.append({**json.loads(data["figure"]), "config": data["config"],
                          "present": {**present, "layout": json.loads(present["layout"])} if present else None})
    return {spec["layout"]["title"]["text"]: spec for spec in specs}


def kernels_per_mode(timeline: dict[str, Any], kind: str = "kernels") -> dict[str, int]:
    """Bars per mode on the timeline: its kernels, or (`kind="memory"`) its memory operations (memsets and
    copies, drawn in their own colour and counted apart from the kernels)."""
    counts: dict[str, int] = {}
    for trace in timeline["data"]:
        name = trace.get("name")
        if name in CLASS_COLOURS and (name == MEMORY_CLASS) == (kind == "memory"):
            for custom in trace["customdata"]:
                counts[custom[0]] = counts.get(custom[0], 0) + 1
    return counts


def no_errors(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def keyed_block(node: Any, key: str) -> Any:
    """The container of key `key` at any depth under `node`, or None."""
    for child in getattr(node, "children", {}).values():
        if getattr(child, "key", None) == key:
            return child
        if (found := keyed_block(child, key)) is not None:
            return found
    return None
