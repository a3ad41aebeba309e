"""The diff table of two runs: what each compiled kernel replaced, from Inductor's records where the session kept
them (the H200 mlp fp32 session, schema 3) and by names where it did not (branching bf16, recorded before)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fusionviz.analysis.kernel_diff import DIFF_COLUMNS, kernel_diff
from fusionviz.analysis.kernel_tables import iteration_kernels
from fusionviz.analysis.report import analyse
from fusionviz.records.files import open_path
from fusionviz.records.trace_pair import pair_session
from tests.unit.factories import k, run, session

SESSIONS = Path(__file__).parents[2] / "sessions"
DATA = Path(__file__).parents[1] / "data"
# The columns the table had before it said what each kernel replaced: downloads keep them, in this order.
BY_NAME = ["name", "kernel_class", "per_iteration_a", "us_per_iteration_a", "per_iteration_b", "us_per_iteration_b",
           "count_diff", "us_diff"]


def test_mlp_bias_relu_kernels_replaced_the_gemms_bias_and_the_relus_by_provenance() -> None:
    opened = open_path(SESSIONS / "h100_mlp_512x256_float32.json.gz")
    eager, default = opened.run("eager"), opened.run("default")
    diff = kernel_diff(eager, default)
    assert diff.kind == "provenance"
    assert list(diff.table.columns) == list(DIFF_COLUMNS) and list(DIFF_COLUMNS)[:8] == BY_NAME
    rows = diff.table.set_index("name")
    fused = rows.loc["triton_poi_fused_addmm_relu_0"]
    # Two Linear+ReLU pairs: each bias add went into it (the GEMM itself into the library mm, hence shared).
    assert fused.replaced == "aten::addmm ×2 (shared), aten::clamp_min ×2"
    ek = iteration_kernels(eager)
    taken = ek[ek.launch_op.isin(["aten::addmm", "aten::clamp_min"])].iloc[:4]  # the last addmm stays a GEMM
    assert list(taken.launch_op) == ["aten::addmm", "aten::clamp_min"] * 2
    assert fused.replaced_per_iteration == 4
    assert fused.replaced_us_per_iteration == pytest.approx(taken.dur_us.sum())
    relu = rows[rows.kernel_class == "aten"].iloc[0]
    assert relu.per_iteration_b == 0 and relu.ended_in == "triton_poi_fused_addmm_relu_0 ×2"
    assert relu.replaced == "" and relu.replaced_per_iteration == 0
    assert diff.table.count_diff.sum() == pytest.approx(
        default.summary.kernels_per_iteration - eager.summary.kernels_per_iteration)
    pair = analyse(pair_session(eager, default, "eager", "default")).pair_diff
    assert pair is not None and pair.kind == "provenance"
    assert pair.table.replaced.tolist() == diff.table.replaced.tolist()


def test_a_session_recorded_before_provenance_says_its_links_are_by_names() -> None:
    opened = open_path(DATA / "h200_busy_graph_break_512x256_bfloat16.json.gz")  # schema 2, 2026-11-30
    diff = kernel_diff(opened.run("eager"), opened.run("default"))
    assert diff.kind == "names"
    rows = diff.table.set_index("name")
    assert rows.loc["triton_poi_fused_add_relu_1", "replaced"] == "aten::add ×1, aten::clamp_min ×1"


def test_hand_made_runs_by_names_and_a_pair_diff_only_for_two_runs() -> None:
    eager = run("eager", [k("gemm", 0, 10, ops=("addmm",), op_id=1, launch_op="aten::addmm"),
                          k("relu_kernel", 20, 5, ops=("relu",), op_id=2, launch_op="aten::relu"),
                          k("add_kernel", 40, 4, ops=("add",), op_id=3, launch_op="aten::add")])
    fused = run("default", [k("gemm", 0, 10, ops=("mm",), op_id=4, launch_op="aten::mm", kernel_class="gemm"),
                            k("triton_poi_fused_add_relu_0", 15, 5, ops=("add", "relu"))])
    diff = kernel_diff(eager, fused)
    rows = diff.table.set_index("name")
    assert diff.kind == "names"
    assert rows.loc["triton_poi_fused_add_relu_0", "replaced"] == "aten::relu ×1, aten::add ×1"
    assert rows.loc["triton_poi_fused_add_relu_0", "replaced_us_per_iteration"] == 5 + 4
    assert rows.loc["gemm", "replaced"] == "aten::addmm ×1" and rows.loc["gemm", "ended_in"] == "gemm ×1"
    assert analyse(session(eager)).pair_diff is None
    assert analyse(session(eager, fused)).pair_diff is not None
