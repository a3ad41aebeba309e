"""The Dynamic shapes page through streamlit's AppTest: the shipped GPU sweep and a real CPU sweep."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from fusionviz.records.session import Session
from tests.app_pages import APP, TIMEOUT, decode, figures, no_errors
from tests.conftest import SHIPPED_SWEEP
from tests.texts import unescaped
from ui import state

pytestmark = pytest.mark.usefixtures("sessions_dir")  # an empty sessions/ folder for every test (conftest.py)


SHAPES = "pages/3_Dynamic_shapes.py"


def test_dynamic_shapes_first_open_shows_the_shipped_gpu_sweep(sessions_dir: Path, shipped_sweep: Session) -> None:
    shutil.copy(SHIPPED_SWEEP, sessions_dir / SHIPPED_SWEEP.name)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.switch_page(SHAPES).run()
    no_errors(at)
    assert any(SHIPPED_SWEEP.name in unescaped(i.value) for i in at.info)
    env = shipped_sweep.environment
    assert any("Recorded session: NVIDIA H200" in unescaped(c.value) and env.torch_version in unescaped(c.value)
               and env.captured_at[:10] in unescaped(c.value) for c in at.caption)
    figs = figures(at)
    latency = figs["Latency of every call: compiles are the peaks"]
    compiled = {t["name"]: t for t in latency["data"] if t["name"].endswith(": compiled")}
    assert {name: len(decode(t["x"])) for name, t in compiled.items()} == {
        f"{s.strategy}: compiled": sum(c.compiled for c in s.calls) for s in shipped_sweep.sweep.strategies}
    summary = next(d.value for d in at.dataframe if "ratio_vs_static" in d.value.columns)
    assert list(summary.compiles) == [s.compiles for s in shipped_sweep.sweep.strategies]

    # The lab skips a sweep-only session: nothing recorded with mode runs, so it offers the example.
    lab = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    no_errors(lab)
    assert lab.button(key="example")


def test_dynamic_shapes_presents_each_sweep_view_then_its_sections(sessions_dir: Path) -> None:
    shutil.copy(SHIPPED_SWEEP, sessions_dir / SHIPPED_SWEEP.name)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.switch_page(SHAPES).run()
    at.toggle(key="_pres_Dynamic shapes").set_value(True).run()
    no_errors(at)
    shown = at.radio(key="s_present_view")
    assert shown.options == ["Latency per call", "Steady state", "Cumulative", "Summary", "Kernels"]
    for option, title in (("Latency per call", "Latency of every call"), ("Steady state", "Steady-state"),
                          ("Cumulative", "Cumulative time over the schedule")):
        at.radio(key="s_present_view").set_value(option).run()
        no_errors(at)
        (chart,) = figures(at)  # one chart per screen
        assert chart.startswith(title)
    at.radio(key="s_present_view").set_value("Summary").run()
    assert not figures(at) and any("ratio_vs_static" in d.value.columns for d in at.dataframe)


def test_dynamic_shapes_runs_a_sweep_through_the_ui(sessions_dir: Path) -> None:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.switch_page(SHAPES).run()
    no_errors(at)
    assert not at.get("plotly_chart")  # nothing recorded here, nothing run yet
    assert at.sidebar.radio(key="s_dimension_mlp").options == ["batch"]  # mlp has no sequence length
    at.sidebar.selectbox(key="s_model").set_value("transformer_block").run()
    assert at.sidebar.radio(key="s_dimension_transformer_block").options == ["batch", "seq"]
    at.sidebar.selectbox(key="s_model").set_value("mlp").run()
    at.sidebar.number_input(key="s_dim").set_value(32)
    at.sidebar.radio(key="s_schedule").set_value("list").run()
    at.sidebar.text_input(key="s_sizes").set_value("4, 8, x").run()
    assert any("whole numbers" in unescaped(e.value) for e in at.sidebar.error)
    at.sidebar.text_input(key="s_sizes").set_value("4, 8, 12, 4, 8, 12")
    at.sidebar.multiselect(key="s_strategies").set_value(["static", "dynamic"]).run()
    assert not at.get("plotly_chart")  # moving widgets runs nothing
    at.sidebar.button(key="s_run").click().run()
    no_errors(at)

    session = next(s for k, s in state.results().items() if k.startswith("sweep|") and s.config.model == "mlp"
                   and s.sweep.schedule == [4, 8, 12, 4, 8, 12])
    assert any("Live on this machine" in unescaped(c.value) for c in at.caption)
    figs = figures(at)
    latency = figs["Latency of every call: compiles are the peaks"]
    lines = {t["name"]: decode(t["y"]) for t in latency["data"] if t.get("mode") == "lines+markers"}
    assert lines == {s.strategy: pytest.approx([c.latency_ms for c in s.calls]) for s in session.sweep.strategies}
    cumulative = next(spec for title, spec in figs.items() if title.startswith("Cumulative time"))
    summary = next(d.value for d in at.dataframe if "ratio_vs_static" in d.value.columns)
    assert list(summary.strategy) == ["static", "dynamic"] and list(summary.compiles) == [
        s.compiles for s in session.sweep.strategies]
    assert {t["name"]: decode(t["y"])[-1] for t in cumulative["data"]} == pytest.approx(
        dict(zip(summary.strategy, summary.total_s, strict=True)))
    reasons = next(d.value for d in at.dataframe if "reason" in d.value.columns)
    assert list(reasons.strategy) == ["static", "static"]
    assert any(m.value == "**dynamic**: takes its size as an argument: `ks0`" for m in at.markdown)
    assert any(b.label == "Sweep session (JSON)" for b in at.get("download_button"))

    started = time.monotonic()
    at.sidebar.button(key="s_run").click().run()
    assert time.monotonic() - started < 2.0 and any("answered from the cache" in unescaped(i.value) for i in at.info)
