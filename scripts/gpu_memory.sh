#!/usr/bin/env bash
# Issue 47's Done-when configurations on one GPU: what compiling costs in memory and what CUDA graphs cover.
#   OUT=/some/dir bash scripts/gpu_memory.sh          (from the repo root; torch with CUDA, fusionviz's deps importable)
# Records with `python -m fusionviz run` into $OUT/memory: pointwise_chain 4096 x 4096 fp32 (inference), mlp 512 x 256
# fp32 inference and train, each with eager, default, reduce-overhead and eager as one CUDA graph, in 4 timing
# processes of 5 rounds (each mode's memory measured first in a process of its own), the chain's allocator history
# as PyTorch's memory viewer reads it ($OUT/memory/chain.<mode>.pickle); then prints per mode: peak allocated, peak
# reserved, held, pool, graph pools, the input copies per call with bytes and µs, the capture's skip reasons or "all
# captured", a train pass's saved activations and recomputed ops, the default -> reduce-overhead step and the
# verdict's trade (scripts/memory_summary.py), into $OUT/memory/summary.txt too. About 4-5 minutes on an H100.
# DEADLINE=seconds (default 420) stops starting new runs after that long; GPU_TEST=1 also runs
# tests/gpu/test_gpu_memory.py (about a minute more); DEVICE=cuda:N chooses the GPU. A transformers model through
# --model is left to a call of its own.
set -uo pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
mkdir -p "$OUT/memory"
start=$SECONDS
device=${DEVICE:-cuda:0}
modes=eager,default,reduce-overhead,eager_cuda_graph
python3 - <<'EOF' | tee "$OUT/memory/environment.txt"
import torch
print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, {torch.cuda.get_device_name(0)}")
EOF
run() {  # name model dim batch pass [extra flags]
  local name=$1 model=$2 dim=$3 batch=$4 pass=$5; shift 5
  if (( SECONDS - start > ${DEADLINE:-420} )); then
    echo "deadline: $name not recorded" | tee -a "$OUT/memory/log.txt"; return
  fi
  python3 -m fusionviz run --model "$model" --dim "$dim" --batch "$batch" --dtype float32 --pass "$pass" \
    --device "$device" --modes "$modes" --processes 4 --rounds 5 --out "$OUT/memory/$name.json.gz" "$@" 2>&1 \
    | grep -v "^\[" | tee -a "$OUT/memory/log.txt"
  echo "$name recorded at $((SECONDS - start)) s" | tee -a "$OUT/memory/log.txt"
}
run chain pointwise_chain 4096 4096 inference --memory-snapshot "$OUT/memory/chain.pickle"
run mlp_inference mlp 512 256 inference
run mlp_train mlp 512 256 train
python3 scripts/memory_summary.py "$OUT"/memory/*.json.gz | tee "$OUT/memory/summary.txt"
if [[ "${GPU_TEST:-0}" == 1 ]]; then
  python3 -m pytest -q -p no:cacheprovider tests/gpu/test_gpu_memory.py 2>&1 | tail -20 | tee "$OUT/memory/gpu_test.txt"
fi
echo "done at $((SECONDS - start)) s"
