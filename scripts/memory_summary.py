"""What each recorded session says of memory and CUDA graphs, one block per session, for the closing note of
issue 47:

    python3 scripts/memory_summary.py OUT/*.json.gz

Per mode: how the figures were measured, peak allocated (a call's peak above what it holds between calls), peak
reserved, held between calls (and its inputs), what the first calls kept (pool) and the CUDA-graph pools; a train
pass's saved activations and recomputed ops; for a mode with CUDA graphs, the input copies per call with their
bytes and µs and the capture's skip reasons, or "all captured"; then the default → reduce-overhead step and the
verdict's sentence on the trade."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from fusionviz.analysis.headline import size_words
from fusionviz.analysis.memory import trade_sentence
from fusionviz.analysis.report import analyse
from fusionviz.cli.inspection import inspect_report
from fusionviz.records.files import open_path


def _size(value: int | None) -> str:
    return "-" if value is None else size_words(value)


def summary(path: Path) -> list[str]:
    session = open_path(path)
    report = analyse(session)
    inspected = inspect_report(report, path.name, top=None)
    c = session.config
    lines = [f"== {path.name}: {c.model} {c.dim}x{c.batch} {c.dtype} {c.pass_} on "
             f"{session.environment.device_name or c.device}"]
    for run in inspected["runs"]:
        memory: Any = run["memory"]
        graphs: Any = run["cuda_graphs"]
        latency = run["latency_ms"]
        timed = f"{latency['median'] * 1e3:.1f} µs" if latency else "not timed"
        if memory is None:
            lines.append(f"  {run['label']:28} {timed:>12}  memory not measured ({run['status']})")
        else:
            lines.append(
                f"  {run['label']:28} {timed:>12}  peak allocated {_size(memory['peak_allocated_bytes']):>9}  "
                f"peak reserved {_size(memory['peak_reserved_bytes']):>9}  held {_size(memory['held_bytes']):>9} "
                f"(inputs {_size(memory['inputs_bytes'])})  pool {_size(memory['pool_bytes']):>9}  "
                f"graph pools {_size(memory['graph_pool_bytes']):>9}  [{memory['method']}, process "
                f"{memory['process']}]")
            saved = memory["saved"]
            if saved is not None:
                recomputed = memory["recomputed"]
                lines.append(f"  {'':28} saved for backward: {_size(saved['activation_bytes'])} of activations "
                             f"({saved['activations']} storages; {_size(saved['bytes'])} in all)"
                             + ("" if run["label"] == "eager" else "; recomputed: " + (
                                 "not known" if recomputed is None else
                                 ", ".join(f"{r['op']} x{r['count']}" for r in recomputed) or "nothing")))
        if graphs is not None:
            copies = graphs["input_copies"]
            copied = ("no input copies" if copies is None or not copies["kernels"] else
                      f"input copies per call: {copies['kernels']:g} ({_size(copies['bytes'])}, {copies['us']:.1f} "
                      f"µs; sizes from {copies['bytes_from'] or 'nowhere'})")
            captured = ("all captured" if graphs["all_captured"] else "not recorded" if graphs["all_captured"] is None
                        else "skipped: " + "; ".join([g["reason"] for g in graphs["graphs"] if not g["captured"]]
                                                     + graphs["skips"]))
            lines.append(f"  {'':28} CUDA graphs: {captured}; {copied}"
                         + (f"; recorded again: {'; '.join(graphs['rerecorded'])}" if graphs["rerecorded"] else ""))
    for run in session.runs:
        if not run.ok:
            lines.append(f"  {run.mode}: {run.status}: {(run.error or '').splitlines()[0] if run.error else ''}")
        lines += [f"  {run.mode}: {line}" for line in run.logs if line.startswith("memory not measured")]
    bridge = inspected["bridge"]
    if bridge is not None:
        lines.append(f"  step: {bridge['text']}. {bridge['mechanism']}")
        lines += [f"    {detail}" for detail in bridge["details"]]
    main = next((r.mode for r in session.runs if r.mode not in ("eager", "eager_cuda_graph") and r.ok), None)
    trade = trade_sentence(report.memory, main, report.comparisons.get(main)) if main else None
    if trade:
        lines.append(f"  trade: {trade}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sessions", nargs="+", type=Path)
    args = parser.parse_args(argv)
    for path in args.sessions:
        print("\n".join(summary(path)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
