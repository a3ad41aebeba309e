"""The trace reader and `inspect` on real traces recorded on the H200 (see tests/data/README.md)."""

import json
import re
from pathlib import Path

import pytest

from fusionviz.cli import main
from fusionviz.records.session_file import read_json_bytes
from fusionviz.records.trace import parse_trace

DATA = Path(__file__).parent.parent / "data"


def load(name: str):
    return parse_trace(read_json_bytes((DATA / name).read_bytes(), name))


def one_iteration(name: str) -> list[tuple[str, str]]:
    parsed = load(name)
    k = parsed.kernels[parsed.kernels.iteration == parsed.summary.representative_iteration]
    return [(re.sub(r"_\d+$", "_N", n) if n.startswith("triton_") else c, c) for n, c in
            zip(k.name, k.kernel_class, strict=True)]


def test_eager_runs_gemm_layer_norm_and_gelu_apart() -> None:
    parsed = load("h200_linear_ln_gelu_fp32_eager.trace.json.gz")
    assert parsed.device_kind == "cuda"
    assert parsed.summary.iterations == 3
    assert parsed.summary.kernels_per_iteration == 3
    k = parsed.kernels[parsed.kernels.iteration == 0]
    assert list(k.kernel_class) == ["gemm", "aten", "aten"]
    assert [ops for ops in k.fused_ops] == [["addmm"], ["native_layer_norm"], ["gelu"]]
    assert list(k.launch_op) == ["aten::addmm", "aten::native_layer_norm", "aten::gelu"]
    assert all(k.grid != "") and all(k.block != "")


def test_default_fuses_layer_norm_and_gelu() -> None:
    assert one_iteration("h200_linear_ln_gelu_fp32_default.trace.json.gz") == [
        ("gemm", "gemm"), ("triton_per_fused_gelu_native_layer_norm_N", "triton_reduction")]
    parsed = load("h200_linear_ln_gelu_fp32_default.trace.json.gz")
    fused = parsed.kernels[parsed.kernels.kernel_class == "triton_reduction"].iloc[0]
    assert fused.source_file.endswith(".py") and fused.graph
    assert "triton_per_fused_gelu_native_layer_norm_0" in parsed.kernel_files


def test_cuda_graph_replay_kernels_belong_to_their_step() -> None:
    parsed = load("h200_linear_ln_gelu_fp32_reduce-overhead.trace.json.gz")
    assert one_iteration("h200_linear_ln_gelu_fp32_reduce-overhead.trace.json.gz") == [
        ("copy", "copy"), ("gemm", "gemm"), ("triton_per_fused_gelu_native_layer_norm_N", "triton_reduction")]
    assert parsed.kernels.groupby("iteration").size().tolist() == [3, 3, 3]
    assert parsed.summary.launches_per_iteration < parsed.summary.kernels_per_iteration


def test_max_autotune_fuses_the_epilogue_into_triton_gemm_templates() -> None:
    assert one_iteration("h200_mlp_bf16_max-autotune.trace.json.gz") == [
        ("copy", "copy"), ("triton_tem_fused_addmm_relu_t_N", "triton_template"),
        ("triton_tem_fused_addmm_relu_t_N", "triton_template"), ("triton_tem_fused_addmm_relu_t_N", "triton_template")]


def test_inspect_json_of_a_plain_trace(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(DATA / "h200_linear_ln_gelu_fp32_default.trace.json.gz"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    (run,) = report["runs"]
    assert run["label"] == "h200_linear_ln_gelu_fp32_default.trace"
    assert (run["device"], run["iterations"], run["kernels_per_iteration"]) == ("cuda", 3, 2.0)
    assert 0 < run["gpu_busy_fraction"] < 1
    assert [k["class"] for k in run["kernels"]] == ["gemm", "triton_reduction"]
    assert run["kernels"][1]["fused_ops"] == ["gelu", "native_layer_norm"]
    assert all(k["duration_us"] > 0 for k in run["kernels"])


def test_inspect_json_of_a_recorded_session(capsys: pytest.CaptureFixture[str]) -> None:
    path = DATA / "schema1_3_h200_linear_ln_gelu_float32.json.gz"
    assert main(["inspect", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [r["label"] for r in report["runs"]] == [
        "eager", "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"]
    assert report["runs"][0]["kernels_per_iteration"] == 3
    assert report["runs"][1]["kernels_per_iteration"] == 2


def test_inspect_refuses_other_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"hello": 1}')
    assert main(["inspect", str(path)]) == 2
    assert "neither a fusionviz session nor a torch.profiler trace" in capsys.readouterr().err


def test_a_recorded_session_is_read_again_with_memory_operations_apart(capsys: pytest.CaptureFixture[str]) -> None:
    # Recorded counting each iteration's three `Memset (Device)` (cuBLAS and cuDNN-attention workspaces) as
    # kernels: 13, 12 and 13. Opening the file reads the kept traces again: they are memory operations.
    assert main(["inspect", str(DATA / "schema1_6_h200_transformer_block_bfloat16.json.gz"), "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert [(r["kernels_per_iteration"], r["memory_ops_per_iteration"]) for r in runs] == [
        (13 - 3, 3), (12 - 3, 3), (13 - 3, 3)]
    assert [len(r["kernels"]) for r in runs] == [10, 9, 10] and all(len(r["memory_ops"]) == 3 for r in runs)
    assert all(r["steps"] == [len(r["kernels"])] * 3 and r["excluded_kernels"] == 0 for r in runs)


def test_a_real_graph_break_is_marked_once_per_iteration() -> None:
    from fusionviz.charts.timeline_layout import break_markers, timeline_bars
    from fusionviz.records.files import open_file

    path = DATA / "schema1_7_h200_graph_break_float32.json.gz"
    session = open_file(path.read_bytes(), path.name)
    default = session.run("default")
    assert default is not None and len(default.graph_breaks) == 1
    markers = break_markers(session, timeline_bars(session, all_iterations=True))
    # `Torch-Compiled Region: 1/0` runs inside `0/0` in each of the three steps; eager has no region.
    assert list(markers["mode"]) == ["default"] * 3
    assert set(markers.reason) == {default.graph_breaks[0].reason}
