#!/usr/bin/env bash
# The accounting issue's Done-when configurations on a GPU box, three separate runs each, with the ladder's modes:
#   OUT=/some/dir bash scripts/gpu_accounting.sh
# Configurations go round-robin to the visible GPUs (GPUS=0,1 to choose), each GPU running its share one run after
# another, run 1 of every configuration before any run 2; DEADLINE=seconds (default 540) stops starting new runs
# after that long, so a call with a 10-minute limit ends between runs; RUNS="2 3" records only those runs (a later
# call's share on a one-GPU box). Then, for every session written: measured
# DRAM bytes per kernel with Nsight Compute where `ncu` is on the PATH (NCU=0 to skip; eager and default, one
# profiled iteration each), and one summary table (scripts/accounting_summary.py) in $OUT/accounting/summary.txt.
set -uo pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"  # scripts/*.py import fusionviz from this checkout
mkdir -p "$OUT/accounting"
start=$SECONDS
modes=eager,eager_cuda_graph,default,reduce-overhead,max-autotune
configs() {  # model dim batch dtype
  cat <<EOF
pointwise_chain 4096 4096 float32
linear_ln_gelu 512 256 bfloat16
mlp 512 256 float32
mlp 4096 16 float32
EOF
}
IFS=, read -r -a gpus <<<"${GPUS:-$(python3 -c 'import torch; print(",".join(map(str, range(torch.cuda.device_count()))))')}"
mapfile -t rows < <(configs)
queue() {  # the runs of GPU number $1: run 1 of its configurations, then run 2, then run 3
  local slot=$1 gpu=${gpus[$1]}
  for run in ${RUNS:-1 2 3}; do
    for i in "${!rows[@]}"; do
      (( i % ${#gpus[@]} == slot )) || continue
      read -r model dim batch dtype <<<"${rows[$i]}"
      name="h200_${model}_${dim}x${batch}_${dtype}_run${run}"
      if (( SECONDS - start > ${DEADLINE:-540} )); then
        echo "deadline: $name not recorded" | tee -a "$OUT/accounting/log_$gpu.txt"; continue
      fi
      python3 -m fusionviz run --model "$model" --dim "$dim" --batch "$batch" --dtype "$dtype" --device "cuda:$gpu" \
        --modes "$modes" --out "$OUT/accounting/$name.json.gz" 2>&1 | grep -v "^\[" | tee -a "$OUT/accounting/log_$gpu.txt"
      echo "$name recorded at $((SECONDS - start)) s" | tee -a "$OUT/accounting/log_$gpu.txt"
    done
  done
}
for slot in "${!gpus[@]}"; do queue "$slot" & done
wait
if [[ "${NCU:-1}" != 0 ]] && command -v ncu >/dev/null; then
  for i in "${!rows[@]}"; do
    read -r model dim batch dtype <<<"${rows[$i]}"
    for mode in eager default; do
      if (( SECONDS - start > ${DEADLINE:-540} + 30 )); then echo "deadline: ncu $model $mode skipped"; continue; fi
      csv="$OUT/accounting/ncu_${model}_${dim}x${batch}_${dtype}_${mode}.csv"
      ncu --profile-from-start off --metrics dram__bytes_read.sum,dram__bytes_write.sum --csv --print-units base \
        python3 scripts/dram_bytes.py --model "$model" --dim "$dim" --batch "$batch" --dtype "$dtype" --mode "$mode" \
        --device "cuda:${gpus[0]}" > "$csv" 2> "$csv.log" || echo "ncu failed for $model $mode: see $csv.log"
    done
  done
else
  echo "ncu not run (NCU=0, or no ncu on the PATH): no measured DRAM bytes" | tee -a "$OUT/accounting/summary.txt"
fi
python3 scripts/accounting_summary.py "$OUT"/accounting/*.json.gz --ncu "$OUT/accounting" \
  | tee -a "$OUT/accounting/summary.txt"
echo "done at $((SECONDS - start)) s"
