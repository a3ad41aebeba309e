"""Real architectures on the CPU (transformers' GPT-2, 2 blocks, 64 wide; real torch.compile): the module table adds
up to each mode's kernel time, the model's own module names come through, a train pass sums its loss from the
model's first output, a model too large is refused before it is built, and a cache hit's stack traces name this
checkout's files."""

from __future__ import annotations

import getpass
import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from fusionviz.analysis.kernel_tables import kernel_us_by_class
from fusionviz.analysis.modules import OUTSIDE, UNKNOWN, module_headline, module_table, module_tree
from fusionviz.analysis.report import analyse
from fusionviz.charts.modules import icicle_bars
from fusionviz.charts.views import view_figure
from fusionviz.errors import ConfigError
from fusionviz.measure.catalog import installed
from fusionviz.measure.client import run_session
from fusionviz.measure.worker import Worker
from fusionviz.records.config import RunConfig
from fusionviz.records.session import ModeRun, Session
from fusionviz.records.stacks import stack_lines

ROOT = Path(__file__).resolve().parents[2]
needs_transformers = pytest.mark.skipif(not installed("transformers"),
                                        reason="transformers is not installed (pip install -r requirements-models.txt)")

GPT2 = RunConfig(model="hf:gpt2", dim=64, layers=2, batch=2, seq=32, device="cpu", modes=("eager", "default"),
                 rounds=3, processes=1, warmup_calls=3, memory=False)


@pytest.fixture(scope="module")
def gpt2(worker: Worker) -> Session:
    if not installed("transformers"):
        pytest.skip("transformers is not installed (pip install -r requirements-models.txt)")
    return run_session(GPT2, worker=worker)


def kernel_time(run: ModeRun) -> float:
    return sum(kernel_us_by_class(run).values())


@needs_transformers
def test_the_module_table_adds_up_to_each_mode_s_kernel_time(gpt2: Session) -> None:
    assert all(r.ok for r in gpt2.runs) and (gpt2.config.layers, gpt2.config.seq) == (2, 32)
    table = module_table(gpt2.runs)
    for run in gpt2.runs:
        mine = table[table["mode"] == run.mode]
        assert mine.kernel_us.sum() == pytest.approx(kernel_time(run), rel=1e-12)
        assert mine.kernels.sum() == pytest.approx(run.summary.kernels_per_iteration, rel=1e-12)
        assert mine.share.sum() == pytest.approx(1.0)
        assert UNKNOWN not in set(mine.module)  # every kernel of both modes is on record
    modules = {mode: set(table[table["mode"] == mode].module) for mode in ("eager", "default")}
    # GPT-2's own names: its blocks' attention, MLP activation and projections, and its embeddings in eager
    assert {"wte", "wpe", "ln_f", "h.0.attn", "h.0.attn.c_attn", "h.0.mlp.act", "h.1.mlp.c_proj"} <= modules["eager"]
    assert {"h.0.attn.c_attn", "h.0.mlp.act", "h.1.mlp.act", "h.1.mlp.c_proj", "ln_f"} <= modules["default"]
    # eager's GELU is eight ATen ops a block; compiled, one kernel
    eager_gelu = table[(table["mode"] == "eager") & (table.module == "h.0.mlp.act")].kernels.item()
    default_gelu = table[(table["mode"] == "default") & (table.module == "h.0.mlp.act")].kernels.item()
    assert (eager_gelu, default_gelu) == (8, 1)


@needs_transformers
def test_the_tree_and_the_view_show_where_fusion_paid(gpt2: Session) -> None:
    report = analyse(gpt2)
    tree = module_tree(report.modules, "hf:gpt2")
    for mode in ("eager", "default"):
        rows = tree[tree["mode"] == mode].set_index("module")
        assert rows.loc["", "kernel_us"] == pytest.approx(kernel_time(gpt2.run(mode)), rel=1e-12)
        assert rows.loc["h", "kernel_us"] == pytest.approx(rows.loc["h.0", "kernel_us"] + rows.loc["h.1", "kernel_us"]
                                                           + rows.loc["h", "own_us"])
    bars = icicle_bars(tree, ["eager", "default"])
    assert set(bars["mode"]) == {"eager", "default"} and (bars.start_us >= 0).all()
    headline = module_headline(report.modules, "default")
    assert headline.text.startswith("default: ") and not headline.problems()
    figure = view_figure(report, "modules", mode="default")
    assert {t.type for t in figure.data} == {"bar"} and "hf:gpt2" in figure.layout.title.text


@needs_transformers
def test_the_stack_traces_name_this_process_s_files(gpt2: Session) -> None:
    default = gpt2.run("default")
    lines = [line for g in default.provenance if g.stack_traces
             for texts in json.loads(g.stack_traces).values() for line in stack_lines(texts)]
    import transformers

    assert gpt2.environment.libraries == {"transformers": transformers.__version__}  # recorded with the session
    library = Path(transformers.__file__).parent
    assert lines and all(Path(line.rpartition(":")[0]).is_file() for line in lines)
    assert any(Path(line.rpartition(":")[0]).is_relative_to(library) for line in lines)


@needs_transformers
def test_a_train_pass_sums_its_loss_from_the_hidden_states_and_the_backward_is_outside_the_forward(
        worker: Worker) -> None:
    session = run_session(replace(GPT2, layers=1, pass_="train"), worker=worker)
    assert all(r.ok for r in session.runs), [r.error for r in session.runs]
    table = module_table(session.runs)
    for run in session.runs:
        mine = table[table["mode"] == run.mode].set_index("module")
        assert mine.kernel_us.sum() == pytest.approx(kernel_time(run), rel=1e-12)
        assert mine.loc[OUTSIDE, "kernel_us"] > mine.loc["h.0.mlp.act", "kernel_us"]  # backward, loss, optimizer


@needs_transformers
def test_a_model_too_large_is_refused_with_its_parameter_bytes_before_it_is_built(worker: Worker) -> None:
    huge = RunConfig(model="hf:llama", dim=8192, layers=200, batch=1, seq=16, device="cpu", modes=("eager",),
                     rounds=3, processes=1)
    with pytest.raises(ConfigError, match=r"hf:llama at dim 8192, batch 1, seq 16, 200 layers needs about .* GiB "
                                          r"\(its [\d,]+ parameters alone take .* GiB in float32\) but cpu has"):
        run_session(huge, worker=worker)


def test_a_cache_hit_from_another_checkout_names_this_checkout_s_files(tmp_path: Path) -> None:
    """A copy of fusionviz elsewhere compiles linear_ln_gelu first into a shared Inductor cache; this checkout's
    run then hits that cache, whose stack traces named the copy's zoo.py: the session names this one's."""
    other = tmp_path / "other"
    shutil.copytree(ROOT / "fusionviz", other / "fusionviz", ignore=shutil.ignore_patterns("__pycache__"))
    temp = tmp_path / "tmp"
    temp.mkdir()
    config = RunConfig(model="linear_ln_gelu", dim=32, batch=8, device="cpu", modes=("eager", "default"), rounds=3,
                       processes=1, warmup_calls=3, memory=False)
    script = ("from fusionviz.measure.client import run_session; from fusionviz.records.config import RunConfig; "
              f"run_session({config!r})")
    env = {**os.environ, "PYTHONPATH": str(other), "TMPDIR": str(temp)}
    subprocess.run([sys.executable, "-c", script], cwd=other, env=env, check=True, timeout=600, capture_output=True)
    user = "".join(c if c.isalnum() or c in "-_." else "_" for c in getpass.getuser())
    cache = temp / f"torchinductor_{user}"
    assert cache.is_dir()
    with Worker(cache_dir=str(cache)) as here:
        session = run_session(config, worker=here)
    default = session.run("default")
    assert default.compile is not None and default.compile.fx_cache_hits > 0  # the other checkout's compile
    files = {line.rpartition(":")[0] for g in default.provenance if g.stack_traces
             for texts in json.loads(g.stack_traces).values() for line in stack_lines(texts)}
    assert str(ROOT / "fusionviz" / "measure" / "zoo.py") in files
    assert not any(str(other) in f for f in files)
