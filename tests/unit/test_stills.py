"""A still of an animation is one of its frames without the controls a picture cannot work: `export --view
animation --format png` wrote frame 1 with its play buttons and slider cut off at the slide's edge."""

from __future__ import annotations

from pathlib import Path

import plotly.graph_objects as go
import pytest

from fusionviz.analysis.report import analyse
from fusionviz.charts.export import still
from fusionviz.charts.style import ChartSettings
from fusionviz.charts.views import view_figure
from fusionviz.cli import main
from fusionviz.errors import ExportError
from fusionviz.records.files import open_path

SESSION = Path(__file__).resolve().parents[2] / "sessions" / "h100_pointwise_chain_4096x4096_float32.json.gz"


def test_a_still_is_the_last_frame_or_a_chosen_one_without_controls() -> None:
    fig = view_figure(analyse(open_path(SESSION)), "animation", ChartSettings.presentation())
    assert fig.frames and fig.layout.updatemenus and fig.layout.sliders  # the animation as it plays
    last = still(fig)
    assert not last.frames and not last.layout.updatemenus and not last.layout.sliders
    end = fig.frames[-1].data
    assert [t.to_json() for t in last.data[:len(end)]] == [go.Figure(t).data[0].to_json() for t in end]
    assert len(last.data) == len(fig.data)  # the legend-only traces the frames leave out are kept
    first = still(fig, 1)
    assert [t.to_json() for t in first.data[:len(fig.frames[0].data)]] == [
        go.Figure(t).data[0].to_json() for t in fig.frames[0].data]
    assert [t.to_json() for t in first.data] != [t.to_json() for t in last.data]
    with pytest.raises(ExportError, match=f"frames 1 to {len(fig.frames)}, not 0"):
        still(fig, 0)


def test_export_frame_is_refused_where_there_is_no_frame_to_pick(tmp_path: Path) -> None:
    out = str(tmp_path / "x.png")
    assert main(["export", str(SESSION), "--view", "latency", "--frame", "2", "--out", out]) == 2
    assert main(["export", str(SESSION), "--view", "animation", "--frame", "2", "--out", str(tmp_path / "x.gif")]) == 2
    assert main(["export", str(SESSION), "--view", "animation", "--frame", "99", "--out", out]) != 0
