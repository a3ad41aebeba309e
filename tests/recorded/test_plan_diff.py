"""The plan diff on shipped H200 sessions: max-autotune's Triton templates against default's library GEMMs in the
MLP, eager's convolution block against default's, and the same mode of two sessions through `inspect A B`. The
figures each test sees are printed (`pytest -s`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fusionviz.analysis.report import analyse
from fusionviz.charts.views import view_caption, view_figure
from fusionviz.cli import main
from fusionviz.cli.plan import plan_lines
from fusionviz.records.files import open_path

ROOT = Path(__file__).resolve().parents[2]
MLP = ROOT / "sessions" / "h100_mlp_512x256_float32.json.gz"
MLP_BF16 = ROOT / "sessions" / "h100_mlp_512x256_bfloat16.json.gz"
CONV = ROOT / "sessions" / "h100_conv_block_64x32x56_float32.json.gz"


def test_max_autotune_s_templates_take_the_mlp_s_gemms_and_absorb_the_bias_relu_kernels() -> None:
    diff = analyse(open_path(MLP)).plan_diff("default", "max-autotune-no-cudagraphs")
    print("\n".join(plan_lines(diff)))
    print(diff.kernels.to_string())
    assert diff.links == "provenance" and diff.by_name == 0
    # the templates' prologues and epilogues chain the three layers: one group, cut up anew
    assert list(diff.groups.change) == ["regrouped"]
    group = diff.groups.iloc[0]
    assert (group.kernels_a, group.kernels_b, group.launches_a, group.launches_b) == (5, 3, 7, 3)
    assert group.us_a == pytest.approx(37.06, abs=0.01) and group.us_b == pytest.approx(72.64, abs=0.01)
    assert diff.templates == (3, 3, 2)  # 3 templates took 3 cuBLAS GEMMs and 2 pointwise kernels
    b = diff.kernels[diff.kernels.side == "B"].set_index("name")
    assert list(b.kernel_class) == ["triton_template"] * 3
    assert b.at["triton_tem_fused_addmm_t_0", "computes"] == "linear (net.0)"
    assert b.at["triton_tem_fused_addmm_relu_t_1", "computes"] == ("linear (net.0), relu (net.1), linear (net.2), "
                                                                   "relu (net.3)")
    assert b.at["triton_tem_fused_addmm_relu_t_2", "computes"] == "linear (net.2), relu (net.3), linear (net.4)"
    assert "triton_poi_fused_addmm_relu_0" in b.at["triton_tem_fused_addmm_relu_t_1", "counterparts"]
    assert diff.headline.text == "max-autotune-no-cudagraphs against default: 1 group regrouped, 4 kernels fewer"
    assert diff.headline.mechanism == "3 GEMMs became 3 Triton templates, absorbing 2 other kernels."
    assert diff.headline.problems() == []


def test_default_fuses_the_conv_block_s_bias_batch_norm_and_relu_into_one_kernel() -> None:
    report = analyse(open_path(CONV))
    diff = report.plan_diff("eager", "default")
    print("\n".join(plan_lines(diff)))
    print(diff.kernels.to_string())
    assert diff.links == "provenance"
    assert list(diff.groups.change) == ["regrouped"]  # every kernel computes part of the convolution
    group = diff.groups.iloc[0]
    assert (group.kernels_a, group.kernels_b, group.launches_a, group.launches_b) == (4, 4, 6, 4)
    assert group.us_a == pytest.approx(141.57, abs=0.01) and group.us_b == pytest.approx(78.63, abs=0.01)
    fused = diff.kernels[(diff.kernels.side == "B") & (diff.kernels.computes == "conv2d (conv), batch_norm (bn), relu")]
    assert len(fused) == 1
    assert {"bn_fw_inf_1C11_kernel_NCHW", "vectorized_elementwise_kernel", "elementwise_kernel<CUDAFunctor_add>"} \
        <= set(fused.counterparts.iloc[0].split(", "))  # eager's bias add, batch norm and relu
    assert diff.headline.text == "default against eager: 1 group regrouped, 2 kernels fewer"
    # the view draws it, with its headline as caption
    caption = view_caption(report, "plan_diff", "default")
    print(caption)
    assert caption.startswith("default against eager: ")
    figure = view_figure(report, "plan_diff", mode="default")
    assert [t.name for t in figure.data] == ["eager", "default: regrouped"]


def test_inspect_of_two_sessions_diffs_their_default_plans(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(MLP), str(MLP_BF16)]) == 0
    out = capsys.readouterr().out
    print(out)
    assert out.startswith("plan diff: B = h100_mlp_512x256_bfloat16:default against A = h100_mlp_512x256_float32:"
                          "default\n")
    assert "kernels matched by Inductor's provenance records" in out
    assert "      3  replaced      1→1      1→1" in out  # the last linear: cuBLAS's GEMM for bf16's nvjet


def test_inspect_with_modes_diffs_one_session_and_inspect_of_one_file_is_unchanged(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(MLP), "--modes", "default,max-autotune-no-cudagraphs"]) == 0
    assert "3 GEMMs became 3 Triton templates" in capsys.readouterr().out
    assert main(["inspect", str(MLP)]) == 0
    assert not capsys.readouterr().out.startswith("plan diff")
    assert main(["inspect", str(MLP), "--modes", "default,nonesuch"]) != 0
