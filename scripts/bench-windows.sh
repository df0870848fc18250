#!/usr/bin/env bash
# scripts/bench-windows.sh [BUILD_DIR] [RUNS]: does a capture window's start or end stall the
# job? Runs tests/agent/control/window_workload (a CPU-only loop: NVTX profiler steps, one fake
# NCCL all-reduce per step, 10 ms steps, 600 steps) RUNS times (default 5) each without the
# agent, under the agent in continuous mode, and in periodic mode with a window of 3 iterations
# every second (LUMOS_JITTER=0: about 6 windows, 12 window edges per run), and prints per mode
# the median over runs of the longest ProfilerStep push (where windows start and end: the job's
# thread decides it there) and of the longest NVTX or NCCL call, both from the second step on.
# On a shared machine the longest call is mostly preemption: compare the modes side by side.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
runs=${2:-5}
ninja -C "$build" window_workload lumos-run lumos_agent >/dev/null
workload="$build/tests/agent/control/window_workload"
fake_nccl="$build/tests/agent/nccl/fake_nccl"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-12s %22s %18s %8s\n' mode "max marker push (us)" "max call (us)" windows
for mode in none continuous periodic; do
  : >"$out/$mode.txt"
  windows=0
  for ((i = 0; i < runs; i++)); do
    rm -rf "$out/traces"
    if [[ $mode == none ]]; then
      line=$(LD_LIBRARY_PATH="$fake_nccl" "$workload" 600 10 | grep '^done')
    else
      line=$(LUMOS_MODE=$mode LUMOS_PERIOD_S=1 LUMOS_JITTER=0 LUMOS_WINDOW_ITERATIONS=3 \
        LUMOS_JOB_ID=bench LD_LIBRARY_PATH="$fake_nccl" \
        "$build/agent/tools/lumos-run" -o "$out/traces" -- "$workload" 600 10 | grep '^done')
      windows=$((windows + $(find "$out/traces" -name '*.pb.zst' | wc -l)))
    fi
    marker=$(sed 's/.*max_marker_push_ns=\([0-9]*\).*/\1/' <<<"$line")
    call=$(sed 's/.*max_call_ns=\([0-9]*\).*/\1/' <<<"$line")
    echo "$marker $call" >>"$out/$mode.txt"
  done
  m=$(cut -d' ' -f1 "$out/$mode.txt" | median)
  c=$(cut -d' ' -f2 "$out/$mode.txt" | median)
  printf '%-12s %22.1f %18.1f %8s\n' "$mode" "$(bc -l <<<"$m/1000")" "$(bc -l <<<"$c/1000")" \
    "$([[ $mode == periodic ]] && echo "$windows" || echo -)"
done
