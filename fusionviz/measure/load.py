"""How busy the machine is, read from /proc (no torch: the caller samples before and after a run).

Other processes that take cores skew CPU timings, and on a GPU host they delay launches; fusionviz
records the load in the session and warns, rather than reporting numbers as if the machine were idle.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import NamedTuple

from fusionviz.records.session import MachineLoad

_TICKS = os.sysconf("SC_CLK_TCK")
SAMPLE_S = 0.5
OTHERS_LISTED = 3
OTHERS_FROM_CORES = 0.2  # a process taking less than this is not worth naming


def machine_load(sample_s: float = SAMPLE_S) -> MachineLoad:
    """Busy cores over `sample_s` seconds, this process and its children (the measurement) left out, the
    1-minute load average, and the busiest other processes."""
    stat_before, procs_before = _cpu_ticks(), _processes()
    time.sleep(sample_s)
    stat_after, procs_after = _cpu_ticks(), _processes()
    own = _own_tree(procs_after)
    busy_ticks = stat_after[0] - stat_before[0]
    total_ticks = stat_after[1] - stat_before[1]
    cpus = os.cpu_count() or 1
    busy_all = cpus * busy_ticks / total_ticks if total_ticks > 0 else 0.0
    used = {pid: (p.name, (p.ticks - procs_before[pid].ticks) / _TICKS / sample_s)
            for pid, p in procs_after.items() if pid in procs_before}
    own_cores = sum(cores for pid, (_, cores) in used.items() if pid in own)
    others = sorted(((cores, f"{name} ({pid})") for pid, (name, cores) in used.items()
                     if pid not in own and cores >= OTHERS_FROM_CORES), reverse=True)
    return MachineLoad(cores=len(os.sched_getaffinity(0)), load_average=round(os.getloadavg()[0], 2),
                       busy_cores=round(max(0.0, busy_all - own_cores), 2),
                       others=[f"{label}: {cores:.1f} cores" for cores, label in others[:OTHERS_LISTED]])


def _cpu_ticks() -> tuple[int, int]:
    """(busy, total) ticks of all CPUs since boot, from /proc/stat's first line."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle and iowait
    return sum(fields) - idle, sum(fields)


class _Process(NamedTuple):
    name: str
    parent: int
    ticks: int  # CPU ticks (user + system) so far


def _processes() -> dict[int, _Process]:
    """Each process's name, parent and CPU ticks, from /proc/<pid>/stat."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "stat").read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()
        found[int(entry.name)] = _Process(text[text.index("(") + 1:text.rindex(")")], int(fields[1]),
                                          int(fields[11]) + int(fields[12]))
    return found


def _own_tree(processes: dict[int, _Process]) -> set[int]:
    """This process and all its descendants (the worker processes and their compile workers)."""
    own = {os.getpid()}
    grew = True
    while grew:
        grew = False
        for pid, process in processes.items():
            if process.parent in own and pid not in own:
                own.add(pid)
                grew = True
    return own
