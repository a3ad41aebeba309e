"""Two browser sessions on one `streamlit run app.py`: while one measures on the CPU, the other sees its place
in line and cancels, through the real rerun that a click makes (AppTest cannot click while a script runs)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

import ui.web.selectors as ST
from tests.e2e.pages import RUN_TIMEOUT_MS, VIEWPORT, open_page, settle


@pytest.fixture(scope="module", autouse=True)
def empty_library(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """No recorded sessions, so the lab opens on its defaults and its one-click example (set before `server`)."""
    folder = tmp_path_factory.mktemp("sessions")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FUSIONVIZ_SESSIONS_DIR", str(folder))
        yield folder


def lab(browser: Browser, server: str) -> Page:
    page = open_page(browser, VIEWPORT)
    page.goto(server)
    page.get_by_role("button", name="Run the small CPU example").wait_for(timeout=120_000)
    settle(page)
    return page


def test_a_waiting_session_sees_its_place_in_line_and_cancels(server: str, browser: Browser) -> None:
    first, second = lab(browser, server), lab(browser, server)
    first.get_by_role("button", name="Run the small CPU example").click()  # linear_ln_gelu, dim 64, batch 32
    first.get_by_role("button", name="Cancel").wait_for(timeout=RUN_TIMEOUT_MS)  # the CPU is busy now
    second.locator(ST.SIDEBAR).get_by_role("button", name="Run", exact=True).click()  # mlp
    second.get_by_text("1st in line for cpu").wait_for(timeout=30_000)
    second.get_by_role("button", name="Cancel").click()
    second.get_by_text("Run cancelled").wait_for(timeout=30_000)
    settle(second)
    assert second.get_by_text("in line for cpu").count() == 0 and second.get_by_text("measured in").count() == 0

    first.get_by_text("This run was measured in").wait_for(timeout=RUN_TIMEOUT_MS)
    assert first.locator(ST.EXCEPTION).count() == 0
    assert second.locator(ST.EXCEPTION).count() == 0
    first.close()
    second.close()
