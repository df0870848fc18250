#!/usr/bin/env bash
# scripts/import-sizes.sh [TRACES_DIR] [OUT_DIR]: converts every Kineto trace of the shared
# set with `lumos-model import kineto` and compares sizes and event counts with the originals.
#   TRACES_DIR  default /work/shared/data/traces (dlrm-8rank-v100/dlrm_kineto.tar.gz: 8 ranks;
#               hta-single-rank/*.json.gz: one rank each). PyTorch ET archives are skipped.
#   OUT_DIR     default $TMPDIR/lumos-import-sizes (the converted traces stay there).
# Environment: LUMOS_MODEL (default build-bench/modeler/tools/lumos-model; scripts/bench.sh
# builds it), ZSTD_LEVEL (passed as --zstd-level when set).
# Prints one markdown table: per trace, the original compressed size (.json.gz; for the
# tar.gz set, each rank's JSON gzipped with `gzip -6`, and the archive itself in the total
# row), the .pb.zst size, their ratio (target <= 1/3), and event counts: complete ("X")
# events in the JSON against the timed packets read back with `lumos-model inspect --json`.
set -euo pipefail
cd "$(dirname "$0")/.."
traces=${1:-/work/shared/data/traces}
out=${2:-${TMPDIR:-/tmp}/lumos-import-sizes}
model=${LUMOS_MODEL:-build-bench/modeler/tools/lumos-model}
level_args=()
if [ -n "${ZSTD_LEVEL:-}" ]; then level_args=(--zstd-level "$ZSTD_LEVEL"); fi

if ! "$model" import kineto --help >/dev/null 2>&1; then
  echo "import-sizes.sh: '$model import kineto --help' does not work; build lumos-model first" \
       "(scripts/bench.sh builds it in build-bench/)" >&2
  exit 1
fi
have_inspect_json=1
"$model" inspect --help 2>&1 | grep -q -- "--json" || have_inspect_json=0

rm -rf "$out"
mkdir -p "$out/json"

# Counts the complete events ("ph": "X") of a Kineto JSON (.json or .json.gz).
source_events() {
  python3 - "$1" <<'EOF'
import gzip, json, sys
path = sys.argv[1]
opener = gzip.open if path.endswith(".gz") else open
with opener(path, "rt", encoding="utf-8", errors="replace") as f:
    doc = json.load(f)
events = doc.get("traceEvents", []) if isinstance(doc, dict) else doc
print(sum(1 for e in events if isinstance(e, dict) and e.get("ph") == "X"))
EOF
}

# Timed packets (events) of a .pb.zst, and the events the importer reported as skipped.
imported_events() {
  "$model" inspect --json "$1" | python3 -c '
import json, sys
doc = json.load(sys.stdin)
f = doc["files"][0]
untimed = {"frame", "interned", "header", "trailer", "clock_snapshot", "thread"}
events = sum(n for kind, n in f["packets"].items() if kind not in untimed and kind != "loss")
print(events, f.get("loss", {}).get("import_skipped", 0))
'
}

row() {  # row NAME ORIGINAL_BYTES PB_ZST SOURCE_JSON
  local name=$1 original=$2 pb=$3 json=$4
  local bytes ratio verdict src imp skipped
  bytes=$(stat -c %s "$pb")
  ratio=$(python3 -c "print(f'{$bytes / $original:.3f}')")
  verdict=$(python3 -c "print('met' if $bytes * 3 <= $original else 'missed')")
  src=$(source_events "$json")
  if [ "$have_inspect_json" = 1 ]; then
    read -r imp skipped < <(imported_events "$pb")
  else
    imp="n/a" skipped="n/a"
  fi
  printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' \
    "$name" "$original" "$bytes" "$ratio" "$verdict" "$src" "$imp" "$skipped"
}

echo "lumos-model: $model; outputs in $out"
echo
echo "| trace | original bytes | .pb.zst bytes | ratio | <= 1/3 | JSON X events | imported events | skipped |"
echo "|---|---:|---:|---:|---|---:|---:|---:|"

for gz in "$traces"/hta-single-rank/*.json.gz; do
  [ -e "$gz" ] || continue
  name=$(basename "$gz" .json.gz)
  "$model" import kineto "$gz" -o "$out/$name.pb.zst" "${level_args[@]}" >/dev/null
  row "hta/$name" "$(stat -c %s "$gz")" "$out/$name.pb.zst" "$gz"
done

for tgz in "$traces"/*/*.tar.gz; do
  [ -e "$tgz" ] || continue
  set_name=$(basename "$tgz" .tar.gz)
  mkdir -p "$out/json/$set_name"
  tar -xzf "$tgz" -C "$out/json/$set_name"
  mapfile -t jsons < <(find "$out/json/$set_name" -name '*.json' | sort)
  if [ "${#jsons[@]}" -eq 0 ] || python3 -c '
import json, sys
with open(sys.argv[1]) as f: doc = json.load(f)
sys.exit(0 if isinstance(doc, dict) and "nodes" in doc else 1)' "${jsons[0]}"; then
    echo "| $set_name | (skipped: not Kineto JSON, e.g. a PyTorch Execution Trace) | | | | | | |"
    continue
  fi
  "$model" import kineto "$tgz" -o "$out/$set_name" "${level_args[@]}" >/dev/null
  total_pb=0
  total_gz=0
  for json in "${jsons[@]}"; do
    stem=$(basename "$json" .json)
    gzip -6 -c "$json" > "$json.gz"
    pb=$(find "$out/$set_name" -name "$stem*.pb.zst" | head -n 1)
    if [ -z "$pb" ]; then
      echo "| $set_name/$stem | (no output found for this rank) | | | | | | |"
      continue
    fi
    row "$set_name/$stem" "$(stat -c %s "$json.gz")" "$pb" "$json"
    total_pb=$((total_pb + $(stat -c %s "$pb")))
    total_gz=$((total_gz + $(stat -c %s "$json.gz")))
  done
  archive=$(stat -c %s "$tgz")
  printf '| %s (all ranks) | %s (archive %s) | %s | %s | %s | | | |\n' "$set_name" "$total_gz" \
    "$archive" "$total_pb" "$(python3 -c "print(f'{$total_pb / $total_gz:.3f}')")" \
    "$(python3 -c "print('met' if $total_pb * 3 <= $total_gz else 'missed')")"
done
if [ "$have_inspect_json" = 0 ]; then
  echo
  echo "(lumos-model inspect has no --json: imported event counts skipped)"
fi
