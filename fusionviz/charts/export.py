"""Slides out: a figure stamped with where its data came from, drawn at slide size (1920 × 1080) as PNG or SVG,
as a self-contained HTML file that opens offline, or (the animation) as a GIF.

PNG, SVG and GIF are drawn by kaleido, which drives a Chrome or Chromium browser: `BROWSER_PATH` when set,
else Debian's /usr/bin/chromium, else whatever kaleido finds on the PATH. Where there is none, export raises
ExportError saying so; HTML needs no browser.
"""

from __future__ import annotations

import asyncio
import io
import math
import os
import shutil
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path, PurePath
from typing import Any, Literal

import plotly.graph_objects as go

from fusionviz.analysis.sentences import Source
from fusionviz.charts.style import CHAR_EM, EDGE_PX, ChartSettings
from fusionviz.errors import ExportError

SLIDE_WIDTH, SLIDE_HEIGHT = 1920, 1080
CHROMIUM = Path("/usr/bin/chromium")
BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
STAMP_COLOUR = "#6B7280"
ImageFormat = Literal["png", "svg"]
NO_BROWSER = ("drawing an image needs a Chrome or Chromium browser and none was found: install one (Debian: "
              "apt-get install chromium) or set BROWSER_PATH to it; HTML export works without one")


def session_name(source: Source, opened_as: str | None = None) -> str:
    """The session a figure drew, by the name of its file (`opened_as`, else the session's label), folders left
    out; "" for a live run, which has no file."""
    return PurePath(opened_as or source.label).name


def source_stamp(source: Source, opened_as: str | None = None) -> str:
    """Where a figure's data came from, for its stamp: the session's file, the device, torch and the capture's
    minute ("h200_mlp_512x256_float32.json.gz · NVIDIA H200 · torch 2.11.0+cu130 · 2026-12-01 11:24"). The file
    and the minute tell two recordings of one configuration apart: one talk drew eager mlp 512 × 256 at 122 µs
    in one scene and 73 µs in another, both stamped only "NVIDIA H200 · torch 2.11.0+cu130 · 2026-12-01"."""
    name = session_name(source, opened_as)
    if source.source == "trace":
        return " · ".join(p for p in (name, f"torch.profiler trace · {source.device_kind}") if p)
    device = "CPU" if source.device_kind == "cpu" else source.device
    parts = [name, f"live {device}" if source.source == "live" else device, f"torch {source.torch}",
             source.captured_at[:16].replace("T", " ")]
    return " · ".join(p for p in parts if p)


def carry_stamp(fig: go.Figure, source: Source) -> go.Figure:
    """`fig` marked with the stamp of the session it drew (`source_stamp`, kept in its layout's meta), which
    `stamped` writes in place of the one its caller gives: a figure drawn from a Report knows its session better
    than a page that stamps it."""
    fig.update_layout(meta={"stamp": source_stamp(source)})
    return fig


def stamped(fig: go.Figure, stamp: str, settings: ChartSettings) -> go.Figure:
    """A copy of `fig` with its stamp in small grey type under its title: the session's own where the figure
    carries it (`carry_stamp`), else `stamp` (GPU, torch version, date)."""
    out = go.Figure(fig)
    size = max(10, round(settings.font_size * 0.7))
    meta = out.layout.meta
    text = meta["stamp"] if isinstance(meta, dict) and meta.get("stamp") else stamp
    out.update_layout(title_subtitle={"text": text, "font": {"size": size, "color": STAMP_COLOUR}})
    top = out.layout.margin.t if out.layout.margin.t is not None else 80
    more_rows = _legend_rows(out, settings) - 1
    out.update_layout(margin={"t": top + round(size * 1.5) + round(more_rows * settings.font_size * LEGEND_ROW)})
    return out


LEGEND_ROOM_PX = 900  # the narrowest plot a stamped chart is drawn in: the Story with the sidebar open, a camera PNG
LEGEND_ROW = 1.6  # a legend row's height, in font sizes
LEGEND_ENTRY_EM = (2.0, 0.6)  # a legend entry's width in em: its symbol and gaps, and each character of its name


def _legend_rows(fig: go.Figure, settings: ChartSettings) -> int:
    """The rows a legend over the plot wraps to in LEGEND_ROOM_PX: the margin is set before the plot's width is
    known, and each row past the first grows up into the stamp under the title. 1 for a legend placed elsewhere."""
    legend = fig.layout.legend
    if legend.yanchor != "bottom" or (legend.y is not None and legend.y < 1):
        return 1
    names = dict.fromkeys(t.name for t in fig.data if t.name and t.showlegend is not False and t.type != "heatmap")
    symbol, per_char = LEGEND_ENTRY_EM
    width = sum((symbol + per_char * len(name)) * settings.font_size for name in names)
    return max(1, math.ceil(width / LEGEND_ROOM_PX))


HEADLINE_PX = 40  # a slide's title is its headline: legible from the back of the room
TICK_PX = 18  # the smallest type a slide's axes carry
LINE_EM = 1.25  # a title line's height, in font sizes


def slide(fig: go.Figure, stamp: str, settings: ChartSettings) -> go.Figure:
    """The stamped figure laid out at slide size, in the slide's type: its title (the headline) at HEADLINE_PX at
    least, wrapped to the slide's width where it is longer (the top margin grown by the lines it gained), and
    every axis's ticks at TICK_PX at least."""
    out = stamped(fig, stamp, settings)
    title = out.layout.title
    size = max(HEADLINE_PX, title.font.size or 0)
    chars = int((SLIDE_WIDTH - 4 * EDGE_PX) / (CHAR_EM * size))
    lines = textwrap.wrap((title.text or "").replace("<br>", " "), chars) or [""]
    top = out.layout.margin.t or 0
    grown = round(len(lines) * LINE_EM * size) - (title.font.size or 0)
    # Plotly anchors a title of several lines by its first line: the lines it gained are moved down under the
    # slide's top edge, or the first would be drawn above it
    out.update_layout(width=SLIDE_WIDTH, height=SLIDE_HEIGHT, margin={"t": top + grown},
                      title={"text": "<br>".join(lines), "font": {"size": size},
                             "y": 1 - (len(lines) - 1) * LINE_EM * size / SLIDE_HEIGHT})
    for axis in (*out.select_xaxes(), *out.select_yaxes()):
        if (axis.tickfont.size or out.layout.font.size or 0) < TICK_PX:
            axis.tickfont.size = TICK_PX
    return out


def camera_options(settings: ChartSettings, name: str) -> dict[str, Any]:
    """Plotly config for the chart toolbar's camera: a 1920 × 1080 PNG. Charts drawn with screen-sized fonts
    are laid out at half size and doubled, so their text stays legible on a slide."""
    scale = 1 if settings.font_size >= ChartSettings.presentation().font_size else 2
    return {"displaylogo": False, "toImageButtonOptions": {
        "format": "png", "filename": name, "width": SLIDE_WIDTH // scale, "height": SLIDE_HEIGHT // scale,
        "scale": scale}}


def browser_path() -> str | None:
    """The browser kaleido is to drive: BROWSER_PATH, else Debian's chromium, else None (kaleido searches)."""
    if os.environ.get("BROWSER_PATH"):
        return os.environ["BROWSER_PATH"]
    return str(CHROMIUM) if CHROMIUM.exists() else None


def image_export_available() -> bool:
    """Whether a browser for kaleido is at hand: the one `browser_path` names, or one on the PATH."""
    return browser_path() is not None or any(shutil.which(name) for name in BROWSER_NAMES)


def render(figures: list[go.Figure], fmt: ImageFormat) -> list[bytes]:
    """Each figure drawn as PNG or SVG at its own layout size, in one browser session."""
    try:
        import kaleido
        from kaleido.errors import BrowserClosedError, BrowserFailedError, ChromeNotFoundError
    except ImportError as exc:
        raise ExportError(f"drawing an image needs kaleido (pip install -r requirements.txt): {exc}") from exc

    async def draw() -> list[bytes]:
        async with kaleido.Kaleido(n=1, mathjax=False, path=browser_path()) as k:
            return [await k.calc_fig(f.to_dict(), opts={"format": fmt}) for f in figures]

    # Its own thread and event loop: the caller (a Streamlit script thread) may have a loop running.
    with ThreadPoolExecutor(max_workers=1) as pool:
        try:
            return pool.submit(asyncio.run, draw()).result()
        except ChromeNotFoundError as exc:
            raise ExportError(NO_BROWSER) from exc
        except (BrowserFailedError, BrowserClosedError) as exc:
            raise ExportError(f"the browser that draws images failed: {exc}") from exc


def image_bytes(fig: go.Figure, fmt: ImageFormat, frame: int | None = None) -> bytes:
    """One figure as PNG or SVG; an animation as the still of one frame (`still`)."""
    (drawn,) = render([still(fig, frame) if fig.frames else fig], fmt)
    return drawn


def still(fig: go.Figure, frame: int | None = None) -> go.Figure:
    """An animated figure as the picture of one frame: the last (where the animation ends) or `frame` (from 1),
    without its play buttons and slider, which a picture cannot work and a slide has no room for."""
    count = len(fig.frames)
    if frame is not None and not 1 <= frame <= count:
        raise ExportError(f"the animation has frames 1 to {count}, not {frame}")
    base = go.Figure(fig)
    base.layout.updatemenus, base.layout.sliders = (), ()
    base.frames = ()
    return _drawn_frame(base, fig.frames[(frame or count) - 1])


def _drawn_frame(base: go.Figure, frame: go.Frame) -> go.Figure:
    """`base` showing `frame`'s traces, and after them the traces the frames leave out (legend-only ones)."""
    out = go.Figure(base)
    out.data = []
    for trace in [*frame.data, *base.data[len(frame.data):]]:
        out.add_trace(trace)
    return out


def html_bytes(fig: go.Figure, title: str) -> bytes:
    """A self-contained page of the figure: plotly.js is inlined, so it opens offline; an animation plays."""
    return fig.to_html(include_plotlyjs=True, full_html=True, config={"displaylogo": False, "responsive": True},
                       default_width="100%", default_height="100vh").replace(
        "<head>", f"<head><title>{title}</title>", 1).encode()


def gif_bytes(fig: go.Figure, frame_ms: int = 100, hold_ms: int = 1500) -> bytes:
    """An animated figure's frames drawn one by one and joined into a looping GIF; the first frame, the last,
    and each first frame of a new stage (frame group) are held for `hold_ms` so a viewer sees each stage."""
    if not fig.frames:
        raise ExportError("only the animation view has frames to make a GIF of")
    from PIL import Image

    base = go.Figure(fig)
    base.layout.updatemenus, base.layout.sliders = (), ()  # a GIF has nothing to click
    base.frames = ()
    pictures = [_drawn_frame(base, frame) for frame in fig.frames]
    images = [Image.open(io.BytesIO(png)).convert("RGB") for png in render(pictures, "png")]
    groups = [frame.group for frame in fig.frames]
    durations = [hold_ms if i in (0, len(groups) - 1) or groups[i] != groups[i - 1] else frame_ms
                 for i in range(len(groups))]
    out = io.BytesIO()
    images[0].save(out, format="GIF", save_all=True, append_images=images[1:], duration=durations, loop=0,
                   optimize=True)
    return out.getvalue()
