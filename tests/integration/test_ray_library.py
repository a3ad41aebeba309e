"""The library's table recorded on a Ray cluster started here on the CPU (two CPUs) by scripts/record_library.py:
two rows, each `fusionviz run` in its own Ray task, written where the caller says with the configurations of their
rows and the node and device each ran on; a row that fails is told and the others are kept; rows already recorded
are skipped."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from fusionviz.records.session import Session
from scripts.record_library import main

pytest.importorskip("ray", reason="Ray is not installed: pip install -r requirements-ray.txt")

pytestmark = pytest.mark.slow

TABLE = """# two tiny rows and one the CLI refuses
mlp 32 8 float32 eager,default --processes 1 --rounds 3
mlp 16 8 float32 eager,default --processes 1 --rounds 3 --seq 4
nosuchmodel 16 8 float32 eager
"""


def test_the_library_on_ray_records_each_row_where_asked(local_cluster: None, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "table.txt").write_text(TABLE)
    args = ["--ray", "auto", "--out", str(tmp_path / "lib"), "--table", str(tmp_path / "table.txt"), "--prefix", "cpu",
            "--threads", "1"]
    assert main(args) == 1  # the refused row fails alone
    out, err = capsys.readouterr()
    here = socket.gethostname()
    told = sorted(out.splitlines())
    assert told[:2] == [f"cpu_mlp_16x8x4_float32 recorded on {here} cpu",
                        f"cpu_mlp_32x8_float32 recorded on {here} cpu"]
    assert told[2].startswith("cpu_nosuchmodel_16x8_float32 failed (fusionviz: ") and told[2].endswith(f"on {here} cpu")
    bars = [line for line in err.splitlines() if "rows done" in line]
    assert bars[0].endswith("0/3 rows done · 2 running · 1 queued"), bars
    assert bars[-1].startswith("[" + "#" * 30 + "] 3/3 rows done · 0 running · 0 queued"), bars
    for name, dim, seq in [("cpu_mlp_32x8_float32", 32, None), ("cpu_mlp_16x8x4_float32", 16, 4)]:
        session = Session.load(tmp_path / "lib" / f"{name}.json.gz")
        c = session.config
        assert (c.model, c.dim, c.batch, c.seq, c.dtype, c.modes, c.processes, c.rounds, c.threads, c.device) == (
            "mlp", dim, 8, seq, "float32", ("eager", "default"), 1, 3, 1, "cpu")
        assert [r.mode for r in session.runs if r.ok] == ["eager", "default"]
    assert not (tmp_path / "lib" / "cpu_nosuchmodel_16x8_float32.json.gz").exists()

    assert main([*args, "--rows", "cpu_mlp_*"]) == 0  # both recorded: skipped, nothing run
    out, err = capsys.readouterr()
    assert sorted(out.splitlines()) == ["cpu_mlp_16x8x4_float32: already recorded, skipped",
                                        "cpu_mlp_32x8_float32: already recorded, skipped"]
    assert "rows done" not in err
