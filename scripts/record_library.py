"""The library's table (scripts/library_rows.txt, the one scripts/gpu_library.sh records on one GPU box) recorded on
a Ray cluster through the grid's Ray machinery (fusionviz/measure/ray_grid.py): each row one Ray task that asks for
one GPU (on a cluster without GPUs, --threads CPUs, default 1) and runs `python -m fusionviz run ...` in a fresh
worker process on whichever node Ray chooses, its session written to --out under gpu_library.sh's file name. A row
whose session is already in --out is skipped (--force records it again); a row that fails is told and the others go
on; each row's node and device are printed, and stderr shows a bar of the rows done, running and queued.

python scripts/record_library.py --ray auto|ADDRESS --out DIR [--table FILE] [--rows PATTERN] [--prefix h200]
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from fnmatch import fnmatch
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # fusionviz, from a checkout run as a plain script

from fusionviz.cli.reporter import cell_bar, note
from fusionviz.errors import FusionvizError
from fusionviz.measure.ray_grid import CommandRun, as_tasks, cluster, run_command

TABLE = Path(__file__).with_name("library_rows.txt")


@dataclass(frozen=True)
class Row:
    """One line of the table: `fusionviz run` of one model, size and dtype over its modes, with its extra flags."""

    model: str
    dim: int
    batch: int
    dtype: str
    modes: str
    extra: tuple[str, ...]

    def name(self, prefix: str) -> str:
        """The session's file name as gpu_library.sh gives it: model (a real one's colon as _), sizes (and --seq)
        and dtype, then _train for a train pass."""
        seq = f"x{self.flag('--seq')}" if self.flag("--seq") else ""
        train = "_train" if self.flag("--pass") == "train" else ""
        return f"{prefix}_{self.model.replace(':', '_')}_{self.dim}x{self.batch}{seq}_{self.dtype}{train}"

    def flag(self, name: str) -> str | None:
        """The value given to the extra flag `name`, or None where the row does not give it."""
        return self.extra[self.extra.index(name) + 1] if name in self.extra else None

    def argv(self, out: Path) -> list[str]:
        """The `fusionviz` command line of the row, less its --device (the task gives it)."""
        return ["run", "--model", self.model, "--dim", str(self.dim), "--batch", str(self.batch), "--dtype",
                self.dtype, "--modes", self.modes, *self.extra, "--out", str(out)]


def read_table(path: Path) -> list[Row]:
    """The rows of a table file, `model dim batch dtype modes [extra flags]`; blank lines and `#` lines skipped."""
    rows = []
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            model, dim, batch, dtype, modes, *extra = line.split()
            rows.append(Row(model, int(dim), int(batch), dtype, modes, tuple(extra)))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ray", required=True, metavar="auto|ADDRESS", help="the Ray cluster (auto: the one here)")
    parser.add_argument("--out", required=True, type=Path, help="folder the sessions are written to")
    parser.add_argument("--table", type=Path, default=TABLE, help=f"the rows to record (default: {TABLE.name})")
    parser.add_argument("--rows", default="*", metavar="PATTERN", help="only the rows whose file name matches")
    parser.add_argument("--prefix", default="h200", help="the file names' first word (default: h200)")
    parser.add_argument("--threads", type=int, default=None, help="CPUs of a row on a cluster without GPUs")
    parser.add_argument("--force", action="store_true", help="record rows already in --out again")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    calls: dict[str, tuple[list[str]]] = {}
    for row in read_table(args.table):
        name = row.name(args.prefix)
        path = args.out / f"{name}.json.gz"
        if not fnmatch(name, args.rows):
            continue
        if path.exists() and not args.force:
            print(f"{name}: already recorded, skipped", flush=True)
            continue
        threads = ["--threads", str(args.threads)] if args.threads else []
        calls[name] = (row.argv(path) + threads,)
    if not calls:
        return 0
    failed = 0
    try:
        with cluster(args.ray) as ray:
            for name, result in as_tasks(ray, run_command, calls, args.threads or 1, partial(cell_bar, unit="rows")):
                if not isinstance(result, CommandRun):
                    failed += 1
                    print(f"{name} failed: the Ray task failed: {result}", flush=True)
                    continue
                (args.out / f"{name}.log").write_text(result.output)
                lines = [line for line in result.output.splitlines() if line.strip()]
                ok = result.returncode == 0
                failed += not ok
                told = "recorded" if ok else f"failed ({lines[-1] if lines else f'exit {result.returncode}'})"
                print(f"{name} {told} on {result.node} {result.device}", flush=True)
    except FusionvizError as exc:
        note(f"fusionviz: {exc}")
        return exc.exit_code
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
