"""The registry of named views: for each, what the session must hold, the function that draws its figure,
the one that words its caption, the fields a talk's caption may use, and whether it takes a mode, zooms or
plays. The lab's presentation mode and slides, the Dynamic shapes page, a talk's scenes (checked against
`VIEWS` when a talk is read), `python -m fusionviz export --view` and its choices all read it: a view is one
entry here, one chart module (with the function that draws it from the Report and an `Asked`; those of
the views below are in `charts.views`) and its caption in `charts.view_captions`.

Functions are named as "module:function" and imported when first called, so that reading the registry (the
CLI's parser, a talk file) imports neither plotly nor pandas, and the CLI starts without them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pkgutil import resolve_name
from typing import TYPE_CHECKING, Literal, cast

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from fusionviz.analysis.report import Report
    from fusionviz.charts.style import ChartSettings

# What a view's session must hold: an eager run with kernels, timing, the naive snippet, a sweep, a grid, the
# source lines of its kernels (runs recorded with provenance, schema 3). The memory view needs runs that measured
# their memory besides (`charts.views.view_problem` says so for a session recorded before).
Needs = Literal["runs", "timing", "naive", "sweep", "grid", "sources"]

# The fields a talk's caption template may use (`analysis.captions.caption_values` fills each).
CAPTION_FIELDS: dict[str, str] = {
    "mode": "the compiled mode the scene is about",
    "model": "the model",
    "device": "the GPU (or CPU) it ran on",
    "dtype": "the dtype",
    "speedup": "the mode against eager, worded by its verdict: '11x faster (9.4–13x)' or 'no clear difference'",
    "verdict": "faster, slower, no clear difference, or not timed",
    "eager_kernels": "eager's kernels per iteration",
    "kernels": "the mode's kernels per iteration",
    "busy": "how busy eager keeps the device per call, percent",
    "compile_s": "the mode's first compile, s",
    "break_even": "'pays back after N calls', or why it never does",
    "graphs": "how many graphs the mode compiled the model into",
}


@dataclass(frozen=True)
class Asked:
    """What a caller asks of a view's figure: its settings, the compiled mode (None: the view's default) and
    the animation's length in seconds."""

    settings: ChartSettings
    mode: str | None = None
    seconds: float = 4.0


@cache
def _function(name: str) -> Callable[..., object]:
    return cast("Callable[..., object]", resolve_name(name))


@dataclass(frozen=True)
class View:
    """One named view. `figure` ("module:function", taking the session's Report and an `Asked`) is drawn once
    the session holds what `needs` says; `caption` ("module:function", taking the Report and the mode) words the
    view's own caption. `takes_mode`: about one compiled mode (`every_mode`: or, without one, every mode at
    once); `zooms`: a scene's `zoom` sets its x range; `animated`: it plays (its length is chosen, and it
    exports as a GIF)."""

    label: str
    title: str
    needs: Needs
    figure: str
    caption: str
    takes_mode: bool = False
    every_mode: bool = False
    zooms: bool = False
    animated: bool = False
    caption_fields: tuple[str, ...] = tuple(CAPTION_FIELDS)

    def draw(self, report: Report, asked: Asked) -> go.Figure:
        return cast("go.Figure", _function(self.figure)(report, asked))

    def words(self, report: Report, mode: str | None) -> str:
        return cast(str, _function(self.caption)(report, mode))


def _chart(name: str) -> str:
    return f"fusionviz.charts.{name}"


def _words(name: str) -> str:
    return f"fusionviz.charts.view_captions:{name}"


VIEWS: dict[str, View] = {
    "verdict": View("Verdict", "the verdict and the figures per mode", "runs", _chart("views:draw_verdict"),
                    _words("verdict_caption"), takes_mode=True),
    "timeline": View("Timeline", "the kernel timeline (eager and `mode`, else every mode)", "runs",
                     _chart("views:draw_timeline"), _words("timeline_caption"), takes_mode=True, every_mode=True,
                     zooms=True),
    "collapse": View("Collapse", "what fused into what", "runs", _chart("views:draw_collapse"),
                     _words("kernels_caption"), takes_mode=True, zooms=True),
    "animation": View("Animation", "eager kernels moving and merging into the compiled ones", "runs",
                      _chart("views:draw_animation"), _words("kernels_caption"), takes_mode=True, zooms=True,
                      animated=True),
    "source": View("Source", "the user's lines: the eager kernels each launched and the compiled kernels it ended "
                   "in, and what kept neighbours apart", "sources", "fusionviz.charts.source_view:draw_source",
                   _words("source_caption"), takes_mode=True),
    "modules": View("Modules", "kernel time by module of the model (`h.0.attn`, `layer3.1.conv2`), eager above "
                    "`mode`: where in the model fusion paid", "sources", _chart("modules:draw_modules"),
                    _words("modules_caption"), takes_mode=True),
    "latency": View("Latency", "latency per call with its spread and the speedups", "timing",
                    _chart("views:draw_latency"), _words("latency_caption")),
    "methodology": View("Methodology", "the naive snippet's speedup and kernel count next to the proper "
                        "measurement's", "naive", _chart("views:draw_methodology"),
                        _words("methodology_caption")),
    "sweep_latency": View("Latency per call", "a shape sweep: the latency of every call, compiles as peaks",
                          "sweep", _chart("views:draw_sweep_latency"), _words("sweep_latency_caption"), zooms=True),
    "sweep_steady": View("Steady state", "a shape sweep: steady-state latency against the size", "sweep",
                         _chart("views:draw_sweep_steady"), _words("sweep_steady_caption"), zooms=True),
    "sweep_cumulative": View("Cumulative", "a shape sweep: cumulative time, compiles included", "sweep",
                             _chart("views:draw_sweep_cumulative"), _words("sweep_cumulative_caption"), zooms=True),
    "waterfall": View("Waterfall", "the ladder: eager's latency, then each step's change per call", "timing",
                      _chart("waterfall:draw_waterfall"), _words("waterfall_caption")),
    "bytes": View("Bytes moved", "bytes per iteration of every run, estimated and measured, the intermediates "
                  "fusion kept on chip and the launches, and whether `mode` moves 70% less than eager", "runs",
                  _chart("bytes_moved:draw_bytes"), _words("bytes_caption"), takes_mode=True),
    "roofline": View("Roofline", "each kernel of eager and `mode` against the device's measured ceilings", "runs",
                     _chart("roofline:draw_roofline"), _words("roofline_caption"),
                     takes_mode=True),
    "bound": View("Host or device", "per mode, the host's work per call against the GPU's, and the latency",
                  "timing", _chart("bound:draw_bound"), _words("bound_caption")),
    "memory": View("Memory", "one iteration's memory, eager above `mode`: the bytes live at each moment, stacked by "
                   "the op that made them, and what each mode holds between calls", "runs",
                   _chart("memory:draw_memory"), _words("memory_caption"), takes_mode=True),
    "plan_diff": View("Plan diff", "`mode`'s fusion groups against the plan before it (`default`'s for another "
                      "compiled mode, else eager's): which merged, split, appeared or vanished, µs per iteration",
                      "runs", "fusionviz.charts.plan_diff:draw_plan_diff", _words("plan_diff_caption"),
                      takes_mode=True),
    "what_if": View("What if", "what compiling could save, estimated from eager's trace, beside what it did",
                    "timing", _chart("what_if:draw_what_if"), _words("what_if_caption")),
    "grid": View("Grid", "a crossover grid: the speedup over hidden dim × batch, eager's busy share in each cell",
                 "grid", _chart("views:draw_grid"), _words("grid_caption")),
}


def views_needing(*needs: Needs) -> list[str]:
    """The views whose session must hold one of `needs`, in the registry's order (what a page presents)."""
    return [name for name, view in VIEWS.items() if view.needs in needs]
