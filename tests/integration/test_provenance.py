"""What fused into what, from Inductor's own records, on real CPU compiles (torch's C++ backend)."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from fusionviz.analysis.kernel_tables import iteration_kernels
from fusionviz.analysis.links import run_links
from fusionviz.analysis.no_fusion import plain_words, refusals
from fusionviz.analysis.provenance import compiled_graphs, iteration_provenance, iteration_sources, kernel_provenance
from fusionviz.analysis.source_view import source_view
from fusionviz.measure.client import run_session
from fusionviz.measure.worker import Worker
from fusionviz.measure.zoo import MODELS
from fusionviz.records.config import RunConfig
from fusionviz.records.session import ModeRun, Session

ZOO = Path(MODELS["mlp"].build.__code__.co_filename).name  # "zoo.py"


def small(model: str, **kw: object) -> RunConfig:
    return replace(RunConfig(model=model, dim=32, batch=8, device="cpu", rounds=3, processes=1, warmup_calls=3,
                             modes=("eager", "default"), memory=False), **kw)


def lines(sources: tuple[str, ...] | list[str]) -> set[int]:
    """The zoo's line numbers among "file:line" sources."""
    return {int(s.rpartition(":")[2]) for s in sources if Path(s.rpartition(":")[0]).name == ZOO}


def line_of(text: str) -> int:
    """The zoo's line that holds `text`."""
    source = Path(MODELS["mlp"].build.__code__.co_filename).read_text().splitlines()
    (number,) = [i + 1 for i, line in enumerate(source) if text in line]
    return number


def kernels_with_provenance(run: ModeRun) -> list[tuple[str, object]]:
    frame = iteration_kernels(run)
    return list(zip(frame.name, iteration_provenance(run), strict=True))


def test_the_fused_kernel_covers_layer_norm_gelu_and_the_forward_line(ln_gelu_session: Session) -> None:
    eager, default = ln_gelu_session.run("eager"), ln_gelu_session.run("default")
    found = kernels_with_provenance(default)
    (fused,) = [p for name, p in found if name.startswith("cpp_fused")]
    assert fused.handle.startswith("cpp_fused_gelu_native_layer_norm_0:")
    assert set(fused.pre_grad) == {"layer_norm", "gelu"} and "var_mean" in fused.post_grad
    assert lines(fused.source) == {line_of("return F.gelu(self.norm(self.linear(x)))")}
    (gemm,) = [p for name, p in found if name == "aten::addmm"]
    assert gemm.handle.startswith("extern_kernels.addmm:") and gemm.pre_grad == ("linear",)
    assert [(s.module, lines([s.source])) for s in iteration_sources(eager)] == [
        ("linear", {fused_line := line_of("return F.gelu(self.norm")}), ("norm", {fused_line}), ("", {fused_line})]
    links = run_links(eager, default)
    assert links.kind == "provenance"
    fused_index = [name for name, _ in found].index(next(n for n, _ in found if n.startswith("cpp_fused")))
    assert set(links.table[links.table.compiled_index == fused_index].eager_index) == {1, 2}


def test_every_op_line_of_the_pointwise_chain_ends_in_its_one_kernel(worker: Worker) -> None:
    session = run_session(small("pointwise_chain"), worker=worker)
    eager, default = session.run("eager"), session.run("default")
    ((name, kernel),) = kernels_with_provenance(default)
    op_lines = {line_of(text) for text in ("y = x * self.scale", "tanh-GELU by hand", "torch.sigmoid(y) * y",
                                            "torch.clamp(y", "torch.exp(-y * y)")}
    assert name.startswith("cpp_fused") and lines(kernel.source) == op_lines
    assert {n.source for n in default.graph_nodes} and lines([n.source for n in default.graph_nodes]) == op_lines
    links = run_links(eager, default)
    assert links.kind == "provenance"
    assert set(links.table.eager_index) == set(range(len(iteration_kernels(eager))))  # every eager op, one kernel
    assert set(links.table.compiled_index) == {0}


def test_the_two_relu_kernels_of_the_mlp_map_to_two_modules(worker: Worker) -> None:
    session = run_session(small("mlp"), worker=worker)
    eager, default = session.run("eager"), session.run("default")
    found = kernels_with_provenance(default)
    relus = [p for name, p in found if "relu" in name]
    assert len(relus) == 2 and len({p.handle for p in relus}) == 2  # one name, two kernels
    modules = {n.name: n.module for n in default.graph_nodes}
    assert [modules[p.pre_grad[0]] for p in relus] == ["net.1", "net.3"]
    links = run_links(eager, default)
    sources = iteration_sources(eager)
    relu_indices = [i for i, (name, _) in enumerate(found) if "relu" in name]
    linked = [sorted(sources[e].module for e in links.table[links.table.compiled_index == i].eager_index)
              for i in relu_indices]
    assert links.kind == "provenance" and linked == [["net.1"], ["net.3"]]


@pytest.fixture(scope="module")
def plain_names(tmp_path_factory: pytest.TempPathFactory) -> tuple[Session, Session]:
    """linear_ln_gelu with descriptive kernel names off, compiled twice in a worker with an empty Inductor
    cache: the first compile misses the FX-graph cache, the second hits it."""
    with Worker(cache_dir=str(tmp_path_factory.mktemp("inductor"))) as worker:
        config = small("tests.models_for_tests:plain_names_ln_gelu")
        return run_session(config, worker=worker), run_session(config, worker=worker)


def test_with_descriptive_names_off_the_links_are_unchanged(plain_names: tuple[Session, Session],
                                                            ln_gelu_session: Session) -> None:
    cold, _ = plain_names
    names = list(iteration_kernels(cold.run("default")).name)
    assert not any("gelu" in n or "layer_norm" in n for n in names) and any(re.fullmatch(r"cpp__\d+", n)
                                                                             for n in names)
    plain = run_links(cold.run("eager"), cold.run("default"))
    descriptive = run_links(ln_gelu_session.run("eager"), ln_gelu_session.run("default"))
    assert plain.kind == descriptive.kind == "provenance"
    assert plain.table.to_dict("records") == descriptive.table.to_dict("records")


def test_a_cache_hit_compile_gives_the_same_provenance(plain_names: tuple[Session, Session]) -> None:
    cold, warm = (s.run("default") for s in plain_names)
    assert (cold.compile.cache, warm.compile.cache) == ("cold", "warm")
    assert [g.cache for g in cold.provenance] == ["miss"] and [g.cache for g in warm.provenance] == ["hit"]
    assert [p.as_json() for p in iteration_provenance(cold)] == [p.as_json() for p in iteration_provenance(warm)]


def test_a_train_pass_has_backward_kernels_with_their_own_provenance(worker: Worker) -> None:
    session = run_session(small("linear_ln_gelu", pass_="train"), worker=worker)
    default = session.run("default")
    assert sorted(g.cache != "" for g in default.provenance) == [True, True]  # a forward and a backward graph
    found = [p for p in kernel_provenance(default) if p is not None]
    backward = [p for p in found if p.backward]
    assert backward and {p.graph for p in backward} != {p.graph for p in found if not p.backward}
    assert any("backward" in p.handle for p in backward)
    assert all(lines(p.source) == {line_of("return F.gelu(self.norm")} for p in backward)
    assert run_links(session.run("eager"), default).kind == "provenance"


def test_each_side_of_a_graph_break_maps_to_its_own_graph(worker: Worker) -> None:
    session = run_session(small("graph_break"), worker=worker)
    default = session.run("default")
    found = [p for p in kernel_provenance(default) if p is not None]
    assert {p.dynamo_graph for p in found} == {0, 1}
    after = [p for p in found if p.dynamo_graph == 1]
    assert lines([s for p in after for s in p.source]) == {line_of("h = h * 2.0"),
                                                            line_of("return torch.relu(self.second(h)")}
    view = source_view(session.run("eager"), default)
    (broken,) = [s for s in view.separations if s.reason == "graph break"]
    assert lines([broken.before.source, broken.after.source]) == {line_of("if h.mean().item()"),
                                                                  line_of("h = h * 2.0")}
    assert "item()" in broken.detail and broken.before.code.startswith("if h.mean().item()")


def test_the_custom_op_is_what_keeps_its_neighbours_apart(worker: Worker) -> None:
    session = run_session(small("custom_op"), worker=worker)
    view = source_view(session.run("eager"), session.run("default"))
    custom = [s for s in view.separations if s.reason == "custom op"]
    assert custom and all("opaque_swish" in s.detail for s in custom)
    assert {int(n) for n in view.lines.line} == {line_of("h = torch.tanh(self.linear(x))"),
                                                 line_of("h = opaque_swish(h)"), line_of("torch.sigmoid(h) + h")}
    assert view.lines.code.str.len().min() > 0  # each line's text, read in the worker


MOVABLE = '''
import torch
from torch import nn


class Chain(nn.Module):
    def forward(self, x):
        return torch.sigmoid(x * 3.0) + 1.0


def factory(dim, batch, seq):
    return Chain(), torch.randn(batch, dim)
'''


def test_a_model_file_that_moved_a_line_gets_its_new_line_not_the_cached_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Inductor's caches key a graph by its ops: the same graph from a file whose lines moved must compile again
    (the source is in the key), or a cache hit would name the line where the op used to be."""
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))  # the capture's and the timing processes'
    file = tmp_path / "movable_model.py"
    found = []
    for prefix in ("", "# two lines\n# moved it down\n"):
        file.write_text(prefix + MOVABLE)
        with Worker(cache_dir=str(tmp_path / "cache")) as worker:
            session = run_session(small("movable_model:factory", modes=("eager", "default")), worker=worker)
        run = session.run("default")
        assert run.compile is not None
        ((_, kernel),) = [(n, p) for n, p in kernels_with_provenance(run) if n.startswith("cpp_fused")]
        found.append(({int(s.rpartition(":")[2]) for s in kernel.source if "movable_model" in s},
                      run.compile.cache))
    line = next(i + 1 for i, text in enumerate(file.read_text().splitlines()) if "torch.sigmoid" in text)
    assert found == [({line - 2}, "cold"), ({line}, "cold")]


@pytest.fixture(scope="module")
def branching_twice(tmp_path_factory: pytest.TempPathFactory) -> tuple[Session, Session]:
    """branching compiled twice in a worker with an empty Inductor cache: a miss, then a hit."""
    with Worker(cache_dir=str(tmp_path_factory.mktemp("inductor"))) as worker:
        return run_session(small("branching"), worker=worker), run_session(small("branching"), worker=worker)


def test_the_scheduler_says_why_the_softmax_and_the_column_mean_did_not_fuse(
        branching_twice: tuple[Session, Session]) -> None:
    cold, warm = (s.run("default") for s in branching_twice)
    ((graph, refused),) = [(g, g.no_fusion) for g in cold.provenance]
    for r in refused:
        print(f"{r.node1} | {r.node2}: {r.text} ({', '.join(r.loops1)} vs {', '.join(r.loops2)}) -> {plain_words(r)}")
    # the mean over the batch (1×32 reducing 8) shares nothing with softmax's row max (8×1 reducing 32)
    amax, mean = (next(r for r in refused if r.reason == "no shared data" and node in r.post_grad1
                       and other in r.post_grad2) for node, other in (("amax", "mean"), ("mean", "div")))
    assert amax.loops1 == ["8×1 ÷ 32"] and amax.loops2 == ["1×32 ÷ 8"] and amax.buffers2 == ["buf4"]
    assert plain_words(amax) == ("Inductor: the two loops share no data (8×1 reducing 32 vs 1×32 reducing 8): "
                                 "fusing them would save no memory traffic")
    assert mean.loops2 == ["8×32"]
    assert any(r.reason == "intermediate nodes between node1 & node2" for r in refused)
    assert graph.cache == "miss" and [g.cache for g in warm.provenance] == ["hit"]
    assert warm.provenance[0].no_fusion == refused  # the hit replays no scheduling: what the miss logged is kept
    # the C++ backend writes the loops it was refused to fuse into one kernel function all the same: on the CPU
    # no refusal lies across a boundary, and the ✂ (each side of the GEMMs) keep their category alone
    kernels = [k for g in compiled_graphs(cold) for k in g.kernels.values()]
    assert refusals(cold, kernels) == []
    view = source_view(branching_twice[0].run("eager"), cold)
    assert [(s.reason, s.inductor) for s in view.separations] == [("library call", ())] * 2
