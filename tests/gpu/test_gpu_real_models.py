"""On the GPU machine: real models by name (skipped without CUDA, and a model without its library). Each mode's
kernels per profiled step equal a plain JSON count of the same trace, and the module table adds up to the trace's
kernel µs per step, with the library's own module names (`scripts/check_real_models.py` does both).

    FUSIONVIZ_GPU_TESTS=1 python3 -m pytest -q tests/gpu/test_gpu_real_models.py
"""

from __future__ import annotations

import pytest

from fusionviz.analysis.modules import COPIES, module_table
from fusionviz.measure.catalog import REAL_MODELS, installed
from fusionviz.measure.client import run_session
from fusionviz.measure.worker import Worker
from fusionviz.records.config import RunConfig
from scripts.check_real_models import check_run

pytestmark = pytest.mark.gpu

CONFIGS = {
    "hf:gpt2": RunConfig(model="hf:gpt2", dim=256, layers=2, batch=4, seq=128, dtype="bfloat16", device="cuda:0",
                         modes=("eager", "default", "reduce-overhead"), rounds=3, processes=1),
    "timm:resnet50": RunConfig(model="timm:resnet50", dim=64, batch=4, seq=64, device="cuda:0",
                               modes=("eager", "default", "reduce-overhead"), rounds=3, processes=1),
}


@pytest.mark.parametrize("model", list(CONFIGS))
def test_kernel_counts_and_module_sums_agree_with_the_trace(model: str, worker: Worker) -> None:
    if not installed(str(REAL_MODELS[model].library)):
        pytest.skip(f"{REAL_MODELS[model].library} is not installed")
    session = run_session(CONFIGS[model], worker=worker)
    problems = [p for run in session.runs for p in check_run(session, run, modules=True)[1]]
    assert not problems, problems
    table = module_table(session.runs)
    copies = table[(table["mode"] == "reduce-overhead") & (table.module == COPIES)]
    assert len(copies) == 1  # the CUDA graph's input copy, apart from the model's modules
