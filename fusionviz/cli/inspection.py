"""`inspect`'s account of a session or trace, as plain JSON-ready values (the CLI's `--json` contract), read
off the session's Report: a reporter over the analysis, as the charts are.

Plain Python over the run's kernel records: `inspect` of a plain trace imports no pandas."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from fusionviz.analysis.bound import bound_fields
from fusionviz.analysis.cuda_graphs import coverage_fields
from fusionviz.analysis.dram_counts import NO_COUNTERS, counted_costs
from fusionviz.analysis.kernel_costs import RunCosts, cost_fields
from fusionviz.analysis.memory import memory_fields
from fusionviz.analysis.provenance import kernel_provenance, link_kind
from fusionviz.analysis.report import Report, RunReport, analyse
from fusionviz.analysis.trace_stats import as_records
from fusionviz.records.kernels import MEMORY_CLASS, KernelRow
from fusionviz.records.session import ModeRun

if TYPE_CHECKING:
    from fusionviz.analysis.timing import Estimate  # a type only: timing imports pandas
    from fusionviz.records.job import Job  # a type only: a job's reader imports multiprocessing

TOP_KERNELS = 20  # kernels ranked in the report unless asked for another number


def inspect_report(report: Report, name: str, top: int | None = TOP_KERNELS) -> dict[str, Any]:
    """`{"source", "runs": [{"label", "device", "iterations", "iterations_from", "kernels_per_iteration",
    "memory_ops_per_iteration", "steps", "excluded_kernels", "gpu_busy_fraction", "notes",
    "kernels": [{"name", "class", "duration_us", "fused_ops"}], "memory_ops": [same shape],
    "top_kernels": [{"name", "kernel_class", "count", "per_iteration", "total_us", "pct_of_kernel_time", "mean_us",
    "min_us", "p50_us", "p99_us", "max_us"}], "distinct_kernels",
    "idle": [{"iteration", "span_us", "kernel_us", "host_wait_us", "between_kernels_us", "unattributed_us",
    "kernels", "busy_pct"}], "latency_ms", "speedup", "verdict"}]}`, and for a grid session `"cells": [{"dim",
    "batch", "node", "device", "error", "model", "mode", "speedup", "verdict", "eager_busy", "eager_kernels",
    "kernels"}]` (`_cells`) and its `crossover` sentence. Each run's `profiled_stretch`: how many times as long
    its median profiled iteration ran as its median timed call (`Report.stretch`; null where untimed), and its
    `bound`: host-bound, device-bound or balanced, with the times it is judged from (`bound.bound_fields`).


    `kernels` lists one iteration's device kernels (the representative one) in launch order, `memory_ops` its
    Memcpy/Memset operations; `steps` the kernels of each profiled iteration in order; `excluded_kernels` the
    kernels launched outside every iteration; `iterations_from` is "steps", "trace" (no steps: the whole
    trace is one window) or "calls"; `notes` says how the trace was read (`trace_notes`); `top_kernels` the
    `top` kernel names by total time over all iterations (all of them when `top` is None) out of
    `distinct_kernels`; `idle` where each iteration's GPU time went (`trace_stats.StepIdle`).

    The accounting (`kernel_costs`, `ladder`): each kernel's `bytes` ({"read", "written", "total", "source"};
    read and written None where only Inductor's total is known), `flop` and `achieved` ({"gbps", "tflops",
    "pct_of_ceiling"}), each null where unknown; per run `bytes_per_iteration`, the share of kernel time whose
    bytes are known (`bytes_known_pct`) and `gpu_time_us`; per session `ceilings` ({"copy_gbps",
    "matmul_tflops": {dtype: TFLOP/s}} or null) and `ladder` (`ladder.ladder_fields`). Beside the estimate,
    the DRAM bytes the hardware counted (`dram_counts`): each kernel's `measured_bytes` ({"read", "written",
    "total", "source": "counters"} or null), per run `measured_bytes_per_iteration` (null where not counted) and
    `measured_bytes_note` (why there are none, "" where there are).

    Provenance (`provenance`): each compiled kernel's `provenance` ({"handle", "post_grad", "pre_grad",
    "source": ["file:line"]}, Inductor's records; null for eager kernels and where unknown) and per run `links`:
    "provenance" where the links to eager come from those records and eager's op lines, else "names".
    A plain trace's kernel carries the user's lines its stack traces give (`source_lines`, ["file:line"]; []
    where the trace wrote none: `KernelRow.source_lines`).

    Where fusion stopped (`separations`, per compiled run): each boundary between neighbouring source ops, its
    `reason` and `detail`, and Inductor's own reasons in words (`inductor`) where its scheduler gave some.

    Memory (`memory.memory_fields`): each run's `memory`, measured in a fresh process of its own ({"method":
    "cuda_allocator" or "profiler_memory_events", "inputs_bytes", "held_bytes", "peak_allocated_bytes",
    "peak_reserved_bytes", "pool_bytes", "graph_pool_bytes", "peak_bytes", "process", "saved", "recomputed",
    "timeline_events"}, `records.session.ModeMemory` defines each; null where not measured), and for a mode that
    records CUDA graphs its `cuda_graphs` (`cuda_graphs.coverage_fields`: what was captured and skipped with
    Inductor's reasons, recordings, input copies per call with their bytes and µs, what would avoid them; null for
    other modes); per session `bridge`, the default → reduce-overhead step for reading (null where not timed).

    A crossover grid's runs are in its cells: its `source` names the sizes it spans."""
    session = report.session
    env = session.environment
    grid = report.grid
    if session.source == "trace":
        source, device = f"torch.profiler trace {name}", env.device_kind
    else:
        c = session.config
        what = (f"fusionviz crossover grid: {c.model}, {grid.mode} against eager over dim "
                f"{', '.join(str(d) for d in dict.fromkeys(grid.table.dim))} × batch "
                f"{', '.join(str(b) for b in dict.fromkeys(grid.table['batch']))}" if grid is not None else
                f"fusionviz session: {c.model}, dim {c.dim}, batch {c.batch}")
        source = (f"{what}, {c.dtype}, {c.pass_}, captured {env.captured_at} on {env.device_name} with torch "
                  f"{env.torch_version}")
        device = env.device_name or c.device
    timed = _timing_report(report)
    costs = report.costs
    inspected: dict[str, Any] = {
        "source": source,
        "runs": [_run_report(report.runs[r.mode], device, env.device_kind, top, costs.get(r.mode))
                 | timed.get(r.mode, NOT_TIMED) | {"links": link_kind(session.run("eager"), r),
                                                   "profiled_stretch": report.stretch.get(r.mode),
                                                   "bound": bound_fields(report.bounds.get(r.mode)),
                                                   "memory": memory_fields(report.memory.get(r.mode)),
                                                   "cuda_graphs": coverage_fields(report.coverage.get(r.mode)),
                                                   "separations": _separation_report(report, r.mode)}
                 for r in session.runs],
        "ceilings": None if session.ceilings is None else {"copy_gbps": session.ceilings.copy_gbps,
                                                           "matmul_tflops": dict(session.ceilings.matmul_tflops)},
        "ladder": _ladder_report(report), "bridge": _bridge_report(report)}
    if grid is not None:
        inspected["cells"] = _cells(report)
        inspected["crossover"] = grid.sentence
    return inspected


def _separation_report(report: Report, mode: str) -> list[dict[str, Any]]:
    """Where the compiled mode's fusion stopped between neighbouring source ops (`separations`, the source view's
    ✂): {"before", "after"} ({"source", "op", "module"}), its `reason` and `detail`, and `inductor`, the words of
    Inductor's own reasons where its scheduler gave some (`no_fusion`); [] for eager and a plain trace."""
    if report.session.source == "trace" or mode == "eager":
        return []  # a plain trace's inspect touches neither pandas nor the fusion links
    view = report.source_views.get(mode)
    if view is None:
        return []
    return [{"before": {"source": s.before.source, "op": s.before.op, "module": s.before.module},
             "after": {"source": s.after.source, "op": s.after.op, "module": s.after.module},
             "reason": s.reason, "detail": s.detail, "inductor": list(s.inductor)} for s in view.separations]


def job_inspect_report(job: Job, top: int | None = TOP_KERNELS) -> dict[str, Any]:
    """A job's account: every rank's run as `inspect_report` gives a trace's (labelled by rank and file), and
    the `job` beside them (`analysis.job.job_report`)."""
    from fusionviz.analysis.job import job_report  # imported here: it needs multiprocessing, one file does not

    runs = [run for rank in job.ranks for run in inspect_report(analyse(rank.session), rank.file, top)["runs"]]
    return {"source": f"a job of {len(job.ranks)} ranks: {job.source}", "runs": runs, "job": job_report(job)}


def _cells(report: Report) -> list[dict[str, Any]]:
    """Each cell of a crossover grid: where it ran and, from the grid's table (`grid.GRID_COLUMNS`), how the mode
    did against eager; `speedup` null where the cell did not run."""
    assert report.session.grid is not None and report.grid is not None
    grid = report.grid
    cells = []
    for cell, row in zip(report.session.grid.cells, grid.table.itertuples(), strict=True):
        speedup = _number(row.speedup)
        cells.append({"dim": cell.dim, "batch": cell.batch, "node": cell.node, "device": cell.device,
                      "error": cell.error, "model": report.session.config.model, "mode": grid.mode,
                      "speedup": None if speedup is None else {"median": speedup, "low": _number(row.speedup_low),
                                                               "high": _number(row.speedup_high)},
                      "verdict": row.verdict, "eager_busy": _number(row.eager_busy),
                      "eager_kernels": _number(row.eager_kernels), "kernels": _number(row.kernels)})
    return cells


def _number(value: Any) -> float | None:
    """A table's number as a float; None where the table has none (NaN: the cell did not run)."""
    number = float(value) if value is not None else math.nan
    return None if math.isnan(number) else number


def _ladder_report(report: Report) -> list[dict[str, Any]]:
    """The session's ladder (`ladder.ladder_fields`); empty for an untimed session or a plain trace."""
    if not report.ladder:
        return []
    # imported here, as a timed session needs it: ladder imports pandas, which a plain trace's `inspect` never loads
    from fusionviz.analysis.ladder import ladder_fields

    return ladder_fields(report.ladder)


def _bridge_report(report: Report) -> dict[str, Any] | None:
    """The default → reduce-overhead step for reading (`ladder.bridge_headline`): {"text", "mechanism",
    "details"}; None where it was not timed."""
    if not report.ladder:
        return None
    from fusionviz.analysis.ladder import bridge_headline

    found = bridge_headline(report.ladder, report.session)
    return None if found is None else {"text": found.text, "mechanism": found.mechanism,
                                       "details": list(found.details)}


def memory_lines(inspected: dict[str, Any]) -> list[str]:
    """`inspect`'s text on memory: per run, its figures and how they were measured, what a train pass saved and
    recomputed, and its CUDA graphs' coverage and input copies; then the default → reduce-overhead step."""
    lines = []
    for run in inspected["runs"]:
        memory, graphs = run.get("memory"), run.get("cuda_graphs")
        if memory is None and graphs is None:
            continue
        lines.append(f"\n{run['label']}: memory")
        if memory is not None:
            how = "CUDA caching allocator" if memory["method"] == "cuda_allocator" else "profiler's memory events"
            reserved = memory["peak_reserved_bytes"]
            lines.append(f"  ({how}, a fresh process) held between calls {memory['held_bytes']:,} B (inputs "
                         f"{memory['inputs_bytes']:,} B); a call's peak above that {memory['peak_allocated_bytes']:,} B"
                         + (f"; reserved at most {reserved:,} B" if reserved is not None else "")
                         + f"; kept from compiling and the first calls {memory['pool_bytes']:,} B"
                         + (f"; CUDA-graph pools {memory['graph_pool_bytes']:,} B" if memory["graph_pool_bytes"]
                            else ""))
            saved = memory["saved"]
            if saved is not None:
                recomputed = memory["recomputed"]
                lines.append(f"  saved for backward {saved['bytes']:,} B in {saved['tensors']} storages, of which "
                             f"activations {saved['activation_bytes']:,} B"
                             + ("" if recomputed is None else "; the backward recomputes " + (", ".join(
                                 f"{r['op']} x{r['count']}" for r in recomputed) or "nothing")))
        if graphs is not None:
            lines.append(f"  CUDA graphs: {graphs['words']}")
            if graphs["avoid"]:
                lines.append(f"  {graphs['avoid']}")
    bridge = inspected.get("bridge")
    if bridge is not None:
        lines.append(f"\n{bridge['text']}. {bridge['mechanism']}")
    return lines


NOT_TIMED: dict[str, Any] = {"latency_ms": None, "speedup": None, "verdict": None}


def _timing_report(report: Report) -> dict[str, dict[str, Any]]:
    """Per mode: `latency_ms` and `speedup` (vs eager; None for eager) as {"median", "low", "high"} (p10–p90),
    the `verdict` ("faster", "slower", "no clear difference"; None for eager), and on a GPU the busy fraction
    over the timed latency. A plain trace has no timing, and is answered without importing pandas."""
    def interval(e: Estimate) -> dict[str, float]:
        return {"median": e.median, "low": e.low, "high": e.high}

    timed: dict[str, dict[str, Any]] = {}
    for mode, c in report.comparisons.items():
        timed[mode] = {"latency_ms": interval(c.latency), "speedup": None if mode == "eager" else interval(c.speedup),
                       "verdict": None if mode == "eager" else c.verdict}
        if report.session.run(mode) is not None and report.session.environment.device_kind == "cuda":
            # kernel time over the unprofiled latency, as the app shows it (the profiled span overstates idling)
            timed[mode]["gpu_busy_fraction"] = report.busy[mode]
    return timed


def _run_report(shown: RunReport, device: str, device_kind: str, top: int | None,
                costs: RunCosts | None) -> dict[str, Any]:
    run, summary = shown.run, shown.run.summary
    if summary is None or costs is None:
        return {"label": run.mode, "status": run.status, "reason": run.error, "device": device, "iterations": 0,
                "iterations_from": "steps",
                "kernels_per_iteration": 0.0, "memory_ops_per_iteration": 0.0, "steps": [], "excluded_kernels": 0,
                "gpu_busy_fraction": None, "notes": [], "kernels": [], "memory_ops": [], "top_kernels": [],
                "distinct_kernels": 0, "idle": [], "bytes_per_iteration": None, "bytes_known_pct": 0.0,
                "gpu_time_us": 0.0, "measured_bytes_per_iteration": None, "measured_bytes_note": NO_COUNTERS}
    rows = _iteration_rows(run, summary.representative_iteration)
    index = {id(r): i for i, r in enumerate(run.kernels)}
    provenance = kernel_provenance(run)
    counted = counted_costs(run)

    def kernel(r: KernelRow) -> dict[str, Any]:
        i = index[id(r)]
        found = provenance[i]
        measured = counted.costs[i]
        return _row(r) | cost_fields(costs.costs[i], costs.achieved[i]) | {
            "measured_bytes": None if measured is None else {
                "read": measured.read, "written": measured.written, "total": measured.total, "source": "counters"},
            "provenance": None if found is None else found.as_json(), "source_lines": list(r.source_lines)}
    ranking = shown.ranking
    return {
        "label": run.mode, "status": run.status, "reason": run.error, "device": device,
        "iterations": summary.iterations,
        "iterations_from": summary.iterations_from,
        "kernels_per_iteration": float(summary.kernels_per_iteration),
        "memory_ops_per_iteration": float(summary.memory_ops_per_iteration),
        "steps": kernels_per_step(run), "excluded_kernels": summary.excluded_kernels,
        "gpu_busy_fraction": shown.busy_time.busy_fraction if device_kind == "cuda" else None,
        "notes": shown.notes,
        "kernels": [kernel(r) for r in rows if r.kernel_class != MEMORY_CLASS],
        "memory_ops": [_row(r) for r in rows if r.kernel_class == MEMORY_CLASS],
        "top_kernels": as_records(ranking if top is None else ranking[:top]),
        "distinct_kernels": len(ranking),
        "idle": as_records(shown.idle),
        "bytes_per_iteration": costs.bytes_per_iteration, "bytes_known_pct": costs.bytes_known_pct,
        "gpu_time_us": costs.gpu_time_us,
        "measured_bytes_per_iteration": counted.per_iteration, "measured_bytes_note": counted.note,
    }


def _iteration_rows(run: ModeRun, iteration: int) -> list[KernelRow]:
    """The kernel records of one iteration in launch order (a stable sort on start, as the kernel table's)."""
    return sorted((r for r in run.kernels if r.iteration == iteration), key=lambda r: r.start_us)


def _row(r: KernelRow) -> dict[str, Any]:
    return {"name": r.name, "class": r.kernel_class, "duration_us": float(r.dur_us), "fused_ops": list(r.fused_ops)}


def kernels_per_step(run: ModeRun) -> list[int]:
    """Kernels of each profiled iteration, in order (memory operations are not kernels)."""
    if run.summary is None:
        return []
    counts = [0] * run.summary.iterations
    for r in run.kernels:
        if r.kernel_class != MEMORY_CLASS and 0 <= r.iteration < len(counts):
            counts[r.iteration] += 1
    return counts
