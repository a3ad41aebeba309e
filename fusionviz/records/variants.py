"""The modes, and variants: a compiled mode with named options, written `MODE+OPTION[=VALUE]` joined by `+`.

`default+freezing`, `default+capture_scalar_outputs`, `default+mark_dynamic=0`, `reduce-overhead+fullgraph`,
`default+disable=h.0.attn` (that submodule left to eager, `torch.compiler.disable`): a bare option means `=true`.
A variant is a mode like any other: its name is the mode string, so it is timed in the same interleaved rounds and
fresh processes, and the session, the charts, `inspect` and the CLI show it as they show a mode.
Only the options of `OPTIONS` are taken, each vetted: what it sets, and what that changes.

This module imports neither torch nor plotly (the caller checks a variant before any work starts); the worker
applies it (`measure.harness.mode_step` and `harness.variant_settings`).
"""

from __future__ import annotations

import re
from typing import Literal

import msgspec

from fusionviz.errors import ConfigError

MODES: tuple[str, ...] = (
    "eager",
    "default",
    "reduce-overhead",
    "max-autotune",
    "max-autotune-no-cudagraphs",
    "eager_cuda_graph",
)
# Eager's own kernels captured as one CUDA graph and replayed: no compiler, no launches (the ladder's first rung).
# Last, so that the first compiled mode stays the one a verdict leads with.
GRAPHED_EAGER = "eager_cuda_graph"
COMPILED_MODES: tuple[str, ...] = MODES[1:-1]
CUDA_GRAPH_MODES: frozenset[str] = frozenset({"reduce-overhead", "max-autotune"})
AUTOTUNE_MODES: frozenset[str] = frozenset({"max-autotune", "max-autotune-no-cudagraphs"})

OptionKind = Literal["inductor", "dynamo", "compile", "mark_dynamic", "disable"]
Value = bool | int | str
# A submodule's name as `model.named_modules()` gives it: attribute names and list indices joined by dots.
SUBMODULE = re.compile(r"[A-Za-z_0-9]+(\.[A-Za-z_0-9]+)*")

# Where the settings of each kind live, as the recorded settings name them.
PREFIXES: dict[OptionKind, str] = {"inductor": "torch._inductor.config.", "dynamo": "torch._dynamo.config."}


class Option(msgspec.Struct, frozen=True):
    """One vetted option: its kind (an Inductor or Dynamo setting, a `torch.compile` keyword, marking a
    dimension of the first input dynamic, or leaving a submodule to eager), the key it sets, its value type, and
    what it changes."""

    kind: OptionKind
    key: str
    type: type[bool] | type[int] | type[str]
    changes: str

    def setting(self, value: Value) -> tuple[str, str]:
        """The setting as recorded with the run: ("torch._inductor.config.freezing", "True")."""
        if self.kind == "compile":
            return f"torch.compile({self.key})", repr(value)
        if self.kind == "mark_dynamic":
            return "torch._dynamo.mark_dynamic(inputs[0])", repr(value)
        if self.kind == "disable":
            return f"torch.compiler.disable(model.{value}.forward)", "True"
        return PREFIXES[self.kind] + self.key, repr(value)


OPTIONS: dict[str, Option] = {
    "freezing": Option("inductor", "freezing", bool,
                       "parameters become constants: folded, and on the CPU weights pre-packed (inference only)"),
    "epilogue_fusion": Option("inductor", "epilogue_fusion", bool,
                              "pointwise ops after a GEMM fused into its template's epilogue (on by default)"),
    "aggressive_fusion": Option("inductor", "aggressive_fusion", bool,
                                "fuse nodes that share no memory access too (fewer, larger kernels)"),
    "max_autotune_gemm": Option("inductor", "max_autotune_gemm", bool,
                                "autotune GEMMs over Triton and C++ templates, as max-autotune does for them alone"),
    "coordinate_descent_tuning": Option("inductor", "coordinate_descent_tuning", bool,
                                        "tune each kernel's block sizes by coordinate descent after the heuristics"),
    "combo_kernels": Option("inductor", "combo_kernels", bool,
                            "independent kernels of one graph launched together as one combo kernel"),
    "triton.cudagraphs": Option("inductor", "triton.cudagraphs", bool,
                                "replay each compiled graph as a CUDA graph (what reduce-overhead turns on)"),
    "capture_scalar_outputs": Option("dynamo", "capture_scalar_outputs", bool,
                                     "Tensor.item() traced into the graph instead of breaking it"),
    "automatic_dynamic_shapes": Option("dynamo", "automatic_dynamic_shapes", bool,
                                       "a recompile for a new shape makes that dimension dynamic (on by default)"),
    "fullgraph": Option("compile", "fullgraph", bool, "a graph break is an error instead of a second graph"),
    "dynamic": Option("compile", "dynamic", bool, "torch.compile(dynamic=…), in place of the run's own setting"),
    "mark_dynamic": Option("mark_dynamic", "mark_dynamic", int,
                           "the first input's dimension DIM compiled as a symbol (mark_dynamic=DIM)"),
    "disable": Option("disable", "disable", str,
                      "the submodule named PATH (as named_modules() names it: net.2, h.0.attn) left to eager by "
                      "torch.compiler.disable: the graph breaks around it (disable=PATH)"),
}
SYNTAX = "MODE+OPTION[=VALUE] joined by + (a bare option means =true), e.g. default+freezing"
TRUE, FALSE = ("true", "1", "on", "yes"), ("false", "0", "off", "no")


class Variant(msgspec.Struct, frozen=True):
    """A compiled mode and its options, in the order of `OPTIONS`; `name` is the mode string it is known by."""

    base: str
    options: tuple[tuple[str, Value], ...]

    @property
    def name(self) -> str:
        words = [name if value is True else f"{name}={str(value).lower() if isinstance(value, bool) else value}"
                 for name, value in self.options]
        return "+".join([self.base, *words])

    def _of(self, kind: OptionKind) -> dict[str, Value]:
        return {OPTIONS[name].key: value for name, value in self.options if OPTIONS[name].kind == kind}

    @property
    def inductor_options(self) -> dict[str, Value]:
        """Inductor settings, as `torch.compile(options=…)` takes them."""
        return self._of("inductor")

    @property
    def dynamo_options(self) -> dict[str, Value]:
        """Dynamo settings, applied with `torch._dynamo.config.patch` while the mode compiles."""
        return self._of("dynamo")

    @property
    def compile_kwargs(self) -> dict[str, Value]:
        """`torch.compile` keywords (`fullgraph`, `dynamic`)."""
        return self._of("compile")

    @property
    def mark_dynamic(self) -> int | None:
        """The first input's dimension to mark dynamic, if any."""
        value = self._of("mark_dynamic").get("mark_dynamic")
        return None if value is None else int(value)

    @property
    def disabled(self) -> str | None:
        """The submodule left to eager, by its name in the model, if any."""
        value = self._of("disable").get("disable")
        return None if value is None else str(value)

    @property
    def settings(self) -> dict[str, str]:
        """What the variant sets, as recorded with its run: {"torch._inductor.config.freezing": "True"}."""
        return dict(OPTIONS[name].setting(value) for name, value in self.options)

    @property
    def uses_cuda_graphs(self) -> bool:
        """Whether its compiled graphs are replayed as CUDA graphs: its base does, unless `triton.cudagraphs`
        says otherwise."""
        return bool(dict(self.options).get("triton.cudagraphs", self.base in CUDA_GRAPH_MODES))


def option_help() -> str:
    """The options in a few lines, for a widget's or a flag's help."""
    kinds = {int: "=DIM", str: "=PATH", bool: "bool"}
    return "; ".join(f"{name} ({kinds[o.type]}): {o.changes}" for name, o in OPTIONS.items())


def parse_variant(mode: str) -> Variant:
    """`"default+freezing"` → Variant("default", (("freezing", True),)), refusing an unknown base or option and
    a bad value with a message that lists the known ones. A plain compiled mode is a variant without options."""
    base, *words = [w.strip() for w in mode.split("+")]
    if base not in COMPILED_MODES:
        if base in MODES:
            raise ConfigError(f"{mode!r}: options change a compile, and {base} compiles nothing: "
                              f"start a variant with {', '.join(COMPILED_MODES)}")
        raise ConfigError(f"{mode!r}: unknown mode {base!r}: a variant is {SYNTAX}, its mode one of "
                          f"{', '.join(COMPILED_MODES)}")
    found: dict[str, Value] = {}
    for word in words:
        name, equals, text = (part.strip() for part in word.partition("="))
        option = OPTIONS.get(name)
        if option is None:
            raise ConfigError(f"{mode!r}: unknown option {name!r}: choose from {', '.join(OPTIONS)}")
        if name in found:
            raise ConfigError(f"{mode!r}: {name} is given twice")
        found[name] = _value(mode, name, option, text if equals else None)
    return Variant(base, tuple((name, found[name]) for name in OPTIONS if name in found))


def _value(mode: str, name: str, option: Option, text: str | None) -> Value:
    if option.type is int:
        if text is None or not (text.isascii() and text.isdigit() and len(text) <= 2):
            raise ConfigError(f"{mode!r}: {name} takes a dimension of the first input, as {name}=0")
        return int(text)
    if option.type is str:
        if text is None or len(text) > 200 or not SUBMODULE.fullmatch(text):
            raise ConfigError(f"{mode!r}: {name} takes a submodule's name in the model, as {name}=h.0.attn")
        return text
    if text is None or text.lower() in TRUE:
        return True
    if text.lower() in FALSE:
        return False
    raise ConfigError(f"{mode!r}: {name} is true or false, not {text!r}")


def is_variant(mode: str) -> bool:
    """Whether `mode` is written as a variant (`MODE+OPTION…`); it may still be refused by `parse_variant`."""
    return "+" in mode


def check_mode(mode: str) -> str:
    """`mode` as a session names it (a variant's options in the order of `OPTIONS`, `=true` left out), or a
    ConfigError saying what is wrong."""
    if mode in MODES:
        return mode
    if is_variant(mode):
        return parse_variant(mode).name
    raise ConfigError(f"unknown mode {mode!r}: choose from {', '.join(MODES)}, or a variant: {SYNTAX}")


def base_mode(mode: str) -> str:
    """The mode a variant starts from ("default+freezing" → "default"); a plain mode is its own base."""
    return mode.split("+", 1)[0].strip()


def is_compiled(mode: str) -> bool:
    """Whether `mode` runs torch.compile: a compiled mode, or a variant of one."""
    return base_mode(mode) in COMPILED_MODES


def autotunes(mode: str) -> bool:
    """Whether `mode` benchmarks GEMM choices while it compiles: max-autotune (with or without CUDA graphs), a
    variant of either, or a variant with `max_autotune_gemm`."""
    if base_mode(mode) in AUTOTUNE_MODES:
        return True
    try:
        return is_variant(mode) and bool(dict(parse_variant(mode).options).get("max_autotune_gemm"))
    except ConfigError:
        return False


def uses_cuda_graphs(mode: str) -> bool:
    """Whether `mode`'s compiled graphs are replayed from CUDA graph trees: reduce-overhead and max-autotune, a
    variant of either, or a variant with `triton.cudagraphs` (not eager as one CUDA graph: see `replays_graphs`)."""
    if is_variant(mode):
        try:
            return parse_variant(mode).uses_cuda_graphs
        except ConfigError:
            return False
    return mode in CUDA_GRAPH_MODES


def replays_graphs(mode: str) -> bool:
    """Whether `mode` replays CUDA graphs at all: a graph tree's (`uses_cuda_graphs`) or eager's one graph."""
    return mode == GRAPHED_EAGER or uses_cuda_graphs(mode)


def mode_order(modes: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """`modes` once each, eager first, the known modes in the order of MODES, each variant after its base (and
    after the variants given before it); each must pass `check_mode`."""
    named = list(dict.fromkeys(check_mode(m) for m in modes))
    rank = {m: i for i, m in enumerate(MODES)}
    ordered = sorted(named, key=lambda m: (m != "eager", rank[base_mode(m)], is_variant(m), named.index(m)))
    return tuple(ordered)
