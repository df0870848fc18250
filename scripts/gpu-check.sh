#!/usr/bin/env bash
# scripts/gpu-check.sh [OUT_DIR]: the checks that need a GPU, as one script for a GPU machine lent
# for a few minutes. It keeps to a time budget (BUDGET_S, default 420 s: the whole call stays
# under 8 minutes on one H200, where one run of the loop costs ~10 s) and runs its steps in order
# of value; a step that would not fit in what is left is skipped and the table says so. After
# every step (and every round of a long one) it rewrites its outputs, so a call cut short still
# brings back everything done until then. Every run's output is checked (exit status or signal,
# its JSON line, what the agent wrote: devices named, nothing lost, one record per call, closed
# cleanly), and a failure shows in the tables with its reason.
#
# Steps (STEPS_TO_RUN, default "checkers estimate windows overhead both estimate-more"; `kernels`
# only when named):
#   checkers       the cuda_tests checkers (ctest label `gpu`), each under a timeout;
#   estimate       the estimation set of scripts/gpu/train_loop.py (issue 24): the `est` base and
#                  its variants (layers, width, seq, batch x2), each traced (lumos-run) and plain,
#                  EST_ROUNDS interleaved rounds (default 1); each variant estimated from the base
#                  trace alone, and the base trace replayed; the traces kept;
#   windows        capture windows of the `gpt` size: periodic (3 steps every 5 s), on demand
#                  (lumos-ctl capture --iterations 3), and on demand without NVTX (the window's
#                  iterations from the kernel stream); each window replayed and kept;
#   overhead       the `gpt` (GPU-bound) and `small` (launch-bound) sizes, plain, under lumos-run,
#                  under torch.profiler and under a dormant lumos-run (on-demand, no window),
#                  ROUNDS interleaved rounds (default 5; the order of the ways turns each round);
#                  rounds stop when the budget would run out, and the table says how many ran;
#   both           once per size, lumos-run and torch.profiler in one job (two CUPTI clients: the
#                  job and the profiler's GPU timeline must both survive);
#   kernels        scripts/gpu/kernel_timings.py (issue 25): the validated layouts' layer GEMMs in
#                  FP8 with and without fast accumulation and in bf16, and fused causal attention
#                  at seq 2048 and 8192, timed with CUDA events, then two fc1 GEMMs run back to
#                  back for 3 s each in bf16 and FP8 (sustained against burst; about 50 s in all);
#                  its CSV kept as kernel-timings.csv;
#   estimate-more  more variants of the estimation set (gradient accumulation x2, layers and seq
#                  x2 at once, a bigger GPU-bound size, heads x2), MORE_ROUNDS interleaved rounds
#                  (default 5) traced and plain, as budget allows (usually a call of its own:
#                  STEPS_TO_RUN=estimate-more).
#
# On one H200 (a run ~10 s) the default order fits the checkers, the estimation set, the windows
# and two overhead rounds in 420 s; the five rounds the overhead targets ask for are a call of
# their own (STEPS_TO_RUN="overhead both", about 7 minutes), made while the machine is warm.
#
# Outputs in OUT_DIR (default $OUT, else gpu-check-out/), at most 8 files of at most 16 MiB:
# gpu-check.md (the tables), steps.csv (every run's step times, as
# ../shared/data/traces/h200-pytorch/steps.csv), log.txt (its last 8 MiB), traces.tar (+
# traces-2.tar, traces-3.tar: the kept agent traces, windows and profiler traces; left-out.txt
# names what did not fit). Binaries: from BUNDLE (default gpu-bundle/, made by
# scripts/gpu-bundle.sh and carried), else from build/. Without a GPU it says so and exits 0.
# Knobs: BUDGET_S, STEPS_TO_RUN, ROUNDS, EST_ROUNDS, MORE_ROUNDS, STEPS (measured steps per run,
# 40), SIZES (overhead sizes, "gpt small"), WINDOW_SIZES ("gpt"), PYTHON (python3), RUN_TIMEOUT
# (120 s per run), TEST_TIMEOUT (90 s per checker), RUN_COST_S (12: a run's cost until one is
# measured), DEVICE (cuda; `DEVICE=cpu SIZES=tiny WINDOW_SIZES=tiny EST_SCALE=tiny ROUNDS=1
# STEPS=3` rehearses the whole script with a CPU PyTorch: the checkers skip, the times mean
# nothing).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
out=${1:-${OUT:-gpu-check-out}}
mkdir -p "$out"
out=$(realpath "$out")
python=${PYTHON:-python3}
budget=${BUDGET_S:-420}
steps_to_run=${STEPS_TO_RUN:-checkers estimate windows overhead both estimate-more}
rounds=${ROUNDS:-5}
est_rounds=${EST_ROUNDS:-1}
more_rounds=${MORE_ROUNDS:-5}
steps=${STEPS:-40}
sizes=${SIZES:-gpt small}
window_sizes=${WINDOW_SIZES:-gpt}
run_timeout=${RUN_TIMEOUT:-120}
test_timeout=${TEST_TIMEOUT:-90}
device=${DEVICE:-cuda}
work=$(mktemp -d /tmp/gpu-check.XXXXXX)
log="$work/log.txt"
: >"$log"
mkdir -p "$work/replay" "$work/traces"
: >"$work/keep.tsv"
started=$SECONDS

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
for tool in "$lumos_run" "$lumos_ctl" "$lumos_model"; do
  if [ ! -x "$tool" ]; then
    echo "gpu-check: no $tool (run scripts/gpu-bundle.sh here and carry gpu-bundle)" | tee -a "$log"
    cp "$log" "$out/log.txt"
    exit 1
  fi
done
lumos_run=$(realpath "$lumos_run")
lumos_ctl=$(realpath "$lumos_ctl")
lumos_model=$(realpath "$lumos_model")
# libnccl for the NCCL checker's workload: the toolkit's, else the one PyTorch's wheel brings.
nccl_libs=$("$python" -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null)
tools_env=(env "LD_LIBRARY_PATH=${tool_libs}:/usr/local/cuda/lib64:${nccl_libs}:${LD_LIBRARY_PATH:-}")

# publish: the tables, steps.csv, the log's tail and the kept traces into $out, from scratch.
publish() {
  "$python" scripts/gpu/check_report.py "$work" "$out" >"$work/gpu-check.md" 2>>"$log" &&
    mv "$work/gpu-check.md" "$out/gpu-check.md"
  "$python" scripts/gpu/pack_outputs.py "$work/keep.tsv" "$out" 3 >>"$log" 2>&1
  tail -c $((8 * 1024 * 1024)) "$log" >"$out/log.txt"
}
trap 'publish; rm -rf "$work"' EXIT

# The time budget. A run's cost is the mean of those measured so far (RUN_COST_S until then).
run_count=0
run_seconds=0
run_cost() {  # run_cost N: seconds that N runs of the loop are expected to take.
  local each=${RUN_COST_S:-12}
  if [ "$run_count" -gt 0 ]; then each=$(((run_seconds + run_count - 1) / run_count)); fi
  echo $(($1 * each))
}
left() { echo $((budget - (SECONDS - started))); }
# begin_step NAME SECONDS: 0 when the step fits in what is left (it is then the current step),
# else 1, with the skip and its reason in the steps table.
step_name='' step_started=0
begin_step() {
  if [ "$2" -gt "$(left)" ]; then
    printf '%s\tskipped\t0\tneeds ~%s s, %s s of BUDGET_S=%s left\n' "$1" "$2" "$(left)" \
      "$budget" >>"$work/steps.tsv"
    return 1
  fi
  step_name=$1 step_started=$SECONDS
  echo "== step $1 (~$2 s expected, $(left) s left)" >>"$log"
}
end_step() {  # end_step [NOTE]
  printf '%s\tran\t%s\t%s\n' "$step_name" $((SECONDS - step_started)) "${1:-}" >>"$work/steps.tsv"
  publish
}
keep() { printf '%s\t%s\n' "$1" "$2" >>"$work/keep.tsv"; }  # keep NAME PATH: into traces.tar.

{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader || true
  "$python" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
  echo "budget ${budget} s; steps: ${steps_to_run}"
} >"$work/machine.txt" 2>&1
cat "$work/machine.txt" >>"$log"

# The loop's sizes.
est_layers=4 est_width=1024 est_heads=16 est_seq=1024 est_batch=4
if [ "${EST_SCALE:-}" = tiny ]; then est_layers=2 est_width=64 est_heads=4 est_seq=32 est_batch=2; fi
est_args() {  # est_args [LAYERS [WIDTH [SEQ [BATCH [HEADS [ACCUMULATE]]]]]]
  echo "--layers ${1:-$est_layers} --width ${2:-$est_width} --heads ${5:-$est_heads}" \
       "--seq ${3:-$est_seq} --batch ${4:-$est_batch} --accumulate ${6:-1}"
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
    est-accumulate) est_args "" "" "" "" "" 2 ;;
    est-layers-seq) est_args $((2 * est_layers)) "" $((2 * est_seq)) ;;
    est-big) est_args "" $((2 * est_width)) "" $((2 * est_batch)) ;;
    est-heads) est_args "" "" "" "" $((2 * est_heads)) ;;
  esac
}
# The --set of each estimation variant, against the base's --base.
est_set() {
  case $1 in
    layers) echo "layers=$((2 * est_layers))" ;;
    width) echo "hidden=$((2 * est_width)),ffn=$((8 * est_width))" ;;
    seq) echo "seq=$((2 * est_seq))" ;;
    batch) echo "mbs=$((2 * est_batch))" ;;
    accumulate) echo "micro_batches=2" ;;
    layers-seq) echo "layers=$((2 * est_layers)),seq=$((2 * est_seq))" ;;
    big) echo "hidden=$((2 * est_width)),ffn=$((8 * est_width)),mbs=$((2 * est_batch))" ;;
    heads) echo "heads=$((2 * est_heads))" ;;
  esac
}
est_base="layers=$est_layers,hidden=$est_width,ffn=$((4 * est_width)),heads=$est_heads"
est_base="$est_base,seq=$est_seq,mbs=$est_batch,micro_batches=1,world=1,dp=1,tp=1,pp=1"

# train TAG WAY SIZE [STEPS [FLAGS...]]: one run of the loop. WAY: plain, lumos (lumos-run,
# continuous), profiler (torch.profiler), both, dormant (on-demand, no window), periodic. Its
# JSON line in TAG.json, stderr in TAG.err, `inspect --json` of what the agent wrote in
# TAG.inspect.json; a row in runs.tsv (tag, way, size, exit status, seconds, step).
train() {
  local tag=$1 way=$2 size=$3 run_steps=${4:-$steps}
  shift 3
  [ $# -gt 0 ] && shift
  # shellcheck disable=SC2046,SC2207  # size_args is a word list on purpose.
  local command=("$python" scripts/gpu/train_loop.py --device "$device" --steps "$run_steps"
                 $(size_args "$size") "$@")
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
  local t0=$SECONDS status
  PYTHONUNBUFFERED=1 timeout "$run_timeout" "${command[@]}" >"$work/$tag.json" 2>"$work/$tag.err"
  status=$?
  finish_run "$tag" "$way" "$size" "$status" "$t0"
}
# finish_run TAG WAY SIZE STATUS T0: the run's row, its log lines, and inspect of its trace.
finish_run() {
  local tag=$1 seconds=$((SECONDS - $5))
  run_count=$((run_count + 1)) run_seconds=$((run_seconds + seconds))
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$tag" "$2" "$3" "$4" "$seconds" "$step_name" \
    >>"$work/runs.tsv"
  echo "$tag: exit $4 after $seconds s: $(tail -1 "$work/$tag.json")" >>"$log"
  tail -20 "$work/$tag.err" >>"$log"
  if [ -d "$work/traces/$tag" ]; then
    "${tools_env[@]}" timeout 60 "$lumos_model" inspect --json "$work/traces/$tag" \
      >"$work/$tag.inspect.json" 2>"$work/$tag.inspect.err"
  fi
}
# replay NAME TRACE_PATH: `lumos-model replay` into replay/NAME.txt, its status in .exit.
replay() {
  "${tools_env[@]}" timeout 60 "$lumos_model" replay "$2" --iteration '^step$' \
    >"$work/replay/$1.txt" 2>&1
  echo $? >"$work/replay/$1.exit"
  { echo "== replay $1"; cat "$work/replay/$1.txt"; } >>"$log"
}
# estimate VARIANT: the variant estimated from the base trace alone (est-lumos-r1).
estimate() {
  local variant=$1 set
  set=$(est_set "$variant")
  "${tools_env[@]}" timeout 60 "$lumos_model" estimate "$work/traces/est-lumos-r1" \
    --iteration '^step$' --base "$est_base" --set "$set" --json \
    >"$work/est-$variant.estimate.json" 2>"$work/est-$variant.estimate.err"
  printf '%s\t%s\t%s\n' "$variant" "$set" $? >>"$work/estimates.tsv"
  { echo "== estimate $variant: --set $set"; cat "$work/est-$variant.estimate.err"; } >>"$log"
}

# The steps, each a function.
step_checkers() {
  local checker name status summary count=0
  for checker in "$bin"/lumos_cuda_*_test; do [ -x "$checker" ] && count=$((count + 1)); done
  begin_step checkers $((count * 10)) || return
  for checker in "$bin"/lumos_cuda_*_test; do
    [ -x "$checker" ] || continue
    name=$(basename "$checker")
    echo "== $name" >>"$log"
    "${tools_env[@]}" CUDA_TESTS_LUMOS_RUN="$lumos_run" CUDA_TESTS_WORKLOADS="$(realpath "$bin")" \
      timeout "$test_timeout" "$checker" >"$work/$name.log" 2>&1
    status=$?
    cat "$work/$name.log" >>"$log"
    summary=$(grep -E '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+ test' "$work/$name.log" | tr '\n' ' ')
    [ -n "$summary" ] || summary=$(tail -1 "$work/$name.log")
    printf '%s\t%s\t%s\n' "$name" "$status" "$summary" >>"$work/checkers.tsv"
  done
  end_step "$count checkers"
}

# est_round ROUND VARIANT...: the base and each variant, traced then plain (tags
# SIZE-lumos-ROUND, SIZE-plain-ROUND), one round.
est_round() {
  local round=$1 variant size
  shift
  for variant in base "$@"; do
    size=est
    [ "$variant" = base ] || size=est-$variant
    train "$size-lumos-$round" lumos "$size"
    train "$size-plain-$round" plain "$size"
  done
}
step_estimate() {
  local variants="layers width seq batch" round variant
  begin_step estimate "$(run_cost $((10 * est_rounds + 1)))" || return
  for round in $(seq 1 "$est_rounds"); do
    # shellcheck disable=SC2086  # a word list on purpose.
    est_round "r$round" $variants
    publish
  done
  for variant in $variants; do estimate "$variant"; done
  replay est-base "$work/traces/est-lumos-r1"
  for variant in base $variants; do
    local size=est-$variant
    [ "$variant" = base ] && size=est
    keep "est/$variant" "$work/traces/$size-lumos-r1"
  done
  end_step "$est_rounds round(s)"
}
step_estimate_more() {
  local variants="accumulate layers-seq big heads" round done=0
  # The base's trace and the first round: at least what a round costs.
  begin_step estimate-more "$(run_cost 10)" || return
  for round in $(seq 1 "$more_rounds"); do
    if [ "$(run_cost 10)" -gt "$(left)" ]; then break; fi
    # shellcheck disable=SC2086  # a word list on purpose.
    est_round "m$round" $variants
    done=$round
    publish
  done
  if [ "$done" -gt 0 ] && [ ! -d "$work/traces/est-lumos-r1" ]; then
    cp -r "$work/traces/est-lumos-m1" "$work/traces/est-lumos-r1"
  fi
  local variant
  for variant in $variants; do
    [ "$done" -gt 0 ] && estimate "$variant"
    keep "est-more/$variant" "$work/traces/est-$variant-lumos-m1"
  done
  keep "est-more/base" "$work/traces/est-lumos-m1"
  end_step "$done of $more_rounds round(s)"
}

# ondemand_capture TAG MARKER SIZE WAY [train_loop.py flags]: the loop on demand (job TAG;
# MARKER, if not empty, as LUMOS_ITERATION_MARKER), and one 3-iteration `lumos-ctl capture --job
# TAG` once its agent answers and the warm-up steps are over; returns when the loop has ended.
ondemand_capture() {
  local tag=$1 marker=$2 size=$3 way=$4 loop t0=$SECONDS status
  shift 4
  # shellcheck disable=SC2046  # size_args is a word list on purpose.
  (export PYTHONUNBUFFERED=1 LUMOS_JOB_ID="$tag" LUMOS_MODE=on-demand
    if [ -n "$marker" ]; then export LUMOS_ITERATION_MARKER="$marker"; fi
    exec timeout "$run_timeout" "$lumos_run" -o "$work/traces/$tag" -- "$python" \
      scripts/gpu/train_loop.py --device "$device" "$@" --steps $((steps * 3)) \
      $(size_args "$size") >"$work/$tag.json" 2>"$work/$tag.err") &
  loop=$!
  for _ in $(seq 1 120); do
    "${tools_env[@]}" "$lumos_ctl" status 2>/dev/null | grep -q "$tag" && break
    kill -0 "$loop" 2>/dev/null || break
    sleep 0.5
  done
  sleep 3  # Past the warm-up steps.
  "${tools_env[@]}" timeout 60 "$lumos_ctl" capture --job "$tag" --iterations 3 \
    >"$work/$tag.capture.txt" 2>&1
  wait "$loop"
  status=$?
  finish_run "$tag" "$way" "$size" "$status" "$t0"
}
# window_row TAG MODE: windows.tsv's row (files written, how the iterations were found), the
# replay of the first window, and the window folder kept.
window_row() {
  local tag=$1 mode=$2 count how=""
  count=$(find "$work/traces/$tag" -name '*.pb.zst' 2>/dev/null | wc -l)
  local window
  window=$(find "$work/traces/$tag" -name '*.pb.zst' 2>/dev/null | sort | head -1)
  if [ -n "$window" ]; then
    # The CaptureWindow's texts, from the file's zstd frames (zstd, else Python's zstandard).
    how=$({ zstd -dcq "$window" 2>/dev/null ||
      "$python" -c 'import sys, zstandard; sys.stdout.buffer.write(zstandard.ZstdDecompressor().decompressobj().decompress(open(sys.argv[1], "rb").read()))' "$window" 2>/dev/null; } |
      LC_ALL=C grep -aoE '\(kernel stream: a period of [0-9]+ launches\)|no iteration marker seen[^;]*|iteration marker "[^"]*"' |
      sort -u | tr '\n' ' ')
    replay "$tag" "$(dirname "$window")"
    keep "windows/$tag" "$work/traces/$tag"
  fi
  printf '%s\t%s\t%s\t%s\n' "$tag" "$mode" "$count" "$how" >>"$work/windows.tsv"
}
step_windows() {
  local size count=0
  for size in $window_sizes; do count=$((count + 3)); done
  begin_step windows "$(run_cost $((count * 2)))" || return
  for size in $window_sizes; do
    train "$size-periodic" periodic "$size" $((steps * 3))
    window_row "$size-periodic" periodic
    ondemand_capture "$size-ondemand" step "$size" ondemand
    window_row "$size-ondemand" on-demand
    ondemand_capture "$size-nonvtx" "" "$size" nonvtx --no-nvtx
    window_row "$size-nonvtx" "on-demand, no NVTX"
    publish
  done
  end_step
}
step_overhead() {
  local per_round=0 size done=0 round ways way i
  for size in $sizes; do per_round=$((per_round + 4)); done
  begin_step overhead "$(run_cost "$per_round")" || return
  for round in $(seq 1 "$rounds"); do
    if [ "$round" -gt 1 ] && [ "$(run_cost "$per_round")" -gt "$(left)" ]; then break; fi
    # The ways in turn: round r starts at way r, so no way is always first or last.
    ways=(plain lumos profiler dormant)
    for size in $sizes; do
      for i in 0 1 2 3; do
        way=${ways[$(((i + round - 1) % 4))]}
        train "$size-$way-r$round" "$way" "$size"
      done
    done
    done=$round
    publish
  done
  for size in $sizes; do
    replay "$size" "$work/traces/$size-lumos-r1"
    keep "overhead/$size-lumos" "$work/traces/$size-lumos-r1"
    keep "overhead/$size-profiler-kineto.json.gz" "$work/$size-profiler-r1/torch_profiler.json.gz"
  done
  end_step "$done of $rounds round(s)"
}
step_kernels() {
  begin_step kernels 80 || return
  PYTHONUNBUFFERED=1 timeout "$run_timeout" "$python" scripts/gpu/kernel_timings.py \
    --device "$device" --out "$work/kernel-timings.csv" >>"$log" 2>&1
  local status=$?
  keep kernel-timings.csv "$work/kernel-timings.csv"
  end_step "kernel_timings.py exit $status"
}
step_both() {
  local size count=0
  for size in $sizes; do count=$((count + 1)); done
  begin_step both "$(run_cost "$count")" || return
  for size in $sizes; do
    train "$size-both" both "$size"
    keep "both/$size-agent" "$work/traces/$size-both"
    keep "both/$size-kineto.json.gz" "$work/$size-both/torch_profiler.json.gz"
  done
  end_step
}

for step in $steps_to_run; do
  case $step in
    checkers) step_checkers ;;
    estimate) step_estimate ;;
    windows) step_windows ;;
    overhead) step_overhead ;;
    both) step_both ;;
    estimate-more) step_estimate_more ;;
    kernels) step_kernels ;;
    *) printf '%s\tunknown\t0\tnot a step of gpu-check.sh\n' "$step" >>"$work/steps.tsv" ;;
  esac
done
echo "gpu-check: $((SECONDS - started)) s; tables in $out/gpu-check.md"
