"""Any model by name, for the worker: the zoo's, a real architecture's (`hf:gpt2`, `timm:resnet50`…), or a user's
own `package.module:factory`, which is imported and run (the app offers that only behind an operator's flag)."""

from __future__ import annotations

import importlib

from fusionviz.errors import ConfigError
from fusionviz.measure.catalog import REAL_MODELS, is_own_model, model_problem
from fusionviz.measure.real_models import real_spec
from fusionviz.measure.zoo import MODELS, Inputs, ModelSpec
from fusionviz.records.config import RunConfig


def get_spec(name: str, layers: int | None = None) -> ModelSpec:
    """The spec of `name`: a zoo model, a real model at `layers` blocks (None: its default), or a user's
    `package.module:factory`. A catalogue name never falls through to an import of user code."""
    if name in MODELS:
        return MODELS[name]
    if name in REAL_MODELS:
        return real_spec(name, layers)
    if is_own_model(name):
        return _user_spec(name)
    raise ConfigError(f"unknown model {name!r}: choose one of {', '.join([*MODELS, *REAL_MODELS])} or give "
                      "package.module:factory")


def spec_for(config: RunConfig) -> ModelSpec:
    """The spec of a configuration's model, after the checks the caller made (`catalog.model_problem`) once more
    here: a worker may run on another machine (a Ray node) or be handed a configuration by another caller."""
    problem = model_problem(config)
    if problem:
        raise ConfigError(problem)
    return get_spec(config.model, config.layers)


def _user_spec(path: str) -> ModelSpec:
    module_name, _, attr = path.partition(":")
    try:
        factory = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"cannot load {path!r}: {exc}; give an importable package.module:factory") from exc

    def inputs(batch: int, dim: int, seq: int | None) -> Inputs:
        made = factory(dim, batch, seq)[1]
        return tuple(made) if isinstance(made, (tuple, list)) else (made,)

    # The factory makes module and inputs together; the module does not depend on the batch.
    return ModelSpec(name=path, build=lambda dim, seq: factory(dim, 1, seq)[0], inputs=inputs)
