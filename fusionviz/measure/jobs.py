"""The worker side of the protocol: run one decoded job and build its reply. Imported only in the worker."""

from __future__ import annotations

import torch

from fusionviz.measure import capture
from fusionviz.measure.environment import environment
from fusionviz.measure.protocol import (
    CeilingsJob,
    CeilingsReply,
    Device,
    DevicesJob,
    DevicesReply,
    Job,
    MemoryJob,
    MemoryReply,
    ModeJob,
    ModeReply,
    NaiveJob,
    NaiveReply,
    Progress,
    Reply,
    SweepReply,
    TimingJob,
    TimingReply,
    WarmJob,
    WarmReply,
)


def handle(job: Job, progress: Progress) -> Reply:
    if isinstance(job, DevicesJob):
        return DevicesReply(devices=devices())
    if isinstance(job, ModeJob):
        run = capture.run_mode(job.config, job.mode, progress)
        return ModeReply(environment=environment(job.config.device, job.config.model), run=run)
    if isinstance(job, TimingJob):
        from fusionviz.measure import timing

        timed, memory = timing.time_modes(job.config, list(job.modes), job.index, progress, job.memory_mode)
        return TimingReply(timing=timed, memory=memory)
    if isinstance(job, MemoryJob):
        from fusionviz.measure import memory as measured

        return MemoryReply(memory=measured.measure(job.config, job.mode, progress))
    if isinstance(job, CeilingsJob):
        from fusionviz.measure import ceilings

        progress("calibrating the device's ceilings" if job.redo else "the device's ceilings")
        return CeilingsReply(ceilings=ceilings.of_config(job.config, redo=job.redo))
    if isinstance(job, WarmJob):
        from fusionviz.measure.harness import prepare_compiler, warm_compiler

        return WarmReply(seconds=warm_compiler(job.device) if job.compile else prepare_compiler())
    if isinstance(job, NaiveJob):
        from fusionviz.measure import naive

        return NaiveReply(naive=naive.measure(job.config, job.mode, job.calls, progress))
    from fusionviz.measure import sweep

    result = sweep.run_sweep(job.config, job.request, progress)
    return SweepReply(environment=environment(job.config.device, job.config.model), sweep=result)


def devices() -> list[Device]:
    """Each GPU this worker sees, then the CPU."""
    found = [Device(f"cuda:{i}", torch.cuda.get_device_name(i)) for i in range(torch.cuda.device_count())]
    return [*found, Device("cpu", environment("cpu").device_name)]
