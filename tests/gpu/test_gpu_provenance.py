"""On the GPU machine: what fused into what, from Inductor's own records (skipped without CUDA).

    FUSIONVIZ_GPU_TESTS=1 python -m pytest -q tests/gpu/test_gpu_provenance.py
"""

from __future__ import annotations

import pytest

from fusionviz.analysis.kernel_tables import iteration_kernels
from fusionviz.analysis.links import run_links
from fusionviz.analysis.provenance import compiled_graphs, iteration_provenance, iteration_sources, kernel_provenance
from fusionviz.analysis.source_view import source_view
from fusionviz.measure.client import run_session
from fusionviz.measure.worker import Worker
from fusionviz.records.config import RunConfig
from fusionviz.records.session import Session

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def mlp_gpu(worker: Worker) -> Session:
    config = RunConfig(model="mlp", dim=512, batch=256, device="cuda:0", dtype="float32",
                       modes=("eager", "default", "reduce-overhead"), rounds=5, processes=1)
    return run_session(config, worker=worker)


def test_the_two_bias_relu_kernels_of_one_name_are_two_kernels_of_two_modules(mlp_gpu: Session) -> None:
    default = mlp_gpu.run("default")
    kernels = iteration_kernels(default)
    found = iteration_provenance(default)
    epilogues = [p for name, p in zip(kernels.name, found, strict=True)
                 if name.startswith("triton_poi_fused_addmm_relu")]
    assert len(epilogues) == 2 and len({p.handle for p in epilogues}) == 2
    modules = {n.name: n.module for n in default.graph_nodes}
    assert [sorted(modules[n] for n in p.pre_grad) for p in epilogues] == [["net.0", "net.1"], ["net.2", "net.3"]]
    assert all(p is not None for p in found)  # every launch, the cuBLAS GEMMs included, is a kernel of the wrapper


def test_the_eager_relus_link_to_their_own_epilogue_kernel(mlp_gpu: Session) -> None:
    eager, default = mlp_gpu.run("eager"), mlp_gpu.run("default")
    links = run_links(eager, default)
    assert links.kind == "provenance"
    names = list(iteration_kernels(default).name)
    sources = iteration_sources(eager)
    relu_targets = {module: [names[int(c)] for e, c in zip(links.table.eager_index, links.table.compiled_index,
                                                            strict=True) if sources[int(e)].module == module]
                    for module in ("net.1", "net.3")}
    assert all(len(t) == 1 and t[0].startswith("triton_poi_fused_addmm_relu") for t in relu_targets.values())
    first, second = ([int(c) for e, c in zip(links.table.eager_index, links.table.compiled_index, strict=True)
                      if sources[int(e)].module == module] for module in ("net.1", "net.3"))
    assert first != second


def test_cuda_graph_replays_keep_the_handles_of_the_wrapper(mlp_gpu: Session) -> None:
    """Replayed kernels all carry the compiled region's op: each still takes the next handle of its own run's
    wrapper (a GEMM cuBLAS splits in two shares its call's), and the two bias+ReLU launches two handles."""
    replayed = mlp_gpu.run("reduce-overhead")
    kernels = iteration_kernels(replayed)
    found = [p for p, c in zip(iteration_provenance(replayed), kernels.kernel_class, strict=True) if c != "copy"]
    assert None not in found
    wrapper = [h for g in compiled_graphs(replayed) if not g.backward for h in g.handles]
    assert list(dict.fromkeys(p.handle for p in found if p is not None)) == wrapper
    epilogues = [p.handle for n, p in zip(kernels.name, iteration_provenance(replayed), strict=True)
                 if p is not None and n.startswith("triton_poi_fused_addmm_relu")]
    assert len(epilogues) == 2 and len(set(epilogues)) == 2
    assert run_links(mlp_gpu.run("eager"), replayed).kind == "provenance"


def test_layer_norm_and_gelu_end_in_one_triton_kernel_of_the_forward_line(worker: Worker) -> None:
    config = RunConfig(model="linear_ln_gelu", dim=512, batch=256, device="cuda:0", modes=("eager", "default"),
                       rounds=5, processes=1)
    session = run_session(config, worker=worker)
    eager, default = session.run("eager"), session.run("default")
    kernels = iteration_kernels(default)
    found = iteration_provenance(default)
    (fused,) = [p for name, p in zip(kernels.name, found, strict=True) if name.startswith("triton_per_fused")]
    assert set(fused.pre_grad) == {"layer_norm", "gelu"} and len(fused.source) == 1
    links = run_links(eager, default)
    fused_index = [p.handle for p in found].index(fused.handle)
    assert links.kind == "provenance"
    assert set(links.table[links.table.compiled_index == fused_index].eager_index) == {1, 2}


def test_a_train_pass_on_the_gpu_has_backward_kernels_with_their_own_lines(worker: Worker) -> None:
    config = RunConfig(model="mlp", dim=512, batch=256, device="cuda:0", modes=("eager", "default"), rounds=5,
                       processes=1, pass_="train")
    session = run_session(config, worker=worker)
    found = [p for p in kernel_provenance(session.run("default")) if p is not None]
    assert any(p.backward for p in found) and any(not p.backward for p in found)
    assert all(p.source for p in found)


@pytest.mark.parametrize(("model", "reason"), [("branching", "library call"), ("argmax_gather", "library call"),
                                                ("graph_break", "graph break"), ("custom_op", "custom op")])
def test_each_limit_model_shows_what_kept_its_ops_apart(worker: Worker, model: str, reason: str) -> None:
    """On the H200 branching's softmax, mean and add end in one persistent kernel (the column mean a split
    reduction ahead of it) and argmax_gather's gather in its argmax's kernel: only their Linears' library GEMMs
    stand apart (the sessions in tests/data/h200_prov_*; tests/recorded/test_recorded_provenance.py)."""
    config = RunConfig(model=model, dim=512, batch=256, device="cuda:0", modes=("eager", "default"), rounds=5,
                       processes=1)
    session = run_session(config, worker=worker)
    view = source_view(session.run("eager"), session.run("default"))
    assert reason in {s.reason for s in view.separations}
