"""Re-read every mode's kept Chrome trace with the current trace reader and rewrite the session's kernel
table, CPU-op table and per-iteration summary: for when the reader's rules change (how kernels are counted
or classified) after sessions were recorded. Timing, compile info and code are left as recorded.

python scripts/reparse_sessions.py sessions/*.json.gz
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from fusionviz.records.session import Session
from fusionviz.records.trace import parse_trace


def reparse(path: Path) -> None:
    session = Session.load(path)
    changed = 0
    for run in session.runs:
        trace = run.chrome_trace()
        if trace is None:
            continue
        parsed = parse_trace(json.loads(trace))
        run.kernels = parsed.kernels.to_dict("records")
        run.cpu_ops = parsed.cpu_ops.to_dict("records")
        run.summary = parsed.summary
        changed += 1
    session.save(path)
    print(f"{path}: {changed} mode(s) re-read")


if __name__ == "__main__":
    for name in sys.argv[1:]:
        reparse(Path(name))
