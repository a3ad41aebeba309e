"""The recorded library as a markdown table (sessions/README.md): per session its configuration, file size,
and each compiled mode's kernels per iteration and speedup against eager with its interval and verdict.

python scripts/library_table.py [sessions/]
"""

from __future__ import annotations

import sys
from pathlib import Path

from fusionviz.analysis.report import analyse
from fusionviz.records.files import open_path


def main(folder: Path) -> int:
    print("| file | KB | eager kernels | each compiled mode: kernels, speedup (p10–p90), verdict |")
    print("|---|---|---|---|")
    for path in sorted(folder.glob("h[0-9]*_*.json.gz")):
        session = open_path(path)
        if not session.runs:
            continue
        eager = session.run("eager")
        compared = analyse(session).comparisons
        cells = []
        for run in session.runs:
            if run.mode == "eager" or not run.ok or run.summary is None or run.mode not in compared:
                continue
            s = compared[run.mode].speedup
            cells.append(f"{run.mode}: {run.summary.kernels_per_iteration:g}, {s.median:.2f}x "
                         f"({s.low:.2f}–{s.high:.2f}) {compared[run.mode].verdict}")
        kernels = f"{eager.summary.kernels_per_iteration:g}" if eager and eager.summary else "–"
        print(f"| {path.name.removesuffix('.json.gz')} | {path.stat().st_size // 1024} | {kernels} | "
              + "; ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "sessions")))
