"""A fusion contract's file: what torch.compile made of one model and configuration (kernels, graphs, breaks,
recompiles, bytes, a speedup floor per mode), and the tolerances a check applies, as a small TOML file a team
keeps in its repository and reviews like code.

The file is written by hand in one stable order (the configuration, the tolerances, then each mode in the order
it ran), one figure a line, so that re-blessing it after a change of the fusion plan shows as a diff of the
figures that moved. It is read back with `tomllib` and every value checked by `decode` against the records
below; anything that does not fit is a `ContractFileError` naming the file and the value. Building a contract
from a session's report and comparing two contracts is `analysis.contract`'s; this module imports no torch.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Annotated, Any

from msgspec import Meta

from fusionviz.errors import ContractFileError
from fusionviz.records.config import DYNAMIC_CHOICES, RunConfig
from fusionviz.records.decode import MAX_MAGNITUDE, Count, DecodeError, Finite, clip, decode

CONTRACT_SCHEMA = 1
# RunConfig fields a contract does not keep: how a run starts, and what it measures beside what the contract checks
LEFT_OUT = frozenset({"cold_compile", "memory"})
NonNegative = Annotated[float, Meta(ge=0, le=MAX_MAGNITUDE)]
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


@dataclass(frozen=True)
class Tolerances:
    """How far a fresh run may move from the blessed figures before a check fails. Graphs, graph breaks,
    recompiles and CUDA-graph skips must not grow at all. A mode's speedup floor is fixed when it is blessed:
    `speedup_floor` where set, else the measured p10 of its speedup less `speedup_margin` of it. `why` says, in
    the file, why these tolerances were chosen."""

    kernels_may_grow_by: Count = 0
    bytes_may_grow_by_pct: NonNegative = 5.0
    speedup_margin: Annotated[float, Meta(ge=0, lt=1)] = 0.1
    speedup_floor: NonNegative | None = None
    why: str = ""


@dataclass(frozen=True)
class ModeFigures:
    """One mode's blessed figures, each as the analysis reports it (`analysis.contract.contract_of`): None where
    the run does not say (a CPU run has no CUDA graphs; eager has no speedup against itself)."""

    kernels_per_iteration: Finite
    graphs: Count | None = None
    graph_breaks: Count | None = None
    recompiles: Count | None = None
    cuda_graphs_captured: Count | None = None
    cuda_graph_skips: Count | None = None
    bytes_per_iteration: Count | None = None
    bytes_from: str = ""  # "DRAM counters" or "estimate", where bytes_per_iteration is known
    speedup: Finite | None = None  # median over paired rounds of eager's time over this mode's
    speedup_interval: tuple[Finite, Finite] | None = None  # p10 and p90 of those ratios
    speedup_floor: Finite | None = None


@dataclass(frozen=True)
class Made:
    """Where and when a contract was made, said in its header (not read back)."""

    fusionviz: str = ""
    torch: str = ""
    device: str = ""
    date: str = ""


@dataclass(frozen=True)
class Contract:
    """A configuration, its tolerances, and each mode's figures (in the order the modes ran). `failed` holds the
    modes that were asked for and did not run, with why: a fresh run's, never written to a file."""

    config: RunConfig
    tolerances: Tolerances
    modes: dict[str, ModeFigures]
    made: Made = field(default_factory=Made)
    failed: dict[str, str] = field(default_factory=dict)


def device_kind(device: str) -> str:
    """"cuda:1" → "cuda": a contract names the kind of device, so that a CI runner checks it on its own GPU."""
    return device.partition(":")[0]


def dynamic_word(dynamic: bool | None) -> str:
    """The `--dynamic` word for a RunConfig's `dynamic` (true, false or none)."""
    return next(word for word, value in DYNAMIC_CHOICES.items() if value is dynamic)


def contract_toml(contract: Contract, header: Sequence[str] = ()) -> str:
    """The contract as TOML text in its one stable order: `header` as comment lines, then the schema, the
    configuration, the tolerances (with the rules they apply in comments) and one table per mode."""
    made = contract.made
    lines = [*(f"# {line}".rstrip() for line in header)]
    if made.fusionviz or made.torch:
        lines.append(f"# Made by fusionviz {made.fusionviz} with torch {made.torch} on {made.device or '?'}, "
                     f"{made.date or 'at an unknown date'}.")
    lines += ["", f"schema = {CONTRACT_SCHEMA}", "", "[config]"]
    for f in fields(RunConfig):
        if f.name in LEFT_OUT:
            continue
        value = getattr(contract.config, f.name)
        if f.name == "device":
            value = device_kind(value)
        elif f.name == "dynamic":
            value = dynamic_word(value)
        if value is not None:
            lines.append(f"{_key(f.name.rstrip('_'))} = {_value(value)}")
    tol = contract.tolerances
    lines += ["", "[tolerances]",
              "# graphs, graph breaks, recompiles and CUDA-graph skips must not grow; kernels per iteration and bytes",
              "# per iteration may grow by at most these; each mode's speedup against eager (median of paired rounds)",
              "# must stay at or above its speedup_floor, fixed when blessed: speedup_floor below where set, else the",
              "# measured p10 less speedup_margin of it",
              f"kernels_may_grow_by = {_value(tol.kernels_may_grow_by)}",
              f"bytes_may_grow_by_pct = {_value(tol.bytes_may_grow_by_pct)}",
              f"speedup_margin = {_value(tol.speedup_margin)}"]
    if tol.speedup_floor is not None:
        lines.append(f"speedup_floor = {_value(tol.speedup_floor)}")
    if tol.why:
        lines.append(f"why = {_value(tol.why)}")
    lines += ["", "# Each mode's figures, as the app shows them: kernels per iteration (device kernels, or top-level",
              "# compute calls on the CPU), graphs, graph breaks and recompiles (Dynamo's), CUDA graphs captured and",
              "# skipped (graph-tree modes), bytes per iteration (DRAM counters, or the estimate where it knows nearly",
              "# every kernel's), the speedup against eager with its p10-p90 interval, and its floor."]
    for i, (mode, figures) in enumerate(contract.modes.items()):
        lines += [""] * bool(i) + [f"[modes.{_key(mode)}]"]
        for f in fields(ModeFigures):
            value = getattr(figures, f.name)
            if value is not None and value != "":
                lines.append(f"{f.name} = {_value(value)}")
    return "\n".join(lines) + "\n"


def read_contract(text: str, name: str, known_models: set[str] | None = None) -> Contract:
    """The contract a file holds (`name` is how errors call it). With `known_models`, a model that is not
    among them and is no `package.module:factory` of the user's own is refused. Raises ContractFileError in one
    line that names the file and what is wrong."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ContractFileError(f"{name} is not a TOML file: {clip(str(exc), 160)}") from None
    schema = data.get("schema")
    if schema != CONTRACT_SCHEMA:
        raise ContractFileError(f"{name} is not a fusion contract this version reads: its schema is "
                                f"{clip(repr(schema), 20)}, and fusionviz reads {CONTRACT_SCHEMA} (write it with "
                                "`python -m fusionviz snapshot`)")
    try:
        config = _config(_table(data, "config"))
        tolerances = decode(Tolerances, _table(data, "tolerances"))
        modes = {mode: decode(ModeFigures, _table(_table(data, "modes"), mode))
                 for mode in _table(data, "modes")}
    except DecodeError as exc:
        raise ContractFileError(f"{name}: {exc}") from None
    if known_models is not None and config.model not in known_models and ":" not in config.model:
        raise ContractFileError(f"{name} names an unknown model {config.model!r}: choose one of "
                                f"{clip(', '.join(sorted(known_models)), 200)}, or package.module:factory")
    missing = [m for m in modes if m not in config.modes]
    if missing:
        raise ContractFileError(f"{name}: [modes.{missing[0]}] is not among the configuration's modes "
                                f"({', '.join(config.modes)})")
    return Contract(config, tolerances, modes)


def _table(data: dict[str, Any], key: str) -> dict[str, Any]:
    found = data.get(key)
    if not isinstance(found, dict):
        raise DecodeError(f"{key}: expected a table, got {'nothing' if found is None else type(found).__name__}")
    return found


def _config(table: dict[str, Any]) -> RunConfig:
    values = dict(table)
    if "pass" in values:
        values["pass_"] = values.pop("pass")
    if "dynamic" in values:
        word = values["dynamic"]
        if not isinstance(word, str) or word.lower() not in DYNAMIC_CHOICES:
            raise DecodeError(f"config.dynamic: expected true, false or none, got {clip(repr(word), 20)}")
        values["dynamic"] = DYNAMIC_CHOICES[word.lower()]
    if "model" not in values:
        raise DecodeError("config.model: missing")
    try:
        return replace(decode(RunConfig, values), cold_compile=False)
    except DecodeError as exc:
        raise DecodeError(f"config.{exc}") from None


def _key(name: str) -> str:
    return name if _BARE_KEY.fullmatch(name) else json.dumps(name, ensure_ascii=False)


def _value(value: Any) -> str:
    """A TOML value: strings as JSON writes them (its escapes are TOML's), floats in their shortest exact form,
    a whole float as a whole number (kernels per iteration: 3, not 3.0)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, tuple | list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    raise TypeError(f"a contract has no TOML form for {type(value).__name__}")
