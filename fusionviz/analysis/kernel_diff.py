"""The difference between two runs by kernel name, and what each of B's kernels took the place of in A: the A
kernels linked to it (`links.run_links`: Inductor's records where both runs kept them, else op families), so
that a row such as `triton_poi_fused_addmm_relu_0` says which eager ops went into it, not only that it is new."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd

from fusionviz.analysis.headline import MECHANISM_CHARS, Headline, count_words, micros, signed
from fusionviz.analysis.kernel_tables import BUSY_US, KERNEL_US, iteration_kernels, per_name
from fusionviz.analysis.links import run_links
from fusionviz.analysis.provenance import LinkKind
from fusionviz.records.session import ModeRun

DIFF_COLUMNS: dict[str, str] = {
    "name": "kernel name",
    "kernel_class": "its class",
    "per_iteration_a": "launches per iteration in A",
    "us_per_iteration_a": "µs per iteration in A",
    "per_iteration_b": "launches per iteration in B",
    "us_per_iteration_b": "µs per iteration in B",
    "count_diff": "launches per iteration, B - A",
    "us_diff": "µs per iteration, B - A",
    "replaced": "A's kernels linked to B's kernels of this name, by launching op (kernel name where none), each "
                "×count; '(shared)' where that A kernel went into other B kernels too (a GEMM's bias add)",
    "replaced_per_iteration": "how many A kernels those are, in the representative iterations",
    "replaced_us_per_iteration": "their µs (a shared A kernel counts whole on each B kernel it went into)",
    "ended_in": "the B kernels A's kernels of this name went into, each ×count",
}


@dataclass(frozen=True)
class KernelDiff:
    """Two runs' kernels by name (`table`: DIFF_COLUMNS, largest time change first) and what the links between
    them come from: "provenance" (Inductor's records and the eager ops' lines) or "names" (op families)."""

    kind: LinkKind
    table: pd.DataFrame


def kernel_diff(a: ModeRun, b: ModeRun) -> KernelDiff:
    """Kernels per iteration and µs per iteration by name in two runs, B minus A, and for each of B's kernels
    the A kernels it replaced (A taken as the run before fusion: eager, for a compiled B)."""
    sa, sb = per_name(a), per_name(b)
    ia = max(a.summary.iterations if a.summary else 1, 1)
    ib = max(b.summary.iterations if b.summary else 1, 1)
    left = sa.assign(us_per_iteration=sa.total_us / ia)[["name", "kernel_class", "per_iteration", "us_per_iteration"]]
    right = sb.assign(us_per_iteration=sb.total_us / ib)[["name", "kernel_class", "per_iteration", "us_per_iteration"]]
    merged = left.merge(right, on=["name", "kernel_class"], how="outer", suffixes=("_a", "_b")).fillna(0.0)
    merged["count_diff"] = merged.per_iteration_b - merged.per_iteration_a
    merged["us_diff"] = merged.us_per_iteration_b - merged.us_per_iteration_a
    ka, kb = iteration_kernels(a), iteration_kernels(b)
    links = run_links(a, b, ka, kb)
    pairs = list(dict.fromkeys(zip(links.table.eager_index, links.table.compiled_index, strict=True)))
    replaced = pd.DataFrame(_replaced(ka, kb, pairs), columns=["name", "replaced", "replaced_per_iteration",
                                                              "replaced_us_per_iteration", "ended_in"])
    merged = merged.merge(replaced, on="name", how="left").fillna(
        {"replaced": "", "replaced_per_iteration": 0, "replaced_us_per_iteration": 0.0, "ended_in": ""})
    merged["replaced_per_iteration"] = merged.replaced_per_iteration.astype(int)
    order = merged.us_diff.abs().sort_values(ascending=False, kind="stable").index
    return KernelDiff(links.kind, merged.loc[order].reset_index(drop=True)[list(DIFF_COLUMNS)])


def _replaced(ka: pd.DataFrame, kb: pd.DataFrame, pairs: list[tuple[int, int]]
              ) -> list[tuple[str, str, int, float, str]]:
    """Per kernel name linked either side: the name; the A kernels B's kernels of that name replaced, in words,
    how many and their µs; and the B kernels A's kernels of that name went into, in words."""
    names_a, names_b = [str(n) for n in ka.name], [str(n) for n in kb.name]
    shorts_b, durations_a = [str(n) for n in kb.short_name], [float(d) for d in ka.dur_us]
    labels_a = [op if "::" in op else short for op, short in zip(map(str, ka.launch_op), ka.short_name, strict=True)]
    went_to: dict[int, set[str]] = {}  # A kernel -> the B names it went into
    took: dict[str, dict[int, None]] = {}  # B name -> its A kernels, in launch order, each once
    into: dict[str, dict[int, None]] = {}  # A name -> the B kernels its kernels went into, likewise
    for ai, bi in sorted(pairs):
        went_to.setdefault(ai, set()).add(names_b[bi])
        took.setdefault(names_b[bi], {})[ai] = None
    for ai, bi in sorted(pairs, key=lambda p: p[1]):
        into.setdefault(names_a[ai], {})[bi] = None
    return [(name, _counted((labels_a[ai], len(went_to[ai]) > 1) for ai in took.get(name, ())),
             len(took.get(name, ())), sum(durations_a[ai] for ai in took.get(name, ())),
             _counted((shorts_b[bi], False) for bi in into.get(name, ()))) for name in {**took, **into}]


def _counted(labels: Iterable[tuple[str, bool]]) -> str:
    """Labels, each with whether it is shared, in order of first appearance and counted: "aten::addmm ×2
    (shared), aten::clamp_min ×2"."""
    counts = Counter(labels)  # in the order of first appearance
    return ", ".join(f"{label} ×{n}{' (shared)' if shared else ''}" for (label, shared), n in counts.items())


def pair_headline(summary: pd.DataFrame, diff: KernelDiff) -> Headline:
    """What the Trace explorer's comparison of two runs leads with: B's kernels and kernel time against A's, read
    aloud ("B: 18 kernels → 1, kernel time 740 µs → 40 µs"); as its mechanism, the kernel of B's own that took
    the place of most of A's (else the kernel whose time changed most); the exact figures as its details.
    `summary` is `kernel_tables.pair_summary` of the two runs, `diff` their `kernel_diff`. No speedup: profiled
    iterations are slowed by the profiler."""
    figures = summary.set_index("quantity")
    (ka, kb), (ua, ub), (ba, bb) = ((float(figures.at[q, "A"]), float(figures.at[q, "B"]))
                                    for q in ("kernels per iteration", KERNEL_US, BUSY_US))
    kernels = f"{ka:g} kernels → {kb:g}" if ka != kb else f"still {count_words(kb, 'kernel')}"
    text = f"B: {kernels}, kernel time {micros(ua, read=True)} → {micros(ub, read=True)}"
    table = diff.table
    mechanism = ""
    if not table.empty:
        new = table[table.per_iteration_a == 0]  # B's own kernels: what took the place of A's
        most = new.loc[new.replaced_per_iteration.idxmax()] if not new.empty else None
        if most is not None and most.replaced_per_iteration > 1:
            name, says = str(most["name"]), f" takes the place of {int(most.replaced_per_iteration)} of A's kernels."
        else:
            top = table.iloc[0]
            name, says = str(top["name"]), f" changed most: {signed(float(top.us_diff))} µs per iteration."
        room = MECHANISM_CHARS - len(says)
        mechanism = (name if len(name) <= room else name[:room - 1] + "…") + says
    details = (f"A runs {ka:g} kernels per iteration, B {kb:g}.",
               f"Kernel time per iteration, every stream added: A {micros(ua)}, B {micros(ub)}; the GPU busy "
               f"(overlapping streams counted once): A {micros(ba)}, B {micros(bb)}.",
               "Both are profiled iterations, which the profiler slows, so no speedup is claimed.")
    return Headline(text, mechanism, details)
