#!/usr/bin/env bash
# One device call's checks for issues 46 and 48 on a GPU box (from the repository root, OUT set, the app's wheels
# installed on PYTHONPATH): every catalogue model through the lab (AppTest), then the GPU half of issue 48: the
# graph break with and without capture_scalar_outputs (the zoo's model and a test model whose .item() feeds
# arithmetic), and mlp's plan diff of default against max-autotune-no-cudagraphs.
set -uo pipefail
export PYTHONUNBUFFERED=1 FUSIONVIZ_GPU_TESTS=1
nvidia-smi -L
timeout "${APP_S:-400}" python3 -m pytest -q -p no:cacheprovider -s tests/gpu/test_gpu_app.py -k real_model 2>&1 \
  | grep -v "^\[" > "$OUT/gpu_app_real_models.txt"
tail -3 "$OUT/gpu_app_real_models.txt"
for model in graph_break tests.models_for_tests:scalar_scale; do
  name=${model##*:}
  python3 -m fusionviz run --model "$model" --dim 512 --batch 256 --dtype float32 --device cuda:0 \
    --modes eager,default,default+capture_scalar_outputs --out "$OUT/$name.json.gz" 2>&1 | grep -v "^\[" | tail -4
  python3 -m fusionviz inspect "$OUT/$name.json.gz" --modes default,default+capture_scalar_outputs 2>&1 | head -30
done > "$OUT/capture_scalar_outputs.txt"
python3 -m fusionviz run --model mlp --dim 512 --batch 256 --dtype float32 --device cuda:0 \
  --modes eager,default,max-autotune-no-cudagraphs --out "$OUT/mlp_templates.json.gz" 2>&1 | grep -v "^\[" | tail -4 \
  > "$OUT/mlp_templates.txt"
python3 -m fusionviz inspect "$OUT/mlp_templates.json.gz" --modes default,max-autotune-no-cudagraphs >> "$OUT/mlp_templates.txt" 2>&1
