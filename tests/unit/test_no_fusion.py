"""Inductor's refused fusions, worded and put on the boundaries they explain, on hand-made records."""

from __future__ import annotations

from fusionviz.analysis.no_fusion import plain_words
from fusionviz.analysis.report import analyse
from fusionviz.analysis.source_view import source_view
from fusionviz.cli.inspect import inspect_lines
from fusionviz.cli.inspection import inspect_report
from fusionviz.records.session import GraphNode, GraphProvenance, NoFusion, OpSource, Session
from tests.unit.factories import k, run, session
from tests.unit.test_provenance import ZOO, c, mappings, wrapper

HANDLES = ["triton_per_fused__softmax_0:1", "triton_per_fused_mean_1:2", "triton_poi_fused_add_mul_2:3"]
NO_SHARED = NoFusion("op1", "op2", "no shared data", "no shared data", post_grad1=["erf", "amax", "exp", "sum_1"],
                     post_grad2=["erf", "mean"], buffers1=["buf1"], buffers2=["buf2"], loops1=["512×1 ÷ 256"],
                     loops2=["1×256 ÷ 512"])
FUSED_LATER = NoFusion("op1", "op3", "intermediate nodes between node1 & node2",
                       "intermediate nodes between node1 & node2", post_grad1=["amax"], post_grad2=["div"])


def branching_runs(refused: list[NoFusion]) -> tuple:
    """branching as a GPU compiles it: softmax's rows, the column mean and the final `rows * cols + h` in three
    kernels (gelu inlined into the first two), with the refusals Inductor's scheduler logged."""
    compiled = run("default", [c(h.split(":")[0], i, op_id=i) for i, h in enumerate(HANDLES)])
    compiled.output_code = [wrapper(HANDLES)]
    post = {HANDLES[0]: ["erf", "amax", "exp", "sum_1", "div"], HANDLES[1]: ["erf", "mean"],
            HANDLES[2]: ["mul_3", "add_1"]}
    pre = {"erf": ["h"], "amax": ["rows"], "exp": ["rows"], "sum_1": ["rows"], "div": ["rows"], "mean": ["cols"],
           "mul_3": ["mul"], "add_1": ["add"]}
    compiled.provenance = [GraphProvenance("key0", 0, mappings(post, pre), no_fusion=refused)]
    compiled.graph_nodes = [GraphNode(0, name, op, "", f"{ZOO}:{line}") for name, op, line in
                            (("h", "gelu", 111), ("rows", "softmax", 112), ("cols", "mean", 113), ("mul", "mul", 114),
                             ("add", "add", 114))]
    ops = [("aten::gelu", 111), ("aten::_softmax", 112), ("aten::mean", 113), ("aten::mul", 114), ("aten::add", 114)]
    eager = run("eager", [k(n, i, 10, op_id=i, launch_op=n) for i, (n, _) in enumerate(ops)])
    eager.op_sources = [OpSource(n, n, "", f"{ZOO}:{line}", f"code {line}") for n, line in ops]
    return eager, compiled


def test_each_reason_is_said_in_plain_words_with_the_loop_sizes() -> None:
    assert plain_words(NO_SHARED) == ("Inductor: the two loops share no data (512×1 reducing 256 vs 1×256 reducing "
                                      "512): fusing them would save no memory traffic")
    sizes = NoFusion("op0", "op1", "numel/rnumel mismatch (reduce) (%s, %s), (%s, %s)",
                     "numel/rnumel mismatch (reduce) (512, 1), (512, 256)", loops1=["512"], loops2=["512×256"])
    assert plain_words(sizes) == "Inductor: the two loops have different sizes (512 vs 512×256)"
    devices = NoFusion("op0", "op1", "device mismatch (%s vs %s)", "device mismatch (cpu vs cuda:0)")
    assert plain_words(devices) == "Inductor: they run on different devices (device mismatch (cpu vs cuda:0))"
    assert plain_words(NoFusion("op0", "op1", "will create cycle", "will create cycle")) == (
        "Inductor: fusing them would make a kernel wait for its own output (through another kernel)")
    unknown = NoFusion("op0", "op1", "a reason of a later torch (%s)", "a reason of a later torch (7)")
    assert plain_words(unknown) == "Inductor: a reason of a later torch (7)"  # as logged


def test_a_refusal_is_put_on_the_boundary_between_the_kernels_its_sides_ended_in() -> None:
    eager, compiled = branching_runs([NO_SHARED, FUSED_LATER])
    found = source_view(eager, compiled).separations
    assert [(s.before.name, s.after.name, s.reason) for s in found] == [("rows", "cols", "scheduler"),
                                                                         ("cols", "mul", "scheduler")]
    # the inlined gelu (`erf`) is on both sides: the sides are told by what only one of them computes
    assert found[0].inductor == (plain_words(NO_SHARED),)
    assert found[1].inductor == ()  # rows' op1 and op3 fused after all: that refusal explains no boundary
    print("\n".join(found[0].inductor))


def test_runs_without_refusals_keep_the_boundaries_as_they_were() -> None:
    eager, compiled = branching_runs([])
    assert [s.inductor for s in source_view(eager, compiled).separations] == [(), ()]


def test_inspect_lists_each_boundary_with_inductors_reason_under_it() -> None:
    report = inspect_report(analyse(session(*branching_runs([NO_SHARED]))), "s")
    (compiled,) = [r for r in report["runs"] if r["label"] == "default"]
    assert compiled["separations"][0]["inductor"] == [plain_words(NO_SHARED)]
    assert compiled["separations"][0]["before"] == {"source": f"{ZOO}:112", "op": "softmax", "module": ""}
    text = inspect_lines(report, all_kernels=False)
    at = text.index("    zoo.py:112 softmax | zoo.py:113 mean: scheduler: Inductor's scheduler kept them in separate "
                    "kernels (no shared loop it could fuse them into)")
    assert text[at + 1] == f"      {plain_words(NO_SHARED)}"


def test_sessions_with_and_without_the_refusals_open_both_ways() -> None:
    eager, compiled = branching_runs([NO_SHARED])
    saved = session(eager, compiled).to_dict()
    assert Session.from_dict(saved).run("default").provenance[0].no_fusion == [NO_SHARED]
    for graph in saved["runs"][1]["provenance"]:
        del graph["no_fusion"]  # a session written before the field
    assert Session.from_dict(saved).run("default").provenance[0].no_fusion == []
