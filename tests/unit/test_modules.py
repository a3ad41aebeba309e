"""Kernel time per module, on hand-made runs of a two-block model (`b.0`, `b.1`) whose expected figures are written
as arithmetic: which module each kernel counts for, the sums, the tree and the icicle's bars."""

from __future__ import annotations

import json

import pandas as pd

from fusionviz.analysis.modules import (
    COPIES,
    MODULE_COLUMNS,
    OUTSIDE,
    TREE_COLUMNS,
    UNKNOWN,
    ancestors,
    kernel_modules,
    kind_of,
    module_headline,
    module_kinds,
    module_table,
    module_tree,
)
from fusionviz.analysis.report import analyse
from fusionviz.charts.modules import CHANGES, icicle_bars, module_figure
from fusionviz.records.session import GraphNode, GraphProvenance, OpSource
from tests.unit.factories import k, run, session

# eager: per iteration, b.0.ln 10, b.0.fc 30, b.0.act 8, b.0's residual add 4, b.1.ln 10, the loss outside the
# forward 2 µs, and a Memcpy (not a kernel); the second iteration runs each kernel 2 µs longer.
EAGER_OPS = [("aten::layer_norm", "b.0.ln", 10), ("aten::addmm", "b.0.fc", 30), ("aten::gelu", "b.0.act", 8),
             ("aten::add", "b.0", 4), ("aten::layer_norm", "b.1.ln", 10), ("aten::sum", "", 2)]
EAGER = run("eager", [k(name, 50 * i, us + 2 * it, iteration=it, launch_op=name, op_id=i)
                      for it in (0, 1) for i, (name, _, us) in enumerate(EAGER_OPS)]
            + [k("Memcpy HtoD (Pageable -> Device)", 400, 3, iteration=it, kernel_class="memory") for it in (0, 1)])
EAGER.op_sources = [OpSource(name, name, module, "" if name == "aten::sum" else "/m.py:7", "")
                    for name, module, _ in EAGER_OPS]

# default: the LayerNorm alone (6), the GEMM (25), one kernel of GELU, the residual add and the next LayerNorm, which
# also recomputes b.0.ln's mean and writes a view at the model's level (5), a backward kernel (7) and the loss
# outside every compiled graph (1 µs).
NODES = [("layer_norm", "b.0.ln", "layer_norm"), ("linear", "b.0.fc", "linear"), ("gelu", "b.0.act", "gelu"),
         ("add", "b.0", "add"), ("layer_norm_1", "b.1.ln", "layer_norm"), ("view", "", "view")]
FORWARD = ("def call(self, args):\n    primals_1, = args\n"
           "    # [Provenance debug handles] triton_per_fused_layer_norm_0:1\n"
           "    # [Provenance debug handles] extern_kernels.addmm:2\n"
           "    # [Provenance debug handles] triton_per_fused_add_gelu_layer_norm_1:3\n")
BACKWARD = ("def call(self, args):\n    primals_1, tangents_1 = args\n"
            "    # [Provenance debug handles] triton_poi_fused_gelu_backward_2:1\n")
MAPPINGS = {"cppCodeToPost": {"triton_per_fused_layer_norm_0:1": ["var_mean"], "extern_kernels.addmm:2": ["addmm"],
                              "triton_per_fused_add_gelu_layer_norm_1:3": ["gelu", "add_1", "var_mean_1", "var_mean",
                                                                           "add_2"]},
            "postToPre": {"var_mean": ["layer_norm"], "addmm": ["linear"], "gelu": ["gelu"], "add_1": ["add"],
                          "var_mean_1": ["layer_norm_1"], "add_2": ["layer_norm_1", "view"]},
            "version": 2.0}
DEFAULT = run("default", [k("triton_per_fused_layer_norm_0", 0, 6), k("sm90_xmma_gemm_f32f32", 10, 25),
                          k("triton_per_fused_add_gelu_layer_norm_1", 40, 5),
                          k("triton_poi_fused_gelu_backward_2", 50, 7),
                          k("reduce_kernel", 60, 1, launch_op="aten::sum", op_id=9)])
DEFAULT.output_code = [FORWARD, BACKWARD]
DEFAULT.provenance = [GraphProvenance(output_code=0, node_mappings=json.dumps(MAPPINGS)),
                      GraphProvenance(output_code=1, node_mappings=json.dumps(
                          {"cppCodeToPost": {"triton_poi_fused_gelu_backward_2:1": ["mul"]}, "postToPre": {},
                           "version": 2.0}))]
DEFAULT.graph_nodes = [GraphNode(0, name, op, module, "/m.py:7") for name, module, op in NODES]


def test_each_kernel_counts_for_the_module_of_the_last_op_it_computes() -> None:
    assert kernel_modules(EAGER) == ["b.0.ln", "b.0.fc", "b.0.act", "b.0", "b.1.ln", OUTSIDE] * 2 + [None, None]
    # the fused kernel writes b.1.ln's output (b.0.ln recomputed, the model's view aside); backward and the loss
    # are outside the forward
    assert kernel_modules(DEFAULT) == ["b.0.ln", "b.0.fc", "b.1.ln", OUTSIDE, OUTSIDE]


def test_the_module_table_adds_up_to_each_mode_s_kernel_time_per_iteration() -> None:
    table = module_table([EAGER, DEFAULT])
    assert list(table.columns) == list(MODULE_COLUMNS)
    eager = table[table["mode"] == "eager"].set_index("module")
    assert eager.kernel_us.to_dict() == {"b.0.ln": (10 + 12) / 2, "b.0.fc": (30 + 32) / 2, "b.0.act": (8 + 10) / 2,
                                         "b.0": (4 + 6) / 2, "b.1.ln": (10 + 12) / 2, OUTSIDE: (2 + 4) / 2}
    assert set(eager.kernels) == {1.0}
    eager_total = (10 + 30 + 8 + 4 + 10 + 2) + 6 * 2 / 2  # per iteration: the mean of 64 and 76 µs
    assert eager.kernel_us.sum() == eager_total and abs(eager.share.sum() - 1) < 1e-12
    default = table[table["mode"] == "default"].set_index("module")
    assert default.kernel_us.to_dict() == {"b.0.ln": 6, "b.0.fc": 25, "b.1.ln": 5, OUTSIDE: 7 + 1}
    assert default.loc[OUTSIDE, "kernels"] == 2 and default.share["b.0.fc"] == 25 / 44
    assert list(table["mode"]) == ["eager"] * 6 + ["default"] * 4  # eager first, each in model order
    assert list(default.index) == ["b.0.ln", "b.0.fc", "b.1.ln", OUTSIDE]


def test_a_run_without_records_is_one_unknown_module() -> None:
    bare = run("eager", [k("aten::mul", 0, 3), k("aten::add", 5, 2)])
    table = module_table([bare])
    assert table[["module", "kernel_us", "kernels", "share"]].to_dict("records") == [
        {"module": UNKNOWN, "kernel_us": 5.0, "kernels": 2.0, "share": 1.0}]


def test_the_tree_sums_every_module_under_its_ancestors() -> None:
    assert ancestors("b.0.ln") == ["", "b", "b.0", "b.0.ln"] and ancestors(OUTSIDE) == ["", OUTSIDE]
    tree = module_tree(module_table([EAGER, DEFAULT]), "tiny")
    assert list(tree.columns) == list(TREE_COLUMNS)
    eager = tree[tree["mode"] == "eager"].set_index("module")
    assert eager.loc["b.0", "kernel_us"] == 11 + 31 + 9 + 5 and eager.loc["b.0", "own_us"] == 5
    assert eager.loc["b", "kernel_us"] == 56 + 11 and eager.loc["b", "own_us"] == 0
    assert eager.loc["", "kernel_us"] == 70 and eager.loc["", "label"] == "tiny" and pd.isna(eager.loc["", "parent"])
    assert eager.loc["b.0", ["parent", "label", "depth"]].tolist() == ["b", "b.0", 2]
    assert eager.loc[OUTSIDE, ["parent", "depth", "label"]].tolist() == ["", 1, OUTSIDE]
    assert eager.loc["b.1", "kernels"] == 1 and eager.loc["", "kernels"] == 6


def test_the_icicle_lays_children_out_in_model_order_from_their_parent_s_start() -> None:
    bars = icicle_bars(module_tree(module_table([EAGER, DEFAULT]), "tiny"), ["eager", "default"])
    eager = bars[bars["mode"] == "eager"].set_index("module")
    assert eager.loc["b.0.ln", "start_us"] == 0 and eager.loc["b.0.fc", "start_us"] == 11
    assert eager.loc["b.0.act", "start_us"] == 11 + 31 and eager.loc["b.1", "start_us"] == 56
    assert eager.loc[OUTSIDE, "start_us"] == 56 + 11 and set(eager.change) == {""}
    default = bars[bars["mode"] == "default"].set_index("module")
    assert default.loc["b.0.ln", "change"] == CHANGES[1][0]  # 6 of eager's 11 µs
    assert default.loc["b.0.fc", "change"] == CHANGES[1][0] and default.loc["b.1.ln", "change"] == CHANGES[0][0]
    assert default.loc[OUTSIDE, "change"] == CHANGES[2][0]  # 8 µs against eager's 3
    assert default.loc["b.0", "eager_us"] == 56 and default.loc["b.0", "kernel_us"] == 31
    figure = module_figure(module_tree(module_table([EAGER, DEFAULT]), "tiny"), "default", "tiny")
    assert {t.type for t in figure.data} == {"bar"} and len(figure.data) == 1 + 3  # eager, and three changes


def test_the_headline_says_where_the_mode_saved_most_and_where_it_lost() -> None:
    table = module_table([EAGER, DEFAULT])
    assert kind_of("h.0.mlp.act", {"h", "h.0", "h.0.mlp"}) == "h.*.mlp.act" and kind_of("h.0", {"h.0"}) == "h.*"
    assert kind_of("layer3.1.conv2", {"layer3.1"}) == "layer3.*.conv2" and kind_of("net.2", {"net"}) == "net.2"
    kinds = module_kinds(table, "default").set_index("kind")
    assert kinds.loc["b.*.ln", ["eager_us", "mode_us", "modules"]].tolist() == [22, 11, 2]
    assert list(kinds.index) == ["b.*.ln", "b.*.act", "b.*.fc", "b.*", OUTSIDE]  # saved 11, 9, 6, 5 and -5 µs
    headline = module_headline(table, "default")
    assert headline.text == "default: b.*.ln saved most, 22 µs → 11 µs" and not headline.problems()
    assert headline.mechanism == f"{OUTSIDE} grew, 3 µs → 8 µs."
    assert headline.details[0] == "Kernel time per iteration: 70 µs in eager, 44 µs in default."
    assert module_headline(module_table([EAGER]), "default").text.startswith("No module-by-module record")


def test_the_report_keeps_one_module_table_for_its_views() -> None:
    report = analyse(session(EAGER, DEFAULT))
    assert report.modules is report.modules and set(report.modules["mode"]) == {"eager", "default"}


def test_a_cuda_graph_s_input_copy_and_eager_replayed_as_one_graph() -> None:
    copy = k("multi_tensor_apply_kernel", 0, 2, launch_op="aten::_foreach_copy_", op_id=3)
    copy.graph = "fx-graph-key"  # launched inside the compiled graph's call, by no handle of its wrapper
    replayed = run("reduce-overhead", [copy, *(k(r.name, 10 + r.start_us, r.dur_us) for r in DEFAULT.kernels[:3])])
    replayed.output_code, replayed.provenance, replayed.graph_nodes = (DEFAULT.output_code, DEFAULT.provenance,
                                                                        DEFAULT.graph_nodes)
    assert kernel_modules(replayed) == [COPIES, "b.0.ln", "b.0.fc", "b.1.ln"]
    graphed = run("eager_cuda_graph", [k(name, 50 * i, us) for i, (name, _, us) in enumerate(EAGER_OPS)])
    table = module_table([EAGER, graphed])
    assert table[table["mode"] == "eager_cuda_graph"].set_index("module").kernel_us.to_dict() == {
        module: us for _, module, us in EAGER_OPS if module} | {OUTSIDE: 2}
