#!/usr/bin/env bash
# scripts/validate-attention.sh [BUILD_DIR]: docs/validation.md's "Attention calibrated from a
# traced run". The attention class is fitted on one real H200 run (gpt-lumos: batch 8, 16 heads,
# seq 1024, head size 128, causal; `costs fit --attention`) and scored on the other sizes of the
# same loop traced that day (est-*: the base, layers x2, width x2, seq x2, batch x2), which the fit
# never reads: predicted forward + backward attention kernel time against the traced mean per
# pair (replay's GPU time by class: attention time / count x 2). Beside it the roofline alone
# (a model fitted on the shared tables, which have no attention). Deterministic.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
LUMOS_TARGETS="lumos-model" bash scripts/build.sh "$build" >/dev/null
lm="$build/modeler/tools/lumos-model"
data=../shared/data/traces/h200-pytorch
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gpu=H200-SXM-141GB
"$lm" costs fit "$data/gpt-lumos.pb.zst" --gpu "$gpu" \
  --attention batch=8,heads=16,seq_q=1024,head_dim=128 -o "$work/fitted.json" >/dev/null
"$lm" costs fit ../shared/data/costs -o "$work/tables.json" >/dev/null
echo "| trace | batch | heads | seq | head size | traced us (fwd+bwd) | calibrated us | error | roofline us | error |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
# trace | batch | heads | seq | head size (width / 16 heads)
rows="gpt-lumos (fitted on)|8|16|1024|128
est-base|4|16|1024|64
est-layers|4|16|1024|64
est-width|4|16|1024|128
est-seq|4|16|2048|64
est-batch|8|16|1024|64"
echo "$rows" | while IFS='|' read -r name batch heads seq dim; do
  file=${name%% *}
  {
    echo "class,dtype,batch,heads,seq_q,head_dim,causal,backward,bytes,flops"
    echo "attention,bf16,$batch,$heads,$seq,$dim,1,0,,"
    echo "attention,bf16,$batch,$heads,$seq,$dim,1,1,,"
  } >"$work/q.csv"
  fitted=$("$lm" costs predict "$work/fitted.json" "$work/q.csv" --gpu "$gpu")
  roofline=$("$lm" costs predict "$work/tables.json" "$work/q.csv" --gpu "$gpu")
  "$lm" replay "$data/$file.pb.zst" --json >"$work/replay.json" 2>/dev/null
  python3 - "$name" "$batch" "$heads" "$seq" "$dim" "$fitted" "$roofline" "$work/replay.json" <<'PY'
import csv, io, json, sys
name, batch, heads, seq, dim, fitted, roofline, traced = sys.argv[1:]
def pair(text):
    rows = list(csv.DictReader(io.StringIO(text)))
    return sum(float(r["predicted_us"]) for r in rows)
att = [c for c in json.load(open(traced))["gpu_time_by_class"]["job"] if c["class"] == "attention"][0]
measured = att["measured_ns"] / att["count"] * 2 / 1e3
f, r = pair(fitted), pair(roofline)
print(f"| {name} | {batch} | {heads} | {seq} | {dim} | {measured:.1f} | {f:.1f} | {100 * (f / measured - 1):+.1f} % | {r:.1f} | {100 * (r / measured - 1):+.1f} % |")
PY
done
