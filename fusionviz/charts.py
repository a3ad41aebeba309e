"""Plotly figures of a session: kernel timeline, fusion collapse, latency and per-mode metrics.

Each figure has a `prepare_*` step (DataFrames in, DataFrames out; pure and tested) and a `*_figure`
step that only draws. Nothing here imports streamlit, so the same figures serve the app, notebooks and
exported reports. Sizes and fonts come from a frozen `ChartSettings`, never from module state.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from fusionviz import sources
from fusionviz.analysis import fusion_links, iteration_kernels, summary_table, sweep_calls
from fusionviz.kernels import CLASS_DESCRIPTIONS, KERNEL_CLASSES, KERNEL_COLUMNS
from fusionviz.session import ModeRun, Session, StrategyRun, kernel_frame

# One fixed colour per kernel class, so a class looks the same in every figure and every session.
CLASS_COLOURS: dict[str, str] = {
    "gemm": "#4C78A8",
    "triton_pointwise": "#F58518",
    "triton_reduction": "#E45756",
    "triton_template": "#B279A2",
    "cpp_fused": "#54A24B",
    "aten": "#9D755D",
    "copy": "#BAB0AC",
    "other": "#EECA3B",
}
CPU_COLOURS: dict[str, str] = {"op": "#8F8F8F", "launch": "#3A3A3A", "graph_call": "#2F5D8A"}
REGION_FILL = "rgba(76, 120, 168, 0.16)"
BREAK_COLOUR = "#D62728"
COMPILED_REGION = "Torch-Compiled Region"


@dataclass(frozen=True)
class ChartSettings:
    """Fonts and sizes. `presentation()` gives the large-font variant for talks and projectors."""

    font_size: int = 13
    title_size: int = 16
    lane_px: int = 96  # height of one mode's block (kernel lane + CPU lane) on the timeline
    chart_px: int = 380  # height of the other charts
    label_chars: int = 22  # kernel names longer than this are cut in box labels

    @classmethod
    def presentation(cls) -> ChartSettings:
        return cls(font_size=22, title_size=30, lane_px=115, chart_px=640, label_chars=16)


DEFAULT_SETTINGS = ChartSettings()


def _style(fig: go.Figure, settings: ChartSettings, title: str, height: int) -> go.Figure:
    fig.update_layout(
        # The title is pinned to the top and the margin leaves two rows for the legend under it.
        title={"text": title, "font": {"size": settings.title_size}, "y": 0.995, "yanchor": "top", "yref": "container"},
        font={"size": settings.font_size},
        height=height,
        margin={"l": 10, "r": 10, "t": 40 + settings.title_size + 2 * settings.font_size, "b": 40},
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.0, "xanchor": "left", "x": 0,
                "font": {"size": settings.font_size}},
        hoverlabel={"font": {"size": settings.font_size}, "align": "left"},
        plot_bgcolor="white",
    )
    # Set on the axes too: Streamlit's chart theme sizes ticks itself and would ignore layout.font.
    axis = {"tickfont": {"size": settings.font_size}, "title_font": {"size": settings.font_size}}
    fig.update_xaxes(**axis)
    fig.update_yaxes(**axis)
    return fig


def source_line(session: Session) -> str:
    """Where the data on screen came from, in one line."""
    env = session.environment
    if session.source == "live":
        return f"Live on this machine: {env.device_name or session.config.device}, torch {env.torch_version}"
    if session.source == "trace":
        return f"torch.profiler trace {session.label} ({env.device_kind})"
    date = env.captured_at[:16].replace("T", " ")
    return f"Recorded session: {env.device_name or env.device_kind}, torch {env.torch_version}, {date}"


# ---- kernel timeline ----

TIMELINE_COLUMNS: dict[str, str] = {
    "mode": "the mode (lane) the bar belongs to",
    "lane": "'kernel', 'cpu', 'graph_call' or 'region'",
    "y": "vertical position (mode blocks top to bottom)",
    "row": "row of the mode's kernel table (kernel lane) or CPU op table (others)",
    "iteration": "profiled iteration",
    "name": "full name",
    "kind": "kernel class on the kernel lane; CPU op category otherwise",
    "start_us": "start in µs on the shared axis",
    "dur_us": "duration in µs",
    "grid": "launch grid",
    "block": "thread block",
    "input_shapes": "input shapes of the launching op",
    "fused_ops": "source ops, comma separated",
}
_KERNEL_Y, _CPU_Y, _CALL_Y, _REGION_Y = 0.0, 0.62, 0.86, 0.36
_KERNEL_W, _CPU_W, _CALL_W, _REGION_W = 0.7, 0.3, 0.12, 1.3
BLOCK = 1.6  # vertical distance between two modes' blocks


def drawable_runs(session: Session) -> list[ModeRun]:
    """The runs that have kernels to draw, in session order (eager first)."""
    return [r for r in session.runs if r.ok and r.summary is not None]


def _iteration_offsets(kernels: pd.DataFrame, cpu: pd.DataFrame, iterations: list[int]) -> dict[int, float]:
    """Where each iteration starts when iterations are laid end to end: after the previous one's last event."""
    offsets, cursor = {}, 0.0
    for it in iterations:
        offsets[it] = cursor
        ends = [(f.start_us + f.dur_us)[f.iteration == it].max() for f in (kernels, cpu)]
        cursor += max([e for e in ends if pd.notna(e)] + [0.0])
    return offsets


def _cpu_lane(category: str, name: str) -> str:
    """Ops and launches share the CPU lane; a compiled region shades the block; a graph call is a strip."""
    if category != "region":
        return "cpu"
    return "region" if name.startswith(COMPILED_REGION) else "graph_call"


def prepare_timeline(session: Session, all_iterations: bool = False) -> pd.DataFrame:
    """Bars of the timeline: kernels, CPU ops, graph calls and compiled regions of each drawable mode.

    One steady iteration per mode (its representative one) by default; with `all_iterations` every
    profiled iteration, laid end to end.
    """
    frames = []
    for block, run in enumerate(drawable_runs(session)):
        assert run.summary is not None
        kernels, cpu = run.kernel_frame(), run.cpu_op_frame()
        iterations = sorted(set(kernels.iteration) | set(cpu.iteration)) if all_iterations else [
            run.summary.representative_iteration]
        offsets = _iteration_offsets(kernels, cpu, iterations)
        y0 = block * BLOCK
        k = kernels[kernels.iteration.isin(iterations)]
        frames.append(pd.DataFrame({
            "mode": run.mode, "lane": "kernel", "y": y0 + _KERNEL_Y, "row": k.index,
            "iteration": k.iteration, "name": k.name, "kind": k.kernel_class,
            "start_us": k.start_us + k.iteration.map(offsets), "dur_us": k.dur_us,
            "grid": k.grid, "block": k.block, "input_shapes": k.input_shapes,
            "fused_ops": k.fused_ops.map(lambda ops: ", ".join(ops)),
        }))
        c = cpu[cpu.iteration.isin(iterations)]
        lane = pd.Series([_cpu_lane(cat, name) for cat, name in zip(c.category, c.name, strict=True)],
                         index=c.index, dtype=object)
        y = lane.map({"cpu": _CPU_Y, "graph_call": _CALL_Y, "region": _REGION_Y}) + y0
        frames.append(pd.DataFrame({
            "mode": run.mode, "lane": lane, "y": y, "row": c.index, "iteration": c.iteration, "name": c.name,
            "kind": c.category, "start_us": c.start_us + c.iteration.map(offsets), "dur_us": c.dur_us,
            "grid": "", "block": "", "input_shapes": "", "fused_ops": "",
        }))
    if not frames:
        return pd.DataFrame(columns=list(TIMELINE_COLUMNS))
    return pd.concat(frames, ignore_index=True)[list(TIMELINE_COLUMNS)]


def prepare_breaks(session: Session, bars: pd.DataFrame) -> pd.DataFrame:
    """Graph-break markers: the end of every compiled region that another region follows in the same
    iteration, with the break's reason where Dynamo reported one (breaks are listed in program order)."""
    rows = []
    for run in drawable_runs(session):
        regions = bars[(bars["mode"] == run.mode) & (bars.lane == "region")].sort_values("start_us")
        for _, group in regions.groupby("iteration"):
            for i, (_, region) in enumerate(group.iloc[:-1].iterrows()):
                brk = run.graph_breaks[i] if i < len(run.graph_breaks) else None
                rows.append({"mode": run.mode, "y": region.y - _REGION_W / 2,
                             "x_us": region.start_us + region.dur_us,
                             "reason": brk.reason if brk else "the compiled region ends here; eager code follows",
                             "where": brk.user_frame if brk else ""})
    return pd.DataFrame(rows, columns=["mode", "y", "x_us", "reason", "where"])


_KERNEL_HOVER = ("<b>%{customdata[2]}</b><br>%{customdata[0]} · %{customdata[7]}<br>"
                 "duration %{x:.1f} µs, start %{base:.1f} µs<br>grid %{customdata[3]}  block %{customdata[4]}"
                 "<br>inputs %{customdata[5]}<br>fused ops: %{customdata[6]}<extra></extra>")
_CPU_HOVER = ("<b>%{customdata[2]}</b><br>%{customdata[0]} · CPU %{customdata[7]}<br>"
              "duration %{x:.1f} µs, start %{base:.1f} µs<extra></extra>")


def _bar(rows: pd.DataFrame, name: str, colour: str, width: float, hover: str, *, legend: bool = True,
         line: str | None = None) -> go.Bar:
    # customdata[0:2] = (mode, row): the app maps a clicked bar back to its kernel through these.
    custom = rows[["mode", "row", "name", "grid", "block", "input_shapes", "fused_ops", "kind"]].to_numpy(
        dtype=object)
    return go.Bar(
        base=rows.start_us.to_numpy(), x=rows.dur_us.to_numpy(), y=rows.y.to_numpy(), orientation="h",
        width=width, name=name, marker={"color": colour, "line": {"width": 0.6 if line else 0, "color": line}},
        customdata=custom, hovertemplate=hover, showlegend=legend, legendgroup=name,
    )


def timeline_figure(session: Session, bars: pd.DataFrame, settings: ChartSettings = DEFAULT_SETTINGS,
                    title: str | None = None) -> go.Figure:
    """One block per mode, eager on top: kernels coloured by class, a thin CPU lane under them, compiled
    regions shaded and graph breaks marked, on one numeric µs axis shared by all modes."""
    fig = go.Figure()
    regions = bars[bars.lane == "region"]
    if len(regions):
        # Not hoverable: the band lies under the kernel bars, and a click must pick the kernel.
        band = _bar(regions, "compiled region", REGION_FILL, _REGION_W, _CPU_HOVER)
        band.hoverinfo, band.hovertemplate = "skip", None
        fig.add_trace(band)
    kernels = bars[bars.lane == "kernel"]
    for kernel_class in KERNEL_CLASSES:
        rows = kernels[kernels.kind == kernel_class]
        if len(rows):
            fig.add_trace(_bar(rows, kernel_class, CLASS_COLOURS[kernel_class], _KERNEL_W, _KERNEL_HOVER,
                               line="white"))
    for category in ("op", "launch"):
        rows = bars[(bars.lane == "cpu") & (bars.kind == category)]
        if len(rows):
            fig.add_trace(_bar(rows, f"CPU {category}", CPU_COLOURS[category], _CPU_W, _CPU_HOVER, line="white"))
    calls = bars[bars.lane == "graph_call"]
    if len(calls):
        fig.add_trace(_bar(calls, "compiled graph call", CPU_COLOURS["graph_call"], _CALL_W, _CPU_HOVER))
    breaks = prepare_breaks(session, bars)
    if len(breaks):
        fig.add_trace(go.Scatter(
            x=breaks.x_us, y=breaks.y, mode="markers", name="graph break",
            marker={"symbol": "x-thin", "size": 14, "color": BREAK_COLOUR, "line": {"width": 3, "color": BREAK_COLOUR}},
            customdata=breaks[["reason", "where"]].to_numpy(dtype=object),
            hovertemplate="<b>graph break</b><br>%{customdata[0]}<br>%{customdata[1]}<extra></extra>",
        ))
        for x in breaks.x_us:
            fig.add_vline(x=x, line={"color": BREAK_COLOUR, "width": 1, "dash": "dot"})
    runs = drawable_runs(session)
    ticks = [b * BLOCK + y for b in range(len(runs)) for y in (_KERNEL_Y, _CPU_Y)]
    labels = [text for r in runs for text in (f"<b>{r.mode}</b>", "CPU")]
    fig.update_yaxes(tickvals=ticks, ticktext=labels, autorange="reversed", showgrid=False, zeroline=False,
                     range=[len(runs) * BLOCK - 0.5, -0.6])
    fig.update_xaxes(title_text="µs from the start of the iteration", showgrid=True, gridcolor="#EEEEEE",
                     rangemode="tozero")
    fig.update_layout(barmode="overlay", bargap=0, clickmode="event+select", dragmode="zoom")
    text = title or "Kernel timeline: one steady iteration per mode"
    return _style(fig, settings, text, 150 + settings.title_size + settings.lane_px * max(len(runs), 1))


def selected_kernel(points: list[dict[str, Any]]) -> tuple[str, int] | None:
    """The (mode, kernel row) of the first clicked kernel bar in a Plotly selection, if any."""
    for point in points:
        custom = point.get("customdata")
        if isinstance(custom, list) and len(custom) >= 8 and custom[7] in CLASS_COLOURS:
            return str(custom[0]), int(custom[1])
    return None


# ---- fusion collapse: eager kernels, the compiled kernels that absorbed them, and links between ----

COLLAPSE_COLUMNS: dict[str, str] = {
    "side": "'eager' or 'compiled'",
    "index": "row of that side's iteration kernel table",
    "x": "horizontal slot",
    "name": "kernel name",
    "label": "what the node is called on the chart: the ops it covers, else its short name",
    "kernel_class": "kernel class",
    "dur_us": "duration, µs",
    "links": "how many kernels of the other side it is linked to",
    "role": "eager: 'fused' (absorbed with others), 'kept' (one-to-one) or 'unmatched'; compiled: "
            "'fusion' (absorbed several), 'kept' (one eager kernel), 'new' (no eager counterpart)",
}


def prepare_collapse(eager: ModeRun, compiled: ModeRun) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Nodes (COLLAPSE_COLUMNS) and links (analysis.LINK_COLUMNS) of one steady iteration of each mode.

    Eager kernels sit in launch order on slots 0, 1, 2…; each compiled kernel sits over the mean slot of
    the eager kernels it absorbed (kept in launch order, at least one slot apart), so links run nearly
    straight down and a fusion reads as several lines meeting in one box.
    """
    ek, ck = iteration_kernels(eager), iteration_kernels(compiled)
    links = fusion_links(ek, ck)
    per_compiled = links.groupby("compiled_index").eager_index.apply(list).to_dict()
    eager_degree = links.groupby("eager_index").compiled_index.nunique().to_dict()
    fused_eager = {e for c, es in per_compiled.items() if len(set(es)) > 1 for e in es}
    xs: list[float] = []
    for ci in range(len(ck)):
        targets = per_compiled.get(ci)
        want = sum(targets) / len(targets) if targets else (xs[-1] + 1 if xs else 0.0)
        xs.append(max(want, xs[-1] + 1) if xs else want)

    def eager_role(i: int) -> str:
        return "fused" if i in fused_eager else ("kept" if i in eager_degree else "unmatched")

    def compiled_role(i: int) -> str:
        absorbed = set(per_compiled.get(i, []))
        return "fusion" if len(absorbed) > 1 else ("kept" if absorbed else "new")

    nodes = pd.concat([
        pd.DataFrame({"side": "eager", "index": range(len(ek)), "x": [float(i) for i in range(len(ek))],
                      "name": ek.name, "label": _node_labels(ek), "kernel_class": ek.kernel_class,
                      "dur_us": ek.dur_us,
                      "links": [eager_degree.get(i, 0) for i in range(len(ek))],
                      "role": [eager_role(i) for i in range(len(ek))]}),
        pd.DataFrame({"side": "compiled", "index": range(len(ck)), "x": xs, "name": ck.name,
                      "label": _node_labels(ck),
                      "kernel_class": ck.kernel_class, "dur_us": ck.dur_us,
                      "links": [len(set(per_compiled.get(i, []))) for i in range(len(ck))],
                      "role": [compiled_role(i) for i in range(len(ck))]}),
    ], ignore_index=True)
    return nodes[list(COLLAPSE_COLUMNS)], links


def collapse_title(eager: ModeRun, compiled: ModeRun) -> str:
    """Says what happened to the kernel count; warns when the compiled mode runs more kernels."""
    n_e, n_c = len(iteration_kernels(eager)), len(iteration_kernels(compiled))
    if n_c > n_e:
        return f"⚠ {compiled.mode} runs MORE kernels than eager: {n_e} → {n_c} per iteration"
    if n_c == n_e:
        return f"{compiled.mode}: {n_e} → {n_c} kernels per iteration, nothing fused away"
    return f"{compiled.mode}: {n_e} eager kernels collapse into {n_c} per iteration"


_Y_EAGER, _Y_COMPILED = 1.0, 0.0
_ROLE_STYLE = {  # compiled-node outline: a fusion stands out, a kernel kept one-to-one (e.g. a GEMM) does not
    "fusion": {"width": 3, "color": "black"},
    "kept": {"width": 1, "color": "#999999"},
    "new": {"width": 2, "color": BREAK_COLOUR},
    "fused": {"width": 1, "color": "#555555"},
    "unmatched": {"width": 2, "color": BREAK_COLOUR},
}


def _node_labels(kernels: pd.DataFrame) -> list[str]:
    """Library kernels have long names (`sm90_xmma_gemm_…`): a node is labelled by the ops it covers."""
    return ["+".join(ops) if len(ops) else short
            for ops, short in zip(kernels.fused_ops, kernels.short_name, strict=True)]


def _label(name: str, settings: ChartSettings) -> str:
    text = name.removeprefix("aten::")
    return text if len(text) <= settings.label_chars else text[: settings.label_chars - 1] + "…"


def _node_trace(nodes: pd.DataFrame, y: float, settings: ChartSettings, name: str) -> go.Scatter:
    return go.Scatter(
        x=nodes.x, y=[y] * len(nodes), mode="markers+text", name=name, showlegend=False,
        text=[_label(n, settings) for n in nodes.label],
        textposition="top center" if y == _Y_EAGER else "bottom center",
        marker={"symbol": "square", "size": settings.font_size * 2.4,
                "color": [CLASS_COLOURS[c] for c in nodes.kernel_class],
                "line": {"width": [_ROLE_STYLE[r]["width"] for r in nodes.role],
                         "color": [_ROLE_STYLE[r]["color"] for r in nodes.role]}},
        customdata=nodes[["name", "kernel_class", "dur_us", "role"]].to_numpy(dtype=object),
        hovertemplate="<b>%{customdata[0]}</b><br>%{customdata[1]}, %{customdata[2]:.1f} µs<br>"
                      "%{customdata[3]}<extra></extra>",
    )


def _class_legend(fig: go.Figure, classes: list[str]) -> None:
    for kernel_class in KERNEL_CLASSES:
        if kernel_class in classes:
            fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=kernel_class,
                                     marker={"symbol": "square", "size": 12, "color": CLASS_COLOURS[kernel_class]},
                                     hoverinfo="skip"))


def collapse_figure(eager: ModeRun, compiled: ModeRun, settings: ChartSettings = DEFAULT_SETTINGS) -> go.Figure:
    """Eager kernels on the top row, the compiled mode's on the bottom row, a line from each eager kernel to
    the compiled kernel that absorbed it. Fusions get a bold outline; kernels kept one-to-one a thin one."""
    nodes, links = prepare_collapse(eager, compiled)
    e, c = nodes[nodes.side == "eager"], nodes[nodes.side == "compiled"].reset_index(drop=True)
    fig = go.Figure()
    for style, dash in (("fusion", "solid"), ("kept", "dot")):
        xs: list[float | None] = []
        ys: list[float | None] = []
        for link in links.itertuples():
            if c.role[link.compiled_index] != style:
                continue
            xs += [float(e.x.iloc[link.eager_index]), float(c.x[link.compiled_index]), None]
            ys += [_Y_EAGER, _Y_COMPILED, None]
        if xs:
            fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", hoverinfo="skip",
                                     name="fused into" if style == "fusion" else "kept as is",
                                     line={"color": "#333333" if style == "fusion" else "#AAAAAA", "width": 2,
                                           "dash": dash}))
    fig.add_trace(_node_trace(e, _Y_EAGER, settings, "eager"))
    fig.add_trace(_node_trace(c, _Y_COMPILED, settings, compiled.mode))
    _class_legend(fig, list(nodes.kernel_class))
    width = max(nodes.x.max() if len(nodes) else 0.0, 1.0)
    fig.update_xaxes(visible=False, range=[-0.8, width + 0.8])
    fig.update_yaxes(tickvals=[_Y_EAGER, _Y_COMPILED], ticktext=["<b>eager</b>", f"<b>{compiled.mode}</b>"],
                     range=[-0.6, 1.6], showgrid=False, zeroline=False)
    return _style(fig, settings, collapse_title(eager, compiled), settings.chart_px)


def collapse_animation(eager: ModeRun, compiled: ModeRun, settings: ChartSettings = DEFAULT_SETTINGS,
                       steps: int = 12) -> go.Figure:
    """The collapse as a movie: eager kernels slide down into the compiled kernel that absorbed them and
    merge, then the compiled kernels appear. Play button and slider, for talks."""
    nodes, links = prepare_collapse(eager, compiled)
    e = nodes[nodes.side == "eager"].reset_index(drop=True)
    c = nodes[nodes.side == "compiled"].reset_index(drop=True)
    target = links.groupby("eager_index").compiled_index.first().to_dict()
    end_x = [float(c.x[target[i]]) if i in target else float(e.x[i]) for i in range(len(e))]
    end_y = [_Y_COMPILED if i in target else _Y_EAGER for i in range(len(e))]

    def state(t: float) -> list[go.Scatter]:
        # Eager boxes move (ease-in-out) and fade out as they arrive; compiled boxes fade in at the end.
        s = 0.5 - 0.5 * math.cos(math.pi * t)
        moving = e.assign(x=[x0 + (x1 - x0) * s for x0, x1 in zip(e.x, end_x, strict=True)])
        eager_trace = _node_trace(moving, _Y_EAGER, settings, "eager")
        eager_trace.y = [_Y_EAGER + (y1 - _Y_EAGER) * s for y1 in end_y]
        eager_trace.marker.opacity = [1.0 if i not in target else max(0.0, 1 - max(0.0, t - 0.8) * 5)
                                      for i in range(len(e))]
        eager_trace.text = [n if t < 0.5 else "" for n in eager_trace.text]
        compiled_trace = _node_trace(c, _Y_COMPILED, settings, compiled.mode)
        compiled_trace.marker.opacity = min(1.0, max(0.0, (t - 0.7) / 0.3))
        compiled_trace.text = [n if t >= 0.85 else "" for n in compiled_trace.text]
        return [eager_trace, compiled_trace]

    times = [i / steps for i in range(steps + 1)]
    fig = go.Figure(data=state(0.0), frames=[go.Frame(data=state(t), name=f"{t:.2f}") for t in times])
    width = max(nodes.x.max() if len(nodes) else 0.0, 1.0)
    fig.update_xaxes(visible=False, range=[-0.8, width + 0.8])
    fig.update_yaxes(tickvals=[_Y_EAGER, _Y_COMPILED], ticktext=["<b>eager</b>", f"<b>{compiled.mode}</b>"],
                     range=[-0.6, 1.6], showgrid=False, zeroline=False)
    play = {"frame": {"duration": 120, "redraw": True}, "transition": {"duration": 100}, "fromcurrent": False}
    fig.update_layout(
        updatemenus=[{"type": "buttons", "showactive": False, "x": 0, "y": -0.08, "xanchor": "left",
                      "buttons": [{"label": "▶ play", "method": "animate", "args": [None, play]},
                                  {"label": "⟲ eager", "method": "animate",
                                   "args": [[f"{times[0]:.2f}"], {"mode": "immediate",
                                                                  "frame": {"duration": 0, "redraw": True}}]}]}],
        sliders=[{"x": 0.2, "len": 0.8, "y": -0.02, "currentvalue": {"visible": False},
                  "steps": [{"label": "", "method": "animate",
                             "args": [[f"{t:.2f}"], {"mode": "immediate", "frame": {"duration": 0, "redraw": True}}]}
                            for t in times]}],
    )
    return _style(fig, settings, f"From eager to {compiled.mode}: {collapse_title(eager, compiled)}",
                  settings.chart_px + 60)


# ---- latency and per-mode metrics ----

def prepare_latency(session: Session) -> pd.DataFrame:
    """The summary table's rows that have a latency, with error-bar lengths and a speedup label."""
    table = summary_table(session)
    table = table[table.median_ms.notna()].reset_index(drop=True)
    table["err_plus"] = table.p90_ms - table.median_ms
    table["err_minus"] = table.median_ms - table.p10_ms
    table["label"] = [
        "baseline" if mode == "eager" else (f"{s:.2f}× vs eager" if pd.notna(s) else "")
        for mode, s in zip(table["mode"], table.speedup, strict=True)
    ]
    return table


def latency_figure(session: Session, settings: ChartSettings = DEFAULT_SETTINGS) -> go.Figure:
    """Median latency per call for each mode with its p10–p90 spread; horizontal, eager on top, so that five
    mode names stay readable; the speedup vs eager stands under each mode's name, clear of the error bar."""
    table = prepare_latency(session)
    colours = ["#7F7F7F" if m == "eager" else ("#54A24B" if (s or 0) >= 1 else "#E45756")
               for m, s in zip(table["mode"], table.speedup.fillna(0), strict=True)]
    ticks = [f"<b>{m}</b><br>{label}" for m, label in zip(table["mode"], table.label, strict=True)]
    fig = go.Figure(go.Bar(
        y=ticks, x=table.median_ms, orientation="h", marker_color=colours, text=table.label, textposition="none",
        error_x={"type": "data", "symmetric": False, "array": table.err_plus, "arrayminus": table.err_minus,
                 "color": "#333333", "thickness": 1.5},
        customdata=table[["p10_ms", "p90_ms"]].to_numpy(),
        hovertemplate="%{y}<br>median %{x:.4f} ms<br>p10 %{customdata[0]:.4f} · p90 %{customdata[1]:.4f}"
                      "<extra></extra>",
        cliponaxis=False,
    ))
    top = float((table.median_ms + table.err_plus).max()) if len(table) else 1.0
    fig.update_xaxes(title_text="ms per call (median, p10–p90)", range=[0, top * 1.15], gridcolor="#EEEEEE")
    fig.update_yaxes(autorange="reversed")
    height = max(settings.chart_px, 120 + 2 * settings.lane_px // 3 * len(table))
    return _style(fig, settings, "Latency per call", height)


METRICS: tuple[tuple[str, str], ...] = (
    ("kernels_per_iteration", "kernels/iter"),
    ("busy_pct", "busy %"),
    ("compile_s", "compile s"),
    ("break_even_calls", "break-even calls"),
)


def prepare_metrics(session: Session) -> pd.DataFrame:
    """Long table (mode, metric, title, value, text) of the companion metrics; break-even of a compiled
    mode that is not faster reads 'never'."""
    table = summary_table(session)
    table = table[table.status == "ok"]
    rows = []
    for column, title in METRICS:
        for mode, value in zip(table["mode"], table[column], strict=True):
            if column in ("compile_s", "break_even_calls") and mode == "eager":
                continue
            missing = value is None or pd.isna(value)
            text = ("never" if column == "break_even_calls" else "–") if missing else f"{value:,.3g}"
            rows.append({"mode": mode, "metric": column, "title": title,
                         "value": 0.0 if missing else float(value), "text": text})
    return pd.DataFrame(rows, columns=["mode", "metric", "title", "value", "text"])


def metrics_figure(session: Session, settings: ChartSettings = DEFAULT_SETTINGS) -> go.Figure:
    """Small bars per metric: kernels per iteration, busy %, compile time and break-even calls."""
    long = prepare_metrics(session)
    modes = list(dict.fromkeys(long["mode"]))
    # Two by two, horizontal bars on one shared list of modes: long mode names read on the left column only.
    fig = make_subplots(rows=2, cols=2, subplot_titles=[t for _, t in METRICS], shared_yaxes=True,
                        horizontal_spacing=0.06, vertical_spacing=0.18)
    for i, (metric, _) in enumerate(METRICS):
        rows = long[long.metric == metric]
        fig.add_trace(go.Bar(y=rows["mode"], x=rows.value, text=rows.text, textposition="outside", orientation="h",
                             cliponaxis=False, showlegend=False, hovertemplate="%{y}: %{text}<extra></extra>",
                             marker_color=["#7F7F7F" if m == "eager" else "#4C78A8" for m in rows["mode"]]),
                      row=i // 2 + 1, col=i % 2 + 1)
        top = float(rows.value.max()) if len(rows) else 0.0
        fig.update_xaxes(range=[0, (top or 1.0) * 1.45], row=i // 2 + 1, col=i % 2 + 1, gridcolor="#EEEEEE")
    fig.update_yaxes(categoryorder="array", categoryarray=modes, autorange="reversed")
    fig.update_annotations(font_size=settings.font_size)
    return _style(fig, settings, "Per mode", max(settings.chart_px, 200 + 2 * settings.lane_px // 3 * len(modes)))


# ---- kernel tables and statistics ----

def kernel_table(run: ModeRun, all_iterations: bool = False) -> pd.DataFrame:
    """The kernel table of one iteration (or all), as shown and downloaded: fused ops as text."""
    frame = run.kernel_frame() if all_iterations else iteration_kernels(run)
    shown = frame.assign(fused_ops=frame.fused_ops.map(lambda ops: ", ".join(ops)))
    return shown[[c for c in KERNEL_COLUMNS if c != "short_name"]]


STATS_COLUMNS: dict[str, str] = {
    "name": "kernel name",
    "kernel_class": "kernel class",
    "count": "launches over all profiled iterations",
    "per_iteration": "launches per iteration",
    "total_us": "total time over all profiled iterations, µs",
    "mean_us": "mean duration, µs",
    "share_pct": "share of all kernel time, percent",
}


def prepare_kernel_stats(run: ModeRun) -> pd.DataFrame:
    """Per kernel name: count, total and mean µs, share of kernel time; longest total first."""
    frame = run.kernel_frame()
    iterations = max(run.summary.iterations if run.summary else 1, 1)
    grouped = frame.groupby(["name", "kernel_class"], as_index=False).agg(
        count=("dur_us", "size"), total_us=("dur_us", "sum"), mean_us=("dur_us", "mean"))
    grouped["per_iteration"] = grouped["count"] / iterations
    total = grouped.total_us.sum()
    grouped["share_pct"] = 100 * grouped.total_us / total if total > 0 else 0.0
    return grouped.sort_values("total_us", ascending=False, kind="stable").reset_index(drop=True)[list(STATS_COLUMNS)]


def prepare_class_stats(run: ModeRun) -> pd.DataFrame:
    """Per kernel class: count, total and mean µs, with the class's description."""
    stats = prepare_kernel_stats(run)
    grouped = stats.groupby("kernel_class", as_index=False).agg(
        count=("count", "sum"), per_iteration=("per_iteration", "sum"), total_us=("total_us", "sum"),
        share_pct=("share_pct", "sum"))
    grouped["mean_us"] = grouped.total_us / grouped["count"]
    grouped["description"] = grouped.kernel_class.map(CLASS_DESCRIPTIONS)
    return grouped.sort_values("total_us", ascending=False, kind="stable").reset_index(drop=True)


def prepare_diff(a: ModeRun, b: ModeRun) -> pd.DataFrame:
    """Kernels per iteration and µs per iteration by name in two runs, and B minus A; largest change first."""
    sa, sb = prepare_kernel_stats(a), prepare_kernel_stats(b)
    ia = max(a.summary.iterations if a.summary else 1, 1)
    ib = max(b.summary.iterations if b.summary else 1, 1)
    left = sa.assign(us_per_iteration=sa.total_us / ia)[["name", "kernel_class", "per_iteration", "us_per_iteration"]]
    right = sb.assign(us_per_iteration=sb.total_us / ib)[["name", "kernel_class", "per_iteration", "us_per_iteration"]]
    merged = left.merge(right, on=["name", "kernel_class"], how="outer", suffixes=("_a", "_b")).fillna(0.0)
    merged["count_diff"] = merged.per_iteration_b - merged.per_iteration_a
    merged["us_diff"] = merged.us_per_iteration_b - merged.us_per_iteration_a
    order = merged.us_diff.abs().sort_values(ascending=False, kind="stable").index
    return merged.loc[order].reset_index(drop=True)


def class_stats_figure(runs: list[ModeRun], settings: ChartSettings = DEFAULT_SETTINGS) -> go.Figure:
    """Kernel time per iteration by class, one stacked bar per run: where the time goes, side by side."""
    fig = go.Figure()
    stats = {r.mode: prepare_class_stats(r) for r in runs}
    iterations = {r.mode: max(r.summary.iterations if r.summary else 1, 1) for r in runs}
    for kernel_class in KERNEL_CLASSES:
        ys = [float(s.total_us[s.kernel_class == kernel_class].sum()) / iterations[m] for m, s in stats.items()]
        if any(ys):
            fig.add_trace(go.Bar(x=list(stats), y=ys, name=kernel_class, marker_color=CLASS_COLOURS[kernel_class],
                                 hovertemplate=f"{kernel_class}: %{{y:.1f}} µs<extra></extra>"))
    fig.update_layout(barmode="stack")
    fig.update_yaxes(title_text="kernel µs per iteration", gridcolor="#EEEEEE")
    return _style(fig, settings, "Kernel time by class", settings.chart_px)


def prepare_pair_summary(a: ModeRun, b: ModeRun) -> pd.DataFrame:
    """Per-iteration figures of two runs side by side, with B minus A."""
    rows = []
    for title, field_name in (("kernels per iteration", "kernels_per_iteration"), ("kernel µs per iteration",
                              "kernel_time_us"), ("iteration span, µs", "span_us"), ("idle µs per iteration",
                              "idle_us"), ("largest gap, µs", "largest_gap_us")):
        va = getattr(a.summary, field_name) if a.summary else float("nan")
        vb = getattr(b.summary, field_name) if b.summary else float("nan")
        rows.append({"quantity": title, "A": va, "B": vb, "B - A": vb - va})
    return pd.DataFrame(rows, columns=["quantity", "A", "B", "B - A"])


# ---- methodology: the naive snippet next to the proper measurement ----

METHODOLOGY_COLUMNS: dict[str, str] = {
    "quantity": "what is measured",
    "naive": "what the naive loop reports",
    "proper": "what fusionviz measures",
    "low": "proper measurement's pessimistic end (speedups only)",
    "high": "proper measurement's optimistic end (speedups only)",
}


def prepare_methodology(naive: Mapping[str, Any], session: Session) -> pd.DataFrame:
    """Naive (a `naive.NaiveResult` as a dict, as the worker returns it) against the session's proper
    figures for the same mode; empty when eager or that mode did not run."""
    eager, run = session.run("eager"), session.run(str(naive["mode"]))
    if not (eager and run and eager.ok and run.ok and eager.latency and run.latency and eager.summary
            and run.summary):
        return pd.DataFrame(columns=list(METHODOLOGY_COLUMNS))
    mode = run.mode
    rows = [
        (f"speedup of {mode} over eager", naive["naive_speedup"], run.speedup, run.speedup_low, run.speedup_high),
        ("eager, ms per call", naive["naive_eager_ms"], eager.latency.median_ms, eager.latency.p10_ms,
         eager.latency.p90_ms),
        (f"{mode}, ms per call", naive["naive_mode_ms"], run.latency.median_ms, run.latency.p10_ms,
         run.latency.p90_ms),
        ("eager, kernels", naive["key_averages_rows_eager"], eager.summary.kernels_per_iteration, None, None),
        (f"{mode}, kernels", naive["key_averages_rows_mode"], run.summary.kernels_per_iteration, None, None),
    ]
    return pd.DataFrame(rows, columns=list(METHODOLOGY_COLUMNS)).astype(
        {"naive": float, "proper": float, "low": float, "high": float})


def methodology_note(table: pd.DataFrame) -> str:
    """One sentence on how far apart the two measurements are."""
    speed, kernels = table.iloc[0], table.iloc[3]
    return (f"The naive loop reports a {speed.naive:.2f}× speedup; measured properly it is {speed.proper:.2f}× "
            f"(range {speed.low:.2f}–{speed.high:.2f}×). key_averages() lists {kernels.naive:g} rows for eager, "
            f"which runs {kernels.proper:g} kernels per iteration.")


def methodology_figure(table: pd.DataFrame, settings: ChartSettings = DEFAULT_SETTINGS) -> go.Figure:
    """Speedup and kernel count, naive bars next to proper ones (with the proper speedup's range)."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=["speedup over eager", "kernel count"],
                        horizontal_spacing=0.12)
    speed, kernels = table.iloc[[0]], table.iloc[[3, 4]]
    labels = [q.removesuffix(", kernels") for q in kernels.quantity]
    for method, colour in (("naive", "#BAB0AC"), ("proper", "#4C78A8")):
        error = ({"type": "data", "symmetric": False, "array": speed.high - speed.proper,
                  "arrayminus": speed.proper - speed.low} if method == "proper" else None)
        fig.add_trace(go.Bar(x=["speedup"], y=speed[method], name=method, marker_color=colour, error_y=error,
                             text=[f"{v:.2f}×" for v in speed[method]], textposition="inside",
                             insidetextanchor="start", legendgroup=method), row=1, col=1)
        fig.add_trace(go.Bar(x=labels, y=kernels[method], name=method, marker_color=colour, showlegend=False,
                             text=[f"{v:g}" for v in kernels[method]], textposition="outside", cliponaxis=False,
                             legendgroup=method), row=1, col=2)
    fig.add_hline(y=1.0, line={"dash": "dot", "color": "#777777"}, row=1, col=1)
    top = float(max(speed.naive.max(), speed.high.max()))
    fig.update_yaxes(range=[0, top * 1.3], row=1, col=1, gridcolor="#EEEEEE")
    fig.update_yaxes(range=[0, float(kernels[["naive", "proper"]].to_numpy().max()) * 1.3], row=1, col=2,
                     gridcolor="#EEEEEE")
    fig.update_layout(barmode="group")
    fig.update_annotations(font_size=settings.font_size)
    _style(fig, settings, "Naive loop vs proper measurement", settings.chart_px)
    fig.update_layout(legend={"yanchor": "top", "y": -0.1})  # the subplot titles take the top edge
    return fig


# ---- shape sweeps: what each strategy compiles as shapes change, and what it costs ----

# One fixed colour per strategy, so a strategy looks the same in every sweep figure.
STRATEGY_COLOURS: dict[str, str] = {
    "static": "#E45756",
    "dynamic": "#4C78A8",
    "automatic": "#54A24B",
    "mark_dynamic": "#B279A2",
    "buckets": "#F58518",
}
FALLBACK_COLOUR = "#000000"


def ok_strategies(session: Session) -> list[StrategyRun]:
    """The strategies of the session's sweep that ran (an errored one has no calls to draw)."""
    return [s for s in session.sweep.strategies if s.status == "ok"] if session.sweep else []


SWEEP_CALL_COLUMNS: dict[str, str] = {
    "strategy": "the strategy",
    "index": "call number in the schedule, from 0",
    "size": "the swept dimension's size in this call",
    "latency_ms": "wall time of this call, compiles included, ms",
    "compiled": "this call compiled (a first compile or a recompile)",
    "compile_s": "compile time inside this call, s",
    "fell_back_to_eager": "the recompile limit was hit: Dynamo ran this call in eager",
    "cumulative_s": "wall time of the schedule up to and including this call, s",
    "reason": "why this call compiled: 'first compile' or Dynamo's recompile reason (guard failure)",
}


def prepare_sweep_calls(session: Session) -> pd.DataFrame:
    """`analysis.sweep_calls` of the strategies that ran, each compiling call with its reason.

    Dynamo reports each distinct recompile reason once, in order, so the n-th recompiling call of a
    strategy gets its n-th reason; the first compile has none.
    """
    calls = sweep_calls(session)
    reasons = []
    for run in ok_strategies(session):
        guards = [r for r in run.recompile_reasons if not r.startswith("recompile limit hit")]
        seen = 0
        for call in run.calls:
            if not call.compiled:
                reasons.append("")
                continue
            reasons.append("first compile" if seen == 0 else (guards[seen - 1] if seen - 1 < len(guards)
                                                              else "recompile (no reason reported)"))
            seen += 1
    drawn = calls[calls.strategy.isin([s.strategy for s in ok_strategies(session)])].reset_index(drop=True)
    return drawn.assign(reason=reasons)[list(SWEEP_CALL_COLUMNS)]


def recompile_limit_note(session: Session) -> str:
    """One sentence per strategy that hit the recompile limit: from which call it ran in eager."""
    notes = []
    for run in ok_strategies(session):
        fallen = [c.index for c in run.calls if c.fell_back_to_eager]
        if run.recompile_limit_hit and fallen:
            notes.append(f"{run.strategy} hit Dynamo's recompile limit at call {fallen[0]}: it and the "
                         f"{len(fallen) - 1} calls after it ran in eager, uncompiled")
    return "; ".join(notes) + ("." if notes else "")


def sweep_latency_figure(session: Session, settings: ChartSettings = DEFAULT_SETTINGS) -> go.Figure:
    """Latency of every call, one line per strategy on a log scale: compile stalls stand out as peaks,
    marked with their compile time and recompile reason; eager fallbacks after the recompile limit are
    crossed out."""
    calls = prepare_sweep_calls(session)
    fig = go.Figure()
    dimension = session.sweep.dimension if session.sweep else "size"
    for strategy, rows in calls.groupby("strategy", sort=False):
        colour = STRATEGY_COLOURS.get(str(strategy), "#7F7F7F")
        fig.add_trace(go.Scatter(
            x=rows["index"], y=rows.latency_ms, mode="lines+markers", name=str(strategy), legendgroup=str(strategy),
            line={"color": colour, "width": 2}, marker={"size": 5, "color": colour},
            customdata=rows[["size"]].to_numpy(),
            hovertemplate=f"<b>{strategy}</b> call %{{x}}<br>{dimension} %{{customdata[0]}}<br>"
                          "%{y:.3f} ms<extra></extra>"))
        compiled = rows[rows.compiled]
        if len(compiled):
            fig.add_trace(go.Scatter(
                x=compiled["index"], y=compiled.latency_ms, mode="markers", name=f"{strategy}: compiled",
                legendgroup=str(strategy), showlegend=False,
                marker={"symbol": "diamond", "size": 13, "color": colour, "line": {"width": 1.5, "color": "white"}},
                customdata=compiled[["size", "compile_s", "reason"]].to_numpy(dtype=object),
                hovertemplate=f"<b>{strategy} compiled</b> at call %{{x}} ({dimension} %{{customdata[0]}})<br>"
                              "compile %{customdata[1]:.2f} s of %{y:.0f} ms<br>%{customdata[2]}<extra></extra>"))
        fallen = rows[rows.fell_back_to_eager]
        if len(fallen):
            fig.add_trace(go.Scatter(
                x=fallen["index"], y=fallen.latency_ms, mode="markers", name=f"{strategy}: ran in eager",
                legendgroup=str(strategy),
                marker={"symbol": "x-thin", "size": 14, "color": FALLBACK_COLOUR,
                        "line": {"width": 2.5, "color": FALLBACK_COLOUR}},
                customdata=fallen[["size"]].to_numpy(),
                hovertemplate=f"<b>{strategy}: eager</b> at call %{{x}} ({dimension} %{{customdata[0]}})<br>"
                              "the recompile limit was hit: Dynamo no longer compiles this frame<extra></extra>"))
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name="compiled in this call",
                             marker={"symbol": "diamond", "size": 11, "color": "#7F7F7F"}, hoverinfo="skip"))
    note = recompile_limit_note(session)
    if note:
        fig.add_annotation(text=note, xref="paper", yref="paper", x=0, y=-0.2, xanchor="left", yanchor="top",
                           showarrow=False, align="left", font={"size": settings.font_size})
    fig.update_yaxes(type="log", dtick=1, title_text="ms per call (log)", gridcolor="#EEEEEE")  # decades only
    fig.update_xaxes(title_text="call in the schedule", gridcolor="#EEEEEE", dtick=1 if len(calls) and
                     calls["index"].max() < 30 else None)
    fig = _style(fig, settings, "Latency of every call: compiles are the peaks", settings.chart_px + 40)
    if note:
        fig.update_layout(margin={"b": 90 + 2 * settings.font_size})
    return fig


def prepare_sweep_steady(session: Session) -> pd.DataFrame:
    """Steady-state latency (compiles done) per strategy and size, sizes ascending."""
    rows = [{"strategy": run.strategy, "size": size, "steady_ms": run.steady_ms_by_size[str(size)]}
            for run in ok_strategies(session) for size in sorted(int(k) for k in run.steady_ms_by_size)]
    return pd.DataFrame(rows, columns=["strategy", "size", "steady_ms"])


def sweep_steady_figure(session: Session, settings: ChartSettings = DEFAULT_SETTINGS) -> go.Figure:
    """Steady-state latency against the swept size, one line per strategy: what each pays per call once
    its compiles are done (padding, masks, symbolic sizes)."""
    steady = prepare_sweep_steady(session)
    dimension = session.sweep.dimension if session.sweep else "size"
    fig = go.Figure()
    for strategy, rows in steady.groupby("strategy", sort=False):
        fig.add_trace(go.Scatter(
            x=rows["size"], y=rows.steady_ms, mode="lines+markers", name=str(strategy),
            line={"color": STRATEGY_COLOURS.get(str(strategy), "#7F7F7F"), "width": 2}, marker={"size": 7},
            hovertemplate=f"<b>{strategy}</b><br>{dimension} %{{x}}: %{{y:.4f}} ms<extra></extra>"))
    fig.update_xaxes(title_text=dimension, gridcolor="#EEEEEE")
    fig.update_yaxes(title_text="steady-state ms per call", rangemode="tozero", gridcolor="#EEEEEE")
    return _legend_below(_style(fig, settings, f"Steady-state latency against {dimension}", settings.chart_px + 60))


def _legend_below(fig: go.Figure) -> go.Figure:
    """Legend under the x axis: five strategies wrap to two lines, which would cover a half-width title."""
    fig.update_layout(legend={"yanchor": "top", "y": -0.22}, margin={"b": 110})
    return fig


def sweep_leader(calls: pd.DataFrame) -> tuple[str, int] | None:
    """The strategy with the least cumulative time at the end, and the call from which it stays ahead."""
    if calls.empty:
        return None
    wide = calls.pivot(index="index", columns="strategy", values="cumulative_s")
    leaders = wide.idxmin(axis=1)
    best = str(leaders.iloc[-1])
    behind = leaders[leaders != best]
    return best, int(behind.index.max()) + 1 if len(behind) else int(leaders.index.min())


def sweep_cumulative_figure(session: Session, settings: ChartSettings = DEFAULT_SETTINGS) -> go.Figure:
    """Cumulative wall time against calls, one line per strategy: compiles push a line up, and the
    strategy lowest at the end pays over this schedule; a dotted line marks where it takes the lead."""
    calls = prepare_sweep_calls(session)
    fig = go.Figure()
    for strategy, rows in calls.groupby("strategy", sort=False):
        fig.add_trace(go.Scatter(
            x=rows["index"], y=rows.cumulative_s, mode="lines+markers", name=str(strategy),
            line={"color": STRATEGY_COLOURS.get(str(strategy), "#7F7F7F"), "width": 2, "shape": "hv"},
            marker={"size": 5},
            hovertemplate=f"<b>{strategy}</b><br>after call %{{x}}: %{{y:.3f}} s<extra></extra>"))
    leader = sweep_leader(calls)
    title = "Cumulative time over the schedule"
    if leader:
        strategy, since = leader
        title += f": {strategy} is ahead from call {since}"
        fig.add_vline(x=since, line={"color": STRATEGY_COLOURS.get(strategy, "#7F7F7F"), "dash": "dot", "width": 2})
    fig.update_xaxes(title_text="call in the schedule", gridcolor="#EEEEEE")
    fig.update_yaxes(title_text="seconds so far (compiles included)", rangemode="tozero", gridcolor="#EEEEEE")
    return _legend_below(_style(fig, settings, title, settings.chart_px + 60))


def prepare_recompile_reasons(session: Session) -> pd.DataFrame:
    """Every recompile (guard failure) reason per strategy, in the order Dynamo reported them."""
    rows = [{"strategy": run.strategy, "n": i, "reason": reason}
            for run in ok_strategies(session) for i, reason in enumerate(run.recompile_reasons, start=1)]
    return pd.DataFrame(rows, columns=["strategy", "n", "reason"])


def sweep_kernel_frame(run: StrategyRun) -> pd.DataFrame:
    """The kernels of one profiled call at the sweep's kernel size, in launch order."""
    frame = kernel_frame(run.kernels, f"{run.strategy} kernel table")
    first = frame[frame.iteration == frame.iteration.min()] if len(frame) else frame
    return first.sort_values("start_us", kind="stable").reset_index(drop=True)


KERNEL_DIFF_COLUMNS: dict[str, str] = {
    "name": "kernel name (the n-th launch of a name is matched with the other side's n-th)",
    "kernel_class": "kernel class",
    "us_a": "duration under strategy A, µs",
    "us_b": "duration under strategy B, µs",
    "grid_a": "launch grid under A",
    "grid_b": "launch grid under B",
    "difference": "'same', 'grid differs', 'source differs', 'only in A' or 'only in B'",
}


def prepare_sweep_kernel_diff(a: StrategyRun, b: StrategyRun) -> pd.DataFrame:
    """The kernels of one shape under two strategies, side by side, and how each pair differs."""
    def keyed(run: StrategyRun) -> pd.DataFrame:
        frame = sweep_kernel_frame(run)
        return frame.assign(nth=frame.groupby("name").cumcount(), pos=frame.index.astype(float))[
            ["name", "nth", "pos", "kernel_class", "dur_us", "grid"]]

    merged = keyed(a).merge(keyed(b), on=["name", "nth"], how="outer", suffixes=("_a", "_b"))
    # Launch order of A, each kernel only B runs placed by its own launch position.
    merged = merged.assign(order=merged.pos_a.fillna(merged.pos_b - 0.5)).sort_values("order", kind="stable")
    rows = []
    for r in merged.itertuples():
        source_a, source_b = sources.sweep_source(a, r.name), sources.sweep_source(b, r.name)
        if pd.isna(r.dur_us_b):
            difference = "only in A"
        elif pd.isna(r.dur_us_a):
            difference = "only in B"
        elif source_a and source_b and source_a != source_b:
            difference = "source differs"
        elif r.grid_a != r.grid_b:
            difference = "grid differs"
        else:
            difference = "same"
        rows.append({"name": r.name, "kernel_class": r.kernel_class_a if pd.notna(r.kernel_class_a)
                     else r.kernel_class_b, "us_a": r.dur_us_a, "us_b": r.dur_us_b,
                     "grid_a": "" if pd.isna(r.grid_a) else r.grid_a, "grid_b": "" if pd.isna(r.grid_b) else r.grid_b,
                     "difference": difference})
    return pd.DataFrame(rows, columns=list(KERNEL_DIFF_COLUMNS))




