"""Kernel tables as shown and downloaded: one iteration's kernels and per-class statistics (the per-kernel
ranking is trace_stats.kernel_ranking, the difference between two runs kernel_diff)."""

from __future__ import annotations

import pandas as pd

from fusionviz.analysis.provenance import kernel_origins
from fusionviz.analysis.trace_stats import busy_time
from fusionviz.records.derived import derived
from fusionviz.records.kernels import CLASS_DESCRIPTIONS, KERNEL_COLUMNS, MEMORY_CLASS
from fusionviz.records.session import ModeRun


def one_iteration(frame: pd.DataFrame, iteration: int) -> pd.DataFrame:
    """The rows of one profiled iteration of a kernel table, in launch order, renumbered from 0."""
    return frame[frame.iteration == iteration].sort_values("start_us", kind="stable").reset_index(drop=True)


def iteration_rows(run: ModeRun, iteration: int | None = None) -> pd.DataFrame:
    """Every row of one profiled iteration (the representative one by default), kernels and memory
    operations, in launch order."""
    if iteration is None or iteration == run.representative_iteration:
        return _representative_rows(run).copy(deep=False)  # copy-on-write: a caller's change stays its own
    return one_iteration(run.kernel_frame(), iteration)


def iteration_kernels(run: ModeRun, iteration: int | None = None) -> pd.DataFrame:
    """The kernels of one profiled iteration, in launch order: Memcpy/Memset operations are not kernels."""
    if iteration is None or iteration == run.representative_iteration:
        return _representative_kernels(run).copy(deep=False)
    return _kernels_of(iteration_rows(run, iteration))


@derived
def _representative_rows(run: ModeRun) -> pd.DataFrame:
    """The representative iteration's rows, made once per run: most views and analyses of a run start here."""
    return one_iteration(run.kernel_frame(), run.representative_iteration)


@derived
def _representative_kernels(run: ModeRun) -> pd.DataFrame:
    return _kernels_of(_representative_rows(run))


def _kernels_of(rows: pd.DataFrame) -> pd.DataFrame:
    return rows[rows.kernel_class != MEMORY_CLASS].reset_index(drop=True)


def kernel_table(run: ModeRun, all_iterations: bool = False) -> pd.DataFrame:
    """The kernel table of one iteration (or all), memory operations included (class "memory"), as shown and
    downloaded: fused ops as text, and `origin`: where each kernel came from (`provenance.kernel_origins`, which
    says a plain trace's `source_lines` too)."""
    frame = run.kernel_frame().assign(origin=kernel_origins(run))
    if not all_iterations:
        frame = one_iteration(frame, run.representative_iteration)
    shown = frame.assign(fused_ops=frame.fused_ops.map(lambda ops: ", ".join(ops)))
    return shown[[c for c in KERNEL_COLUMNS if c not in ("short_name", "source_lines")] + ["origin"]]


def per_name(run: ModeRun) -> pd.DataFrame:
    """Launches per iteration and total µs by kernel name and class, memory operations included."""
    iterations = max(run.summary.iterations if run.summary else 1, 1)
    grouped = run.kernel_frame().groupby(["name", "kernel_class"], as_index=False).agg(
        count=("dur_us", "size"), total_us=("dur_us", "sum"))
    return grouped.assign(per_iteration=grouped["count"] / iterations)


def class_stats(run: ModeRun) -> pd.DataFrame:
    """Per kernel class, memory operations included: launches, launches per iteration, total and mean µs, with
    the class's description; longest total first."""
    grouped = per_name(run).groupby("kernel_class", as_index=False).agg(
        count=("count", "sum"), per_iteration=("per_iteration", "sum"), total_us=("total_us", "sum"))
    grouped["mean_us"] = grouped.total_us / grouped["count"]
    grouped["description"] = grouped.kernel_class.map(CLASS_DESCRIPTIONS)
    return grouped.sort_values("total_us", ascending=False, kind="stable").reset_index(drop=True)


# One label, one definition, wherever it is shown (the pair's table and the class chart): a table that summed
# the union of kernel intervals and a chart that added up every stream and the memory operations under the same
# label read 61,540 and 83,000 µs for one trace.
KERNEL_US = "kernel µs per iteration (every stream added, memory operations out)"
BUSY_US = "GPU busy µs per iteration (overlapping streams counted once)"


def kernel_us_by_class(run: ModeRun, classes: pd.DataFrame | None = None) -> dict[str, float]:
    """`KERNEL_US` split by kernel class: each class's kernel durations per iteration, memory operations out
    (from the run's `class_stats`, given when already made)."""
    iterations = max(run.summary.iterations if run.summary else 1, 1)
    stats = class_stats(run) if classes is None else classes
    kernels = stats[stats.kernel_class != MEMORY_CLASS]
    return {str(c): float(us) / iterations for c, us in zip(kernels.kernel_class, kernels.total_us, strict=True)}


def pair_summary(a: ModeRun, b: ModeRun) -> pd.DataFrame:
    """Per-iteration figures of two runs side by side, with B minus A."""
    rows = []
    for title, field_name in (("kernels per iteration", "kernels_per_iteration"), (KERNEL_US, ""),
                              (BUSY_US, "kernel_time_us"), ("iteration span, µs", "span_us"),
                              ("idle µs per iteration", "idle_us"), ("largest gap, µs", "largest_gap_us")):
        va, vb = (float("nan") if r.summary is None else sum(kernel_us_by_class(r).values()) if not field_name
                  else getattr(busy_time(r) if field_name != "kernels_per_iteration" else r.summary, field_name)
                  for r in (a, b))
        rows.append({"quantity": title, "A": va, "B": vb, "B - A": vb - va})
    return pd.DataFrame(rows, columns=["quantity", "A", "B", "B - A"])
