"""Cached calls into the backend: the devices, runs asked of the run service (`state.runs()`) and followed in a
progress box, and opening files from sessions/ or uploads."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import streamlit as st

from fusionviz.charts.registry import VIEWS
from fusionviz.errors import FusionvizError, SessionFileError, TalkFileError, WorkerError
from fusionviz.measure.service import WARM_KEY, Device, DeviceQueues, Run, Ticket, complete
from fusionviz.records.files import open_file
from fusionviz.records.job import TRACE_SUFFIXES, Job, read_job, read_uploaded_job
from fusionviz.records.limits import read_file
from fusionviz.records.session import Session
from fusionviz.records.talk import Talk, load_talk, parse_talk
from fusionviz.records.trace import IterationChoice
from fusionviz.records.trace_pair import trace_pair
from ui import state
from ui.text import plain

ROOT = Path(__file__).resolve().parent.parent
TALKS_DIR = ROOT / "talks"
DEFAULT_TALK = TALKS_DIR / "fusion_story.toml"
POLL_S = 0.3  # how often a waiting page looks at its ticket


@st.cache_resource(show_spinner="Looking for devices (starting the worker)…")
def _devices() -> list[Device]:
    """The devices, asked once per app process (again after "Clear caches")."""
    return state.runs().devices()


def devices_or_cpu() -> list[Device]:
    """The worker's devices; the CPU alone, with a warning, when the worker cannot say."""
    try:
        return _devices()
    except WorkerError as exc:
        st.warning(f"Could not list devices ({plain(exc)}); offering the CPU only.")
        return [Device("cpu", "CPU")]


class Finished(NamedTuple):
    """A run that finished for this user: its result key, and how it was obtained ("measured in 3.1 s")."""

    key: str
    took: str


def submit(slot: str, run: Run, label: str, failed: str) -> None:
    """Queue `run` for this user's `slot` (a page, or a part of one), unless the shared store holds its result
    or this slot already waits for it; a different run the slot waited for is let go."""
    key = run.key
    pending = state.pending(slot)
    if pending is not None and pending.ticket.key == key and not pending.ticket.finished:
        return
    if pending is not None:
        state.let_go(slot)
        pending.ticket.cancel()
    if state.runs().shared(key) is not None:
        return
    state.wait_for(slot, state.Pending(state.runs().submit(run), label, failed))


def run_cached(slot: str, run: Run, label: str, failed: str, previews: bool = False) -> Finished | None:
    """The shared result of `run` at once, or `run` queued on its device and followed (`follow`)."""
    started = time.monotonic()
    if state.runs().shared(run.key) is not None:
        return Finished(run.key, f"answered from the cache in {time.monotonic() - started:.2f} s")
    submit(slot, run, label, failed)
    return follow(slot, previews)


def _cancel(slot: str, toast: bool = True) -> None:
    """The Cancel button's callback: let go of the slot's run (it stops if nobody else waits for it). A lab run
    whose preview is on screen leaves its latest preview there, said as cancelled (the toast is left out where
    the button is in a fragment, whose callbacks may not draw)."""
    if (waiting := state.pending(slot)) is not None and waiting.ticket.finished:
        return  # too late to cancel: the run is followed to its result as usual
    pending = state.let_go(slot)
    if pending is not None:
        ticket = pending.ticket
        ticket.cancel()
        if toast:
            st.toast("Run cancelled")
        if slot == "lab" and state.shown("lab") == ticket.key and ticket.preview is not None:
            state.keep_own(ticket.key, ticket.preview)
            state.show("lab", ticket.key, _partly(ticket, "then cancelled"))


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _waiting_label(ticket: Ticket[Any], queues: DeviceQueues) -> str:
    """Where the run stands: its place in line (and, behind the worker's warm-up, what that pays for: a first Run
    pressed at once on a machine that never compiled waits there, benchmarks/RESULTS.md, "2026-12-04 — the C++
    header built ahead is the one Inductor asks for"), or its latest stage, with the seconds it has spent there."""
    now, position = time.monotonic(), ticket.position()
    if position:
        ahead = queues.running(ticket.device)
        behind = (", behind the compiler's warm-up (what a first compile pays before the model's own work; on a "
                  "machine that never compiled, Inductor's C++ header too, once)"
                  if ahead is not None and ahead.key == WARM_KEY else "")
        return f"{_ordinal(position)} in line for {ticket.device}{behind} · {now - ticket.submitted:.0f} s"
    return f"{ticket.stage or 'starting'} · {now - (ticket.started or now):.0f} s"


def _stage_line(ticket: Ticket[Any], at: float, stage: str) -> str:
    return f"{at - (ticket.started or at):5.1f} s · {stage}"


def follow(slot: str, previews: bool = False) -> Finished | None:
    """Wait for this user's run in `slot` under a status box showing its place in line, then each stage with
    the elapsed time, and a Cancel button. A rerun (the Cancel click, any widget) interrupts the wait; the page
    calls this again on its next run, so the run is followed again, not lost. Returns the finished run (an
    incomplete one is kept for this user alone), or None when nothing waits, it was cancelled or it failed
    (the error is shown). With `previews`, a run's partial result (a session timed by its first process) is
    returned as soon as it comes, kept for this user alone, while a box under a fragment follows the rest and
    reruns the page when more has come."""
    pending = state.pending(slot)
    if pending is None:
        return None
    ticket = pending.ticket
    if previews and ticket.preview is not None and not ticket.finished:
        state.keep_own(ticket.key, ticket.preview)
        _refining(slot, ticket.previews)
        return Finished(ticket.key, _partly(ticket))
    button = st.empty()  # outside the box, which the browser may draw collapsed
    with st.status(pending.label, expanded=True) as box:
        button.button("Cancel", key=f"cancel_{slot}", on_click=_cancel, args=(slot,))
        label, written = "", 0
        queues = state.runs().queues
        while not ticket.wait(POLL_S):
            if (now := _waiting_label(ticket, queues)) != label:
                label = now
                box.update(label=label)
            written = _write_stages(box, ticket, written)
            if previews and ticket.preview is not None:
                st.rerun()  # drawn by the branch above, with the rest followed under a fragment
        _write_stages(box, ticket, written)  # every stage, also those of a run that ended between two reruns
        button.empty()
        state.let_go(slot)
        try:
            value = ticket.result()
        except FusionvizError as exc:
            box.update(label=pending.failed, state="error")
            st.error(plain(exc))  # a worker's error carries what the model printed
            return None
        if complete(value):
            state.forget_own(ticket.key)
            # How long it took is the page's to say, once, beside what it shows ("This run was measured in …")
            box.update(label="Done", state="complete", expanded=False)
        else:
            state.keep_own(ticket.key, value)
            box.update(label="Finished, but part of it failed: shown to you only; run again to retry",
                       state="error", expanded=False)
    return Finished(ticket.key, _took(ticket))


def _write_stages(box: Any, ticket: Ticket[Any], written: int) -> int:
    """The stages after the first `written` written into `box`; how many are written now."""
    new = ticket.stages[written:]
    for at, stage in new:
        box.write(_stage_line(ticket, at, stage))
    return written + len(new)


def _took(ticket: Ticket[Any]) -> str:
    """How a finished run was obtained: "measured in 74.0 s, after 3 s in line"."""
    assert ticket.started is not None and ticket.ended is not None
    queued = ticket.started - ticket.submitted
    return f"measured in {ticket.ended - ticket.started:.1f} s" + (f", after {queued:.0f} s in line"
                                                                     if queued >= 1 else "")


def _partly(ticket: Ticket[Any], then: str = "the figures are refined as the others finish") -> str:
    """How a preview was obtained: "partly timed so far: 1 of 3 timing processes, 49.6 s after Run (its time in
    line included); the figures are refined as the others finish"."""
    preview = ticket.preview
    timed = len(preview.timing.processes) if isinstance(preview, Session) and preview.timing else 0
    of = preview.config.processes if isinstance(preview, Session) else 0
    after = (ticket.previewed or time.monotonic()) - ticket.submitted
    return f"partly timed so far: {timed} of {of} timing processes, {after:.1f} s after Run; {then}"


@st.fragment(run_every=1.0)
def _refining(slot: str, previews: int) -> None:
    """The status box of a run whose preview is on screen: its stages, the Cancel button, and a rerun of the page
    once the run has finished, handed over a newer preview or been let go (every second, this fragment alone)."""
    pending = state.pending(slot)
    if pending is None or pending.ticket.finished or pending.ticket.previews != previews:
        st.rerun()
    assert pending is not None
    ticket = pending.ticket
    st.button("Cancel", key=f"cancel_{slot}", on_click=_cancel, args=(slot, False))
    with st.status(f"Refining: {_waiting_label(ticket, state.runs().queues)}", expanded=False):
        for at, stage in ticket.stages:
            st.write(_stage_line(ticket, at, stage))


OWN_MODEL = "your own model…"  # the lab's model picker's entry for a user's package.module:factory


def own_models_allowed() -> bool:
    """Whether the lab may offer a user's own model (`package.module:factory`): the worker imports and runs
    it, so only an operator turns it on, with FUSIONVIZ_ALLOW_OWN_MODELS=1."""
    return os.environ.get("FUSIONVIZ_ALLOW_OWN_MODELS") == "1"


def sessions_dir() -> Path:
    """sessions/ at the repository root; FUSIONVIZ_SESSIONS_DIR points elsewhere (tests, a shared drive)."""
    return Path(os.environ.get("FUSIONVIZ_SESSIONS_DIR", ROOT / "sessions"))


def recorded_files() -> list[Path]:
    """Session files (or plain profiler traces) shipped in sessions/, by name."""
    folder = sessions_dir()
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.name.endswith((".json", ".json.gz")))


def open_bytes(raw: bytes, name: str, iterations: IterationChoice = "steps") -> Session:
    """The file as a Session (`iterations` as in `parse_trace`), opened once per content and name; raises
    the file's FusionvizError, which is kept as well (`_opened`)."""
    return _raised(_opened(raw, name, iterations))


@st.cache_resource(show_spinner="Opening…", max_entries=32)
def _opened(raw: bytes, name: str, iterations: IterationChoice) -> Session | FusionvizError:
    """One shared object per content: `cache_data` would hand out a fresh copy on every rerun, and the
    timeline's figure cache, keyed by the session it draws, would never hit (sessions are not changed after
    they are opened). A refusal is kept too, so a file over a cap costs its cap's work once, not on every
    click of every widget."""
    try:
        return open_file(raw, name, iterations)
    except FusionvizError as exc:
        return exc


@st.cache_resource(show_spinner="Opening the pair of traces…", max_entries=8)
def open_trace_pair(eager: bytes, eager_name: str, compiled: bytes, compiled_name: str, mode: str) -> Session:
    """A user's eager and compiled profiler traces as one session (`records.trace_pair`)."""
    return trace_pair(open_file(eager, eager_name), open_file(compiled, compiled_name), mode)


def recorded_jobs() -> list[Path]:
    """Folders of sessions/ that hold a job's traces (one file per rank), by name."""
    folder = sessions_dir()
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_dir() and any(f.name.endswith(TRACE_SUFFIXES)
                                                                    for f in p.iterdir()))


def open_job_folder(folder: Path) -> Job:
    """A job's folder, read once per set of files (their names, times and sizes); raises its FusionvizError."""
    files = tuple((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in folder.iterdir()) \
        if folder.is_dir() else ()
    return _raised(_job_folder(str(folder), files))


def open_job_uploads(named: tuple[tuple[str, bytes], ...]) -> Job:
    """Uploaded rank traces as a job, read once per content; raises their FusionvizError."""
    return _raised(_job_uploads(named))


Opened = TypeVar("Opened")


def _raised(opened: Opened | FusionvizError) -> Opened:
    """What a cached opener returned, or the refusal it kept, raised."""
    if isinstance(opened, FusionvizError):
        raise opened
    return opened


@st.cache_resource(show_spinner="Reading the job's traces (a process per core)…", max_entries=8)
def _job_folder(folder: str, files: tuple[tuple[str, int, int], ...]) -> Job | FusionvizError:
    try:
        return read_job([Path(folder)])
    except FusionvizError as exc:
        return exc


@st.cache_resource(show_spinner="Reading the job's traces (a process per core)…", max_entries=8)
def _job_uploads(named: tuple[tuple[str, bytes], ...]) -> Job | FusionvizError:
    try:
        return read_uploaded_job(list(named))
    except FusionvizError as exc:
        return exc


def library() -> tuple[dict[str, Session], list[str]]:
    """Every session of the recorded library by file name, in the default talk's order and then by name,
    and a line for each file that does not open; read again only when a file in sessions/ changes."""
    files = tuple((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in recorded_files())
    return _library(str(sessions_dir()), files)


@st.cache_resource(show_spinner="Opening the recorded library…", max_entries=4)
def _library(folder: str, files: tuple[tuple[str, int, int], ...]) -> tuple[dict[str, Session], list[str]]:
    """The library as one cached entry, keyed by its files' names, times and sizes: opened one by one through
    the uploads' cache (32 entries), a library of more files than that was opened again on every rerun."""
    opened: dict[str, Session] = {}
    problems = []
    for name, _, _ in files:
        try:
            opened[name] = open_file(read_file(Path(folder) / name), name)
        except SessionFileError as exc:
            problems.append(f"{name} could not be opened: {exc}")
    try:
        order = [scene.session for scene in load_talk(DEFAULT_TALK, views=VIEWS).scenes]
    except TalkFileError:
        order = []
    ranked = sorted(opened, key=lambda name: (order.index(name) if name in order else len(order), name))
    return {name: opened[name] for name in ranked}, problems


def talks() -> list[Path]:
    """The talk files shipped in talks/, the default talk first."""
    return sorted(TALKS_DIR.glob("*.toml"), key=lambda p: (p != DEFAULT_TALK, p.name))


@st.cache_data(show_spinner=False, max_entries=8)
def read_talk(text: str, name: str) -> Talk:
    return parse_talk(text, name, views=VIEWS)


def recorded_sweeps() -> dict[str, Session]:
    """The shape-sweep sessions of the recorded library, by file name (files that do not open are reported by
    the lab and the trace explorer)."""
    return {name: session for name, session in library()[0].items() if session.sweep is not None}
