"""A distributed job's traces: one torch.profiler trace per rank, read together.

A data-parallel job writes one trace per rank into one folder. Each file is read by the same reader as a single
trace (`trace.parse_trace`), in a process pool over the files (every core this process may use), and keeps its
rank: the trace's `distributedInfo` (torch.profiler writes it once a process group exists), else a number in
the file name (`rank3`, `rank-3`, `worker3`…, else the last number in it). No torch, no pandas.
"""

from __future__ import annotations

import contextlib
import itertools
import multiprocessing
import os
import re
import sys
import types
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import cached_property, partial
from pathlib import Path
from typing import Any, Literal

import msgspec

from fusionviz.errors import SessionFileError, TraceError
from fusionviz.records.decode import clip, is_int64
from fusionviz.records.files import session_from_parsed, trace_label
from fusionviz.records.limits import Limits, read_file
from fusionviz.records.session import Session
from fusionviz.records.trace import ParsedTrace, parse_trace
from fusionviz.records.trace_events import read_trace

TRACE_SUFFIXES = (".json", ".json.gz")
_RANK_IN_NAME = re.compile(r"(?:rank|worker|proc|process|gpu|device)[_\-. ]?(\d+)", re.IGNORECASE)
_LAST_NUMBER = re.compile(r"(\d+)(?!.*\d)")

RankSource = Literal["distributedInfo", "file name"]


@dataclass
class RankTrace:
    """One rank's trace: where its rank number came from, what the trace says of its job (`backend`, `world_size`
    from distributedInfo, None when it does not say), and the trace read into tables."""

    rank: int
    file: str
    rank_from: RankSource
    backend: str | None
    world_size: int | None
    parsed: ParsedTrace

    @property
    def label(self) -> str:
        return f"rank {self.rank} · {trace_label(self.file)}"

    @cached_property
    def session(self) -> Session:
        """The rank's trace as a Session, for every view of one trace (made once: views cache by session)."""
        return session_from_parsed(self.parsed, self.label)


@dataclass
class Job:
    """The ranks of one job, in rank order; `source` names what was opened (a folder, or the files)."""

    source: str
    ranks: list[RankTrace]


def job_files(paths: list[Path]) -> list[Path]:
    """The trace files of a job: a folder's `.json` and `.json.gz` files (not its subfolders), and files named
    as they are, in name order within each folder. A SessionFileError when there is none."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.is_file() and p.name.endswith(TRACE_SUFFIXES))
            if not found:
                raise SessionFileError(f"{path} holds no trace files (.json or .json.gz)")
            files += found
        else:
            files.append(path)
    if not files:
        raise SessionFileError("no trace files given")
    return files


def read_job(paths: list[Path], processes: int | None = None) -> Job:
    """Every rank's trace of a job (folders and files as in `job_files`), read in parallel, in rank order. A
    SessionFileError naming the file when one is not a profiler trace, or when two files claim one rank."""
    files = job_files(paths)
    source = str(paths[0]) if len(paths) == 1 else ", ".join(str(p) for p in paths)
    return Job(source, _ranked([(f.name, str(f)) for f in files], _map(read_rank_file, [str(f) for f in files],
                                                                      processes)))


def read_uploaded_job(named: list[tuple[str, bytes]], processes: int | None = None) -> Job:
    """A job from files' names and bytes (uploads), as `read_job`."""
    if not named:
        raise SessionFileError("no trace files given")
    found = _map(_read_rank_bytes, named, processes)
    return Job(", ".join(name for name, _ in named), _ranked([(name, name) for name, _ in named], found))


def read_rank_file(path: str) -> tuple[Any, ParsedTrace]:
    """One file's distributedInfo (as written) and its trace read into tables; a pool's task."""
    return _read_rank_bytes((path, read_file(Path(path))))


def _read_rank_bytes(named: tuple[str, bytes]) -> tuple[Any, ParsedTrace]:
    name, raw = named
    limits = Limits.from_env()
    limits.check_file_size(len(raw), name)
    try:
        document = read_trace(raw, name, limits)
        return document.distributed, parse_trace(document)
    except (TraceError, ValueError) as exc:
        raise SessionFileError(f"{name} is not a torch.profiler trace: {exc}") from None


def _map(task: Any, items: list[Any], processes: int | None) -> list[tuple[Any, ParsedTrace]]:
    """`task` over `items`: in this process for one item, else in a pool of fresh processes (forkserver: a server
    started from a clean state, so no thread of the app or its locks are copied) of at most one per core. Each
    result comes back as msgpack (`_encoded`): 8x faster both ways than pickling its kernel rows."""
    workers = min(len(items), processes or len(os.sched_getaffinity(0)))
    if workers <= 1:
        return [task(item) for item in items]
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["fusionviz.records.job"])
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        with _no_main_file():  # the processes start as the tasks are handed out, all of them here
            encoded = pool.map(partial(_encoded, task), items)
        return [_RESULT.decode(one) for one in encoded]


@contextlib.contextmanager
def _no_main_file() -> Iterator[None]:
    """A `__main__` without a file while a pool starts its processes. multiprocessing runs the parent's main file
    again in each child (as `__mp_main__`), and under Streamlit that file is the script being run (its script runner
    installs each run's script as `__main__`): each child ran `app.py` again, importing Streamlit and the app's web
    layer (the Trace explorer opened a 2-rank job in 0.68 s, not 0.33 s), and died where the file was gone
    (AppTest's temporary script)."""
    main = sys.modules["__main__"]
    stand_in = sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        if sys.modules.get("__main__") is stand_in:  # else another session's run has installed its script since
            sys.modules["__main__"] = main


def _encoded(task: Any, item: Any) -> bytes:
    return msgspec.msgpack.encode(task(item))


_RESULT = msgspec.msgpack.Decoder(tuple[Any, ParsedTrace])


def _ranked(names: list[tuple[str, str]], found: list[tuple[Any, ParsedTrace]]) -> list[RankTrace]:
    ranks: list[RankTrace] = []
    for (name, file), (info, parsed) in zip(names, found, strict=True):
        rank, rank_from = _rank(info, name)
        backend = info.get("backend") if isinstance(info, dict) and isinstance(info.get("backend"), str) else None
        size = info.get("world_size") if isinstance(info, dict) else None
        ranks.append(RankTrace(rank, file, rank_from, clip(backend, 40) if backend else None,
                               size if isinstance(size, int) and is_int64(size) and size > 0 else None, parsed))
    ranks.sort(key=lambda r: r.rank)
    for a, b in itertools.pairwise(ranks):
        if a.rank == b.rank:
            raise SessionFileError(f"{a.file} and {b.file} are both rank {a.rank} (from their {a.rank_from} and "
                                   f"{b.rank_from}): open the traces of one job")
    return ranks


def _rank(info: Any, name: str) -> tuple[int, RankSource]:
    """The rank of a trace: distributedInfo's `rank` when it is a whole number ≥ 0, else from the file name."""
    rank = info.get("rank") if isinstance(info, dict) else None
    if isinstance(rank, int) and is_int64(rank) and rank >= 0:
        return rank, "distributedInfo"
    match = _RANK_IN_NAME.search(name) or _LAST_NUMBER.search(name.removesuffix(".gz").removesuffix(".json"))
    if match is None:
        raise SessionFileError(f"cannot tell which rank wrote {name}: its trace has no distributedInfo and its "
                               "name no number (name the files rank0…, rank1…)")
    return int(match.group(1)), "file name"
