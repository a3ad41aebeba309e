"""What fused into what, as the compiler recorded it, and where each eager op came from. Runs in the worker.

Compiled modes: with `provenance_tracking_level = 1` Inductor emits, for each graph it compiles (a forward, a
train pass's backward; on an FX-graph-cache hit too), which post-grad and pre-grad nodes each generated kernel
computes (by `kernel:handle`) and the user's source lines; `Collector` keeps them as they came (`GraphProvenance`),
but for the lines' files, named as this process loaded them (a cache hit replays another process's paths).
Dynamo's captured graphs (`torch._dynamo.explain`'s) give each pre-grad node its module path and line
(`graph_nodes`): the provenance records name nodes only.

Why fusion stopped: while Inductor schedules a graph, its scheduler logs each fusion it refuses, with a reason, on
the `fusion` artifact log (`WhyNoFuse`: "cannot fuse op1 with op4: no shared data"); the listener switches that
log on for the compile alone (it changes no decision) and `no_fusion` keeps each refusal with the post-grad nodes,
buffers and loop sizes of its two sides, read from the graph being lowered. A graph that hits the FX-graph cache is
not scheduled again, so what its miss logged is kept beside Inductor's cache, under the graph's key (`remember`).

Eager: `op_sources` profiles one more iteration of its own, in which each top-level torch call of the model is
marked by a profiler range naming the module it ran in and the user's line that made it. The profiler's own
Python stacks (`with_stack`, `with_modules`) cannot say either: they record function entries (`zoo.py(43):
forward`, the `def` line, for a call on line 44) and modules by class and counter (`nn.Module: ReLU_1`).
"""

from __future__ import annotations

import bisect
import contextlib
import hashlib
import inspect
import json
import linecache
import logging
import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, cast

import msgspec
import torch
import torch._inductor.config
from torch.overrides import TorchFunctionMode
from torch.utils._config_module import ConfigModule

from fusionviz.records.session import GraphCache, GraphNode, GraphProvenance, NoFusion, OpSource
from fusionviz.records.stacks import module_files, rebased
from fusionviz.records.trace import parse_trace

NODE_MAPPINGS = "inductor_provenance_tracking_node_mappings"
STACK_TRACES = "inductor_provenance_tracking_kernel_stack_traces"
_CACHE_ANSWERS: dict[str, GraphCache] = {"fx_graph_cache_miss": "miss", "fx_graph_cache_hit": "hit",
                                          "fx_graph_cache_bypass": "bypass"}


@contextlib.contextmanager
def tracking(model: torch.nn.Module) -> Iterator[None]:
    """Inductor records provenance while compiling `model` inside this (the setting is part of its cache key),
    and the cache key names the source of `model`'s classes (`source_tag`): Inductor's FX-graph and AOTAutograd
    caches key a graph by its ops, not by the lines that made them, so a hit after the model's file moved a line
    would replay the old line numbers as this compile's provenance."""
    with torch._inductor.config.patch({"trace.provenance_tracking_level": 1}), \
            cast(ConfigModule, torch.compiler.config).patch({"cache_key_tag": source_tag(model)}):
        yield


def source_tag(model: torch.nn.Module) -> str:
    """The `content_tag` of the files that define the classes of `model` and its submodules (the zoo's file, a
    transformers model's modeling file, a user's module)."""
    return content_tag({file for module in model.modules()
                        if (file := inspect.getsourcefile(type(module))) and os.path.isfile(file)})


def content_tag(files: Iterable[str]) -> str:
    """A digest of what `files` hold, whatever their paths: any edit to one gives another tag, and a copy of the
    same files elsewhere the same one. The contents are taken in the order of their own digests: in the order of
    their paths, one checkout's zoo.py came after torch's files and another's before them, and the second
    checkout missed the cache entries of the first."""
    digest = hashlib.sha256()
    for each in sorted(hashlib.sha256(Path(file).read_bytes()).digest() for file in files):
        digest.update(each)
    return "fusionviz-source-" + digest.hexdigest()[:16]


MAX_NO_FUSION = 100  # refusals kept per compiled graph: Inductor asks again in each of its fusion rounds


class Collector:
    """Groups the structured-trace records of each compiled graph as they arrive: the scheduler's refused
    fusions while it schedules, then its generated module, then its two provenance artifacts, then the FX-graph
    cache's answer with the graph's key."""

    def __init__(self) -> None:
        self.graphs: list[GraphProvenance] = []
        self._refused: list[NoFusion] = []  # the graph being scheduled: its module has not come yet

    def refused(self, found: NoFusion | None) -> None:
        """A fusion the scheduler refused (`no_fusion`), each pair and reason once, at most MAX_NO_FUSION."""
        if found is None or len(self._refused) >= MAX_NO_FUSION:
            return
        if any((r.node1, r.node2, r.text) == (found.node1, found.node2, found.text) for r in self._refused):
            return
        self._refused.append(found)

    def generated(self, output_code: int) -> None:
        """A graph's generated module arrived, as `output_code` in the listener's list: a new graph begins."""
        self.graphs.append(GraphProvenance(output_code=output_code, no_fusion=self._refused))
        self._refused = []

    def artifact(self, name: str, payload: Any) -> None:
        field = {NODE_MAPPINGS: "node_mappings", STACK_TRACES: "stack_traces"}.get(name)
        if name in _CACHE_ANSWERS:
            field = "cache"
        if field is None or not isinstance(payload, str):
            return
        if not self.graphs or getattr(self.graphs[-1], field):
            self.graphs.append(GraphProvenance())  # an artifact with no generated module before it
        graph = self.graphs[-1]
        if field == "stack_traces":
            payload = this_process_paths(payload)
        if field == "cache":
            graph.cache = _CACHE_ANSWERS[name]
            with contextlib.suppress(ValueError, AttributeError):
                graph.graph_key = str(json.loads(payload).get("key") or "")
            if graph.graph_key and graph.cache == "miss":
                remember(graph.graph_key, graph.no_fusion)
            elif graph.graph_key and graph.cache == "hit" and not graph.no_fusion:
                graph.no_fusion = recalled(graph.graph_key)
        else:
            setattr(graph, field, payload)


_NO_FUSION = msgspec.json.Decoder(list[NoFusion])


def _remembered(key: str) -> Path:
    from torch._inductor.runtime.cache_dir_utils import cache_dir

    return Path(cache_dir()) / "fusionviz_no_fusion" / (re.sub(r"[^\w.-]", "_", key)[:200] + ".json")


def remember(key: str, refused: list[NoFusion]) -> None:
    """Keep a graph's refused fusions beside Inductor's cache under the graph's FX-graph key, for a later hit
    (which replays the generated code, not the scheduling). A cache that cannot be written keeps none."""
    with contextlib.suppress(OSError):
        path = _remembered(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_bytes(msgspec.json.encode(refused))
        os.replace(temporary, path)


def recalled(key: str) -> list[NoFusion]:
    """The refused fusions a miss of the graph `key` logged (`remember`); none where none were kept."""
    try:
        return _NO_FUSION.decode(_remembered(key).read_bytes())[:MAX_NO_FUSION]
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return []


def no_fusion(record: logging.LogRecord) -> NoFusion | None:
    """A record of Inductor's `fusion` log as a refused fusion, where it is one (a `WhyNoFuse`: the other
    messages, rounds and candidates, are None), with each side's post-grad nodes, buffers and loop sizes read
    from the graph being scheduled (`V.graph`), each empty where Inductor does not have it as expected."""
    why = record.msg
    name1, name2, reason = (getattr(why, a, None) for a in ("name1", "name2", "reason"))
    if not (isinstance(name1, str) and isinstance(name2, str) and isinstance(reason, str)):
        return None
    try:
        text = str(why).removeprefix(f"cannot fuse {name1} with {name2}: ")
    except (TypeError, ValueError):
        text = reason
    sides = [_side(name1), _side(name2)]
    return NoFusion(node1=name1, node2=name2, reason=reason[:300], text=text[:300],
                    post_grad1=sides[0][0], buffers1=sides[0][1], loops1=sides[0][2],
                    post_grad2=sides[1][0], buffers2=sides[1][1], loops2=sides[1][2])


def _side(name: str) -> tuple[list[str], list[str], list[str]]:
    """A scheduler node's post-grad nodes, buffers and loop sizes, from the operations its name joins."""
    from torch._inductor.virtualized import V

    try:
        table = V.graph.name_to_op
    except (AttributeError, AssertionError, TypeError):
        return [], [], []
    ops: list[Any] = []
    part = ""
    for token in name.split("_"):  # an operation's own name may hold "_" (a subgraph's `subgraph_op0`)
        part = f"{part}_{token}" if part else token
        if part in table:
            ops.append(table[part])
            part = ""
    post_grad = list(dict.fromkeys(str(o.name) for op in ops for o in getattr(op, "origins", ()) or ()
                                   if hasattr(o, "name")))
    buffers, loops = [], []
    for op in ops:
        with contextlib.suppress(AttributeError, TypeError, NotImplementedError, AssertionError):
            buffers += [str(b.get_name()) for b in op.get_outputs()]
        with contextlib.suppress(AttributeError, TypeError, NotImplementedError, AssertionError):
            size = "×".join(str(s) for s in op.get_size()) or "1"
            reduced = "×".join(str(s) for s in op.get_reduction_size())
            loops.append(f"{size} ÷ {reduced}" if reduced else size)
    return sorted(post_grad), list(dict.fromkeys(buffers)), list(dict.fromkeys(loops))


def this_process_paths(stack_traces: str) -> str:
    """Inductor's kernel stack traces (the JSON of `inductor_provenance_tracking_kernel_stack_traces`) with every
    frame's file as this process loaded it (`records.stacks.rebased`): on an FX-graph cache hit Inductor replays
    the traces of the process that compiled first, which named its own checkout's `zoo.py` and its own
    environment's library files. Left as it came where it is not that JSON."""
    try:
        traces = json.loads(stack_traces)
    except ValueError:
        return stack_traces
    if not isinstance(traces, dict):
        return stack_traces
    files = module_files(dict(sys.modules))
    return json.dumps({handle: [rebased(t, files) if isinstance(t, str) else t for t in texts]
                       if isinstance(texts, list) else texts for handle, texts in traces.items()})


_FRAME = re.compile(r'File "([^"]+)", line (\d+)')
_ROOT = re.compile(r"^L\['self'\]\.?")


def graph_nodes(graphs: list[torch.fx.GraphModule]) -> list[GraphNode]:
    """The call nodes of Dynamo's captured graphs, with the module each ran in and the user's line."""
    nodes = []
    for index, gm in enumerate(graphs):
        for node in gm.graph.nodes:
            if node.op not in ("call_function", "call_method", "call_module"):
                continue
            stack = node.meta.get("nn_module_stack") or {}
            module = module_path(list(stack.values())[-1][0]) if stack else ""
            frames = _FRAME.findall(node.meta.get("stack_trace") or "")
            source = f"{frames[-1][0]}:{frames[-1][1]}" if frames else ""
            op = node.target if isinstance(node.target, str) else getattr(node.target, "__name__", str(node.target))
            nodes.append(GraphNode(graph=index, name=node.name, op=op, module=module, source=source,
                                   code=_code(source)))
    return nodes


def module_path(dynamo_path: str) -> str:
    """Dynamo's module path (`L['self'].net.1`, older `L['self']._modules['net'][1]`) as named_modules names
    it (`net.1`); "" for the model itself."""
    path = _ROOT.sub("", dynamo_path)
    path = re.sub(r"\._modules\['([^']+)'\]|^_modules\['([^']+)'\]", lambda m: "." + (m.group(1) or m.group(2)), path)
    return re.sub(r"\[(\d+)\]", r".\1", path).strip(".")


SOURCE_MARK = "fusionviz.source "
_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep


class _SourceMarks(TorchFunctionMode):
    """Wraps each top-level torch call made inside the model in a profiler range `fusionviz.source <module> @
    <file:line>`; calls made outside the model's modules (the loss, `backward`) are left unmarked."""

    def __init__(self, modules: list[str]) -> None:
        super().__init__()
        self.modules = modules  # the module path stack, kept by the forward hooks

    def __torch_function__(self, func: Callable[..., Any], types: Any, args: Any = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        if not self.modules:
            return func(*args, **(kwargs or {}))
        with torch.profiler.record_function(f"{SOURCE_MARK}{self.modules[-1]} @ {_user_line()}"):
            return func(*args, **(kwargs or {}))


def _user_line() -> str:
    """The innermost caller outside torch and this module: the user's line that made the call."""
    frame = sys._getframe(1)
    while frame is not None:
        file = frame.f_code.co_filename
        if not file.startswith(_TORCH_DIR) and file != __file__:
            return f"{file}:{frame.f_lineno}"
        frame = frame.f_back  # type: ignore[assignment]
    return ""


@contextlib.contextmanager
def _marking(model: torch.nn.Module) -> Iterator[None]:
    paths = {id(m): name for name, m in model.named_modules()}
    stack: list[str] = []

    def enter(module: torch.nn.Module, args: Any) -> None:
        stack.append(paths.get(id(module), type(module).__name__))

    def leave(module: torch.nn.Module, args: Any, output: Any) -> None:
        if stack:
            stack.pop()

    hooks = [torch.nn.modules.module.register_module_forward_pre_hook(enter),
             torch.nn.modules.module.register_module_forward_hook(leave)]
    try:
        with _SourceMarks(stack):
            yield
    finally:
        for hook in hooks:
            hook.remove()


def op_sources(model: torch.nn.Module, step: Callable[[], None], device: torch.device) -> list[OpSource]:
    """Profile one marked iteration (after the timed and profiled ones: the marks cost time) and give each of
    its kernel rows, in launch order, the module and line of the op that launched it."""
    activities = [torch.profiler.ProfilerActivity.CPU]
    if device.type == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trace.json"
        with torch.profiler.profile(activities=activities) as prof:
            with _marking(model):
                step()
            if device.type == "cuda":
                torch.cuda.synchronize(device)
        prof.export_chrome_trace(str(path))
        trace = json.loads(path.read_text())
    return sources_of(trace)


def sources_of(trace: dict[str, Any]) -> list[OpSource]:
    """Each kernel row of a marked trace (one window), with its launching op's mark."""
    ops: dict[int, dict[str, Any]] = {}
    marks: dict[Any, list[tuple[float, float, str]]] = {}
    for e in trace.get("traceEvents", []):
        if e.get("ph") != "X":
            continue
        if e.get("cat") == "cpu_op" and isinstance((e.get("args") or {}).get("External id"), int):
            ops.setdefault(e["args"]["External id"], e)
        elif e.get("cat") == "user_annotation" and str(e.get("name", "")).startswith(SOURCE_MARK):
            marks.setdefault((e.get("pid"), e.get("tid")), []).append(
                (float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0)), e["name"].removeprefix(SOURCE_MARK)))
    for spans in marks.values():
        spans.sort()
    sources = []
    for row in parse_trace(trace).kernel_rows:
        op = ops.get(row.op_id)
        label = _mark_of(op, marks) if op is not None else ""
        module, _, source = label.partition(" @ ")
        sources.append(OpSource(name=row.name, launch_op=row.launch_op, module=module, source=source,
                                code=_code(source)))
    return sources


def _code(source: str) -> str:
    """The text of a "file:line" source line, as the worker reads it."""
    file, _, line = source.rpartition(":")
    return linecache.getline(file, int(line)).strip() if line.isdigit() else ""


def _mark_of(op: dict[str, Any], marks: dict[Any, list[tuple[float, float, str]]]) -> str:
    """The mark around an op event (marks of one thread do not nest: inside a marked call the mode is off)."""
    spans = marks.get((op.get("pid"), op.get("tid")), [])
    i = bisect.bisect_right(spans, (float(op["ts"]), float("inf"), "")) - 1
    if i >= 0 and spans[i][1] >= float(op["ts"]):
        return spans[i][2]
    return ""
