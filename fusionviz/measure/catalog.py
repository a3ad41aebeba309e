"""The zoo's table of contents: names, what each model demonstrates, and its size settings.

Kept apart from `zoo` (which builds the models) so that the app and the CLI can list models without
importing torch.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ModelInfo:
    """`seq_label` names the third size setting (sequence length, image side); None where there is none."""

    name: str
    purpose: str
    seq_label: str | None = None
    default_seq: int | None = None


CATALOG: dict[str, ModelInfo] = {
    info.name: info
    for info in (
        ModelInfo("mlp", "Linear-ReLU-Linear-ReLU-Linear: small GEMMs, host-bound at small sizes; fusion has little to merge"),
        ModelInfo("linear_ln_gelu", "GELU(LayerNorm(X·W + b)): LayerNorm and GELU fuse into one kernel"),
        ModelInfo("pointwise_chain", "a dozen elementwise ops: bandwidth-bound, where fusion shines most"),
        ModelInfo("transformer_block", "pre-norm attention (SDPA) + MLP with residuals: fusion around GEMMs",
                  seq_label="sequence length", default_seq=128),
        ModelInfo("conv_block", "Conv2d-BatchNorm-ReLU (inference): BatchNorm and ReLU fold into one pass",
                  seq_label="image side", default_seq=28),
        ModelInfo("branching", "one intermediate feeds a row-wise and a column-wise reduction: it must round-trip"),
        ModelInfo("argmax_gather", "argmax picks table rows: data-dependent indexing inside a fused kernel"),
        ModelInfo("graph_break", "`.item()` feeds a Python `if`: the graph breaks in two, eager code between"),
        ModelInfo("custom_op", "an opaque torch.library custom op splits the fusion around it"),
    )
}

