"""The lab's table of contents: every model it offers by name, what each demonstrates, and its size settings.

Kept apart from `zoo` and `real_models` (which build the models) so that the app and the CLI can list and check
models without importing torch. Two kinds of entries:

- the zoo (`CATALOG`): small models written here, each showing one thing about fusion;
- real architectures (`REAL_MODELS`), built in the worker from a library's own config classes with random
  weights (no download, no user code, so open to every visitor): transformers' GPT-2, BERT, a Llama-style
  decoder and ViT (`hf:`), timm's ResNet-50 and ConvNeXt-T (`timm:`), torchvision's ResNet-18 (`tv:`). One is
  offered only where its library is installed (`available_models`), found with `importlib.util.find_spec`,
  which reads the import system's metadata and imports nothing.

A configuration's sizes mean, per model, what `ModelInfo` says: `dim` the width (hidden size, a stage's
channels), `seq` the sequence length or image side, `layers` the depth (blocks); a setting a model has no knob
for is None in its entry and ignored (dim, seq) or refused (layers) by `model_problem`.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, replace

from fusionviz.errors import ConfigError
from fusionviz.records.config import RunConfig, validate

SEQUENCE = "sequence length"
IMAGE_SIDE = "image side"
MODELS_REQUIREMENTS = "requirements-models.txt"


@dataclass(frozen=True)
class ModelInfo:
    """A model the lab offers by name.

    `seq_label` names the third size setting (SEQUENCE or IMAGE_SIDE), None where there is none; `dim_label`
    what `dim` sets (None: the model's widths are its own and `dim` is ignored); `layers_label` what `layers`
    sets (None: the depth is fixed and `layers` is refused). The defaults are the sizes of the published model
    the entry is named after, where it has them. A real model names the `library` it is built with (the import
    name) and the constraints of its config: `head_width` (the width of one attention head: `dim` must be a
    multiple of it), `patch` (a ViT's patch side: the image side must be a multiple of it), `min_seq` (the
    smallest image side its downsampling takes)."""

    name: str
    purpose: str
    seq_label: str | None = None
    default_seq: int | None = None
    dim_label: str | None = "hidden size"
    default_dim: int | None = None
    default_batch: int | None = None
    layers_label: str | None = None
    default_layers: int | None = None
    library: str | None = None
    head_width: int | None = None
    patch: int | None = None
    min_seq: int = 1

    @property
    def real(self) -> bool:
        """A library's architecture (built from its config), not a model of the zoo."""
        return self.library is not None


CATALOG: dict[str, ModelInfo] = {
    info.name: info
    for info in (
        ModelInfo("mlp", "Linear-ReLU-Linear-ReLU-Linear: small GEMMs, host-bound at small sizes; fusion has little "
                  "to merge"),
        ModelInfo("linear_ln_gelu", "GELU(LayerNorm(X·W + b)): LayerNorm and GELU fuse into one kernel"),
        ModelInfo("pointwise_chain", "a dozen elementwise ops: bandwidth-bound, where fusion shines most"),
        ModelInfo("transformer_block", "pre-norm attention (SDPA) + MLP with residuals: fusion around GEMMs",
                  seq_label=SEQUENCE, default_seq=128),
        ModelInfo("conv_block", "Conv2d-BatchNorm-ReLU (inference): BatchNorm and ReLU fold into one pass",
                  seq_label=IMAGE_SIDE, default_seq=28, dim_label="channels"),
        ModelInfo("branching", "one intermediate feeds a row-wise and a column-wise reduction: it must round-trip"),
        ModelInfo("argmax_gather", "argmax picks table rows: data-dependent indexing inside a fused kernel"),
        ModelInfo("graph_break", "`.item()` feeds a Python `if`: the graph breaks in two, eager code between"),
        ModelInfo("custom_op", "an opaque torch.library custom op splits the fusion around it"),
    )
}



def _transformer(name: str, purpose: str, dim: int, layers: int, seq: int, *, seq_label: str = SEQUENCE,
                 patch: int | None = None, min_seq: int = 1) -> ModelInfo:
    """A transformers model: width in heads of 64 (as GPT-2, BERT-base, ViT-B and SmolLM have), depth in
    blocks, a sequence (or a ViT's image side); batch 8 by default."""
    return ModelInfo(name, purpose, seq_label=seq_label, default_seq=seq, dim_label="hidden size", default_dim=dim,
                     default_batch=8, layers_label="transformer blocks", default_layers=layers,
                     library="transformers", head_width=64, patch=patch, min_seq=min_seq)


def _image_model(name: str, purpose: str, library: str, *, dim_label: str | None = None, dim: int = 64) -> ModelInfo:
    """A convolutional network of timm or torchvision: images of side 224 by default (32 at least: five halvings
    of the side leave one pixel), batch 8, its depth fixed by its name. Where `dim` sets nothing (`dim_label`
    None: a ResNet's widths are its own), its default is the first stage's width, 64 channels, which a session
    records, and any other dim is refused."""
    return ModelInfo(name, purpose, seq_label=IMAGE_SIDE, default_seq=224, dim_label=dim_label, default_dim=dim,
                     default_batch=8, library=library, min_seq=32)


REAL_MODELS: dict[str, ModelInfo] = {
    info.name: info
    for info in (
        _transformer("hf:gpt2", "transformers' GPT-2 (GPT-2 small by default): GELU MLPs and LayerNorms between "
                     "GEMMs; host-bound at small batches, where CUDA graphs pay more than fusion", 768, 12, 256),
        _transformer("hf:bert", "transformers' BERT encoder (BERT-base by default): the embeddings' sum and "
                     "LayerNorm, bidirectional attention, GELU MLPs: what fuses around an encoder's GEMMs",
                     768, 12, 128),
        _transformer("hf:llama", "transformers' Llama decoder in SmolLM-135M's shape: RMSNorm, rotary "
                     "embeddings, SwiGLU MLPs and grouped-query attention (a third of the heads for keys and "
                     "values), where the norms, rotations and gates fuse", 576, 30, 256),
        _transformer("hf:vit", "transformers' ViT (ViT-B/16 by default): a patch-embedding convolution, then a "
                     "pre-norm encoder over the patches", 768, 12, 224, seq_label=IMAGE_SIDE, patch=16,
                     min_seq=16),
        _image_model("timm:resnet50", "timm's ResNet-50: convolutions from the library with BatchNorm and ReLU "
                     "between them, which fuse into one pass at inference; its widths and 16 bottleneck blocks are "
                     "its own", "timm"),
        _image_model("timm:convnext_tiny", "timm's ConvNeXt-T: depthwise 7×7 convolutions, channel LayerNorms "
                     "and GELU MLPs, much for fusion to merge between the library's convolutions", "timm",
                     dim_label="first stage's channels (each later stage doubles them)", dim=96),
        _image_model("tv:resnet18", "torchvision's ResNet-18: eight basic blocks of two 3×3 convolutions, "
                     "BatchNorm and ReLU; launch-bound at small images and batches", "torchvision"),
    )
}
REAL_PREFIXES: tuple[str, ...] = tuple(dict.fromkeys(name.split(":")[0] + ":" for name in REAL_MODELS))
# What a library's absence means for the user, beyond "install it": on a machine without a GPU, PyPI's
# torchvision needs a torch of its own build (and timm needs torchvision).
_INSTALL_NOTES = {"timm": "timm needs torchvision", "torchvision": ""}


def installed(library: str) -> bool:
    """Whether `library` can be imported here, asked of the import system without importing it (transformers
    alone takes seconds to import)."""
    try:
        return importlib.util.find_spec(library) is not None
    except (ImportError, ValueError):
        return False


def available_models() -> dict[str, ModelInfo]:
    """What the lab can run here: the zoo, then each real model whose library is installed."""
    return {**CATALOG, **{name: info for name, info in REAL_MODELS.items() if installed(str(info.library))}}


def model_info(name: str) -> ModelInfo | None:
    """The entry of a model the lab names (zoo or real, installed or not); None for a user's own model."""
    return CATALOG.get(name) or REAL_MODELS.get(name)


def is_own_model(name: str) -> bool:
    """A user's `package.module:factory`, which the worker imports and runs (behind an operator's flag in the
    app): any name with a colon that is not a real model's and has none of their prefixes."""
    return ":" in name and name not in REAL_MODELS and not name.startswith(REAL_PREFIXES)


def missing_library(name: str) -> str | None:
    """Why a real model cannot be built here (its library is not installed), in a line that says how to install
    it; None where it can, or `name` is no real model."""
    info = REAL_MODELS.get(name)
    if info is None or info.library is None or installed(info.library):
        return None
    note = _INSTALL_NOTES.get(info.library)
    if note is not None:
        note = (f" ({note + '; ' if note else ''}on a machine without a GPU install the torchvision built for the "
                "installed torch first, since PyPI's pulls a CUDA torch: see docs/guide.md, Real models)")
    return (f"{name} is built with {info.library}, which is not installed here: `pip install -r "
            f"{MODELS_REQUIREMENTS}` installs it{note or ''}")


def model_problem(config: RunConfig) -> str | None:
    """Why the model's own config would refuse these sizes, said before any work: a width that does not split
    into its attention heads, an image side its patches or its downsampling cannot take, a depth it has no knob
    for, or a library that is not installed. None where nothing is wrong (and for a user's own model, whose
    factory decides)."""
    name = config.model
    if name.startswith(REAL_PREFIXES) and name not in REAL_MODELS:
        return f"unknown real model {name!r}: choose one of {', '.join(REAL_MODELS)}"
    info = model_info(name)
    if info is None:
        return None
    if config.layers is not None and info.layers_label is None:
        depth = "its depth is fixed by its name" if info.real else "the zoo's models have a fixed depth"
        return f"{name} has no layers setting ({depth}): leave layers out"
    if info.dim_label is None and info.default_dim is not None and config.dim != info.default_dim:
        return (f"{name} has no width setting (its widths are its own, {info.default_dim} channels in its first "
                f"stage): leave dim out, or give {info.default_dim}")
    if info.head_width and config.dim % info.head_width:
        width = info.head_width
        near = sorted({max(width, config.dim // width * width), (config.dim // width + 1) * width})
        return (f"{name} splits its hidden size into attention heads of {width} (as its published sizes do), and "
                f"dim {config.dim} is not a multiple of {width}: choose {' or '.join(map(str, near))}")
    seq = config.seq if config.seq is not None else info.default_seq
    if seq is not None and info.seq_label is not None:
        if seq < info.min_seq:
            return f"{name} needs an {info.seq_label} of at least {info.min_seq}, not {seq}"
        if info.patch and seq % info.patch:
            return (f"{name} cuts images into patches of {info.patch} × {info.patch}: the {info.seq_label} {seq} "
                    f"is not a multiple of {info.patch}")
    return missing_library(name)


def knobs(name: str, dim: int, seq: int | None, layers: int | None) -> dict[str, int]:
    """The lab's sizes as a real transformers model's own config knobs: hidden size, blocks, attention heads of
    `head_width` (64: GPT-2 small's 768 = 12 × 64, BERT-base's, ViT-B's, SmolLM's 576 = 9 × 64), the MLP's
    width (4 × hidden; a Llama's SwiGLU 8/3 × hidden rounded up to a multiple of 256, Meta's rule, which gives
    Llama-2's 11008 for 4096 and SmolLM's 1536 for 576), a Llama's key/value heads (the largest divisor of the
    heads not above a third of them: SmolLM's 9 → 3, Llama 3's 32 → 8; one for three heads or fewer), the
    position table (the library's default length, or the sequence where longer), and the tokens one input
    holds (a ViT's patches and its class token). {} for a model that is not a real transformer. Torch-free,
    so the app can say what a configuration builds; the worker builds from it."""
    info = REAL_MODELS.get(name)
    if info is None or info.head_width is None:
        return {}
    seq = seq if seq is not None else int(info.default_seq or 1)
    heads = max(1, dim // info.head_width)
    sizes = {"hidden": dim, "layers": layers if layers is not None else int(info.default_layers or 1),
             "heads": heads, "mlp": 4 * dim}
    if name == "hf:llama":
        sizes["kv_heads"] = max(d for d in range(1, heads + 1) if heads % d == 0 and d <= max(1, heads // 3))
        sizes["mlp"] = 256 * -(-(8 * dim // 3) // 256)
    if info.patch:
        sizes["patch"] = info.patch
        sizes["tokens"] = (seq // info.patch) ** 2 + 1
    else:
        sizes["positions"] = max(_DEFAULT_POSITIONS.get(name, seq), seq)
        sizes["tokens"] = seq
    return sizes


# The position tables of the libraries' default configs (GPT2Config's n_positions, BertConfig's and
# LlamaConfig's max_position_embeddings), kept unless a longer sequence is asked for.
_DEFAULT_POSITIONS = {"hf:gpt2": 1024, "hf:bert": 512, "hf:llama": 2048}


def validated(config: RunConfig) -> RunConfig:
    """`records.config.validate` with every model the lab knows, a real model's default sizes filled in
    (`with_defaults`), then the model's own constraints (`model_problem`): what the caller's process checks before
    it starts a worker. Raises ConfigError."""
    config = validate(with_defaults(config), known_models=set(CATALOG) | set(REAL_MODELS))
    problem = model_problem(config)
    if problem:
        raise ConfigError(problem)
    return config


def with_defaults(config: RunConfig) -> RunConfig:
    """`config` with a real model's default sequence length (or image side) and depth where none is given, so
    that the session records the sizes that ran; the zoo's models keep theirs as given (None: their inputs'
    own default)."""
    info = REAL_MODELS.get(config.model)
    if info is None:
        return config
    return replace(config, seq=config.seq if config.seq is not None else info.default_seq,
                   layers=config.layers if config.layers is not None else info.default_layers)
