"""Every page through AppTest with the switch to plain Streamlit on (`FUSIONVIZ_PLAIN_CHARTS=1`, ui/web/switch.py):
its charts are Streamlit's own `st.plotly_chart`, with none of the app's own elements or scripts, so a page can be
changed without knowing the machinery of ui/web."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from fusionviz.charts.style import ChartSettings
from tests.app_pages import APP, TIMEOUT, no_errors
from ui.web.switch import ENV

ROOT = Path(APP).parent
PAGES = ["pages/0_Fusion_lab.py", "pages/4_Story.py", "pages/1_Trace_explorer.py", "pages/2_Methodology.py",
         "pages/3_Dynamic_shapes.py"]


@pytest.fixture(autouse=True)
def plain(monkeypatch: pytest.MonkeyPatch) -> None:
    """The switch on, and the recorded library shipped in sessions/ (every page has something to draw)."""
    monkeypatch.setenv(ENV, "1")
    monkeypatch.setenv("FUSIONVIZ_SESSIONS_DIR", str(ROOT / "sessions"))


def page(path: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.switch_page(path).run()
    no_errors(at)
    return at


def charts(at: AppTest) -> dict[str, dict[str, Any]]:
    """Streamlit's own Plotly charts by title."""
    specs = [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]
    return {spec["layout"]["title"]["text"]: spec for spec in specs}


@pytest.mark.parametrize("path", PAGES)
def test_every_page_draws_plain_streamlit_charts(path: str) -> None:
    at = page(path)
    assert charts(at), f"{path} drew no chart"
    assert [e.proto.component_name for e in at.get("bidi_component")] == []  # no kept plot, first paint or mode
    assert not any("<script" in h.value for h in at.get("html"))  # not even the clicker


def test_a_plain_page_presents_on_a_rerun_its_charts_at_their_presentation_layout() -> None:
    """Nothing restyles in the browser: the toggle reruns the page, which draws a chart that carries a
    presentation layout at that layout, and the stylesheet of the mode."""
    at = page("pages/1_Trace_explorer.py")
    timeline = next(spec for title, spec in charts(at).items() if title.startswith("Kernel timeline"))
    assert timeline["layout"]["title"]["font"]["size"] == ChartSettings().title_size
    at.toggle(key="_pres_Trace explorer").set_value(True).run()
    no_errors(at)
    timeline = next(spec for title, spec in charts(at).items() if title.startswith("Kernel timeline"))
    assert timeline["layout"]["title"]["font"]["size"] == ChartSettings.presentation().title_size
    assert any(".fv-table" in h.value and "fv-present" not in h.value for h in at.get("html"))
