"""The proposals a session's diagnosis points to (analysis/proposals.py), one rule at a time, on hand-made
sessions: each names its evidence, says what it expects, and is never a variant the session already ran."""

from __future__ import annotations

from fusionviz.analysis.bound import Bound
from fusionviz.analysis.cuda_graphs import Coverage, InputCopies
from fusionviz.analysis.proposals import proposals
from fusionviz.analysis.report import analyse
from fusionviz.analysis.separations import Separation
from fusionviz.records.session import GraphBreak, GraphNode, Session
from tests.unit.factories import k, run, session

ITEM = "Unsupported Tensor.item() call with capture_scalar_outputs=False"


def broken(line: str, *modes: str) -> Session:
    """eager and `modes`, each compiled as 2 graphs broken at `.item()` on `line`."""
    runs = [run("eager", [k("add", 0, 10)])]
    for mode in modes:
        r = run(mode, [k("triton_poi_fused_add_0", 0, 5)], graphs=2)
        r.graph_breaks = [GraphBreak(ITEM, f"/home/u/zoo.py:142 in forward: {line}  # the break")]
        runs.append(r)
    return session(*runs)


def test_a_break_at_item_that_decides_a_branch_is_advice_the_option_alone_would_move_it() -> None:
    """On the zoo's graph_break (`if h.mean().item() > 0:`) capture_scalar_outputs leaves 2 graphs: the break moves
    to the branch (tests/integration/test_variants.py measures it). So no button: advice to write the branch as
    tensors, and which variant compiles it as one graph then."""
    (found,) = proposals(broken("if h.mean().item() > 0:", "default"), {}, {}, {})
    assert (found.rule, found.variant) == ("scalar break", None)
    assert found.diagnosis == ("default compiled 2 graphs: Dynamo broke at a tensor's .item() at zoo.py:142 "
                               "(if h.mean().item() > 0:).")
    assert "the break moves to the branch" in found.expects and "torch.where" in found.expects
    assert "default+capture_scalar_outputs can compile it as one graph" in found.expects


def test_where_the_scalar_feeds_arithmetic_the_option_is_proposed_for_one_graph() -> None:
    (found,) = proposals(broken("return y * s.item()", "default"), {}, {}, {})
    assert (found.rule, found.variant) == ("scalar break", "default+capture_scalar_outputs")
    assert found.expects.startswith("graphs 2 → 1: the value stays on the device")


def test_one_break_seen_by_two_modes_is_one_piece_of_advice() -> None:
    found = proposals(broken("if h.mean().item() > 0:", "default", "reduce-overhead"), {}, {}, {})
    assert [(p.rule, p.variant) for p in found] == [("scalar break", None)]


def test_a_variant_already_run_or_already_capturing_is_not_proposed() -> None:
    ran = broken("return y * s.item()", "default", "default+capture_scalar_outputs")
    assert proposals(ran, {}, {}, {}) == []
    other = broken("return y * s.item()", "default+freezing")
    assert [p.variant for p in proposals(other, {}, {}, {})] == ["default+freezing+capture_scalar_outputs"]


def test_a_break_for_another_reason_proposes_nothing() -> None:
    s = broken("print(x)", "default")
    s.runs[1].graph_breaks[0].reason = "call_function BuiltinVariable(print)"
    assert proposals(s, {}, {}, {}) == []


def test_recompiles_propose_mark_dynamic() -> None:
    r = run("default", [k("triton_poi_fused_add_0", 0, 5)], graphs=1)
    r.recompiles = 3
    (found,) = proposals(session(run("eager", [k("add", 0, 10)]), r), {}, {}, {})
    assert (found.rule, found.variant) == ("recompiles", "default+mark_dynamic=0")
    assert "default recompiled 3 times" in found.diagnosis and "recompiles 3 → 0" in found.expects
    r.mode = "default+mark_dynamic=0"
    assert proposals(session(run("eager", [k("add", 0, 10)]), r), {}, {}, {}) == []


def host_bound(device_kind: str, *modes: str) -> tuple[Session, dict[str, Bound]]:
    s = session(*(run(m, [k("triton_poi_fused_add_0", 0, 5)]) for m in modes), device_kind=device_kind)
    kind = "host-bound" if device_kind == "cuda" else None
    return s, {m: Bound(m, 78.1, 39.9, kind, "timing", 70.0, 90.0) for m in modes}  # type: ignore[arg-type]


def test_a_host_bound_compiled_mode_proposes_cuda_graphs_on_a_gpu() -> None:
    found = proposals(*host_bound("cuda", "eager", "default"), {}, {})
    assert [(p.rule, p.variant) for p in found] == [("host-bound", "reduce-overhead"),
                                                    ("host-bound", "eager_cuda_graph")]
    assert found[0].diagnosis == ("default is host-bound: 78.1 µs of host work per call against 39.9 µs of GPU "
                                  "time, so the GPU waits for the host.")
    assert found[0].expects == ("the host's 78 µs per call replaced by replaying CUDA graphs: time per call toward "
                                "the GPU's 40 µs.")
    # already run: nothing; reduce-overhead's own host-bound class proposes nothing either
    assert proposals(*host_bound("cuda", "eager", "default", "reduce-overhead", "eager_cuda_graph"), {}, {}) == []
    # the CPU has no class: nothing
    assert proposals(*host_bound("cpu", "eager", "default"), {}, {}) == []


def test_input_copies_under_cuda_graphs_are_advice() -> None:
    s = session(run("eager", [k("add", 0, 10)]), run("reduce-overhead", [k("triton_poi_fused_add_0", 0, 5)]))
    copies = Coverage("reduce-overhead", (), (), 1, (), InputCopies(1.0, 7.55, 524288, "dtype"), "")
    (found,) = proposals(s, {}, {"reduce-overhead": copies}, {})
    assert (found.rule, found.variant, found.advice) == ("input copies", None, True)
    assert found.diagnosis == ("reduce-overhead copies its inputs into the CUDA graphs' static buffers on every "
                               "call: 1 copy (524 kB, 7.55 µs).")
    assert "static buffer" in found.expects and "mark_static_address" in found.expects
    none = Coverage("reduce-overhead", (), (), 1, (), InputCopies(0.0, 0.0, 0, ""), "")
    assert proposals(s, {}, {"reduce-overhead": none}, {}) == []


def test_a_boundary_at_a_custom_op_is_advice_naming_what_inductor_needs() -> None:
    s = session(run("eager", [k("add", 0, 10)]), run("default", [k("triton_poi_fused_add_0", 0, 5)]))
    a, b = (GraphNode(graph=0, name="mul", op="mul", module="", source=""),
            GraphNode(graph=0, name="swish", op="opaque_swish", module="", source=""))
    sep = Separation(a, b, ("triton_poi_fused_mul_0:0",), ("torch.ops.my.swish.default:1",), "custom op", "")
    library = Separation(a, b, ("triton_poi_fused_mul_0:0",), ("extern_kernels.mm:1",), "library call", "")
    (found,) = proposals(s, {}, {}, {"default": [sep, library], "reduce-overhead": [sep]})
    assert (found.rule, found.variant) == ("custom op", None)
    assert found.diagnosis.startswith("default: torch.ops.my.swish.default is opaque to Inductor")
    assert "fake (meta) implementation" in found.expects and "decomposition" in found.expects


def test_plain_traces_get_no_proposals() -> None:
    s = broken("return y * s.item()", "default")
    s.source = "trace"
    assert proposals(s, {}, {}, {}) == [] and analyse(s).proposals == []


def test_the_report_wires_the_rules_together() -> None:
    s = broken("return y * s.item()", "default", "reduce-overhead")
    assert [p.variant for p in analyse(s).proposals] == ["default+capture_scalar_outputs",
                                                         "reduce-overhead+capture_scalar_outputs"]
