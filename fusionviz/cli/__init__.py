"""`python -m fusionviz COMMAND`: the CLI maps flags onto the Python API, one module per command, each a
`Command`; a new command is a module `fusionviz.cli.NAME` holding the class `NAME.capitalize()`, and its name in
COMMANDS. Only the command run is imported, so that `inspect` does not import the measuring commands (`run`,
`check`) and the tables they read."""

from __future__ import annotations

import argparse
import importlib
import sys

from fusionviz.cli.command import Command
from fusionviz.cli.reporter import note
from fusionviz.errors import FusionvizError

COMMANDS = ("models", "run", "inspect", "sweep", "grid", "export", "snapshot", "check")


def command(name: str) -> Command:
    """The subcommand `name`, its module imported now."""
    made: Command = getattr(importlib.import_module(f"fusionviz.cli.{name}"), name.capitalize())()
    return made


def main(argv: list[str] | None = None) -> int:
    """Run the command `argv` names; a `FusionvizError` is one line on stderr and its exit code."""
    parser = argparse.ArgumentParser(prog="python -m fusionviz",
                                     description=f"`python -m fusionviz {{{','.join(COMMANDS)}}}`: the CLI maps flags "
                                                 "onto the Python API.")
    sub = parser.add_subparsers(dest="command", required=True)
    argv = sys.argv[1:] if argv is None else argv
    named = next((a for a in argv if not a.startswith("-")), None)  # the top level takes no flag but --help
    chosen = command(named) if named in COMMANDS else None
    for name in COMMANDS:  # the other commands' help is read only for the list that names no command
        if chosen is None:
            listed = command(name)
            sub.add_parser(name, help=listed.help)
        elif name == chosen.name:
            chosen.add_arguments(sub.add_parser(name, help=chosen.help))  # some read tables to offer their choices
        else:
            sub.add_parser(name)
    args = parser.parse_args(argv)
    assert chosen is not None  # parse_args exits on any argv that names no command
    try:
        return chosen.run(args)
    except FusionvizError as exc:
        note(f"fusionviz: {exc}")
        return exc.exit_code
    except FileNotFoundError as exc:
        note(f"fusionviz: {exc}")
        return 2
