"""Trace explorer: open a recorded session or a plain torch.profiler trace, alone or against another; or a
distributed job's traces, one per rank, alone or against another job.

Nothing runs here: files are read and drawn with the same timeline, tables and statistics as the lab.
"""

from __future__ import annotations

import streamlit as st

from fusionviz.analysis.kernel_diff import DIFF_COLUMNS, pair_headline
from fusionviz.analysis.kernel_tables import pair_summary
from fusionviz.analysis.links import LINK_WORDS
from fusionviz.analysis.report import Report, analyse
from fusionviz.analysis.sentences import per_iteration
from fusionviz.analysis.trace_stats import KernelStat, StepIdle, as_frame
from fusionviz.charts.export import session_name
from fusionviz.charts.source_view import trace_source_figure
from fusionviz.charts.stats import class_stats_figure
from fusionviz.charts.style import ChartSettings, fit_title
from fusionviz.errors import FusionvizError
from fusionviz.records.limits import read_file
from fusionviz.records.session import ModeRun, Session
from fusionviz.records.trace_pair import pair_session
from ui import backend, job_view, sections, state, tables, web
from ui.page import setup_page
from ui.text import plain

# The page draws the same elements in both modes: its presentation toggle restyles it in the browser.
setup_page(
    "Trace explorer",
    "Open a session recorded by fusionviz (for example on a GPU machine) or any torch.profiler Chrome trace "
    "(export_chrome_trace, .json or .json.gz), and compare two of them; or a distributed job's traces, one per "
    "rank.", restyles_in_browser=True)


def pick(label: str, key: str, hint: str = "") -> Session | None:
    """A file from sessions/ or an upload, opened as a Session; errors shown, never raised. A refused upload
    leaves the uploader empty under its error; `hint` is shown while no file is uploaded and none was refused."""
    recorded = backend.recorded_files()
    sources = ["Upload a file"] + (["Recorded session (sessions/)"] if recorded else [])
    source = st.radio(label, sources, index=len(sources) - 1, horizontal=True, key=f"{key}_source")
    upload = None
    try:
        if source == "Upload a file":
            upload = st.file_uploader("Session file or torch.profiler trace", type=["json", "gz"],
                                      key=state.uploader_key(key))
            if upload is None:
                refused = state.refusal(key)
                if refused is not None:
                    st.error(refused)
                elif hint:
                    st.info(hint)
                return None
            raw, name = upload.getvalue(), upload.name
        else:
            path = st.selectbox("Recorded session", recorded, format_func=lambda p: p.name, key=f"{key}_recorded")
            raw, name = read_file(path), path.name
        session = per_call_option(backend.open_bytes(raw, name), raw, name, key)
    except FusionvizError as exc:
        if upload is None:
            st.error(plain(exc))
            return None
        state.refuse_upload(key, plain(exc))
    else:
        state.opened_file(key)
        return session
    st.rerun()  # drawn again with an empty uploader under the error


def per_call_option(session: Session, raw: bytes, name: str, key: str) -> Session:
    """For a trace without steps that repeats one compiled region, offer each call as an iteration."""
    summary = session.runs[0].summary if session.source == "trace" and session.runs else None
    if summary is None or summary.region_calls < 2:
        return session
    per_call = st.toggle(f"Take each of the {summary.region_calls} calls of the compiled region as an iteration",
                         key=f"{key}_per_call",
                         help="The trace has no ProfilerStep: by default it is one window, the whole trace")
    return backend.open_bytes(raw, name, "calls") if per_call else session


def show_one(report: Report) -> None:
    """One file: its headline, then its timeline, source lines, top kernels and, at the desk, its statistics and
    kernel table."""
    session = report.session
    sections.show_source(report)
    sections.show_trace_notes(report)
    if session.sweep is not None and not session.runs:
        st.info("This file is a shape sweep, with no kernel timeline of its own: open it on the **Dynamic "
                "shapes** page.")
        return
    sections.show_headline(report.headline)
    sections.show_run_problems(session)
    st.subheader("Kernel timeline")
    sections.show_timeline(report, "x_timeline")
    show_trace_lines(report)
    st.subheader("Top kernels and where the GPU's time went")
    show_summaries(report)
    # On a projector: the charts and the top kernels; the long tables stay off screen.
    with web.presentation_only("x_left_out"):
        st.caption("Per-kernel statistics and the kernel table are left out in presentation mode.")
    with web.desk_only("x_desk"):
        st.subheader("Per-kernel statistics")
        sections.show_class_stats(report, ChartSettings(), "x_stats")
        st.subheader("Kernels and generated code")
        kernel_table(report)
        if session.source != "trace":
            sections.show_downloads(session, "x_downloads")


TOP_CHOICES = [10, 20, 50, 100, 0]  # 0: every kernel


def show_trace_lines(report: Report) -> None:
    """A plain trace whose events carry stack traces: the time its kernels took, line by line of the user's code."""
    for mode, view in report.trace_lines.items():
        st.subheader("Source lines" if len(report.trace_lines) == 1 else f"Source lines: {plain(mode)}")
        sections.restyled_chart(trace_source_figure(view, mode), f"x_lines_{mode}",
                                ChartSettings.presentation().chart_px, stamp=sections.stamp_of(report))
        st.caption(f"{len(view.lines)} lines of code, from the stack traces in the trace's events (Inductor's "
                   "trace handler writes them on kernels, torch 2.13's profiler on ops); a kernel several lines "
                   "gave rise to counts on each of them.")


@st.fragment
def show_summaries(report: Report) -> None:
    """Kernels ranked by total time with their duration distribution, and each iteration's GPU time split into
    kernels, waiting on the host and gaps between queued kernels (docs/methodology.md, Definitions)."""
    top = st.segmented_control("Kernels ranked", TOP_CHOICES, default=20, key="x_top",
                               format_func=lambda n: f"top {n}" if n else "all")
    for run in report.drawable:
        ranking = report.runs[run.mode].ranking
        shown = ranking[:top] if top else ranking
        st.markdown(f"**{plain(run.mode)}**: {len(shown)} of {len(ranking)} kernel names, longest total time first "
                    f"(durations in µs over {_window(run)}; percentiles interpolated)")
        tables.show(as_frame(shown, KernelStat), f"x_top_{run.mode}")
        if report.session.environment.device_kind == "cuda" and run.summary is not None:
            tables.show(as_frame(report.runs[run.mode].idle, StepIdle), f"x_idle_{run.mode}")
            st.caption("GPU time of each iteration: **kernel_us** at least one kernel runs; **host_wait_us** no "
                       "kernel queued (the next one was launched after the GPU went idle, or none came); "
                       "**between_kernels_us** the next kernel was already launched and waited on the GPU "
                       "side; **unattributed_us** its launch is not in the trace. They add up to the span.")


def _window(run: ModeRun) -> str:
    if run.summary is None:
        return "the run"
    if run.summary.iterations_from == "trace":
        return "the whole trace"
    return f"{run.summary.iterations} iterations, counts {per_iteration(run.summary)} in `per_iteration`"


@st.fragment
def kernel_table(report: Report) -> None:
    """The kernel table and a chosen kernel's code, rerun alone when a row or the mode is picked."""
    sections.show_kernel_table(report, "x_kernels")


def show_pair(a: Report, b: Report) -> None:
    """Two files' runs against each other: a headline of B's kernels against A's, their timelines, their figures
    side by side with the kernel time by class (stamped with both files), and the kernels that differ."""
    with st.columns(2)[0]:
        for side, report in (("A", a), ("B", b)):
            st.caption(f"{side}: {plain(report.source.line())}")
            for shown in report.runs.values():
                for note in shown.notes:
                    st.caption(f"{side} · {plain(shown.run.mode)}: {plain(note)}")
    left, right = st.columns(2)
    with left:
        run_a = sections.mode_picker(a, "Run of A", "pair_a")
    with right:
        run_b = sections.mode_picker(b, "Run of B", "pair_b")
    if run_a is None or run_b is None:
        st.info("Both files need a run with kernels to compare.")
        return
    pair = analyse(pair_session(run_a, run_b, run_a.mode, run_b.mode))
    diff = pair.pair_diff
    assert diff is not None  # two runs with kernels (mode_picker)
    summary = pair_summary(run_a, run_b)
    sections.show_headline(pair_headline(summary, diff))
    stamp = sections.stamp_of(pair, " vs ".join(session_name(r.source) for r in (a, b)))
    sections.show_timeline(pair, "pair_timeline", stamp)
    figures, classes = st.columns(2)
    with figures:
        tables.show(summary, "pair_summary", column_config={"quantity": st.column_config.TextColumn(width="medium")})
    with classes:
        halved = sections.half(ChartSettings())
        sections.restyled_chart(fit_title(class_stats_figure(list(pair.runs.values()), halved), halved),
                                "pair_classes", ChartSettings.presentation().chart_px, stamp=stamp)
    st.markdown("**Kernels that differ** (per iteration; B − A, largest time change first; `replaced`: the kernels "
                "of A that B's took the place of)")
    tables.show(diff.table, "pair_diff", helps=DIFF_COLUMNS)
    st.caption(f"`replaced` and `ended_in`: {LINK_WORDS[diff.kind]}")


def show_jobs() -> None:
    """A job alone (its ranks, then any one rank with every view), or two jobs side by side."""
    job = job_view.pick_job("Job", "job_a")
    other = job_view.pick_job("Second job", "job_b") if st.toggle(
        "Compare with a second job (eager against compiled)", key="job_compare") else None
    if job is None:
        st.info("Open a job: the folder its ranks wrote their torch.profiler traces into, or the traces "
                "themselves (one per rank; the rank is read from each trace's distributedInfo, else its name).")
    elif other is None:
        job_view.show_job(job, "job")
        st.subheader("One rank")
        show_one(analyse(job_view.pick_rank(job, "job").session))
    else:
        job_view.show_side_by_side(job, other)



FILES, JOB = "A file", "A job (a trace per rank)"
if st.segmented_control("Open", [FILES, JOB], default=FILES, key="x_open") == JOB:
    show_jobs()
else:
    first = pick("File", "a", "Choose a file to explore. fusionviz sessions (`python -m fusionviz run --out FILE`) "
                 "and plain `torch.profiler` traces (`prof.export_chrome_trace(...)`) both open here.")
    compare = st.toggle("Compare with a second file", key="compare")
    second = pick("Second file", "b") if compare else None
    if first is not None and second is not None:
        show_pair(analyse(first), analyse(second))
    elif first is not None:
        show_one(analyse(first))
