"""The Trace explorer through streamlit's AppTest: sessions, plain traces, uploads, pair diffs and jobs."""

from __future__ import annotations

import gzip
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from fusionviz.analysis.report import analyse
from fusionviz.charts.style import ChartSettings
from fusionviz.records.files import open_file
from fusionviz.records.session import Session
from tests.app_pages import APP, TIMEOUT, decode, figures, kernels_per_mode, no_errors
from tests.conftest import DATA
from tests.synthetic import encoded, gpu_trace
from tests.texts import unescaped
from ui import state

pytestmark = pytest.mark.usefixtures("sessions_dir")  # an empty sessions/ folder for every test (conftest.py)


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
