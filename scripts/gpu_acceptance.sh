#!/usr/bin/env bash
# Issue 8's check on a GPU machine: separate CLI runs of mlp fp32 and linear_ln_gelu bf16 (dim 512, batch 256,
# all five modes, default timing: 3 processes x 10 rounds), each followed by one process of the independent
# CUDA-event script (benchmarks/check_latency.py), pinned to the same core fusionviz pins its timing to.
# Usage, from the repo root: OUT=/some/dir RUNS="1 2 3" bash scripts/gpu_acceptance.sh
# Then: python3 benchmarks/acceptance_table.py $OUT/acc
set -uo pipefail
export PYTHONUNBUFFERED=1
modes=eager,default,reduce-overhead,max-autotune,max-autotune-no-cudagraphs
core=$(( $(nproc) - 1 ))
mkdir -p "$OUT/acc"
for i in ${RUNS:-1 2 3}; do
  for cfg in "mlp float32" "linear_ln_gelu bfloat16"; do
    set -- $cfg
    python3 -m fusionviz run --model "$1" --dim 512 --batch 256 --dtype "$2" --device cuda:0 --modes "$modes" --naive-calls 200 \
      --out "$OUT/acc/run${i}_$1_$2.json.gz" 2>&1 | grep -v "^\[" | tee -a "$OUT/acc/log.txt"
    taskset -c "$core" python3 benchmarks/check_latency.py --model "$1" --dim 512 --batch 256 --dtype "$2" \
      --modes "$modes" 2>/dev/null | sed "s/}\$/, \"process\": $i}/" | tee -a "$OUT/acc/check.jsonl"
  done
done
