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
`Cancelled` raised, so a cancelled run frees its device at once. Every worker still running when this process
exits is ended by an `atexit` hook, and a worker also ends itself once this process is gone (`owner`).
"""

from __future__ import annotations

import atexit
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
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, Literal

from fusionviz.errors import FusionvizError, WorkerError
from fusionviz.measure.protocol import Job, Progress, encode_job

LOG_TAIL_BYTES = 64 * 1024  # read back for a crash report: far more than its last lines need
POLL_S = 0.25  # how often a waiting request looks at its abort event
DISCARD_WAIT_S = 30.0  # how long a stopped process (SIGKILLed) may take to be reaped

WorkerState = Literal["not_started", "starting", "idle", "busy", "ended"]
# The points of a start and a request where `Worker.checkpoint` is called, so that a test can hold the thread there
# while another closes the worker: after the fork (still starting), before the job's write, before its reply.
Checkpoint = Literal["spawned", "writing", "reading"]

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


def _carry_on(_: Checkpoint) -> None:
    """The default checkpoint: nothing to wait for."""


def _ended_error() -> WorkerError:
    return WorkerError("the measuring process was stopped before this job finished (its run ended or was "
                       "cancelled, or the app is closing)", "ended")


class _Process:
    """One started worker process and what it holds: its pipes, its log, its temporary folder, and while a request
    runs on it the self-pipe that wakes that request. `stop` may come from any thread (under the worker's
    condition); `discard`, which closes the pipes and files, only from the thread that owns the process: its
    request while busy, else whoever took it out of the worker."""

    def __init__(self, popen: subprocess.Popen[bytes], log: IO[bytes], tmp_dir: str) -> None:
        self.popen, self.log, self.tmp_dir = popen, log, tmp_dir
        self.stopped = False  # killed by close/end or after a failure: its reader gives up at once
        self._buffer = b""
        self._wake: tuple[int, int] | None = None  # (read end, write end) while a request runs on it

    @classmethod
    def spawn(cls, extra_env: dict[str, str], cpus: set[int] | None) -> _Process:
        # Unnamed: no file is left behind however the worker or this process ends.
        log = tempfile.TemporaryFile(prefix="fusionviz-worker-", suffix=".log")  # noqa: SIM115
        # A private temporary folder (the profiler's trace files, compile scratch), removed however the worker
        # ended: a worker killed mid-profile leaves nothing in the system's folder. Named after this process, so
        # that if this process is killed outright, the next worker started anywhere removes it.
        remove_orphaned_folders()
        tmp_dir = tempfile.mkdtemp(prefix=f"{FOLDER_PREFIX}{os.getpid()}-")
        pinned = {"FUSIONVIZ_CPUS": ",".join(map(str, sorted(cpus)))} if cpus else {}
        env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": shared_inductor_cache(), **extra_env, **pinned,
               "TMPDIR": tmp_dir, "FUSIONVIZ_SHARED_TMP": tempfile.gettempdir(), "PYTHONUNBUFFERED": "1",
               # Inductor's C++ kernels show in the profiler only when this is set before they compile.
               "TORCHINDUCTOR_CPP_ENABLE_KERNEL_PROFILE": "1"}
        root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "") if env.get("PYTHONPATH") else root
        try:
            popen = subprocess.Popen(
                [sys.executable, "-m", "fusionviz.measure.serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=log, env=env, start_new_session=True,
            )
        except BaseException:
            log.close()
            shutil.rmtree(tmp_dir, ignore_errors=True)
            raise
        threading.Thread(target=_remove_when_ended, args=(popen, tmp_dir), daemon=True,
                         name="fusionviz-worker-tmp").start()
        return cls(popen, log, tmp_dir)

    def open_wake(self) -> None:
        self._wake = os.pipe()

    def close_wake(self) -> None:
        wake, self._wake = self._wake, None
        if wake is not None:
            for fd in wake:
                os.close(fd)

    def stop(self) -> None:
        """Kill the process group (compile workers too) and wake the request reading it; the caller holds the
        worker's condition, so the self-pipe is open."""
        if self.stopped:
            return
        self.stopped = True
        if self.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, signal.SIGKILL)
        if self._wake is not None:
            os.write(self._wake[1], b"!")

    def discard(self) -> None:
        """Reap the stopped or dead process and close what it held; by its owner only."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=DISCARD_WAIT_S)
        for stream in (self.popen.stdin, self.popen.stdout):
            if stream:
                with contextlib.suppress(OSError):  # a flush into a dead process's pipe
                    stream.close()
        self.log.close()
        shutil.rmtree(self.tmp_dir, ignore_errors=True)

    def read_line(self, deadline: float) -> bytes | None:
        """The next line; b"" at end of stream or once stopped; None at the deadline."""
        assert self.popen.stdout is not None
        fd = self.popen.stdout.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            if self._wake is not None:
                sel.register(self._wake[0], selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                _check_abort()
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                ready = sel.select(timeout=min(remaining, POLL_S))
                if self.stopped:
                    return b""
                if not ready:
                    continue
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    return b""
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def log_tail(self, lines: int = 15) -> str:
        """The last lines the worker wrote to stderr; read at an offset, so the file position it shares with the
        worker (if alive) is left alone."""
        try:
            fd = self.log.fileno()
            size = os.fstat(fd).st_size
            text = os.pread(fd, min(size, LOG_TAIL_BYTES), max(0, size - LOG_TAIL_BYTES)).decode(errors="replace")
        except (OSError, ValueError):
            return ""
        return "\n".join(text.strip().splitlines()[-lines:])


class Worker:
    """Client of one worker process, its life one state machine (`WorkerState`): not_started → starting → idle ⇄
    busy → … → ended, every transition under one condition. Thread-safe: requests are serialised, and `close` or
    `end` from any thread, at any instant of a start or a request, returns at once and wakes every thread waiting
    on the worker (a self-pipe its reader's selector watches) with a WorkerError of kind "ended". The thread that
    owns a process's pipes closes them: a closer never does, so a reader never selects on a descriptor that another
    thread closed (whose number the next pipe opened would take)."""

    def __init__(self, *, cache_dir: str | None = None, env: dict[str, str] | None = None,
                 cpus: set[int] | None = None) -> None:
        self._env = dict(env or {})
        self._cpus = cpus  # the cores the process may run on from its start; None: the caller's
        self.cache_dir = cache_dir  # the Inductor cache it compiles into; None: torch's default
        if cache_dir:
            self._env["TORCHINDUCTOR_CACHE_DIR"] = cache_dir
        self._state: WorkerState = "not_started"
        self._changed = threading.Condition()  # guards every field below; notified at every transition
        self._process: _Process | None = None
        self._ending = False  # `end` was called: no process starts again
        self._requests = threading.Lock()  # one request at a time
        # Where tests hold a thread to force one interleaving of a start or request with a close; called with no
        # lock held.
        self.checkpoint: Callable[[Checkpoint], None] = _carry_on
        _LIVE.add(self)

    @property
    def state(self) -> WorkerState:
        return self._state

    @property
    def alive(self) -> bool:
        """Whether its process runs and was not stopped (a stopped one is killed, perhaps not yet reaped)."""
        return self.pid is not None

    @property
    def pid(self) -> int | None:
        """The worker process's id while it runs (its process group's too), for diagnostics and fault tests."""
        process = self._process
        if process is None or process.stopped or process.popen.poll() is not None:
            return None
        return process.popen.pid

    @property
    def tmp_dir(self) -> str | None:
        """The running process's own temporary folder."""
        process = self._process
        return process.tmp_dir if process is not None else None

    def start(self) -> None:
        """Start the process now (it imports torch while the caller does other work); a request would start it
        anyway. Raises WorkerError ("ended") when the worker is ended before or while it starts."""
        with self._requests:
            self._release(self._acquire(), keep=True)

    def request(self, job: Job, progress: Progress | None = None, timeout_s: float = 900.0) -> dict[str, Any]:
        """Send one job and wait for its reply (as JSON values); raises WorkerError on failure, crash, timeout or
        an end meanwhile, `Cancelled` inside a set `abort_on`. `client` turns the reply into its dataclass."""
        line = (json.dumps(encode_job(job)) + "\n").encode()
        with self._requests:
            _check_abort()
            process = self._acquire()
            keep = False
            try:
                self.checkpoint("writing")
                self._write(process, line)
                self.checkpoint("reading")
                message = self._last_message(process, progress, time.monotonic() + timeout_s, timeout_s)
                # An out-of-memory error ends the process: a fresh one gives the device's memory back.
                keep = message.get("kind") != "oom"
            finally:
                # Stopped unless it answered: after a crash, a timeout, an end, `Cancelled`, or a progress callback
                # that raised (e.g. a Streamlit rerun), its reply, left unread, would be mistaken for the next job's.
                self._release(process, keep=keep)
        if message["type"] != "result":
            raise WorkerError(message["error"], message.get("kind", "error"))
        reply: dict[str, Any] = message["reply"]
        return reply

    # -- transitions --------------------------------------------------------------------------------------------

    def _acquire(self) -> _Process:
        """Idle → busy on the running process, or not_started → starting → busy on a new one."""
        with self._changed:
            if self._ending:
                raise _ended_error()
            process, dead = self._process, None
            if process is not None and process.popen.poll() is None:
                return self._become_busy(process)
            self._process, dead = None, process  # it died while idle
            self._state = "starting"
        if dead is not None:
            dead.discard()
        try:
            process = _Process.spawn(self._env, self._cpus)
        except BaseException:
            with self._changed:
                self._settle()
            raise
        self.checkpoint("spawned")
        with self._changed:
            if not self._ending:
                self._process = process
                return self._become_busy(process)
            self._settle()  # an end came while it started (and waited for this transition)
            process.stop()
        process.discard()
        raise _ended_error()

    def _become_busy(self, process: _Process) -> _Process:
        process.open_wake()
        self._state = "busy"
        self._changed.notify_all()
        return process

    def _release(self, process: _Process, keep: bool) -> None:
        """Busy → idle, or, for a process stopped or lost, → not_started (ended after `end`)."""
        with self._changed:
            process.close_wake()
            keep = keep and not process.stopped and process.popen.poll() is None
            if keep:
                self._state = "idle"
                self._changed.notify_all()
            else:
                process.stop()
                self._process = None
                self._settle()
        if not keep:
            process.discard()

    def close(self) -> None:
        """Stop the worker (the whole process group: compile workers too); a later request starts a new process.
        Safe from any thread, the requesting one included."""
        self._stop(end=False)

    def end(self) -> None:
        """Close for good: a request after it, or one waiting for this worker (a warm-up queued when its run ended),
        fails instead of starting a process nobody would close."""
        self._stop(end=True)

    def _stop(self, end: bool) -> None:
        with self._changed:
            self._ending = self._ending or end
            self._changed.wait_for(lambda: self._state != "starting")  # a start takes milliseconds (a fork)
            process = self._process
            if process is not None:
                process.stop()
            if self._state == "busy":
                return  # its request wakes, and releases what the process holds
            self._process = None
            self._settle()
        if process is not None:
            process.discard()

    def _settle(self) -> None:
        """No process: not_started, or ended after `end`. The caller holds the condition."""
        self._state = "ended" if self._ending else "not_started"
        self._changed.notify_all()

    # -- one job ------------------------------------------------------------------------------------------------

    def _write(self, process: _Process, line: bytes) -> None:
        stdin = process.popen.stdin
        assert stdin is not None
        try:
            stdin.write(line)
            stdin.flush()
        except OSError:  # BrokenPipeError: it died, or was stopped
            raise self._lost(process, "the worker could not take the job") from None

    def _last_message(self, process: _Process, progress: Progress | None, deadline: float,
                      timeout_s: float) -> dict[str, Any]:
        """The job's last message (its result, or the error the worker reported), progress passed on before it."""
        while True:
            line = process.read_line(deadline)
            if line is None:
                raise WorkerError(
                    f"the run took longer than its limit of {timeout_s:.0f} s and was stopped; "
                    "choose smaller sizes, fewer modes, or raise the time limit", "timeout")
            if line == b"":
                raise self._lost(process, "the worker process died during the run")
            message = json.loads(line)
            if message["type"] == "progress":
                if progress:
                    progress(message["stage"])
            else:
                last: dict[str, Any] = message
                return last

    def _lost(self, process: _Process, what: str) -> WorkerError:
        """The error for a process gone mid-job: ended by `close`/`end`, or crashed (with its exit code and log)."""
        if process.stopped:
            return _ended_error()
        try:
            code: int | None = process.popen.wait(timeout=10)
        except subprocess.TimeoutExpired:
            code = None
        tail = process.log_tail()
        detail = f" (exit code {code})" if code is not None else ""
        return WorkerError(f"{what}{detail}; its last output:\n{tail}" if tail else f"{what}{detail}", "crash")

    def log_tail(self, lines: int = 15) -> str:
        """The last lines the running worker wrote to stderr."""
        process = self._process
        return process.log_tail(lines) if process is not None else ""

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()


_LIVE: weakref.WeakSet[Worker] = weakref.WeakSet()  # every worker of this process, for the exit hook


@atexit.register
def _end_all() -> None:
    """End every worker at exit, so that a thread left waiting on one (a daemon) wakes and nothing outlives us."""
    for worker in list(_LIVE):
        worker.end()
