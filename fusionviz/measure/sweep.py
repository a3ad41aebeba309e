"""Dynamic vs static shapes: run a schedule of input sizes under each strategy; record what compiles.

Runs inside the worker (imports torch), inference under no_grad. Compiles, their times and their
recompile reasons come from Dynamo's compilation metrics (`torch._dynamo.utils.get_compilation_metrics`),
not from scraping logs; the recompile limit shows as a metric whose failure reason says so, after which
Dynamo runs the frame in eager for good.
"""

from __future__ import annotations

import statistics
import time

import torch
import torch.nn.functional as F
from torch._dynamo.utils import counters

from fusionviz.measure.harness import (
    kernel_sources,
    listening,
    prepare,
    profile,
    reset_dynamo,
    sized,
    sync,
    time_calls,
)
from fusionviz.measure.protocol import Progress
from fusionviz.measure.specs import spec_for
from fusionviz.records.config import RunConfig, SweepRequest, bucket_sizes, sweep_sizes
from fusionviz.records.session import StrategyRun, Sweep, SweepCall
from fusionviz.records.trace import parse_trace

_DYNAMIC = {"static": False, "dynamic": True, "automatic": None, "mark_dynamic": None, "buckets": False}


def run_sweep(config: RunConfig, request: SweepRequest, progress: Progress) -> Sweep:
    sizes = sweep_sizes(config, request)
    buckets = bucket_sizes(sizes, request.buckets) if "buckets" in request.strategies else []
    distinct = sorted(set(sizes))
    kernel_size = distinct[len(distinct) // 2]
    sweep = Sweep(dimension=request.dimension, schedule=sizes, buckets=buckets, kernel_size=kernel_size)
    for strategy in request.strategies:
        progress(f"{strategy}: running {len(sizes)} calls")
        try:
            with torch.no_grad():
                sweep.strategies.append(_run_strategy(config, request, strategy, sizes, buckets, kernel_size,
                                                      progress))
        except torch.OutOfMemoryError:
            raise
        except Exception as exc:
            sweep.strategies.append(StrategyRun(strategy=strategy, status="error",
                                                error=f"{type(exc).__name__}: {exc}"))
    return sweep


def _run_strategy(config: RunConfig, request: SweepRequest, strategy: str, sizes: list[int],
                  buckets: list[int], kernel_size: int, progress: Progress) -> StrategyRun:
    reset_dynamo()
    largest = max(sizes + buckets)
    model, _, device = prepare(sized(config, request.dimension, largest))
    spec = spec_for(config)
    axis = 0 if request.dimension == "batch" else 1
    dtype = next(model.parameters()).dtype
    inputs: dict[int, tuple[torch.Tensor, ...]] = {}
    torch.manual_seed(1)
    for size in sorted(set(sizes)):
        cfg = sized(config, request.dimension, size)
        made = spec.inputs(cfg.batch, cfg.dim, cfg.seq)
        inputs[size] = tuple(t.to(device=device, dtype=dtype) if t.is_floating_point() else t.to(device)
                             for t in made)
        if strategy == "mark_dynamic":
            for t in inputs[size]:
                torch._dynamo.mark_dynamic(t, axis)
    compiled = torch.compile(model, dynamic=_DYNAMIC[strategy])

    def shape_of(size: int) -> int:
        """The size the compiled code sees: the bucket for pad-to-buckets, else the size itself."""
        return next((b for b in buckets if b >= size), size) if strategy == "buckets" else size

    def call(size: int) -> None:
        args = inputs[size]
        if strategy == "buckets":
            compiled(*(_pad(t, axis, shape_of(size)) for t in args)).narrow(axis, 0, size)
        else:
            compiled(*args)

    run = StrategyRun(strategy=strategy)
    seen_reasons: list[str] = []
    # Inductor reuses kernel names across recompiles, so the source shown for `kernel_size` must come from
    # the compile that serves it: the latest compile at or before the first call of that shape.
    latest_code: list[str] = []
    serving_code: list[str] | None = None
    hits_before = int(counters["inductor"].get("fxgraph_cache_hit", 0))
    misses_before = int(counters["inductor"].get("fxgraph_cache_miss", 0))
    with listening() as listener:
        for index, size in enumerate(sizes):
            code_before = len(listener.output_code)
            before = len(torch._dynamo.utils.get_compilation_metrics())
            sync(device)
            t0 = time.perf_counter()
            call(size)
            sync(device)
            elapsed = time.perf_counter() - t0
            new = torch._dynamo.utils.get_compilation_metrics()[before:]
            # Runtime entries (Triton autotuning at a kernel's first launch) are not compiles of the frame.
            ok = [m for m in new if not m.fail_reason and not getattr(m, "is_runtime", False)]
            if len(listener.output_code) > code_before:
                latest_code = listener.output_code[code_before:]
            if serving_code is None and shape_of(size) == shape_of(kernel_size):
                serving_code = latest_code
            for m in new:
                if m.recompile_reason and m.recompile_reason not in seen_reasons:
                    seen_reasons.append(m.recompile_reason)
                if m.fail_reason and "recompile limit" in m.fail_reason.lower():
                    run.recompile_limit_hit = True
                    seen_reasons.append(f"recompile limit hit: {m.fail_reason.splitlines()[0]}; "
                                        "Dynamo runs this frame in eager from now on")
            compile_s = sum(m.entire_frame_compile_time_s or 0.0 for m in ok)
            run.calls.append(SweepCall(index=index, size=size, latency_ms=elapsed * 1e3, compiled=bool(ok),
                                       compile_s=compile_s, fell_back_to_eager=run.recompile_limit_hit))
            run.compiles += len(ok)
            run.compile_total_s += compile_s
    run.fx_cache_hits = int(counters["inductor"].get("fxgraph_cache_hit", 0)) - hits_before
    run.fx_cache_misses = int(counters["inductor"].get("fxgraph_cache_miss", 0)) - misses_before
    run.cold_caches = request.cold_caches
    progress(f"{strategy}: steady-state latency per size")
    for size in sorted(set(sizes)):
        step = lambda size=size: call(size)  # noqa: E731
        step()
        per_call = time_calls(step, device, 3)
        n = int(min(200, max(3, 10.0 / max(per_call, 1e-3))))
        run.steady_ms_by_size[str(size)] = statistics.median(
            time_calls(step, device, n) for _ in range(request.steady_repeats))
    progress(f"{strategy}: kernels at {request.dimension} {kernel_size}")
    parsed = parse_trace(profile(lambda: call(kernel_size), device, 1))
    run.recompile_reasons = seen_reasons
    run.kernels = parsed.kernel_rows
    names = set(parsed.kernels.name)
    run.kernel_sources = {k: v for k, v in kernel_sources(serving_code or listener.output_code).items() if k in names}
    return run


def _pad(t: torch.Tensor, axis: int, target: int) -> torch.Tensor:
    missing = target - t.shape[axis]
    if missing <= 0:
        return t
    pad = [0, 0] * (t.dim() - axis - 1) + [0, missing]
    return F.pad(t, pad)
