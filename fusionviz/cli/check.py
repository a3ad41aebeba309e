"""`check`: run a fusion contract's configuration again (`snapshot` wrote it) and compare, one line per figure
that moved; exit 1 when the fusion plan regressed beyond the contract's tolerances, 0 otherwise."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from fusionviz.cli.reporter import note, write
from fusionviz.cli.run import measure_config
from fusionviz.errors import ConfigError, ContractFileError
from fusionviz.records.contract import Contract, device_kind


class Check:
    name = "check"
    help = ("run a fusion contract's configuration again and compare it with the file: one line per figure "
            "that moved; exit 1 when the plan regressed beyond the file's tolerances")

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        from fusionviz.cli.snapshot import EXAMPLE

        parser.formatter_class = argparse.RawDescriptionHelpFormatter
        parser.epilog = EXAMPLE + "\nexit codes: 0 within the tolerances, 1 regressed, 2 a file that is no contract"
        parser.add_argument("file", help="a contract written by `snapshot` (.toml)")
        parser.add_argument("--device", default=None,
                            help="the device to check on, of the contract's kind (default: cpu, or cuda:0 for a "
                                 "contract made on a GPU)")
        parser.add_argument("--session", default=None, metavar="OUT.json.gz",
                            help="also write the fresh run as a session file (to `inspect` or open in the app)")

    def run(self, args: argparse.Namespace) -> int:
        from fusionviz.analysis.contract import check, contract_of, floors_of
        from fusionviz.analysis.report import analyse
        from fusionviz.cli.flags import writable
        from fusionviz.cli.snapshot import describe, snapshot_command

        blessed = read(Path(args.file))
        config = replace(blessed.config, device=device_for(blessed, args.device))
        if args.session:
            writable(args.session)
        write(f"checking {args.file}: {describe(blessed)}")
        session = measure_config(config)
        if args.session:
            note(f"session written to {session.save(args.session)}")
        env = session.environment
        fresh = contract_of(analyse(session), blessed.tolerances, floors_of(blessed))
        checked = check(blessed, fresh)
        write(f"run with fusionviz {env.fusionviz_version}, torch {env.torch_version} on "
              f"{env.device_name or env.cpu or config.device}")
        write(*(f"  {'REGRESSED' if c.regressed else 'moved':<9}  {c.line}" for c in checked.changes))
        moved = len(checked.changes)
        if checked.regressed:
            many = len(checked.regressions)
            write(f"regressed: {many} figure{'s' * (many != 1)} of {checked.compared} beyond the contract's "
                  "tolerances. A change you mean is re-blessed with:",
                  f"  {snapshot_command(blessed, args.file)}")
            return 1
        write(f"ok: {checked.compared} figures within the contract's tolerances"
              + (f" ({moved} moved)" if moved else ", none moved"))
        return 0


def read(path: Path) -> Contract:
    """The contract at `path`, its model one this version knows; ContractFileError in one line otherwise."""
    from fusionviz.measure.catalog import CATALOG, REAL_MODELS
    from fusionviz.records.contract import read_contract

    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ContractFileError(f"{path} is not a text file: a contract is TOML written by `snapshot`") from None
    except IsADirectoryError:
        raise ContractFileError(f"{path} is a folder: give a contract file (.toml)") from None
    return read_contract(text, str(path), known_models=set(CATALOG) | set(REAL_MODELS))


def device_for(contract: Contract, device: str | None) -> str:
    """The device to check on: `device` where given (of the contract's kind), else the CPU or the first GPU."""
    kind = device_kind(contract.config.device)
    if device is None:
        return "cuda:0" if kind == "cuda" else kind
    if device_kind(device) != kind:
        raise ConfigError(f"--device {device}: the contract was made on {kind}, so it is checked on {kind}")
    return device

