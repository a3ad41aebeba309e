"""What fused into what on the H200, from Inductor's records in sessions recorded there (tests/data/README.md):
the GPU suite's provenance expectations, guarded in the CPU suite."""

from pathlib import Path

import pytest

from fusionviz.analysis.kernel_tables import iteration_kernels
from fusionviz.analysis.links import run_links
from fusionviz.analysis.provenance import compiled_graphs, iteration_lines, iteration_provenance, short_source
from fusionviz.analysis.source_view import source_view
from fusionviz.records.files import open_path
from fusionviz.records.session import Session

DATA = Path(__file__).parent.parent / "data"


def session(model: str) -> Session:
    return open_path(DATA / f"h200_prov_{model}_512x256_float32.json.gz")


@pytest.mark.parametrize("model", ["mlp", "branching", "argmax_gather"])
@pytest.mark.parametrize("mode", ["default", "reduce-overhead"])
def test_each_launch_takes_its_own_runs_handles_in_the_wrappers_order(model: str, mode: str) -> None:
    """A replayed CUDA graph's kernels all carry one op (the compiled region): each still takes its own handle,
    a GEMM cuBLAS splits in two shares its library call's."""
    run = session(model).run(mode)
    kernels = iteration_kernels(run)
    found = [p for p, c in zip(iteration_provenance(run), kernels.kernel_class, strict=True) if c != "copy"]
    assert None not in found
    (graph,) = compiled_graphs(run)
    handles = list(dict.fromkeys(p.handle for p in found if p is not None))
    assert handles == list(graph.handles)
    names = [n for n, c in zip(kernels.name, kernels.kernel_class, strict=True) if c != "copy"]
    assert all(p is not None and (p.handle.startswith("extern_kernels.") or p.handle.rpartition(":")[0] == n)
               for n, p in zip(names, found, strict=True))


def test_the_two_bias_relu_kernels_of_mlp_are_two_handles_under_cuda_graphs_too() -> None:
    for mode in ("default", "reduce-overhead"):
        run = session("mlp").run(mode)
        epilogues = [p for n, p in zip(iteration_kernels(run).name, iteration_provenance(run), strict=True)
                     if n.startswith("triton_poi_fused_addmm_relu")]
        assert [p.handle for p in epilogues if p] == ["triton_poi_fused_addmm_relu_0:2",
                                                      "triton_poi_fused_addmm_relu_0:4"]
        assert run_links(session("mlp").run("eager"), run).kind == "provenance"


def test_max_autotunes_templates_each_keep_their_handle() -> None:
    run = session("mlp").run("max-autotune")
    found = [p.handle for p in iteration_provenance(run) if p is not None]
    assert found == ["triton_tem_fused_addmm_t_0:1", "triton_tem_fused_addmm_relu_t_1:2",
                     "triton_tem_fused_addmm_relu_t_2:3"]


def test_on_the_gpu_branching_splits_its_column_mean_and_only_the_last_gemm_stands_apart() -> None:
    """On the H200 the softmax, the mean and the add end in one persistent kernel; the column mean is a split
    reduction (`triton_red_` then `triton_per_`) ahead of it, so no two neighbouring ops lack a shared kernel
    but the second Linear, a library GEMM."""
    s = session("branching")
    view = source_view(s.run("eager"), s.run("default"))
    assert [(x.before.name, x.after.name, x.reason) for x in view.separations] == [("add", "linear_1",
                                                                                    "library call")]
    (graph,) = compiled_graphs(s.run("default"))
    computing_mean = [h for h, k in graph.kernels.items() if "cols" in k.computes]
    assert [h.split("_fused")[0] for h in computing_mean] == ["triton_red", "triton_per", "triton_per"]


def test_on_the_gpu_argmax_and_its_gather_end_in_one_kernel() -> None:
    """The index from `argmax` is gathered inside the same persistent reduction on the H200: nothing but the
    Linear's library GEMM separates the ops."""
    s = session("argmax_gather")
    view = source_view(s.run("eager"), s.run("default"))
    assert [(x.before.name, x.after.name, x.reason) for x in view.separations] == [("linear", "idx",
                                                                                    "library call")]
    fused = [p for p in iteration_provenance(s.run("default")) if p and p.handle.startswith("triton_")]
    assert [set(p.pre_grad) for p in fused] == [{"idx", "getitem", "mul", "add", "relu"}]


@pytest.mark.parametrize(("model", "expected"), [
    ("mlp", [("extern_kernels.mm:1", ["zoo.py:44"]), ("triton_poi_fused_addmm_relu_0:2", ["zoo.py:44"])]),
    ("argmax_gather", [("extern_kernels.addmm:1", ["zoo.py:128"]),
                       ("triton_per_fused_add_argmax_index_mul_relu_0:2", ["zoo.py:128", "zoo.py:129"])]),
])
def test_compiled_kernels_carry_the_lines_they_came_from(model: str, expected: list[tuple[str, list[str]]]) -> None:
    run = session(model).run("reduce-overhead")
    pairs = {p.handle: [short_source(x) for x in lines]
             for p, lines in zip(iteration_provenance(run), iteration_lines(run), strict=True) if p is not None}
    assert list(pairs.items())[:len(expected)] == expected


@pytest.mark.parametrize("mode", ["default", "reduce-overhead"])
def test_the_attention_kernel_takes_the_fallback_ops_handle_though_an_op_inside_it_launched_it(mode: str) -> None:
    """sessions/h100_transformer_block_256x8x128_float32: the wrapper calls
    `torch.ops.aten._scaled_dot_product_efficient_attention`, whose kernel `_efficient_attention_forward` (an op
    inside it) launches; every kernel of the iteration has its handle, and the attention one links to eager's."""
    path = Path(__file__).parents[2] / "sessions" / "h100_transformer_block_256x8x128_float32.json.gz"
    s = open_path(path)
    run, eager = s.run(mode), s.run("eager")
    kernels = iteration_kernels(run)
    found = iteration_provenance(run)
    (at,) = [i for i, n in enumerate(kernels.name) if n.startswith("fmha_")]
    assert found[at] is not None and "_scaled_dot_product_efficient_attention" in found[at].handle
    assert all(p is not None for p, c in zip(found, kernels.kernel_class, strict=True) if c != "copy")
    links = run_links(eager, run).table
    linked = iteration_kernels(eager).name.iloc[links[links.compiled_index == at].eager_index].tolist()
    assert linked and all(n.startswith("fmha_") for n in linked)
