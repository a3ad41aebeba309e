"""The Fusion lab through streamlit's AppTest, with real CPU runs: what the page shows must match the session."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
from streamlit.runtime.scriptrunner import magic
from streamlit.testing.v1 import AppTest

from fusionviz.analysis.report import analyse
from fusionviz.analysis.verdict import exact_words, result_words
from fusionviz.charts.style import ChartSettings
from fusionviz.measure.service import SessionRun
from fusionviz.records.config import RunConfig, default_threads
from fusionviz.records.session import Session
from tests.app_pages import APP, TIMEOUT, decode, figures, kernels_per_mode, keyed_block, no_errors
from tests.lab_runs import to_the_end
from tests.texts import unescaped
from ui import lab, state
from ui.lab import interval_words

pytestmark = pytest.mark.usefixtures("sessions_dir")  # an empty sessions/ folder for every test (conftest.py)


def test_the_pages_are_compiled_without_a_python_syntax_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    """Streamlit's magic would parse each page with ast.parse, which CPython 3.11 cannot do in two threads at
    once (.streamlit/config.toml): sessions starting together would fail at random."""
    parsed: list[str] = []
    add_magic = magic.add_magic

    def parse(code: str, script_path: str) -> Any:
        parsed.append(script_path)
        return add_magic(code, script_path)

    monkeypatch.setattr(magic, "add_magic", parse)
    no_errors(AppTest.from_file(APP, default_timeout=TIMEOUT).run())
    assert parsed == []

def test_lab_runs_mlp_and_answers_a_rerun_from_the_cache() -> None:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    no_errors(at)
    assert at.button(key="example")  # nothing recorded: the page offers a one-click example
    # The defaults are mlp, dim 256, batch 64, eager + default on the CPU.
    assert (at.sidebar.selectbox(key="model").value, at.sidebar.select_slider(key="dim").value,
            at.sidebar.select_slider(key="batch").value, at.sidebar.selectbox(key="device").value) == (
        "mlp", 256, 64, "cpu")
    config = RunConfig(model="mlp", dim=256, batch=64, modes=("eager", "default"), threads=default_threads())
    state.results().pop(SessionRun(config).key)

    started = time.monotonic()
    at.sidebar.button(key="run").click().run()
    preview_s = time.monotonic() - started
    no_errors(at)
    # first the figures of its first timing process of three, said as such, with the rest followed in a box
    partly = [unescaped(c.value) for c in at.caption if "partly timed" in unescaped(c.value)]
    assert len(partly) == 1 and "1 of 3 timing processes" in partly[0], partly
    assert [unescaped(box.label).split(":")[0] for box in at.get("status")] == ["Refining"]
    said = " ".join(unescaped(e.value) for e in [*at.markdown, *at.caption, *at.metric])
    assert re.search(r"over \d+ rounds in 1 process\b", said), said
    to_the_end(at)
    first_s = time.monotonic() - started
    no_errors(at)
    # how long it took, said once: the page's line, not the progress box's label above it besides
    took = [unescaped(c.value) for c in at.caption if "measured in" in unescaped(c.value)]
    assert len(took) == 1 and took[0].startswith("This run was measured in ")
    assert [box.label for box in at.get("status")] == ["Done"]
    stages = [m.value for m in at.markdown if re.match(r"^\s*[\d.]+ s · ", m.value)]
    assert any("timing process 3" in stage for stage in stages), stages  # the folded box lists every stage
    session: Session = state.results().get(SessionRun(config).key)
    started = time.monotonic()
    at.sidebar.button(key="run").click().run()
    cached_s = time.monotonic() - started
    no_errors(at)
    print(f"\nmlp dim 256 batch 64 eager+default through the UI: first figures {preview_s:.1f} s, first run "
          f"{first_s:.1f} s "
          f"(compile {session.run('default').compile.first_call_s:.1f} s, Inductor cache "
          f"{session.run('default').compile.cache}), cached re-run {cached_s:.2f} s")
    assert cached_s < 2.0 < first_s
    assert any("answered from the cache" in unescaped(c.value) for c in at.caption)
    assert any("Live on this machine" in unescaped(c.value) for c in at.caption)

    figs = figures(at)
    timeline = figs["Kernel timeline: one steady iteration per mode"]
    assert kernels_per_mode(timeline) == {r.mode: int(r.summary.kernels_per_iteration) for r in session.runs}
    latency = figs["Latency per call"]["data"][0]
    compared = analyse(session).comparisons
    assert decode(latency["x"]) == pytest.approx([compared[r.mode].latency.median for r in session.runs])
    s = compared["default"].speedup
    assert latency["text"][1] in (f"{s.median:.2f}× ({s.low:.2f}–{s.high:.2f}×) vs eager",
                                  f"no clear difference ({s.low:.2f}–{s.high:.2f}×)")
    # The metric says the headline's rounded figure; the exact one is its hover: never "10x" and "10.00×" at once.
    speedup = next(m for m in at.metric if m.label == "default against eager")
    assert speedup.value == result_words(compared["default"])
    assert speedup.delta == interval_words(compared["default"])
    assert f"{s.median:.2f}" not in speedup.value + speedup.delta and exact_words(compared["default"]) in speedup.help
    assert any("3 process" in unescaped(m.value) for m in at.markdown)  # the configuration line says how it was timed
    headline = analyse(session).headline
    said = [unescaped(m.value) for m in at.main.markdown]
    assert f"### {headline.text}" in said
    if headline.mechanism:  # the heading, then its one line (a CPU run's names no class: it has none)
        assert said.index(f"### {headline.text}") + 1 == said.index(headline.mechanism)
    folded = next(e for e in at.main.expander if e.label == "Every figure, exactly")
    assert [unescaped(m.value) for m in folded.markdown] == ["\n".join(f"- {d}" for d in headline.details)]
    assert any(title.startswith("default:") for title in figs)  # the collapse view
    assert any(d.value.shape[0] == 5 for d in at.dataframe)  # mlp: 5 kernels in the kernel table

def test_a_run_cancelled_after_its_first_figures_keeps_them_and_says_so() -> None:
    """Cancel pressed while the later timing processes of five run: the figures of those that ended stay on this
    user's screen, said as cancelled, and nobody else is served them."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.sidebar.selectbox(key="model").set_value("linear_ln_gelu")
    at.sidebar.select_slider(key="dim").set_value(32)
    at.sidebar.select_slider(key="batch").set_value(8)
    at.sidebar.slider(key="rounds").set_value(3)
    at.sidebar.slider(key="processes").set_value(5).run()
    config = RunConfig(model="linear_ln_gelu", dim=32, batch=8, modes=("eager", "default"), rounds=3, processes=5,
                       threads=default_threads())
    state.results().pop(SessionRun(config).key)
    at.sidebar.button(key="run").click().run()
    no_errors(at)
    assert [unescaped(box.label).split(":")[0] for box in at.get("status")] == ["Refining"]
    at.button(key="cancel_lab").click().run()
    no_errors(at)
    said = [unescaped(c.value) for c in at.caption if "partly timed" in unescaped(c.value)]
    assert len(said) == 1, said
    timed = re.fullmatch(r"This run was partly timed so far: ([1-4]) of 5 timing processes, [\d.]+ s after Run; "
                         r"then cancelled\.", said[0])
    assert timed, said
    key = SessionRun(config).key
    shown: Session = at.session_state["own_results"].get(key)  # the figures on screen are those the line counts
    assert shown.timing is not None and len(shown.timing.processes) == int(timed.group(1))
    assert not at.get("status") and "pending_lab" not in at.session_state
    assert state.results().get(key) is None
    assert "Kernel timeline: one steady iteration per mode" in figures(at)

def test_first_visit_shows_a_recorded_session(sessions_dir: Path, ln_gelu_session: Session) -> None:
    ln_gelu_session.save(sessions_dir / "cpu-linear_ln_gelu.json.gz")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    no_errors(at)
    assert any("Recorded library: cpu-linear_ln_gelu.json.gz" in unescaped(c.value)
               and ln_gelu_session.environment.torch_version in unescaped(c.value) for c in at.caption)
    assert any("reduce-overhead is not applicable" in unescaped(m.value) for m in at.markdown)
    assert next(m for m in at.metric if m.label == "reduce-overhead").value == "not applicable"
    timeline = figures(at)["Kernel timeline: one steady iteration per mode"]
    assert kernels_per_mode(timeline) == {"eager": 3, "default": 2}

def test_presentation_mode_shows_one_large_chart(sessions_dir: Path, ln_gelu_session: Session) -> None:
    """One chart at presentation size; the desk stays on the page, hidden by the stylesheet, with the same
    figures as before the toggle, so the toggle back draws none of them again; and the presentation's view is on
    the page at the desk too, hidden, so the toggle restyles the page in the browser (its toggle is a fragment)."""
    ln_gelu_session.save(sessions_dir / "example.json")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    desk = figures(keyed_block(at.main, "fv_desk_lab"))
    (hidden,) = figures(keyed_block(at.main, "fv_present_lab")).values()
    assert desk and hidden["layout"]["font"]["size"] == ChartSettings.presentation().font_size
    at.toggle(key="_pres_Fusion lab").set_value(True).run()
    at.radio(key="present_view").set_value("latency").run()
    no_errors(at)
    (spec,) = figures(keyed_block(at.main, "fv_present_lab")).values()
    assert spec["layout"]["font"]["size"] == ChartSettings.presentation().font_size
    assert figures(keyed_block(at.main, "fv_desk_lab")) == desk

def test_the_mode_picker_offers_eager_as_a_cuda_graph_only_off_the_cpu() -> None:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    no_errors(at)
    assert at.sidebar.selectbox(key="device").value == "cpu"  # this machine: the CPU only
    picker = at.sidebar.multiselect(key="modes")
    assert "eager_cuda_graph" not in picker.options and "reduce-overhead" in picker.options


def test_a_variant_typed_under_the_modes_joins_them_and_a_refused_one_holds_run() -> None:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    variant = at.sidebar.text_input(key="variants")
    assert "capture_scalar_outputs" in (variant.help or "") and not at.sidebar.error
    variant.set_value("default+freezin").run()
    (refused,) = at.sidebar.error
    assert "unknown option 'freezin': choose from freezing" in refused.value
    assert at.sidebar.button(key="run").disabled
    at.sidebar.text_input(key="variants").set_value("eager, default+freezing").run()
    assert not at.sidebar.error and not at.sidebar.button(key="run").disabled


def test_the_lab_offers_a_real_model_at_its_published_sizes_and_runs_it_small() -> None:
    """GPT-2 by name: its own width and depth widgets at GPT-2 small's sizes, a width its heads cannot split
    refused before Run, and a one-block run on the CPU drawn with a module table."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.sidebar.selectbox(key="model").set_value("hf:gpt2").run()
    no_errors(at)
    dim, layers = at.sidebar.number_input(key="dim_hf:gpt2"), at.sidebar.number_input(key="layers_hf:gpt2")
    assert (dim.value, layers.value, at.sidebar.number_input(key="seq_hf:gpt2").value) == (768, 12, 256)
    assert at.sidebar.number_input(key="dim_hf:gpt2").step == 64
    dim.set_value(100).run()
    assert [e.value for e in at.sidebar.error] == [
        "hf:gpt2 splits its hidden size into attention heads of 64 (as its published sizes do), and dim 100 is not "
        "a multiple of 64: choose 64 or 128"]
    assert at.sidebar.button(key="run").disabled
    at.sidebar.number_input(key="dim_hf:gpt2").set_value(64)
    at.sidebar.number_input(key="layers_hf:gpt2").set_value(1)
    at.sidebar.number_input(key="seq_hf:gpt2").set_value(16)
    at.sidebar.select_slider(key="batch").set_value(1).run()
    assert not at.sidebar.error and not at.sidebar.button(key="run").disabled
    to_the_end(at.sidebar.button(key="run").click().run())
    no_errors(at)
    config = RunConfig(model="hf:gpt2", dim=64, batch=1, seq=16, layers=1, modes=("eager", "default"),
                       threads=default_threads())
    session: Session = state.results().get(SessionRun(config).key)
    assert session.config.layers == 1 and session.environment.libraries.get("transformers")
    timeline = figures(at)["Kernel timeline: one steady iteration per mode"]
    assert kernels_per_mode(timeline) == {r.mode: int(r.summary.kernels_per_iteration) for r in session.runs}
    assert "modules" in [v for v in lab.presented(analyse(session), grid=False)]
