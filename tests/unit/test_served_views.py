"""ui.served_views, registered in the app's routes, and the middleware that answers for them: the presentation's
views by URL, the same JSON to the byte as a run sends the plot, and nothing for a name never offered or a session
gone."""

from __future__ import annotations

import asyncio
import gc
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from fusionviz.analysis.report import Report
from fusionviz.charts.style import ChartSettings
from fusionviz.records.files import open_path
from ui import sections, served_views, story
from ui.background import scheduler
from ui.lab import LAB_CHART_PX, PLOT_KEY, next_views
from ui.web import routes
from ui.web.middleware import PageHead

MLP = Path(__file__).resolve().parents[2] / "sessions" / "h100_mlp_512x256_float32.json.gz"
SETTINGS = ChartSettings.presentation()


@pytest.fixture
def report() -> Report:
    session = open_path(MLP)
    return Report(session)  # one of its own (not `analyse`'s): the caches are kept per report


def get(path: str) -> tuple[int, bytes]:
    """The middleware's answer to a GET of `path`, with an app behind it that must not be asked."""
    sent: list[dict[str, Any]] = []

    async def app(*_: Any) -> None:
        raise AssertionError("passed on to Streamlit")

    async def receive() -> dict[str, Any]:
        return {"type": "http.request"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(PageHead(app)({"type": "http", "method": "GET", "path": path}, receive, send))
    return sent[0]["status"], sent[1]["body"]


def test_the_next_views_follow_the_one_shown_in_order_wrapping_round() -> None:
    views = ["verdict", "timeline", "collapse", "latency"]
    assert next_views(views, "verdict", 1) == ["timeline"]
    assert next_views(views, "collapse", 2) == ["latency", "verdict"]
    assert next_views(views[:2], "timeline", 2) == ["verdict"]  # never the view shown
    assert next_views(views, "grid", 2) == ["verdict", "timeline"]


def test_a_view_is_served_as_the_run_sends_it(report: Report) -> None:
    name = served_views.offer(report, "timeline", SETTINGS, None, LAB_CHART_PX, PLOT_KEY)
    assert served_views.offer(report, "timeline", SETTINGS, None, LAB_CHART_PX, PLOT_KEY) == name  # fetched once
    assert served_views.offer(report, "verdict", SETTINGS, None, LAB_CHART_PX, PLOT_KEY) != name
    status, body = get(f"/some/page/{name}")
    assert status == 200
    answer = json.loads(body)
    fig = story.kept_figure(report, "timeline", SETTINGS, mode=None, height=LAB_CHART_PX)
    assert answer["figure"] == sections.drawn_json(fig, sections.stamp_of(report), SETTINGS)  # to the byte
    assert "Kernel timeline" in answer["figure"]
    assert answer["caption"] == story.headline_html(story.scene_headline(report, "timeline"), PLOT_KEY)


def test_nothing_is_served_for_a_name_never_offered_or_a_session_gone() -> None:
    assert get(f"/{routes.PREFIX}not-offered.json") == (404, b"")
    session = open_path(MLP)
    name = served_views.offer(Report(session), "verdict", SETTINGS, None, LAB_CHART_PX, PLOT_KEY)
    del session
    gc.collect()
    assert get(f"/{name}") == (404, b"")


def test_a_view_asked_for_during_a_page_run_is_built_after_it(report: Report) -> None:
    name = served_views.offer(report, "latency", SETTINGS, None, LAB_CHART_PX, PLOT_KEY)
    inside, ended = threading.Event(), []

    def page() -> None:
        with scheduler().page_run():
            inside.set()
            time.sleep(0.5)
            ended.append(time.monotonic())

    running = threading.Thread(target=page)
    running.start()
    inside.wait()
    status, _ = get(f"/{name}")
    answered = time.monotonic()
    running.join()
    assert status == 200 and answered >= ended[0]
