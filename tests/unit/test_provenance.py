"""Launches matched to Inductor's kernel handles, and links from provenance, on hand-made runs whose records
have the shape torch 2.13 writes (checked against real CPU compiles in tests/integration/test_provenance.py)."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec

from fusionviz.analysis.kernel_tables import iteration_kernels, kernel_table
from fusionviz.analysis.links import run_links
from fusionviz.analysis.provenance import compiled_graphs, iteration_provenance, iteration_sources, kernel_provenance
from fusionviz.analysis.report import analyse
from fusionviz.analysis.separations import separations
from fusionviz.analysis.source_view import source_view
from fusionviz.charts.collapse import collapse_figure, collapse_layout
from fusionviz.charts.views import view_caption, view_figure, view_problem
from fusionviz.cli.inspection import inspect_report
from fusionviz.records.kernels import KernelClass, KernelRow
from fusionviz.records.session import GraphBreak, GraphNode, GraphProvenance, OpSource, Session
from tests.unit.factories import collapse_of, k, run, session

ZOO = "/src/zoo.py"
MLP_HANDLES = ["extern_kernels.addmm:1", "cpp_fused_relu_0:2", "extern_kernels.addmm:3", "cpp_fused_relu_0:4",
               "extern_kernels.addmm:5"]


def wrapper(handles: list[str], args: str = "arg0_1, arg1_1") -> str:
    """A generated module as Inductor writes it: each call under a comment naming its handle."""
    calls = "".join(f"        # [Provenance debug handles] {h}\n        {h.split(':')[0]}(buf0)\n" for h in handles)
    return f"class Runner:\n    def call(self, args):\n        {args} = args\n        args.clear()\n{calls}"


def mappings(post: dict[str, list[str]], pre: dict[str, list[str]]) -> str:
    return json.dumps({"cppCodeToPost": post, "postToPre": pre, "version": 2.0})


def traces(handles: list[str], line: int = 44) -> str:
    """Each handle's stack trace, as Inductor writes them: one frame of the user's forward, with its line."""
    return json.dumps({h: [f'  File "{ZOO}", line {line}, in forward\n    code\n'] for h in handles})


def mlp_provenance() -> GraphProvenance:
    post = {h: [f"{'addmm' if 'addmm' in h else 'relu'}_{h[-1]}"] for h in MLP_HANDLES}
    pre = {node[0]: [f"input_{h[-1]}"] for h, node in post.items()}
    return GraphProvenance(graph_key="key0", output_code=0, node_mappings=mappings(post, pre),
                           stack_traces=traces(MLP_HANDLES), cache="miss")


MLP_NODES = [GraphNode(graph=0, name=f"input_{i}", op="linear" if i % 2 else "relu", module=f"net.{i - 1}",
                       source=f"{ZOO}:44") for i in range(1, 6)]


def c(name: str, start: float, *, graph: str = "key0", iteration: int = 0, op_id: int = -1, launch_op: str = "",
      kernel_class: KernelClass | None = None) -> KernelRow:
    """A compiled kernel row, in the graph call `graph` names."""
    row = k(name, start, 1, iteration=iteration, op_id=op_id, launch_op=launch_op or name,
            kernel_class=kernel_class)
    return msgspec.structs.replace(row, graph=graph)


def mlp_compiled(iterations: int = 1) -> list[KernelRow]:
    rows = []
    for it in range(iterations):
        for i, name in enumerate(["aten::addmm", "cpp_fused_relu_0"] * 2 + ["aten::addmm"]):
            rows.append(c(name, 10 * i, iteration=it, op_id=100 * it + i))
    return rows


def compiled_mlp(iterations: int = 1):
    r = run("default", mlp_compiled(iterations))
    r.output_code, r.provenance, r.graph_nodes = [wrapper(MLP_HANDLES)], [mlp_provenance()], MLP_NODES
    return r


def eager_mlp():
    names = ["aten::linear", "aten::relu"] * 2 + ["aten::linear"]
    r = run("eager", [k(n, 10 * i, 5, op_id=i, launch_op=n) for i, n in enumerate(names)])
    r.op_sources = [OpSource(name=n, launch_op=n, module=f"net.{i}", source=f"{ZOO}:44") for i, n in enumerate(names)]
    return r


def test_two_launches_of_one_name_are_two_kernels_with_their_own_nodes() -> None:
    found = iteration_provenance(compiled_mlp())
    assert [p.handle for p in found] == MLP_HANDLES
    relus = [p for p in found if p.handle.startswith("cpp_fused_relu_0")]
    assert [p.pre_grad for p in relus] == [("input_2",), ("input_4",)]
    assert all(p.source == (f"{ZOO}:44",) and not p.backward for p in found)
    assert found[0].as_json() == {"handle": "extern_kernels.addmm:1", "post_grad": ["addmm_1"],
                                  "pre_grad": ["input_1"], "source": [f"{ZOO}:44"]}


def test_each_call_of_the_graph_starts_the_handles_over() -> None:
    compiled = compiled_mlp(iterations=3)
    assert [p.handle for p in kernel_provenance(compiled)] == MLP_HANDLES * 3
    assert [p.handle for p in iteration_provenance(compiled, 2)] == MLP_HANDLES


def test_kernels_of_one_op_call_share_its_handle_and_outside_ops_have_none() -> None:
    rows = [c("sm90_xmma_gemm", 0, op_id=1, launch_op="aten::addmm"),
            c("splitKreduce_kernel", 1, op_id=1, launch_op="aten::addmm"),
            c("cpp_fused_relu_0", 2, op_id=2), c("aten::sum", 3, graph="", op_id=3)]
    compiled = run("default", rows)
    compiled.output_code, compiled.provenance = [wrapper(MLP_HANDLES[:2])], [mlp_provenance()]
    found = kernel_provenance(compiled)
    assert [p and p.handle for p in found] == ["extern_kernels.addmm:1", "extern_kernels.addmm:1",
                                               "cpp_fused_relu_0:2", None]


def test_cuda_graph_replays_follow_the_wrapper_order() -> None:
    """reduce-overhead: the kernels replay from a CUDA graph, launched by cudaGraphLaunch, not by an op."""
    handles = ["extern_kernels.mm:1", "triton_poi_fused_addmm_relu_0:2", "extern_kernels.mm:3",
               "triton_poi_fused_addmm_relu_0:4"]
    rows = [c("multi_tensor_apply_kernel", 0, graph="", launch_op="aten::_foreach_copy_", op_id=9)]
    rows += [c(n, 1 + i, graph="", launch_op="cudaGraphLaunch", kernel_class="gemm" if "gemm" in n else None)
             for i, n in enumerate(["sm90_xmma_gemm_f32", "triton_poi_fused_addmm_relu_0"] * 2)]
    compiled = run("reduce-overhead", rows)
    compiled.output_code = [wrapper(handles)]
    compiled.provenance = [GraphProvenance(graph_key="key0", output_code=0, stack_traces=traces(handles))]
    assert [p and p.handle for p in kernel_provenance(compiled)] == [None, *handles]


def test_a_backward_graph_is_told_by_its_tangents_and_keeps_its_lines() -> None:
    """Inductor maps a backward graph's kernels to lines only (its node mappings hold just the version)."""
    compiled = compiled_mlp()
    bw_handles = ["cpp_fused_threshold_backward_0:1", "extern_kernels.mm:2"]
    compiled.output_code.append(wrapper(bw_handles, args="primals_3, relu, tangents_1"))
    compiled.provenance.append(GraphProvenance(graph_key="key1", output_code=1, node_mappings='{"version": 2.0}',
                                               stack_traces=traces(bw_handles)))
    compiled.kernels += [c("cpp_fused_threshold_backward_0", 60, graph="key1", op_id=7),
                         c("aten::mm", 61, graph="key1", op_id=8)]
    backward = [p for p in kernel_provenance(compiled) if p.backward]
    assert [p.handle for p in backward] == bw_handles
    assert all(p.pre_grad == () and p.source == (f"{ZOO}:44",) for p in backward)


def test_unreadable_records_leave_the_kernels_without_provenance_and_the_links_by_name() -> None:
    compiled = compiled_mlp()
    compiled.provenance = [GraphProvenance(graph_key="key0", output_code=0, node_mappings='{"cppCodeToPost": 3}')]
    assert compiled_graphs(compiled) == [] and set(kernel_provenance(compiled)) == {None}
    newer = compiled_mlp()
    newer.provenance[0].node_mappings = newer.provenance[0].node_mappings.replace('"version": 2.0', '"version": 3.0')
    assert run_links(eager_mlp(), compiled).kind == run_links(eager_mlp(), newer).kind == "names"


def test_the_two_relu_kernels_link_to_the_relus_of_two_modules() -> None:
    eager, compiled = eager_mlp(), compiled_mlp()
    links = run_links(eager, compiled)
    assert links.kind == "provenance"
    assert sorted(zip(links.table.eager_index, links.table.compiled_index, strict=True)) == [(i, i) for i in range(5)]
    modules = {int(ci): iteration_sources(eager)[int(ei)].module for ei, ci in
               zip(links.table.eager_index, links.table.compiled_index, strict=True)}
    assert (modules[1], modules[3]) == ("net.1", "net.3")


def test_an_eager_op_no_node_names_links_to_its_lines_only_kernel() -> None:
    """`table[idx]` is an `index` op in eager and a `getitem` node in the graph: its line ended in one kernel."""
    handles = ["extern_kernels.addmm:1", "cpp_fused_add_argmax_index_mul_relu_0:2"]
    post = {handles[0]: ["addmm"], handles[1]: ["argmax", "index", "mul", "add", "relu"]}
    pre = {"addmm": ["linear"], "argmax": ["idx"], "index": ["getitem"], "mul": ["mul"], "add": ["add"],
           "relu": ["relu"]}
    compiled = run("default", [c("aten::addmm", 0, op_id=1), c("cpp_fused_add_argmax_index_mul_relu_0", 1, op_id=2)])
    compiled.output_code = [wrapper(handles)]
    compiled.provenance = [GraphProvenance(graph_key="key0", output_code=0, node_mappings=mappings(post, pre))]
    compiled.graph_nodes = [GraphNode(0, "linear", "linear", "score", f"{ZOO}:128"),
                            GraphNode(0, "idx", "argmax", "", f"{ZOO}:128")] + [
        GraphNode(0, n, n, "", f"{ZOO}:129") for n in ("getitem", "mul", "add", "relu")]
    ops = [("aten::linear", "score", 128), ("aten::argmax", "", 128), ("aten::index", "", 129),
           ("aten::mul", "", 129), ("aten::add", "", 129), ("aten::relu", "", 129)]
    eager = run("eager", [k(n, i, 1, op_id=i, launch_op=n) for i, (n, _, _) in enumerate(ops)])
    eager.op_sources = [OpSource(n, n, m, f"{ZOO}:{line}") for n, m, line in ops]
    table = run_links(eager, compiled).table
    assert sorted(zip(table.eager_index, table.compiled_index, strict=True)) == [(0, 0)] + [(i, 1) for i in range(1, 6)]


def test_a_kernel_reading_a_result_through_views_is_not_linked_to_the_op_that_made_it() -> None:
    """The attention call reads the qkv GEMM's output through views: the GEMM links to its library call only."""
    handles = ["extern_kernels.addmm:1", "torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default:2"]
    post = {handles[0]: ["addmm"], handles[1]: ["_scaled_dot_product_flash_attention_for_cpu", "view_1", "select"]}
    pre = {"addmm": ["linear"], "view_1": ["linear"], "select": ["q"],
           "_scaled_dot_product_flash_attention_for_cpu": ["attn"]}
    compiled = run("default", [c("aten::addmm", 0, op_id=1),
                               c("aten::_scaled_dot_product_flash_attention_for_cpu", 1, op_id=2)])
    compiled.output_code = [wrapper(handles)]
    compiled.provenance = [GraphProvenance(graph_key="key0", output_code=0, node_mappings=mappings(post, pre))]
    compiled.graph_nodes = [GraphNode(0, "linear", "linear", "qkv", f"{ZOO}:88"),
                            GraphNode(0, "q", "getitem", "", f"{ZOO}:88"),
                            GraphNode(0, "attn", "scaled_dot_product_attention", "", f"{ZOO}:89")]
    ops = [("aten::linear", "qkv", 88), ("aten::scaled_dot_product_attention", "", 89)]
    eager = run("eager", [k(n, i, 1, op_id=i, launch_op=n) for i, (n, _, _) in enumerate(ops)])
    eager.op_sources = [OpSource(n, n, m, f"{ZOO}:{line}") for n, m, line in ops]
    table = run_links(eager, compiled).table
    assert sorted(zip(table.eager_index, table.compiled_index, strict=True)) == [(0, 0), (1, 1)]


def test_marked_rows_align_with_the_timed_rows_by_name() -> None:
    """The marked pass may hold a row the timed iteration does not (and the other way round)."""
    eager = eager_mlp()
    eager.kernels = [k(n, i, 1, iteration=it, op_id=i, launch_op=n) for it in range(2)
                     for i, n in enumerate(["aten::linear", "aten::copy_", "aten::relu"])]
    eager.op_sources = [OpSource("aten::linear", "aten::linear", "net.0", "a:1"),
                        OpSource("aten::fill_", "aten::fill_", "", ""),
                        OpSource("aten::relu", "aten::relu", "net.1", "a:2")]
    assert [s and s.module for s in iteration_sources(eager, 1)] == ["net.0", None, "net.1"]
    assert list(iteration_kernels(eager, 1).name) == ["aten::linear", "aten::copy_", "aten::relu"]


def test_runs_without_provenance_are_linked_by_names() -> None:
    eager, compiled = eager_mlp(), compiled_mlp()
    compiled.provenance = []
    assert run_links(eager, compiled).kind == "names"
    eager.op_sources, compiled.provenance = [], [mlp_provenance()]
    assert run_links(eager, compiled).kind == "names"


def test_sessions_of_schema_1_open_with_name_links() -> None:
    for path in sorted((Path(__file__).parents[1] / "data").glob("schema1_*.json.gz")):
        session = Session.load(path)
        eager, compiled = session.run("eager"), session.run("default")
        assert session.schema_version == 1 and compiled is not None and compiled.provenance == []
        assert run_links(eager, compiled).kind == "names", path.name


def graph_break_runs() -> tuple:
    """graph_break on the CPU as torch 2.13 records it: a GEMM and gelu+mean, a break at `.item()`, then
    `h * 2`, a GEMM and add+relu in a second graph."""
    first = ["extern_kernels.addmm:1", "cpp_fused_gelu_mean_0:2"]
    second = ["cpp_fused_mul_0:1", "extern_kernels.addmm:2", "cpp_fused_add_relu_1:3"]
    compiled = run("default", [c("aten::addmm", 0, op_id=1), c("cpp_fused_gelu_mean_0", 1, op_id=2),
                               c("cpp_fused_mul_0", 5, graph="key1", op_id=3),
                               c("aten::addmm", 6, graph="key1", op_id=4),
                               c("cpp_fused_add_relu_1", 7, graph="key1", op_id=5)])
    compiled.output_code = [wrapper(first), wrapper(second)]
    compiled.provenance = [
        GraphProvenance("key0", 0, mappings({first[0]: ["addmm"], first[1]: ["mul", "erf", "mean"]},
                                            {"addmm": ["linear"], "mul": ["h"], "erf": ["h"], "mean": ["mean"]})),
        GraphProvenance("key1", 1, mappings({second[0]: ["mul"], second[1]: ["addmm"], second[2]: ["add", "relu"]},
                                            {"mul": ["h"], "addmm": ["linear"], "add": ["add"], "relu": ["relu"]}))]
    compiled.graph_nodes = [GraphNode(0, "linear", "linear", "first", f"{ZOO}:141", "h = F.gelu(self.first(x))"),
                            GraphNode(0, "h", "gelu", "", f"{ZOO}:141", "h = F.gelu(self.first(x))"),
                            GraphNode(0, "mean", "mean", "", f"{ZOO}:142", "if h.mean().item() > 0:"),
                            GraphNode(1, "h", "mul", "", f"{ZOO}:143", "h = h * 2.0"),
                            GraphNode(1, "linear", "linear", "second", f"{ZOO}:146", "return ..."),
                            GraphNode(1, "add", "add", "", f"{ZOO}:146", "return ..."),
                            GraphNode(1, "relu", "relu", "", f"{ZOO}:146", "return ...")]
    compiled.graph_breaks = [GraphBreak(reason="Unsupported Tensor.item() call", user_frame=f"{ZOO}:142")]
    ops = [("aten::linear", "first", 141), ("aten::gelu", "", 141), ("aten::mean", "", 142), ("aten::mul", "", 143),
           ("aten::linear", "second", 146), ("aten::add", "", 146), ("aten::relu", "", 146)]
    eager = run("eager", [k(n, i, 10 + i, op_id=i, launch_op=n) for i, (n, _, _) in enumerate(ops)])
    eager.op_sources = [OpSource(n, n, m, f"{ZOO}:{line}", f"code {line}") for n, m, line in ops]
    return eager, compiled


def test_the_source_view_puts_each_line_beside_its_eager_time_and_its_kernels() -> None:
    eager, compiled = graph_break_runs()
    view = source_view(eager, compiled)
    assert list(view.lines.line) == [141, 142, 143, 146]
    assert list(view.lines.eager_kernels) == [2, 1, 1, 3]
    assert list(view.lines.eager_us) == [10 + 11, 12, 13, 14 + 15 + 16]
    assert list(view.lines.compiled) == [[0, 1], [1], [2], [3, 4]]
    assert view.lines.compiled_names[3] == ["aten::addmm", "cpp_fused_add_relu_1"]
    assert view.kernel_lines[1] == [f"{ZOO}:141", f"{ZOO}:142"]  # gelu and mean: one kernel, two lines
    assert view.lines.code[0] == "code 141"


def test_what_kept_neighbours_apart_is_read_off_the_records() -> None:
    eager, compiled = graph_break_runs()
    found = [(s.before.name, s.after.name, s.reason) for s in source_view(eager, compiled).separations]
    assert found == [("linear", "h", "library call"), ("mean", "h", "graph break"), ("h", "linear", "library call"),
                     ("linear", "add", "library call")]
    (broken,) = [s for s in source_view(eager, compiled).separations if s.reason == "graph break"]
    assert "Tensor.item()" in broken.detail and broken.after.graph == 1


def test_a_custom_op_and_a_data_dependent_index_are_named_as_such() -> None:
    handles = ["cpp_fused_tanh_0:1", "torch.ops.fusionviz.opaque_swish.default:2", "cpp_fused_sigmoid_1:3"]
    post = {handles[0]: ["tanh"], handles[1]: ["opaque_swish"], handles[2]: ["sigmoid"]}
    pre = {"tanh": ["tanh"], "opaque_swish": ["h"], "sigmoid": ["sigmoid"]}
    nodes = [GraphNode(0, n, n, "", f"{ZOO}:{i}") for i, n in enumerate(["tanh", "h", "sigmoid"])]
    kernels = compiled_graphs(_with(handles, post, pre, nodes))[0].kernels.values()
    assert [s.reason for s in separations(nodes, list(kernels), [])] == ["custom op", "custom op"]
    handles = ["triton_red_fused_addmm_argmax_0:1", "triton_poi_fused_add_index_mul_relu_1:2"]
    post = {handles[0]: ["argmax"], handles[1]: ["index", "mul"]}
    pre = {"argmax": ["idx"], "index": ["getitem"], "mul": ["mul"]}
    nodes = [GraphNode(0, n, op, "", f"{ZOO}:128") for n, op in (("idx", "argmax"), ("getitem", "getitem"),
                                                                  ("mul", "mul"))]
    kernels = compiled_graphs(_with(handles, post, pre, nodes))[0].kernels.values()
    assert [s.reason for s in separations(nodes, list(kernels), [])] == ["data-dependent index"]


def _with(handles: list[str], post: dict[str, list[str]], pre: dict[str, list[str]], nodes: list[GraphNode]):
    compiled = run("default", [])
    compiled.output_code = [wrapper(handles)]
    compiled.provenance = [GraphProvenance("key0", 0, mappings(post, pre))]
    compiled.graph_nodes = nodes
    return compiled


def test_the_collapse_and_the_report_say_where_their_links_come_from() -> None:
    eager, compiled = graph_break_runs()
    assert "links from Inductor's records" in collapse_figure(collapse_of(eager, compiled)).layout.title.text
    origins = collapse_layout(collapse_of(eager, compiled))[0].origin
    assert origins.iloc[0] == "aten::linear in first · zoo.py:141"
    assert origins.iloc[len(eager.kernels) + 1] == "gelu, mean · zoo.py:141, zoo.py:142"  # nodes by their op
    assert list(kernel_table(compiled).origin) == ["linear (first) · zoo.py:141", "gelu, mean · zoo.py:141, zoo.py:142",
                                                   "mul · zoo.py:143", "linear (second) · zoo.py:146",
                                                   "add, relu · zoo.py:146"]  # graph 1's `h` is a mul
    assert list(kernel_table(eager).origin)[:2] == ["aten::linear in first · zoo.py:141",
                                                    "aten::gelu in the model · zoo.py:141"]
    eager.op_sources = []
    assert "links matched by kernel names" in collapse_figure(collapse_of(eager, compiled)).layout.title.text
    report = inspect_report(analyse(session(*graph_break_runs(), device_kind="cpu")), "s")
    assert [r["links"] for r in report["runs"]] == ["provenance", "provenance"]
    eager_kernels, compiled_kernels = (r["kernels"] for r in report["runs"])
    assert {k["provenance"] for k in eager_kernels} == {None}
    assert compiled_kernels[1]["provenance"] == {"handle": "cpp_fused_gelu_mean_0:2", "post_grad": ["mul", "erf",
                                                 "mean"], "pre_grad": ["h", "mean"], "source": []}


def test_the_source_view_is_drawn_and_refused_for_sessions_without_lines() -> None:
    recorded = session(*graph_break_runs(), device_kind="cpu")
    fig = view_figure(analyse(recorded), "source")
    markers = [t for t in fig.data if getattr(t, "mode", None) == "markers"]
    assert [list(c[:2]) for c in markers[0].customdata][:3] == [[0, "aten::addmm"], [1, "cpp_fused_gelu_mean_0"],
                                                                 [1, "cpp_fused_gelu_mean_0"]]
    assert any("graph break" in a.text for a in fig.layout.annotations)
    assert "graph break (1)" in view_caption(analyse(recorded), "source")
    eager, compiled = graph_break_runs()
    eager.op_sources, compiled.provenance = [], []
    assert "recorded before" in view_problem(analyse(session(eager, compiled, device_kind="cpu")), "source")


def test_a_cache_hits_lines_are_read_in_the_file_this_run_traced() -> None:
    """Inductor replays the stack traces of the process that compiled first (docs/measurements/provenance/
    cpu_mlp.json.gz: /work/wt-visit-b/… against this run's /work/main/…): a line is moved to the traced file of
    that name, and left alone where no traced file has its name, or two do."""
    from fusionviz.analysis.provenance import _files_by_name, _this_checkout

    files = _files_by_name(["/work/main/fusionviz/measure/zoo.py:44", "/a/model.py:3", "/b/model.py:9"])
    assert _this_checkout("/work/wt-visit-b/fusionviz/measure/zoo.py:61", files) == \
        "/work/main/fusionviz/measure/zoo.py:61"
    assert _this_checkout("/c/model.py:5", files) == "/c/model.py:5"
    assert _this_checkout("/c/other.py:5", files) == "/c/other.py:5"
