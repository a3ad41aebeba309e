"""Arguments a user mistypes are refused in one line before any work starts, never with a traceback."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from fusionviz.cli import main
from fusionviz.errors import ConfigError
from fusionviz.records.config import DTYPES, PASSES, SWEEP_DIMENSIONS, parse_sizes

SMALL = ["--model", "mlp", "--dim", "64", "--batch", "8", "--device", "cpu"]


@pytest.mark.parametrize(("argv", "said"), [
    (["run", *SMALL, "--timeout", "nan", "--out", "{tmp}/s.json"], "time limit must be a positive number"),
    (["run", *SMALL, "--timeout", "-1", "--out", "{tmp}/s.json"], "time limit must be a positive number"),
    (["run", *SMALL, "--out", "/"], "--out / is a directory"),
    (["run", *SMALL, "--modes", "eager,default+freezin", "--out", "{tmp}/s.json"], "unknown option 'freezin'"),
    (["run", *SMALL, "--modes", "eager+fullgraph", "--out", "{tmp}/s.json"], "eager compiles nothing"),
    (["grid", "--model", "mlp", "--mode", "default+mark_dynamic", "--dims", "64", "--batches", "8", "--out",
      "{tmp}/g.json"], "mark_dynamic takes a dimension"),
    (["run", *SMALL, "--out", "{tmp}/missing/s.json"], "does not exist"),
    (["sweep", *SMALL, "--sizes", "1,2,abc", "--out", "{tmp}/s.json"], "--sizes must be whole numbers"),
    (["sweep", *SMALL, "--sizes", "²,2", "--out", "{tmp}/s.json"], "--sizes must be whole numbers"),
    (["sweep", *SMALL, "--buckets", "x", "--out", "{tmp}/s.json"], "--buckets must be whole numbers"),
    (["grid", "--model", "mlp", "--dims", "64,abc", "--batches", "8", "--out", "{tmp}/g.json"], "--dims must be"),
    (["inspect", "{tmp}/empty"], "holds no trace files"),  # a folder is a job: one trace per rank
    (["inspect", "{tmp}/nothing.json"], "cannot be read"),
    (["inspect", "/dev/zero"], "FUSIONVIZ_MAX_FILE_MB"),
    (["inspect", "{tmp}/top.json", "--top", "0"], "--top takes"),
])
def test_a_mistyped_argument_is_refused_in_one_line(argv: list[str], said: str, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "top.json").write_text('{"traceEvents": []}')
    (tmp_path / "empty").mkdir()
    assert main([a.replace("{tmp}", str(tmp_path)) for a in argv]) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err and err.count("\n") == 1, err


def test_sizes_are_ascii_digits() -> None:
    assert parse_sizes("8, 16 24") == [8, 16, 24]
    for text in ("²", "١٢", "8,-1", "1e3", "9" * 12):
        with pytest.raises(ConfigError):
            parse_sizes(text)


@pytest.mark.parametrize(("argv", "choices"), [
    (["run", *SMALL, "--dtype", "float64"], DTYPES),
    (["run", *SMALL, "--pass", "backward"], PASSES),
    (["sweep", *SMALL, "--over", "width"], SWEEP_DIMENSIONS),
])
def test_a_choice_outside_the_configurations_is_refused_with_them(argv: list[str], choices: tuple[str, ...],
                                                                  tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main([*argv, "--out", str(tmp_path / "s.json")])
    err = capsys.readouterr().err
    assert done.value.code == 2 and "invalid choice" in err and all(c in err for c in choices), err


def test_without_ray_the_flag_says_how_to_install_it(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails as where it is not installed
    argv = ["grid", "--model", "mlp", "--dims", "64", "--batches", "8", "--device", "cpu", "--ray", "auto",
            "--out", str(tmp_path / "g.json")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "pip install -r requirements-ray.txt" in err and err.count("\n") == 1, err
    assert main([*argv, "--devices", "cpu"]) == 2
    assert "--devices and --ray exclude each other" in capsys.readouterr().err
