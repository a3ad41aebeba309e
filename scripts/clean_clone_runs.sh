#!/usr/bin/env bash
# The README's test command (.ci/run) on fresh clones of this repository, one after another, at one commit: how
# issue 43's "passes every time" is checked. Each run's log goes to $LOGS/run_N.log and one line per run (exit
# status, wall time, load average at its start and end, processes of its clone left after it) to $LOGS/runs.txt.
#
#   RUNS="1 2 3 4 5" LOGS=/tmp/runs bash scripts/clean_clone_runs.sh [COMMIT]     (COMMIT defaults to HEAD)
#
# Two of these started side by side (RUNS="1 3 5" and RUNS="2 4") run each under the other's load on a 2-core
# machine; three at once put the load average at 14 there, where a lost click in the browser tier failed a run.
set -uo pipefail
repo=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
commit=$(git -C "$repo" rev-parse "${1:-HEAD}")
logs=${LOGS:-/tmp/clean_clone_runs}
mkdir -p "$logs"
for i in ${RUNS:-1 2 3 4 5}; do
  clone="$logs/clone_$i"
  rm -rf "$clone" && git clone -q "$repo" "$clone" && git -C "$clone" checkout -q "$commit"
  start=$(date +%s) load=$(cut -d' ' -f1-3 /proc/loadavg)
  (cd "$clone" && timeout 5400 .ci/run) > "$logs/run_$i.log" 2>&1
  rc=$? end=$(date +%s) load_end=$(cut -d' ' -f1-3 /proc/loadavg)
  sleep 2
  # its processes left: those naming the clone, and those working in it (pytest's own command line is relative)
  left=$( (pgrep -f "$clone/"; for d in /proc/[0-9]*; do
             [[ $(readlink "$d/cwd" 2>/dev/null) == "$clone"* ]] && echo "${d#/proc/}"; done) | sort -u | wc -l)
  summary=$(grep -E '^=+ .*(passed|failed)' "$logs/run_$i.log" | tail -1)
  echo "run $i at ${commit:0:7}: rc=$rc wall=$((end - start))s started $(date -d "@$start" +%H:%M)" \
    "load $load -> $load_end, processes left $left; $summary" | tee -a "$logs/runs.txt"
  rm -rf "$clone/.venv"
done
