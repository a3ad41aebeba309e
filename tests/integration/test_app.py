"""Every page through streamlit's AppTest, with real CPU runs: what the page shows must match the session."""

from __future__ import annotations

import base64
import gzip
import json
import re
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from streamlit.runtime.scriptrunner import magic
from streamlit.testing.v1 import AppTest

from fusionviz.analysis.report import analyse
from fusionviz.analysis.timing import speedup_estimates
from fusionviz.analysis.verdict import exact_words, result_words
from fusionviz.charts.style import CLASS_COLOURS, ChartSettings
from fusionviz.measure.service import SessionRun
from fusionviz.records.config import RunConfig, default_threads
from fusionviz.records.files import open_file
from fusionviz.records.kernels import MEMORY_CLASS
from fusionviz.records.session import Session
from tests.conftest import SHIPPED_SWEEP
from tests.lab_runs import to_the_end
from tests.synthetic import encoded, gpu_trace
from tests.texts import unescaped
from ui import lab, state
from ui.lab import interval_words

APP = str(Path(__file__).resolve().parents[2] / "app.py")
DATA = Path(__file__).resolve().parents[2] / "tests" / "data"
TIMEOUT = 240  # a first-ever compile on a machine takes ~15 s; leave room for a slow CI box


@pytest.fixture(autouse=True)
def sessions_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty sessions/ folder per test, so what a first visit shows is under the test's control."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    monkeypatch.setenv("FUSIONVIZ_SESSIONS_DIR", str(folder))
    return folder


def decode(value: Any) -> list[Any]:
    """A Plotly array as sent to the browser: a list, or base64 {"dtype", "bdata"}."""
    if isinstance(value, dict) and "bdata" in value:
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"]).tolist()
    return list(value)


def figures(at: Any) -> dict[str, dict[str, Any]]:
    """The Plotly figures of the page (or of one of its blocks) by title: Streamlit's charts and the plots kept
    in place (ui/plotly_view.py), each of these with its presentation layout under "present"."""
    specs = [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]
    for element in at.get("bidi_component"):
        if element.proto.component_name == "fusionviz.plotly_view":
            data = json.loads(element.proto.json)
            present = data["present"]
            specs.append({**json.loads(data["figure"]), "config": data["config"],
                          "present": {**present, "layout": json.loads(present["layout"])} if present else None})
    return {spec["layout"]["title"]["text"]: spec for spec in specs}


def kernels_per_mode(timeline: dict[str, Any], kind: str = "kernels") -> dict[str, int]:
    """Bars per mode on the timeline: its kernels, or (`kind="memory"`) its memory operations (memsets and
    copies, drawn in their own colour and counted apart from the kernels)."""
    counts: dict[str, int] = {}
    for trace in timeline["data"]:
        name = trace.get("name")
        if name in CLASS_COLOURS and (name == MEMORY_CLASS) == (kind == "memory"):
            for custom in trace["customdata"]:
                counts[custom[0]] = counts.get(custom[0], 0) + 1
    return counts


def no_errors(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


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


def keyed_block(node: Any, key: str) -> Any:
    """The container of key `key` at any depth under `node`, or None."""
    for child in getattr(node, "children", {}).values():
        if getattr(child, "key", None) == key:
            return child
        if (found := keyed_block(child, key)) is not None:
            return found
    return None


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


def test_the_trace_explorer_draws_the_same_elements_in_both_modes(sessions_dir: Path,
                                                                   ln_gelu_session: Session) -> None:
    """Its presentation toggle restyles the page in the browser and reruns only its own fragment, so a run of
    the page must draw the same elements in both modes (ui/presentation.py): the long tables in desk-only
    sections, the top kernels in both forms, and a timeline that carries its presentation layout."""
    ln_gelu_session.save(sessions_dir / "recorded.json.gz")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.switch_page("pages/1_Trace_explorer.py").run()

    def elements() -> list[str]:
        """Every element of the page in order, but the toggle and the element that sets the mode."""
        def walk(node: Any) -> list[str]:
            if hasattr(node, "children"):
                return [f"block {node.proto}"] + [e for child in node.children.values() for e in walk(child)]
            if getattr(node, "type", None) == "toggle" or "fusionviz.presentation" in str(node.proto):
                return []
            return [re.sub(r"deferred_file_id: .*", "", str(node.proto))]  # new on every run
        return walk(at.main)

    desk = elements()
    at.toggle(key="_pres_Trace explorer").set_value(True).run()
    no_errors(at)
    assert at.session_state["presentation"]
    assert elements() == desk
    keys = " ".join(desk)
    assert "fv_desk_x_desk" in keys and "fv_present_x_left_out" in keys and "fv_present_x_top_eager" in keys
    timeline = figures(at)["Kernel timeline: one steady iteration per mode"]
    assert timeline["layout"]["title"]["font"]["size"] == ChartSettings().title_size
    big = timeline["present"]["layout"]
    assert big["title"]["font"]["size"] == ChartSettings.presentation().title_size
    assert big["height"] > timeline["layout"]["height"]


def test_a_foreign_trace_with_stack_traces_gets_its_source_lines(sessions_dir: Path) -> None:
    """A trace written by Inductor's trace handler (`args["stack"]` on its kernels, tests/data/README.md) opened
    alone: the time of its kernels line by line, the same figures as the Report's."""
    name = "h200_branching_fp32_default_inductor_stacks.trace.json.gz"
    raw = (DATA / name).read_bytes()
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.switch_page("pages/1_Trace_explorer.py").run()
    at.radio(key="a_source").set_value("Upload a file").run()
    at.file_uploader(key="a_file").set_value((name, raw, "application/gzip")).run()
    no_errors(at)
    (lines,) = [f for title, f in figures(at).items() if "Kernel time per source line" in title]
    (view,) = analyse(open_file(raw, name)).trace_lines.values()
    assert decode(lines["data"][0]["x"]) == pytest.approx(list(view.lines.eager_us)) and len(view.lines) == 4
    assert any("from the stack traces in the trace's events" in unescaped(c.value) for c in at.caption)


def test_trace_explorer_opens_sessions_and_plain_traces(sessions_dir: Path, ln_gelu_session: Session) -> None:
    ln_gelu_session.save(sessions_dir / "recorded.json.gz")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.switch_page("pages/1_Trace_explorer.py").run()
    no_errors(at)
    assert kernels_per_mode(figures(at)["Kernel timeline: one steady iteration per mode"]) == {"eager": 3,
                                                                                                "default": 2}
    stats = [d.value for d in at.dataframe if "pct_of_kernel_time" in d.value.columns]
    assert [int(s["count"].sum()) for s in stats] == [len(r.kernel_frame()) for r in ln_gelu_session.runs if r.ok]

    trace = ln_gelu_session.run("default").chrome_trace()
    at.radio(key="a_source").set_value("Upload a file").run()
    at.file_uploader(key="a_file").set_value(("default.pt.trace.json", trace, "application/json")).run()
    no_errors(at)
    assert any("torch.profiler trace default.pt.trace" in unescaped(c.value) for c in at.caption)
    assert kernels_per_mode(figures(at)["Kernel timeline: one steady iteration per mode"]) == {
        "default.pt.trace": 2}

    at.toggle(key="compare").set_value(True).run()
    at.radio(key="b_source").set_value("Recorded session (sessions/)").run()
    no_errors(at)
    summary = next(d.value for d in at.dataframe if "B - A" in d.value.columns)
    assert summary["A"][0] == 2 and summary["B"][0] == 3  # the trace against the session's eager run
    assert any("links matched by kernel names" in unescaped(c.value) for c in at.caption)  # a trace: no records

    at.radio(key="b_source").set_value("Upload a file").run()
    at.file_uploader(key="b_file").set_value(("notes.json", b'{"a": 1}', "application/json")).run()
    assert not at.exception
    assert any("neither a fusionviz session nor a torch.profiler trace" in unescaped(e.value) for e in at.error)


def test_the_pair_diff_says_what_each_compiled_kernel_replaced(sessions_dir: Path) -> None:
    """Eager against default of one H200 session with Inductor's records: the diff table's fused bias+ReLU row
    names the eager ops it replaced, and its caption says the links come from those records."""
    shutil.copy(Path(__file__).resolve().parents[2] / "sessions" / "h100_mlp_512x256_float32.json.gz", sessions_dir)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.switch_page("pages/1_Trace_explorer.py").run()
    at.toggle(key="compare").set_value(True).run()
    at.radio(key="b_source").set_value("Recorded session (sessions/)").run()
    at.selectbox(key="pair_a").set_value("eager").run()
    at.selectbox(key="pair_b").set_value("default").run()
    no_errors(at)
    diff = next(d.value for d in at.dataframe if "replaced" in d.value.columns).set_index("name")
    assert diff.loc["triton_poi_fused_addmm_relu_0", "replaced"] == "aten::addmm ×2 (shared), aten::clamp_min ×2"
    assert any("links from Inductor's records" in unescaped(c.value) for c in at.caption)


def test_a_refused_upload_leaves_an_empty_uploader_under_its_error() -> None:
    """A cut file says it ends early, with no "Choose a file" box as if none was chosen; its chip leaves the
    uploader (a new key), and the next good file opens with the error gone."""
    trace = gzip.decompress((DATA / "h200_linear_ln_gelu_fp32_default.trace.json.gz").read_bytes())
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.switch_page("pages/1_Trace_explorer.py").run()
    assert any("Choose a file to explore" in i.value for i in at.info)  # nothing chosen yet
    (uploader,) = at.get("file_uploader")
    uploader.set_value(("cut.json", trace[:len(trace) // 2], "application/json")).run()
    assert not at.exception
    (error,) = at.error
    assert unescaped(error.value).startswith("cut.json ends early, in the middle of its JSON (line ")
    assert not any("Choose a file" in i.value for i in at.info)
    (fresh,) = at.get("file_uploader")
    assert fresh.key != uploader.key and fresh.value is None  # a new uploader: the refused file's chip is gone
    fresh.set_value(("default.pt.trace.json", trace, "application/json")).run()
    no_errors(at)
    assert sum(kernels_per_mode(figures(at)["Kernel timeline: one steady iteration per mode"]).values()) > 0


def test_a_large_timeline_caption_names_the_iteration_drawn(sessions_dir: Path) -> None:
    """Past SVG_BARS bars the timeline is drawn as cells: its caption says which iteration it holds (it said
    "every kernel in the whole window" with one iteration chosen), and a chosen one by its number."""
    (sessions_dir / "streams.trace.json.gz").write_bytes(encoded(gpu_trace(3, 2_100, streams=2)))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.switch_page("pages/1_Trace_explorer.py").run()
    no_errors(at)
    captions = [c.value for c in at.caption if c.value.startswith("Every kernel in")]
    assert len(captions) == 1 and captions[0].startswith("Every kernel in the steady iteration (of median length),")
    picker = at.selectbox(key=state.timeline_step_key("x_timeline"))
    other = 0 if picker.value != 0 else 1
    picker.set_value(other).run()
    no_errors(at)
    assert any(c.value.startswith(f"Every kernel in iteration {other},") for c in at.caption)
    assert not any("whole window" in c.value for c in at.caption)


def test_methodology_page_puts_naive_next_to_proper() -> None:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.switch_page("pages/2_Methodology.py").run()
    no_errors(at)
    at.number_input(key="m_dim").set_value(32)
    at.number_input(key="m_batch").set_value(8)
    at.number_input(key="m_calls").set_value(20)
    at.button(key="m_run").click().run()
    no_errors(at)
    config = RunConfig(model="linear_ln_gelu", dim=32, batch=8, modes=("eager", "default"), processes=3,
                       threads=default_threads())
    session = state.results().get(SessionRun(config).key)
    # every figure as text, a count's missing spread a dash: the raw table showed "None" cells
    table = next(d.value for d in at.dataframe if "naive loop" in d.value.columns)
    assert table["every process"][0] == f"{analyse(session).comparisons['default'].speedup.median:.2f}x"
    assert table["one process"][0] == f"{speedup_estimates(session, 0)['default'].median:.2f}x"
    assert table["every process"][3] == f"{session.run('eager').summary.kernels_per_iteration:g}"
    assert float(table["naive loop"][3]) >= float(table["every process"][3])  # key_averages() rows: CPU ops too
    assert not table.isin(["None", "nan"]).any().any() and table["every process, p10–p90"][3] == "—"
    assert any(unescaped(m.value).startswith("### Naive loop: ") for m in at.main.markdown)  # its headline first
    assert "Naive loop vs proper measurement" in figures(at)


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


def test_the_trace_explorer_opens_a_job_rank_by_rank_and_two_jobs_side_by_side() -> None:
    """The recorded gloo jobs (tests/data/ddp_gloo_*): a row per rank with the figures `analysis.job` gives, the
    slowest rank called out and offered first, every view of that rank; then eager against compiled."""
    from fusionviz.analysis.job import job_figures
    from fusionviz.records.job import read_job

    data = Path(__file__).resolve().parents[1] / "data"
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.switch_page("pages/1_Trace_explorer.py").run()
    at.segmented_control(key="x_open").set_value("A job (a trace per rank)").run()
    no_errors(at)
    at.text_input(key="job_a_folder").set_value(str(data / "ddp_gloo_compiled")).run()
    no_errors(at)
    expected = job_figures(read_job([data / "ddp_gloo_compiled"]))
    ranks = next(d.value for d in at.dataframe if "graph_splits_per_step" in d.value.columns)
    assert list(ranks["rank"]) == [0, 1]
    assert list(ranks["step_ms"]) == [r.step_ms.median for r in expected.ranks]
    assert list(ranks["overlap_pct"]) == [r.overlap_pct for r in expected.ranks]
    assert list(ranks["graph_splits_per_step"]) == [3.0, 3.0]
    said = " ".join(unescaped(m.value) for m in at.markdown)
    assert f"slowest rank: **{expected.slowest_rank}**" in said and "2 ranks of a gloo job" in said
    assert at.selectbox(key="job_rank").value == expected.slowest_rank
    timeline = figures(at)["Kernel timeline: one steady iteration per mode"]
    assert kernels_per_mode(timeline) == {f"rank {expected.slowest_rank} · rank{expected.slowest_rank}.trace": 54}

    at.toggle(key="job_compare").set_value(True).run()
    at.text_input(key="job_b_folder").set_value(str(data / "ddp_gloo_eager")).run()
    no_errors(at)
    both = next(d.value for d in at.dataframe if "job" in d.value.columns)
    assert list(both["job"]) == ["A", "B"]
    assert list(both["graph_splits_per_step"]) == [3.0, 0.0]  # DDP's buckets split only the compiled graph
    assert sum("graph_splits_per_step" in d.value.columns for d in at.dataframe) == 3  # and each job's ranks

    at.text_input(key="job_b_folder").set_value(str(data)).run()  # sessions beside traces: refused, in a line
    assert any(re.search(r"\S+\.json\.gz is not a torch\.profiler trace", unescaped(e.value)) for e in at.error)


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
