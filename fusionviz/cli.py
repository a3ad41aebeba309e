"""`python -m fusionviz {models,run,inspect,sweep,grid,export}`: the CLI maps flags onto the Python API."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

from fusionviz.charts.registry import VIEWS
from fusionviz.errors import ConfigError, FusionvizError
from fusionviz.measure.catalog import CATALOG
from fusionviz.records.config import RunConfig, parse_dynamic, parse_modes
from fusionviz.records.decode import clip

EXPORT_FORMATS = ["png", "svg", "html", "gif"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fusionviz", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    models = sub.add_parser("models", help="list the model zoo and what each model demonstrates")
    models.add_argument("--json", action="store_true")

    run = sub.add_parser("run", help="run eager and compiled modes, write a session file")
    _add_config_flags(run)
    run.add_argument("--modes", default="eager,default", help="comma-separated: eager,default,reduce-overhead,...")
    run.add_argument("--cold-compile", action="store_true", help="compile in a fresh process with an empty cache")
    run.add_argument("--naive-calls", type=int, default=0,
                     help="also run the naive snippet (no warm-up, wall clock) with this many calls, for the "
                          "methodology view")

    inspect = sub.add_parser("inspect", help="summarise a session file or a torch.profiler Chrome trace")
    inspect.add_argument("file")
    inspect.add_argument("--json", action="store_true")
    inspect.add_argument("--top", type=int, default=None, metavar="N",
                         help=f"rank the N kernels with the longest total time (default {INSPECT_TOP})")
    inspect.add_argument("--all", dest="all_kernels", action="store_true",
                         help="list every kernel of the representative iteration, however many")

    sweep = sub.add_parser("sweep", help="dynamic vs static shapes over a schedule of sizes")
    _add_config_flags(sweep)
    sweep.add_argument("--over", choices=["batch", "seq"], default="batch", help="the dimension that changes")
    sweep.add_argument("--sizes", default="", help="comma-separated sizes; default: --schedule")
    sweep.add_argument("--schedule", choices=["increasing", "random"], default="increasing")
    sweep.add_argument("--calls", type=int, default=12, help="calls in a generated schedule")
    sweep.add_argument("--strategies", default="static,dynamic,automatic,mark_dynamic,buckets")
    sweep.add_argument("--buckets", default="", help="bucket sizes for the pad-to-buckets strategy")
    sweep.add_argument("--cold-caches", action="store_true",
                       help="each strategy in a fresh process with an empty Inductor cache (compile times cold)")

    grid = sub.add_parser("grid", help="a crossover grid: eager against one compiled mode over hidden dim × batch, "
                                       "spread over every visible GPU (one worker set per GPU)")
    _add_config_flags(grid, sizes=False)
    grid.add_argument("--mode", default="default", help="the compiled mode compared with eager")
    grid.add_argument("--dims", required=True, help="comma-separated hidden dims")
    grid.add_argument("--batches", required=True, help="comma-separated batch sizes")
    grid.add_argument("--devices", default=None, help="comma-separated devices (default: every visible GPU, "
                                                       "else the CPU)")

    export = sub.add_parser("export", help="a view of a session as a slide: PNG or SVG at 1920 × 1080, a "
                                           "self-contained HTML page, or the animation as a GIF")
    export.add_argument("file", help="a session file or a plain torch.profiler trace")
    export.add_argument("--view", required=True, choices=list(VIEWS))
    export.add_argument("--mode", default=None, help="the compiled mode the view is about (default: the first)")
    export.add_argument("--zoom", default=None, help="from,to: the x range shown (views that zoom)")
    export.add_argument("--format", choices=EXPORT_FORMATS, default=None, help="default: from --out's suffix")
    export.add_argument("--out", required=True)

    args = parser.parse_args(argv)
    try:
        if args.command == "models":
            return _models(args.json)
        if args.command == "run":
            return _run(args)
        if args.command == "grid":
            return _grid(args)
        if args.command == "inspect":
            return _inspect(Path(args.file), args.json, args.top, args.all_kernels)
        if args.command == "export":
            return _export(args)
        return _sweep(args)
    except FusionvizError as exc:
        print(f"fusionviz: {exc}", file=sys.stderr)
        return exc.exit_code
    except FileNotFoundError as exc:
        print(f"fusionviz: {exc}", file=sys.stderr)
        return 2


def _add_config_flags(p: argparse.ArgumentParser, *, sizes: bool = True) -> None:
    p.add_argument("--model", required=True, help="a zoo model (see `models`) or package.module:factory")
    if sizes:
        p.add_argument("--dim", type=int, required=True)
        p.add_argument("--batch", type=int, required=True)
    p.add_argument("--seq", type=int, default=None, help="sequence length / image side, for models that have one")
    p.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    p.add_argument("--device", default=None, help="cuda:N or cpu (default: the first GPU, else the CPU)")
    p.add_argument("--pass", dest="pass_", default="inference", choices=["inference", "train"])
    p.add_argument("--dynamic", default="false", help="true, false or none (torch's automatic default)")
    p.add_argument("--rounds", type=int, default=RunConfig.rounds,
                   help="interleaved timing rounds per process (each round times every mode once)")
    p.add_argument("--processes", type=int, default=RunConfig.processes,
                   help="fresh worker processes the timing is repeated in; the spread between them is reported")
    p.add_argument("--threads", type=int, default=None,
                   help="CPU threads of every worker (default: half the cores this process may use)")
    p.add_argument("--timeout", type=float, default=900.0, help="seconds per mode before the run is stopped")
    p.add_argument("--out", required=True, help="session file to write (.json or .json.gz)")


def _config(args: argparse.Namespace, modes: tuple[str, ...], *, dim: int | None = None,
            batch: int | None = None) -> RunConfig:
    """The configuration the flags describe; a grid gives its first dim and batch (its cells set their own)."""
    info = CATALOG.get(args.model)
    seq = args.seq if args.seq is not None else (info.default_seq if info else None)
    return RunConfig(model=args.model, dim=dim or args.dim, batch=batch or args.batch, seq=seq, dtype=args.dtype,
                     device=args.device or default_device(), pass_=args.pass_, modes=modes,
                     dynamic=parse_dynamic(args.dynamic), rounds=args.rounds, processes=args.processes,
                     threads=args.threads, timeout_s=args.timeout,
                     cold_compile=getattr(args, "cold_compile", False))


def writable(out: str) -> Path:
    """The file a command will write, checked before any work: a measurement of minutes must not end in
    "cannot write" (a directory, a missing folder, a folder without write permission)."""
    path = Path(out)
    if path.is_dir():
        raise ConfigError(f"--out {out} is a directory: give a file name, e.g. {path / 'session.json.gz'}")
    folder = path.parent
    if not folder.is_dir():
        raise ConfigError(f"--out {out}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK):
        raise ConfigError(f"--out {out}: the folder {folder} cannot be written to")
    return path


def default_device() -> str:
    """The first GPU, else the CPU; asked of nvidia-smi so that the caller need not import torch."""
    import shutil
    import subprocess

    if shutil.which("nvidia-smi"):
        try:
            out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=20, check=True)
            if out.stdout.strip().startswith("GPU 0"):
                return "cuda:0"
        except (OSError, subprocess.SubprocessError):
            pass
    return "cpu"


def _models(as_json: bool) -> int:
    if as_json:
        print(json.dumps([{"name": i.name, "purpose": i.purpose, "seq": i.seq_label} for i in CATALOG.values()],
                         indent=2))
        return 0
    width = max(len(name) for name in CATALOG)
    for i in CATALOG.values():
        print(f"{i.name:<{width}}  {i.purpose}" + (f" [--seq: {i.seq_label}]" if i.seq_label else ""))
    return 0


class _Ticker:
    """Progress on stderr: the stage and the elapsed time."""

    def __init__(self) -> None:
        self.start = time.monotonic()

    def __call__(self, stage: str) -> None:
        print(f"[{time.monotonic() - self.start:7.1f} s] {stage}", file=sys.stderr, flush=True)


def _run(args: argparse.Namespace) -> int:
    from fusionviz.analysis.sentences import load_warnings
    from fusionviz.analysis.summary import summary_table
    from fusionviz.analysis.verdict import verdict
    from fusionviz.measure.client import run_session
    from fusionviz.records.config import warnings_for

    config = _config(args, parse_modes(args.modes))
    writable(args.out)
    for warning in warnings_for(config):
        print(f"note: {warning}", file=sys.stderr)
    session = run_session(config, _Ticker(), naive_calls=args.naive_calls)
    path = session.save(args.out)
    table = summary_table(session)
    shown = ["mode", "median_ms", "p10_ms", "p90_ms", "speedup", "speedup_low", "speedup_high", "verdict",
             "kernels_per_iteration", "busy_pct", "compile_s", "break_even_calls"]
    print(table[shown].to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    for run in session.runs:
        if not run.ok:
            print(f"{run.mode}: {run.status}: {run.error}", file=sys.stderr)
    for note in load_warnings(session):
        print(f"warning: {note}", file=sys.stderr)
    print(verdict(session))
    print(f"session written to {path}")
    return 0 if any(r.ok for r in session.runs) else 1


INSPECT_TOP = 20  # kernels ranked by `inspect` unless --top says otherwise
INSPECT_LISTED = 60  # an iteration with at most this many kernels and memory operations is listed in full


def _inspect(path: Path, as_json: bool, top: int | None = None, all_kernels: bool = False) -> int:
    """Print the report: plain text with no progress or colour, so that it pipes; a reader that closes the
    pipe early (`| head`) ends it quietly."""
    from fusionviz.analysis.report import inspect_report
    from fusionviz.records.files import open_path

    if top is not None and top < 1:
        raise ConfigError("--top takes a number of kernels, 1 or more")
    report = inspect_report(open_path(path), str(path), top=top or INSPECT_TOP)
    return _write(json.dumps(finite(report), allow_nan=False) + "\n" if as_json else _inspect_text(report, all_kernels))


def finite(value: Any) -> Any:
    """JSON values with every NaN or infinity as null, so that `--json` is strict JSON any parser reads."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value


def _inspect_text(report: dict[str, Any], all_kernels: bool) -> str:
    lines = [f"{report['source']}"]
    for run in report["runs"]:
        busy = run["gpu_busy_fraction"]
        whole = run["iterations_from"] == "trace"
        unit = "call" if run["iterations_from"] == "calls" else "iteration"
        window = "the whole trace" if whole else f"{run['iterations']} {unit}(s)"
        each = "" if whole else f" per {unit}"
        memory = run["memory_ops_per_iteration"]
        lines.append(f"\n{run['label']} on {run['device']}: {window}, {run['kernels_per_iteration']:g} kernels{each}"
                     + (f" and {memory:g} memory operation{'' if memory == 1 else 's'}" if memory else "")
                     + (f", GPU busy {busy:.0%}" if busy is not None else ""))
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
            for k in listed:
                fused = f"  [{' + '.join(k['fused_ops'])}]" if k["fused_ops"] else ""
                lines.append(f"  {k['duration_us']:9.1f} µs  {k['class']:<17} {clip(k['name'], 90)}{fused}")
        else:
            lines.append(f"  ({len(listed):,} kernels and memory operations in the representative {unit}: "
                         "--all lists them)")
        lines += _top_lines(run, "the whole trace" if whole else f"{run['iterations']} {unit}s")
        lines += _idle_lines(run, unit)
    return "\n".join(lines) + "\n"


def _top_lines(run: dict[str, Any], over: str) -> list[str]:
    ranked = run["top_kernels"]
    if not ranked:
        return []
    lines = [f"  top {len(ranked)} of {run['distinct_kernels']} kernels by total time over {over} (µs):",
             f"  {'total':>10} {'share':>6} {'count':>6} {'mean':>8} {'min':>8} {'p50':>8} {'p99':>8} {'max':>8}  "
             f"{'class':<16} name"]
    for k in ranked:
        lines.append(f"  {k['total_us']:10.1f} {k['pct_of_kernel_time']:5.1f}% {k['count']:6d} {k['mean_us']:8.1f} "
                     f"{k['min_us']:8.1f} {k['p50_us']:8.1f} {k['p99_us']:8.1f} {k['max_us']:8.1f}  "
                     f"{k['kernel_class']:<16} {clip(k['name'], 80)}")
    return lines


def _idle_lines(run: dict[str, Any], unit: str) -> list[str]:
    if not run["idle"] or run["gpu_busy_fraction"] is None:
        return []  # no device kernels: there is no GPU time to break down
    lines = [f"  GPU time of each {unit} (µs; see the README's Definitions):",
             f"  {unit:>9} {'span':>10} {'kernels':>10} {'host wait':>10} {'between':>10} {'unlinked':>10} {'busy':>5}"]
    for s in run["idle"]:
        lines.append(f"  {s['iteration']:9d} {s['span_us']:10.1f} {s['kernel_us']:10.1f} {s['host_wait_us']:10.1f} "
                     f"{s['between_kernels_us']:10.1f} {s['unattributed_us']:10.1f} {s['busy_pct']:4.0f}%")
    return lines


def _write(text: str) -> int:
    """Write to stdout; a reader that closed the pipe ends the command quietly (no traceback, exit 0), as
    `| head` expects. stdout is pointed at /dev/null so that Python's flush at exit does not fail again."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return 0


def _grid(args: argparse.Namespace) -> int:
    from fusionviz.analysis.grid import grid_table
    from fusionviz.measure.client import run_grid
    from fusionviz.records.config import parse_sizes

    dims, batches = parse_sizes(args.dims, "--dims"), parse_sizes(args.batches, "--batches")
    if not dims or not batches:
        raise ConfigError("--dims and --batches each need at least one size")
    config = _config(args, ("eager", *parse_modes(args.mode)), dim=dims[0] if dims else None,
                     batch=batches[0] if batches else None)
    devices = [d.strip() for d in args.devices.split(",") if d.strip()] if args.devices else None
    writable(args.out)
    session = run_grid(config, dims, batches, _Ticker(), devices=devices)
    path = session.save(args.out)
    print(grid_table(session).to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    print(f"session written to {path}")
    return 0 if any(c.error is None for c in session.grid.cells) else 1  # type: ignore[union-attr]


def _export(args: argparse.Namespace) -> int:
    from fusionviz.analysis.captions import source_stamp
    from fusionviz.charts.export import SLIDE_HEIGHT, SLIDE_WIDTH, gif_bytes, html_bytes, image_bytes, slide
    from fusionviz.charts.style import ChartSettings
    from fusionviz.charts.views import view_figure
    from fusionviz.records.files import open_path

    path, out = Path(args.file), writable(args.out)
    fmt = args.format or out.name.rsplit(".", 1)[-1].lower()
    if fmt not in EXPORT_FORMATS:
        raise ConfigError(f"cannot tell the format from {out.name}: give --format {'|'.join(EXPORT_FORMATS)}")
    if fmt == "gif" and args.view != "animation":
        raise ConfigError("a GIF is made of the animation view: --view animation")
    try:
        zoom = tuple(float(v) for v in args.zoom.split(",")) if args.zoom else None
    except ValueError:
        zoom = ()
    if zoom is not None and (len(zoom) != 2 or not zoom[0] < zoom[1]):
        raise ConfigError(f"--zoom takes from,to with from < to, not {args.zoom!r}")
    session = open_path(path)
    settings = ChartSettings.presentation()
    fig = slide(view_figure(session, args.view, settings, mode=args.mode, zoom=zoom), source_stamp(session),
                settings)
    if fmt == "html":
        data = html_bytes(fig, f"{path.name}: {args.view}")
    elif fmt == "gif":
        data = gif_bytes(fig)
    else:
        data = image_bytes(fig, "png" if fmt == "png" else "svg")
    out.write_bytes(data)
    print(f"{args.view} of {path.name} written to {out} ({fmt}, {SLIDE_WIDTH} × {SLIDE_HEIGHT})")
    return 0


def _sweep(args: argparse.Namespace) -> int:
    from fusionviz.analysis.sweep import sweep_summary
    from fusionviz.measure.client import run_sweep_session
    from fusionviz.records.config import SweepRequest, parse_sizes

    config = _config(args, ("eager",))
    sizes = parse_sizes(args.sizes, "--sizes")
    request = SweepRequest(dimension=args.over, schedule="list" if sizes else args.schedule, sizes=sizes,
                           calls=args.calls,
                           strategies=[s.strip() for s in args.strategies.split(",") if s.strip()],
                           buckets=parse_sizes(args.buckets, "--buckets"), cold_caches=args.cold_caches)
    writable(args.out)
    session = run_sweep_session(config, request, _Ticker())
    path = session.save(args.out)
    print(sweep_summary(session).to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    print(f"session written to {path}")
    return 0

