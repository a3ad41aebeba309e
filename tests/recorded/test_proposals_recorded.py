"""The proposals of shipped sessions (analysis/proposals.py), printed: what the lab's "Try the fix" says of them."""

from __future__ import annotations

from pathlib import Path

from fusionviz.analysis.report import analyse
from fusionviz.records.files import open_path

SESSIONS = Path(__file__).resolve().parents[2] / "sessions"


def proposed(name: str) -> list[tuple[str, str | None]]:
    found = analyse(open_path(SESSIONS / name)).proposals
    print(f"\n{name}:")
    for p in found:
        print(f"  [{p.rule}] {p.variant or 'advice'}: {p.diagnosis} → {p.expects}")
    return [(p.rule, p.variant) for p in found]


def test_graph_break_gets_advice_for_its_branch_and_its_input_copy() -> None:
    """Both compiled modes broke at `if h.mean().item() > 0`: capture_scalar_outputs alone would move the break to
    the branch, so that is advice, said once; eager as a CUDA graph is in the session already (not applicable:
    the `.item()` syncs), so the host-bound default proposes nothing more; reduce-overhead's input copy is advice."""
    assert proposed("h100_graph_break_512x256_float32.json.gz") == [("scalar break", None), ("input copies", None)]
    found = analyse(open_path(SESSIONS / "h100_graph_break_512x256_float32.json.gz")).proposals
    assert "torch.where" in found[0].expects
    print("\n" + "\n".join(f"{p.diagnosis} → {p.expects}" for p in found))


def test_gpt2_and_the_custom_op_get_advice_only() -> None:
    assert proposed("h100_hf_gpt2_768x4x128_bfloat16.json.gz") == [("input copies", None)]
    assert proposed("h100_custom_op_512x256_float32.json.gz") == [("input copies", None), ("custom op", None)]
