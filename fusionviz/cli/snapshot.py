"""`snapshot`: run a model as `run` does and write its fusion contract, a small TOML file of what torch.compile
made of it (kernels, graphs, breaks, recompiles, bytes and a speedup floor per mode) and the tolerances `check`
applies, to commit and check in CI."""

from __future__ import annotations

import argparse
import shlex

from fusionviz.cli.flags import writable
from fusionviz.cli.reporter import note, write
from fusionviz.cli.run import add_run_flags, measure
from fusionviz.errors import ConfigError
from fusionviz.records.config import RunConfig
from fusionviz.records.contract import Contract, Tolerances, device_kind, dynamic_word
from fusionviz.records.decode import DecodeError, decode

EXAMPLE = """a fusion contract kept in CI (docs/guide.md, Keep a fusion plan in CI):
  python -m fusionviz snapshot --model mlp --dim 512 --batch 256 --device cuda:0 \\
      --modes eager,default,reduce-overhead --out contracts/mlp.toml
  python -m fusionviz check contracts/mlp.toml    # exit 1: the plan regressed beyond the file's tolerances
re-bless a change you mean with the snapshot line in the file's header, and review the diff"""


class Snapshot:
    name = "snapshot"
    help = ("run a model as `run` does and write its fusion contract (.toml: kernels, graphs, graph breaks, "
            "recompiles, bytes and a speedup floor per mode, and the tolerances) for `check` to hold CI to")

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.formatter_class = argparse.RawDescriptionHelpFormatter
        parser.epilog = EXAMPLE
        add_run_flags(parser, out="the contract file to write (.toml), to commit and `check` in CI")
        tol = Tolerances()
        parser.add_argument("--kernels-may-grow-by", type=int, default=tol.kernels_may_grow_by, metavar="N",
                            help="kernels per iteration a mode may gain before `check` fails (default "
                                 f"{tol.kernels_may_grow_by}); graphs, graph breaks, recompiles and CUDA-graph "
                                 "skips may not grow at all")
        parser.add_argument("--bytes-may-grow-by-pct", type=float, default=tol.bytes_may_grow_by_pct, metavar="PCT",
                            help=f"percent bytes per iteration may grow (default {tol.bytes_may_grow_by_pct:g})")
        parser.add_argument("--speedup-margin", type=float, default=tol.speedup_margin, metavar="SHARE",
                            help="each compiled mode's speedup floor is its measured p10 less this share of it "
                                 f"(default {tol.speedup_margin:g})")
        parser.add_argument("--speedup-floor", type=float, default=None, metavar="X",
                            help="a fixed floor for every compiled mode's speedup against eager instead (0.5: not "
                                 "more than twice as slow as eager), for a noisy machine")
        parser.add_argument("--why", default="", help="why these tolerances, said in the file")

    def run(self, args: argparse.Namespace) -> int:
        from fusionviz.analysis.contract import contract_of
        from fusionviz.analysis.report import analyse
        from fusionviz.records.contract import contract_toml

        path = writable(args.out)
        tolerances = tolerances_from(args)
        session = measure(args)
        contract = contract_of(analyse(session), tolerances)
        for mode, why in contract.failed.items():
            note(f"{mode}: did not run: {why}")
        if contract.failed or not contract.modes:
            note(f"no contract written: a contract blesses modes that ran ({', '.join(contract.failed)} did not)")
            return 1
        text = contract_toml(contract, header(contract, args.out))
        path.write_text(text)
        write(text.rstrip("\n"), "", f"contract written to {path}")
        return 0


def tolerances_from(args: argparse.Namespace) -> Tolerances:
    """The tolerances the flags give, each checked against its bounds before any work."""
    given = {"kernels_may_grow_by": args.kernels_may_grow_by, "bytes_may_grow_by_pct": args.bytes_may_grow_by_pct,
             "speedup_margin": args.speedup_margin, "speedup_floor": args.speedup_floor, "why": args.why}
    try:
        return decode(Tolerances, given)
    except DecodeError as exc:
        flag = "--" + str(exc).partition(":")[0].replace("_", "-")
        raise ConfigError(f"{flag}: {str(exc).partition(': ')[2]}") from None


def snapshot_command(contract: Contract, out: str, width: int | None = None) -> str:
    """The `snapshot` command line that makes `contract` again (its configuration and tolerances) into `out`;
    with `width`, broken into lines of about that many characters, each continued with a backslash."""
    config, tol, default, loose = contract.config, contract.tolerances, RunConfig(), Tolerances()
    words = ["python", "-m", "fusionviz", "snapshot", "--model", config.model, "--dim", str(config.dim),
             "--batch", str(config.batch)]
    words += ["--seq", str(config.seq)] * (config.seq is not None)
    words += ["--layers", str(config.layers)] * (config.layers is not None)
    words += ["--dtype", config.dtype, "--device", device_kind(config.device), "--pass", config.pass_,
              "--modes", ",".join(config.modes)]
    words += ["--dynamic", dynamic_word(config.dynamic)] * (config.dynamic != default.dynamic)
    words += ["--rounds", str(config.rounds), "--processes", str(config.processes)]
    words += ["--threads", str(config.threads)] * (config.threads is not None)
    words += ["--timeout", f"{config.timeout_s:g}"] * (config.timeout_s != default.timeout_s)
    words += ["--kernels-may-grow-by", str(tol.kernels_may_grow_by)] * (tol.kernels_may_grow_by !=
                                                                        loose.kernels_may_grow_by)
    words += ["--bytes-may-grow-by-pct", f"{tol.bytes_may_grow_by_pct:g}"] * (tol.bytes_may_grow_by_pct !=
                                                                              loose.bytes_may_grow_by_pct)
    words += ["--speedup-margin", f"{tol.speedup_margin:g}"] * (tol.speedup_margin != loose.speedup_margin)
    words += ["--speedup-floor", f"{tol.speedup_floor:g}"] * (tol.speedup_floor is not None)
    words += ["--why", tol.why] * bool(tol.why)
    words += ["--out", out]
    if width is None:
        return shlex.join(words)
    lines: list[list[str]] = [[]]
    for i, word in enumerate(words):
        flag = word.startswith("--") and i + 1 < len(words)
        if lines[-1] and flag and len(shlex.join(lines[-1] + words[i:i + 2])) > width:
            lines.append([])
        lines[-1].append(word)
    return " \\\n    ".join(shlex.join(line) for line in lines)


def header(contract: Contract, out: str) -> list[str]:
    """The comment lines a contract file opens with: what it is, how to check it and how to re-bless it."""
    return ["A fusion contract: what torch.compile made of one model and configuration, mode by mode:",
            f"  {describe(contract)}",
            "Check it (exit 1 when the fusion plan regressed beyond the tolerances below):",
            f"  python -m fusionviz check {shlex.quote(out)}",
            "Re-bless it after a change you mean, and review the diff of the figures:",
            *(f"  {line}" for line in snapshot_command(contract, out, width=100).splitlines())]


def describe(contract: Contract) -> str:
    """`linear_ln_gelu, dim 32, batch 8, float32, cpu, inference; modes eager, default`."""
    c = contract.config
    sizes = "".join(f", {name} {value}" for name, value in (("dim", c.dim), ("batch", c.batch), ("seq", c.seq),
                                                          ("layers", c.layers)) if value is not None)
    return f"{c.model}{sizes}, {c.dtype}, {device_kind(c.device)}, {c.pass_}; modes {', '.join(c.modes)}"
