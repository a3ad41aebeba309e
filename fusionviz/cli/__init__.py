"""`python -m fusionviz COMMAND`: the CLI maps flags onto the Python API, one module per command, each a
`Command`; a new command is a module and a line in COMMANDS."""

from __future__ import annotations

import argparse
import sys

from fusionviz.cli.check import Check
from fusionviz.cli.command import Command
from fusionviz.cli.export import Export
from fusionviz.cli.grid import Grid
from fusionviz.cli.inspect import Inspect
from fusionviz.cli.models import Models
from fusionviz.cli.reporter import note
from fusionviz.cli.run import Run
from fusionviz.cli.snapshot import Snapshot
from fusionviz.cli.sweep import Sweep
from fusionviz.errors import FusionvizError

COMMANDS: tuple[Command, ...] = (Models(), Run(), Inspect(), Sweep(), Grid(), Export(), Snapshot(), Check())


def main(argv: list[str] | None = None) -> int:
    """Run the command `argv` names; a `FusionvizError` is one line on stderr and its exit code."""
    names = ",".join(c.name for c in COMMANDS)
    parser = argparse.ArgumentParser(prog="python -m fusionviz",
                                     description=f"`python -m fusionviz {{{names}}}`: the CLI maps flags onto the "
                                                 "Python API.")
    sub = parser.add_subparsers(dest="command", required=True)
    argv = sys.argv[1:] if argv is None else argv
    named = next((a for a in argv if not a.startswith("-")), None)  # the top level takes no flag but --help
    for command in COMMANDS:
        listed = sub.add_parser(command.name, help=command.help)
        if command.name == named:  # only the command run needs its flags: some read tables to offer their choices
            command.add_arguments(listed)
    args = parser.parse_args(argv)
    chosen = next(c for c in COMMANDS if c.name == args.command)
    try:
        return chosen.run(args)
    except FusionvizError as exc:
        note(f"fusionviz: {exc}")
        return exc.exit_code
    except FileNotFoundError as exc:
        note(f"fusionviz: {exc}")
        return 2
