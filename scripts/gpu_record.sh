#!/usr/bin/env bash
# Records the GPU sessions shipped in sessions/ with the project's own CLI, and checks the latencies of
# mlp and linear_ln_gelu against benchmarks/check_latency.py (plain torch, CUDA events), twice, to see
# the reference's own spread. Run on the GPU machine from the repo root: OUT=/some/dir bash scripts/gpu_record.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
modes=eager,default,reduce-overhead,max-autotune,max-autotune-no-cudagraphs
mkdir -p "$OUT/s"
log() { tee -a "$OUT/log.txt"; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | log
python3 -c "import torch, triton; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__)" | log
n=1
for model in mlp linear_ln_gelu; do
  for dtype in float32 bfloat16; do
    python3 -m fusionviz run --model "$model" --dim 512 --batch 256 --dtype "$dtype" --device cuda:0 \
      --modes "$modes" --out "$OUT/s/${n}_h200_${model}_${dtype}.json.gz" 2>&1 | grep -v "^\[" | log
    python3 benchmarks/check_latency.py --model "$model" --dim 512 --batch 256 --dtype "$dtype" --modes "$modes" \
      2>/dev/null | sed 's/}$/, "pass": 1}/' | tee -a "$OUT/check.jsonl"
    n=$((n + 1))
  done
done
for model in mlp linear_ln_gelu; do
  for dtype in float32 bfloat16; do
    python3 benchmarks/check_latency.py --model "$model" --dim 512 --batch 256 --dtype "$dtype" --modes "$modes" \
      2>/dev/null | sed 's/}$/, "pass": 2}/' | tee -a "$OUT/check.jsonl"
  done
done
python3 -m fusionviz run --model pointwise_chain --dim 4096 --batch 4096 --device cuda:0 \
  --modes eager,default,reduce-overhead --out "$OUT/s/5_h200_pointwise_chain_float32.json.gz" 2>&1 | grep -v "^\[" | log
python3 -m fusionviz run --model transformer_block --dim 1024 --batch 8 --seq 512 --dtype bfloat16 --device cuda:0 \
  --modes eager,default,reduce-overhead --out "$OUT/s/6_h200_transformer_block_bfloat16.json.gz" 2>&1 | grep -v "^\[" | log
python3 -m fusionviz run --model graph_break --dim 512 --batch 256 --device cuda:0 \
  --modes eager,default --out "$OUT/s/7_h200_graph_break_float32.json.gz" 2>&1 | grep -v "^\[" | log
python3 -m fusionviz sweep --model transformer_block --dim 512 --batch 8 --over seq --device cuda:0 \
  --sizes 64,128,192,256,320,384,512,64,128,192,256,320,384,512 \
  --out "$OUT/s/8_h200_sweep_transformer_block.json.gz" 2>&1 | grep -v "^\[" | log
tar -C "$OUT/s" -cf "$OUT/sessions.tar" . && rm -r "$OUT/s"
