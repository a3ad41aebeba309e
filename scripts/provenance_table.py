"""Each compiled kernel of a session's representative iteration, from the compiler's own records: its handle, the
pre-grad ops it computes (by op and module), the user's lines, and the eager kernels it is linked to with their
lines, checking that the links come from provenance and point to eager kernels of the same lines. Markdown, for
a closing note or docs/measurements.

python scripts/provenance_table.py SESSION [SESSION ...] [--mode default]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fusionviz.analysis.kernel_tables import iteration_kernels
from fusionviz.analysis.links import run_links
from fusionviz.analysis.provenance import (
    iteration_lines,
    iteration_provenance,
    iteration_sources,
    kernel_origins,
    of_iteration,
    short_source,
)
from fusionviz.records.files import open_path


def table(path: Path, mode: str) -> list[str]:
    session = open_path(path)
    eager, compiled = session.run("eager"), session.run(mode)
    if eager is None or compiled is None or not compiled.ok:
        return [f"{path.name}: no {mode} run"]
    cfg = session.config
    ek, ck = iteration_kernels(eager), iteration_kernels(compiled)
    links = run_links(eager, compiled, ek, ck)
    sources = iteration_sources(eager)
    origins = of_iteration(compiled, kernel_origins(compiled))
    lines = [f"**{cfg.model} {cfg.dim}×{cfg.batch} {cfg.dtype} {cfg.pass_}, {mode}** on "
             f"{session.environment.device_name} ({path.name}): links from {links.kind}", "",
             "| # | compiled kernel | handle | pre-grad ops | source lines | eager kernels linked (their lines) "
             "| same lines |",
             "|---|---|---|---|---|---|---|"]
    kernel_lines = iteration_lines(compiled)  # Inductor's lines, in this run's files (`provenance.kernel_lines`)
    for ci, found in enumerate(iteration_provenance(compiled)):
        linked = links.table[links.table.compiled_index == ci].eager_index.tolist()
        eager_lines = {sources[e].source for e in linked if sources[e] is not None and sources[e].source}
        own = set(kernel_lines[ci])
        same = "yes" if linked and eager_lines and eager_lines <= own else "-" if not linked else "no"
        eager_words = ", ".join(f"{ek.name.iloc[e][:28]}" for e in linked) or "-"
        lines.append(f"| {ci} | {ck.name.iloc[ci][:48]} | {found.handle if found else '-'} | {origins[ci]} | "
                     f"{', '.join(short_source(s) for s in kernel_lines[ci]) or '-'} | {eager_words} "
                     f"({', '.join(sorted(short_source(s) for s in eager_lines)) or '-'}) | {same} |")
    return lines + [""]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sessions", nargs="+", type=Path)
    parser.add_argument("--mode", default="default")
    args = parser.parse_args(argv)
    for path in args.sessions:
        print("\n".join(table(path, args.mode)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
