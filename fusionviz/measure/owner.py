"""A worker process's watch on the process that started it (imports no torch: it starts before torch loads)."""

from __future__ import annotations

import os
import signal
import threading
import time

POLL_S = 0.5  # how often the worker looks for its owner; each look is one system call


def watch_owner() -> None:
    """End this worker, its compile workers too (its process group: `Worker` starts it in a session of its
    own), once the process that started it is gone. An owner that ended without closing it (killed outright, or
    a server stopped while a daemon thread waited on a worker) left it importing torch, then running the job it
    was last sent: a core taken for 4-6 s after the app had gone (benchmarks/RESULTS.md). The end of its stdin
    is seen only between jobs."""
    threading.Thread(target=_end_with, args=(os.getppid(),), name="fusionviz-owner-watch", daemon=True).start()


def _end_with(owner: int) -> None:
    while os.getppid() == owner:
        time.sleep(POLL_S)
    os.killpg(0, signal.SIGKILL)
