"""`export`: a view of a session as a slide (PNG or SVG at slide size), a self-contained HTML page, or the
animation as a GIF."""

from __future__ import annotations

import argparse
from pathlib import Path

from fusionviz.cli.flags import writable
from fusionviz.cli.reporter import write
from fusionviz.errors import ConfigError

EXPORT_FORMATS = ["png", "svg", "html", "gif"]


class Export:
    name = "export"
    help = ("a view of a session as a slide: PNG or SVG at 1920 × 1080, a self-contained HTML page, or the "
            "animation as a GIF")

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        from fusionviz.charts.registry import VIEWS  # the views --view takes: the one place the CLI reads them from

        parser.add_argument("file", help="a session file or a plain torch.profiler trace")
        parser.add_argument("--view", required=True, choices=list(VIEWS))
        parser.add_argument("--mode", default=None, help="the compiled mode the view is about (default: the first)")
        parser.add_argument("--zoom", default=None, help="from,to: the x range shown (views that zoom)")
        parser.add_argument("--format", choices=EXPORT_FORMATS, default=None, help="default: from --out's suffix")
        parser.add_argument("--frame", type=int, default=None, metavar="N",
                            help="PNG or SVG of an animated view: draw frame N (from 1; default: the last)")
        parser.add_argument("--out", required=True)

    def run(self, args: argparse.Namespace) -> int:
        from fusionviz.analysis.report import analyse
        from fusionviz.charts.export import SLIDE_HEIGHT, SLIDE_WIDTH, gif_bytes, html_bytes, image_bytes, slide
        from fusionviz.charts.registry import VIEWS
        from fusionviz.charts.style import ChartSettings
        from fusionviz.charts.views import view_figure
        from fusionviz.records.files import open_path

        path, out = Path(args.file), writable(args.out)
        fmt = args.format or out.name.rsplit(".", 1)[-1].lower()
        if fmt not in EXPORT_FORMATS:
            raise ConfigError(f"cannot tell the format from {out.name}: give --format {'|'.join(EXPORT_FORMATS)}")
        if fmt == "gif" and not VIEWS[args.view].animated:
            playing = [name for name, view in VIEWS.items() if view.animated]
            raise ConfigError(f"a GIF is made of the {' or '.join(playing)} view: --view {playing[0]}")
        if args.frame is not None and (fmt not in ("png", "svg") or not VIEWS[args.view].animated):
            raise ConfigError("--frame picks the frame of an animated view drawn as PNG or SVG")
        zoom = _zoom(args.zoom)
        report = analyse(open_path(path))
        settings = ChartSettings.presentation()
        fig = slide(view_figure(report, args.view, settings, mode=args.mode, zoom=zoom), report.source.stamp,
                    settings)
        if fmt == "html":
            data = html_bytes(fig, f"{path.name}: {args.view}")
        elif fmt == "gif":
            data = gif_bytes(fig)
        else:
            data = image_bytes(fig, "png" if fmt == "png" else "svg", args.frame)
        out.write_bytes(data)
        write(f"{args.view} of {path.name} written to {out} ({fmt}, {SLIDE_WIDTH} × {SLIDE_HEIGHT})")
        return 0


def _zoom(text: str | None) -> tuple[float, float] | None:
    """`--zoom from,to` as numbers, refused unless from < to."""
    if not text:
        return None
    try:
        zoom = tuple(float(v) for v in text.split(","))
    except ValueError:
        zoom = ()
    if len(zoom) != 2 or not zoom[0] < zoom[1]:
        raise ConfigError(f"--zoom takes from,to with from < to, not {text!r}")
    return zoom[0], zoom[1]
