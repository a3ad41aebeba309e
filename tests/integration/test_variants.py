"""Variants (`MODE+OPTION`) measured for real on the CPU, as modes beside the others: same rounds, same processes."""

from __future__ import annotations

from dataclasses import replace

import pytest

from fusionviz.analysis.report import analyse
from fusionviz.errors import ConfigError
from fusionviz.measure.client import run_session
from fusionviz.measure.worker import Worker
from fusionviz.records.config import RunConfig
from fusionviz.records.session import Session

CAPTURED = "default+capture_scalar_outputs"
SCALARS = {"torch._dynamo.config.capture_scalar_outputs": "True"}


def small(model: str, **kw: object) -> RunConfig:
    return replace(RunConfig(model=model, dim=32, batch=8, device="cpu", rounds=3, processes=1, warmup_calls=3,
                             modes=("eager", "default", CAPTURED), memory=False), **kw)


def speedups(session: Session) -> str:
    """Each compiled mode's graphs and speedup over eager with its p10–p90 interval, printed with the test."""
    found = analyse(session).comparisons
    lines = []
    for run in session.runs[1:]:
        s = found[run.mode].speedup
        assert 0 < s.low <= s.median <= s.high
        lines.append(f"{session.config.model} {run.mode}: {run.graph_count} graph(s), speedup {s.median:.3f}x "
                     f"({s.low:.3f}–{s.high:.3f}x, {s.samples} rounds)")
    print("\n" + "\n".join(lines))
    return "\n".join(lines)


@pytest.fixture(scope="module")
def graph_break(worker: Worker) -> Session:
    return run_session(small("graph_break"), worker=worker)


def test_capture_scalar_outputs_reaches_dynamo_on_the_zoos_graph_break(graph_break: Session) -> None:
    """The zoo's break is a Python `if` on a tensor's value: captured as a scalar, the value still cannot decide
    Python's branch while tracing, so the break stays (2 graphs), now at the branch, not at `.item()`."""
    assert [r.mode for r in graph_break.runs] == ["eager", "default", CAPTURED]
    default, captured = graph_break.run("default"), graph_break.run(CAPTURED)
    assert default.ok and captured.ok
    assert default.graph_count == 2 and "Tensor.item()" in default.graph_breaks[0].reason
    assert captured.graph_count == 2
    # the option was applied: the break moved from `.item()` to the jump on the traced scalar (a SymNode)
    assert "SymNode" in captured.graph_breaks[0].reason and "item()" not in captured.graph_breaks[0].reason
    assert captured.compile is not None and captured.compile.settings == SCALARS
    assert default.compile is not None and default.compile.settings == {}
    assert captured.recompiles == 0  # leaving the settings after the warm-up recompiles nothing
    speedups(graph_break)


def test_capture_scalar_outputs_makes_one_graph_where_the_scalar_feeds_arithmetic(worker: Worker) -> None:
    """`.item()` scales the output: captured as a scalar, the whole forward is one graph."""
    session = run_session(small("tests.models_for_tests:scalar_scale"), worker=worker)
    default, captured = session.run("default"), session.run(CAPTURED)
    assert default.ok and captured.ok
    assert default.graph_count == 2 and len(default.graph_breaks) == 1
    assert captured.graph_count == 1 and captured.graph_breaks == []  # the break is gone
    assert captured.recompiles == 0
    assert session.timing is not None
    (process,) = session.timing.processes  # timed in the same interleaved rounds as the other modes
    assert len(process.rounds) == 3 and set(process.rounds[0]) == {"eager", "default", CAPTURED}
    speedups(session)


def test_freezing_runs_on_the_conv_block_and_records_its_settings(worker: Worker) -> None:
    session = run_session(small("conv_block", seq=16, modes=("eager", "default+freezing")), worker=worker)
    frozen = session.run("default+freezing")
    assert frozen.ok and frozen.compile is not None
    assert frozen.compile.settings == {"torch._inductor.config.freezing": "True"}
    assert any("_frozen_param" in code for code in frozen.output_code)  # the weights became constants
    assert frozen.recompiles == 0
    speedups(session)


def test_mark_dynamic_compiles_the_batch_as_a_symbol_and_leaves_default_static(worker: Worker) -> None:
    session = run_session(small("mlp", modes=("eager", "default", "default+mark_dynamic=0")), worker=worker)
    marked, default = session.run("default+mark_dynamic=0"), session.run("default")
    assert marked.ok and marked.compile is not None
    assert marked.compile.settings == {"torch._dynamo.mark_dynamic(inputs[0])": "0"}
    assert any("ks0" in code for code in marked.output_code)  # the batch is a symbol in the kernels
    assert not any("ks0" in code for code in default.output_code)  # the same process's other mode stays static
    assert marked.recompiles == 0


def test_mark_dynamic_beyond_the_first_inputs_dimensions_is_refused() -> None:
    import torch

    from fusionviz.measure.harness import marked_dynamic

    with pytest.raises(ConfigError, match=r"mark_dynamic=5: the first input has 2 dimensions \(8x32\)"):
        marked_dynamic(torch.ones(8, 32), 5)


def test_a_submodule_left_to_eager_breaks_the_graph_around_it_and_only_in_its_variant(worker: Worker) -> None:
    """`disable=norm2` on the transformer block: its LayerNorm runs eagerly between two graphs, while default, in
    the same worker and on the same model object, keeps its one graph; a name the model lacks is refused with the
    names it has."""
    disabled = "default+disable=norm2"
    session = run_session(small("transformer_block", seq=16, modes=("eager", "default", disabled)), worker=worker)
    default, variant = session.run("default"), session.run(disabled)
    assert default.ok and variant.ok, (default.error, variant.error)
    assert default.graph_count == 1 and default.graph_breaks == []
    assert variant.graph_count == 2 and "torch.compiler.disable" in variant.graph_breaks[0].reason
    assert variant.compile is not None
    assert variant.compile.settings == {"torch.compiler.disable(model.norm2.forward)": "True"}
    assert any(name == "aten::layer_norm" for name in variant.kernel_frame().name), "norm2 ran eagerly"
    speedups(session)
    with pytest.raises(ConfigError, match="disable=norm3: the model has no submodule of that name: choose from "
                                          "norm1, qkv, proj, norm2, fc1, fc2"):
        run_session(small("transformer_block", seq=16, modes=("eager", "default+disable=norm3")), worker=worker)
