"""What fused into what: eager kernels on one row, the compiled mode's kernels on the other, a line from each
eager kernel to the compiled kernel that absorbed it; and the same as an animation for talks."""

from __future__ import annotations

import math
import re
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from fusionviz.analysis.links import LINK_WORDS, Collapse
from fusionviz.charts.style import (
    BREAK_COLOUR,
    CHAR_EM,
    CLASS_COLOURS,
    DEFAULT_SETTINGS,
    EDGE_PX,
    ChartSettings,
    style,
)
from fusionviz.records.kernels import KERNEL_CLASSES

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
    "origin": "where it came from: an eager kernel's module and line, a compiled kernel's source ops and lines "
              "(Inductor's records); '' where the session does not say",
}


def collapse_layout(collapse: Collapse) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Nodes (COLLAPSE_COLUMNS) and links (analysis.LINK_COLUMNS) of one steady iteration of each mode.

    Eager kernels sit in launch order on slots 0, 1, 2…; each compiled kernel sits over the mean slot of
    the eager kernels it absorbed (kept in launch order, at least one slot apart), so links run nearly
    straight down and a fusion reads as several lines meeting in one box.
    """
    ek, ck, links = collapse.eager, collapse.compiled, collapse.links.table
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
                      "role": [eager_role(i) for i in range(len(ek))], "origin": collapse.eager_origins}),
        pd.DataFrame({"side": "compiled", "index": range(len(ck)), "x": xs, "name": ck.name,
                      "label": _node_labels(ck),
                      "kernel_class": ck.kernel_class, "dur_us": ck.dur_us,
                      "links": [len(set(per_compiled.get(i, []))) for i in range(len(ck))],
                      "role": [compiled_role(i) for i in range(len(ck))],
                      "origin": collapse.compiled_origins}),
    ], ignore_index=True)
    return nodes[list(COLLAPSE_COLUMNS)], links


_Y_EAGER, _Y_COMPILED = 1.0, 0.0
SIDE_SLOTS = 0.8  # room left of the first slot and right of the last, in slots
NODE_EM = 2.4  # a node's side, in font sizes


def _slots(nodes: pd.DataFrame) -> float:
    """The x axis's width in slots: the last node's slot, and room on either side."""
    return float(max(nodes.x.max() if len(nodes) else 0.0, 1.0) + 2 * SIDE_SLOTS)  # a plain float: see node_px


_ROLE_STYLE: dict[str, dict[str, Any]] = {  # a node's outline: a fusion stands out, a kernel kept one-to-one does not
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


MAX_LINES = 3  # a node's label, at most; what does not fit is counted ("+2 more"), and the hover says it all
_BREAKS = re.compile(r"(?<=[_<>,])|(?<=[a-z])(?=[A-Z])")  # where a name may wrap: after _ or a bracket, in camelCase


def node_label(label: str, kernel_class: str, chars: int) -> str:
    """A node's label written to fit `chars` a line, in at most MAX_LINES lines (Plotly's <br>), its end kept:
    the ops a fused kernel covers are the answer, so they wrap at their "+" rather than lose their tail to an
    ellipsis. Written shorter first: "aten::" and the leading underscores of private ops go, and "native_"
    (an implementation's prefix: `native_layer_norm` is layer_norm), `_shorter`. A single op longer than a line
    wraps after an underscore; ops beyond MAX_LINES are counted ("+3 more"). A kernel's own name that needs more
    than two lines (cuBLAS' `sm80_xmma_gemm_f32f32_…`) is labelled by its class; its hover carries the name."""
    ops = [_shorter(part) for part in label.split("+")]
    lines = _pack([piece for i, op in enumerate(ops) for piece in _pieces(op + "+" * (i < len(ops) - 1), chars)],
                  chars)
    if len(ops) == 1 and len(lines) > MAX_LINES - 1:
        return kernel_class  # a library kernel's tile configuration: noise at the back of the room
    for shown in range(len(ops), 0, -1):  # as many whole ops as fit, the rest counted
        more = [f"{len(ops) - shown} more"] if shown < len(ops) else []
        lines = _pack([piece for op in ops[:shown - 1] for piece in _pieces(op + "+", chars)]
                      + _pieces(ops[shown - 1] + ("+" if more else ""), chars) + more, chars)
        if len(lines) <= MAX_LINES:
            return "<br>".join(lines)
    return f"{len(ops)} ops"


def _pack(pieces: list[str], chars: int) -> list[str]:
    """Pieces joined into lines of at most `chars` (a piece longer than that stands on a line of its own)."""
    lines: list[str] = []
    for piece in pieces:
        if lines and len(lines[-1]) + len(piece) <= chars:
            lines[-1] += piece
        else:
            lines.append(piece)
    return lines


def _shorter(op: str) -> str:
    """An op's name without what only its implementation needs: "aten::", a private op's leading underscore, the
    "native_" prefix and the variant's suffix (`_native_batch_norm_legit_no_training` is batch_norm,
    `_efficient_attention_forward` efficient_attention)."""
    short = re.sub(r"_(legit(_no_training)?|forward)$", "", op.removeprefix("aten::").lstrip("_"))
    return re.sub(r"^native_", "", short) or op


def _pieces(op: str, chars: int) -> list[str]:
    """An op in pieces of at most `chars`, cut after underscores and brackets where it is longer."""
    if len(op) <= chars:
        return [op]
    pieces: list[str] = []
    for word in _BREAKS.split(op):
        if pieces and len(pieces[-1]) + len(word) <= chars:
            pieces[-1] += word
        else:
            pieces.append(word)
    return pieces


def row_labels(row: pd.DataFrame, settings: ChartSettings, slots: float, above: bool) -> list[str]:
    """The labels of one row of nodes (`node_label`), each written to fit the room to its nearest neighbour
    (`slots` across the plot). Where a name cannot wrap into that room (18 eager kernels of a pointwise chain in
    one row: "sigmoid" is wider than a slot), every other label moves one band out, `above` the row or below it,
    so that each has two slots."""
    xs = [float(x) for x in row.x]
    gaps = [min([abs(x - other) for j, other in enumerate(xs) if j != i] or [slots]) for i, x in enumerate(xs)]

    def fitted(widen: int) -> tuple[list[str], bool]:
        labels, fits = [], True
        for label, kernel_class, gap in zip(row.label, row.kernel_class, gaps, strict=True):
            chars = min(settings.label_chars, settings.chars_across(slots / (gap * widen)))
            text = node_label(label, kernel_class, chars)
            labels.append(text)
            fits = fits and all(len(line) <= chars for line in text.split("<br>"))
        return labels, fits

    labels, fits = fitted(1)
    if fits:
        return labels
    labels, fits = fitted(2)
    if not fits:
        return _longest_labelled(row, settings, slots)
    depth = max((label.count("<br>") + 1 for label in labels[::2]), default=0)
    blank = "<br> " * depth if above else " <br>" * depth
    return [label if i % 2 == 0 else (label + blank if above else blank + label) for i, label in enumerate(labels)]


def _longest_labelled(row: pd.DataFrame, settings: ChartSettings, slots: float) -> list[str]:
    """Labels for a row too dense to name every node even on two bands (GPT-2's 218 eager kernels): the longest
    kernels first, each at full width, where it stays on the plot and runs into no label already placed (a
    character apart); the rest unlabelled (their hover names them)."""
    px_per_slot, char_px = settings.plot_px / slots, CHAR_EM * settings.font_size
    labels = [""] * len(row)
    placed: list[tuple[float, float]] = []  # (centre, width with a character's gap) in px from the plot's left
    for i in sorted(range(len(row)), key=lambda i: -float(row.dur_us.iloc[i])):
        text = node_label(row.label.iloc[i], row.kernel_class.iloc[i], settings.label_chars)
        width = (max(len(line) for line in text.split("<br>")) + 1) * char_px
        centre = (float(row.x.iloc[i]) + SIDE_SLOTS) * px_per_slot
        inside = width / 2 <= centre <= settings.plot_px - width / 2
        if inside and all(abs(centre - c) >= (width + w) / 2 for c, w in placed):
            labels[i] = text
            placed.append((centre, width))
    return labels


def node_px(settings: ChartSettings, slots: float) -> float:
    """A node's side: NODE_EM of the font, or less where the row is so dense that squares that large would
    overlap (a slot's width, less a gap). A plain float: the animation sets a row's sizes to a list, and Plotly
    compares the list with a NumPy scalar it held before element by element, which raised on a dense row (GPT-2's)."""
    return min(settings.font_size * NODE_EM, 0.8 * settings.plot_px / slots)


LINE_EM = 1.3  # a line of text's height, in font sizes


def y_range(eager: list[str], compiled: list[str], settings: ChartSettings) -> list[float]:
    """The y axis's range (eager's row at 1, the compiled one at 0) that leaves room for the longest label above
    eager's row and below the compiled one, at the plot height `settings` lays a chart out at; never less than
    -0.6 to 1.6."""
    plot_px = settings.chart_px - (40 + EDGE_PX + settings.title_size + 2 * settings.font_size) - 40
    line_px = LINE_EM * settings.font_size
    above, below = ((NODE_EM / 2 + 0.5) * settings.font_size + line_px * max((t.count("<br>") + 1 for t in texts),
                                                                               default=0)
                    for texts in (eager, compiled))
    total = 1 / max(1 - (above + below) / plot_px, 0.2)  # the range, in rows, such that the labels fit
    return [min(-0.6, -below * total / plot_px), max(1.6, 1 + above * total / plot_px)]


def _node_trace(nodes: pd.DataFrame, y: float, settings: ChartSettings, name: str, labels: list[str],
                slots: float) -> go.Scatter:
    """One row of nodes with their labels (`row_labels`), `node_px` wide."""
    return go.Scatter(
        x=nodes.x, y=[y] * len(nodes), mode="markers+text", name=name, showlegend=False, text=labels,
        textposition="top center" if y == _Y_EAGER else "bottom center",
        # Opacity set: Plotly dims markers whose sizes are an array (a bubble chart), as the animation's are.
        marker={"symbol": "square", "size": node_px(settings, slots), "opacity": 1.0,
                "color": [CLASS_COLOURS[c] for c in nodes.kernel_class],
                "line": {"width": [_ROLE_STYLE[r]["width"] for r in nodes.role],
                         "color": [_ROLE_STYLE[r]["color"] for r in nodes.role]}},
        customdata=nodes[["name", "kernel_class", "dur_us", "role", "origin"]].to_numpy(dtype=object),
        hovertemplate="<b>%{customdata[0]}</b><br>%{customdata[1]}, %{customdata[2]:.1f} µs<br>"
                      "%{customdata[3]}<br>%{customdata[4]}<extra></extra>",
    )


# What each outline means, for the legend: every outline drawn on a node has its entry.
OUTLINE_WORDS = {"fusion": "fused: several eager kernels in one", "new": "no eager counterpart",
                 "unmatched": "eager kernel linked to none"}


def _outline_legend(fig: go.Figure, roles: list[str]) -> None:
    """One legend entry per outline the figure draws (a white square in that outline): the bold black of a
    fusion, the red of a compiled kernel with no eager counterpart and of an eager kernel linked to none."""
    for role, words in OUTLINE_WORDS.items():
        if role in roles:
            line = {"width": _ROLE_STYLE[role]["width"], "color": _ROLE_STYLE[role]["color"]}
            fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=words, hoverinfo="skip",
                                     marker={"symbol": "square", "size": 14, "color": "white", "line": line}))


def _class_legend(fig: go.Figure, classes: list[str]) -> None:
    for kernel_class in KERNEL_CLASSES:
        if kernel_class in classes:
            fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=kernel_class,
                                     marker={"symbol": "square", "size": 12, "color": CLASS_COLOURS[kernel_class]},
                                     hoverinfo="skip"))


def collapse_figure(collapse: Collapse, settings: ChartSettings = DEFAULT_SETTINGS) -> go.Figure:
    """Eager kernels on the top row, the compiled mode's on the bottom row, a line from each eager kernel to
    the compiled kernel that absorbed it. Fusions get a bold outline; kernels kept one-to-one a thin one. The
    title says where the links come from (Inductor's records, or kernel names)."""
    nodes, links = collapse_layout(collapse)
    e, c = nodes[nodes.side == "eager"], nodes[nodes.side == "compiled"].reset_index(drop=True)
    fig = go.Figure()
    for role, dash in (("fusion", "solid"), ("kept", "dot")):
        xs: list[float | None] = []
        ys: list[float | None] = []
        for link in links.itertuples():
            if c.role[link.compiled_index] != role:
                continue
            xs += [float(e.x.iloc[link.eager_index]), float(c.x[link.compiled_index]), None]
            ys += [_Y_EAGER, _Y_COMPILED, None]
        if xs:
            fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", hoverinfo="skip",
                                     name="fused into" if role == "fusion" else "kept as is",
                                     line={"color": "#333333" if role == "fusion" else "#AAAAAA", "width": 2,
                                           "dash": dash}))
    slots = _slots(nodes)
    eager_labels, compiled_labels = row_labels(e, settings, slots, True), row_labels(c, settings, slots, False)
    fig.add_trace(_node_trace(e, _Y_EAGER, settings, "eager", eager_labels, slots))
    fig.add_trace(_node_trace(c, _Y_COMPILED, settings, collapse.mode, compiled_labels, slots))
    _class_legend(fig, list(nodes.kernel_class))
    _outline_legend(fig, list(nodes.role))
    fig.update_xaxes(visible=False, range=[-SIDE_SLOTS, slots - SIDE_SLOTS])
    fig.update_yaxes(tickvals=[_Y_EAGER, _Y_COMPILED], ticktext=["<b>eager</b>", f"<b>{collapse.mode}</b>"],
                     range=y_range(eager_labels, compiled_labels, settings), showgrid=False, zeroline=False)
    return style(fig, settings, f"{collapse.title} · {LINK_WORDS[collapse.links.kind]}", settings.chart_px)


# The animation's stages: eager as it runs, its kernels moving onto the compiled kernel that absorbs them,
# then merging into it. Each stage is a group of frames, so a button plays one stage and a speaker can talk
# between them.
STAGES: tuple[tuple[str, str], ...] = (("move", "② move"), ("merge", "③ merge"))
_MOVE_END = 0.7  # share of the movie spent moving; the rest merges


def _ease(t: float) -> float:
    return 0.5 - 0.5 * math.cos(math.pi * min(max(t, 0.0), 1.0))


def collapse_animation(collapse: Collapse, settings: ChartSettings = DEFAULT_SETTINGS, steps: int = 30,
                       seconds: float = 4.0) -> go.Figure:
    """The collapse as a movie a speaker narrates over: eager kernels slide onto the compiled kernel that
    absorbed them (the compiled kernels wait as faint outlines), then shrink into it as it grows to full
    size, so several boxes visibly become one; kernels with no counterpart stay where they are.

    `steps` frames in all, played in `seconds`; buttons play one stage at a time (① back to eager, ② move,
    ③ merge) or everything, and the slider steps frame by frame. The axes never move."""
    nodes, links = collapse_layout(collapse)
    e = nodes[nodes.side == "eager"].reset_index(drop=True)
    c = nodes[nodes.side == "compiled"].reset_index(drop=True)
    target = links.groupby("eager_index").compiled_index.first().to_dict()
    end_x = [float(c.x[target[i]]) if i in target else float(e.x[i]) for i in range(len(e))]
    slots = _slots(nodes)
    size = node_px(settings, slots)
    eager_labels, compiled_labels = row_labels(e, settings, slots, True), row_labels(c, settings, slots, False)

    def state(t: float) -> list[go.Scatter]:
        move, merge = _ease(t / _MOVE_END), _ease((t - _MOVE_END) / (1 - _MOVE_END))
        eager_trace = _node_trace(e, _Y_EAGER, settings, "eager", eager_labels, slots)
        eager_trace.x = [x0 + (x1 - x0) * move for x0, x1 in zip(e.x, end_x, strict=True)]
        eager_trace.y = [_Y_EAGER + (_Y_COMPILED - _Y_EAGER) * move if i in target else _Y_EAGER
                         for i in range(len(e))]
        eager_trace.marker.size = [size * (1 - merge) if i in target else size for i in range(len(e))]
        eager_trace.text = [n if t == 0 else "" for n in eager_trace.text]
        compiled_trace = _node_trace(c, _Y_COMPILED, settings, collapse.mode, compiled_labels, slots)
        compiled_trace.marker.size = size * (0.45 + 0.55 * merge)
        compiled_trace.marker.opacity = 0.25 + 0.75 * merge
        compiled_trace.text = [n if merge >= 1 else "" for n in compiled_trace.text]
        return [eager_trace, compiled_trace]

    times = [i / steps for i in range(steps + 1)]
    frames = [go.Frame(data=state(t), name=str(i), group="move" if t <= _MOVE_END else "merge")
              for i, t in enumerate(times)]
    fig = go.Figure(data=state(0.0), frames=frames)
    _class_legend(fig, list(nodes.kernel_class))
    _outline_legend(fig, list(nodes.role))
    fig.update_xaxes(visible=False, range=[-SIDE_SLOTS, slots - SIDE_SLOTS], fixedrange=True)
    fig.update_yaxes(tickvals=[_Y_EAGER, _Y_COMPILED], ticktext=["<b>eager</b>", f"<b>{collapse.mode}</b>"],
                     range=y_range(eager_labels, compiled_labels, settings), showgrid=False, zeroline=False,
                     fixedrange=True)
    frame_ms = 1000 * seconds / steps

    def play(what: object) -> dict[str, object]:
        return {"label": "", "method": "animate", "args": [what, {
            "frame": {"duration": frame_ms, "redraw": True}, "transition": {"duration": 0},
            "mode": "immediate", "fromcurrent": False}]}

    jump = {"mode": "immediate", "frame": {"duration": 0, "redraw": True}, "transition": {"duration": 0}}
    buttons = [{"label": "① eager", "method": "animate", "args": [["0"], jump]},
               *({**play(group), "label": label} for group, label in STAGES),
               {**play(None), "label": "▶ all"}]
    fig.update_layout(
        updatemenus=[{"type": "buttons", "direction": "left", "showactive": False, "x": 1, "xanchor": "right",
                      "y": 1.0, "yanchor": "bottom", "pad": {"b": 4}, "font": {"size": settings.font_size},
                      "buttons": buttons}],
        sliders=[{"x": 0, "len": 1, "y": 0, "yanchor": "top", "pad": {"t": 4}, "currentvalue": {"visible": False},
                  "ticklen": 0, "font": {"size": 1},
                  "steps": [{"label": "", "method": "animate", "args": [[f.name], jump]} for f in frames]}],
    )
    fig = style(fig, settings, f"eager → {collapse.title} · {LINK_WORDS[collapse.links.kind]}",
                settings.chart_px + 60)
    fig.update_layout(margin={"b": 50})  # the slider sits in the bottom margin
    return fig
