"""The lab's "Try the fix" under AppTest with real CPU runs: a proposal's button re-runs the configuration with
its variant added to the modes, and the session then holds that mode."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from fusionviz.measure.service import SessionRun
from fusionviz.records.config import RunConfig, default_threads
from fusionviz.records.session import Session
from tests.integration.test_app import APP, TIMEOUT, no_errors
from tests.texts import unescaped
from ui import state

CAPTURED = "default+capture_scalar_outputs"


@pytest.fixture(autouse=True)
def sessions_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "sessions"
    folder.mkdir()
    monkeypatch.setenv("FUSIONVIZ_SESSIONS_DIR", str(folder))
    return folder


def test_the_proposal_of_capture_scalar_outputs_reruns_graph_break_with_it() -> None:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.sidebar.selectbox(key="model").set_value("graph_break")
    at.sidebar.select_slider(key="dim").set_value(32)
    at.sidebar.select_slider(key="batch").set_value(8)
    at.sidebar.multiselect(key="modes").set_value(["default"]).run()
    at.sidebar.button(key="run").click().run()
    no_errors(at)
    said = [unescaped(m.value) for m in at.main.markdown]
    assert "**Try the fix**" in said
    line = next(s for s in said if s.startswith(f"**{CAPTURED}**"))
    print(f"\nthe proposal on screen: {line}")
    assert "Dynamo broke at a tensor's `.item()`" in line and "moves from `.item()` to the branch" in line
    button = next(b for b in at.main.button if unescaped(b.label) == f"Re-run with {CAPTURED}")
    button.click().run()
    no_errors(at)
    assert at.sidebar.text_input(key="variants").value == CAPTURED
    config = RunConfig(model="graph_break", dim=32, batch=8, modes=("eager", "default", CAPTURED),
                       threads=default_threads())
    session: Session = state.results().get(SessionRun(config).key)
    assert session is not None and [r.mode for r in session.runs] == ["eager", "default", CAPTURED]
    assert session.run(CAPTURED).ok and session.run(CAPTURED).compile.settings == {
        "torch._dynamo.config.capture_scalar_outputs": "True"}
    # run now, the variant is proposed no more (nothing else is, on the CPU); its break moved to the branch
    assert "**Try the fix**" not in [unescaped(m.value) for m in at.main.markdown]
    assert not [b for b in at.main.button if unescaped(b.label).startswith("Re-run with")]
    assert "item()" not in session.run(CAPTURED).graph_breaks[0].reason
    assert any("This run was" in unescaped(c.value) for c in at.caption)
