"""Fusion contracts on real CPU compiles: a snapshot of linear_ln_gelu (eager, default) checks clean against a
fresh run, the same check against a file changed by hand fails with a line naming the change, and the
repository's own contract (tests/data/contracts) is checked, so that this suite, the project's CI, keeps one."""

from __future__ import annotations

from pathlib import Path

import pytest

from fusionviz.analysis.contract import check, contract_of, floors_of
from fusionviz.analysis.report import analyse
from fusionviz.cli import main
from fusionviz.measure.catalog import CATALOG
from fusionviz.measure.client import run_session
from fusionviz.measure.worker import Worker
from fusionviz.records.contract import Contract, read_contract

ROOT = Path(__file__).resolve().parents[2]
KEPT = ROOT / "tests" / "data" / "contracts" / "linear_ln_gelu_cpu.toml"


def read(text: str) -> Contract:
    return read_contract(text, "edited.toml", known_models=set(CATALOG))


def test_a_snapshot_checks_clean_and_a_file_changed_by_hand_fails(tmp_path: Path, worker: Worker,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "linear_ln_gelu.toml"
    assert main(["snapshot", "--model", "linear_ln_gelu", "--dim", "32", "--batch", "8", "--device", "cpu",
                 "--modes", "eager,default", "--rounds", "3", "--processes", "1", "--speedup-floor", "0.25",
                 "--out", str(path)]) == 0
    printed = capsys.readouterr().out
    with capsys.disabled():
        print(f"\n{printed}")
    text = path.read_text()
    assert printed.startswith(text)
    blessed = read(text)
    eager, default = blessed.modes["eager"], blessed.modes["default"]
    # LayerNorm and GELU fuse into one C++ kernel beside the GEMM: three calls become two
    assert (eager.kernels_per_iteration, default.kernels_per_iteration) == (3, 2)
    assert (default.graphs, default.graph_breaks, default.recompiles, default.speedup_floor) == (1, 0, 0, 0.25)
    assert default.bytes_per_iteration is not None and default.bytes_per_iteration < eager.bytes_per_iteration

    session = run_session(blessed.config, worker=worker)
    fresh = contract_of(analyse(session), blessed.tolerances, floors_of(blessed))
    clean = check(blessed, fresh)
    assert not clean.regressed
    assert [c.figure for c in clean.changes] in ([], ["default speedup against eager"])  # counts are exact

    fewer = read(text.replace("[modes.default]\nkernels_per_iteration = 2\n",
                              "[modes.default]\nkernels_per_iteration = 1\n"))
    raised = read(text.replace("speedup_floor = 0.25\n", "speedup_floor = 50\n"))
    for changed, line in ((fewer, "default kernels per iteration: 1 → 2 (allowed ≤ 1)"),
                          (raised, "(floor ≥ 50)")):
        result = check(changed, fresh)
        with capsys.disabled():
            print(*(f"{'REGRESSED' if c.regressed else 'moved'}  {c.line}" for c in result.changes), sep="\n")
        assert result.regressed
        assert [c.line for c in result.regressions if line in c.line]


def test_the_repositorys_own_contract_holds(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", str(KEPT)])
    printed = capsys.readouterr().out
    with capsys.disabled():
        print(f"\n{printed}")
    assert code == 0, printed
    assert printed.startswith(f"checking {KEPT}: linear_ln_gelu, dim 32, batch 8, float32, cpu, inference; modes "
                              "eager, default\n")
    assert "ok: " in printed and "REGRESSED" not in printed
