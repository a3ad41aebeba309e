"""The one shape every subcommand has (memray's): a name, a line of help, its flags, and what it does."""

from __future__ import annotations

import argparse
from typing import Protocol


class Command(Protocol):
    """A subcommand of `python -m fusionviz`: `run` returns the exit code, and raises `FusionvizError` for
    anything the user can act on (printed in one line, with that error's exit code)."""

    name: str
    help: str

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...
