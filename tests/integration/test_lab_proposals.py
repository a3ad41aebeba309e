"""The lab's "Try the fix" under AppTest with real CPU runs: a proposal's button re-runs the configuration with
its variant added to the modes, and the session then holds that mode."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from fusionviz.measure.service import SessionRun
from fusionviz.records.config import RunConfig, default_threads
from fusionviz.records.session import Session
from tests.app_pages import APP, TIMEOUT, no_errors
from tests.lab_runs import to_the_end
from tests.texts import unescaped
from ui import backend, state

CAPTURED = "default+capture_scalar_outputs"


@pytest.fixture(autouse=True)
def sessions_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "sessions"
    folder.mkdir()
    monkeypatch.setenv("FUSIONVIZ_SESSIONS_DIR", str(folder))
    return folder


def proposals_on_screen(at: AppTest) -> tuple[str, list[str]]:
    """The "Try the fix" fold's label and its lines ("" and [] where there is none)."""
    fold = next((e for e in at.main.expander if unescaped(e.label).startswith("Try the fix")), None)
    if fold is None:
        return "", []
    return unescaped(fold.label), [unescaped(m.value) for m in fold.markdown]


def run_small(at: AppTest) -> tuple[str, list[str]]:
    """Run the model picked in the lab at dim 32, batch 8, eager and default; the "Try the fix" it then shows."""
    at.sidebar.select_slider(key="dim").set_value(32)
    at.sidebar.select_slider(key="batch").set_value(8)
    at.sidebar.multiselect(key="modes").set_value(["default"]).run()
    to_the_end(at.sidebar.button(key="run").click().run())
    no_errors(at)
    label, lines = proposals_on_screen(at)
    print(f"\n{label}: {lines}")
    return label, lines


def test_a_break_at_an_item_that_decides_a_branch_is_advice_without_a_button() -> None:
    """graph_break's `.item()` decides an `if`: capture_scalar_outputs alone would move the break, not remove it."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.sidebar.selectbox(key="model").set_value("graph_break")
    label, lines = run_small(at)
    assert label == "Try the fix: 1 piece of advice"
    assert lines[0].startswith("**Advice**: no option alone does this") and "torch.where" in lines[0]
    assert not [b for b in at.main.button if unescaped(b.label).startswith("Re-run with")]


def test_the_proposal_of_capture_scalar_outputs_reruns_the_model_with_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A model whose `.item()` feeds arithmetic (tests/models_for_tests.py, run as a user's own model): its break
    gets the variant, one click re-runs with it, and the session then holds it, compiled as one graph."""
    monkeypatch.setenv("FUSIONVIZ_ALLOW_OWN_MODELS", "1")
    own = "tests.models_for_tests:scalar_scale"
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.sidebar.selectbox(key="model").set_value(backend.OWN_MODEL).run()
    at.sidebar.text_input(key="own_model").set_value(own)
    label, lines = run_small(at)
    assert label == "Try the fix: 1 variant to re-run"
    assert lines[0].startswith(f"**{CAPTURED}**: graphs 2 → 1")
    button = next(b for b in at.main.button if unescaped(b.label) == f"Re-run with {CAPTURED}")
    to_the_end(button.click().run())
    no_errors(at)
    assert at.sidebar.text_input(key="variants").value == CAPTURED
    config = RunConfig(model=own, dim=32, batch=8, modes=("eager", "default", CAPTURED), threads=default_threads())
    session: Session = state.results().get(SessionRun(config).key)
    assert session is not None and [r.mode for r in session.runs] == ["eager", "default", CAPTURED]
    captured = session.run(CAPTURED)
    assert captured.ok and captured.compile.settings == {"torch._dynamo.config.capture_scalar_outputs": "True"}
    assert (session.run("default").graph_count, captured.graph_count) == (2, 1)
    # run now, the variant is proposed no more (nothing else is, on the CPU)
    assert proposals_on_screen(at) == ("", [])
