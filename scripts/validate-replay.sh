#!/usr/bin/env bash
# scripts/validate-replay.sh [BUILD_DIR]: imports every shared real trace (../shared/data/traces),
# replays it and prints the validation table of docs/validation.md (Markdown): per trace, ranks,
# iterations, measured and replayed mean iteration time, mean and max |error|, the largest
# breakdown difference (points), the error of the dependencies-only replay (how much the graph
# explains without the measured GPU queueing), and the graph's inferred and unexplained parts. Needs python3
# (formatting only).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
LUMOS_TARGETS=lumos-model bash scripts/build.sh "$build" >/dev/null
model="$build/modeler/tools/lumos-model"
traces=../shared/data/traces
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for input in "$traces"/dlrm-8rank-v100/dlrm_kineto.tar.gz "$traces"/hta-single-rank/*.json.gz; do
  name=$(basename "$input")
  name=${name%.tar.gz}
  name=${name%.json.gz}
  "$model" import kineto "$input" -o "$work/$name" >/dev/null
  "$model" replay "$work/$name" --json >"$work/$name.json"
  "$model" replay "$work/$name" --json --dependencies-only >"$work/$name.deps.json"
  echo "$input $work/$name.json $work/$name.deps.json"
done | python3 -c '
import json, sys
print("| trace | ranks | iterations | measured ms (mean) | replayed ms (mean) | mean abs error % | max abs error % | max breakdown diff (points) | dependencies only: mean / max abs error % | inferred waits / syncs | unexplained GPU waits |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for line in sys.stdin:
    source, path, deps_path = line.split()
    r = json.load(open(path))
    d = json.load(open(deps_path))["summary"]
    its = r["iterations"]
    def pct(b, k):
        t = sum(b.values())
        return 100.0 * b[k] / t if t else 0.0
    diff = max(abs(pct(i["measured_breakdown"], k) - pct(i["replayed_breakdown"], k))
               for i in its for k in i["measured_breakdown"])
    g = r["graph"]
    print("| %s | %d | %d | %.3f | %.3f | %.2f | %.2f | %.2f | %.2f / %.2f | %d / %d | %d (%.3f ms) |" % (
        source.replace("../shared/data/traces/", ""), len(r["ranks"]), len(its),
        sum(i["measured_ns"] for i in its) / len(its) / 1e6,
        sum(i["replayed_ns"] for i in its) / len(its) / 1e6,
        r["summary"]["mean_abs_error_percent"], r["summary"]["max_abs_error_percent"], diff,
        d["mean_abs_error_percent"], d["max_abs_error_percent"],
        g["inferred_event_waits"], g["inferred_syncs"], g["unexplained_gpu_waits"],
        g["unexplained_gpu_wait_ns"] / 1e6))
'
