"""The table of issue 8's check: speedup intervals of separate runs, their verdicts, and whether the
independent script's median falls inside fusionviz's latency interval.

python benchmarks/acceptance_table.py DIR   (DIR holds run{i}_{model}_{dtype}.json.gz and check.jsonl)
"""

from __future__ import annotations

import json
import re
import statistics
import sys
from pathlib import Path

import msgspec

from fusionviz.analysis.report import analyse
from fusionviz.records.session import Session


def main(folder: Path) -> int:
    runs: dict[tuple[str, str], dict[int, Session]] = {}
    for path in sorted(folder.glob("run*_*.json.gz")):
        i, model, dtype = re.match(r"run(\d+)_(\w+?)_(float32|bfloat16)\.json\.gz", path.name).groups()  # type: ignore[union-attr]
        runs.setdefault((model, dtype), {})[int(i)] = Session.load(path)
    checks: dict[tuple[str, str, str], list[float]] = {}
    for line in (folder / "check.jsonl").read_text().splitlines() if (folder / "check.jsonl").exists() else []:
        row = json.loads(line)
        checks.setdefault((row["model"], row["dtype"], row["mode"]), []).append(row["median_ms"])
    ok = True
    print("| config | mode | " + " | ".join(f"run {i}: speedup (p10–p90), verdict" for i in (1, 2, 3))
          + " | overlap | no contradiction | script median ms | inside every run's latency interval |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (model, dtype), by_run in runs.items():
        compared = {i: analyse(s).comparisons for i, s in sorted(by_run.items())}
        modes = [m for m in next(iter(compared.values())) if m != "eager"]
        for mode in ["eager", *modes]:
            cells, lows, highs, verdicts, inside = [], [], [], set(), []
            script = checks.get((model, dtype, mode), [])
            reference = statistics.median(script) if script else None
            for _i, c in compared.items():
                if mode not in c:
                    cells.append("–")
                    continue
                s, lat = c[mode].speedup, c[mode].latency
                cells.append(f"{s.median:.2f}x ({s.low:.2f}–{s.high:.2f}) {c[mode].verdict if mode != 'eager' else ''}")
                lows.append(s.low)
                highs.append(s.high)
                verdicts.add(c[mode].verdict)
                if reference is not None:
                    inside.append(lat.low <= reference <= lat.high)
            overlap = max(lows) <= min(highs) if lows else False
            consistent = not {"faster", "slower"} <= verdicts
            ok &= overlap and consistent and all(inside)
            print(f"| {model} {dtype} | {mode} | " + " | ".join(cells) + f" | {'yes' if overlap else 'NO'} | "
                  f"{'yes' if consistent else 'NO'} | {reference if reference is None else f'{reference:.4f}'} | "
                  f"{sum(inside)}/{len(inside)} |")
    _pooled(runs, checks)
    return 0 if ok else 1


def _pooled(runs: dict[tuple[str, str], dict[int, Session]], checks: dict[tuple[str, str, str], list[float]]) -> None:
    """How often the script's median falls inside fusionviz's latency interval when the timing processes of
    1, 2 or 3 runs are taken as one session (3, 6 or 9 processes): what more processes would have reported."""
    import itertools

    for k in (1, 2, 3):
        inside = total = 0
        for (model, dtype), by_run in runs.items():
            for combo in itertools.combinations([s for _, s in sorted(by_run.items())], k):
                first = combo[0]
                assert first.timing is not None
                processes = [p for s in combo for p in (s.timing.processes if s.timing else [])]
                timing = msgspec.structs.replace(first.timing, processes=processes)
                merged = msgspec.structs.replace(first, timing=timing)
                for mode, c in analyse(merged).comparisons.items():
                    script = checks.get((model, dtype, mode))
                    if script:
                        inside += c.latency.low <= statistics.median(script) <= c.latency.high
                        total += 1
        if total:
            print(f"pooled over {3 * k} processes ({k} run{'s' if k > 1 else ''} at a time): the script's median "
                  f"inside the latency interval in {inside} of {total} cases")


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
