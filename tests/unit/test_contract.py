"""Fusion contracts: the file's round trip and its refusals, and a fresh contract held against a blessed one,
each kind of regression and each tolerance at its edge, on hand-made contracts; a contract taken from a
hand-made session's report; `check` refusing a file in one line with exit code 2."""

from __future__ import annotations

import shlex
import tomllib
from dataclasses import replace
from pathlib import Path

import msgspec
import pytest

from fusionviz.analysis.contract import check, contract_of, floors_of
from fusionviz.analysis.report import analyse
from fusionviz.cli import main
from fusionviz.cli.snapshot import header
from fusionviz.errors import ContractFileError
from fusionviz.records.config import RunConfig
from fusionviz.records.contract import Contract, Made, ModeFigures, Tolerances, contract_toml, read_contract
from tests.unit.factories import k, run, session

CONFIG = RunConfig(model="linear_ln_gelu", dim=32, batch=8, device="cpu", modes=("eager", "default"), rounds=3,
                   processes=1, threads=1)
EAGER = ModeFigures(kernels_per_iteration=3, bytes_per_iteration=10_624, bytes_from="estimate")
DEFAULT = ModeFigures(kernels_per_iteration=2, graphs=1, graph_breaks=0, recompiles=0, bytes_per_iteration=8_672,
                      bytes_from="estimate", speedup=1.25, speedup_interval=(1.125, 1.375), speedup_floor=1.0)
BLESSED = Contract(CONFIG, Tolerances(), {"eager": EAGER, "default": DEFAULT})


def fresh(**changed: object) -> Contract:
    """BLESSED as a fresh run that moved default's figures by `changed`."""
    return replace(BLESSED, modes={"eager": EAGER, "default": replace(DEFAULT, **changed)})  # type: ignore[arg-type]


def lines(blessed: Contract, now: Contract) -> list[tuple[bool, str]]:
    return [(c.regressed, c.line) for c in check(blessed, now).changes]


def test_the_file_reads_back_as_written_in_one_stable_order() -> None:
    made = Made("0.1.0", "2.13.0+cpu", "CPU: AMD EPYC (2 cores)", "2026-12-06T12:00:00+00:00")
    cuda = replace(BLESSED, config=replace(CONFIG, device="cuda:1", seq=128, dynamic=None, modes=(
        "eager", "default", "reduce-overhead")), made=made, tolerances=Tolerances(2, 10.0, 0.2, 0.5, 'a "why"'),
        modes={**BLESSED.modes, "reduce-overhead": replace(DEFAULT, cuda_graphs_captured=1, cuda_graph_skips=0,
                                                           bytes_from="DRAM counters")})
    text = contract_toml(cuda, header(cuda, "contracts/my model.toml"))
    assert text == contract_toml(cuda, header(cuda, "contracts/my model.toml"))
    back = read_contract(text, "c.toml")
    assert back.config == replace(cuda.config, device="cuda")  # the kind: a CI runner checks it on its own GPU
    assert (back.tolerances, back.modes) == (cuda.tolerances, cuda.modes)
    assert list(back.modes) == ["eager", "default", "reduce-overhead"]
    assert "\n[modes.default]\nkernels_per_iteration = 2\ngraphs = 1\n" in text
    assert "speedup_interval = [1.125, 1.375]\nspeedup_floor = 1\n" in text and "\ndynamic = \"none\"\n" in text
    assert "# Made by fusionviz 0.1.0 with torch 2.13.0+cpu on CPU: AMD EPYC (2 cores), 2026-12-06" in text
    assert "#   python -m fusionviz check 'contracts/my model.toml'\n" in text
    comments = text.split("# Re-bless it after a change you mean, and review the diff of the figures:\n")[1]
    kept = comments.split("\n# Made by")[0].splitlines()
    rebless = shlex.split(" ".join(line.removeprefix("#").removesuffix("\\") for line in kept))
    assert rebless == ["python", "-m", "fusionviz", "snapshot", "--model", "linear_ln_gelu", "--dim", "32",
                       "--batch", "8", "--seq", "128", "--dtype", "float32", "--device", "cuda", "--pass",
                       "inference", "--modes", "eager,default,reduce-overhead", "--dynamic", "none", "--rounds", "3",
                       "--processes", "1", "--threads", "1", "--kernels-may-grow-by", "2",
                       "--bytes-may-grow-by-pct", "10", "--speedup-margin", "0.2", "--speedup-floor", "0.5",
                       "--why", 'a "why"', "--out", "contracts/my model.toml"]
    assert all(len(line) <= 110 for line in text.splitlines() if line.startswith("#"))
    assert tomllib.loads(text)["tolerances"]["why"] == 'a "why"'


def test_an_unchanged_run_passes_with_nothing_moved() -> None:
    result = check(BLESSED, BLESSED)
    assert (result.regressed, result.changes) == (False, ())
    assert result.compared == 2 + 6  # eager's kernels and bytes; default's five figures and its speedup


@pytest.mark.parametrize(("changed", "expected"), [
    ({"kernels_per_iteration": 3}, (True, "default kernels per iteration: 2 → 3 (allowed ≤ 2)")),
    ({"kernels_per_iteration": 1}, (False, "default kernels per iteration: 2 → 1 (allowed ≤ 2)")),
    ({"graphs": 2}, (True, "default graphs: 1 → 2 (allowed ≤ 1)")),
    ({"graph_breaks": 1}, (True, "default graph breaks: 0 → 1 (allowed ≤ 0)")),
    ({"recompiles": 3}, (True, "default recompiles: 0 → 3 (allowed ≤ 0)")),
    ({"bytes_per_iteration": 8_672 * 105 // 100},
     (False, "default bytes per iteration: 8,672 → 9,105 (allowed ≤ 9,105)")),
    ({"bytes_per_iteration": 9_106}, (True, "default bytes per iteration: 8,672 → 9,106 (allowed ≤ 9,105)")),
    ({"speedup": 1.0, "speedup_interval": (0.9, 1.1)},
     (False, "default speedup against eager: 1.25x (p10–p90 1.125–1.375) → 1x (p10–p90 0.9–1.1) (floor ≥ 1)")),
    ({"speedup": 0.999, "speedup_interval": (0.9, 1.1)},
     (True, "default speedup against eager: 1.25x (p10–p90 1.125–1.375) → 0.999x (p10–p90 0.9–1.1) (floor ≥ 1)")),
    ({"speedup": None, "speedup_interval": None}, (True, "default speedup against eager: 1.25x (p10–p90 "
                                                         "1.125–1.375) → not timed (floor ≥ 1)")),
])
def test_each_figure_against_its_tolerance_at_the_edge(changed: dict[str, object],
                                                       expected: tuple[bool, str]) -> None:
    assert lines(BLESSED, fresh(**changed)) == [expected]
    assert check(BLESSED, fresh(**changed)).regressed is expected[0]


def test_a_floor_above_an_unmoved_speedup_fails() -> None:
    raised = replace(BLESSED, modes={"eager": EAGER, "default": replace(DEFAULT, speedup_floor=1.3)})
    assert lines(raised, BLESSED) == [
        (True, "default speedup against eager: 1.25x (p10–p90 1.125–1.375) → 1.25x (p10–p90 1.125–1.375) "
               "(floor ≥ 1.3)")]


def test_kernels_may_grow_by_the_stated_slack_and_no_more() -> None:
    slack = replace(BLESSED, tolerances=Tolerances(kernels_may_grow_by=1))
    assert lines(slack, fresh(kernels_per_iteration=3)) == [
        (False, "default kernels per iteration: 2 → 3 (allowed ≤ 3)")]
    assert lines(slack, fresh(kernels_per_iteration=4)) == [
        (True, "default kernels per iteration: 2 → 4 (allowed ≤ 3)")]


def test_cuda_graph_skips_must_not_grow_and_captures_are_said() -> None:
    graphs = replace(BLESSED, modes={"default": replace(DEFAULT, cuda_graphs_captured=2, cuda_graph_skips=0)})
    now = replace(graphs, modes={"default": replace(DEFAULT, cuda_graphs_captured=1, cuda_graph_skips=1)})
    assert lines(graphs, now) == [(True, "default CUDA-graph skips: 0 → 1 (allowed ≤ 0)"),
                                  (False, "default CUDA graphs captured: 2 → 1 (any)")]


def test_a_mode_that_no_longer_runs_is_a_regression() -> None:
    now = replace(BLESSED, modes={"eager": EAGER}, failed={"default": "the worker crashed\nits log"})
    assert lines(BLESSED, now) == [(True, "default: ran → did not run (the worker crashed) (must run)")]


def test_a_contract_from_a_hand_made_sessions_report() -> None:
    eager = run("eager", [k("aten::linear", 0, 10), k("aten::layer_norm", 10, 5), k("aten::gelu", 15, 5)])
    default = msgspec.structs.replace(run("default", [k("aten::addmm", 0, 10),
                                                     k("cpp_fused_gelu_native_layer_norm_0", 10, 6)],
                                          compile_s=1.0, graphs=1), recompiles=0)
    made = session(eager, default, ms={"eager": [[1.0, 1.0, 1.0]], "default": [[0.8, 0.5, 1.0]]},
                   device_kind="cpu")
    found = contract_of(analyse(made), Tolerances(speedup_margin=0.1))
    assert list(found.modes) == ["eager", "default"] and found.failed == {}
    figures = found.modes["default"]
    assert (figures.kernels_per_iteration, figures.graphs, figures.graph_breaks, figures.recompiles) == (2, 1, 0, 0)
    report = analyse(made)
    speedup = report.comparisons["default"].speedup
    assert figures.speedup == round(speedup.median, 3)
    assert figures.speedup_interval == (round(speedup.low, 3), round(speedup.high, 3))
    assert figures.speedup_floor == pytest.approx(round(speedup.low, 3) * 0.9, abs=1e-3)
    assert found.modes["eager"].speedup is None and found.modes["eager"].kernels_per_iteration == 3
    # a check holds a fresh run to the blessed floors, and a fixed floor overrides the margin
    assert contract_of(report, Tolerances(), {"default": 0.123}).modes["default"].speedup_floor == 0.123
    assert contract_of(report, Tolerances(speedup_floor=0.5)).modes["default"].speedup_floor == 0.5
    assert floors_of(found) == {"default": figures.speedup_floor}


@pytest.mark.parametrize(("text", "says"), [
    ("schema = [", "is not a TOML file"),
    ("schema = 7\n", "its schema is 7"),
    ("schema = 1\n[tolerances]\n[modes]\n", "config: expected a table, got nothing"),
    ('schema = 1\n[config]\nmodel = "mlp"\ndim = "big"\n[tolerances]\n[modes]\n', "config.dim"),
    ('schema = 1\n[config]\nmodel = "mlp"\n[tolerances]\nkernels_may_grow_by = -1\n[modes]\n',
     "kernels_may_grow_by"),
    ('schema = 1\n[config]\nmodel = "mlp"\n[tolerances]\n[modes.default]\nkernels_per_iteration = "two"\n',
     "kernels_per_iteration"),
    ('schema = 1\n[config]\nmodel = "mlp"\nmodes = ["eager"]\n[tolerances]\n[modes.default]\n'
     'kernels_per_iteration = 2\n', "[modes.default] is not among the configuration's modes"),
    ('schema = 1\n[config]\nmodel = "no_such_model"\n[tolerances]\n[modes]\n', "unknown model 'no_such_model'"),
])
def test_a_file_that_is_no_contract_is_refused_in_one_line(text: str, says: str) -> None:
    with pytest.raises(ContractFileError, match=r".*") as caught:
        read_contract(text, "c.toml", known_models={"mlp", "linear_ln_gelu"})
    assert says in str(caught.value) and "\n" not in str(caught.value) and str(caught.value).startswith("c.toml")


def test_check_refuses_a_bad_file_with_exit_code_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('schema = 1\n[config]\nmodel = "no_such_model"\n[tolerances]\n[modes]\n')
    assert main(["check", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"fusionviz: {bad} names an unknown model 'no_such_model': choose one of "
                   + err[0].partition("choose one of ")[2]]
    bad.write_bytes(b"\xff\xfe not text")
    assert main(["check", str(bad)]) == 2
    assert main(["check", str(tmp_path / "missing.toml")]) == 2
    assert main(["check", str(tmp_path)]) == 2
    assert main(["snapshot", "--model", "mlp", "--dim", "8", "--batch", "2", "--device", "cpu",
                 "--speedup-margin", "1.5", "--out", str(tmp_path / "c.toml")]) == 2
    assert "--speedup-margin" in capsys.readouterr().err
