"""ui.views_ahead: the presentation's next views are built into the caches the page draws from, in the order
offered, and a newer request supersedes an older one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fusionviz.analysis.report import Report, digest
from fusionviz.charts.style import ChartSettings
from fusionviz.records.files import open_path
from ui import sections, story, views_ahead
from ui.lab import LAB_CHART_PX, presented

MLP = Path(__file__).resolve().parents[2] / "sessions" / "h200_mlp_512x256_float32.json.gz"
SETTINGS = ChartSettings.presentation()


def finished() -> None:
    """Until the builder has done what was queued before this."""
    views_ahead._BUILDER.submit(lambda: None).result(timeout=60)


def never_built(*_: Any, **__: Any) -> Any:
    raise AssertionError("built again where it was built ahead")


@pytest.fixture
def report() -> Report:
    session = open_path(MLP)
    return Report(session, digest(session))  # one of its own (not `analyse`'s): the caches are kept per report


def test_the_next_views_follow_the_one_shown_in_order_wrapping_round() -> None:
    views = ["verdict", "timeline", "collapse", "latency"]
    assert views_ahead.next_views(views, "verdict", 1) == ["timeline"]
    assert views_ahead.next_views(views, "collapse", 2) == ["latency", "verdict"]
    assert views_ahead.next_views(views[:2], "timeline", 2) == ["verdict"]  # never the view shown
    assert views_ahead.next_views(views, "grid", 2) == ["verdict", "timeline"]


def test_a_view_built_ahead_is_drawn_from_memory(report: Report, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(views_ahead, "AFTER_S", 0.0)
    views = presented(report)
    views_ahead.build_next(report, views, "verdict", SETTINGS, LAB_CHART_PX, {"timeline": None}, ahead=1)
    finished()
    monkeypatch.setattr(story, "view_figure", never_built)
    monkeypatch.setattr(sections, "stamped", never_built)
    fig = story.kept_figure(report, "timeline", SETTINGS, mode=None, height=LAB_CHART_PX)
    assert "Kernel timeline" in sections.drawn_json(fig, report.source.stamp, SETTINGS)


def test_a_newer_request_supersedes_an_older_one(report: Report, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(views_ahead, "AFTER_S", 0.3)
    views = presented(report)
    views_ahead.build_next(report, views, "verdict", SETTINGS, LAB_CHART_PX, {"timeline": None}, ahead=1)
    views_ahead.build_next(report, views, "latency", SETTINGS, LAB_CHART_PX, {}, ahead=1)  # moved on
    finished()
    monkeypatch.setattr(story, "view_figure", lambda *_, **__: pytest.fail("asked after the builds"))
    kept_after = story.kept_figure(report, views_ahead.next_views(views, "latency", 1)[0], SETTINGS,
                                   height=LAB_CHART_PX)
    assert kept_after is not None
    built: list[str] = []

    def building(_report: Report, view: str, *_: Any, **__: Any) -> Any:
        built.append(view)
        return never_built()

    monkeypatch.setattr(story, "view_figure", building)
    with pytest.raises(AssertionError, match="built again"):
        story.kept_figure(report, "timeline", SETTINGS, mode=None, height=LAB_CHART_PX)
    assert built == ["timeline"]  # the older request's view was never built
