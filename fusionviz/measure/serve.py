"""The worker process itself (`python -m fusionviz.measure.serve`, started by `worker.Worker`): reads one job
per line, runs it, and answers on a private copy of stdout; everything the model or torch prints goes to
stderr, which the caller keeps in a log."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from typing import Any

from fusionviz.measure.owner import watch_owner

if __name__ == "__main__":  # watched from before torch's import, the longest wait of a worker that is not needed
    watch_owner()

# Pinned before torch loads, so that the process's memory is allocated local to its core (see client).
if os.environ.get("FUSIONVIZ_CPUS"):
    os.sched_setaffinity(0, {int(c) for c in os.environ["FUSIONVIZ_CPUS"].split(",")})

import torch

# Inductor keeps the C++ kernels' precompiled header (cpp_prefix.h, about 6 s of g++ on the CPU) in the system's
# temporary folder, which it reads once, at import (codecache's _HEADER_DIR), and rebuilds wherever that is. Each
# worker has a private TMPDIR, so each built it again, on every FX-cache hit: a live CPU run's three timing
# processes took 8–10 s to compile where a hit takes 2.5 s. The header goes where a plain torch user's goes.
if os.environ.get("FUSIONVIZ_SHARED_TMP"):
    tempfile.tempdir = os.environ["FUSIONVIZ_SHARED_TMP"]
    import torch._inductor.codecache
    tempfile.tempdir = None  # everything else: the private TMPDIR again

from fusionviz.errors import ConfigError
from fusionviz.measure import jobs
from fusionviz.measure.protocol import decode_job, encode_reply


def serve() -> None:
    # Keep a private channel for the protocol; anything else written to stdout goes to stderr.
    channel = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def send(message: dict[str, Any]) -> None:
        channel.write(json.dumps(message, default=str) + "\n")
        channel.flush()

    for raw in sys.stdin:
        if not raw.strip():
            continue
        try:
            reply = jobs.handle(decode_job(json.loads(raw)), lambda stage: send({"type": "progress", "stage": stage}))
            send({"type": "result", "reply": encode_reply(reply)})
        except ConfigError as exc:
            send({"type": "error", "kind": "config", "error": str(exc)})
        except torch.OutOfMemoryError as exc:
            send({"type": "error", "kind": "oom",
                  "error": f"the device ran out of memory: {str(exc).splitlines()[0]}; reduce the batch or sizes"})
            return
        except Exception as exc:
            send({"type": "error", "kind": "error", "error": f"{type(exc).__name__}: {exc}"})


if __name__ == "__main__":
    serve()
