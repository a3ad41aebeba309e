"""The real models' catalogue, torch-free: what each name's sizes build, the sizes a config refuses, a library
that is not installed, and a name that never falls through to an import of user code."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from fusionviz.errors import ConfigError
from fusionviz.measure import catalog
from fusionviz.measure.catalog import (
    CATALOG,
    REAL_MODELS,
    available_models,
    installed,
    is_own_model,
    knobs,
    missing_library,
    model_problem,
    validated,
)
from fusionviz.records.config import CONVOLUTIONAL, RunConfig, warnings_for


def config(model: str, **sizes: Any) -> RunConfig:
    return replace(RunConfig(model=model, dim=64, batch=2, modes=("eager", "default")), **sizes)


def test_the_published_sizes_map_onto_each_config_s_knobs() -> None:
    """GPT-2 small, BERT-base and ViT-B/16 are 768 wide in 12 heads of 64; SmolLM-135M's Llama shape is 576 wide in
    9 heads, 3 of them for keys and values, with a SwiGLU of 1536; Llama-2 7B's rule gives 11008 for 4096."""
    assert knobs("hf:gpt2", 768, None, None) == {"hidden": 768, "layers": 12, "heads": 12, "mlp": 3072,
                                                 "positions": 1024, "tokens": 256}
    assert knobs("hf:bert", 768, 128, 2)["positions"] == 512 and knobs("hf:bert", 768, 1000, 2)["positions"] == 1000
    smol = knobs("hf:llama", 576, None, None)
    assert (smol["heads"], smol["kv_heads"], smol["mlp"], smol["layers"]) == (9, 3, 1536, 30)
    assert knobs("hf:llama", 4096, 256, 2)["mlp"] == 11008
    assert knobs("hf:llama", 2048, 256, 2)["kv_heads"] == 8  # Llama 3's 32 heads share 8
    assert knobs("hf:llama", 128, 256, 2)["kv_heads"] == 1  # two heads: one for keys and values
    vit = knobs("hf:vit", 768, 224, None)
    assert (vit["heads"], vit["patch"], vit["tokens"]) == (12, 16, 14 * 14 + 1)  # the patches and the class token
    assert knobs("timm:resnet50", 64, 224, None) == {} and knobs("mlp", 64, None, None) == {}


@pytest.mark.parametrize(("model", "sizes", "said"), [
    ("hf:gpt2", {"dim": 100}, "dim 100 is not a multiple of 64: choose 64 or 128"),
    ("hf:llama", {"dim": 200}, "choose 192 or 256"),
    ("hf:vit", {"seq": 40}, "the image side 40 is not a multiple of 16"),
    ("timm:convnext_tiny", {"seq": 16}, "needs an image side of at least 32, not 16"),
    ("timm:resnet50", {"layers": 4}, "timm:resnet50 has no layers setting (its depth is fixed by its name)"),
    ("mlp", {"layers": 4}, "mlp has no layers setting"),
    ("tv:resnet18", {"dim": 128}, "tv:resnet18 has no width setting (its widths are its own, 64 channels in its "
                                  "first stage): leave dim out, or give 64"),
    ("hf:gpt3", {}, "unknown real model 'hf:gpt3': choose one of hf:gpt2, hf:bert"),
])
def test_sizes_a_config_refuses_are_said_before_any_work(model: str, sizes: dict[str, int], said: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(said)):
        validated(config(model, **sizes))


def test_a_real_model_takes_its_default_sequence_and_depth_and_the_zoo_keeps_its_own() -> None:
    if not installed("transformers"):
        pytest.skip("transformers is not installed: hf:gpt2 is refused (see the test of a missing library)")
    gpt2 = validated(config("hf:gpt2"))
    assert (gpt2.seq, gpt2.layers) == (256, 12)
    assert validated(config("hf:gpt2", seq=32, layers=2)).layers == 2
    zoo = validated(config("transformer_block"))
    assert (zoo.seq, zoo.layers) == (None, None)


def test_a_library_that_is_not_installed_is_named_with_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    absent = replace(REAL_MODELS["timm:resnet50"], name="timm:absent", library="fusionviz_no_such_library")
    monkeypatch.setitem(catalog.REAL_MODELS, "timm:absent", absent)
    assert "timm:absent" not in available_models()
    problem = missing_library("timm:absent")
    assert problem == ("timm:absent is built with fusionviz_no_such_library, which is not installed here: "
                       "`pip install -r requirements-models.txt` installs it")
    with pytest.raises(ConfigError, match="not installed here"):
        validated(config("timm:absent"))
    for name, info in REAL_MODELS.items():  # whatever this machine has: listed exactly when importable
        assert (name in available_models()) == installed(str(info.library)) == (missing_library(name) is None)
    if not installed("torchvision"):
        assert "PyPI's pulls a CUDA torch" in str(missing_library("tv:resnet18"))


def test_catalogue_names_never_run_user_code() -> None:
    assert all(not is_own_model(name) for name in [*REAL_MODELS, "hf:gpt3", "timm:anything", "tv:x"])
    assert is_own_model("tests.models_for_tests:tiny_mlp") and not is_own_model("mlp")
    assert model_problem(config("tests.models_for_tests:tiny_mlp", layers=3)) is None  # its factory decides
    assert set(CATALOG).isdisjoint(REAL_MODELS)


def test_listing_the_models_imports_neither_torch_nor_a_model_library() -> None:
    code = ("import sys; from fusionviz.measure.catalog import available_models; available_models(); "
            "print(sorted(m for m in ('torch', 'transformers', 'timm', 'torchvision') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_cli_refuses_a_width_the_heads_do_not_split_before_starting_a_worker(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from fusionviz.cli import main

    out = f"{tmp_path}/s.json.gz"
    assert main(["run", "--model", "hf:gpt2", "--dim", "100", "--batch", "2", "--device", "cpu", "--out", out]) == 2
    assert "hf:gpt2 splits its hidden size into attention heads of 64" in capsys.readouterr().err
    assert main(["run", "--model", "mlp", "--batch", "2", "--device", "cpu", "--out", out]) == 2
    assert "mlp has no default size: give --dim" in capsys.readouterr().err


def test_max_autotune_of_a_real_convolutional_network_is_warned_of() -> None:
    """Autotuning convolutions took more than 10 minutes for ResNet-18 on the GPU machine: every convolutional
    network of the catalogue is warned of, the transformers' models are not."""
    convolutional = {name for name, info in REAL_MODELS.items() if info.library in ("timm", "torchvision")}
    assert convolutional <= CONVOLUTIONAL
    for name in REAL_MODELS:
        said = " ".join(warnings_for(config(name, modes=("eager", "max-autotune-no-cudagraphs"))))
        assert ("more than 10 minutes" in said) == (name in convolutional), name
