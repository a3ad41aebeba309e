"""`models`: the models the lab offers by name (the zoo, and the real architectures whose library is installed),
what each demonstrates, and what its sizes set."""

from __future__ import annotations

import argparse
from typing import Any

from fusionviz.cli.reporter import Column, json_text, note, table, write
from fusionviz.measure.catalog import CATALOG, MODELS_REQUIREMENTS, REAL_MODELS, ModelInfo, available_models


class Models:
    name = "models"
    help = "list the model zoo and the real architectures (hf:gpt2, timm:resnet50…), and what each demonstrates"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--json", action="store_true",
                            help="every model, the real ones not installed here too (\"available\": false)")

    def run(self, args: argparse.Namespace) -> int:
        available = available_models()
        if args.json:
            write(json_text([_entry(info, info.name in available) for info in {**CATALOG, **REAL_MODELS}.values()],
                            indent=2))
            return 0
        rows = [(info.name, info.purpose + _settings(info)) for info in available.values()]
        write(*table([Column(align="<"), Column(align="<", gap=2)], rows, header=False))
        missing = sorted({str(i.library) for n, i in REAL_MODELS.items() if n not in available})
        if missing:
            names = ", ".join(n for n in REAL_MODELS if n not in available)
            note(f"not installed here: {', '.join(missing)}, for {names} (pip install -r {MODELS_REQUIREMENTS}; "
                 "docs/guide.md, Real models)")
        return 0


def _settings(info: ModelInfo) -> str:
    """What the size flags set for this model, in brackets; a real model's defaults too."""
    flags = [f"--seq: {info.seq_label}"] if info.seq_label else []
    if info.real:
        flags.insert(0, f"--dim: {info.dim_label}" if info.dim_label else "--dim: none, its widths are its own")
        if info.layers_label:
            flags.append(f"--layers: {info.layers_label}")
        defaults = ", ".join(f"{flag} {value}" for flag, value in (
            ("dim", info.default_dim), ("batch", info.default_batch), ("seq", info.default_seq),
            ("layers", info.default_layers)) if value is not None and (flag != "dim" or info.dim_label))
        flags.append(f"default {defaults}")
    return f" [{'; '.join(flags)}]" if flags else ""


def _entry(info: ModelInfo, available: bool) -> dict[str, Any]:
    """A model's `--json` record: what it is, what its sizes set, its defaults, and whether it runs here."""
    return {"name": info.name, "purpose": info.purpose, "seq": info.seq_label, "dim": info.dim_label,
            "layers": info.layers_label, "library": info.library, "available": available,
            "defaults": {"dim": info.default_dim, "batch": info.default_batch, "seq": info.default_seq,
                         "layers": info.default_layers}}
