"""The jobs a worker process runs, keyed by the request's `op`. Imported only inside the worker."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import torch

from fusionviz import capture
from fusionviz.config import RunConfig
from fusionviz.session import _build

Progress = Callable[[str], None]


def handle(request: dict[str, Any], progress: Progress) -> dict[str, Any]:
    op = request.get("op")
    if op == "devices":
        return {"devices": devices()}
    config = _build(RunConfig, request["config"])
    if op == "mode":
        run = capture.run_mode(config, request["mode"], progress)
        return {"environment": dataclasses.asdict(capture.environment(config.device)), "run": dataclasses.asdict(run)}
    if op == "naive":
        from fusionviz import naive

        return {"naive": dataclasses.asdict(naive.measure(config, request["mode"], request.get("calls", 200),
                                                          progress))}
    if op == "sweep":
        from fusionviz import sweep

        result = sweep.run_sweep(config, request["sweep"], progress)
        return {"environment": dataclasses.asdict(capture.environment(config.device)),
                "sweep": dataclasses.asdict(result)}
    raise ValueError(f"unknown job {op!r}")


def devices() -> list[dict[str, Any]]:
    """Each GPU this worker sees, then the CPU."""
    found = [
        {"device": f"cuda:{i}", "name": torch.cuda.get_device_name(i)} for i in range(torch.cuda.device_count())
    ]
    return found + [{"device": "cpu", "name": capture.environment("cpu").device_name}]
