"""The machine's load as a session records it, sampled for real: this process's own children (the measurement's
workers) are never counted as other work."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from fusionviz.measure import load


def test_the_load_leaves_out_this_process_and_its_children(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(load, "OTHERS_FROM_CORES", 0.0)  # every other process named, however idle
    monkeypatch.setattr(load, "OTHERS_LISTED", 10**6)
    child = subprocess.Popen([sys.executable, "-c", "while True: pass"])  # a worker's busy core
    try:
        sampled = load.machine_load(0.5)
    finally:
        child.kill()
        child.wait()
    assert sampled.cores == len(os.sched_getaffinity(0))
    assert 0 <= sampled.busy_cores <= (os.cpu_count() or 1) and sampled.load_average >= 0
    assert len(sampled.others) > 1 and all(re.fullmatch(r".+ \(\d+\): \d+\.\d cores", o) for o in sampled.others)
    mine = [o for o in sampled.others if f"({child.pid})" in o or f"({os.getpid()})" in o]
    assert not mine, mine
