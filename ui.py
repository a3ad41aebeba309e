"""Page set-up and the sections every page shares (timeline, kernel table, code, downloads).

The only place besides the pages that imports streamlit. Caching wrappers live here so the backend
stays free of UI state.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import streamlit as st

from fusionviz import charts, inspection, sources
from fusionviz.charts import ChartSettings
from fusionviz.config import ConfigError
from fusionviz.session import ModeRun, Session, SessionFileError
from fusionviz.worker import Worker, WorkerError

PRESENTATION_CSS = """<style>
section[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"] {display: none;}
.stMainBlockContainer p, .stMainBlockContainer li {font-size: 1.45rem;}
</style>"""


def setup_page(title: str, intro: str) -> ChartSettings:
    """Page config, title, and the presentation toggle (kept across pages); returns the chart settings."""
    st.set_page_config(page_title=f"fusionviz · {title}", page_icon="⚡", layout="wide")
    head, toggle = st.columns([5, 1])
    head.title(title)
    on = toggle.toggle("Presentation", value=st.session_state.get("presentation", False), key=f"_pres_{title}",
                       help="Large fonts, controls hidden, one chart per screen")
    st.session_state["presentation"] = on
    if on:
        st.markdown(PRESENTATION_CSS, unsafe_allow_html=True)
        return ChartSettings.presentation()
    st.caption(intro)
    return ChartSettings()


@st.cache_resource(show_spinner=False)
def shared_worker() -> Worker:
    """One worker process for the whole app: it keeps torch imported, and it runs one job at a time."""
    return Worker()


@st.cache_resource(show_spinner="Looking for devices (starting the worker)…")
def available_devices() -> list[dict[str, str]]:
    return shared_worker().request({"op": "devices"}, timeout_s=120)["devices"]


def devices_or_cpu() -> list[dict[str, str]]:
    """The worker's devices; the CPU alone, with a warning, when the worker cannot say."""
    try:
        return available_devices()
    except WorkerError as exc:
        st.warning(f"Could not list devices ({exc}); offering the CPU only.")
        return [{"device": "cpu", "name": "CPU"}]


@st.cache_resource(show_spinner=False)
def results() -> dict[str, Session]:
    """Sessions by RunConfig.key(): a configuration that already ran answers at once."""
    return {}


def run_cached(key: str, label: str, failed: str, job: Callable[[Callable[[str], None]], Session]) -> str | None:
    """Run `job` (given a progress callback) under a status box that shows each stage and the elapsed time,
    unless `key` is in the results store. Returns how it went ("measured in 3.1 s", "answered from the
    cache in 0.01 s"), or None when the backend refused or failed (the error is shown, not raised)."""
    store = results()
    started = time.monotonic()
    if key in store:
        return f"answered from the cache in {time.monotonic() - started:.2f} s"
    with st.status(label, expanded=True) as box:
        def progress(stage: str) -> None:
            elapsed = time.monotonic() - started
            box.update(label=f"{stage} · {elapsed:.0f} s")
            box.write(f"{elapsed:5.1f} s · {stage}")

        try:
            store[key] = job(progress)
        except (ConfigError, WorkerError) as exc:
            box.update(label=failed, state="error")
            st.error(str(exc))
            return None
        box.update(label=f"Done in {time.monotonic() - started:.1f} s", state="complete", expanded=False)
    return f"measured in {time.monotonic() - started:.1f} s"


def sessions_dir() -> Path:
    """sessions/ at the repository root; FUSIONVIZ_SESSIONS_DIR points elsewhere (tests, a shared drive)."""
    return Path(os.environ.get("FUSIONVIZ_SESSIONS_DIR", Path(__file__).parent / "sessions"))


def recorded_files() -> list[Path]:
    """Session files (or plain profiler traces) shipped in sessions/, by name."""
    folder = sessions_dir()
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.name.endswith((".json", ".json.gz")))


@st.cache_data(show_spinner="Opening…", max_entries=16)
def open_bytes(raw: bytes, name: str) -> Session:
    return inspection.open_file(raw, name)


def recorded_sweeps() -> dict[str, Session]:
    """The shape-sweep sessions shipped in sessions/, by file name; files that do not open are skipped
    (the lab and the trace explorer report them)."""
    found = {}
    for path in recorded_files():
        try:
            session = open_bytes(path.read_bytes(), path.name)
        except SessionFileError:
            continue
        if session.sweep is not None:
            found[path.name] = session
    return found


def show_source(session: Session) -> None:
    st.caption(f"Source of data: **{charts.source_line(session)}**")


def show_run_problems(session: Session, *, not_applicable: bool = True) -> None:
    """Modes that errored (and, unless the verdict already said so, modes that do not apply), each as a
    message rather than a traceback."""
    for run in session.runs:
        first = (run.error or "").strip().splitlines()[0] if run.error else ""
        if run.status == "not_applicable" and not_applicable:
            st.info(f"**{run.mode}** is not applicable here: {first}")
        elif run.status == "error":
            st.error(f"**{run.mode}** failed: {first}")
            if run.error and "\n" in run.error.strip():
                with st.expander(f"{run.mode}: details"):
                    st.code(run.error, language="text")


def chart(fig: Any, key: str, *, selectable: bool = False) -> Any:
    """A Plotly chart; clicking a bar reruns the page with the selection when `selectable`."""
    if selectable:
        return st.plotly_chart(fig, key=key, on_select="rerun", selection_mode="points",
                                config={"displaylogo": False})
    return st.plotly_chart(fig, key=key, config={"displaylogo": False})


def show_timeline(session: Session, settings: ChartSettings, key: str) -> None:
    """The kernel timeline; a clicked kernel bar shows its generated source underneath."""
    every = st.checkbox("All profiled iterations", key=f"{key}_all",
                        help="Default: one steady iteration per mode (the one of median length)")
    bars = charts.prepare_timeline(session, all_iterations=every)
    if bars.empty:
        st.info("No mode has kernels to draw.")
        return
    title = "Kernel timeline: all profiled iterations" if every else None
    event = chart(charts.timeline_figure(session, bars, settings, title), key, selectable=True)
    st.caption("Each block is one mode: kernels coloured by class, the thin grey lane is the CPU (gaps there "
               "are Python between ops); shaded = compiled region, red ✕ = graph break. Click a kernel for its code.")
    picked = charts.selected_kernel(event["selection"]["points"]) if event else None
    if picked:
        mode, row = picked
        run = session.run(mode)
        if run is not None:
            show_kernel_code(run, str(run.kernel_frame().name[row]))


def show_kernel_code(run: ModeRun, name: str) -> None:
    source = sources.find_source(run, name)
    if source:
        st.markdown(f"**Generated source of `{name}`** ({run.mode})")
        st.code(source, language="python" if name.startswith("triton_") else "cpp", line_numbers=True, height=420)
    elif run.mode == "eager" or not name.startswith(("triton_", "cpp_")):
        st.info(f"`{name}` ({run.mode}) is a library kernel PyTorch ships; Inductor generated no source for it.")
    else:
        st.info(f"The generated source of `{name}` was not captured in this session.")


def mode_picker(session: Session, label: str, key: str, *, compiled_only: bool = False) -> ModeRun | None:
    runs = [r for r in charts.drawable_runs(session) if not compiled_only or r.mode != "eager"]
    if not runs:
        return None
    names = [r.mode for r in runs]
    chosen = st.selectbox(label, names, key=key) if len(names) > 1 else names[0]
    return session.run(chosen)


def show_kernel_table(session: Session, key: str) -> None:
    """The sortable kernel table of one mode; choosing a row shows that kernel's source."""
    run = mode_picker(session, "Mode", f"{key}_mode")
    if run is None:
        return
    every = st.checkbox("All profiled iterations", key=f"{key}_all")
    table = charts.kernel_table(run, all_iterations=every)
    event = st.dataframe(table, key=f"{key}_table_{run.mode}_{every}", on_select="rerun",
                         selection_mode="single-row", hide_index=True,
                         column_config={"start_us": st.column_config.NumberColumn(format="%.1f"),
                                        "dur_us": st.column_config.NumberColumn(format="%.1f")})
    st.download_button("Kernel table (CSV)", table.to_csv(index=False).encode(), file_name=f"kernels-{run.mode}.csv",
                       mime="text/csv", key=f"{key}_csv_{run.mode}")
    rows = event["selection"]["rows"] if event else []
    if rows:
        show_kernel_code(run, str(table.name.iloc[rows[0]]))
    if run.output_code:
        with st.expander(f"Whole generated module(s) of {run.mode} ({len(run.output_code)})"):
            st.code("\n\n".join(run.output_code), language="python", line_numbers=True, height=600)


def show_stats(session: Session, settings: ChartSettings, key: str) -> None:
    """Per-kernel and per-class statistics of every drawable run."""
    runs = charts.drawable_runs(session)
    if not runs:
        return
    chart(charts.class_stats_figure(runs, settings), f"{key}_classes")
    for run in runs:
        st.markdown(f"**{run.mode}**: {run.summary.kernels_per_iteration:g} kernels per iteration"
                    if run.summary else f"**{run.mode}**")
        st.dataframe(charts.prepare_kernel_stats(run), hide_index=True, key=f"{key}_stats_{run.mode}",
                     column_config={c: st.column_config.NumberColumn(format="%.1f")
                                    for c in ("total_us", "mean_us", "share_pct", "per_iteration")})


def show_downloads(session: Session, key: str) -> None:
    """Session JSON, and each mode's raw Chrome trace (opens in Perfetto or chrome://tracing)."""
    name = f"fusionviz-{session.config.model}-{session.config.dim}x{session.config.batch}"
    cols = st.columns(1 + len(session.runs))
    cols[0].download_button("Session (JSON)", session.to_json_bytes(), file_name=f"{name}.json",
                            mime="application/json", key=f"{key}_session")
    for col, run in zip(cols[1:], session.runs, strict=True):
        trace = run.chrome_trace() if run.ok else None
        if trace:
            col.download_button(f"{run.mode} trace (Perfetto)", trace, file_name=f"{name}-{run.mode}.trace.json",
                                mime="application/json", key=f"{key}_trace_{run.mode}")
