#!/usr/bin/env bash
# Records the library shipped in sessions/ with the project's own CLI, on one GPU: GPU=N PART=a|b|c.
# Parts a and e: the headline sessions; b: the other zoo models; c: the crossover grid (spread over every GPU the
# process sees, or the ones in GRID_DEVICES); d: the shape sweep. The acceptance runs (scripts/gpu_acceptance.sh) give
# the mlp fp32 and linear_ln_gelu bf16 sessions. From the repo root: OUT=/some/dir GPU=1 PART=a bash scripts/gpu_library.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
mkdir -p "$OUT/lib"
all=eager,default,reduce-overhead,max-autotune,max-autotune-no-cudagraphs
rec() {  # name model dim batch dtype modes [extra flags]
  local name=$1 model=$2 dim=$3 batch=$4 dtype=$5 modes=$6; shift 6
  python3 -m fusionviz run --model "$model" --dim "$dim" --batch "$batch" --dtype "$dtype" --device "cuda:$GPU" \
    --modes "$modes" "$@" --out "$OUT/lib/h200_${name}.json.gz" 2>&1 | grep -v "^\[" | tee -a "$OUT/lib/log_$PART.txt"
}
case "$PART" in
  a)
    rec pointwise_chain_4096x4096_float32 pointwise_chain 4096 4096 float32 eager,default,reduce-overhead,max-autotune-no-cudagraphs
    rec linear_ln_gelu_512x256_float32 linear_ln_gelu 512 256 float32 "$all"
    rec mlp_512x256_bfloat16 mlp 512 256 bfloat16 "$all"
    ;;
  e)
    rec transformer_block_1024x8x512_bfloat16 transformer_block 1024 8 bfloat16 eager,default,reduce-overhead --seq 512
    rec graph_break_512x256_float32 graph_break 512 256 float32 eager,default
    ;;
  b)
    rec conv_block_64x32x56_float32 conv_block 64 32 float32 eager,default,reduce-overhead --seq 56  # no max-autotune: conv autotuning runs past 10 minutes
    rec branching_2048x2048_float32 branching 2048 2048 float32 eager,default,reduce-overhead
    rec argmax_gather_1024x4096_float32 argmax_gather 1024 4096 float32 eager,default,reduce-overhead
    rec custom_op_2048x2048_float32 custom_op 2048 2048 float32 eager,default,reduce-overhead
    ;;
  d)
    python3 -m fusionviz sweep --model transformer_block --dim 512 --batch 8 --over seq --device "cuda:$GPU" \
      --sizes 64,128,192,256,320,384,512,64,128,192,256,320,384,512 --cold-caches \
      --out "$OUT/lib/h200_sweep_transformer_block_seq.json.gz" 2>&1 | grep -v "^\[" | tee -a "$OUT/lib/log_$PART.txt"
    ;;
  c)
    python3 -m fusionviz grid --model mlp --mode default --dims "${GRID_DIMS:-256,1024,4096}" \
      --batches "${GRID_BATCHES:-16,256,4096}" \
      --processes 2 ${GRID_DEVICES:+--devices "$GRID_DEVICES"} --out "$OUT/lib/h200_grid_mlp_default.json.gz" 2>&1 \
      | grep -v "^\[" | tee -a "$OUT/lib/log_$PART.txt"
    ;;
esac
