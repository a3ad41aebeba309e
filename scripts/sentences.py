"""Every sentence fusionviz writes about the shipped sessions, in one text file a reviewer reads in one sitting
(docs/sentences.txt): for each session of sessions/ and tests/data/, its headline (text, mechanism, details), each
mode's headline, each view's headline that the session can show, every step of its ladder, its warnings and its
methodology note; then every scene of the talks in talks/ as the Story shows it. tests/recorded/test_sentences.py
fails when the wording changes and this file was not written again.

python scripts/sentences.py [--out docs/sentences.txt]   (- prints to stdout)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fusionviz.analysis.headline import Headline
from fusionviz.analysis.report import Report, analyse
from fusionviz.charts.registry import VIEWS
from fusionviz.charts.view_captions import view_headline
from fusionviz.charts.views import scene_caption, view_problem
from fusionviz.records.files import open_path
from fusionviz.records.talk import parse_talk

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "sentences.txt"


def shipped_sessions(root: Path = ROOT) -> list[Path]:
    """The recorded library and the test data's sessions and traces, in name order within each folder."""
    return [*sorted((root / "sessions").glob("*.json.gz")), *sorted((root / "tests" / "data").glob("*.json.gz"))]


def headline_lines(headline: Headline, indent: str = "  ") -> list[str]:
    lines = [f"{indent}headline:  {headline.text}"]
    if headline.mechanism:
        lines.append(f"{indent}mechanism: {headline.mechanism}")
    lines += [f"{indent}detail:    {d}" for d in headline.details]
    return lines


def session_lines(report: Report) -> list[str]:
    """What the tool says of one session: its headline, its modes', its views' (a headline said already is named,
    not written again), its ladder, its notes."""
    lines = headline_lines(report.headline)
    said: dict[Headline, str] = {report.headline: "the session's headline"}
    for mode, headline in report.mode_headlines.items():
        lines += [f"  mode {mode}:" + (f" as {said[headline]}" if headline in said else ""),
                  *([] if headline in said else headline_lines(headline, "    "))]
        said.setdefault(headline, f"mode {mode}")
    for name in VIEWS:
        if view_problem(report, name) is None:
            headline = view_headline(report, name)
            lines += [f"  view {name}:" + (f" as {said[headline]}" if headline in said else ""),
                      *([] if headline in said else headline_lines(headline, "    "))]
            said.setdefault(headline, f"view {name}")
    lines += [f"  ladder: {s.step}: {s.not_applicable or s.mechanism}" for s in report.ladder]
    lines += [f"  warning: {w}" for w in report.warnings]
    if report.methodology is not None and report.methodology.note:
        lines.append(f"  methodology: {report.methodology.note}")
    return lines


def talk_lines(path: Path, root: Path = ROOT) -> list[str]:
    """Each scene of a talk as the Story words it: the caption it shows (its template filled, or its view's own)
    and its view's headline."""
    talk = parse_talk(path.read_text(), path.name, views=VIEWS)
    lines = [f"== talk {path.relative_to(root)}: {talk.title}"]
    for number, scene in enumerate(talk.scenes, start=1):
        report = analyse(open_path(root / "sessions" / scene.session))
        lines.append(f"  scene {number}: {scene.title} ({scene.view} of {scene.session}"
                     + (f", {scene.mode})" if scene.mode else ")"))
        problem = view_problem(report, scene.view, scene.mode)
        if problem:
            lines.append(f"    cannot show: {problem}")
            continue
        lines.append(f"    caption:   {scene_caption(report, scene.caption, scene.view, scene.mode)}")
        lines += headline_lines(view_headline(report, scene.view, scene.mode), "    ")
    return lines


def render(root: Path = ROOT) -> str:
    """The whole file: every shipped session, then every talk."""
    lines = ["# Every sentence fusionviz writes about the shipped sessions and talks: python scripts/sentences.py",
             "# writes this file; tests/recorded/test_sentences.py holds the code to it.", ""]
    for path in shipped_sessions(root):
        lines += [f"== {path.relative_to(root)}", *session_lines(analyse(open_path(path))), ""]
    for path in sorted((root / "talks").glob("*.toml")):
        lines += [*talk_lines(path, root), ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(OUT), help="where to write it; - for stdout")
    args = parser.parse_args(argv)
    text = render()
    if args.out == "-":
        sys.stdout.write(text)
    else:
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
