#!/usr/bin/env bash
# Issue 8's check on the CPU: three separate CLI runs each of pointwise_chain and mlp (dim 256, batch 64,
# eager + default) with the default settings. From the repo root: OUT=/some/dir bash scripts/cpu_acceptance.sh
# Then: python benchmarks/acceptance_table.py $OUT/acc
set -uo pipefail
mkdir -p "$OUT/acc"
for i in 1 2 3; do
  for model in pointwise_chain mlp; do
    python -m fusionviz run --model "$model" --dim 256 --batch 64 --dtype float32 --device cpu --modes eager,default \
      --out "$OUT/acc/run${i}_${model}_float32.json.gz" 2>&1 | grep -v "^\[" | tee -a "$OUT/acc/log.txt"
  done
done
