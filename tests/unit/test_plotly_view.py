"""The kept Plotly element's Python side: plotly.js written once among the app's static files (or carried by
an element where it cannot be), and a box drawn on the plot read back as an x range."""

from pathlib import Path

import plotly
import pytest
from plotly.offline import get_plotlyjs

from ui import plotly_view
from ui.plotly_view import box_of


def test_plotly_js_is_written_once_where_the_app_serves_static_files(monkeypatch: pytest.MonkeyPatch,
                                                                    tmp_path: Path) -> None:
    monkeypatch.setattr(plotly_view, "STATIC", tmp_path / "static")
    plotly_view.plotly_url.cache_clear()
    url = plotly_view.plotly_url()
    assert url is not None and url.startswith(f"app/static/fusionviz-plotly-{plotly.__version__}-")
    name = url.rsplit("/", 1)[1]
    written = tmp_path / "static" / name
    text = written.read_text()
    assert text.startswith(get_plotlyjs()) and text.endswith("globalThis.fusionvizPlotly = window.Plotly;\n")
    assert oct(written.stat().st_mode & 0o777) == "0o644"
    assert [p.name for p in (tmp_path / "static").iterdir()] == [name]  # no temporary file left
    plotly_view.plotly_url.cache_clear()


def test_without_a_writable_folder_plotly_js_travels_in_an_element(monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    monkeypatch.setattr(plotly_view, "STATIC", blocked / "static")
    plotly_view.plotly_url.cache_clear()
    assert plotly_view.plotly_url() is None
    plotly_view.plotly_url.cache_clear()


def test_a_box_is_two_distinct_numbers_low_to_high() -> None:
    assert box_of([30.5, 10]) == (10.0, 30.5)
    assert box_of([5, 5]) is None and box_of([1]) is None and box_of(None) is None
    assert box_of(["a", 1]) is None and box_of({"x": [1, 2]}) is None
