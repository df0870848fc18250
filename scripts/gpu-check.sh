#!/usr/bin/env bash
# scripts/gpu-check.sh [OUT_DIR]: the checks that need a GPU, as one script for a GPU machine lent
# for a few minutes (docs/performance.md says what it measured last):
#   1. the cuda_tests checkers (ctest label `gpu`), each run directly under a timeout;
#   2. scripts/gpu/train_loop.py (GPT-style causal layers, bf16, random data, no downloads) in
#      two sizes, `gpt` (GPU-bound) and `small` (launch-bound, where host-side costs show), four
#      ways each: plain, under lumos-run (all four routes: LD_PRELOAD, CUDA_INJECTION64_PATH,
#      NVTX_INJECTION64_PATH, NCCL_PROFILER_PLUGIN), under torch.profiler, and under lumos-run
#      dormant (LUMOS_MODE=on-demand, no window asked for: the steady cost of an agent that
#      stays loaded, target <= 0.1 %); ROUNDS rounds, the ways interleaved within each round so
#      drift hits them alike;
#   3. once per size, the loop under lumos-run AND torch.profiler together (two CUPTI clients in
#      one job: the agent must not break the job or the profiler; its warning is shown);
#      `lumos-model replay` of one agent trace (measured against replayed step);
#   4. a table: median step time (the median of the rounds' medians, and their range), overhead
#      against plain, the agent's overhead as a share of torch.profiler's, events captured and
#      bytes written;
#   6. capture windows on the GPU (issue 15): one run per size in periodic mode (a 3-step window
#      every 5 s, marker "step") and one on demand (lumos-ctl capture --iterations 3 while it
#      runs); their window files are replayed (the window directory as a trace set) and kept
#      (SIZE-window.pb.zst); the table gives step time, windows written and the replay; and one
#      on-demand run per size without any NVTX range (train_loop.py --no-nvtx): the window's
#      iterations must come from the kernel stream (agent/control/period_detector.h), its
#      CaptureWindow saying "(kernel stream: a period of N launches)" rather than the timed
#      fallback's "no iteration marker seen ..." (nonvtx lines under the windows table);
#   5. estimation against real runs (issue 14): the `est` size traced under lumos-run, each of
#      its variants (layers x2, width x2, seq x2, batch x2) run plainly, and each estimated from
#      the base trace alone (`lumos-model estimate --set`); a table of estimate against measured
#      (target: mean |error| <= 3 %, max <= 6 %); the base trace is kept (est-agent.pb.zst).
# Binaries: from BUNDLE (default gpu-bundle/, made here by scripts/gpu-bundle.sh and carried:
# the GPU machine has CUDA, PyTorch and CMake but none of our build dependencies), else from
# build/. Outputs in OUT_DIR (default $OUT, else gpu-check-out/): gpu-check.md (the tables),
# log.txt, and one agent trace per size. Without a GPU it says so and exits 0.
# Knobs: ROUNDS (3), STEPS (40 measured steps per run), SIZES ("gpt small"; "tiny" for a
# rehearsal), PYTHON (python3), RUN_TIMEOUT (240 s per training run), TEST_TIMEOUT (120 s per
# checker), DEVICE (cuda; `DEVICE=cpu SIZES=tiny ROUNDS=1 STEPS=3` rehearses the whole script on
# a machine without a GPU, with a CPU PyTorch: the checkers skip, the times mean nothing).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-${OUT:-gpu-check-out}}
mkdir -p "$out"
out=$(realpath "$out")
log="$out/log.txt"
: >"$log"
python=${PYTHON:-python3}
rounds=${ROUNDS:-3}
steps=${STEPS:-40}
sizes=${SIZES:-gpt small}
run_timeout=${RUN_TIMEOUT:-240}
test_timeout=${TEST_TIMEOUT:-120}
device=${DEVICE:-cuda}
work=$(mktemp -d /tmp/gpu-check.XXXXXX)

if [ "$device" = cuda ] && ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu-check: no GPU here (nvidia-smi -L failed); nothing to do"
  exit 0
fi

bundle=${BUNDLE:-gpu-bundle}
if [ -d "$bundle/bin" ]; then
  bundle=$(realpath "$bundle")
  bin=$bundle/bin
  lumos_run=$bin/lumos-run
  lumos_ctl=$bin/lumos-ctl
  lumos_model=$bin/lumos-model
  tool_libs=$bundle/lib  # Only for our tools and checkers, never for the training runs.
else
  bin=build/cuda_tests
  lumos_run=build/agent/tools/lumos-run
  lumos_ctl=build/agent/tools/lumos-ctl
  lumos_model=build/modeler/tools/lumos-model
  tool_libs=
fi
for tool in "$lumos_run" "$lumos_model"; do
  if [ ! -x "$tool" ]; then
    echo "gpu-check: no $tool (run scripts/gpu-bundle.sh here and carry gpu-bundle)" | tee -a "$log"
    exit 1
  fi
done
lumos_run=$(realpath "$lumos_run")
lumos_ctl=$(realpath "$lumos_ctl")
lumos_model=$(realpath "$lumos_model")
# libnccl for the NCCL checker's workload: the toolkit's, else the one PyTorch's wheel brings.
nccl_libs=$("$python" -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null)
tools_env=(env "LD_LIBRARY_PATH=${tool_libs}:/usr/local/cuda/lib64:${nccl_libs}:${LD_LIBRARY_PATH:-}")

{
  echo "== machine"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv || true
  "$python" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
  echo "bundle: ${bundle}; nccl libs: ${nccl_libs:-none}"
} >>"$log" 2>&1

# 1. The checkers.
checks="$work/checks.txt"
: >"$checks"
for checker in "$bin"/lumos_cuda_*_test; do
  [ -x "$checker" ] || continue
  name=$(basename "$checker")
  echo "== $name" >>"$log"
  "${tools_env[@]}" CUDA_TESTS_LUMOS_RUN="$lumos_run" CUDA_TESTS_WORKLOADS="$(realpath "$bin")" \
    timeout "$test_timeout" "$checker" >"$work/$name.log" 2>&1
  status=$?
  cat "$work/$name.log" >>"$log"
  summary=$(grep -E '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+ test' "$work/$name.log" | tr '\n' ' ')
  [ "$status" -eq 124 ] && summary="timed out after ${test_timeout} s"
  echo "| $name | exit $status | $summary |" >>"$checks"
done

# 2. The training loop.
est_layers=4 est_width=1024 est_heads=16 est_seq=1024 est_batch=4
est_args() {
  echo "--layers ${1:-$est_layers} --width ${2:-$est_width} --heads $est_heads" \
       "--seq ${3:-$est_seq} --batch ${4:-$est_batch}"
}
size_args() {
  case $1 in
    gpt) echo "--layers 4 --width 2048 --heads 16 --seq 1024 --batch 8" ;;
    small) echo "--layers 4 --width 512 --heads 8 --seq 256 --batch 2" ;;
    tiny) echo "--layers 2 --width 64 --heads 4 --seq 32 --batch 2 --warmup 2" ;;
    est) est_args ;;
    est-layers) est_args $((2 * est_layers)) ;;
    est-width) est_args "" $((2 * est_width)) ;;
    est-seq) est_args "" "" $((2 * est_seq)) ;;
    est-batch) est_args "" "" "" $((2 * est_batch)) ;;
  esac
}
# train TAG WAY SIZE: one run of the loop, WAY plain, lumos (under lumos-run), profiler (under
# torch.profiler) or both (the last two at once); its JSON line in TAG.json, stderr in TAG.err,
# what the agent wrote in TAG.inspect.json.
train() {
  local tag=$1 way=$2 size=$3
  # shellcheck disable=SC2046  # size_args is a word list on purpose.
  local args=(scripts/gpu/train_loop.py --device "$device" --steps "$steps" $(size_args "$size"))
  local command=("$python" "${args[@]}")
  case $way in
    profiler | both) mkdir -p "$work/$tag"; command+=(--profile --out "$work/$tag") ;;
  esac
  case $way in
    lumos | both) command=(env LUMOS_JOB_ID="$tag" "$lumos_run" -o "$work/traces/$tag" --
                           "${command[@]}") ;;
    dormant) command=(env LUMOS_JOB_ID="$tag" LUMOS_MODE=on-demand "$lumos_run"
                      -o "$work/traces/$tag" -- "${command[@]}") ;;
    periodic) command=(env LUMOS_JOB_ID="$tag" LUMOS_MODE=periodic LUMOS_PERIOD_S=5 LUMOS_JITTER=0
                       LUMOS_WINDOW_ITERATIONS=3 LUMOS_ITERATION_MARKER=step "$lumos_run"
                       -o "$work/traces/$tag" -- "${command[@]}") ;;
  esac
  echo "== $tag: ${command[*]}" >>"$log"
  PYTHONUNBUFFERED=1 timeout "$run_timeout" "${command[@]}" >"$work/$tag.json" 2>"$work/$tag.err"
  echo "$tag: exit $? $(tail -1 "$work/$tag.json")" >>"$log"
  tail -20 "$work/$tag.err" >>"$log"
  if [ -d "$work/traces/$tag" ]; then
    "${tools_env[@]}" "$lumos_model" inspect --json "$work/traces/$tag" >"$work/$tag.inspect.json" \
      2>>"$log"
  fi
}
for round in $(seq 1 "$rounds"); do
  for size in $sizes; do
    for way in plain lumos profiler dormant; do train "$size-$way-r$round" "$way" "$size"; done
  done
done

# 3. The agent and torch.profiler in one job; then replay one agent trace per size, and keep it.
for size in $sizes; do
  train "$size-both" both "$size"
  grep -m3 '^lumos' "$work/$size-both.err" >"$work/$size-both.warnings"
done
for size in $sizes; do
  trace_dir="$work/traces/$size-lumos-r1"
  [ -d "$trace_dir" ] || continue
  echo "== replay $size" >>"$log"
  "${tools_env[@]}" timeout 120 "$lumos_model" replay "$trace_dir" --iteration '^step$' \
    >"$work/$size.replay.txt" 2>&1
  cat "$work/$size.replay.txt" >>"$log"
  for trace in "$trace_dir"/*.pb.zst; do cp "$trace" "$out/$size-agent.pb.zst"; break; done
done

# 6. Capture windows: periodic, then on demand through lumos-ctl while the loop runs.
# ondemand_capture TAG MARKER SIZE [train_loop.py flags]: the loop on demand (job TAG; MARKER,
# if not empty, as LUMOS_ITERATION_MARKER), and one 3-iteration `lumos-ctl capture --job TAG`
# once its agent answers and the warm-up steps are over; returns when the loop has ended.
ondemand_capture() {
  local tag=$1 marker=$2 size=$3 loop
  shift 3
  # shellcheck disable=SC2046  # size_args is a word list on purpose.
  (export PYTHONUNBUFFERED=1 LUMOS_JOB_ID="$tag" LUMOS_MODE=on-demand
    if [ -n "$marker" ]; then export LUMOS_ITERATION_MARKER="$marker"; fi
    timeout "$run_timeout" "$lumos_run" -o "$work/traces/$tag" -- "$python" \
      scripts/gpu/train_loop.py --device "$device" "$@" --steps $((steps * 3)) \
      $(size_args "$size") >"$work/$tag.json" 2>"$work/$tag.err") &
  loop=$!
  for _ in $(seq 1 120); do
    "${tools_env[@]}" "$lumos_ctl" status 2>/dev/null | grep -q "$tag" && break
    sleep 0.5
  done
  sleep 5  # Past the warm-up steps.
  "${tools_env[@]}" "$lumos_ctl" capture --job "$tag" --iterations 3 \
    >"$work/$tag.capture.txt" 2>&1
  wait "$loop"
}
for size in $sizes; do
  train "$size-periodic" periodic "$size"
  tag="$size-ondemand"
  ondemand_capture "$tag" step "$size"
  echo "$tag: $(cat "$work/$tag.capture.txt") $(tail -1 "$work/$tag.json")" >>"$log"
  # Without NVTX: iterations from the kernel stream (the CUPTI launch callbacks, armed only).
  tag="$size-nonvtx"
  ondemand_capture "$tag" "" "$size" --no-nvtx
  window=$(find "$work/traces/$tag" -name '*.pb.zst' 2>/dev/null | sort | head -1)
  how="no window file"
  if [ -n "$window" ]; then
    # The CaptureWindow's texts, from the file's zstd frames (zstd, else Python's zstandard).
    how=$({ zstd -dcq "$window" 2>/dev/null ||
      "$python" -c 'import sys, zstandard; sys.stdout.buffer.write(zstandard.ZstdDecompressor().decompressobj().decompress(open(sys.argv[1], "rb").read()))' "$window" 2>/dev/null; } |
      LC_ALL=C grep -aoE '\(kernel stream: a period of [0-9]+ launches\)|no iteration marker seen[^;]*' |
      sort -u | tr '\n' ' ')
    how=${how:-"window written, its CaptureWindow not readable here"}
    cp "$window" "$out/$tag-window.pb.zst"
  fi
  echo "$size nonvtx: $how; capture: $(tr '\n' ' ' <"$work/$tag.capture.txt"); step $(tail -1 "$work/$tag.json")" \
    >>"$work/nonvtx.txt"
  cat "$work/nonvtx.txt" >>"$log"
  for mode in periodic ondemand; do
    window=$(find "$work/traces/$size-$mode" -name '*.pb.zst' 2>/dev/null | sort | head -1)
    [ -n "$window" ] || continue
    "${tools_env[@]}" timeout 120 "$lumos_model" replay "$(dirname "$window")" \
      --iteration '^step$' >"$work/$size-$mode.replay.txt" 2>&1
    echo "== replay of $window" >>"$log"
    cat "$work/$size-$mode.replay.txt" >>"$log"
    cp "$window" "$out/$size-$mode-window.pb.zst"
  done
done

# 5. Estimation against real runs: the base traced (NVTX "step" iterations), its variants
# measured plainly, each variant estimated from the base trace. The loop has no embedding, LM
# head or gradient accumulation: --base gives what the trace cannot show (one GPU, one
# micro-batch); micro-batch variants are not run.
estimates="$work/estimates.txt"
: >"$estimates"
if [ "${ESTIMATE:-1}" = 1 ]; then
  train est-lumos lumos est
  base="layers=$est_layers,hidden=$est_width,ffn=$((4 * est_width)),heads=$est_heads"
  base="$base,seq=$est_seq,mbs=$est_batch,micro_batches=1,world=1,dp=1,tp=1,pp=1"
  for variant in layers width seq batch; do
    train "est-$variant-plain" plain "est-$variant"
    case $variant in
      layers) set="layers=$((2 * est_layers))" ;;
      width) set="hidden=$((2 * est_width)),ffn=$((8 * est_width))" ;;
      seq) set="seq=$((2 * est_seq))" ;;
      batch) set="mbs=$((2 * est_batch))" ;;
    esac
    echo "== estimate $variant: --set $set" >>"$log"
    "${tools_env[@]}" timeout 300 "$lumos_model" estimate "$work/traces/est-lumos" \
      --iteration '^step$' --base "$base" --set "$set" --json >"$work/est-$variant.estimate.json" \
      2>>"$log"
    echo "$variant $set" >>"$estimates"
  done
  for trace in "$work/traces/est-lumos"/*.pb.zst; do cp "$trace" "$out/est-agent.pb.zst"; break; done
fi

# 4. The tables.
"$python" - "$work" "$rounds" "$sizes" "$checks" <<'PY' | tee "$out/gpu-check.md"
import glob, gzip, json, os, statistics, sys
work, rounds, sizes, checks = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4]

def result(tag):
    try:
        with open(os.path.join(work, tag + ".json")) as f:
            return json.loads(f.read().strip().splitlines()[-1])
    except Exception:
        return None

def agent_written(tag):
    try:
        with open(os.path.join(work, f"{tag}.inspect.json")) as f:
            files = json.load(f)["files"]
    except Exception:
        return "no trace"
    events = sum(f.get("events", 0) for f in files)
    size_bytes = sum(f.get("file_bytes", 0) for f in files)
    lost = sum(sum(f["loss"].values()) for f in files if isinstance(f.get("loss"), dict))
    return f"{len(files)} trace(s), {events} events, {size_bytes} bytes, lost {lost}"

def profiler_written(folder):
    path = os.path.join(work, folder, "torch_profiler.json.gz")
    if not os.path.exists(path):
        return "no trace"
    with gzip.open(path) as f:
        events = len(json.load(f).get("traceEvents", []))
    return f"{events} Kineto events, {os.path.getsize(path)} bytes gzipped"

def written(size, way):
    if way == "lumos":
        return agent_written(f"{size}-lumos-r1")
    if way == "profiler":
        return profiler_written(f"{size}-profiler-r1")
    return "-"

info = next((r for r in (result(f"{s}-plain-r1") for s in sizes) if r), {})
print(f"gpu-check: {info.get('device', '?')}, torch {info.get('torch', '?')}, "
      f"{rounds} rounds x {info.get('steps', '?')} measured steps\n")
print("| checker | exit | result |\n|---|---|---|")
with open(checks) as f:
    print(f.read().rstrip())
print()
print("| size | run | median step ms (range of round medians) | overhead | written (round 1) |")
print("|---|---|---:|---:|---|")
for size in sizes:
    medians = {}
    for way in ("plain", "lumos", "profiler", "dormant"):
        values = [r["median_ms"] for r in (result(f"{size}-{way}-r{i}") for i in
                                           range(1, rounds + 1)) if r]
        medians[way] = statistics.median(values) if values else None
        label = {"plain": "plain", "lumos": "lumos-run", "profiler": "torch.profiler",
                 "dormant": "lumos-run dormant (on-demand, no window; target <= 0.1%)"}[way]
        cell = (f"{medians[way]:.3f} ({min(values):.3f}-{max(values):.3f})" if values
                else "failed")
        over = "-"
        if way != "plain" and medians[way] and medians["plain"]:
            over = f"{100 * (medians[way] / medians['plain'] - 1):+.2f}%"
        print(f"| {size} | {label} | {cell} | {over} | {written(size, way)} |")
    if medians["lumos"] and medians["plain"] and medians["profiler"]:
        agent = medians["lumos"] - medians["plain"]
        profiler = medians["profiler"] - medians["plain"]
        share = f"{100 * agent / profiler:.1f}%" if profiler > 0 else "-"
        print(f"| {size} | agent / torch.profiler overhead | | {share} | |")
    both = result(f"{size}-both")
    warnings_path = os.path.join(work, f"{size}-both.warnings")
    warnings = ""
    if os.path.exists(warnings_path):
        with open(warnings_path) as f:
            warnings = " / ".join(l.strip() for l in f)[:300]
    step = f"{both['median_ms']:.3f}" if both else "failed"
    print(f"| {size} | lumos-run + torch.profiler (1 run) | {step} | | "
          f"agent: {agent_written(f'{size}-both')}; profiler: {profiler_written(f'{size}-both')}; "
          f"{warnings or 'no lumos warning'} |")
for size in sizes:
    path = os.path.join(work, f"{size}.replay.txt")
    if os.path.exists(path):
        with open(path) as f:
            text = [l.rstrip() for l in f]
        # The report's iteration table (measured against replayed), else what it said.
        start = next((i for i, l in enumerate(text) if l.startswith("iterations")), None)
        end = next((i for i, l in enumerate(text) if "mean |error|" in l), None)
        lines = text[start:end + 1][:14] if start is not None and end is not None else text[:3]
        print(f"\nreplay of {size} (lumos-model replay --iteration '^step$'):\n")
        print("\n".join("    " + l for l in lines))
print("\ncapture windows (LUMOS_MODE=periodic, 3 steps every 5 s; on-demand via lumos-ctl):\n")
print("| size | mode | median step ms | windows written | replay of one window |")
print("|---|---|---:|---:|---|")
for size in sizes:
    for mode in ("periodic", "ondemand"):
        r = result(f"{size}-{mode}")
        traces = os.path.join(work, "traces", f"{size}-{mode}")
        count = 0
        for root, _, files in os.walk(traces):
            count += sum(1 for f in files if f.endswith(".pb.zst"))
        replay = os.path.join(work, f"{size}-{mode}.replay.txt")
        summary = "-"
        if os.path.exists(replay):
            with open(replay) as f:
                lines = [l.strip() for l in f if "mean |error|" in l or "error" in l.lower()]
            summary = (lines[0] if lines else "no error line")[:120]
        step = f"{r['median_ms']:.3f}" if r else "failed"
        print(f"| {size} | {mode} | {step} | {count} | {summary} |")
nonvtx = os.path.join(work, "nonvtx.txt")
if os.path.exists(nonvtx):
    print("\nwindows without NVTX (iterations from the kernel stream; target: \"(kernel stream: "
          "a period of N launches)\", not the timed fallback):\n")
    with open(nonvtx) as f:
        for line in f:
            print("    " + line.rstrip())
estimates = os.path.join(work, "estimates.txt")
if os.path.exists(estimates) and os.path.getsize(estimates) > 0:
    print("\nestimation from the `est` base trace alone (lumos-model estimate), against runs:\n")
    print("| variant | --set | measured step ms | estimated ms | error |")
    print("|---|---|---:|---:|---:|")
    errors = []
    with open(estimates) as f:
        for line in f:
            variant, setting = line.split()
            measured = result(f"est-{variant}-plain")
            try:
                with open(os.path.join(work, f"est-{variant}.estimate.json")) as g:
                    est = json.load(g)["estimate"]["estimate"]["iteration_ns"] / 1e6
            except Exception:
                est = None
            if measured and est:
                error = 100 * (est - measured["median_ms"]) / measured["median_ms"]
                errors.append(abs(error))
                print(f"| {variant} x2 | {setting} | {measured['median_ms']:.3f} | {est:.3f} | "
                      f"{error:+.1f}% |")
            else:
                print(f"| {variant} x2 | {setting} | {measured['median_ms'] if measured else 'failed'}"
                      f" | {est or 'failed'} | - |")
    if errors:
        print(f"\nmean |error| {statistics.fmean(errors):.1f}%, max {max(errors):.1f}% "
              "(target: mean <= 3 %, max <= 6 %)")
PY
rm -rf "$work"
