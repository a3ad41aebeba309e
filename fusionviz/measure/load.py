"""How busy the machine is, sampled by psutil (no torch: the caller samples before and after a run).

Other processes that take cores skew CPU timings, and on a GPU host they delay launches; fusionviz
records the load in the session and warns, rather than reporting numbers as if the machine were idle.
"""

from __future__ import annotations

import os

import psutil

from fusionviz.records.session import MachineLoad

SAMPLE_S = 0.5
OTHERS_LISTED = 3
OTHERS_FROM_CORES = 0.2  # a process taking less than this is not worth naming


def machine_load(sample_s: float = SAMPLE_S) -> MachineLoad:
    """Busy cores over `sample_s` seconds, this process and its children (the measurement) left out, the
    1-minute load average, and the busiest other processes."""
    processes = list(psutil.process_iter(["name"]))
    for p in processes:
        _cores(p)  # the first reading starts each process's sample
    busy_all = (os.cpu_count() or 1) * psutil.cpu_percent(interval=sample_s) / 100  # idle, iowait not busy
    me = psutil.Process()
    own = {me.pid, *(child.pid for child in me.children(recursive=True))}
    used = {p.pid: (p.info["name"], cores) for p in processes if (cores := _cores(p)) is not None}
    own_cores = sum(cores for pid, (_, cores) in used.items() if pid in own)
    others = sorted(((cores, f"{name} ({pid})") for pid, (name, cores) in used.items()
                     if pid not in own and cores >= OTHERS_FROM_CORES), reverse=True)
    return MachineLoad(cores=len(os.sched_getaffinity(0)), load_average=round(os.getloadavg()[0], 2),
                       busy_cores=round(max(0.0, busy_all - own_cores), 2),
                       others=[f"{label}: {cores:.1f} cores" for cores, label in others[:OTHERS_LISTED]])


def _cores(process: psutil.Process) -> float | None:
    """Cores the process used since its last reading; None once it has ended (or may not be read)."""
    try:
        return float(process.cpu_percent(None)) / 100
    except psutil.Error:
        return None
