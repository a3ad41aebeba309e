"""What hostile and very large files cost under the caps (records/limits.py): each opened in a fresh process by
`fusionviz inspect`, and the largest one through the Trace explorer page (AppTest), with wall time and peak
memory (max RSS). Run from the repo root: `python benchmarks/bench_caps.py`.

Files (made here, synthetic, shaped like a GPU capture: ProfilerSteps, ops, launches, kernels):
- the largest trace within the caps: 499,800 events (4,900 steps × 50 kernels);
- a 1.34-million-event trace (13,150 steps): over the events cap, refused;
- a gzip bomb of spaces: 2 MB on disk, 2 GB inflated: refused at the inflated cap;
- a gzip bomb of one event whose name is 1.5 GB of one letter (1.5 MB on disk): refused at the inflated cap,
  before any of it is decoded;
- the same with a 400 MB name, under the inflated cap: read in linear time, refused at the name cap.
"""

from __future__ import annotations

import gzip
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.synthetic import encoded, gpu_trace  # noqa: E402


def cli(path: Path) -> str:
    """`inspect` of `path` in a fresh process: wall seconds, peak MB, and its first line of output."""
    started = time.monotonic()
    out = subprocess.run(["/usr/bin/time", "-f", "%M", sys.executable, "-m", "fusionviz", "inspect", str(path)],
                         capture_output=True, text=True, cwd=ROOT)
    wall = time.monotonic() - started
    peak_mb = int(out.stderr.strip().splitlines()[-1]) / 1024
    said = (out.stdout.splitlines()[2] if out.returncode == 0 else out.stderr.splitlines()[0])[:110]
    return f"{wall:6.2f} s {peak_mb:7.0f} MB  exit {out.returncode}: {said}"


def page(path: Path) -> str:
    """The Trace explorer given `path` as an upload, in this process (AppTest): seconds and peak RSS."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    at.switch_page("pages/1_Trace_explorer.py").run()
    at.radio(key="a_source").set_value("Upload a file").run()
    started = time.monotonic()
    at.file_uploader(key="a_file").set_value((path.name, path.read_bytes(), "application/gzip")).run()
    wall = time.monotonic() - started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    problems = [e.value for e in at.exception] + [e.value for e in at.error]
    return f"{wall:6.2f} s {peak_mb:7.0f} MB (the test process's peak)  " + (
        f"problems: {problems}" if problems else f"{len(at.get('plotly_chart'))} charts drawn")


def bombed(path: Path, head: bytes, letter: bytes, mb: int, tail: bytes) -> None:
    """A gzip file of `head`, `mb` MB of `letter`, then `tail`."""
    with gzip.open(path, "wb", compresslevel=9) as f:
        f.write(head)
        for _ in range(mb):
            f.write(letter * (1 << 20))
        f.write(tail)


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        largest, over, bomb = folder / "largest.json.gz", folder / "over.json.gz", folder / "bomb.json.gz"
        largest.write_bytes(encoded(gpu_trace(4_900, 50)))
        over.write_bytes(encoded(gpu_trace(13_150, 50)))
        bombed(bomb, b'{"traceEvents": [', b" ", 2048, b"]}")
        named, named_under = folder / "name.json.gz", folder / "name_under.json.gz"
        event_end = b'","ph":"X","cat":"cpu_op","ts":0,"dur":1,"pid":1,"tid":1}]}'
        bombed(named, b'{"traceEvents":[{"name":"', b"a", 1536, event_end)
        bombed(named_under, b'{"traceEvents":[{"name":"', b"a", 400, event_end)
        for label, path in (("largest within the caps (499,800 events)", largest),
                            ("over the events cap (1,341,300 events)", over), ("gzip bomb (2 GB inflated)", bomb),
                            ("a 1.5 GB name (inflated)", named),
                            ("a 400 MB name (under the inflated cap)", named_under)):
            print(f"{label:42} {path.stat().st_size / 2**20:5.1f} MB  inspect: {cli(path)}")
        print(f"{'largest, through the Trace explorer':42}           page:    {page(largest)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
