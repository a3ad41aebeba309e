"""Hand-made kernel rows, runs and sessions for the fast tier: small enough to reason about, built through
the same row builder and summary as real traces."""

from __future__ import annotations

from fusionviz.analysis.kernel_tables import iteration_kernels
from fusionviz.analysis.links import Collapse, collapse
from fusionviz.records.config import RunConfig
from fusionviz.records.kernels import CpuOpRow, KernelClass, KernelRow, classify
from fusionviz.records.session import CompileInfo, Environment, ModeRun, Session, Timing, TimingProcess
from fusionviz.records.trace import summarise


def k(name: str, start: float, dur: float, *, iteration: int = 0, ops: tuple[str, ...] = (), op_id: int = -1,
      launch_op: str = "", kernel_class: KernelClass | None = None) -> KernelRow:
    """One kernel row; its class follows the real rules unless given."""
    return KernelRow(iteration=iteration, name=name, kernel_class=kernel_class or classify(name, launch_op),
                      start_us=start, dur_us=dur, stream=7, grid="", block="", launch_op=launch_op, op_id=op_id,
                      input_shapes="", fused_ops=list(ops), source_file="", graph="")


def run(mode: str, kernels: list[KernelRow], *, compile_s: float | None = None, step_us: float = 100.0,
        cpu_ops: list[CpuOpRow] | None = None, graphs: int | None = None) -> ModeRun:
    """A run whose summary is computed from its kernels."""
    iterations = max([r.iteration for r in kernels] + [0]) + 1
    summary = summarise(kernels, [step_us] * iterations, launches_counted=False, launches=[])
    compile_info = CompileInfo(first_call_s=compile_s, cache="cold") if compile_s is not None else None
    return ModeRun(mode=mode, compile=compile_info, summary=summary, kernels=kernels, cpu_ops=cpu_ops or [],
                   graph_count=graphs)


def timing(ms: dict[str, list[list[float]]]) -> Timing:
    """Timing rounds: `ms[mode][process][round]` is that round's ms per call."""
    processes = len(next(iter(ms.values())))
    return Timing(timer="cuda_events", processes=[
        TimingProcess(index=p, rounds=[{mode: ms[mode][p][r] for mode in ms} for r in range(len(ms["eager"][p]))],
                      calls_per_round=dict.fromkeys(ms, 100), pinned_cpu=7, threads=1)
        for p in range(processes)])


def cpu(name: str, category: str, start: float, dur: float, iteration: int = 0) -> CpuOpRow:
    return CpuOpRow(iteration=iteration, name=name, category=category, start_us=start, dur_us=dur)


def session(*runs: ModeRun, ms: dict[str, list[list[float]]] | None = None, device_kind: str = "cuda") -> Session:
    """A recorded session of these runs, timed in the rounds `ms` gives (see `timing`)."""
    return Session(config=RunConfig(modes=tuple(r.mode for r in runs)),
                   environment=Environment(device_name="H200" if device_kind == "cuda" else "CPU",
                                           device_kind=device_kind, torch_version="2.11.0"),
                   runs=list(runs), timing=timing(ms) if ms else None, source="recorded")


def collapse_of(eager: ModeRun, compiled: ModeRun) -> Collapse:
    """What fused into what between two runs' steady iterations, as the report builds it for a session."""
    return collapse(eager, compiled, iteration_kernels(eager), iteration_kernels(compiled))
