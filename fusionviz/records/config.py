"""What a run is asked to do, and the checks that refuse a bad request before any work starts.

This module imports neither torch nor plotly: the app and the CLI validate a configuration in the
caller's process, and only the worker touches torch.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, replace

from fusionviz.errors import ConfigError
from fusionviz.records.decode import Finite, Int64, clip
from fusionviz.records.variants import AUTOTUNE_MODES as AUTOTUNE_MODES  # the modes live with their variants,
from fusionviz.records.variants import COMPILED_MODES as COMPILED_MODES  # and are named here, where they always were
from fusionviz.records.variants import CUDA_GRAPH_MODES as CUDA_GRAPH_MODES
from fusionviz.records.variants import GRAPHED_EAGER as GRAPHED_EAGER
from fusionviz.records.variants import MODES as MODES
from fusionviz.records.variants import autotunes, check_mode, mode_order, uses_cuda_graphs


def lab_modes(device: str) -> tuple[str, ...]:
    """The modes a user may pick beside eager on `device`: eager as a CUDA graph only off the CPU."""
    return COMPILED_MODES if device == "cpu" else (*COMPILED_MODES, GRAPHED_EAGER)


DTYPES: tuple[str, ...] = ("float32", "bfloat16", "float16")
PASSES: tuple[str, ...] = ("inference", "train")
DYNAMIC_CHOICES: dict[str, bool | None] = {"false": False, "true": True, "none": None}

# Bounds that catch typos (a batch of 10**9) before they become an out-of-memory error minutes later.
MAX_DIM = 16384
MAX_BATCH = 65536
MAX_SEQ = 16384
MAX_LAYERS = 256
MAX_PROCESSES = 8
MAX_ROUNDS = 200


@dataclass(frozen=True)
class RunConfig:
    """One configuration of the fusion lab: a model, its sizes, the modes to compare, and how to time them.

    `seq` is the sequence length (or image side, for the conv models) and is ignored by models without
    one; `layers` the depth of a real model that has a knob for it (transformer blocks), None for its default
    (`measure.catalog` says what each model's sizes set). `dynamic` is passed to `torch.compile` as is (None
    is torch's own default: static first, dynamic after the first recompile). Timing runs in `processes`
    fresh worker processes, each timing every mode in `rounds` interleaved rounds. `threads` is the CPU
    thread count of every worker (ATen's and Inductor's C++ kernels); None lets `validate` choose the
    machine's default. `memory` measures each mode's memory: a timing process measures the mode it runs first,
    and each mode no timing process ran first gets a fresh process of its own (a few seconds a mode on a CPU);
    False leaves the memory view empty for a quicker run.
    """

    model: str = "mlp"
    dim: Int64 = 512
    batch: Int64 = 256
    seq: Int64 | None = None
    layers: Int64 | None = None
    dtype: str = "float32"
    device: str = "cpu"
    pass_: str = "inference"
    modes: tuple[str, ...] = ("eager", "default")
    dynamic: bool | None = False
    rounds: Int64 = 10
    processes: Int64 = 3
    threads: Int64 | None = None
    warmup_calls: Int64 = 10
    profile_iterations: Int64 = 3
    cold_compile: bool = False
    timeout_s: Finite = 900.0
    memory: bool = True

    @property
    def is_cuda(self) -> bool:
        return self.device.startswith("cuda")


def default_threads() -> int:
    """Half the cores this process may use, at least one: the compiled kernels' OpenMP threads spin on a
    barrier, and a core taken by the app, a browser or the profiler would stall them many times over."""
    return max(1, len(os.sched_getaffinity(0)) // 2)


def parse_modes(text: str) -> tuple[str, ...]:
    """`"eager,default,default+freezing"` → `("eager", "default", "default+freezing")`, refusing unknown names
    and variants (`records.variants`) that do not parse."""
    return tuple(check_mode(m.strip()) for m in text.split(",") if m.strip())


def parse_sizes(text: str, what: str = "sizes") -> list[int]:
    """`"8, 16 24"` → `[8, 16, 24]`, refusing anything that is not a whole number written in ASCII digits
    (`isdigit` alone takes `²`, which `int` does not), or is longer than any size this tool takes."""
    words = text.replace(",", " ").split()
    if not all(w.isascii() and w.isdigit() and len(w) <= 9 for w in words):
        raise ConfigError(f"{what} must be whole numbers separated by commas, not {clip(text, 60)!r}")
    return [int(w) for w in words]


def parse_dynamic(text: str) -> bool | None:
    try:
        return DYNAMIC_CHOICES[text.strip().lower()]
    except KeyError:
        raise ConfigError(f"--dynamic takes true, false or none, not {text!r}") from None


def validate(config: RunConfig, *, known_models: set[str] | None = None) -> RunConfig:
    """Refuse sizes and combinations that cannot run, with a message that says what to change.

    Returns the configuration with `modes` ordered as in MODES and `eager` always first, since every
    comparison is against eager, each variant after its base and named as `variants.check_mode` names it, and
    with the thread count chosen, so a session records it.
    """
    if known_models is not None and config.model not in known_models and ":" not in config.model:
        raise ConfigError(
            f"unknown model {config.model!r}: choose one of {', '.join(sorted(known_models))}, "
            "or give your own as package.module:factory"
        )
    for name, value, bound in (("dim", config.dim, MAX_DIM), ("batch", config.batch, MAX_BATCH)):
        if not isinstance(value, int) or value <= 0:
            raise ConfigError(f"{name} must be a positive whole number, not {value!r}")
        if value > bound:
            raise ConfigError(f"{name}={value} is beyond this tool's bound of {bound}: choose a smaller {name}")
    if config.seq is not None:
        if not isinstance(config.seq, int) or config.seq <= 0:
            raise ConfigError(f"seq must be a positive whole number, not {config.seq!r}")
        if config.seq > MAX_SEQ:
            raise ConfigError(f"seq={config.seq} is beyond this tool's bound of {MAX_SEQ}: choose a shorter sequence")
    if config.layers is not None and (not isinstance(config.layers, int) or not 1 <= config.layers <= MAX_LAYERS):
        raise ConfigError(f"layers must be a whole number from 1 to {MAX_LAYERS}, not {config.layers!r}")
    if config.dtype not in DTYPES:
        raise ConfigError(f"dtype {config.dtype!r} is not supported: choose from {', '.join(DTYPES)}")
    if config.pass_ not in PASSES:
        raise ConfigError(f"pass {config.pass_!r} is not supported: choose inference or train")
    if not (config.device == "cpu" or config.device == "cuda" or config.device.startswith("cuda:")):
        raise ConfigError(f"device {config.device!r} is not supported: use cpu or cuda:N")
    if not config.modes:
        raise ConfigError("no modes chosen: pick at least one compiled mode to compare with eager")
    modes = mode_order(("eager", *config.modes))  # refuses an unknown mode or a variant that does not parse
    if not 3 <= config.rounds <= MAX_ROUNDS:
        raise ConfigError(f"rounds must be from 3 to {MAX_ROUNDS}, so that p10 and p90 mean something")
    if not 1 <= config.processes <= MAX_PROCESSES:
        raise ConfigError(f"processes must be from 1 to {MAX_PROCESSES}")
    if config.threads is not None and config.threads < 1:
        raise ConfigError("threads must be at least 1")
    if config.profile_iterations < 1 or config.warmup_calls < 1:
        raise ConfigError("warmup_calls and profile_iterations must be at least 1")
    if not (isinstance(config.timeout_s, int | float) and math.isfinite(config.timeout_s) and config.timeout_s > 0):
        raise ConfigError(f"the time limit must be a positive number of seconds, not {config.timeout_s!r}")
    return replace(config, modes=modes, threads=config.threads or default_threads())


def not_applicable_reason(config: RunConfig, mode: str) -> str | None:
    """Why `mode` cannot run on this configuration's device, or None when it can."""
    if uses_cuda_graphs(mode) and not config.is_cuda:
        return (
            f"{mode} captures CUDA graphs, which do not exist on the CPU; torch would silently run it as "
            "the default mode, so fusionviz does not run it" if "+" not in mode else
            f"{mode} replays CUDA graphs, which do not exist on the CPU: leave out triton.cudagraphs, or start "
            "from default or max-autotune-no-cudagraphs"
        )
    if mode == GRAPHED_EAGER and not config.is_cuda:
        return "eager as one CUDA graph needs a CUDA device: there are no CUDA graphs on the CPU"
    return None


# Models whose compile autotunes convolutions under max-autotune (the zoo's conv block, the real ResNets and
# ConvNeXt of measure.catalog): on the GPU machine ResNet-18's did not finish within 10 minutes.
CONVOLUTIONAL = frozenset({"conv_block", "timm:resnet50", "timm:convnext_tiny", "tv:resnet18"})


def warnings_for(config: RunConfig) -> list[str]:
    """Things a user should know before starting this run (not errors: the run may proceed)."""
    notes = []
    autotuned = any(autotunes(m) for m in config.modes)
    if config.model in CONVOLUTIONAL and autotuned:
        notes.append("max-autotune benchmarks convolution choices, which can take more than 10 minutes; "
                     "the run stops at its time limit")
    if autotuned:
        notes.append("max-autotune benchmarks many GEMM choices: expect a compile of tens of seconds or more")
    if not config.is_cuda and config.dtype == "float16":
        notes.append("float16 on the CPU is slow and not what Inductor's C++ backend is tuned for")
    return notes


SWEEP_DIMENSIONS: tuple[str, ...] = ("batch", "seq")  # what a sweep changes from call to call
SWEEP_SCHEDULES: tuple[str, ...] = ("increasing", "random")  # generated schedules; "list" takes given sizes
SWEEP_STRATEGIES: dict[str, str] = {
    "static": "dynamic=False: one compile per new shape, until the recompile limit sends the rest to eager",
    "dynamic": "dynamic=True: sizes are symbols from the first compile",
    "automatic": "dynamic=None (torch's default): static first, dynamic after the first recompile",
    "mark_dynamic": "torch._dynamo.mark_dynamic on the swept dimension of each input",
    "buckets": "inputs padded up to the next bucket size, compiled statically: only the buckets compile",
}


@dataclass(frozen=True)
class SweepRequest:
    """A shape sweep: which dimension changes, over which sizes, under which strategies.

    `schedule` is "increasing", "random" or "list" (then `sizes` is the list); generated schedules
    have `calls` calls with sizes up to the configuration's batch (or seq).
    """

    dimension: str = "batch"
    schedule: str = "increasing"
    sizes: list[Int64] = field(default_factory=list)
    calls: Int64 = 12
    strategies: list[str] = field(default_factory=lambda: list(SWEEP_STRATEGIES))
    buckets: list[Int64] = field(default_factory=list)
    steady_repeats: Int64 = 5
    # Each strategy in a fresh worker with an empty Inductor cache, so that compile times compare cold to
    # cold; otherwise later strategies reuse graphs an earlier one compiled (FX-graph cache hits).
    cold_caches: bool = False


MAX_SWEEP_CALLS = 64


def sweep_sizes(config: RunConfig, request: SweepRequest) -> list[int]:
    """The sizes of each call, validated; generated schedules are deterministic (seeded)."""
    if request.dimension not in SWEEP_DIMENSIONS:
        raise ConfigError("a sweep runs over batch or seq")
    if request.dimension == "seq" and config.seq is None:
        raise ConfigError(f"{config.model} has no sequence length: sweep over batch instead")
    unknown = [s for s in request.strategies if s not in SWEEP_STRATEGIES]
    if unknown or not request.strategies:
        raise ConfigError(f"choose strategies from {', '.join(SWEEP_STRATEGIES)}" +
                          (f" (unknown: {', '.join(unknown)})" if unknown else ""))
    top = config.batch if request.dimension == "batch" else (config.seq or 1)
    if request.schedule == "list" or request.sizes:
        sizes = list(request.sizes)
    elif request.schedule == "increasing":
        sizes = [max(1, round(top * (i + 1) / request.calls)) for i in range(request.calls)]
    elif request.schedule == "random":
        import random

        rng = random.Random(0)
        sizes = [rng.randint(max(1, top // 8), top) for _ in range(request.calls)]
    else:
        raise ConfigError(f"unknown schedule {request.schedule!r}: increasing, random or list")
    if not sizes or len(sizes) > MAX_SWEEP_CALLS:
        raise ConfigError(f"a sweep takes 1 to {MAX_SWEEP_CALLS} calls, not {len(sizes)}")
    bound = MAX_BATCH if request.dimension == "batch" else MAX_SEQ
    if any(not isinstance(s, int) or s <= 0 or s > bound for s in sizes):
        raise ConfigError(f"sweep sizes must be whole numbers from 1 to {bound}")
    return sizes


def bucket_sizes(sizes: list[int], buckets: list[int]) -> list[int]:
    """The buckets to pad to: the given ones, or powers of two covering the sizes."""
    if buckets:
        return sorted(set(buckets))
    return sorted({1 << max(0, (s - 1).bit_length()) for s in sizes})
