"""The Trace explorer's comparison of two runs leads with a headline (it had no sentence): B's kernels and kernel
time against A's, rounded for reading, the kernel that took A's place as its mechanism, no speedup claimed."""

from __future__ import annotations

from pathlib import Path

from fusionviz.analysis.headline import micros
from fusionviz.analysis.kernel_diff import kernel_diff, pair_headline
from fusionviz.analysis.kernel_tables import KERNEL_US, pair_summary
from fusionviz.records.files import open_path

SESSIONS = Path(__file__).resolve().parents[2] / "sessions"


def test_the_chain_fused_reads_as_18_kernels_to_1_and_names_the_kernel_that_took_their_place() -> None:
    chain = open_path(SESSIONS / "h100_pointwise_chain_4096x4096_float32.json.gz")
    eager, default = chain.run("eager"), chain.run("default")
    summary = pair_summary(eager, default).set_index("quantity")
    headline = pair_headline(pair_summary(eager, default), kernel_diff(eager, default))
    ua, ub = summary.at[KERNEL_US, "A"], summary.at[KERNEL_US, "B"]
    assert headline.text == f"B: 18 kernels → 1, kernel time {micros(ua, read=True)} → {micros(ub, read=True)}"
    assert headline.mechanism.startswith("triton_poi_fused_") and headline.mechanism.endswith(
        "takes the place of 18 of A's kernels.")
    assert headline.problems() == []
    assert f"A {micros(ua)}, B {micros(ub)}" in headline.details[1]
    assert "no speedup is claimed" in headline.details[-1]


def test_two_runs_of_the_same_kernels_name_the_largest_change_and_say_still() -> None:
    mlp = open_path(SESSIONS / "h100_mlp_512x256_float32.json.gz")
    eager, graphed = mlp.run("eager"), mlp.run("eager_cuda_graph")
    diff = kernel_diff(eager, graphed)
    headline = pair_headline(pair_summary(eager, graphed), diff)
    assert headline.text.startswith("B: still 5 kernels, kernel time ")
    assert headline.mechanism.endswith(" µs per iteration.") and " changed most: " in headline.mechanism
    assert headline.problems() == []
