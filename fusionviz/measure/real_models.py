"""Real architectures, built in the worker from their libraries' own config classes with random weights: no
download and no user code, so any visitor may run them. What each demonstrates, its sizes and its constraints
are in `catalog.REAL_MODELS` (torch-free); this module turns a name and the lab's sizes into a module and its
inputs, importing transformers, timm or torchvision only when one of their models is built.

Each model keeps its library's own module names (`h.0.attn.c_attn`, `layer3.1.conv2`), so per-module figures
read as the library's documentation does. transformers models are the bare trunks (`GPT2Model`, `BertModel`
without its pooler, `LlamaModel`, `ViTModel` without its pooler): the hidden states of the last block are their
first output, which a train pass sums into its loss. Key/value caches are off (`use_cache=False`): one forward
of a whole sequence, as training and prefill run. Attention is the library's default path, SDPA.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from fusionviz.errors import ConfigError
from fusionviz.measure.catalog import REAL_MODELS, knobs, missing_library
from fusionviz.measure.zoo import Inputs, ModelSpec

Builder = Callable[[int, int, int | None], nn.Module]  # (dim, seq, layers) → the module


def _hf_config(name: str, dim: int, seq: int, layers: int | None) -> Any:
    """The transformers config of `name` at these sizes (`catalog.knobs` maps them)."""
    import transformers

    k = knobs(name, dim, seq, layers)
    common: dict[str, Any] = {"num_hidden_layers": k["layers"], "num_attention_heads": k["heads"], "hidden_size": dim,
              "intermediate_size": k["mlp"]}
    if name == "hf:gpt2":
        return transformers.GPT2Config(n_embd=dim, n_layer=k["layers"], n_head=k["heads"], n_inner=k["mlp"],
                                       n_positions=k["positions"], use_cache=False)
    if name == "hf:bert":
        return transformers.BertConfig(max_position_embeddings=k["positions"], **common)
    if name == "hf:llama":
        return transformers.LlamaConfig(num_key_value_heads=k["kv_heads"], max_position_embeddings=k["positions"],
                                        use_cache=False, **common)
    return transformers.ViTConfig(image_size=seq, patch_size=k["patch"], **common)


def _transformers(name: str) -> Builder:
    def build(dim: int, seq: int, layers: int | None) -> nn.Module:
        import transformers

        config = _checked(name, lambda: _hf_config(name, dim, seq, layers))
        if name == "hf:gpt2":
            return transformers.GPT2Model(config)
        if name == "hf:llama":
            return transformers.LlamaModel(config)
        trunk = transformers.BertModel if name == "hf:bert" else transformers.ViTModel
        return trunk(config, add_pooling_layer=False)
    return build


def _timm(model: str) -> Builder:
    def build(dim: int, seq: int, layers: int | None) -> nn.Module:
        import timm

        widths = {"dims": (dim, 2 * dim, 4 * dim, 8 * dim)} if model.startswith("convnext") else {}
        return _checked(f"timm:{model}", lambda: timm.create_model(model, pretrained=False, **widths))
    return build


def _torchvision(model: str) -> Builder:
    def build(dim: int, seq: int, layers: int | None) -> nn.Module:
        import torchvision

        return _checked(f"tv:{model}", lambda: getattr(torchvision.models, model)(weights=None))
    return build


def _checked(name: str, make: Callable[[], Any]) -> Any:
    """`make()`, with a config's refusal of its sizes (transformers and timm raise ValueError or AssertionError)
    as a ConfigError that names the model."""
    try:
        return make()
    except (ValueError, AssertionError) as exc:
        raise ConfigError(f"{name} refuses these sizes: {exc}") from None


BUILDERS: dict[str, Builder] = {
    "hf:gpt2": _transformers("hf:gpt2"),
    "hf:bert": _transformers("hf:bert"),
    "hf:llama": _transformers("hf:llama"),
    "hf:vit": _transformers("hf:vit"),
    "timm:resnet50": _timm("resnet50"),
    "timm:convnext_tiny": _timm("convnext_tiny"),
    "tv:resnet18": _torchvision("resnet18"),
}
assert BUILDERS.keys() == REAL_MODELS.keys(), "the real models' builders and their catalogue disagree"


def _vocabulary(name: str) -> int:
    """The token vocabulary of the library's default config (GPT-2's 50257, BERT's 30522, Llama's 32000): the
    ids a text model's inputs are drawn from."""
    import transformers

    config = {"hf:gpt2": transformers.GPT2Config, "hf:bert": transformers.BertConfig,
              "hf:llama": transformers.LlamaConfig}[name]()
    return int(config.vocab_size)


def _activations(name: str, layers: int | None) -> Callable[[int, int, int | None], int]:
    """Rough elements of the activations one training pass keeps, for `harness.check_fits` to refuse sizes that
    cannot fit before building them: per transformer block about 10 hidden-wide and 2 MLP-wide tensors per
    token and the attention scores (batch × heads × tokens², which the CPU's SDPA materialises); for a
    convolutional network the outputs of its leaf modules, counted by running it on the meta device."""
    info = REAL_MODELS[name]

    def transformer(batch: int, dim: int, seq: int | None) -> int:
        k = knobs(name, dim, seq, layers)
        tokens = k["tokens"]
        return k["layers"] * (batch * tokens * (10 * dim + 2 * k["mlp"]) + 2 * batch * k["heads"] * tokens ** 2)

    def convolutional(batch: int, dim: int, seq: int | None) -> int:
        with torch.device("meta"):
            model = BUILDERS[name](dim, seq or int(info.default_seq or 224), layers)
            images = torch.empty(batch, 3, seq or 224, seq or 224)
        total = 0

        def count(module: nn.Module, args: Any, output: Any) -> None:
            nonlocal total
            total += output.numel() if isinstance(output, torch.Tensor) else 0

        hooks = [m.register_forward_hook(count) for m in model.modules() if not any(m.children())]
        try:
            with torch.no_grad():
                model(images)
        finally:
            for hook in hooks:
                hook.remove()
        return total

    return transformer if info.head_width else convolutional


def real_spec(name: str, layers: int | None) -> ModelSpec:
    """The spec of the real model `name` at `layers` blocks (None: its default). Raises ConfigError where its
    library is not installed in this process (a Ray node may lack what the caller has)."""
    problem = missing_library(name)
    if problem:
        raise ConfigError(problem)
    info = REAL_MODELS[name]
    default_seq = int(info.default_seq or 1)
    build = BUILDERS[name]
    if info.patch or info.head_width is None:  # images: a ViT's or a convolutional network's
        def inputs(batch: int, dim: int, seq: int | None) -> Inputs:
            side = seq or default_seq
            return (torch.randn(batch, 3, side, side),)
    else:
        vocabulary = _vocabulary(name)

        def inputs(batch: int, dim: int, seq: int | None) -> Inputs:
            return (torch.randint(0, vocabulary, (batch, seq or default_seq)),)

    return ModelSpec(name=name, build=lambda dim, seq: build(dim, seq or default_seq, layers), inputs=inputs,
                     activation_elements=_activations(name, layers))

