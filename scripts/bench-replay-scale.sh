#!/usr/bin/env bash
# scripts/bench-replay-scale.sh [RUNS] [BASE_LUMOS_MODEL]: replay speed and memory on the 512-rank
# synth job (synth of the bundled DLRM example, 512 ranks x 5 iterations: 6.35 M events), the
# whole report included (iterations, breakdown, critical path and the rank's own path, GPU time
# by class, idle, launches, stragglers). Builds a Release lumos-model in build-bench/, runs
# `replay --stats` RUNS times (default 5) and prints the median of each phase, events/s and
# peak memory per event. With BASE_LUMOS_MODEL (another build's binary) the two alternate run
# by run, so both see the same machine load: docs/performance.md compares them side by side.
# Targets (issue 4, 16): load + graph + replay >= 5 M events/s, <= 150 bytes per event.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
base=${2:-}
build=${LUMOS_BENCH_BUILD:-build-bench}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLUMOS_BUILD_TESTS=OFF \
  -DLUMOS_BUILD_BENCHMARKS=ON >/dev/null
ninja -C "$build" lumos-model >/dev/null
model="$build/modeler/tools/lumos-model"
job=${LUMOS_BENCH_JOB:-/tmp/lumos-bench-synth512}
if [ ! -d "$job" ]; then
  "$model" synth examples/dlrm-8rank -o "$job" --ranks 512 --iterations 5 >/dev/null
fi
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for i in $(seq 1 "$runs"); do
  for side in new base; do
    bin=$model
    if [ "$side" = base ]; then
      [ -n "$base" ] || continue
      bin=$base
    fi
    "$bin" replay "$job" --stats >/dev/null 2>>"$out/$side.txt"
  done
done
python3 - "$out" "$base" <<'EOF'
import re, statistics, sys, os
out, base = sys.argv[1], sys.argv[2]
for side in (["new", "base"] if base else ["new"]):
    phases, rate, mem, per_event = {}, [], [], []
    for line in open(os.path.join(out, side + ".txt")):
        m = re.match(r"stats: (.+?)\s+([0-9.]+) s$", line.strip())
        if m:
            phases.setdefault(m.group(1), []).append(float(m.group(2)))
        m = re.search(r"([0-9]+) events.*?peak memory ([0-9.]+) MB, ([0-9]+) bytes/event", line)
        if m:
            events = int(m.group(1))
            mem.append(float(m.group(2)))
            per_event.append(int(m.group(3)))
    med = {k: statistics.median(v) for k, v in phases.items()}
    lgr = sum(med.get(k, 0) for k in ("load + per-rank graph", "align + finish", "simulate + validate"))
    print("%s (%s, medians of %d):" % (side, base if side == "base" else "this tree", len(mem)))
    for k, v in med.items():
        print("  %-28s %7.3f s" % (k, v))
    print("  load + graph + replay        %7.3f s: %.2f M events/s" % (lgr, events / lgr / 1e6))
    print("  total                        %7.3f s" % sum(med.values()))
    print("  peak memory                  %7.1f MB, %d bytes/event" % (statistics.median(mem), statistics.median(per_event)))
EOF
