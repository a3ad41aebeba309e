"""Live-run benchmark on a GPU (issue 46): GPT-2 small through the lab, against a plain torch script.

    python3 benchmarks/bench_live_gpu.py [--layers 12] [--out FILE]

The configuration is the issue's: transformers' GPT-2 (768 wide, 12 blocks), batch 8, sequence 256, bf16, eager +
default + reduce-overhead on cuda:0, random weights. Each contender runs in its own process with a fresh
temporary folder, Inductor cache and Triton cache (nothing compiled before, as a first visit), one after another:
- peer: a plain script that builds the model, then compiles and times each mode once (3 warm-up calls, 20 timed
  calls between CUDA events);
- app: the lab's own path, in process through Streamlit's AppTest (its widgets, the device queue, the capture
  worker and the timing processes), from Run clicked to the first figures on screen (those of the first timing
  process, `first`) and to the whole result, with the stages the run's status box showed and when;
- cli: `python -m fusionviz run` with the same settings.
Needs streamlit (and the app's requirements) beside torch, transformers and a GPU. Prints seconds per contender and
their ratio to the peer; `--out` also writes them as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODES = ("default", "reduce-overhead")
SIZES = {"dim": 768, "seq": 256, "batch": 8}
PEER = """
import sys, time
started = time.perf_counter()
import torch
from transformers import GPT2Config, GPT2Model
torch.manual_seed(0)
config = GPT2Config(n_embd=768, n_layer=int(sys.argv[1]), n_head=12)
net = GPT2Model(config).to("cuda", torch.bfloat16).eval()
ids = torch.randint(0, config.vocab_size, (8, 256), device="cuda")

def ms_per_call(f):
    for _ in range(3):
        f(input_ids=ids)
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    begin.record()
    for _ in range(20):
        f(input_ids=ids)
    end.record()
    torch.cuda.synchronize()
    return begin.elapsed_time(end) / 20

with torch.no_grad():
    for mode in ("eager", "default", "reduce-overhead"):
        f = net if mode == "eager" else torch.compile(net, mode=mode)
        print(mode, round(ms_per_call(f), 3), "ms", file=sys.stderr)
print(f"{time.perf_counter() - started:.2f}")
"""
STAGE = re.compile(r"^\s*([\d.]+) s · (.+)$")


def fresh_env() -> dict[str, str]:
    """Nothing compiled before: a new temporary folder (fusionviz's shared Inductor cache lives in it), Inductor
    cache and Triton cache."""
    return {**os.environ, "TMPDIR": tempfile.mkdtemp(prefix="bench-live-gpu-tmp-"),
            "TORCHINDUCTOR_CACHE_DIR": tempfile.mkdtemp(prefix="bench-live-gpu-inductor-"),
            "TRITON_CACHE_DIR": tempfile.mkdtemp(prefix="bench-live-gpu-triton-"),
            "FUSIONVIZ_SESSIONS_DIR": tempfile.mkdtemp(prefix="bench-live-gpu-library-"),
            "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def timed(command: list[str]) -> tuple[float, str, str]:
    """Seconds, standard output and standard error of `command` in fresh folders."""
    started = time.perf_counter()
    done = subprocess.run(command, check=True, capture_output=True, text=True, env=fresh_env(), cwd=ROOT)
    return time.perf_counter() - started, done.stdout, done.stderr


def app(layers: int) -> dict[str, object]:
    """In this process (started by `main` with fresh folders): the lab's widgets set, Run clicked, and the time to
    the result on screen, with the stage lines of the run's status box."""
    from streamlit.testing.v1 import AppTest

    from ui import state

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=900).run()
    at.sidebar.selectbox(key="device").set_value("cuda:0")
    at.sidebar.selectbox(key="model").set_value("hf:gpt2").run()
    for setting, value in (("dim", SIZES["dim"]), ("layers", layers), ("seq", SIZES["seq"])):
        at.sidebar.number_input(key=state.model_key(setting, "hf:gpt2")).set_value(value)
    at.sidebar.select_slider(key="batch").set_value(SIZES["batch"])
    at.sidebar.selectbox(key="dtype").set_value("bfloat16")
    at.sidebar.multiselect(key="modes").set_value(list(MODES)).run()
    started = time.perf_counter()
    at.sidebar.button(key="run").click().run()
    first = {"seconds": round(time.perf_counter() - started, 2), "metrics": {m.label: m.value for m in at.metric},
             "said": [c.value for c in at.caption if "partly timed" in c.value]}
    while "pending_lab" in at.session_state:  # the status box's fragment reruns the page in a browser
        time.sleep(0.2)
        at.run()
    took = time.perf_counter() - started
    problems = [e.value for e in [*at.exception, *at.error]]
    stages = [m.value.strip() for m in at.markdown if STAGE.match(m.value)]
    metrics = {m.label: m.value for m in at.metric}
    return {"seconds": round(took, 2), "first": first, "problems": problems, "stages": stages, "metrics": metrics}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--app", action="store_true", help=argparse.SUPPRESS)  # the app's child process
    args = parser.parse_args()
    if args.app:
        print(json.dumps(app(args.layers)))
        return 0
    results: dict[str, object] = {"configuration": {**SIZES, "layers": args.layers, "dtype": "bfloat16",
                                                    "modes": ["eager", *MODES]}}
    peer_s, _, peer_log = timed([sys.executable, "-c", PEER, str(args.layers)])
    results["peer"] = {"seconds": round(peer_s, 2), "ms_per_call": peer_log.strip().splitlines()[-3:]}
    app_s, app_out, _ = timed([sys.executable, __file__, "--app", "--layers", str(args.layers)])
    results["app"] = {"process_seconds": round(app_s, 2), **json.loads(app_out.strip().splitlines()[-1])}
    print(json.dumps(results, indent=1), file=sys.stderr, flush=True)
    cli_s, _, _ = timed([sys.executable, "-m", "fusionviz", "run", "--model", "hf:gpt2", "--dim", str(SIZES["dim"]),
                      "--layers", str(args.layers), "--seq", str(SIZES["seq"]), "--batch", str(SIZES["batch"]),
                      "--dtype", "bfloat16", "--device", "cuda:0", "--modes", ",".join(["eager", *MODES]),
                      "--out", os.devnull])
    results["cli"] = {"seconds": round(cli_s, 2)}
    for part in (results["app"], results["app"]["first"], results["cli"]):  # type: ignore[index]
        assert isinstance(part, dict)
        part["to_peer"] = round(float(part["seconds"]) / peer_s, 2)
    print(json.dumps(results, indent=1))
    if args.out:
        args.out.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
