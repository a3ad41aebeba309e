"""`python -m fusionviz COMMAND`: the CLI maps flags onto the Python API, one module per command, each a
`Command`; a new command is a module `fusionviz.cli.NAME` holding the class `NAME.capitalize()`, and its name in
COMMANDS. Only the command run is imported, so that `inspect` does not import the measuring commands (`run`,
`check`) and the tables they read."""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import NoReturn

from fusionviz.cli.command import Command
from fusionviz.cli.reporter import note
from fusionviz.errors import FusionvizError

COMMANDS = ("models", "run", "inspect", "sweep", "grid", "export", "snapshot", "check")
PROG = "python -m fusionviz"


def command(name: str) -> Command:
    """The subcommand `name`, its module imported now."""
    made: Command = getattr(importlib.import_module(f"fusionviz.cli.{name}"), name.capitalize())()
    return made


def main(argv: list[str] | None = None) -> int:
    """Run the command `argv` names; a `FusionvizError` is one line on stderr and its exit code."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in COMMANDS:
        _list_commands(argv)
    # The named command's parser alone: each argparse parser costs about as much as a small trace's own work
    chosen = command(argv[0])
    parser = argparse.ArgumentParser(prog=f"{PROG} {chosen.name}", description=chosen.help)
    chosen.add_arguments(parser)  # some read tables to offer their choices
    args = parser.parse_args(argv[1:])
    try:
        return chosen.run(args)
    except FusionvizError as exc:
        note(f"fusionviz: {exc}")
        return exc.exit_code
    except FileNotFoundError as exc:
        note(f"fusionviz: {exc}")
        return 2


def _list_commands(argv: list[str]) -> NoReturn:
    """For an argv that names no command first (`--help` among them): every command and its line of help, or
    the refusal that lists them; exits."""
    parser = argparse.ArgumentParser(prog=PROG, description=f"`{PROG} {{{','.join(COMMANDS)}}}`: the CLI maps "
                                                            "flags onto the Python API.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        sub.add_parser(name, help=command(name).help)
    parser.parse_args(argv)  # exits on --help and on anything it refuses
    parser.error(f"name the command first: {PROG} COMMAND ...")
