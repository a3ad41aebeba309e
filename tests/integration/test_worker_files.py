"""A worker's temporary files (the profiler's trace files, compile scratch) live in a folder of its own, removed
on every exit path: a worker killed in the middle of a run leaves nothing in the system's temporary folder."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from fusionviz.measure.client import list_devices
from fusionviz.measure.worker import Worker, shared_inductor_cache


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
