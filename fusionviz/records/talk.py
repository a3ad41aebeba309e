"""A talk: a small TOML file of scenes a speaker writes, each a view of one session of the recorded library.

```toml
title = "Kernel fusion, measured"

[[scene]]
title = "Twelve elementwise ops become one kernel"   # optional headline
session = "h100_pointwise_chain_4096x4096_float32.json.gz"   # a file in the library (sessions/)
view = "animation"                                   # one of the views a talk may name
mode = "default"                                     # optional: the compiled mode the scene is about
caption = "{eager_kernels} kernels become {kernels}: {speedup}"   # optional: the line under the view's headline,
                                                     # from the view's caption fields; one line, so 90 characters
zoom = [0, 400]                                      # optional: the x range shown (views that zoom)
```

The views a scene may name, and what each allows, are the caller's (`fusionviz.charts.registry.VIEWS`):
records knows the file, not what draws it. Everything a file can get wrong on its own is refused here with the
line it is on (`TalkFileError`); whether a scene's session is in the library, and whether it holds what its
view needs, is known only against the library, and is reported per scene with the line too; so is a
configuration drawn from two sessions (`configurations_drawn_twice`).
"""

from __future__ import annotations

import re
import string
import tomllib
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from fusionviz.errors import ConfigError, TalkFileError
from fusionviz.records.config import COMPILED_MODES
from fusionviz.records.session import Session
from fusionviz.records.variants import is_compiled, is_variant, parse_variant


class ViewRules(Protocol):
    """What a talk may say of a view (`fusionviz.charts.registry.View` is one)."""

    @property
    def takes_mode(self) -> bool: ...

    @property
    def zooms(self) -> bool: ...  # `zoom` sets the range of its x axis

    @property
    def caption_fields(self) -> Collection[str]: ...


SCENE_KEYS = ("title", "session", "view", "mode", "caption", "zoom")
TOP_KEYS = ("title", "scene")


@dataclass(frozen=True)
class Scene:
    """One screen of a talk. `line` is its `[[scene]]` header's line; `lines` each key's line."""

    session: str
    view: str
    title: str = ""
    mode: str | None = None
    caption: str | None = None  # a template over the view's caption fields; None: the view's own caption
    zoom: tuple[float, float] | None = None
    line: int = 0
    lines: dict[str, int] = field(default_factory=dict, compare=False)

    def where(self, key: str | None = None) -> str:
        """"line 12": the line of `key`, else of the scene's header."""
        return f"line {self.lines.get(key, self.line) if key else self.line}"


@dataclass(frozen=True)
class Talk:
    name: str
    title: str
    scenes: list[Scene]


_HEADER = re.compile(r"^\s*\[\[\s*scene\s*\]\]\s*(#.*)?$")
_TABLE = re.compile(r"^\s*\[")
_AT = re.compile(r"\s*\(at line (\d+), column (\d+)\)")
_KEY = re.compile(r"""^\s*([A-Za-z0-9_-]+|"[^"]*"|'[^']*')\s*=""")


def _key_lines(text: str) -> tuple[dict[str, int], list[int], list[dict[str, int]]]:
    """Where each top-level key, each `[[scene]]` header and each scene's keys are (1-based lines).

    tomllib says where the syntax breaks but not where a valid key sits; this scan of the same text does,
    skipping the inside of multi-line strings."""
    top: dict[str, int] = {}
    headers: list[int] = []
    scenes: list[dict[str, int]] = []
    open_quote: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if open_quote:
            if line.count(open_quote) % 2:
                open_quote = None
            continue
        if _HEADER.match(line):
            headers.append(number)
            scenes.append({})
            continue
        key = _KEY.match(line)
        if key:
            name = key.group(1).strip("\"'")
            (scenes[-1] if scenes else top).setdefault(name, number)
        elif _TABLE.match(line):
            top.setdefault(line.strip().strip("[]").strip(), number)
        for quote in ('"""', "'''"):
            if line.count(quote) % 2:
                open_quote = quote
    return top, headers, scenes


def caption_fields(template: str) -> list[str]:
    """The field names a caption template uses; raises ValueError on a malformed template."""
    names = []
    for _, name, spec, conversion in string.Formatter().parse(template):
        if name is None:
            continue
        if spec or conversion or not name.isidentifier():
            raise ValueError(f"{{{name}}} is not a plain field name")
        names.append(name)
    return names


def parse_talk(text: str, name: str = "talk", *, views: Mapping[str, ViewRules]) -> Talk:
    """The talk in `text`, its scenes naming `views`; raises TalkFileError naming the line of the first problem."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        where = _AT.search(str(exc))
        line = f", line {where.group(1)}" if where else ""
        raise TalkFileError(f"{name}{line}: not valid TOML: {_AT.sub('', str(exc)).strip()}"
                            + (f" (column {where.group(2)})" if where else "")) from exc
    top, headers, scene_lines = _key_lines(text)

    def fail(line: int, message: str) -> TalkFileError:
        return TalkFileError(f"{name}, line {line}: {message}")

    for key in data:
        if key not in TOP_KEYS:
            raise fail(top.get(key, 1), f"unknown key {key!r}: a talk has a title and [[scene]] tables")
    title = data.get("title", "")
    if not isinstance(title, str):
        raise fail(top.get("title", 1), "title must be a string")
    raw = data.get("scene", [])
    if not isinstance(raw, list) or not raw:
        raise fail(top.get("scene", 1), "a talk needs at least one [[scene]] table")
    if len(raw) != len(headers):
        raise fail(top.get("scene", 1), "write scenes as [[scene]] tables, one per scene")
    scenes = [_scene(values, headers[i], scene_lines[i], fail, views) for i, values in enumerate(raw)]
    return Talk(name=name, title=title, scenes=scenes)


def _scene(values: dict[str, Any], header: int, lines: dict[str, int], fail: Any,
           views: Mapping[str, ViewRules]) -> Scene:
    def at(key: str) -> int:
        return lines.get(key, header)

    for key in values:
        if key not in SCENE_KEYS:
            raise fail(at(key), f"unknown key {key!r} in a scene: use {', '.join(SCENE_KEYS)}")
    for key in ("title", "session", "view", "mode", "caption"):
        if key in values and not isinstance(values[key], str):
            raise fail(at(key), f"{key} must be a string in quotes")
    for key in ("session", "view"):
        if not values.get(key):
            raise fail(header, f"this scene has no {key}")
    session, view = values["session"], values["view"]
    if "/" in session or "\\" in session:
        raise fail(at("session"), f"session names a file in the library (sessions/), not a path: {session!r}")
    info = views.get(view)
    if info is None:
        raise fail(at("view"), f"unknown view {view!r}: choose from {', '.join(views)}")
    mode = values.get("mode")
    if mode is not None:
        if not info.takes_mode:
            raise fail(at("mode"), f"the {view} view shows every mode: leave mode out")
        if is_variant(mode):
            try:
                named = parse_variant(mode).name
            except ConfigError as exc:
                raise fail(at("mode"), str(exc)) from None
            if named != mode:
                raise fail(at("mode"), f"a session names this variant {named!r}: write it so")
        if not is_compiled(mode):
            raise fail(at("mode"), f"unknown compiled mode {mode!r}: choose from {', '.join(COMPILED_MODES)}, "
                       "or a variant of one (MODE+OPTION)")
    caption = values.get("caption")
    if caption is not None:
        try:
            unknown = [f for f in caption_fields(caption) if f not in info.caption_fields]
        except ValueError as exc:
            raise fail(at("caption"), f"caption: {exc} (write {{{{ and }}}} for braces)") from exc
        if unknown:
            raise fail(at("caption"), f"caption uses unknown field(s) {', '.join(unknown)}: choose from "
                                      f"{', '.join(info.caption_fields)}")
    zoom = values.get("zoom")
    if zoom is not None:
        if not info.zooms:
            raise fail(at("zoom"), f"the {view} view does not zoom: leave zoom out")
        if (not isinstance(zoom, list) or len(zoom) != 2
                or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in zoom)
                or not zoom[0] < zoom[1]):
            raise fail(at("zoom"), f"zoom is [from, to] with from < to, not {zoom!r}")
        zoom = (float(zoom[0]), float(zoom[1]))
    return Scene(session=session, view=view, title=values.get("title", ""), mode=mode, caption=caption,
                 zoom=zoom, line=header, lines=dict(lines))


def load_talk(path: str | Path, *, views: Mapping[str, ViewRules]) -> Talk:
    """A talk file whose scenes name `views`; raises TalkFileError when it cannot be read or is not a talk."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TalkFileError(f"{path.name} cannot be read: {exc}") from exc
    return parse_talk(text, path.name, views=views)


def missing_sessions(talk: Talk, library: set[str]) -> list[str]:
    """One line per scene whose session is not among the library's file names."""
    return [f"{talk.name}, {scene.where('session')}: {scene.session} is not in the library"
            for scene in talk.scenes if scene.session not in library]


def configuration(session: Session) -> tuple[str, ...]:
    """What a session measured, as a talk must not show it twice: its kind (a run, a crossover grid, a shape
    sweep), model, sizes, dtype, pass and device."""
    c, env = session.config, session.environment
    kind = "grid" if session.grid is not None else "sweep" if session.sweep is not None else "run"
    return (kind, c.model, str(c.dim), str(c.batch), str(c.seq), c.dtype, c.pass_, env.device_name or c.device)


def configurations_drawn_twice(talk: Talk, library: Mapping[str, Session]) -> list[str]:
    """One line per configuration the talk draws from two sessions or more of `library` (by file name): two
    recordings of one configuration differ by the host's state (eager mlp 512 × 256 at 122 µs in one scene and
    73 µs in another), so a talk keeps to one."""
    used: dict[tuple[str, ...], dict[str, list[str]]] = {}
    for scene in talk.scenes:
        session = library.get(scene.session)
        if session is not None:
            used.setdefault(configuration(session), {}).setdefault(scene.session, []).append(scene.where())
    return [f"{talk.name}: {key[1]} {key[2]} × {key[3]} {key[5]} is drawn from "
            + " and from ".join(f"{name} ({', '.join(lines)})" for name, lines in files.items())
            + ": keep one recording per configuration"
            for key, files in used.items() if len(files) > 1]
