"""One run of fusionviz's job reader for bench_job.py: a job's folder of rank traces read (a process pool over
the files) and its per-rank figures computed, as `inspect DIR --json` gives them.

python benchmarks/job_ours.py DIR   prints the ranks read and their overlap
"""

from __future__ import annotations

import sys
from pathlib import Path

from fusionviz.analysis.job import job_report
from fusionviz.records.job import read_job


def main(folder: str) -> None:
    report = job_report(read_job([Path(folder)]))
    print(len(report["ranks"]), [(r["rank"], r["overlap_pct"]) for r in report["ranks"]])


if __name__ == "__main__":
    main(sys.argv[1])
