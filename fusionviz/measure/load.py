"""How busy the machine is, read from /proc (no torch: the caller samples before and after a run).

Other processes that take cores skew CPU timings, and on a GPU host they delay launches; fusionviz
records the load in the session and warns, rather than reporting numbers as if the machine were idle.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from fusionviz.records.session import MachineLoad

_TICKS = os.sysconf("SC_CLK_TCK")
SAMPLE_S = 0.5
OTHERS_LISTED = 3
OTHERS_FROM_CORES = 0.2  # a process taking less than this is not worth naming


def machine_load(sample_s: float = SAMPLE_S) -> MachineLoad:
    """Busy cores over `sample_s` seconds, this process and its children (the measurement) left out, the
    1-minute load average, and the busiest other processes."""
    own = _own_tree()
    stat_before, procs_before = _cpu_ticks(), _process_ticks()
    time.sleep(sample_s)
    stat_after, procs_after = _cpu_ticks(), _process_ticks()
    busy_ticks = stat_after[0] - stat_before[0]
    total_ticks = stat_after[1] - stat_before[1]
    cpus = os.cpu_count() or 1
    busy_all = cpus * busy_ticks / total_ticks if total_ticks > 0 else 0.0
    used = {pid: (name, (ticks - procs_before[pid][1]) / _TICKS / sample_s)
            for pid, (name, ticks) in procs_after.items() if pid in procs_before}
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


def _process_ticks() -> dict[int, tuple[str, int]]:
    """Each process's name and CPU ticks (user + system) so far."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "stat").read_text()
        except OSError:
            continue
        name = text[text.index("(") + 1:text.rindex(")")]
        fields = text[text.rindex(")") + 2:].split()
        found[int(entry.name)] = (name, int(fields[11]) + int(fields[12]))
    return found


def _own_tree() -> set[int]:
    """This process and all its descendants (the worker processes and their compile workers)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                text = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(text[text.rindex(")") + 2:].split()[1])
    own = {os.getpid()}
    grew = True
    while grew:
        grew = False
        for pid, parent in parents.items():
            if parent in own and pid not in own:
                own.add(pid)
                grew = True
    return own
