"""The CLI's reporter and its plainest command: table columns as wide as their widest cell (at least the width
asked for), and the model zoo listed in aligned columns or as JSON."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from fusionviz.cli import COMMANDS, command, main
from fusionviz.cli.reporter import Column, json_text, table
from fusionviz.measure.catalog import CATALOG, REAL_MODELS, available_models

ROOT = Path(__file__).resolve().parents[2]


def test_table_columns_widen_to_their_widest_cell() -> None:
    columns = [Column("n", "d", width=3), Column("share", ".1f", suffix="%"), Column("name", align="<", gap=2)]
    assert table(columns, [(7, 12.5, "a"), (1234, 100.0, "bb")], indent="  ") == [
        "     n  share  name",
        "     7  12.5%  a",
        "  1234 100.0%  bb"]
    assert table(columns, [(7, 12.5, "a")], header=False) == ["  7 12.5%  a"]


def test_json_is_strict_with_nan_and_infinity_as_null() -> None:
    assert json_text({"a": math.nan, "b": [math.inf, -math.inf, 1.5], "c": (1, "µs")}) == (
        '{"a":null,"b":[null,null,1.5],"c":[1,"µs"]}')
    assert json_text([{"x": None}], indent=2) == '[\n  {\n    "x": null\n  }\n]'


def test_models_are_listed_in_aligned_columns_and_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    shown = available_models()
    assert main(["models"]) == 0
    out = capsys.readouterr()
    lines = out.out.splitlines()
    assert [line.split()[0] for line in lines] == list(shown)
    assert list(shown)[:len(CATALOG)] == list(CATALOG)  # the zoo first, then the real models installed here
    assert {line.index(info.purpose) for line, info in zip(lines, shown.values(), strict=True)} == {
        max(map(len, shown)) + 2}
    assert lines[list(CATALOG).index("conv_block")].endswith(" [--seq: image side]")
    missing = [name for name in REAL_MODELS if name not in shown]
    assert (f"for {', '.join(missing)} (pip install -r requirements-models.txt" in out.err) == bool(missing)
    assert main(["models", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed[0] == {"name": "mlp", "purpose": CATALOG["mlp"].purpose, "seq": None, "dim": "hidden size",
                         "layers": None, "library": None, "available": True,
                         "defaults": {"dim": None, "batch": None, "seq": None, "layers": None}}
    assert [m["name"] for m in listed] == [*CATALOG, *REAL_MODELS]
    assert {m["name"] for m in listed if m["available"]} == set(shown)


def test_a_real_model_lists_its_knobs_and_published_sizes(capsys: pytest.CaptureFixture[str]) -> None:
    """Whatever is installed, `--json` says what each real model's sizes set and its defaults."""
    assert main(["models", "--json"]) == 0
    listed = {m["name"]: m for m in json.loads(capsys.readouterr().out)}
    assert listed["hf:gpt2"]["defaults"] == {"dim": 768, "batch": 8, "seq": 256, "layers": 12}  # GPT-2 small
    assert (listed["hf:gpt2"]["library"], listed["hf:gpt2"]["layers"]) == ("transformers", "transformer blocks")
    assert listed["timm:resnet50"]["dim"] is None and listed["timm:resnet50"]["seq"] == "image side"
    assert listed["tv:resnet18"]["library"] == "torchvision"


def test_every_command_is_offered(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert all(f"    {c.name}" in out and c.help.split()[0] in out for c in map(command, COMMANDS))


@pytest.mark.parametrize("file", ["tests/data/h200_mlp_bf16_max-autotune.trace.json.gz",
                                  "sessions/h100_graph_break_512x256_float32.json.gz"])
def test_inspect_imports_no_torch_plotly_or_psutil(file: str) -> None:
    """torch alone costs 1.5-2 s; `inspect` of a trace or a session reads neither the worker's side nor charts."""
    code = ("import sys\nfrom fusionviz.cli import main\n"
            f"assert main(['inspect', {file!r}, '--json']) == 0\n"
            "assert not {'torch', 'plotly', 'psutil'} & set(sys.modules), 'imported'")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_inspect_of_one_trace_imports_only_what_it_uses() -> None:
    """A trace's `inspect --json` needs neither pandas (the app's tables), a job's process pool, the tables
    other commands offer their choices from (the views `export` draws), the other commands, nor the digest that
    keys the app's reports (hashlib): it makes one report and keeps none. Nor what only a timed run (statistics)
    or a session's marked ops (difflib) need, nor `threading` for the app's caches' locks."""
    code = ("import sys\nfrom fusionviz.cli import main\n"
            "assert main(['inspect', 'tests/data/h200_linear_ln_gelu_fp32_eager.trace.json.gz', '--json']) == 0\n"
            "assert not {'pandas', 'numpy', 'multiprocessing', 'concurrent.futures', 'fusionviz.charts.registry', "
            "'fusionviz.cli.run', 'fusionviz.cli.check', 'fusionviz.measure.catalog', 'hashlib', 'statistics', "
            "'difflib', 'threading'} & set(sys.modules), 'imported'")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_an_argv_that_names_no_command_first_is_refused_with_the_list(capsys: pytest.CaptureFixture[str]) -> None:
    """Each command parses its own flags alone; anything else gets the list of commands, and a command's own
    refusal names it."""
    for argv in ([], ["bogus"], ["--json", "inspect", "x.json"]):
        with pytest.raises(SystemExit) as done:
            main(argv)
        assert done.value.code == 2
        assert "{models,run,inspect,sweep,grid,export,snapshot,check}" in capsys.readouterr().err, argv
    with pytest.raises(SystemExit) as done:
        main(["inspect", "--top"])
    assert done.value.code == 2
    assert "python -m fusionviz inspect: error: argument --top: expected one argument" in capsys.readouterr().err


def test_a_command_offers_its_choices_in_its_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["export", "--help"])
    assert done.value.code == 0
    assert "--view {" in capsys.readouterr().out


def test_inspect_lists_every_cell_of_a_grid(capsys: pytest.CaptureFixture[str]) -> None:
    """A grid session's runs are in its cells: inspect printed one cell's header and nothing of the grid."""
    from fusionviz.analysis.report import analyse
    from fusionviz.records.files import open_path

    path = ROOT / "sessions" / "h200_grid_mlp_default.json.gz"
    table = analyse(open_path(path)).grid.table  # type: ignore[union-attr]
    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("fusionviz crossover grid: mlp, default against eager over dim 256, 1024, 4096 × batch "
                          "16, 256, 4096, float32")
    cells = [line.split() for line in out.splitlines() if line.startswith("  mlp ")]
    assert [(int(c[1]), int(c[2]), c[4], c[5], " ".join(c[8:])) for c in cells] == [
        (int(r.dim), int(r.batch), r.device, "default", r.verdict) for r in table.itertuples()]
    assert [c[6] for c in cells] == [f"{r.speedup:.3f}x" for r in table.itertuples()]
    assert [c[7] for c in cells] == [f"{r.speedup_low:.3f}–{r.speedup_high:.3f}x" for r in table.itertuples()]
    assert "clearly faster than eager at 2 of 9 sizes" in out
    assert main(["inspect", str(path), "--json"]) == 0
    inspected = json.loads(capsys.readouterr().out)
    cells = inspected["cells"]
    assert len(cells) == 9 and cells[2]["speedup"]["median"] == pytest.approx(table.speedup[2])
    assert inspected["crossover"].startswith("default is clearly faster than eager at 2 of 9 sizes")
    assert main(["inspect", str(ROOT / "sessions" / "h100_mlp_512x256_float32.json.gz"), "--json"]) == 0
    assert "cells" not in json.loads(capsys.readouterr().out)


def test_the_library_page_says_what_inspect_says_of_the_shipped_grid(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/library.md's sentence on the shipped grid counts its cells and wins as `inspect` does."""
    path = ROOT / "sessions" / "h200_grid_mlp_default.json.gz"
    assert main(["inspect", str(path), "--json"]) == 0
    cells = json.loads(capsys.readouterr().out)["cells"]
    wins = [c for c in cells if c["verdict"] == "faster"]
    page = " ".join((ROOT / "docs" / "library.md").read_text().split())
    assert f"finds `default` clearly faster at {len(wins)} of its {len(cells)} sizes" in page
    for c in wins:
        s = c["speedup"]
        assert f"batch {c['batch']} ({s['median']:.2f}x, " in page
        assert f"{s['low']:.2f}–{s['high']:.2f}x)" in page
    assert f"clearly slower at {sum(c['verdict'] == 'slower' for c in cells)} " in page
