"""What the lab shows, and where it came from: a session of the recorded library, an uploaded session, a
user's pair of eager and compiled profiler traces, or the user's own run on this machine; the sidebar's
account of its configuration; and the measuring widgets set to that configuration when it changes."""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import streamlit as st

from fusionviz.analysis.grid import cell_session
from fusionviz.analysis.report import analyse
from fusionviz.errors import FusionvizError
from fusionviz.measure.catalog import is_own_model
from fusionviz.records.config import COMPILED_MODES
from fusionviz.records.session import Session
from fusionviz.records.variants import is_variant
from ui import backend, state
from ui.text import plain

Origin = Literal["library", "upload", "traces", "live"]
LIBRARY, UPLOAD, TRACES, LIVE = "Recorded library", "Upload a session", "Your eager + compiled traces", "Your run"
SOURCES: dict[str, Origin] = {LIBRARY: "library", UPLOAD: "upload", TRACES: "traces", LIVE: "live"}


@dataclass(frozen=True)
class Shown:
    """A session on screen, where it came from, and its name: the file(s), or how a live run was obtained."""

    session: Session
    origin: Origin
    name: str


def show_live() -> None:
    """Make the user's own run what the lab shows (a Run button's callback, before the picker is drawn)."""
    state.set_lab_source(LIVE)


def choose() -> Shown | None:
    """The sidebar's picker of what is on screen; None when nothing is chosen yet. Files that do not open
    are reported, never raised."""
    opened, problems = backend.library()
    for problem in problems:
        st.warning(plain(problem))
    shelf = {name: s for name, s in opened.items() if s.runs or s.grid is not None}
    live: Session | None = state.result(state.shown("lab"))
    running = state.lab_source() == LIVE  # Run was pressed: the run comes after this picker
    sources = ([LIBRARY] if shelf else []) + [UPLOAD, TRACES] + ([LIVE] if live or running else [])
    if state.lab_source() not in sources:
        state.set_lab_source(LIVE if live else sources[0])
    source = st.radio("Show", sources, key=state.LAB_SOURCE)
    try:
        if source == LIBRARY:
            name = st.selectbox("Session", list(shelf), key="lab_library",
                                help="Sessions recorded with `python -m fusionviz run` (sessions/)")
            return Shown(shelf[name], "library", name)
        if source == UPLOAD:
            upload = st.file_uploader("A fusionviz session (`fusionviz run --out FILE`)", type=["json", "gz"],
                                      key="lab_upload")
            return Shown(backend.open_bytes(upload.getvalue(), upload.name), "upload", upload.name) if upload \
                else None
        if source == TRACES:
            return _trace_pair()
    except FusionvizError as exc:
        st.error(plain(exc))
        return None
    return Shown(live, "live", state.took("lab")) if live else None


def _trace_pair() -> Shown | None:
    eager = st.file_uploader("Eager trace (torch.profiler, .json or .json.gz)", type=["json", "gz"],
                             key="lab_trace_eager")
    compiled = st.file_uploader("Compiled trace", type=["json", "gz"], key="lab_trace_compiled")
    mode = st.selectbox("The compiled trace's mode", COMPILED_MODES, key="lab_trace_mode")
    if eager is None or compiled is None:
        st.caption("Profile a few steady iterations of your model eagerly and compiled, each with "
                   "`prof.export_chrome_trace(...)`, and open both here.")
        return None
    session = backend.open_trace_pair(eager.getvalue(), eager.name, compiled.getvalue(), compiled.name, mode)
    return Shown(session, "traces", f"{eager.name} + {compiled.name}")


def opened_as(shown: Shown) -> str | None:
    """How the user opened what is on screen, to head the line that says where it came from (`Source.line`)."""
    return {"library": f"Recorded library: {shown.name}", "upload": f"Uploaded session: {shown.name}",
            "traces": f"Your torch.profiler traces: {shown.name}"}.get(shown.origin)


def configuration_lines(session: Session) -> list[str]:
    """The configuration of a session, for the sidebar: what is on screen, not what the widgets say."""
    c, env = session.config, session.environment
    if session.source == "trace":
        return [f"**{plain(c.model)}**: {plain(', '.join(r.mode for r in session.runs))}",
                f"{plain(env.device_kind)} · no timing"]
    sizes = (f"dims {', '.join(map(str, session.grid.dims))} × batches {', '.join(map(str, session.grid.batches))}"
             if session.grid else f"dim {c.dim} · batch {c.batch}" + (f" · seq {c.seq}" if c.seq else ""))
    device = "CPU" if env.device_kind == "cpu" else env.device_name
    lines = [f"**{plain(c.model)}** · {sizes}", f"{c.dtype} · {c.pass_} · dynamic={c.dynamic}",
             "modes: " + plain(", ".join(c.modes)),
             plain(f"{device} · torch {env.torch_version}" + (f" · {env.captured_at[:10]}" if env.captured_at else ""))]
    if session.timing is not None:
        lines.append(f"timed in {c.rounds} rounds × {c.processes} process{'es' if c.processes > 1 else ''}"
                     + (f" · {c.threads} CPU threads" if c.threads and env.device_kind == "cpu" else ""))
    return lines


def prefill(session: Session, identity: str, options: Mapping[str, Sequence[object]],
            real: Collection[str] = ()) -> None:
    """Set the measuring widgets (by their keys) to the configuration of the session just put on screen, where
    the widget offers that value; once per session shown, so the user's edits stay. A model's own sizes (its
    sequence, and a `real` model's width and depth) go to its own widgets."""
    if not state.first_prefill(identity):
        return
    state.set_widgets(widget_values(session, options, real))


def widget_values(session: Session, options: Mapping[str, Sequence[object]],
                  real: Collection[str] = ()) -> dict[str, object]:
    """The measuring widgets' values (by their keys) for the configuration of `session`, each where the widget
    offers it (`options`: the values each widget offers, by key)."""
    c = session.config
    values: dict[str, object] = {"model": c.model, "dim": c.dim, "batch": c.batch, "dtype": c.dtype,
                                 "pass": c.pass_, "dynamic": str(c.dynamic).lower()}
    offered = {key: value for key, value in values.items() if value in options.get(key, [])}
    if is_own_model(c.model) and backend.OWN_MODEL in options.get("model", []):  # where the operator allows it
        offered |= {"model": backend.OWN_MODEL, "own_model": c.model}
    if c.model in options.get("model", []):
        own = {"seq": c.seq, "layers": c.layers, **({"dim": c.dim} if c.model in real else {})}
        offered |= {state.model_key(setting, c.model): value for setting, value in own.items() if value is not None}
    return offered


def rerunner(session: Session, options: Mapping[str, Sequence[object]], real: Collection[str], *,
             devices_known: bool) -> Callable[[str], None] | None:
    """A proposal's button's callback for `session` (`rerun_with`, given the mode to add), or None where the
    session cannot be measured again here: a plain trace, a grid or a sweep, a model or a size the widgets do
    not offer, or a device this machine does not have (only the CPU is known before the worker has answered,
    `devices_known`)."""
    if session.source == "trace" or session.grid is not None or session.sweep is not None:
        return None
    c = session.config
    values = widget_values(session, options, real)
    needed = {"model", "batch", "dtype", "pass", "dynamic"} | ({"dim"} if c.model not in real else set())
    if not needed <= set(values):
        return None
    devices = {d.device for d in backend.devices_or_cpu()} if devices_known else {"cpu"}
    if c.device not in devices:
        return None
    return functools.partial(rerun_with, session, options, real)


def rerun_with(session: Session, options: Mapping[str, Sequence[object]], real: Collection[str], mode: str) -> None:
    """Set the measuring widgets to `session`'s configuration with `mode` added to its modes (a variant goes in the
    variant box, a plain mode in the mode picker) and press Run (a button's callback: before the widgets are
    drawn); what the run makes is shown (`show_live`)."""
    c = session.config
    modes = list(dict.fromkeys((*c.modes, mode)))
    state.set_widgets(widget_values(session, options, real) | {
        "device": c.device, "modes": [m for m in modes if m != "eager" and not is_variant(m)],
        "variants": ", ".join(m for m in modes if is_variant(m))})
    show_live()
    state.ask_lab_run()


def grid_cell(shown: Shown) -> Shown:
    """The crossover grid's cell to show as a session of its own: the one picked here or clicked on the heat
    map (`pick_clicked_cell`), else the first that ran."""
    grid = analyse(shown.session).grid
    assert grid is not None  # a grid session
    table = grid.table
    cells = [(int(d), int(b)) for d, b, v in zip(table.dim, table["batch"], table.verdict, strict=True)
             if v != "error"]
    if not cells:
        raise FusionvizError("no cell of this grid ran")
    if state.lab_cell() not in cells:
        state.set_lab_cell(cells[0])
    dim, batch = st.selectbox("Cell (or click one on the heat map)", cells, key=state.LAB_CELL,
                              format_func=lambda c: f"dim {c[0]} × batch {c[1]}")
    return Shown(cell_session(shown.session, dim, batch), shown.origin, f"{shown.name} · dim {dim} × batch {batch}")


def pick_clicked_cell(key: str = "grid") -> None:
    """A heat map's click callback (its chart key: the desk's "grid", or the presentation's): its (dim, batch)
    becomes the cell shown."""
    points = state.selected_points(key)
    custom = points[0].get("customdata") if points else None
    if isinstance(custom, list) and len(custom) == 2:
        state.set_lab_cell((int(custom[0]), int(custom[1])))
