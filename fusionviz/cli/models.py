"""`models`: the model zoo, and what each model demonstrates."""

from __future__ import annotations

import argparse

from fusionviz.cli.reporter import Column, json_text, table, write
from fusionviz.measure.catalog import CATALOG


class Models:
    name = "models"
    help = "list the model zoo and what each model demonstrates"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--json", action="store_true")

    def run(self, args: argparse.Namespace) -> int:
        if args.json:
            write(json_text([{"name": i.name, "purpose": i.purpose, "seq": i.seq_label} for i in CATALOG.values()],
                            indent=2))
        else:
            rows = [(i.name, i.purpose + (f" [--seq: {i.seq_label}]" if i.seq_label else "")) for i in CATALOG.values()]
            write(*table([Column(align="<"), Column(align="<", gap=2)], rows, header=False))
        return 0
