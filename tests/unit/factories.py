"""Hand-made kernel rows, runs and sessions for the fast tier: small enough to reason about, built through
the same row builder and summary as real traces."""

from __future__ import annotations

from typing import Any

from fusionviz.records.config import RunConfig
from fusionviz.records.kernels import classify, cpu_op_row, kernel_frame, kernel_row
from fusionviz.records.session import CompileInfo, Environment, Latency, ModeRun, Session
from fusionviz.records.trace import summarise


def k(name: str, start: float, dur: float, *, iteration: int = 0, ops: tuple[str, ...] = (), op_id: int = -1,
      launch_op: str = "", kernel_class: str | None = None) -> dict[str, Any]:
    """One kernel row; its class follows the real rules unless given."""
    return kernel_row(iteration=iteration, name=name, kernel_class=kernel_class or classify(name, launch_op),
                      start_us=start, dur_us=dur, stream=7, grid="", block="", launch_op=launch_op, op_id=op_id,
                      input_shapes="", fused_ops=list(ops), source_file="", graph="")


def run(mode: str, kernels: list[dict[str, Any]], *, ms: tuple[float, float, float] | None = None,
        compile_s: float | None = None, step_us: float = 100.0, cpu_ops: list[dict[str, Any]] | None = None,
        graphs: int | None = None) -> ModeRun:
    """A run whose summary is computed from its kernels; `ms` is (median, p10, p90) latency."""
    iterations = max([r["iteration"] for r in kernels] + [0]) + 1
    summary = summarise(kernel_frame(kernels, mode), [step_us] * iterations, launches_counted=False,
                        launches=kernel_frame([], mode))
    latency = Latency(ms[0], ms[1], ms[2], sorted(ms), 10, "cuda_events") if ms else None
    compile_info = CompileInfo(first_call_s=compile_s, cache="cold") if compile_s is not None else None
    return ModeRun(mode=mode, latency=latency, compile=compile_info, summary=summary, kernels=kernels,
                   cpu_ops=cpu_ops or [], graph_count=graphs)


def cpu(name: str, category: str, start: float, dur: float, iteration: int = 0) -> dict[str, Any]:
    return cpu_op_row(iteration=iteration, name=name, category=category, start_us=start, dur_us=dur)


def session(*runs: ModeRun, device_kind: str = "cuda") -> Session:
    return Session(config=RunConfig(modes=tuple(r.mode for r in runs)),
                   environment=Environment(device_name="H200" if device_kind == "cuda" else "CPU",
                                           device_kind=device_kind, torch_version="2.11.0"),
                   runs=list(runs), source="recorded")
