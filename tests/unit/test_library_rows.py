"""The library's table is one file that both recorders read: scripts/gpu_library.sh (one GPU box) and
scripts/record_library.py (a Ray cluster) see the same rows, under the file names the library was recorded with."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from scripts.record_library import TABLE, main, read_table

ROOT = Path(__file__).resolve().parents[2]


GPU_LIBRARY = ROOT / "scripts" / "gpu_library.sh"
READ = 'while read -r model dim batch dtype modes extra; do echo "$model|$dim|$batch|$dtype|$modes|$extra"; done'


def gpu_library(then: str, cwd: Path, env: dict[str, str] | None = None) -> str:
    """gpu_library.sh's own `library` function (run as that script, $0), piped into `then`; its stdout."""
    script = GPU_LIBRARY.read_text()
    start = script.index("library() {")
    function = script[start:script.index("\n}\n", start) + 3]
    return subprocess.run(["bash", "-c", f"{function}\nlibrary | {then}", str(GPU_LIBRARY)], capture_output=True,
                          text=True, check=True, cwd=cwd, env={"PATH": "/usr/bin:/bin", **(env or {})}).stdout


def test_both_recorders_read_the_same_rows_of_the_one_table() -> None:
    rows = [(r.model, str(r.dim), str(r.batch), r.dtype, r.modes, " ".join(r.extra)) for r in read_table(TABLE)]
    assert rows == [tuple(line.split("|")) for line in gpu_library(READ, ROOT, {"TABLE": str(TABLE)}).splitlines()]
    assert len(rows) == 42 and ("mlp", "512", "256", "float32", "eager,eager_cuda_graph,default,reduce-overhead,"
                                "max-autotune,max-autotune-no-cudagraphs", "--naive-calls 200") in rows
    assert "<<EOF" not in GPU_LIBRARY.read_text()  # the table lives in one place


def test_the_default_table_is_found_beside_gpu_library_sh_from_any_folder(tmp_path: Path) -> None:
    assert int(gpu_library("wc -l", tmp_path)) == len(read_table(TABLE))


def test_the_ray_path_names_each_row_as_the_library_was_recorded() -> None:
    # the zoo on an H200 (2026-12-01), every row again with memory on an H100 (2026-12-06 and 07), which replaced
    # it; the real models on an H100: each row is shipped under one GPU's name
    shipped = {p.name.removesuffix(".json.gz") for p in (ROOT / "sessions").glob("h*_*.json.gz")}
    rows = read_table(TABLE)
    assert [r for r in rows if len({r.name("h100"), r.name("h200")} & shipped) != 1] == []
    assert len(rows) == 42 and {"h100_transformer_block_1024x8x512_bfloat16", "h100_mlp_4096x4096_bfloat16",
                                "h100_hf_gpt2_768x4x128_bfloat16"} <= shipped


def test_without_ray_the_library_on_ray_says_how_to_install_it(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails as where it is not installed
    assert main(["--ray", "auto", "--out", str(tmp_path), "--rows", "h200_mlp_512x256_float32"]) == 2
    out, err = capsys.readouterr()
    assert "pip install -r requirements-ray.txt" in err and err.count("\n") == 1 and not out, err
