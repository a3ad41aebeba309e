"""The model zoo: small models that each demonstrate one thing about fusion, and their inputs.

Every model is built from the size settings (dim, seq) and fed inputs made from (batch, dim, seq), so a
configuration names a model and its sizes, never a tensor. Real architectures are in `real_models`, a user's own
model (`package.module:factory`) is loaded by `specs`, which finds any of them by name.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from fusionviz.measure.catalog import CATALOG

Inputs = tuple[Tensor, ...]


@dataclass(frozen=True)
class ModelSpec:
    """How to build a model and its inputs; what it demonstrates lives in `catalog.CATALOG`."""

    name: str
    build: Callable[[int, int | None], nn.Module]
    inputs: Callable[[int, int, int | None], Inputs]
    # Rough live activation elements of one forward, to refuse configurations that cannot fit.
    activation_elements: Callable[[int, int, int | None], int] = lambda b, d, s: 8 * b * d


class MLP(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, dim)
        )

    def forward(self, x: Tensor) -> Tensor:
        return self.net(x)


class LinearLayerNormGelu(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.linear = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: Tensor) -> Tensor:
        return F.gelu(self.norm(self.linear(x)))


class PointwiseChain(nn.Module):
    """Twelve elementwise ops in a row: eager reads and writes the whole tensor twelve times."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.scale = nn.Parameter(torch.linspace(0.5, 1.5, dim))
        self.shift = nn.Parameter(torch.linspace(-0.1, 0.1, dim))

    def forward(self, x: Tensor) -> Tensor:
        y = x * self.scale + self.shift
        y = 0.5 * y * (1.0 + torch.tanh(0.7978845608 * (y + 0.044715 * y * y * y)))  # tanh-GELU by hand
        y = torch.sigmoid(y) * y
        y = torch.clamp(y, -3.0, 3.0)
        return torch.exp(-y * y) + y


class TransformerBlock(nn.Module):
    """Pre-norm attention (scaled_dot_product_attention) and MLP, each with a residual."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.heads = max(1, dim // 64)
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x: Tensor) -> Tensor:
        b, s, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        attn = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(attn.transpose(1, 2).reshape(b, s, d))
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class ConvBlock(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size=3, padding=1)
        self.bn = nn.BatchNorm2d(channels)

    def forward(self, x: Tensor) -> Tensor:
        return F.relu(self.bn(self.conv(x)))


class Branching(nn.Module):
    """One intermediate feeds a row-wise and a column-wise reduction, so it must go through memory."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.inp = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x: Tensor) -> Tensor:
        h = F.gelu(self.inp(x))
        rows = torch.softmax(h, dim=-1)
        cols = h.mean(dim=0, keepdim=True)
        return self.out(rows * cols + h)


class ArgmaxGather(nn.Module):
    """The argmax of one layer picks rows of a table: the next op's addresses depend on the data."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.score = nn.Linear(dim, dim)
        self.table = nn.Parameter(torch.randn(dim, dim) / math.sqrt(dim))

    def forward(self, x: Tensor) -> Tensor:
        idx = self.score(x).argmax(dim=-1)
        return torch.relu(self.table[idx] * x + x)


class GraphBreak(nn.Module):
    """`.item()` feeds a Python `if`: Dynamo must stop the graph, run Python, and start another."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.first = nn.Linear(dim, dim)
        self.second = nn.Linear(dim, dim)

    def forward(self, x: Tensor) -> Tensor:
        h = F.gelu(self.first(x))
        if h.mean().item() > 0:  # graph break: a tensor's value decides Python control flow
            h = h * 2.0
        else:
            h = h * 0.5
        return torch.relu(self.second(h) + 1.0)


@torch.library.custom_op("fusionviz::opaque_swish", mutates_args=())
def opaque_swish(x: Tensor) -> Tensor:
    """A custom op: the compiler sees a black box and cannot fuse across it."""
    return x * torch.sigmoid(x)


@opaque_swish.register_fake
def _(x: Tensor) -> Tensor:
    return torch.empty_like(x)


class CustomOp(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.linear = nn.Linear(dim, dim)

    def forward(self, x: Tensor) -> Tensor:
        h = torch.tanh(self.linear(x)) * 1.5
        h = opaque_swish(h)
        return torch.sigmoid(h) + h


def _sized(cls: Callable[[int], nn.Module]) -> Callable[[int, int | None], nn.Module]:
    """Zoo models take only `dim`; the sequence length shapes their inputs, not their weights."""
    return lambda dim, seq: cls(dim)


def _flat(batch: int, dim: int, seq: int | None) -> Inputs:
    return (torch.randn(batch, dim),)


def _sequence(batch: int, dim: int, seq: int | None) -> Inputs:
    return (torch.randn(batch, seq or 128, dim),)


def _image(batch: int, dim: int, seq: int | None) -> Inputs:
    side = seq or 28
    return (torch.randn(batch, dim, side, side),)


def _flat_acts(factor: int) -> Callable[[int, int, int | None], int]:
    return lambda batch, dim, seq: factor * batch * dim


MODELS: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        ModelSpec("mlp", _sized(MLP), _flat, _flat_acts(6)),
        ModelSpec("linear_ln_gelu", _sized(LinearLayerNormGelu), _flat, _flat_acts(5)),
        ModelSpec("pointwise_chain", _sized(PointwiseChain), _flat, _flat_acts(16)),
        ModelSpec("transformer_block", _sized(TransformerBlock), _sequence,
                  lambda b, d, s: b * (s or 128) * d * 16 + b * max(1, d // 64) * (s or 128) ** 2),
        ModelSpec("conv_block", _sized(ConvBlock), _image, lambda b, d, s: 5 * b * d * (s or 28) ** 2),
        ModelSpec("branching", _sized(Branching), _flat, _flat_acts(8)),
        ModelSpec("argmax_gather", _sized(ArgmaxGather), _flat, _flat_acts(6)),
        ModelSpec("graph_break", _sized(GraphBreak), _flat, _flat_acts(6)),
        ModelSpec("custom_op", _sized(CustomOp), _flat, _flat_acts(6)),
    )
}
assert MODELS.keys() == CATALOG.keys(), "zoo and catalogue disagree"
