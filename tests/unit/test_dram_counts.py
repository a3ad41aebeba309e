"""Measured DRAM bytes (ncu's counters) folded into a recorded H200 session, beside the estimate."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from fusionviz.analysis.dram_counts import NO_COUNTERS, counted_costs
from fusionviz.analysis.report import analyse
from fusionviz.cli.inspection import inspect_report
from fusionviz.errors import FusionvizError
from fusionviz.records.dram import read_ncu_csv
from fusionviz.records.files import open_path
from fusionviz.records.session import Session

ROOT = Path(__file__).parents[2]
DATA = ROOT / "tests" / "data" / "ncu"
SESSION = DATA / "h200_linear_ln_gelu_512x256_bfloat16_run1.json.gz"


def test_csv_kernels_in_launch_order() -> None:
    counts = read_ncu_csv((DATA / "ncu_linear_ln_gelu_512x256_bfloat16_eager.csv").read_text(), "eager.csv")
    assert [c.kernel.split("<")[0] for c in counts] == [
        "nvjet_sm90_tst_64x24_64x16_2x4_h_bz_bias_TNT", "void at::", "void at::vectorized_elementwise_kernel"]
    assert counts[0].read == 806_400 and counts[0].written == 0
    assert sum(c.read + c.written for c in counts) == 1_360_128  # "1,360,128" summed over the three kernels


def test_csv_without_dram_metrics_is_refused() -> None:
    with pytest.raises(FusionvizError, match=r"no dram__bytes_read\.sum"):
        read_ncu_csv('==PROF== Connected\n"ID","Kernel Name","Metric Name","Metric Value"\n', "empty.csv")


def test_fold_then_inspect_shows_both(tmp_path: Path) -> None:
    out = tmp_path / "folded.json.gz"
    said = subprocess.run([sys.executable, "scripts/fold_counters.py", str(SESSION), "--ncu", str(DATA),
                           "--out", str(out)], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT).stdout
    assert "eager: 3 kernels, 1360128 DRAM bytes per iteration" in said
    assert "reduce-overhead: no ncu_linear_ln_gelu_512x256_bfloat16_reduce-overhead.csv: estimate only" in said
    report = inspect_report(analyse(open_path(out)), out.name, top=None)
    runs = {r["label"]: r for r in report["runs"]}
    eager = runs["eager"]
    assert eager["bytes_per_iteration"] == 2_100_224  # the estimate stays
    assert eager["measured_bytes_per_iteration"] == 1_360_128 and eager["measured_bytes_note"] == ""
    # L2 (60 MB) holds this working set: the GEMM reads less than its operands' size and nothing reaches DRAM
    first = eager["kernels"][0]
    assert first["bytes"]["source"] == "shapes" and first["bytes"]["total"] > first["measured_bytes"]["total"]
    assert first["measured_bytes"] == {"read": 806_400, "written": 0, "total": 806_400, "source": "counters"}
    assert runs["default"]["measured_bytes_per_iteration"] == 1_076_736
    assert runs["reduce-overhead"]["measured_bytes_per_iteration"] is None
    assert runs["reduce-overhead"]["measured_bytes_note"] == NO_COUNTERS
    assert all(k["measured_bytes"] is None for k in runs["reduce-overhead"]["kernels"])


def test_counts_of_other_kernels_are_not_placed() -> None:
    session = Session.load(SESSION)
    run = session.run("default")
    assert run is not None
    run.dram_counters = read_ncu_csv((DATA / "ncu_linear_ln_gelu_512x256_bfloat16_eager.csv").read_text(), "x")
    counted = counted_costs(run)
    assert counted.per_iteration == 1_360_128 and all(c is None for c in counted.costs)
    assert "not the kernels of any profiled iteration" in counted.note
