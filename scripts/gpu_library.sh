#!/usr/bin/env bash
# Records the library shipped in sessions/ with the project's own CLI on any GPU box.
#   OUT=/some/dir GPU=0 SHARD=0/2 bash scripts/gpu_library.sh   one GPU's share of the model table (library_rows.txt;
#                                                                on a Ray cluster: scripts/record_library.py)
#   OUT=/some/dir PART=grid bash scripts/gpu_library.sh          the crossover grid, spread over every visible GPU
#   OUT=/some/dir GPU=0 PART=sweep bash scripts/gpu_library.sh   the transformer block's shape sweep
# ROWS=PATTERN records only the rows whose model matches the shell pattern (ROWS='hf:*'); PREFIX names the GPU in
# the file names (default h200: h200_mlp_512x256_float32; a real model's colon becomes _: h100_hf_gpt2_768x4x128_…;
# a train pass ends in _train).
# A table row whose file is already in sessions/ is skipped (FORCE=1 records it again); DEADLINE=seconds stops
# starting new rows after that long, so a call with a time limit ends between sessions, not inside one.
# PACK=1 packs what a call wrote under $OUT/lib into one archive, $OUT/lib.tar.gz (a machine that hands back a
# few files a call returned only 8 of a call's 10 sessions).
# Modes: all five for the models whose story is the modes (mlp, linear_ln_gelu, pointwise_chain); eager, default
# and reduce-overhead for the models that show a limit of fusion, which does not change with the mode; never
# max-autotune for the convolution (autotuning convolutions ran past 10 minutes on the H200).
set -uo pipefail
export PYTHONUNBUFFERED=1
mkdir -p "$OUT/lib"
start=$SECONDS
library() {  # the table's rows, model dim batch dtype modes [extra flags]; the file name says model, sizes and dtype
  grep -v -e '^#' -e '^[[:space:]]*$' "${TABLE:-$(dirname "$0")/library_rows.txt}"
}
case "${PART:-lib}" in
  lib)
    IFS=/ read -r shard shards <<<"${SHARD:-0/1}"
    i=-1
    while read -r model dim batch dtype modes extra; do
      i=$((i + 1))
      (( i % shards == shard )) || continue
      [[ -n "${ROWS:-}" && "$model" != $ROWS ]] && continue
      seq=$(sed -n 's/.*--seq \([0-9]*\).*/x\1/p' <<<"$extra")
      pass=$(sed -n 's/.*--pass \(train\).*/_\1/p' <<<"$extra")
      name="${PREFIX:-h200}_${model//:/_}_${dim}x${batch}${seq}_${dtype}${pass}"
      [[ -e "sessions/$name.json.gz" && -z "${FORCE:-}" ]] && continue
      if (( SECONDS - start > ${DEADLINE:-100000} )); then echo "deadline: $name not recorded" | tee -a "$OUT/lib/log_$GPU.txt"; continue; fi
      # shellcheck disable=SC2086  # extra holds flags
      python3 -m fusionviz run --model "$model" --dim "$dim" --batch "$batch" --dtype "$dtype" --device "cuda:$GPU" \
        --modes "$modes" $extra --out "$OUT/lib/$name.json.gz" 2>&1 | grep -v "^\[" | tee -a "$OUT/lib/log_$GPU.txt"
      echo "$name recorded at $((SECONDS - start)) s" | tee -a "$OUT/lib/log_$GPU.txt"
    done < <(library)
    if [[ -n "${PACK:-}" ]]; then tar czf "$OUT/lib.tar.gz" -C "$OUT" lib && rm -r "$OUT/lib"; fi
    ;;
  grid)
    python3 -m fusionviz grid --model mlp --mode default --dims "${GRID_DIMS:-256,1024,4096}" \
      --batches "${GRID_BATCHES:-16,256,4096}" \
      --processes 2 ${GRID_DEVICES:+--devices "$GRID_DEVICES"} --out "$OUT/lib/h200_grid_mlp_default.json.gz" 2>&1 \
      | grep -v "^\[" | tee -a "$OUT/lib/log_grid.txt"
    ;;
  sweep)
    python3 -m fusionviz sweep --model transformer_block --dim 512 --batch 8 --over seq --device "cuda:$GPU" \
      --sizes 64,128,192,256,320,384,512,64,128,192,256,320,384,512 --cold-caches \
      --out "$OUT/lib/h200_sweep_transformer_block_seq.json.gz" 2>&1 | grep -v "^\[" | tee -a "$OUT/lib/log_sweep.txt"
    ;;
esac
