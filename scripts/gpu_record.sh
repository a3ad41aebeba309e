#!/usr/bin/env bash
# Records the GPU sessions shipped in sessions/ and checks them against benchmarks/check_latency.py.
# Run on the GPU machine from the repo root: OUT=/some/dir bash scripts/gpu_record.sh [models] [dtypes]
set -uo pipefail
export PYTHONUNBUFFERED=1
models=${1:-"mlp linear_ln_gelu"}
dtypes=${2:-"float32 bfloat16"}
modes=eager,default,reduce-overhead,max-autotune,max-autotune-no-cudagraphs
mkdir -p "$OUT/s"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee -a "$OUT/log.txt"
python3 -c "import torch, triton; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__)" | tee -a "$OUT/log.txt"
# Smoke test first: stop early if the GPU path is broken.
python3 -m fusionviz run --model linear_ln_gelu --dim 512 --batch 256 --device cuda:0 --modes eager,default \
  --repeats 3 --out /tmp/smoke.json.gz 2>&1 | tail -8 | tee -a "$OUT/log.txt" || exit 1
for dtype in $dtypes; do
  for model in $models; do
    python3 -m fusionviz run --model "$model" --dim 512 --batch 256 --dtype "$dtype" --device cuda:0 \
      --modes "$modes" --out "$OUT/s/h200_${model}_${dtype}.json.gz" 2>&1 | grep -v "^\[" | tee -a "$OUT/log.txt"
    python3 benchmarks/check_latency.py --model "$model" --dim 512 --batch 256 --dtype "$dtype" --modes "$modes" \
      2>/dev/null | tee -a "$OUT/check.jsonl"
  done
done
