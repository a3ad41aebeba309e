"""A `streamlit run app.py` that a test starts itself, and the measuring workers its warm-up starts: shared by the
integration and browser tiers, which check when those workers start."""

from __future__ import annotations

import socket

import psutil

WORKER_MODULE = "fusionviz.measure.serve"  # what a measuring worker's command line runs


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return int(s.getsockname()[1])


def measuring_workers(server_pid: int) -> list[psutil.Process]:
    """The server's descendants that are measuring workers, those still running when asked."""
    found = []
    for child in psutil.Process(server_pid).children(recursive=True):
        try:
            if WORKER_MODULE in " ".join(child.cmdline()):
                found.append(child)
        except psutil.Error:  # ended meanwhile
            pass
    return found
