"""The device queues with real workers and real CPU compiles: faults injected (a worker killed mid-compile, a
run cancelled mid-compile, a timeout) are shown to their user, never shared, and a retry runs again; four
lab sessions at once each get the result a solo run gives, and runs on the CPU never overlap."""

from __future__ import annotations

import itertools
import os
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from streamlit import config as st_config
from streamlit.runtime import Runtime
from streamlit.testing.v1 import AppTest, app_test

from fusionviz.charts.style import CLASS_COLOURS
from fusionviz.lru import LRU
from fusionviz.measure.client import list_devices, run_session
from fusionviz.measure.service import RunService, SessionRun, Ticket, complete
from fusionviz.measure.worker import Worker
from fusionviz.records.config import RunConfig, default_threads
from fusionviz.records.session import Session
from tests.app_pages import APP, TIMEOUT, figures, kernels_per_mode, no_errors
from ui import state, warm

SMALL = RunConfig(model="pointwise_chain", dim=64, batch=8, modes=("eager", "default"), rounds=3, processes=1,
                  threads=default_threads(), memory=False)
TIMELINE = "Kernel timeline: one steady iteration per mode"


@pytest.fixture
def own_tempdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This process's temporary files go to a folder of the test's own (others on the machine use /tmp too)."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


@pytest.fixture
def store() -> LRU[str, Any]:
    return LRU(state.RESULTS_KEPT)


@pytest.fixture
def service(store: LRU[str, Any]) -> Iterator[RunService]:
    """A run service of the test's own, sharing into the test's own store."""
    runs = RunService(lambda: store)
    yield runs
    runs.queues.close()


def leftovers(folder: Path) -> list[str]:
    """What is in a temporary folder besides Inductor's compile cache, which is kept across runs on purpose."""
    return [name for name in os.listdir(folder) if not name.startswith("torchinductor_")]


def until(condition: Callable[[], bool], timeout: float = TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def compiling(ticket: Ticket[Session]) -> bool:
    return ticket.stage == "default: compiling" or ticket.finished


def never_overlap(spans: list[tuple[float, float]]) -> bool:
    ordered = sorted(spans)
    return all(end <= next_start for (_, end), (next_start, _) in itertools.pairwise(ordered))


def test_cancel_mid_compile_then_a_timeout_then_a_retry(service: RunService, store: LRU[str, Any],
                                                        own_tempdir: Path) -> None:
    queues = service.queues
    key = SessionRun(SMALL).key

    ticket = service.submit(SessionRun(SMALL))
    until(lambda: compiling(ticket))
    asked = time.monotonic()
    ticket.cancel()
    assert ticket.wait(10) and ticket.state == "cancelled" and ticket.error == "the run was cancelled"
    stopped_s = time.monotonic() - asked
    assert stopped_s < 5 and queues.worker_pid("cpu") is None and key not in store  # the worker was stopped

    hurried = replace(SMALL, timeout_s=1.0, cold_compile=True)
    hurried_key = SessionRun(hurried).key
    timed_out = service.submit(SessionRun(hurried))
    assert timed_out.wait(TIMEOUT) and timed_out.state == "done"
    session = timed_out.result()
    assert [r.status for r in session.runs] == ["error", "error"]
    assert all("longer than its limit of 1 s" in (r.error or "") for r in session.runs)
    assert not complete(session) and hurried_key not in store  # a fault, never shared

    retry = service.submit(SessionRun(SMALL))
    assert retry is not ticket and retry.wait(TIMEOUT) and retry.state == "done"
    assert complete(retry.result()) and store.get(key) is retry.result()
    assert never_overlap(queues.intervals("cpu")) and len(queues.intervals("cpu")) == 3
    queues.close()
    assert leftovers(own_tempdir) == []  # no worker log, no worker folder, no cold-cache folder left behind
    print(f"\ncancel stopped the compile in {stopped_s:.2f} s; timeout then retry: "
          f"{retry.ended - timed_out.started:.1f} s")  # type: ignore[operator]


def test_a_worker_killed_mid_compile_is_shown_not_cached_and_a_retry_runs() -> None:
    at, clicked, key = lab_run_started(replace(SMALL, dim=32))
    queues = state.runs().queues
    until(lambda: (t := queues.running("cpu")) is not None and t.key == key and compiling(t))
    pid = queues.worker_pid("cpu")
    assert pid is not None
    os.killpg(pid, signal.SIGKILL)
    clicked.join(TIMEOUT)

    assert not at.exception
    assert any("**default** failed: the worker process died during the run" in e.value for e in at.error)
    assert any("died during the run (exit code -9)" in c.value for c in at.code)  # the details, as text
    assert key not in state.results()  # nobody else is served the fault
    assert at.session_state["shown_lab"] == key  # this user still sees what did run (eager)

    at.sidebar.button(key="run").click().run()
    no_errors(at)
    assert any("This run was measured in" in c.value for c in at.caption)
    session: Session = state.results().get(key)
    assert session is not None and complete(session)
    assert kernels_per_mode(figures(at)[TIMELINE]) == {
        r.mode: int(r.summary.kernels_per_iteration) for r in session.runs}


def test_a_run_that_ends_after_streamlit_caches_were_cleared_is_still_shown() -> None:
    """"Clear caches" from the app's menu while a run goes on: the run finishes into the store the app uses by
    then (not the one it began with), and its user is shown it."""
    at, clicked, key = lab_run_started(replace(SMALL, dim=32, batch=16))
    queues = state.runs().queues
    until(lambda: (t := queues.running("cpu")) is not None and t.key == key)
    st.cache_resource.clear()
    clicked.join(TIMEOUT)

    no_errors(at)
    assert at.session_state["shown_lab"] == key
    assert any("This run was measured in" in c.value for c in at.caption)
    assert TIMELINE in figures(at)
    assert state.results().get(key) is not None


def lab_run_started(config: RunConfig) -> tuple[AppTest, threading.Thread, str]:
    """A lab session whose Run of `config` (not in the shared store) was clicked in a thread of its own, with
    the result key it waits for: the test acts while the run goes on, then joins the thread."""
    key = SessionRun(config).key
    state.results().pop(key)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    no_errors(at)
    set_lab(at, config)
    clicked = threading.Thread(target=lambda: at.sidebar.button(key="run").click().run())
    clicked.start()
    return at, clicked, key


def set_lab(at: AppTest, config: RunConfig) -> None:
    """The lab's widgets set to `config` (device CPU), without running."""
    at.sidebar.selectbox(key="model").set_value(config.model)
    at.sidebar.select_slider(key="dim").set_value(config.dim)
    at.sidebar.select_slider(key="batch").set_value(config.batch)
    at.sidebar.multiselect(key="modes").set_value(list(config.modes[1:]))
    at.sidebar.slider(key="rounds").set_value(config.rounds)
    at.sidebar.slider(key="processes").set_value(config.processes)
    at.sidebar.checkbox(key="memory").set_value(config.memory)


class _KeepsTheSlot(type):
    """AppTest puts a mock runtime in Streamlit's one Runtime slot for each run and empties the slot when the run
    ends: with runs in threads, the first to end would empty it under the others, whose kept plots
    (ui/plotly_view.py) look their element up there. Assigned through this class, the slot keeps the last
    runtime set; a server has one runtime for all its sessions."""

    def __setattr__(cls, name: str, value: Any) -> None:
        if name != "_instance":
            super().__setattr__(name, value)
        elif value is not None:
            Runtime._instance = value


class _RuntimeSlot(Runtime, metaclass=_KeepsTheSlot):
    pass


def test_four_lab_sessions_at_once_match_solo_runs_and_never_overlap(monkeypatch: pytest.MonkeyPatch) -> None:
    # AppTest swaps streamlit's config getter for each run; runs in threads may leave it swapped: restore it after.
    monkeypatch.setattr(st_config, "get_option", st_config.get_option)
    monkeypatch.setattr(app_test, "Runtime", _RuntimeSlot)
    monkeypatch.setattr(Runtime, "_instance", None)  # emptied again when the test ends
    configs = [SMALL, SMALL, replace(SMALL, model="mlp"), replace(SMALL, batch=16)]
    keys = [SessionRun(c).key for c in configs]
    for key in keys:
        state.results().pop(key)
    sessions = [AppTest.from_file(APP, default_timeout=TIMEOUT).run() for _ in configs]
    for at, config in zip(sessions, configs, strict=True):
        no_errors(at)
        set_lab(at, config)
    queues = state.runs().queues
    warm.start().wait_compiler(TIMEOUT)  # the server's warm-up: one job on the CPU's line, once the page is drawn
    before = len(queues.intervals("cpu"))

    started = time.monotonic()
    threads = [threading.Thread(target=lambda at=at: at.sidebar.button(key="run").click().run()) for at in sessions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT)
    wall_s = time.monotonic() - started

    spans = queues.intervals("cpu")
    assert never_overlap(spans)
    assert len(spans) - before == 3  # the two identical requests shared one run
    shown = {}
    for at, key in zip(sessions, keys, strict=True):
        no_errors(at)
        assert at.session_state["shown_lab"] == key
        shown[key] = kernels_on_screen(figures(at)[TIMELINE])
        assert {mode: len(names) for mode, (_, names) in shown[key].items()} == kernels_per_mode(
            figures(at)[TIMELINE])
    with Worker() as worker:
        solo = {key: run_session(config, worker=worker) for key, config in zip(keys, configs, strict=True)}
    for key in keys:
        assert complete(solo[key]) and state.results().get(key).config == solo[key].config
        assert {mode: len(names) for mode, (_, names) in shown[key].items()} == {
            r.mode: int(r.summary.kernels_per_iteration) for r in solo[key].runs}
        for mode, (iteration, names) in shown[key].items():  # the same kernels, by name, as a solo run's
            assert names == sorted(k.name for k in solo[key].run(mode).kernels if k.iteration == iteration)
    print(f"\n4 lab sessions (3 distinct configurations) at once: {wall_s:.1f} s, {len(spans) - before} runs on "
          f"the CPU, none overlapping; kernels per mode on screen = solo runs' (names and counts): "
          f"{[{mode: len(names) for mode, (_, names) in kernels.items()} for kernels in shown.values()]}")


def kernels_on_screen(timeline: dict[str, Any]) -> dict[str, tuple[int, list[str]]]:
    """Per mode, the iteration the timeline draws and its kernels' names, sorted (from the bars' customdata)."""
    found: dict[str, tuple[int, list[str]]] = {}
    for trace in timeline["data"]:
        if trace.get("name") in CLASS_COLOURS:
            for custom in trace["customdata"]:
                iteration, names = found.get(custom[0], (int(custom[10]), []))
                found[custom[0]] = (iteration, [*names, custom[2]])
    return {mode: (iteration, sorted(names)) for mode, (iteration, names) in found.items()}


def test_no_worker_log_is_left_after_a_worker_dies_idle_or_is_closed(own_tempdir: Path) -> None:
    worker = Worker()
    worker.start()
    assert worker.pid is not None
    os.killpg(worker.pid, signal.SIGKILL)
    until(lambda: not worker.alive and leftovers(own_tempdir) == [], 30)  # its log, and its own folder
    assert [d.device for d in list_devices(worker)][-1] == "cpu"  # restarted on the next request
    worker.close()
    assert leftovers(own_tempdir) == []
