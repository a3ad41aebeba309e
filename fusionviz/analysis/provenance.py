"""Which compiled kernel each launch was, and what it computed, from Inductor's own records (no torch).

A session's compiled run keeps, per compiled graph, Inductor's provenance artifacts and its generated wrapper
(`records.session.GraphProvenance`). The wrapper calls each kernel under a comment naming its debug handle
(`# [Provenance debug handles] cpp_fused_relu_0:2`), in call order; a launch in the trace is matched to the next
handle of its graph that it can be, in that order, so that two launches of one name (mlp's two
`cpp_fused_relu_0` on the CPU, two `triton_poi_fused_addmm_relu_0` on a GPU) are two kernels with their own
nodes and lines. An eager run keeps each launching op's module and line from a pass of its own
(`records.session.OpSource`), aligned here with the timed trace's rows.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable
from pathlib import PurePath
from typing import Any, Literal

import msgspec

from fusionviz.records.derived import derived
from fusionviz.records.kernels import MEMORY_CLASS, KernelRow
from fusionviz.records.session import GraphNode, GraphProvenance, ModeRun, OpSource
from fusionviz.records.stacks import stack_lines

LinkKind = Literal["provenance", "names"]
PROVENANCE_VERSION = 2  # the major version of `inductor_provenance_tracking_node_mappings` this reads


class _NodeMappings(msgspec.Struct):
    cppCodeToPost: dict[str, list[str]] = {}  # Inductor's own field names
    postToPre: dict[str, list[str]] = {}
    version: float = 0.0


_STACK_TRACES = msgspec.json.Decoder(dict[str, list[str]])
_MAPPINGS = msgspec.json.Decoder(_NodeMappings)
_HANDLE_COMMENT = re.compile(r"# \[Provenance debug handles\] (.+)$", re.MULTILINE)
_CALL_ARGS = re.compile(r"def call\(self, args\):\s*\n\s*(.*?)\s*=\s*args\b")
# Post-grad nodes that only reshape or pick (FX names them after their op: `view_5`, `getitem_1`): a kernel that
# reaches a pre-grad node through these alone reads its result (the attention call reads the qkv GEMM's output
# through views), it does not compute it.
_VIEWS = frozenset({"view", "_unsafe_view", "reshape", "permute", "select", "slice", "expand", "t", "transpose",
                    "unsqueeze", "squeeze", "as_strided", "alias", "unbind", "split"})
_NODE_INDEX = re.compile(r"_\d+$")


class KernelProvenance(msgspec.Struct, frozen=True):
    """What one compiled kernel (`handle`, as `kernel:n`) computes: the post-grad nodes, the pre-grad nodes
    they came from (empty for a backward graph: Inductor maps only the forward's), and the user's lines."""

    handle: str
    post_grad: tuple[str, ...]
    pre_grad: tuple[str, ...]
    source: tuple[str, ...]  # "file:line", in the order Inductor lists them, each once
    graph: int  # the compiled graph, an index into ModeRun.provenance
    backward: bool
    computes: tuple[str, ...] = ()  # the pre-grad nodes it computes, not only reads (see `_VIEWS`)
    dynamo_graph: int | None = None  # the Dynamo graph (GraphNode.graph) its pre-grad nodes belong to

    def as_json(self) -> dict[str, Any]:
        """The `inspect --json` form."""
        return {"handle": self.handle, "post_grad": list(self.post_grad), "pre_grad": list(self.pre_grad),
                "source": list(self.source)}


class CompiledGraph(msgspec.Struct, frozen=True):
    """One compiled graph's records, read: its wrapper's handles in call order and each handle's provenance."""

    key: str
    backward: bool
    handles: tuple[str, ...]
    kernels: dict[str, KernelProvenance]


@derived
def compiled_graphs(run: ModeRun) -> list[CompiledGraph]:
    """The run's compiled graphs whose records can be read (a graph whose artifacts are missing or malformed is
    left out: its kernels keep no provenance)."""
    graphs: list[CompiledGraph] = []
    forward_seen = 0
    for index, record in enumerate(run.provenance):
        graph = _read(index, record, run.output_code)
        if graph is None:
            continue
        if not graph.backward:
            graph = _with_dynamo_graph(graph, forward_seen, run.graph_nodes)
            forward_seen += 1
        graphs.append(graph)
    return graphs


def _read(index: int, record: GraphProvenance, output_code: list[str]) -> CompiledGraph | None:
    try:
        traces = _STACK_TRACES.decode(record.stack_traces) if record.stack_traces else {}
        mappings = _MAPPINGS.decode(record.node_mappings) if record.node_mappings else _NodeMappings()
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if mappings.version and int(mappings.version) != PROVENANCE_VERSION:
        return None
    code = output_code[record.output_code] if 0 <= record.output_code < len(output_code) else ""
    handles = tuple(h.strip() for line in _HANDLE_COMMENT.findall(code) for h in line.split(",") if h.strip())
    if not handles:
        handles = tuple(traces) or tuple(mappings.cppCodeToPost)
    if not handles:
        return None
    args = _CALL_ARGS.search(code)
    backward = bool(args and "tangents_" in args.group(1))
    kernels = {}
    for handle in handles:
        post = tuple(mappings.cppCodeToPost.get(handle, ()))
        pre = tuple(dict.fromkeys(p for node in post for p in mappings.postToPre.get(node, ())))
        computes = tuple(dict.fromkeys(p for node in post if _NODE_INDEX.sub("", node) not in _VIEWS
                                       for p in mappings.postToPre.get(node, ())))
        lines = tuple(stack_lines(traces.get(handle, [])))
        kernels[handle] = KernelProvenance(handle=handle, post_grad=post, pre_grad=pre, source=lines, graph=index,
                                           backward=backward, computes=computes)
    return CompiledGraph(record.graph_key, backward, handles, kernels)


def _with_dynamo_graph(graph: CompiledGraph, nth_forward: int, nodes: list[GraphNode]) -> CompiledGraph:
    """The Dynamo graph whose nodes the compiled graph's pre-grad nodes are: the forward graphs compile in
    Dynamo's capture order; checked by name, else the first graph holding every name."""
    names = {p for k in graph.kernels.values() for p in k.pre_grad}
    by_graph: dict[int, set[str]] = {}
    for node in nodes:
        by_graph.setdefault(node.graph, set()).add(node.name)
    order = [nth_forward] + sorted(g for g in by_graph if g != nth_forward)
    chosen = next((g for g in order if g in by_graph and names <= by_graph[g]), None)
    kernels = {h: msgspec.structs.replace(k, dynamo_graph=chosen) for h, k in graph.kernels.items()}
    return CompiledGraph(graph.key, graph.backward, graph.handles, kernels)


_GEMM_OPS = frozenset({"mm", "addmm", "bmm", "baddbmm", "convolution", "_int_mm", "addmv"})


def _fits(row: KernelRow, handle: str, outer: frozenset[str] = frozenset()) -> bool:
    """Whether a launch can be the kernel a handle names: a generated kernel by its name; a library call
    (`extern_kernels.addmm`) by its launching op, or, replayed in a CUDA graph (no launching op), as a GEMM;
    a fallback op (`torch.ops.aten.x.default`, a custom op) by its launching op or an op around it (the
    efficient-attention kernel is launched by `_efficient_attention_forward`, inside the
    `_scaled_dot_product_efficient_attention` the wrapper calls), or, replayed, as any kernel Inductor did not
    generate."""
    name = handle.rpartition(":")[0]
    if name.startswith("extern_kernels."):
        op = name.removeprefix("extern_kernels.").removeprefix("bias_")  # max-autotune's bias_addmm calls addmm
        if f"aten::{op}" in {row.launch_op, *outer}:  # cudnn_convolution launches inside aten::convolution
            return True
        return not row.launch_op.startswith("aten::") and row.kernel_class == "gemm" and op in _GEMM_OPS
    if name.startswith("torch.ops."):  # its kernel may come from an op it calls (`outer`: the ops around the launch)
        if "::" not in row.launch_op:  # replayed: any kernel Inductor did not generate
            return not row.name.startswith(("triton_", "cpp_"))
        parts = name.split(".")
        return len(parts) >= 4 and f"{parts[2]}::{parts[3]}" in {row.launch_op, *outer}
    return row.name == name


@derived
def kernel_provenance(run: ModeRun) -> list[KernelProvenance | None]:
    """For each of the run's kernel records (in stored order), the compiled kernel it was, or None (an eager
    run, a kernel Inductor did not generate or call, a session without provenance).

    A launch inside a compiled graph's call (its `graph` key) takes the next handle of that graph it fits, in
    the wrapper's call order; none further on means the graph was called again, and the search starts over.
    A launch with no graph key and no launching op (a CUDA-graph replay) searches the run's graphs, the latest
    matched first. Kernels of one ATen op call (a GEMM split in two) share their op's handle; replayed kernels
    all carry the compiled region's op, so there a GEMM shares the library call just matched only where the
    wrapper's next handle cannot be it."""
    graphs = compiled_graphs(run)
    if not graphs:
        return [None] * len(run.kernels)
    by_key = {g.key: i for i, g in enumerate(graphs) if g.key}
    around = _ops_around(run)
    cursor = [-1] * len(graphs)
    found: list[KernelProvenance | None] = []
    last: tuple[int, int, int, KernelProvenance] | None = None  # iteration, op_id, graph of the latest match
    for row in run.kernels:
        if last is not None and row.op_id != -1 and (row.iteration, row.op_id) == last[:2] and (
                "::" in row.launch_op or _split_library_call(row, last[3], graphs[last[2]], cursor[last[2]])):
            found.append(last[3])
            continue
        if row.kernel_class == MEMORY_CLASS:
            candidates: list[int] = []
        elif row.graph:
            candidates = [by_key[row.graph]] if row.graph in by_key else []
        elif "::" not in row.launch_op:  # replayed: launched by cudaGraphLaunch, not by an op
            latest = last[2] if last is not None else 0
            candidates = [latest] + [g for g in range(len(graphs)) if g != latest]
        else:
            candidates = []  # an op outside compiled code (the loss, the optimizer)
        match = None
        outer = around(row) if candidates else frozenset()
        for g in candidates:
            position = _next_fit(row, graphs[g].handles, cursor[g], outer)
            if position is not None:
                cursor[g] = position
                match = graphs[g].kernels[graphs[g].handles[position]]
                last = (row.iteration, row.op_id, g, match)
                break
        found.append(match)
    return found


def _ops_around(run: ModeRun) -> Callable[[KernelRow], frozenset[str]]:
    """The names of the recorded ops whose span holds a kernel's launch: by bisection over each iteration's ops
    in start order, looking back no further than its longest op could reach."""
    by_iteration: dict[int, list[tuple[float, float, str]]] = {}
    for op in run.cpu_ops:
        if op.category == "op":
            by_iteration.setdefault(op.iteration, []).append((float(op.start_us), float(op.start_us + op.dur_us),
                                                              op.name))
    for ops in by_iteration.values():
        ops.sort()
    starts = {i: [o[0] for o in ops] for i, ops in by_iteration.items()}
    longest = {i: max(o[1] - o[0] for o in ops) for i, ops in by_iteration.items()}

    def around(row: KernelRow) -> frozenset[str]:
        ops = by_iteration.get(row.iteration)
        if row.launch_us is None or not ops:
            return frozenset()
        at = float(row.launch_us)
        found = []
        for k in range(bisect.bisect_right(starts[row.iteration], at) - 1, -1, -1):
            start, end, name = ops[k]
            if start < at - longest[row.iteration]:
                break
            if end >= at:
                found.append(name)
        return frozenset(found)
    return around


def _split_library_call(row: KernelRow, previous: KernelProvenance, graph: CompiledGraph, at: int) -> bool:
    """Whether a replayed launch is a second kernel of the library call matched just before it (a GEMM cuBLAS
    splits in two): it fits that call and not the wrapper's next handle."""
    following = graph.handles[at + 1] if at + 1 < len(graph.handles) else None
    return (previous.handle.startswith("extern_kernels.") and _fits(row, previous.handle)
            and (following is None or not _fits(row, following)))


def _next_fit(row: KernelRow, handles: tuple[str, ...], after: int, outer: frozenset[str]) -> int | None:
    for position in [*range(after + 1, len(handles)), *range(0, after + 1)]:
        if _fits(row, handles[position], outer):
            return position
    return None


def link_kind(eager: ModeRun | None, run: ModeRun) -> LinkKind:
    """What a run's links to eager come from: "provenance" where eager kept its ops' lines and the run (a
    compiled one, or eager itself) Inductor's records, else "names" (sessions recorded before schema 3, plain
    traces)."""
    if eager is None or not eager.op_sources:
        return "names"
    return "provenance" if run is eager or compiled_graphs(run) else "names"


def iteration_provenance(run: ModeRun, iteration: int | None = None) -> list[KernelProvenance | None]:
    """`kernel_provenance` for one iteration's kernels, in the order `kernel_tables.iteration_kernels` gives."""
    return of_iteration(run, kernel_provenance(run), iteration)


@derived
def kernel_lines(run: ModeRun) -> list[list[str]]:
    """For each kernel record (in stored order), the user's lines it came from ("file:line"): those of the
    pre-grad nodes it computes, else the lines Inductor lists for it (a backward kernel's); for a kernel without
    provenance, those its trace's stack traces give (`KernelRow.source_lines`: a plain trace), else []."""
    nodes: dict[tuple[int | None, str], str] = {(n.graph, n.name): n.source for n in run.graph_nodes if n.source}
    files = _files_by_name(nodes.values())
    found: list[list[str]] = []
    for prov, row in zip(kernel_provenance(run), run.kernels, strict=True):
        if prov is None:
            found.append(list(row.source_lines))
            continue
        lines = [nodes[(prov.dynamo_graph, name)] for name in prov.computes if (prov.dynamo_graph, name) in nodes]
        found.append(list(dict.fromkeys(lines or [_this_checkout(s, files) for s in prov.source])))
    return found


def _files_by_name(sources: Iterable[str]) -> dict[str, str]:
    """The files this run's graph nodes were traced from, by base name (only names that are one file)."""
    paths: dict[str, set[str]] = {}
    for source in sources:
        path = source.rpartition(":")[0]
        paths.setdefault(PurePath(path).name, set()).add(path)
    return {name: next(iter(p)) for name, p in paths.items() if len(p) == 1}


def _this_checkout(source: str, files: dict[str, str]) -> str:
    """A line Inductor listed, in the file this run traced: on a cache hit Inductor replays the records of the
    process that compiled first, whose path to the same file may differ (another checkout of the code)."""
    path, _, line = source.rpartition(":")
    here = files.get(PurePath(path).name)
    return f"{here}:{line}" if here and here != path else source


def iteration_lines(run: ModeRun, iteration: int | None = None) -> list[list[str]]:
    """`kernel_lines` for one iteration's kernels, in the order `kernel_tables.iteration_kernels` gives."""
    return of_iteration(run, kernel_lines(run), iteration)


@derived
def op_sources(run: ModeRun) -> list[OpSource | None]:
    """For each kernel record of an eager run, its launching op's module and line, or None: the marked pass's
    rows aligned with each profiled iteration's by name (a row either side may be missing)."""
    found: list[OpSource | None] = [None] * len(run.kernels)
    if not run.op_sources:
        return found
    import difflib  # here: only a session's eager run has marked ops to align, and a trace's `inspect` none

    marked = [s.name for s in run.op_sources]
    rows_of: dict[int, list[int]] = {}
    for i, row in enumerate(run.kernels):
        rows_of.setdefault(row.iteration, []).append(i)
    for rows in rows_of.values():
        names = [run.kernels[i].name for i in rows]
        matcher = difflib.SequenceMatcher(a=names, b=marked, autojunk=False)
        for block in matcher.get_matching_blocks():
            for k in range(block.size):
                found[rows[block.a + k]] = run.op_sources[block.b + k]
    return found


def iteration_sources(run: ModeRun, iteration: int | None = None) -> list[OpSource | None]:
    """`op_sources` for one iteration's kernels, in the order `kernel_tables.iteration_kernels` gives."""
    return of_iteration(run, op_sources(run), iteration)


def of_iteration(run: ModeRun, values: list[Any], iteration: int | None = None) -> list[Any]:
    """The values of one iteration's kernel records, in launch order (records are stored in iteration and start
    order, as `kernel_tables.one_iteration` sorts them), memory operations left out."""
    if iteration is None:
        iteration = run.representative_iteration
    picked = [(row.start_us, v) for row, v in zip(run.kernels, values, strict=True)
              if row.iteration == iteration and row.kernel_class != MEMORY_CLASS]
    return [v for _, v in sorted(picked, key=lambda p: p[0])]


@derived
def kernel_origins(run: ModeRun) -> list[str]:
    """For each kernel record (in stored order), where it came from, in a few words: an eager kernel's launching
    op, module and line ("aten::addmm in net.0 · zoo.py:44"), a compiled kernel's pre-grad nodes, each by what it
    calls and the module it ran in, in the graph's order, and its lines ("linear (net.0), relu (net.1) ·
    zoo.py:44": two launches of one kernel name read apart), a plain trace's kernel its stack traces' lines
    ("model.py:12, model.py:13"); "" where nothing says."""
    nodes: dict[tuple[int | None, str], tuple[int, GraphNode]] = {(n.graph, n.name): (i, n)
                                                                 for i, n in enumerate(run.graph_nodes)}
    words = []
    for prov, lines, source in zip(kernel_provenance(run), kernel_lines(run), op_sources(run), strict=True):
        if prov is not None:
            ops = ", ".join(_node_words(prov, nodes)) or ("backward" if prov.backward else prov.handle)
            words.append(f"{ops} · {', '.join(short_source(s) for s in lines)}")
        elif source is not None and source.source:
            words.append(f"{source.launch_op} in {source.module or 'the model'} · {short_source(source.source)}")
        elif lines:  # a plain trace's stack traces
            words.append(", ".join(short_source(s) for s in lines))
        else:
            words.append("")
    return words


def _node_words(prov: KernelProvenance, nodes: dict[tuple[int | None, str], tuple[int, GraphNode]]) -> list[str]:
    """A kernel's pre-grad nodes as "op (module)", in the order Dynamo captured them; a node the session keeps
    no record of by its name, after them (Dynamo names most nodes after their op, but a Sequential's `input_1`)."""
    known = sorted(nodes[(prov.dynamo_graph, name)] for name in prov.pre_grad if (prov.dynamo_graph, name) in nodes)
    unknown = [name for name in prov.pre_grad if (prov.dynamo_graph, name) not in nodes]
    return [f"{n.op} ({n.module})" if n.module else n.op for _, n in known] + unknown


def short_source(source: str) -> str:
    """A "file:line" source with the file's folders left out ("/path/to/zoo.py:44" → "zoo.py:44")."""
    return source.rsplit("/", 1)[-1]
