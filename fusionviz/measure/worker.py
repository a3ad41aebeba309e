"""Run measurements in a separate, long-lived worker process, so a crash, an out-of-memory error or a
hang is an error reported to the caller, not a dead app.

One worker serves one job at a time (GPU measurements must not interleave), resets Dynamo between
jobs, and is restarted after a crash or a timeout. It lives across runs because a fresh process costs
the torch import and CUDA start-up every time (10-20 s on the GPU machine).

Framing: one job (`protocol.encode_job`) per line on the worker's stdin; the worker answers with JSON
lines on a private copy of its stdout (`progress` lines, then one `result` holding the job's reply, or
one `error`). Whatever torch or the
user's model prints goes to the worker's stderr, which is kept in an unnamed temporary file (it vanishes with
the last process holding it, however either ends) whose tail is attached to crash reports.

A request made inside `abort_on(event)` stops soon after the event is set: its worker is stopped and
`Cancelled` raised, so a cancelled run frees its device at once.
"""

from __future__ import annotations

import contextlib
import contextvars
import getpass
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from fusionviz.errors import FusionvizError, WorkerError
from fusionviz.measure.protocol import Job, Progress, encode_job

LOG_TAIL_BYTES = 64 * 1024  # read back for a crash report: far more than its last lines need
POLL_S = 0.25  # how often a waiting request looks at its abort event

_abort: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar("fusionviz_abort", default=None)


class Cancelled(FusionvizError):
    """The run was cancelled while it waited or ran. Not a WorkerError, so it ends the whole run instead of
    being kept as one mode's failure."""


@contextlib.contextmanager
def abort_on(event: threading.Event) -> Iterator[None]:
    """Make this thread's requests, on any worker, stop their worker and raise `Cancelled` once `event` is set
    (checked every POLL_S), so that a cancelled run also stops the timing and cold-compile workers it started."""
    token = _abort.set(event)
    try:
        yield
    finally:
        _abort.reset(token)


def _check_abort() -> None:
    event = _abort.get()
    if event is not None and event.is_set():
        raise Cancelled("the run was cancelled")


def _remove_when_ended(proc: subprocess.Popen[bytes], folder: str) -> None:
    """A worker's temporary folder goes when the process ends, also when it dies while idle and nobody asks."""
    proc.wait()
    shutil.rmtree(folder, ignore_errors=True)


FOLDER_PREFIX = "fusionviz-worker-"  # then the pid of the process that owns the worker, a dash, a random part


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def remove_orphaned_folders() -> None:
    """Remove the temporary folders of workers whose owning process is gone: one killed outright (SIGKILL, an
    out-of-memory kill) had no chance to remove its workers' folders, and their trace files and compile scratch
    would stay in the system's temporary folder."""
    for path in Path(tempfile.gettempdir()).glob(f"{FOLDER_PREFIX}*-*"):
        owner = path.name.removeprefix(FOLDER_PREFIX).split("-", 1)[0]
        if owner.isdigit() and path.is_dir() and not _alive(int(owner)):
            shutil.rmtree(path, ignore_errors=True)


def shared_inductor_cache() -> str:
    """Torch's default Inductor cache folder as this process sees it (`torchinductor_<user>` in the system's
    temporary folder), given to workers explicitly: each runs with a private TMPDIR, yet workers must share
    the cache (timing workers reuse what the capture compiled)."""
    user = "".join(c if c.isalnum() or c in "-_." else "_" for c in getpass.getuser())
    return os.path.join(tempfile.gettempdir(), f"torchinductor_{user}")


class Worker:
    """Client of one worker process. Thread-safe: requests are serialised."""

    def __init__(self, *, cache_dir: str | None = None, env: dict[str, str] | None = None,
                 cpus: set[int] | None = None) -> None:
        self._env = dict(env or {})
        self._cpus = cpus  # the cores the process may run on from its start; None: the caller's
        self.cache_dir = cache_dir  # the Inductor cache it compiles into; None: torch's default
        if cache_dir:
            self._env["TORCHINDUCTOR_CACHE_DIR"] = cache_dir
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self.tmp_dir: str | None = None  # the running process's own temporary folder
        self._lock = threading.Lock()  # one request at a time
        # A start and a close, one at a time (a close takes no request lock, so that it can stop a request): a
        # close during a start closed the log file the start hands the child, and the start's own pipe took its
        # descriptor, so the child held that pipe open and the start waited on it forever.
        self._life = threading.Lock()
        self._ended = False  # `end` was called: no process starts again
        self._buffer = b""

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> None:
        """Start the process now (it imports torch while the caller does other work); a request would
        start it anyway."""
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self._start()

    @property
    def pid(self) -> int | None:
        """The worker process's id while it runs (its process group's too), for diagnostics and fault tests."""
        return self._proc.pid if self.alive and self._proc is not None else None

    def _start(self) -> subprocess.Popen[bytes]:
        with self._life:
            if self._ended:
                raise WorkerError("the worker was ended before its job could start", "crash")
            return self._spawn()

    def _spawn(self) -> subprocess.Popen[bytes]:
        self._close()  # what is left of a process that died while idle (`_start` holds `_life`)
        # Unnamed: no file is left behind however the worker or this process ends.
        self._log = tempfile.TemporaryFile(prefix="fusionviz-worker-", suffix=".log")  # noqa: SIM115
        # A private temporary folder (the profiler's trace files, compile scratch), removed by `close` however
        # the worker ended: a worker killed mid-profile leaves nothing in the system's folder. Named after this
        # process, so that if this process is killed outright, the next worker started anywhere removes it.
        remove_orphaned_folders()
        self.tmp_dir = tempfile.mkdtemp(prefix=f"{FOLDER_PREFIX}{os.getpid()}-")
        pinned = {"FUSIONVIZ_CPUS": ",".join(map(str, sorted(self._cpus)))} if self._cpus else {}
        env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": shared_inductor_cache(), **self._env, **pinned,
               "TMPDIR": self.tmp_dir, "FUSIONVIZ_SHARED_TMP": tempfile.gettempdir(), "PYTHONUNBUFFERED": "1",
               # Inductor's C++ kernels show in the profiler only when this is set before they compile.
               "TORCHINDUCTOR_CPP_ENABLE_KERNEL_PROFILE": "1"}
        root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "") if env.get("PYTHONPATH") else root
        self._buffer = b""
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "fusionviz.measure.serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self._log, env=env, start_new_session=True,
        )
        threading.Thread(target=_remove_when_ended, args=(self._proc, self.tmp_dir), daemon=True,
                         name="fusionviz-worker-tmp").start()
        return self._proc

    def request(self, job: Job, progress: Progress | None = None, timeout_s: float = 900.0) -> dict[str, Any]:
        """Send one job and wait for its reply (as JSON values); raises WorkerError on failure, crash or
        timeout, `Cancelled` inside a set `abort_on`. `client` turns the reply into its dataclass."""
        with self._lock:
            _check_abort()
            proc = self._proc
            if proc is None or proc.poll() is not None:
                proc = self._start()
            assert proc.stdin is not None and proc.stdout is not None
            try:
                proc.stdin.write((json.dumps(encode_job(job)) + "\n").encode())
                proc.stdin.flush()
            except BrokenPipeError:
                raise self._crashed("the worker could not take the job") from None
            try:
                return self._reply(proc, progress, time.monotonic() + timeout_s, timeout_s)
            except WorkerError:
                raise  # the worker is closed where that is needed
            except BaseException:
                # Cancelled, or the progress callback raised (e.g. a Streamlit rerun): the reply would be left
                # unread for the next job to mistake for its own.
                self.close()
                raise

    def _reply(self, proc: subprocess.Popen[bytes], progress: Progress | None, deadline: float,
               timeout_s: float) -> dict[str, Any]:
        while True:
            line = self._read_line(proc, deadline)
            if line is None:
                self.close()
                raise WorkerError(
                    f"the run took longer than its limit of {timeout_s:.0f} s and was stopped; "
                    "choose smaller sizes, fewer modes, or raise the time limit", "timeout")
            if line == b"":
                raise self._crashed("the worker process died during the run")
            message = json.loads(line)
            if message["type"] == "progress":
                if progress:
                    progress(message["stage"])
            elif message["type"] == "result":
                reply: dict[str, Any] = message["reply"]
                return reply
            else:
                if message.get("kind") == "oom":
                    self.close()  # a fresh process gives the device's memory back for the next job
                raise WorkerError(message["error"], message.get("kind", "error"))

    def _read_line(self, proc: subprocess.Popen[bytes], deadline: float) -> bytes | None:
        """The next line; b"" at end of stream; None at the deadline."""
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                _check_abort()
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                if not sel.select(timeout=min(remaining, POLL_S)):
                    continue
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    return b""
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def _crashed(self, what: str) -> WorkerError:
        code = self._proc.wait(timeout=10) if self._proc else None
        tail = self.log_tail()
        self.close()
        detail = f" (exit code {code})" if code is not None else ""
        return WorkerError(f"{what}{detail}; its last output:\n{tail}" if tail else f"{what}{detail}", "crash")

    def log_tail(self, lines: int = 15) -> str:
        """The last lines the worker wrote to stderr; read at an offset, so the file position it shares with
        the worker (if alive) is left alone."""
        if not self._log:
            return ""
        try:
            fd = self._log.fileno()
            size = os.fstat(fd).st_size
            text = os.pread(fd, min(size, LOG_TAIL_BYTES), max(0, size - LOG_TAIL_BYTES)).decode(errors="replace")
        except (OSError, ValueError):
            return ""
        return "\n".join(text.strip().splitlines()[-lines:])

    def close(self) -> None:
        """Stop the worker (the whole process group: compile workers too). Safe from two threads at once: a
        request that fails closes its worker while the run it belongs to closes it too (a cancelled run's timing
        workers, still warming). A later request starts a new process; after `end`, none."""
        with self._life:
            self._close()

    def end(self) -> None:
        """Close for good: a request after it, or one waiting for this worker (a warm-up queued when its run
        ended), fails instead of starting a process nobody would close."""
        with self._life:
            self._ended = True
            self._close()

    def _close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)
            for stream in (proc.stdin, proc.stdout):
                if stream:
                    stream.close()
        log, self._log = self._log, None
        if log is not None:
            log.close()
        folder, self.tmp_dir = self.tmp_dir, None
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()
