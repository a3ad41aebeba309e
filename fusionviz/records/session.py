"""The session: everything one fusion-lab run produced, saved as versioned JSON.

The CLI writes it, the app reads it, the tests check it. It holds plain data only (no torch), so a
session recorded on a GPU machine opens anywhere. Fields added in later versions get defaults, so an
older file still loads; a file of a newer schema is refused with a clear error.
"""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import msgspec
from msgspec import Meta, Struct, field

from fusionviz.errors import ConfigError, SessionFileError
from fusionviz.records.ceilings import Ceilings
from fusionviz.records.config import RunConfig, validate
from fusionviz.records.decode import INT64, Count, DecodeError, Finite, Int64, Positive, decode
from fusionviz.records.dram import DramCount
from fusionviz.records.kernels import CpuOpRow, KernelRow, cpu_op_frame, kernel_frame
from fusionviz.records.limits import inflate
from fusionviz.records.session_file import read_json_bytes, upgrade

if TYPE_CHECKING:  # pandas is imported where a frame is built: `inspect` and the trace reader run without it
    import pandas as pd

# 2: timing in interleaved rounds over several processes (`Session.timing`); ModeRun.latency is schema 1's.
# 3: what fused into what, from Inductor's own records (`ModeRun.provenance`, `graph_nodes`) and the eager ops'
#    modules and source lines (`ModeRun.op_sources`); older sessions hold none, and their links come from names.
# Fields added with a default need no new version (an older file reads them as their default): `host_rounds`,
# `dram_counters`, and each mode's memory, CUDA-graph coverage and AOT graphs (`ModeRun.memory`, `cuda_graphs`,
# `aot_graphs`), and the fusions Inductor's scheduler refused (`GraphProvenance.no_fusion`).
SCHEMA_VERSION = 3
SESSION_KIND = "fusionviz.session"


RunStatus = Literal["ok", "error", "not_applicable"]
CacheState = Literal["warm", "cold", "mixed", "unknown"]
SessionSource = Literal["live", "recorded", "trace"]
Timer = Literal["cuda_events", "perf_counter"]
GraphCache = Literal["hit", "miss", "bypass", ""]
MemoryMethod = Literal["cuda_allocator", "profiler_memory_events"]


class Record(Struct, weakref=True):
    """A session's record: a msgspec Struct, as the kernel rows are, made and decoded in C (dataclasses' generated
    methods were most of what importing this module cost `inspect`); weak references to it are allowed so that the
    app keys what it computes from a record by one (ui/memo.py). Subclasses inherit both."""


class Environment(Record):
    """Where a session was captured. Versions are None where not applicable (no CUDA on a CPU run)."""

    device_name: str = ""
    device_kind: str = "cpu"
    torch_version: str = ""
    triton_version: str | None = None
    cuda_version: str | None = None
    driver_version: str | None = None
    cpu: str = ""
    cpu_count: Int64 = 0
    python_version: str = ""
    hostname: str = ""
    captured_at: str = ""
    fusionviz_version: str = ""
    device_memory_gib: Finite | None = None
    # the version of the library a real model was built with (`{"transformers": "5.18.0"}`); empty for the zoo
    libraries: dict[str, str] = field(default_factory=dict)


class Latency(Record):
    """Schema 1's per-call latency in ms: `repeats` repeats of `calls_per_repeat` calls each, every mode timed
    on its own. Sessions of schema 2 keep their timing in `Session.timing` instead."""

    median_ms: Finite
    p10_ms: Finite
    p90_ms: Finite
    samples_ms: list[Positive]
    calls_per_repeat: Int64
    timer: Timer


class MachineLoad(Record):
    """How busy the machine was, read from /proc around a run: other work skews CPU timings."""

    cores: Int64  # CPU cores this process may use
    load_average: Finite  # 1-minute load average
    busy_cores: Finite  # cores busy over a short sample, this measurement's own processes excluded
    others: list[str] = field(default_factory=list)  # the busiest other processes: "name (pid): 0.9 cores"


class TimingProcess(Record):
    """One fresh worker process's timing: every mode in `rounds`, interleaved, so drift hits all alike.

    `rounds[r][mode]` is the mean ms per call of that mode's `calls_per_round[mode]` calls in round r.
    `pinned_cpu` is the one core the timing thread ran on (GPU runs), `threads` torch's CPU thread count.
    `host_rounds[r][mode]` is the host's own ms per call in the same block: the loop that enqueued the calls,
    before waiting for the device (empty in older sessions).
    """

    index: Int64
    rounds: list[dict[str, Positive]] = field(default_factory=list)
    host_rounds: list[dict[str, Positive]] = field(default_factory=list)
    calls_per_round: dict[str, Annotated[int, Meta(gt=0, le=INT64 - 1)]] = field(default_factory=dict)
    pinned_cpu: Int64 | None = None
    threads: Int64 = 0
    error: str | None = None


class Timing(Record):
    """Every round of every timing process of a session: the raw data latencies and speedups come from."""

    timer: Timer
    processes: list[TimingProcess] = field(default_factory=list)
    load_before: MachineLoad | None = None
    load_after: MachineLoad | None = None


class CompileInfo(Record):
    """The first compiled call, timed on its own. `cache` says whether Inductor's caches were hit."""

    first_call_s: Finite
    cache: CacheState  # "warm" (FX-graph cache hit), "cold" (miss), "mixed", or "unknown"
    fx_cache_hits: Int64 = 0
    fx_cache_misses: Int64 = 0
    cold_requested: bool = False
    steady_after_calls: Int64 = 0
    # A variant's settings as applied (`records.variants`): {"torch._inductor.config.freezing": "True"}
    settings: dict[str, str] = field(default_factory=dict)


class GraphBreak(Record):
    reason: str
    user_frame: str  # "file:line in function: source line"


class TraceSummary(Record):
    """Per-iteration counts read off the profiled iterations (means over them): raw records only, busy and idle
    time are computed on load (`analysis.trace_stats.busy_time`; schema 1's stored figures are ignored)."""

    iterations: Int64
    kernels_per_iteration: Finite
    launches_per_iteration: Finite | None
    representative_iteration: Int64 = 0  # the iteration of median span, drawn on timelines
    # Memcpy/Memset device operations per iteration, counted apart from kernels
    memory_ops_per_iteration: Finite = 0.0
    # What an iteration is: a ProfilerStep ("steps"); the whole trace, which has no steps ("trace"); or one
    # top-level call of a compiled region ("calls", on request for a trace without steps)
    iterations_from: Literal["steps", "trace", "calls"] = "steps"
    region_calls: Int64 = 0  # top-level calls of one compiled region in a trace without steps (2+: offer "calls")
    excluded_kernels: Int64 = 0  # device kernels launched outside every iteration: in no per-iteration figure
    excluded_memory_ops: Int64 = 0  # memory operations launched outside every iteration
    placed_by_time: bool = False  # no correlation data: device events placed by their own timestamps
    device_note: str = ""  # what the trace's device side holds when it is not kernels fusionviz reads
    # each iteration's own duration (its ProfilerStep's, or its call's), in order; empty in older sessions
    step_durations_us: list[Finite] = field(default_factory=list)
    negative_durations: Int64 = 0  # events whose duration the trace gives as negative, read as 0
    # display-only fields in an odd form, by field ("stream": ROCm's hex text read as its integer; "grid",
    # "block", "Input Dims": text shown as given): counted, never a refusal
    display_as_given: dict[str, Count] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not 0 <= self.representative_iteration <= max(self.iterations - 1, 0):
            raise ValueError("representative_iteration is not one of its iterations")


class NoFusion(Record):
    """A fusion Inductor's scheduler refused, as it logged it (`WhyNoFuse` on the `fusion` artifact log: "cannot
    fuse op1 with op4: no shared data"), once per pair and reason. `node1` and `node2` are its scheduler nodes'
    names (`op4`; a node fused already joins its operations' names, `op2_op3`); `post_grad1` and `post_grad2` the
    post-grad nodes their operations came from (as `GraphProvenance.node_mappings` names them), `buffers1` and
    `buffers2` the buffers they write (`buf4`, as the generated code names them), `loops1` and `loops2` their
    loop sizes ("8×32", a reduction's "8 ÷ 32": 8 outputs of 32 reduced each), where Inductor had them."""

    node1: str
    node2: str
    reason: str  # Inductor's reason before its values are filled in ("device mismatch (%s vs %s)")
    text: str  # the reason as logged, values filled in
    post_grad1: list[str] = field(default_factory=list)
    post_grad2: list[str] = field(default_factory=list)
    buffers1: list[str] = field(default_factory=list)
    buffers2: list[str] = field(default_factory=list)
    loops1: list[str] = field(default_factory=list)
    loops2: list[str] = field(default_factory=list)


class GraphProvenance(Record):
    """Inductor's provenance artifacts for one compiled graph (a forward, or a train pass's backward), kept as
    it emitted them on the structured-trace logger (`provenance_tracking_level = 1`); read in `analysis.provenance`.

    `node_mappings` is the JSON of `inductor_provenance_tracking_node_mappings` (`cppCodeToPost`: each
    `kernel:handle` to the post-grad nodes it computes, `postToPre`: those to the pre-grad nodes), `stack_traces`
    that of `inductor_provenance_tracking_kernel_stack_traces` (each `kernel:handle` to the user's source lines).
    `graph_key` is the FX-graph cache key the profiler's `## Call CompiledFxGraph <key> ##` names; `output_code`
    the index of the graph's generated module in `ModeRun.output_code` (whose comments give the wrapper's call
    order of the handles), -1 where none came."""

    graph_key: str = ""
    output_code: Int64 = -1
    node_mappings: str = ""
    stack_traces: str = ""
    cache: GraphCache = ""  # the FX-graph cache's answer for this graph; "" where it gave none
    # the fusions Inductor's scheduler refused while compiling this graph, with its reasons (its `fusion` log)
    no_fusion: list[NoFusion] = field(default_factory=list)


class GraphNode(Record):
    """A node of a graph Dynamo captured (Inductor's pre-grad nodes), with the module it ran in and its line."""

    graph: Count  # which captured graph, 0-based in capture order (a graph break starts the next)
    name: str  # the node's name, as the provenance records' pre-grad nodes name it
    op: str  # what it calls (`linear`, `relu`, `mul`, `view`)
    module: str  # the module path it ran in (`net.1`); "" for the model itself
    source: str  # the user's source line, "file:line"; "" where unknown
    code: str = ""  # that line's text


class OpSource(Record):
    """An eager launching op's module and source line, from a profiling pass of its own (never a timed one):
    one per kernel row of one eager iteration, in launch order."""

    name: str  # the kernel row's name in that pass, to align it with the timed trace's rows
    launch_op: str
    module: str  # the module path it ran in (`net.1`); "" for the model itself or outside it
    source: str  # the user's line that called it, "file:line"; "" outside the model (the backward pass)
    code: str = ""  # that line's text


class MemoryEvent(Record):
    """One allocation (`bytes` > 0) or free (< 0) of one profiled iteration, in order: when (`t_us`, from the
    iteration's start), and the op or kernel that made the block (for a free, the op that had allocated it: "before
    the window" for a block made before the iteration; "" where the trace does not say)."""

    t_us: Finite
    bytes: Int64
    op: str = ""


class SavedForBackward(Record):
    """What one forward of a train pass saved for its backward (`torch.autograd.graph.saved_tensors_hooks` around
    the step, each storage counted once): every saved storage (`bytes`, `tensors`), and those that are neither a
    parameter nor one of the model's inputs, the activations (`activation_bytes`, `activations`)."""

    bytes: Count
    tensors: Count
    activation_bytes: Count
    activations: Count


class ModeMemory(Record):
    """One mode's memory, measured in a fresh process where it ran first (a timing process, or one of its own):
    no other mode's blocks in the allocator's cache, nothing compiled before it.

    Every figure is in bytes, relative to what the process held before it (the model's parameters are the
    baseline's, so none of them counts). `method` says how all were taken: "cuda_allocator", the CUDA caching
    allocator's own statistics (`torch.cuda.memory_allocated`, `max_memory_allocated`, `memory_reserved`,
    `max_memory_reserved`, peaks reset after the warm-up; `_snapshot()` for the graph pools), or
    "profiler_memory_events", the running total of the profiler's `[memory]` events (`profile_memory=True`) from
    before the inputs were made, where the allocator keeps no statistics (the CPU).

    - `inputs_bytes`: the model's inputs, as made for the run.
    - `held_bytes`: allocated between calls once steady, above what was allocated before the inputs were made:
      the inputs, outputs kept alive, static input buffers and CUDA-graph outputs.
    - `peak_allocated_bytes`: the most a steady call allocates on top of what is held between calls
      (intermediates, an output not yet dropped): the peak over the steady calls less the level before them.
    - `peak_reserved_bytes`: the most the allocator held from the device over the steady calls, above what it
      held before the inputs were made (the caching allocator keeps freed blocks); None without a caching
      allocator (the CPU's frees go back at once).
    - `pool_bytes`: what the first call and the warm-up allocated and kept: compiling, recording CUDA graphs
      (the static inputs and outputs a graph tree keeps), cuBLAS workspaces.
    - `graph_pool_bytes`: what the allocator keeps reserved in private pools (the memory of recorded CUDA graphs,
      intermediates included) after the warm-up; None on the CPU, which has no CUDA graphs.
    - `timeline`: one steady iteration's allocations and frees (the profiler's memory events), from the level
      `timeline_start_bytes` above the baseline; `timeline_dropped` counts events left out beyond the cap.
    - `saved`: a train pass's saved tensors (None for inference, or a CUDA graph replayed whole, where autograd
      does not run).
    - `snapshot_gz_b64`: the GPU's allocator history over one steady iteration (`torch.cuda.memory._snapshot()`,
      trimmed, as JSON, gzipped), which `fusionviz run --memory-snapshot` writes as PyTorch's memory viewer reads
      it; None on the CPU.
    - `process`: the timing process it was measured in, or -1 for a process of its own.
    """

    method: MemoryMethod
    inputs_bytes: Int64 = 0
    held_bytes: Int64 = 0
    peak_allocated_bytes: Int64 = 0
    peak_reserved_bytes: Int64 | None = None
    pool_bytes: Int64 = 0
    graph_pool_bytes: Int64 | None = None
    timeline: list[MemoryEvent] = field(default_factory=list)
    timeline_start_bytes: Int64 = 0
    timeline_dropped: Count = 0
    saved: SavedForBackward | None = None
    snapshot_gz_b64: str | None = None
    process: Int64 = -1


class TensorShape(Record):
    """One input of the model: its shape and the bytes of one element."""

    shape: list[Count]
    itemsize: Count


class RecordedGraph(Record):
    """One CUDA graph a graph tree recorded: the compiled function it replays (`function`, numbered by the tree in
    the order functions were wrapped), whether that is a forward, a backward or an inference graph, and the
    shapes of its outputs ("4096x4096"); a function recorded twice was re-recorded (for new shapes)."""

    function: Count
    kind: str = ""
    output_shapes: list[str] = field(default_factory=list)


class CudaGraphs(Record):
    """What a mode that records CUDA graphs captured, read in the capture's process after the warm-up: Inductor's
    skip reasons, each with the compiled graph it skipped (an index into `ModeRun.provenance`, -1 where unknown);
    the graphs the tree recorded; Inductor's counters (`cudagraph_skips`, and the non-static inputs of every
    recording, `cudagraph_recorded_non_static_inputs`); and the model's inputs, whose element sizes give the
    bytes of the copies into the graphs' static buffers."""

    skips: list[str] = field(default_factory=list)
    skipped_graphs: list[Int64] = field(default_factory=list)
    recorded: list[RecordedGraph] = field(default_factory=list)
    skip_count: Count = 0
    non_static_inputs: Count = 0
    inputs: list[TensorShape] = field(default_factory=list)


class AotNode(Record):
    """A computing node of an AOTAutograd graph: its name (a node recomputed in the backward keeps the name it
    has in the forward) and its ATen op."""

    name: str
    op: str


class AotGraph(Record):
    """A forward or backward graph AOTAutograd handed to Inductor (its `aot_forward_graph` /
    `aot_backward_graph` structured-trace records), as its computing nodes; `frame` the Dynamo frame and compile
    it belongs to ("0/0")."""

    kind: Literal["forward", "backward", "inference"]
    frame: str = ""
    nodes: list[AotNode] = field(default_factory=list)


class ModeRun(Record):
    """One mode's results. `status` is "ok", "error" or "not_applicable" (then `error` says why)."""

    mode: str
    status: RunStatus = "ok"
    error: str | None = None
    latency: Latency | None = None
    compile: CompileInfo | None = None
    summary: TraceSummary | None = None
    graph_count: Int64 | None = None
    graph_breaks: list[GraphBreak] = field(default_factory=list)
    recompiles: Int64 | None = None
    kernels: list[KernelRow] = field(default_factory=list)
    cpu_ops: list[CpuOpRow] = field(default_factory=list)
    kernel_sources: dict[str, str] = field(default_factory=dict)
    output_code: list[str] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)
    trace_gz_b64: str | None = None
    provenance: list[GraphProvenance] = field(default_factory=list)
    graph_nodes: list[GraphNode] = field(default_factory=list)
    op_sources: list[OpSource] = field(default_factory=list)
    dram_counters: list[DramCount] = field(default_factory=list)  # one iteration's kernels, ncu (records.dram)
    memory: ModeMemory | None = None  # measured in a fresh process of its own (`measure.memory`)
    cuda_graphs: CudaGraphs | None = None  # what its CUDA graphs captured, for a mode that records them
    aot_graphs: list[AotGraph] = field(default_factory=list)  # a train pass's forward and backward graphs

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def representative_iteration(self) -> int:
        """The iteration of median span that views draw (`TraceSummary`); 0 for a run without a summary."""
        return self.summary.representative_iteration if self.summary else 0

    def kernel_frame(self) -> pd.DataFrame:
        """The kernel table (columns documented in `kernels.KERNEL_COLUMNS`)."""
        return kernel_frame(self.kernels)

    def cpu_op_frame(self) -> pd.DataFrame:
        """The CPU op table (columns documented in `kernels.CPU_OP_COLUMNS`)."""
        return cpu_op_frame(self.cpu_ops)

    def chrome_trace(self) -> bytes | None:
        """The raw torch.profiler Chrome trace (JSON bytes) this run was read from, if kept."""
        if not self.trace_gz_b64:
            return None
        return bytes(inflate(base64.b64decode(self.trace_gz_b64, validate=True), f"the {self.mode} trace"))


class SweepCall(Record):
    """One call of a shape sweep under one strategy."""

    index: Int64
    size: Int64  # the swept dimension's value for this call
    latency_ms: Positive
    compiled: bool
    compile_s: Finite
    fell_back_to_eager: bool = False


class StrategyRun(Record):
    """A shape-sweep strategy's results: per-call timings, compiles and their reasons."""

    strategy: str
    status: Literal["ok", "error"] = "ok"
    error: str | None = None
    calls: list[SweepCall] = field(default_factory=list)
    compiles: Int64 = 0
    compile_total_s: Finite = 0.0
    recompile_reasons: list[str] = field(default_factory=list)
    steady_ms_by_size: dict[str, Finite] = field(default_factory=dict)
    kernels: list[KernelRow] = field(default_factory=list)
    kernel_sources: dict[str, str] = field(default_factory=dict)
    recompile_limit_hit: bool = False
    # Inductor FX-graph cache hits and misses over the schedule: a hit compiles in a fraction of a miss.
    fx_cache_hits: Int64 = 0
    fx_cache_misses: Int64 = 0
    cold_caches: bool = False  # the strategy ran in a fresh worker with an empty Inductor cache

    def kernel_frame(self) -> pd.DataFrame:
        """The kernel table of the profiled call (columns documented in `kernels.KERNEL_COLUMNS`)."""
        return kernel_frame(self.kernels)


class Sweep(Record):
    """A dynamic-vs-static shapes sweep over one dimension (`batch` or `seq`)."""

    dimension: str
    schedule: list[Int64]
    strategies: list[StrategyRun] = field(default_factory=list)
    buckets: list[Int64] = field(default_factory=list)
    kernel_size: Int64 | None = None  # the size whose kernels are kept per strategy


class GridCell(Record):
    """One (dim, batch) point of a crossover grid: its runs and timing, as a session of its own would hold."""

    dim: Int64
    batch: Int64
    device: str  # the GPU (or CPU) it ran on, numbered as its node numbers it
    runs: list[ModeRun] = field(default_factory=list)
    timing: Timing | None = None
    error: str | None = None  # the whole cell failed (e.g. refused as too large): why
    node: str = ""  # the host it ran on (a Ray grid's cells run on any node); empty in older sessions


class Grid(Record):
    """A crossover grid: the session's configuration at every hidden dim × batch, to see where compiling
    starts to win."""

    dims: list[Int64]
    batches: list[Int64]
    cells: list[GridCell] = field(default_factory=list)


class Session(Record):
    config: RunConfig
    environment: Environment
    runs: list[ModeRun] = field(default_factory=list)
    sweep: Sweep | None = None
    timing: Timing | None = None
    naive: NaiveResult | None = None  # the naive snippet's figures for the first compiled mode, when asked for
    grid: Grid | None = None
    ceilings: Ceilings | None = None  # the device's measured bandwidth and matmul rates (`measure.ceilings`)
    source: SessionSource = "live"  # "live", "recorded" (a file) or "trace" (a plain profiler trace)
    label: str = ""
    schema_version: Int64 = SCHEMA_VERSION

    def run(self, mode: str) -> ModeRun | None:
        return next((r for r in self.runs if r.mode == mode), None)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": SESSION_KIND, **msgspec.to_builtins(self, enc_hook=str)}  # str subclasses: torch.__version__

    def save(self, path: str | Path) -> Path:
        """Write JSON; gzip it when the name ends in `.gz`."""
        path = Path(path)
        data = self.to_json_bytes()
        path.write_bytes(gzip.compress(data, mtime=0) if path.suffix == ".gz" else data)
        return path

    def to_json_bytes(self) -> bytes:
        """Strict JSON: a NaN or infinity (which no reader accepts, this one included) fails here, at writing."""
        return json.dumps(self.to_dict(), separators=(",", ":"), allow_nan=False).encode()

    @classmethod
    def from_dict(cls, data: Any) -> Session:
        if not isinstance(data, dict) or data.get("kind") != SESSION_KIND:
            raise SessionFileError("this is not a fusionviz session (no \"kind\": \"fusionviz.session\" at the top)")
        version = data.get("schema_version")
        if not isinstance(version, int):
            raise SessionFileError("this session has no schema_version: it was not written by fusionviz")
        if version > SCHEMA_VERSION:
            raise SessionFileError(
                f"this session has schema version {version}, newer than the {SCHEMA_VERSION} this fusionviz reads: "
                "upgrade fusionviz to open it"
            )
        try:
            session: Session = decode(cls, upgrade(data))
            validate(session.config)  # a live run's configuration was validated before it ran (`measure.client`)
        except (DecodeError, ConfigError) as exc:
            raise SessionFileError(f"this session file is damaged: {exc}") from None
        return session

    @classmethod
    def load(cls, path: str | Path) -> Session:
        return cls.from_bytes(Path(path).read_bytes(), name=str(path))

    @classmethod
    def from_bytes(cls, raw: bytes, name: str = "session") -> Session:
        return cls.from_dict(read_json_bytes(raw, name))


class NaiveResult(Record):
    """The widely copied naive measurement of one mode (see `measure.naive`), kept to show what it gets wrong."""

    mode: str
    calls: Int64
    naive_eager_ms: Positive
    naive_mode_ms: Positive
    naive_speedup: Finite
    key_averages_rows_eager: Int64
    key_averages_rows_mode: Int64
