"""Short sentences and titles computed from a session: where the data came from, what a collapse shows."""

from __future__ import annotations

from fusionviz.analysis.kernel_tables import iteration_kernels
from fusionviz.records.session import ModeRun, Session


def source_line(session: Session) -> str:
    """Where the data on screen came from, in one line."""
    env = session.environment
    if session.source == "live":
        return f"Live on this machine: {env.device_name or session.config.device}, torch {env.torch_version}"
    if session.source == "trace":
        return f"torch.profiler trace {session.label} ({env.device_kind})"
    date = env.captured_at[:16].replace("T", " ")
    return f"Recorded session: {env.device_name or env.device_kind}, torch {env.torch_version}, {date}"


def collapse_title(eager: ModeRun, compiled: ModeRun) -> str:
    """Says what happened to the kernel count; warns when the compiled mode runs more kernels."""
    n_e, n_c = len(iteration_kernels(eager)), len(iteration_kernels(compiled))
    if n_c > n_e:
        return f"⚠ {compiled.mode} runs MORE kernels than eager: {n_e} → {n_c} per iteration"
    if n_c == n_e:
        return f"{compiled.mode}: {n_e} → {n_c} kernels per iteration, nothing fused away"
    return f"{compiled.mode}: {n_e} eager kernels collapse into {n_c} per iteration"


BUSY_CORES_WARNED = 0.5  # other processes taking half a core or more skew CPU timings
BUSY_CORES_NOTICED = 0.25  # below this, other processes are background noise


def load_warnings(session: Session) -> list[str]:
    """What could have skewed the timing: other processes busy before or after the run (or taking cores the
    workers' threads needed), and timing processes that failed."""
    timing = session.timing
    if timing is None:
        return []
    notes = []
    threads = (session.config.threads or 0) if session.environment.device_kind == "cpu" else 0
    for when, load in (("before", timing.load_before), ("after", timing.load_after)):
        if load is None:
            continue
        crowded = threads and load.busy_cores >= BUSY_CORES_NOTICED and load.busy_cores + threads > load.cores
        if load.busy_cores >= BUSY_CORES_WARNED or crowded:
            who = f" ({'; '.join(load.others)})" if load.others else ""
            crowd = f"; the workers' {threads} threads did not all have a core of their own" if crowded else ""
            notes.append(f"The machine was busy {when} the run: {load.busy_cores:.1f} of {load.cores} cores in use "
                         f"by other processes{who}, load average {load.load_average:.1f}{crowd}. Timings may be "
                         "skewed: compare modes within this session, not across sessions.")
    failed = [p for p in timing.processes if p.error]
    if failed:
        first = (failed[0].error or "").splitlines()[0]
        notes.append(f"{len(failed)} of {len(timing.processes)} timing processes failed ({first}); the figures "
                     "come from the others.")
    return notes
