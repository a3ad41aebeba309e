"""Cached calls into the backend: the shared worker, its devices, runs under a progress box, and opening
files from sessions/ or uploads."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import streamlit as st

from fusionviz.errors import FusionvizError, SessionFileError, TalkFileError, WorkerError
from fusionviz.measure.client import list_devices
from fusionviz.measure.protocol import Device, Progress
from fusionviz.measure.worker import Worker
from fusionviz.records.files import open_file
from fusionviz.records.session import Session
from fusionviz.records.talk import Talk, load_talk, parse_talk
from fusionviz.records.trace_pair import trace_pair
from ui import state

ROOT = Path(__file__).resolve().parent.parent
TALKS_DIR = ROOT / "talks"
DEFAULT_TALK = TALKS_DIR / "fusion_story.toml"


@st.cache_resource(show_spinner=False)
def shared_worker() -> Worker:
    """One worker process for the whole app: it keeps torch imported, and it runs one job at a time."""
    return Worker()


@st.cache_resource(show_spinner="Looking for devices (starting the worker)…")
def _devices() -> list[Device]:
    return list_devices(shared_worker())


def devices_or_cpu() -> list[Device]:
    """The worker's devices; the CPU alone, with a warning, when the worker cannot say."""
    try:
        return _devices()
    except WorkerError as exc:
        st.warning(f"Could not list devices ({exc}); offering the CPU only.")
        return [Device("cpu", "CPU")]


def run_cached(key: str, label: str, failed: str, job: Callable[[Progress], Any]) -> str | None:
    """Run `job` (given a progress callback) under a status box that shows each stage and the elapsed time,
    unless `key` is in the results store. Returns how it went ("measured in 3.1 s", "answered from the
    cache in 0.01 s"), or None when the backend refused or failed (the error is shown, not raised)."""
    store = state.results()
    started = time.monotonic()
    if key in store:
        return f"answered from the cache in {time.monotonic() - started:.2f} s"
    with st.status(label, expanded=True) as box:
        def progress(stage: str) -> None:
            elapsed = time.monotonic() - started
            box.update(label=f"{stage} · {elapsed:.0f} s")
            box.write(f"{elapsed:5.1f} s · {stage}")

        try:
            store.put(key, job(progress))
        except FusionvizError as exc:
            box.update(label=failed, state="error")
            st.error(str(exc))
            return None
        box.update(label=f"Done in {time.monotonic() - started:.1f} s", state="complete", expanded=False)
    return f"measured in {time.monotonic() - started:.1f} s"


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


@st.cache_resource(show_spinner="Opening…", max_entries=32)
def open_bytes(raw: bytes, name: str) -> Session:
    """The file as a Session, one shared object per content: `cache_data` would hand out a fresh copy on
    every rerun, and the timeline's figure cache, keyed by the session it draws, would never hit. Sessions
    are not changed after they are opened."""
    return open_file(raw, name)


@st.cache_resource(show_spinner="Opening the pair of traces…", max_entries=8)
def open_trace_pair(eager: bytes, eager_name: str, compiled: bytes, compiled_name: str, mode: str) -> Session:
    """A user's eager and compiled profiler traces as one session (`records.trace_pair`)."""
    return trace_pair(open_file(eager, eager_name), open_file(compiled, compiled_name), mode)


def library() -> tuple[dict[str, Session], list[str]]:
    """Every session of the recorded library by file name, in the default talk's order and then by name,
    and a line for each file that does not open."""
    opened: dict[str, Session] = {}
    problems = []
    for path in recorded_files():
        try:
            opened[path.name] = open_bytes(path.read_bytes(), path.name)
        except SessionFileError as exc:
            problems.append(f"{path.name} could not be opened: {exc}")
    try:
        order = [scene.session for scene in load_talk(DEFAULT_TALK).scenes]
    except TalkFileError:
        order = []
    ranked = sorted(opened, key=lambda name: (order.index(name) if name in order else len(order), name))
    return {name: opened[name] for name in ranked}, problems


def talks() -> list[Path]:
    """The talk files shipped in talks/, the default talk first."""
    return sorted(TALKS_DIR.glob("*.toml"), key=lambda p: (p != DEFAULT_TALK, p.name))


@st.cache_data(show_spinner=False, max_entries=8)
def read_talk(text: str, name: str) -> Talk:
    return parse_talk(text, name)


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
