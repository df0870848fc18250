#!/usr/bin/env bash
# scripts/bench-compare.sh BASE_COMMIT [ROUNDS] [WRITER_FILTER] [READER_FILTER]: the writer and
# reader benchmarks of BASE_COMMIT and of the working tree, side by side in one run on this
# machine. BASE_COMMIT is built in a git worktree under $TMPDIR (kept for reuse); the two
# builds run in alternation, ROUNDS times (default 5), so both see the same load, and the
# medians of items_per_second are printed per benchmark. A benchmark missing on one side
# prints "-" there. Release builds; tests off.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:?usage: scripts/bench-compare.sh BASE_COMMIT [ROUNDS] [WRITER_FILTER] [READER_FILTER]}
rounds=${2:-5}
writer_filter=${3:-'BM_Encode/names:1|BM_WriteTrace/zstd_level:[13]/frame_kib:1024/time_sorted:0/compact:0'}
reader_filter=${4:-'BM_ReadTrace|BM_ReadFrames|BM_ReadPackets|BM_Decompress'}
tmp=${TMPDIR:-/tmp}
base_sha=$(git rev-parse --short "$base")
worktree="$tmp/lumos-bench-$base_sha"

if [ ! -d "$worktree" ]; then
  git worktree add -q --detach "$worktree" "$base_sha"
fi
# The tests of older commits look for shared/ beside the checkout; benchmarks do not.
for dir in "$worktree" .; do
  cmake -S "$dir" -B "$dir/build-bench" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DLUMOS_BUILD_TESTS=OFF -DLUMOS_BUILD_BENCHMARKS=ON >/dev/null
  ninja -C "$dir/build-bench" lumos_writer_benchmark lumos_reader_benchmark >/dev/null
done

out="$tmp/lumos-bench-compare.$$"
mkdir -p "$out"
for round in $(seq "$rounds"); do
  for side in base head; do
    dir=$([ "$side" = base ] && echo "$worktree" || echo .)
    "$dir/build-bench/bench/lumos_writer_benchmark" --benchmark_filter="$writer_filter" \
      --benchmark_format=json >"$out/$side.writer.$round.json" 2>/dev/null
    "$dir/build-bench/bench/lumos_reader_benchmark" --benchmark_filter="$reader_filter" \
      --benchmark_format=json >"$out/$side.reader.$round.json" 2>/dev/null
  done
done

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "base $base_sha vs head $(git rev-parse --short HEAD)$(git diff --quiet || echo '+changes'), $rounds rounds, median M events/s"
python3 - "$out" "$rounds" <<'EOF'
import json, statistics, sys, glob, collections
out, rounds = sys.argv[1], int(sys.argv[2])
rates = collections.defaultdict(lambda: collections.defaultdict(list))
order = []
for side in ("base", "head"):
    for path in sorted(glob.glob(f"{out}/{side}.*.json")):
        for b in json.load(open(path)).get("benchmarks", []):
            name = b["name"]
            if name not in order:
                order.append(name)
            rates[name][side].append(b.get("items_per_second", 0) / 1e6)
print(f"{'benchmark':<70} {'base':>8} {'head':>8}")
for name in order:
    cells = [f"{statistics.median(rates[name][s]):8.2f}" if rates[name][s] else f"{'-':>8}"
             for s in ("base", "head")]
    print(f"{name:<70} {cells[0]} {cells[1]}")
EOF
rm -rf "$out"
