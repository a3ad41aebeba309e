"""The plan diff (`analysis.plan_diff`) on hand-made runs: fusion groups that merged, split, appeared or
vanished, matched by Inductor's provenance records, by the fusion links against eager, or by names."""

from __future__ import annotations

import json
import math

from fusionviz.analysis.op_costs import Cost
from fusionviz.analysis.plan_diff import GROUP_COLUMNS, KERNEL_COLUMNS, RUN_COLUMNS, baseline, plan_diff
from fusionviz.records.session import GraphBreak, GraphNode, GraphProvenance, ModeRun, OpSource
from tests.unit.factories import k, run


def compiled(mode: str, kernels: list[tuple[str, tuple[str, ...]]], dur: float = 10.0) -> ModeRun:
    """A compiled run of one graph whose kernels (name, the pre-grad nodes it computes) launch in order, each
    `dur` µs, with Inductor's records saying what each computes."""
    handles = [f"{name}:{i + 1}" for i, (name, _) in enumerate(kernels)]
    made = run(mode, [k(name, 20.0 * i, dur) for i, (name, _) in enumerate(kernels)], graphs=1)
    made.recompiles = 0
    made.output_code = ["".join(f"    # [Provenance debug handles] {h}\n" for h in handles)]
    nodes = list(dict.fromkeys(n for _, computes in kernels for n in computes))
    made.provenance = [GraphProvenance(output_code=0, node_mappings=json.dumps(
        {"cppCodeToPost": {h: list(computes) for h, (_, computes) in zip(handles, kernels, strict=True)},
         "postToPre": {n: [n] for n in nodes}, "version": 2.0}))]
    made.graph_nodes = [GraphNode(0, n, n, "", "/m.py:3", "") for n in nodes]
    return made


def test_two_kernels_fused_into_one_read_as_merged() -> None:
    a = compiled("default", [("triton_poi_fused_mul_0", ("mul",)), ("triton_poi_fused_add_1", ("add",))])
    b = compiled("default+freezing", [("triton_poi_fused_add_mul_0", ("mul", "add"))])
    diff = plan_diff(a, b)
    print(diff.groups.to_string())
    assert list(diff.groups.columns) == list(GROUP_COLUMNS) and list(diff.kernels.columns) == list(KERNEL_COLUMNS)
    assert list(diff.runs.columns) == list(RUN_COLUMNS)
    assert diff.links == "provenance"
    group = diff.groups.iloc[0]
    assert len(diff.groups) == 1 and group.change == "merged"
    assert (group.kernels_a, group.kernels_b, group.launches_a, group.launches_b) == (2, 1, 2, 1)
    assert (group.us_a, group.us_b, group.us_diff) == (10.0 + 10.0, 10.0, 10.0 - 20.0)
    assert group.computes == "mul, add"
    assert diff.headline.text == "default+freezing against default: 1 group merged, 1 kernel fewer"
    assert diff.headline.problems() == []
    b_kernel = diff.kernels[diff.kernels.side == "B"].iloc[0]
    assert b_kernel.counterparts == "triton_poi_fused_mul_0, triton_poi_fused_add_1"


def test_one_kernel_cut_in_two_reads_as_split() -> None:
    a = compiled("default", [("triton_poi_fused_add_mul_0", ("mul", "add"))])
    b = compiled("max-autotune", [("triton_poi_fused_mul_0", ("mul",)), ("triton_poi_fused_add_1", ("add",))])
    diff = plan_diff(a, b)
    print(diff.groups.to_string())
    assert list(diff.groups.change) == ["split"]
    assert (diff.groups.kernels_a.iloc[0], diff.groups.kernels_b.iloc[0]) == (1, 2)
    assert diff.headline.text == "max-autotune against default: 1 group split, 1 kernel more"


def test_a_group_of_the_same_kernels_on_both_sides_is_kept_not_regrouped() -> None:
    """A GEMM and its epilogue compiled again alike (the graph break's model with capture_scalar_outputs on an
    H100: every group read "regrouped", the headline "3 groups regrouped" for an unchanged plan)."""
    kernels = [("sm80_xmma_gemm_f32f32", ("linear",)), ("sm80_xmma_gemm_f32f32", ("linear",)),
               ("triton_poi_fused_addmm_gelu_0", ("linear", "gelu"))]
    diff = plan_diff(compiled("default", kernels), compiled("default+capture_scalar_outputs", kernels))
    assert list(diff.groups.change) == ["kept"]
    assert diff.headline.text == ("default+capture_scalar_outputs against default: same fusion groups, "
                                  "as many kernels")


def test_new_work_appears_and_lost_work_vanishes_and_the_rest_is_kept() -> None:
    a = compiled("default", [("triton_poi_fused_mul_0", ("mul",)), ("triton_poi_fused_relu_1", ("relu",))])
    b = compiled("other", [("triton_poi_fused_mul_0", ("mul",)), ("triton_poi_fused_sin_1", ("sin",))], dur=4.0)
    diff = plan_diff(a, b)
    print(diff.groups.to_string())
    assert list(diff.groups.change) == ["kept", "appeared", "vanished"]  # B's sin after the group launched before
    appeared, vanished = diff.groups.iloc[1], diff.groups.iloc[2]
    assert (appeared.kernels_a, appeared.kernels_b, appeared.us_a, appeared.us_b) == (0, 1, 0.0, 4.0)
    assert (vanished.kernels_a, vanished.kernels_b, vanished.us_a, vanished.us_b) == (1, 0, 10.0, 0.0)
    assert list(diff.changed().change) == ["appeared", "vanished"]
    assert diff.headline.text == "other against default: 1 group appeared, 1 group vanished, as many kernels"
    assert diff.headline.mechanism.startswith("Most changed: ")


def test_a_kernel_of_another_name_for_the_same_work_is_replaced_not_new() -> None:
    a = compiled("default", [("triton_poi_fused_mul_0", ("mul",))])
    b = compiled("other", [("triton_poi_fused_mul_7", ("mul",))])
    assert list(plan_diff(a, b).groups.change) == ["replaced"]


def test_bytes_are_summed_where_every_kernel_s_are_known() -> None:
    a = compiled("default", [("triton_poi_fused_mul_0", ("mul",)), ("triton_poi_fused_add_1", ("add",))])
    b = compiled("other", [("triton_poi_fused_add_mul_0", ("mul", "add"))])
    diff = plan_diff(a, b, [Cost(100, 100, 200, None, "inductor"), Cost(100, 100, 200, None, "inductor")],
                     [None])
    assert diff.groups.bytes_a.iloc[0] == 200 + 200 and math.isnan(diff.groups.bytes_b.iloc[0])
    figures = diff.runs.set_index("quantity")
    assert figures.at["bytes per iteration", "a"] == 400 and math.isnan(figures.at["bytes per iteration", "b"])


def test_eager_against_compiled_uses_the_fusion_links() -> None:
    eager = run("eager", [k("aten::mul", 0, 10, ops=("mul",), op_id=1, launch_op="aten::mul"),
                          k("aten::add", 20, 10, ops=("add",), op_id=2, launch_op="aten::add")])
    eager.op_sources = [OpSource(op, op, "", "/m.py:3", "") for op in ("aten::mul", "aten::add")]
    fused = compiled("default", [("triton_poi_fused_add_mul_0", ("mul", "add"))])
    diff = plan_diff(eager, fused)
    print(diff.groups.to_string())
    assert diff.links == "provenance"
    assert list(diff.groups.change) == ["merged"] and diff.groups.launches_a.iloc[0] == 2
    figures = diff.runs.set_index("quantity")
    assert math.isnan(figures.at["graphs", "a"]) and figures.at["graphs", "b"] == 1


def test_runs_without_records_are_matched_by_names_and_say_so() -> None:
    a = run("default", [k("triton_poi_fused_mul_0", 0, 10), k("triton_poi_fused_add_1", 20, 10)], graphs=1)
    b = run("other", [k("triton_poi_fused_mul_0", 0, 10), k("triton_poi_fused_add_mul_1", 20, 10)], graphs=2)
    b.graph_breaks = [GraphBreak("a print", "m.py:9 in forward: print(x)")]
    diff = plan_diff(a, b)
    print(diff.groups.to_string())
    assert diff.links == "names"
    assert list(diff.groups.change) == ["kept", "appeared", "vanished"]
    assert diff.headline.mechanism.startswith("By kernel names: ")
    assert any("names in launch order" in d for d in diff.headline.details)
    assert list(diff.breaks.side) == ["B"]
    figures = diff.runs.set_index("quantity")
    assert (figures.at["graphs", "a"], figures.at["graphs", "b"], figures.at["graph breaks", "b"]) == (1, 2, 1)


def test_a_compiled_mode_is_set_against_default_and_default_against_eager() -> None:
    runs = [run("eager", []), compiled("default", []), compiled("max-autotune", [])]
    assert [baseline(runs, m) for m in ("default", "max-autotune", "eager")] == ["eager", "default", None]
