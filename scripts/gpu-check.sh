#!/usr/bin/env bash
# scripts/gpu-check.sh [OUT_DIR]: the checks that need a GPU, as one script for a machine lent
# for a few minutes (docs/performance.md says what it measured last). It builds nothing that is
# already there: on a GPU machine without our build dependencies, carry the agent built here
# (build/agent/inject/liblumos_agent.so: it needs only libc) and, optionally, build/ for ctest.
#   1. ctest -L gpu (the cuda_tests/ label) when a build with tests is present;
#   2. scripts/gpu/train_loop.py (a few GPT-style layers, bf16, random data) three ways:
#      without the agent, with it (LD_PRELOAD + NVTX_INJECTION64_PATH, as lumos-run sets up),
#      and under torch.profiler;
#   3. a table: median step time, overhead against the plain run, what each way wrote.
# Outputs in OUT_DIR (default $OUT, else gpu-check-out/): gpu-check.md (the table), log.txt,
# the agent's trace(s) and the profiler's trace (gzipped). Without a GPU it says so and exits 0.
# Knobs: LUMOS_AGENT (the .so), STEPS (default 40), PYTHON (default python3).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-${OUT:-gpu-check-out}}
mkdir -p "$out"
log="$out/log.txt"
python=${PYTHON:-python3}
steps=${STEPS:-40}
agent=${LUMOS_AGENT:-build/agent/inject/liblumos_agent.so}

if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu-check: no GPU here (nvidia-smi -L failed); nothing to do"
  exit 0
fi
{
  echo "== machine"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  "$python" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
} >>"$log" 2>&1

if [ ! -f "$agent" ] && command -v cmake >/dev/null; then
  echo "== building the agent" >>"$log"
  LUMOS_TARGETS="lumos_agent lumos-run" bash scripts/build.sh build >>"$log" 2>&1
fi
if [ ! -f "$agent" ]; then
  echo "gpu-check: no agent at $agent (carry build/agent/inject, or set LUMOS_AGENT)" | tee -a "$log"
  exit 1
fi
agent=$(realpath "$agent")

if [ -f build/CTestTestfile.cmake ] && command -v ctest >/dev/null; then
  echo "== ctest -L gpu" >>"$log"
  ctest --test-dir build -L gpu --output-on-failure >>"$log" 2>&1
  echo "ctest -L gpu: exit $?" >>"$log"
fi

run() {  # run NAME [env...] -- [train_loop args...]: one JSON line in $out/NAME.json
  local name=$1
  shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  echo "== $name" >>"$log"
  env "${envs[@]}" "$python" scripts/gpu/train_loop.py --steps "$steps" "$@" \
    >"$out/$name.json" 2>>"$log"
  echo "$name: exit $? $(cat "$out/$name.json")" >>"$log"
}
traces="$out/traces"
mkdir -p "$traces"
run plain --
run agent LD_PRELOAD="$agent" NVTX_INJECTION64_PATH="$agent" LUMOS_OUTPUT_DIR="$traces" \
  LUMOS_JOB_ID=gpu-check --
run profiler -- --profile --out "$out"
# Only plain files come back from $OUT, two folders down at most: the trace goes up a level.
mv "$traces"/*.pb.zst "$out"/ 2>/dev/null
rmdir "$traces" 2>/dev/null

"$python" - "$out" <<'PY' | tee "$out/gpu-check.md"
import glob, gzip, json, os, sys
out = sys.argv[1]
def load(name):
    try:
        with open(os.path.join(out, name + ".json")) as f:
            return json.loads(f.read().strip().splitlines()[-1])
    except Exception:
        return None
plain, agent, prof = load("plain"), load("agent"), load("profiler")
def cell(result):
    return f"{result['median_ms']:.2f}" if result else "failed"
def overhead(result):
    if not result or not plain:
        return "-"
    return f"{100 * (result['median_ms'] / plain['median_ms'] - 1):+.2f}%"
traces = glob.glob(os.path.join(out, "*.pb.zst"))
agent_bytes = sum(os.path.getsize(t) for t in traces)
prof_path = os.path.join(out, "torch_profiler.json.gz")
prof_events, prof_bytes = "-", "-"
if os.path.exists(prof_path):
    prof_bytes = os.path.getsize(prof_path)
    with gzip.open(prof_path) as f:
        prof_events = len(json.load(f).get("traceEvents", []))
info = plain or agent or prof or {}
print(f"gpu-check: {info.get('device', '?')}, torch {info.get('torch', '?')}, "
      f"{info.get('layers', '?')} layers x {info.get('width', '?')}, seq {info.get('seq', '?')}, "
      f"batch {info.get('batch', '?')}, {info.get('steps', '?')} measured steps\n")
print("| run | median step ms | overhead | written |")
print("|---|---:|---:|---|")
print(f"| plain | {cell(plain)} | - | - |")
print(f"| lumos agent (NVTX channel) | {cell(agent)} | {overhead(agent)} | "
      f"{len(traces)} trace(s), {agent_bytes} bytes (events: lumos-model inspect) |")
print(f"| torch.profiler | {cell(prof)} | {overhead(prof)} | "
      f"{prof_events} Kineto events, {prof_bytes} bytes gzipped |")
PY
