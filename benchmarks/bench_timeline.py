"""Timeline benchmark: 100,000 kernel bars (and 100,000 launch calls on the CPU lane), the figure built in
Python and drawn by the real headless Chromium; then scroll-wheel zoom, box zoom and pan in the browser.

    .venv/bin/python benchmarks/bench_timeline.py [--kernels 100000] [--rounds 3]

The session is synthetic and reproducible (seeded): kernels of 200 names in the real classes on four streams,
durations and gaps drawn from log-normal laws like a training step's. No real trace holds 100,000 kernels in
one view (the recorded 24-layer step holds 1,852); this is the load the issue sets. Times are medians of
`--rounds`, each in a fresh browser page; compare within one run.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import plotly
from playwright.sync_api import Page, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fusionviz.charts.timeline import DETAIL_KERNELS, level_of_detail, timeline_figure  # noqa: E402
from fusionviz.charts.timeline_layout import timeline_bars  # noqa: E402
from fusionviz.records.config import RunConfig  # noqa: E402
from fusionviz.records.kernels import CpuOpRow, KernelRow, classify  # noqa: E402
from fusionviz.records.session import Environment, ModeRun, Session  # noqa: E402
from fusionviz.records.trace import summarise  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-dev-shm-usage"]
NAMES = ([f"nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT_{i}" for i in range(40)]
         + [f"triton_poi_fused_add_mul_{i}" for i in range(60)]
         + [f"triton_red_fused_native_layer_norm_{i}" for i in range(40)]
         + [f"void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>, {i}>()"
            for i in range(40)]
         + [f"void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda, {i}>()"
            for i in range(20)])


def big_session(kernels: int, seed: int = 0) -> Session:
    """One iteration of `kernels` kernels on four streams, each launched by a runtime call on the CPU."""
    rng = np.random.default_rng(seed)
    names = rng.integers(0, len(NAMES), kernels)
    durations = rng.lognormal(np.log(6.0), 0.9, kernels)
    gaps = rng.lognormal(np.log(1.5), 1.0, kernels)
    streams = rng.choice([7, 13, 21, 22], kernels, p=[0.7, 0.1, 0.1, 0.1])
    launches = np.cumsum(rng.lognormal(np.log(4.0), 0.5, kernels))
    ends = {7: 0.0, 13: 0.0, 21: 0.0, 22: 0.0}
    rows, cpu = [], []
    for i in range(kernels):
        stream = int(streams[i])
        start = max(ends[stream] + gaps[i], launches[i] + 5.0)
        ends[stream] = start + durations[i]
        name = NAMES[names[i]]
        rows.append(KernelRow(iteration=0, name=name, kernel_class=classify(name), start_us=float(start),
                              dur_us=float(durations[i]), stream=stream, grid="128,1,1", block="256,1,1",
                              launch_op="aten::add", op_id=i, input_shapes="[[8, 512, 1024]]", fused_ops=[],
                              source_file="", graph="", launch_us=float(launches[i])))
        cpu.append(CpuOpRow(iteration=0, name="cudaLaunchKernel", category="launch", start_us=float(launches[i]),
                            dur_us=2.5))
    span = max(ends.values())
    run = ModeRun(mode="eager", kernels=rows, cpu_ops=cpu)
    run.summary = summarise(rows, [span], launches_counted=True, launches=cpu)
    return Session(config=RunConfig(model="synthetic"), environment=Environment(device_kind="cuda"), runs=[run],
                   source="trace", label="synthetic")


def timed(f: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    value = f()
    return time.perf_counter() - started, value


PAGE = """<!doctype html><html><head><meta charset="utf-8"><script>{plotly}</script></head>
<body style="margin:0"><div id="p" style="width:1400px;height:{height}px"></div>
<script>
const spec = {spec_literal};
window.parsed_ms = 0;
const t = performance.now();
const fig = JSON.parse(spec);
window.parsed_ms = performance.now() - t;
const t0 = performance.now();
Plotly.newPlot('p', fig.data, fig.layout, {{scrollZoom: true, displaylogo: false}}).then(() => {{
  requestAnimationFrame(() => requestAnimationFrame(() => {{ window.drawn_ms = performance.now() - t0; }}));
}});
</script></body></html>"""

# Arms a promise that resolves on the chart's next relayout, once the frame after it is painted.
ARM_RELAYOUT = """() => { window.relayout = new Promise(resolve => {
  document.getElementById('p').once('plotly_relayout', () => requestAnimationFrame(
      () => requestAnimationFrame(() => resolve(true))));
}); }"""


def draw(page: Page, spec: str, height: int) -> float:
    literal = json.dumps(spec)
    page.set_content(PAGE.format(plotly=PLOTLY_JS, height=height, spec_literal=literal), wait_until="load")
    page.wait_for_function("window.drawn_ms !== undefined", timeout=120_000)
    return float(page.evaluate("window.drawn_ms + window.parsed_ms"))


def interact(page: Page) -> dict[str, float]:
    """Scroll-wheel zoom, box zoom and pan on the drawn chart: ms from the gesture to the repainted frame."""
    box = page.locator(".nsewdrag").first.bounding_box()
    assert box is not None
    cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    times = {}
    page.evaluate(ARM_RELAYOUT)
    started = time.perf_counter()
    page.mouse.move(cx, cy)
    page.mouse.wheel(0, -400)
    page.evaluate("() => window.relayout")
    times["wheel_zoom_ms"] = 1000 * (time.perf_counter() - started)

    page.evaluate("() => Plotly.relayout('p', {dragmode: 'zoom'})")
    page.evaluate(ARM_RELAYOUT)
    started = time.perf_counter()
    page.mouse.move(cx - 200, cy - 40)
    page.mouse.down()
    page.mouse.move(cx + 100, cy + 40, steps=4)
    page.mouse.up()
    page.evaluate("() => window.relayout")
    times["box_zoom_ms"] = 1000 * (time.perf_counter() - started)

    page.evaluate("() => Plotly.relayout('p', {dragmode: 'pan'})")
    page.evaluate(ARM_RELAYOUT)
    started = time.perf_counter()
    page.mouse.move(cx, cy)
    page.mouse.down()
    page.mouse.move(cx - 300, cy, steps=4)
    page.mouse.up()
    page.evaluate("() => window.relayout")
    times["pan_ms"] = 1000 * (time.perf_counter() - started)
    return times


PLOTLY_JS = ""


def main() -> int:
    global PLOTLY_JS
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kernels", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    PLOTLY_JS = (Path(plotly.__file__).parent / "package_data" / "plotly.min.js").read_text()
    session = big_session(args.kernels)
    print(f"machine: {platform.node()}, Python {platform.python_version()}, plotly {plotly.__version__}")
    build: dict[str, list[float]] = {}
    specs: dict[str, tuple[str, int, str]] = {}
    for r in range(args.rounds):
        t_bars, bars = timed(lambda: timeline_bars(session))
        t_fig, fig = timed(lambda b=bars: timeline_figure(session, b))
        t_json, spec = timed(fig.to_json)
        starts = bars[bars.lane == "kernel"].start_us.sort_values().to_numpy()
        window = (float(starts[0]), float(starts[int(DETAIL_KERNELS * 0.8)]))  # a window of 4,800 kernels
        t_detail, detail = timed(lambda b=bars, w=window: timeline_figure(session, b, window=w))
        t_search, searched = timed(lambda b=bars: timeline_figure(session, b, search="layer_norm"))
        for name, value in (("bars from the session", t_bars), ("figure, zoomed out (time slices)", t_fig),
                            ("figure to JSON", t_json), ("figure, a window of 4,800 kernels (each drawn)", t_detail),
                            ("figure with a search highlighted", t_search)):
            build.setdefault(name, []).append(value)
        if r == 0:
            specs = {"zoomed out": (spec, int(fig.layout.height), level_of_detail(bars, None)),
                     "window of 4,800 kernels": (detail.to_json(), int(detail.layout.height),
                                                 level_of_detail(bars, window)),
                     "search highlighted": (searched.to_json(), int(searched.layout.height), "bins + marks")}
    kernels = int((bars.lane == "kernel").sum())
    print(f"\n{kernels:,} kernel bars and {len(bars) - kernels:,} CPU bars; build in Python (median of "
          f"{args.rounds}):\n")
    print("| step | seconds |\n|---|---|")
    for name, values in build.items():
        print(f"| {name} | {statistics.median(values):.3f} |")
    total = statistics.median(build["bars from the session"]) + statistics.median(
        build["figure, zoomed out (time slices)"])
    print(f"| **bars + figure** | **{total:.3f}** |")

    drawn: dict[str, list[float]] = {}
    gestures: dict[str, dict[str, list[float]]] = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        version = browser.version
        for _ in range(args.rounds):
            for label, (spec, height, _level) in specs.items():
                page = browser.new_page(viewport={"width": 1500, "height": height + 100})
                drawn.setdefault(label, []).append(draw(page, spec, height))
                for gesture, ms in interact(page).items():
                    gestures.setdefault(label, {}).setdefault(gesture, []).append(ms)
                page.close()
        browser.close()
    print(f"\nChromium {version} (headless, no GPU: WebGL in software); ms, median of {args.rounds} fresh pages:\n")
    print("| view | level of detail | JSON size MB | parse + draw | wheel zoom | box zoom | pan |")
    print("|---|---|---|---|---|---|---|")
    for label, (spec, _height, level) in specs.items():
        g = gestures[label]
        print(f"| {label} | {level} | {len(spec) / 1e6:.1f} | {statistics.median(drawn[label]):.0f} "
              f"| {statistics.median(g['wheel_zoom_ms']):.0f} | {statistics.median(g['box_zoom_ms']):.0f} "
              f"| {statistics.median(g['pan_ms']):.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
