"""A worker's temporary files (the profiler's trace files, compile scratch) live in a folder of its own, removed
on every exit path: a worker killed in the middle of a run leaves nothing in the system's temporary folder, and
the folders of an app killed outright go when the next worker starts."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest

from fusionviz.measure import client
from fusionviz.measure.client import keep_spares, list_devices, run_session, warm_worker
from fusionviz.measure.worker import Worker, shared_inductor_cache
from fusionviz.records.config import RunConfig, default_threads


def test_a_killed_workers_temporary_folder_is_removed_and_the_inductor_cache_shared() -> None:
    worker = Worker()
    list_devices(worker)
    assert worker.pid is not None and worker.tmp_dir is not None
    folder = Path(worker.tmp_dir)
    environ = dict(v.split("=", 1) for v in Path(f"/proc/{worker.pid}/environ").read_text().split("\0") if "=" in v)
    assert environ["TMPDIR"] == str(folder)
    assert environ["TORCHINDUCTOR_CACHE_DIR"] == shared_inductor_cache()
    (folder / "trace.json").write_text("{}")  # what a profile in progress leaves
    os.killpg(worker.pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while folder.exists() and time.monotonic() < deadline:  # gone without another request
        time.sleep(0.05)
    assert not folder.exists()
    assert list_devices(worker)  # the next request restarts it, in a new folder
    assert worker.tmp_dir is not None and Path(worker.tmp_dir).is_dir()
    last = Path(worker.tmp_dir)
    worker.close()
    assert not last.exists()


# An app that starts a worker, says the worker's pid and folder, and waits to be killed.
_OWNER = ("from fusionviz.measure.worker import Worker\nimport time\nw = Worker()\nw.start()\n"
          "print(w.pid, w.tmp_dir, flush=True)\ntime.sleep(600)\n")


def test_the_folders_of_an_app_killed_outright_go_when_the_next_worker_starts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    root = Path(__file__).resolve().parents[2]
    owner = subprocess.Popen([sys.executable, "-c", _OWNER], cwd=root, stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "TMPDIR": str(tmp_path)})
    assert owner.stdout is not None
    pid, folder = owner.stdout.readline().split()
    try:
        os.kill(owner.pid, signal.SIGKILL)  # no atexit, no cleanup thread: the folder stays
        owner.wait(timeout=30)
        assert Path(folder).is_dir() and Path(folder).parent == tmp_path
        mine = tmp_path / f"fusionviz-worker-{os.getpid()}-kept"  # a live process's folder is not touched
        mine.mkdir()
        with Worker() as worker:
            worker.start()
            assert not Path(folder).exists()
            assert mine.is_dir() and worker.tmp_dir is not None
            assert Path(worker.tmp_dir).name.startswith(f"fusionviz-worker-{os.getpid()}-")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(int(pid), signal.SIGKILL)  # the orphaned worker (it would exit on its own stdin's end)


def test_a_workers_warm_up_builds_inductors_cpu_header_where_every_worker_finds_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The precompiled header took 6 s of g++ in each worker's private folder, on every FX-cache hit: a live CPU
    # run's timing processes compiled for 8-10 s where a hit takes 2.5 s.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # a machine where nothing was compiled before
    headers = Path(shared_inductor_cache()) / "precompiled_headers"
    assert Path(shared_inductor_cache()).parent == tmp_path
    first, second = Worker(), Worker()
    try:
        assert warm_worker(first, "cpu") > 0
        assert first.tmp_dir is not None and not list(Path(first.tmp_dir).rglob("*.gch"))
        built = sorted(headers.glob("*.gch"))
        assert built
        stamps = [p.stat().st_mtime_ns for p in built]
        warm_worker(second, "cpu")
        assert sorted(headers.glob("*.gch")) == built and [p.stat().st_mtime_ns for p in built] == stamps
    finally:
        first.close()
        second.close()


def test_a_run_times_in_the_spares_kept_for_it_and_ends_them() -> None:
    """Timing workers started and warmed before a run (`keep_spares`, the app's) are the run's timing processes,
    and each times that one run only: the run takes them from the spares and ends them."""
    keep_spares(2, "cpu")
    spares = list(client._SPARES[(None, "cpu")])
    assert len(spares) == 2 and all(w.alive and core is None for w, _, core in spares)
    session = run_session(RunConfig(model="pointwise_chain", dim=64, batch=8, modes=("eager", "default"), rounds=3,
                                    processes=2, threads=default_threads()))
    assert session.timing is not None
    assert [p.error for p in session.timing.processes] == [None, None]
    assert client._SPARES[(None, "cpu")] == []
    assert not any(w.alive for w, _, _ in spares)


# An app that starts a worker, says its pid, and sends it a compile warm-up (seconds of work after torch's
# import, itself 4 s here), waiting for its answer until it is killed.
_BUSY_OWNER = ("from fusionviz.measure.client import warm_worker\nfrom fusionviz.measure.worker import Worker\n"
               "w = Worker()\nw.start()\nprint(w.pid, flush=True)\nwarm_worker(w, 'cpu')\n")


def test_a_worker_ends_within_a_second_of_an_owner_killed_outright_while_it_works() -> None:
    root = Path(__file__).resolve().parents[2]
    owner = subprocess.Popen([sys.executable, "-c", _BUSY_OWNER], cwd=root, stdout=subprocess.PIPE, text=True)
    assert owner.stdout is not None
    worker = psutil.Process(int(owner.stdout.readline()))
    try:
        time.sleep(0.5)  # the warm-up's line written to the worker's stdin
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait(timeout=30)
        killed = time.monotonic()
        with contextlib.suppress(psutil.NoSuchProcess):
            while worker.status() != psutil.STATUS_ZOMBIE and time.monotonic() - killed < 30:
                time.sleep(0.05)
        lived = time.monotonic() - killed
        assert lived < 1.5, f"the worker outlived its owner by {lived:.1f} s"
    finally:
        with contextlib.suppress(psutil.NoSuchProcess):
            worker.kill()
