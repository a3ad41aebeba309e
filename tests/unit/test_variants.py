"""Variants (`MODE+OPTION[=VALUE]`): parsing, refusal, naming, ordering, and what they say about CUDA graphs."""

from __future__ import annotations

import pytest

from fusionviz.errors import ConfigError
from fusionviz.records.config import RunConfig, not_applicable_reason, parse_modes, validate, warnings_for
from fusionviz.records.variants import (
    OPTIONS,
    Variant,
    autotunes,
    base_mode,
    check_mode,
    is_compiled,
    mode_order,
    parse_variant,
    replays_graphs,
    uses_cuda_graphs,
)


def test_a_bare_option_is_true_and_each_kind_lands_where_it_is_applied() -> None:
    variant = parse_variant("max-autotune-no-cudagraphs+mark_dynamic=1+capture_scalar_outputs+freezing"
                            "+fullgraph=false+dynamic=TRUE")
    assert variant == Variant("max-autotune-no-cudagraphs", (
        ("freezing", True), ("capture_scalar_outputs", True), ("fullgraph", False), ("dynamic", True),
        ("mark_dynamic", 1)))  # in the table's order
    assert variant.inductor_options == {"freezing": True}
    assert variant.dynamo_options == {"capture_scalar_outputs": True}
    assert variant.compile_kwargs == {"fullgraph": False, "dynamic": True}
    assert variant.mark_dynamic == 1
    assert variant.name == ("max-autotune-no-cudagraphs+freezing+capture_scalar_outputs+fullgraph=false+dynamic"
                            "+mark_dynamic=1")
    assert variant.settings == {"torch._inductor.config.freezing": "True",
                                "torch._dynamo.config.capture_scalar_outputs": "True",
                                "torch.compile(fullgraph)": "False", "torch.compile(dynamic)": "True",
                                "torch._dynamo.mark_dynamic(inputs[0])": "1"}
    assert parse_variant("default+triton.cudagraphs").inductor_options == {"triton.cudagraphs": True}
    assert parse_variant("default") == Variant("default", ())


@pytest.mark.parametrize(("mode", "says"), [
    ("eager+freezing", "eager compiles nothing"),
    ("eager_cuda_graph+fullgraph", "eager_cuda_graph compiles nothing"),
    ("fast+freezing", "unknown mode 'fast'"),
    ("default+freezin", "unknown option 'freezin': choose from freezing, epilogue_fusion"),
    ("default+freezing=2", "freezing is true or false, not '2'"),
    ("default+mark_dynamic", "mark_dynamic takes a dimension of the first input"),
    ("default+mark_dynamic=x", "mark_dynamic takes a dimension"),
    ("default+fullgraph+fullgraph=false", "fullgraph is given twice"),
    ("default+disable", "disable takes a submodule's name in the model, as disable=h.0.attn"),
    ("default+disable=h.0..attn", "disable takes a submodule's name"),
    ("default+disable=h[0]", "disable takes a submodule's name"),
])
def test_refused_variants_say_what_is_known(mode: str, says: str) -> None:
    with pytest.raises(ConfigError, match=says.replace("(", r"\(")):
        check_mode(mode)


def test_a_submodule_left_to_eager_keeps_its_name_as_written() -> None:
    variant = parse_variant("default+disable=Blocks.0.attn")
    assert variant.disabled == "Blocks.0.attn" and variant.name == "default+disable=Blocks.0.attn"
    assert variant.settings == {"torch.compiler.disable(model.Blocks.0.attn.forward)": "True"}
    assert parse_variant("default").disabled is None


def test_every_option_is_listed_when_one_is_unknown() -> None:
    with pytest.raises(ConfigError) as refused:
        parse_variant("default+nope")
    assert all(name in str(refused.value) for name in OPTIONS)


def test_a_plain_mode_is_its_own_name_and_a_variant_is_named_one_way() -> None:
    assert check_mode("reduce-overhead") == "reduce-overhead"
    assert check_mode("default + fullgraph=true + freezing") == "default+freezing+fullgraph"
    assert check_mode("default+freezing=false") == "default+freezing=false"
    with pytest.raises(ConfigError, match=r"unknown mode 'fast'.*or a variant: MODE\+OPTION"):
        check_mode("fast")


def test_base_and_what_a_mode_does() -> None:
    assert base_mode("reduce-overhead+fullgraph") == "reduce-overhead" and base_mode("eager") == "eager"
    assert is_compiled("default+freezing") and is_compiled("max-autotune") and not is_compiled("eager")
    assert not is_compiled("eager_cuda_graph")
    assert uses_cuda_graphs("reduce-overhead+fullgraph") and uses_cuda_graphs("max-autotune")
    assert uses_cuda_graphs("default+triton.cudagraphs")
    assert not uses_cuda_graphs("reduce-overhead+triton.cudagraphs=false")
    assert not uses_cuda_graphs("default+freezing") and not uses_cuda_graphs("eager_cuda_graph")
    assert replays_graphs("eager_cuda_graph") and replays_graphs("default+triton.cudagraphs")
    assert autotunes("default+max_autotune_gemm") and autotunes("max-autotune-no-cudagraphs+freezing")
    assert not autotunes("default+max_autotune_gemm=false") and not autotunes("default")


def test_validate_keeps_eager_first_known_modes_in_order_and_variants_after_their_base() -> None:
    config = validate(RunConfig(modes=("reduce-overhead+fullgraph", "default+freezing", "max-autotune",
                                       "default", "default+capture_scalar_outputs", "default+freezing=true"),
                                device="cuda"))
    assert config.modes == ("eager", "default", "default+freezing", "default+capture_scalar_outputs",
                            "reduce-overhead+fullgraph", "max-autotune")
    assert mode_order(["default+fullgraph", "eager"]) == ("eager", "default+fullgraph")  # no base: after its place


def test_validate_and_parse_modes_refuse_a_bad_variant() -> None:
    with pytest.raises(ConfigError, match="unknown option 'nope'"):
        validate(RunConfig(modes=("eager", "default+nope")))
    with pytest.raises(ConfigError, match="eager compiles nothing"):
        parse_modes("eager,eager+freezing")
    assert parse_modes("eager, default+mark_dynamic=0") == ("eager", "default+mark_dynamic=0")


def test_a_variant_that_replays_cuda_graphs_does_not_run_on_the_cpu() -> None:
    cpu = RunConfig(device="cpu")
    assert "do not exist on the CPU" in (not_applicable_reason(cpu, "default+triton.cudagraphs") or "")
    assert "do not exist on the CPU" in (not_applicable_reason(cpu, "reduce-overhead+fullgraph") or "")
    assert not_applicable_reason(cpu, "default+freezing") is None
    assert not_applicable_reason(RunConfig(device="cuda"), "default+triton.cudagraphs") is None


def test_an_autotuning_variant_is_warned_about() -> None:
    assert any("GEMM choices" in n for n in warnings_for(RunConfig(modes=("eager", "default+max_autotune_gemm"))))
    assert not warnings_for(RunConfig(modes=("eager", "default+freezing")))
