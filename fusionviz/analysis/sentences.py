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
