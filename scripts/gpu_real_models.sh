#!/usr/bin/env bash
# Issue 46's check on a GPU machine: every real model of the catalogue through the CLI at small sizes (eager,
# default, reduce-overhead; one timing process of 3 rounds: the point is the kernels, not the latency), then
# scripts/check_real_models.py on the sessions: each mode's kernels per profiled step against a plain JSON count of
# the same trace, and each model's module table against the trace's kernel µs per step and its module names.
# Needs torch with CUDA, transformers, timm and torchvision (and fusionviz's own requirements). No max-autotune:
# autotuning convolutions can take more than 10 minutes (docs/measurements). About 5-7 minutes on one H100/H200.
#
#   OUT=/some/dir bash scripts/gpu_real_models.sh          (from the repository root)
#
# DEADLINE=seconds (default 360) starts no model after that long (the rest are named in the log as not run);
# MODELS="hf:gpt2 timm:resnet50" runs those alone; DEVICE (default cuda:0) and MODES (default
# eager,default,reduce-overhead) choose where and what (on the CPU its traces hold no kernel events to count). Writes $OUT/real_models/<model>.json.gz, log.txt, check.txt;
# exits with the check's status (1 where any check failed or a model did not run).
set -uo pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"  # scripts/*.py import fusionviz from here
dir="$OUT/real_models"
mkdir -p "$dir"
log="$dir/log.txt"
start=$SECONDS
python3 - <<'EOF' 2>&1 | tee "$log"
import importlib, sys, torch
print(f"python {sys.version.split()[0]}, torch {torch.__version__}, CUDA {torch.version.cuda}, "
      f"{torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'no GPU'}")
for name in ("transformers", "timm", "torchvision"):
    try:
        print(f"{name} {importlib.import_module(name).__version__}")
    except ImportError:
        print(f"{name} not installed")
EOF
python3 -m fusionviz models 2>&1 | grep -E '^(hf|timm|tv):|not installed' | cut -c1-100 | tee -a "$log"
# model dtype sizes: transformers in bfloat16 (their usual dtype on a GPU), the convolutional networks in float32
mapfile -t rows <<'EOF'
hf:gpt2 bfloat16 --dim 256 --layers 2 --batch 4 --seq 128
timm:resnet50 float32 --batch 4 --seq 64
tv:resnet18 float32 --batch 8 --seq 64
hf:llama bfloat16 --dim 256 --layers 2 --batch 4 --seq 128
hf:bert bfloat16 --dim 256 --layers 2 --batch 4 --seq 128
hf:vit bfloat16 --dim 256 --layers 2 --batch 4 --seq 64
timm:convnext_tiny float32 --dim 48 --batch 4 --seq 64
EOF
sessions=()
for row in "${rows[@]}"; do
  read -r model dtype sizes <<<"$row"
  if [[ -n "${MODELS:-}" && " $MODELS " != *" $model "* ]]; then continue; fi
  if (( SECONDS - start > ${DEADLINE:-360} )); then
    echo "deadline: $model not run" | tee -a "$log"; continue
  fi
  out="$dir/${model//:/_}.json.gz"
  # shellcheck disable=SC2086  # $sizes is a list of flags
  python3 -m fusionviz run --model "$model" $sizes --dtype "$dtype" --device "${DEVICE:-cuda:0}" \
    --modes "${MODES:-eager,default,reduce-overhead}" --processes 1 --rounds 3 --timeout 240 --out "$out" </dev/null 2>&1 \
    | grep -v "^\[" | tee -a "$log"
  echo "$model: done at $((SECONDS - start)) s" | tee -a "$log"
  [[ -f "$out" ]] && sessions+=("$out")
done
models=$(printf '%s\n' "${rows[@]}" | awk '{print $1}' | paste -sd, -)
[[ -n "${MODELS:-}" ]] && models=$(tr ' ' ',' <<<"$MODELS")
if (( ${#sessions[@]} == 0 )); then echo "no session was written" | tee -a "$log"; exit 1; fi
python3 scripts/check_real_models.py --modules "$models" "${sessions[@]}" 2>&1 | tee "$dir/check.txt"
status=${PIPESTATUS[0]}
echo "all done at $((SECONDS - start)) s" | tee -a "$log"
exit "$status"
