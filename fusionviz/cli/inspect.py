"""`inspect`: the report of a session file or a torch.profiler Chrome trace, as text or JSON. It imports no
torch (that would cost seconds), and pipes: plain text with no progress or colour."""

from __future__ import annotations

import argparse
from pathlib import Path, PurePath
from typing import Any

from fusionviz.cli.reporter import Column, json_text, table, write
from fusionviz.errors import ConfigError
from fusionviz.records.decode import clip

INSPECT_TOP = 20  # kernels ranked by `inspect` unless --top says otherwise
INSPECT_LISTED = 60  # an iteration with at most this many kernels and memory operations is listed in full

LISTED = [Column(fmt=".1f", width=12, suffix=" µs"), Column(align="<", width=17, gap=2), Column(align="<")]
RANKED = [Column("total", ".1f", width=10), Column("share", ".1f", width=6, suffix="%"), Column("count", "d", width=6),
       *(Column(h, ".1f", width=8) for h in ("mean", "min", "p50", "p99", "max")),
       Column("class", align="<", width=16, gap=2), Column("name", align="<")]
IDLE_COLUMNS = ["span", "kernels", "host wait", "between", "unlinked"]


JOB = [Column("rank", "d", width=4), Column("steps", "d", width=5), Column("step ms", ".3g", width=8),
       Column("p10–p90", align="<", width=15, gap=2), Column("kernels", ".4g", width=7), Column("busy", ".0f", width=4,
                                                                                             suffix="%"),
       Column("compute µs", ".1f", width=10), Column("comm µs", ".1f", width=9), Column("overlap", align=">", width=7),
       Column("graphs", ".3g", width=6), Column("splits", ".3g", width=6), Column("file", align="<", gap=2)]


class Inspect:
    name = "inspect"
    help = ("summarise a session file or a torch.profiler Chrome trace; a folder or several traces as one "
            "distributed job, rank by rank; two session files (or one with --modes A,B): the plan diff of two runs")

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("files", nargs="+", metavar="file",
                            help="a session or trace; a folder or several traces: the ranks of one job")
        parser.add_argument("--json", action="store_true")
        parser.add_argument("--top", type=int, default=None, metavar="N",
                            help=f"rank the N kernels with the longest total time (default {INSPECT_TOP})")
        parser.add_argument("--all", dest="all_kernels", action="store_true",
                            help="list every kernel of the representative iteration, however many")
        parser.add_argument("--modes", default=None, metavar="A,B",
                            help="the plan diff of two runs: modes A and B of one session, or of two session files "
                                 "(one mode: the same in both; two session files alone diff their first compiled "
                                 "mode in common)")

    def run(self, args: argparse.Namespace) -> int:
        from fusionviz.analysis.report import Report
        from fusionviz.cli.inspection import inspect_report, job_inspect_report, memory_lines
        from fusionviz.cli.plan import plan_asked, plan_json, plan_lines
        from fusionviz.records.files import open_path

        if args.top is not None and args.top < 1:
            raise ConfigError("--top takes a number of kernels, 1 or more")
        paths = [Path(f) for f in args.files]
        top = args.top or INSPECT_TOP
        diff = plan_asked(paths, args.modes)
        if diff is not None:
            write(json_text(plan_json(diff)) if args.json else "\n".join(plan_lines(diff)))
            return 0
        if len(paths) > 1 or paths[0].is_dir():
            # imported here: a job's process pool needs multiprocessing, which one file does not
            from fusionviz.records.job import read_job

            report = job_inspect_report(read_job(paths), top=top)
        else:
            report = inspect_report(Report(open_path(paths[0])), str(paths[0]), top=top)
        if args.json:
            write(json_text(report))
        else:
            write(*inspect_lines(report, args.all_kernels), *memory_lines(report), *job_lines(report),
                  *cell_lines(report))
        return 0


GRID = [Column("model", align="<"), Column("dim", "d"), Column("batch", "d"), Column("node", align="<", gap=2),
        Column("device", align="<", gap=2), Column("mode", align="<"), Column("speedup", width=7, gap=2),
        Column("p10–p90", width=11), Column("verdict", align="<", gap=2)]


def inspect_lines(report: dict[str, Any], all_kernels: bool) -> list[str]:
    lines = [f"{report['source']}"]
    for run in report["runs"]:
        if run["status"] != "ok":
            why = "not applicable here" if run["status"] == "not_applicable" else "failed"
            lines.append(f"\n{run['label']} on {run['device']}: {why}: {run['reason'] or 'no reason was recorded'}")
            continue
        busy = run["gpu_busy_fraction"]
        whole = run["iterations_from"] == "trace"
        unit = "call" if run["iterations_from"] == "calls" else "iteration"
        window = "the whole trace" if whole else f"{run['iterations']} {unit}(s)"
        each = "" if whole else f" per {unit}"
        memory = run["memory_ops_per_iteration"]
        lines.append(f"\n{run['label']} on {run['device']}: {window}, {run['kernels_per_iteration']:g} kernels{each}"
                     + (f" and {memory:g} memory operation{'' if memory == 1 else 's'}" if memory else "")
                     + (f", GPU busy {busy:.0%}" + (" of a timed call" if run["latency_ms"] else "")
                        if busy is not None else ""))
        if run["latency_ms"]:
            lat, vs = run["latency_ms"], run["speedup"]
            lines.append(f"  latency {lat['median']:.4g} ms per call (p10–p90 {lat['low']:.4g}–{lat['high']:.4g})"
                         + (f"; {vs['median']:.2f}x eager's speed ({vs['low']:.2f}–{vs['high']:.2f}x): {run['verdict']}"
                            if vs else ""))
        if len(run["steps"]) > 1:
            lines.append(f"  kernels in each {unit}: {', '.join(str(n) for n in run['steps'])}")
        lines += [f"  note: {note}" for note in run["notes"]]
        listed = run["kernels"] + run["memory_ops"]
        if all_kernels or len(listed) <= INSPECT_LISTED:
            lines += table(LISTED, [(k["duration_us"], k["class"], clip(k["name"], 90)
                                     + (f"  [{' + '.join(k['fused_ops'])}]" if k["fused_ops"] else ""))
                                    for k in listed], indent="  ", header=False)
        else:
            lines.append(f"  ({len(listed):,} kernels and memory operations in the representative {unit}: "
                         "--all lists them)")
        lines += _top_lines(run, "the whole trace" if whole else f"{run['iterations']} {unit}s")
        lines += _idle_lines(run, unit)
        lines += _separation_lines(run)
    return lines


def _separation_lines(run: dict[str, Any]) -> list[str]:
    """Where the run's fusion stopped (the source view's ✂), with Inductor's own reasons under each."""
    found = run.get("separations") or []
    if not found:
        return []
    lines = ["  where fusion stopped between neighbouring source ops (✂):"]
    for s in found:
        before, after = (f"{PurePath(n['source'].rpartition(':')[0]).name}:{n['source'].rpartition(':')[2]} "
                         f"{n['op']}" if n["source"] else n["op"] for n in (s["before"], s["after"]))
        lines.append(f"    {before} | {after}: {s['reason']}: {s['detail']}")
        lines += [f"      {words}" for words in s["inductor"]]
    return lines


def _top_lines(run: dict[str, Any], over: str) -> list[str]:
    ranked = run["top_kernels"]
    if not ranked:
        return []
    rows = [(k["total_us"], k["pct_of_kernel_time"], k["count"], k["mean_us"], k["min_us"], k["p50_us"],
             k["p99_us"], k["max_us"], k["kernel_class"], clip(k["name"], 80)) for k in ranked]
    return [f"  top {len(ranked)} of {run['distinct_kernels']} kernels by total time over {over} (µs):",
            *table(RANKED, rows, indent="  ")]


def _idle_lines(run: dict[str, Any], unit: str) -> list[str]:
    if not run["idle"] or run["gpu_busy_fraction"] is None:
        return []  # no device kernels: there is no GPU time to break down
    columns = [Column(unit, "d", width=9), *(Column(h, ".1f", width=10) for h in IDLE_COLUMNS),
               Column("busy", ".0f", width=5, suffix="%")]
    rows = [(s["iteration"], s["span_us"], s["kernel_us"], s["host_wait_us"], s["between_kernels_us"],
             s["unattributed_us"], s["busy_pct"]) for s in run["idle"]]
    lines = [f"  GPU time of each profiled {unit} (µs; busy = kernels over the profiled span; see docs/methodology.md, "
             "Definitions):", *table(columns, rows, indent="  ")]
    if run["latency_ms"] and run["profiled_stretch"]:  # the header's busy is over a timed call, unslowed
        lines.append(f"  the profiled {unit}s ran {run['profiled_stretch']:.1f}x as long as a timed call (median): the "
                     "profiler's overhead, which is why each one's busy share is lower than the header's")
    return lines


def job_lines(report: dict[str, Any]) -> list[str]:
    """The ranks of a job side by side (`analysis.job`'s definitions), the slowest and the diverging step."""
    job = report.get("job")
    if job is None:
        return []
    rows = [(r["rank"], r["steps"], r["step_ms"]["median"], f"{r['step_ms']['low']:.3g}–{r['step_ms']['high']:.3g}",
             r["kernels_per_step"], r["busy_pct"] or 0.0, r["compute_us"], r["communication_us"],
             "-" if r["overlap_pct"] is None else f"{r['overlap_pct']:.0f}%", r["graphs_per_step"],
             r["graph_splits_per_step"], r["file"]) for r in job["ranks"]]
    lines = ["\nthe job, rank by rank, per step (comm: communication; overlap: its share hidden behind compute;",
             "graphs: compiled graphs called in regions; splits: those beyond the first in one region, DDP's buckets):",
             *table(JOB, rows, indent="  ")]
    if job["slowest_rank"] is not None:
        lines.append(f"  slowest rank: {job['slowest_rank']} (median step); ranks diverge most in step "
                     f"{job['diverging_step']}, by {job['diverging_spread_ms']:.3g} ms")
    if not job["same_graphs"]:
        lines.append("  note: the ranks did not all call the same compiled graphs")
    return lines


def cell_lines(report: dict[str, Any]) -> list[str]:
    """A grid session's cells: where each ran, the mode's speedup over eager with its interval and the verdict
    (the error where a cell did not run), then where the mode wins."""
    cells = report.get("cells")
    if not cells:
        return []
    mode = cells[0]["mode"]
    rows = [(c["model"], c["dim"], c["batch"], c["node"] or "-", c["device"], c["mode"],
             f"{c['speedup']['median']:.3f}x" if c["speedup"] else "-",
             f"{c['speedup']['low']:.3f}–{c['speedup']['high']:.3f}x" if c["speedup"] else "-",
             clip(c["error"], 100) if c["error"] else c["verdict"]) for c in cells]
    return [f"\n{len(cells)} grid cells, {mode} against eager (speedup: eager's time / {mode}'s, the median of paired "
            "rounds):", *table(GRID, rows, indent="  "), f"  {report['crossover']}"]
