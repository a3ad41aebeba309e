"""User-model factories (`package.module:factory`) that misbehave, to show the worker's isolation."""

import os
import time

import torch
from torch import nn


class _Abort(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        os.abort()  # a hard crash, as a segfaulting extension would give


class _Sleepy(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        time.sleep(30)
        return x


def crash(dim: int, batch: int, seq: int | None) -> tuple[nn.Module, tuple[torch.Tensor]]:
    return _Abort(), (torch.randn(batch, dim),)


def hang(dim: int, batch: int, seq: int | None) -> tuple[nn.Module, tuple[torch.Tensor]]:
    return _Sleepy(), (torch.randn(batch, dim),)


def tiny_mlp(dim: int, batch: int, seq: int | None) -> tuple[nn.Module, tuple[torch.Tensor]]:
    return nn.Sequential(nn.Linear(dim, dim), nn.ReLU()), (torch.randn(batch, dim),)


def plain_names_ln_gelu(dim: int, batch: int, seq: int | None) -> tuple[nn.Module, tuple[torch.Tensor]]:
    """The zoo's linear_ln_gelu with Inductor's descriptive kernel names off (`cpp_fused_0`) in this worker
    process from now on: give it a worker of its own."""
    import torch._inductor.config

    from fusionviz.measure.zoo import LinearLayerNormGelu

    torch._inductor.config.cpp.descriptive_names = False  # type: ignore[assignment]
    torch._inductor.config.triton.descriptive_names = False  # type: ignore[assignment]
    return LinearLayerNormGelu(dim), (torch.randn(batch, dim),)


class _ScalarScale(nn.Module):
    """`.item()` feeds arithmetic, not control flow: Dynamo breaks the graph there unless it may capture the
    scalar (`capture_scalar_outputs`), when the whole forward is one graph."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.linear = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.linear(x))
        return h / (h.abs().max().item() + 1.0)


def scalar_scale(dim: int, batch: int, seq: int | None) -> tuple[nn.Module, tuple[torch.Tensor]]:
    return _ScalarScale(dim), (torch.randn(batch, dim),)
