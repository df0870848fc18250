#!/usr/bin/env bash
# scripts/check-same-output.sh BASE_REV [NEW_BUILD_DIR]: proof that a change kept lumos-model's
# behaviour. Builds lumos-model of BASE_REV (exported with `git archive` into
# build-same/src-<rev>/, kept there for the next run) and of the working tree (NEW_BUILD_DIR,
# default build/), runs the same commands with both on the shared real traces
# (../shared/data/traces: the h200-pytorch set, its windows, the imported PyTorch profiler
# traces), the bundled example and synthetic GPT jobs, and compares stdout, stderr, the exit
# status and every file written, byte for byte. Prints one line per case and a total; exits 1
# when any case differs (`diff` of the first lines of each difference is printed).
# Imports and synth jobs are compared too, then the base's copies are the inputs of both sides,
# so a difference shows where it starts. Takes about 2 minutes once both are built.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
base_rev=${1:?usage: scripts/check-same-output.sh BASE_REV [NEW_BUILD_DIR]}
new_build=${2:-build}
shared="$root/../shared/data"
[ -d "$shared/traces/h200-pytorch" ] || { echo "no $shared/traces/h200-pytorch" >&2; exit 2; }

rev=$(git rev-parse --short=12 "$base_rev^{commit}")
src="$root/build-same/src-$rev"
if [ ! -x "$src/build/modeler/tools/lumos-model" ]; then
  rm -rf "$src" && mkdir -p "$src"
  git archive "$rev" | tar -x -C "$src"
  echo "== building lumos-model of $rev in $src/build"
  (cd "$src" && LUMOS_TARGETS=lumos-model bash scripts/build.sh build \
    -DLUMOS_BUILD_BENCHMARKS=OFF -DLUMOS_BUILD_TESTS=OFF >/dev/null)
fi
echo "== building lumos-model of the working tree in $new_build"
LUMOS_TARGETS=lumos-model bash scripts/build.sh "$new_build" >/dev/null
base_lm="$src/build/modeler/tools/lumos-model"
new_lm="$root/$new_build/modeler/tools/lumos-model"

out="$root/build-same/out"
rm -rf "$out" && mkdir -p "$out/base" "$out/new" "$out/inputs"
inputs="$out/inputs"
cases=0
differ=0

# run NAME ARGS...: the command with each binary, in $out/{base,new}/NAME/ (its working
# directory, so relative outputs land there), then compared.
run() {
  local name=$1
  shift
  local side lm
  for side in base new; do
    lm=$base_lm
    [ "$side" = new ] && lm=$new_lm
    mkdir -p "$out/$side/$name"
    # A hang is an outcome too (rc 124), and must not stop the proof.
    (cd "$out/$side/$name" && set +e && timeout 120 "$lm" "$@" >stdout 2>stderr; echo $? >rc)
  done
  cases=$((cases + 1))
  local bytes
  bytes=$(du -sb "$out/new/$name" | cut -f1)
  if diff -r -q "$out/base/$name" "$out/new/$name" >/dev/null; then
    printf '%-44s same (%s bytes, exit %s)\n' "$name" "$bytes" "$(cat "$out/new/$name/rc")"
  else
    differ=$((differ + 1))
    printf '%-44s DIFFERENT\n' "$name"
    { diff -r "$out/base/$name" "$out/new/$name" || true; } | head -8 | sed 's/^/    /' || true
  fi
}

h200="$shared/traces/h200-pytorch"
step=(--iteration '^step$' --gpu H200-SXM-141GB)
fixed="micro_batches=1,world=1,dp=1,tp=1,pp=1"

# Imports: compared, then the base's outputs are every later case's inputs.
declare -A imports=(
  [dlrm-kineto]="$shared/traces/dlrm-8rank-v100/dlrm_kineto.tar.gz"
  [hta-control]="$shared/traces/hta-single-rank/control.json.gz"
  [hta-df-index]="$shared/traces/hta-single-rank/df_index_resolver.json.gz"
  [hta-event-sync]="$shared/traces/hta-single-rank/event_sync_trace.json.gz"
  [hta-nccl]="$shared/traces/hta-single-rank/nccl_data.json.gz"
  [hta-rank0]="$shared/traces/hta-single-rank/rank0.json.gz"
  [h200-est-base-kineto]="$h200/est-base-kineto.json.gz"
  [h200-gpt-both-kineto]="$h200/gpt-both-kineto.json.gz"
)
for name in $(printf '%s\n' "${!imports[@]}" | sort); do
  run "import-$name" import kineto "${imports[$name]}" -o "$name/"
  cp -r "$out/base/import-$name/$name" "$inputs/$name"
done
run synth-gpt synth gpt -o gpt --set layers=4
cp -r "$out/base/synth-gpt/gpt" "$inputs/gpt"
run synth-gpt-nonvtx synth gpt -o gpt-nonvtx --set layers=4,dp=2 --no-nvtx
cp -r "$out/base/synth-gpt-nonvtx/gpt-nonvtx" "$inputs/gpt-nonvtx"

# Every trace set: inspect, replay (text, JSON), structure, export, summarize.
declare -A traces=(
  [example]="$root/examples/dlrm-8rank"
  [est-base]="$h200/est-base.pb.zst"
  [est-layers]="$h200/est-layers.pb.zst"
  [est-width]="$h200/est-width.pb.zst"
  [est-seq]="$h200/est-seq.pb.zst"
  [est-batch]="$h200/est-batch.pb.zst"
  [gpt-lumos]="$h200/gpt-lumos.pb.zst"
  [gpt-both]="$h200/gpt-both.pb.zst"
  [small-lumos]="$h200/small-lumos.pb.zst"
  [two-streams]="$h200/two-streams.pb.zst"
  [windows-periodic]="$h200/windows/periodic"
  [windows-on-demand]="$h200/windows/on-demand"
  [gpt]="$inputs/gpt"
  [gpt-nonvtx]="$inputs/gpt-nonvtx"
)
for name in "${!imports[@]}"; do traces[$name]="$inputs/$name"; done
for name in $(printf '%s\n' "${!traces[@]}" | sort); do
  t=${traces[$name]}
  run "inspect-$name" inspect "$t" --json
  run "replay-$name" replay "$t"
  run "replay-json-$name" replay "$t" --json
  run "structure-$name" structure "$t" --json
  # Revisions before 2026-12-04 hang here: a copy in the periodic windows' second file has a
  # broken start (56 years early), and export's GPU-busy track walked its 100 µs bins one by one.
  [ "$name" != windows-periodic ] && run "export-$name" export "$t" -o trace.json
  run "summarize-$name" summarize "$t" -o summary
done
for name in est-base est-layers est-width gpt-lumos small-lumos windows-periodic; do
  run "replay-step-$name" replay "${traces[$name]}" --iteration '^step$' --json
done
run replay-timeline-example replay "${traces[example]}" --timeline timeline.json
run replay-whatif-example replay "${traces[example]}" --json --scale 'kernel:gemm=0.5' \
  --scale comm=2 --scale host=0.8 --drop-gaps
run replay-dependencies-only-example replay "${traces[example]}" --json --dependencies-only
run replay-timeline-gpt replay "${traces[gpt]}" --timeline timeline.json
run summarize-csv-windows summarize "$h200/windows" -o summary --format csv

# Estimates: identity and layers x2 on the measured H200 runs (their sizes given with --base),
# other changes on est-base, the synthetic jobs, the example.
declare -A sizes=(
  [est-base]="layers=4,hidden=1024,ffn=4096,heads=16,seq=1024,mbs=4"
  [est-layers]="layers=8,hidden=1024,ffn=4096,heads=16,seq=1024,mbs=4"
  [est-width]="layers=4,hidden=2048,ffn=8192,heads=16,seq=1024,mbs=4"
  [est-seq]="layers=4,hidden=1024,ffn=4096,heads=16,seq=2048,mbs=4"
  [est-batch]="layers=4,hidden=1024,ffn=4096,heads=16,seq=1024,mbs=8"
  [gpt-lumos]="layers=4,hidden=2048,ffn=8192,heads=16,seq=1024,mbs=8"
  [small-lumos]="layers=4,hidden=512,ffn=2048,heads=8,seq=256,mbs=2"
)
for name in $(printf '%s\n' "${!sizes[@]}" | sort); do
  layers=$(echo "${sizes[$name]}" | sed 's/layers=\([0-9]*\).*/\1/')
  for set in "layers=$layers" "layers=$((layers * 2))"; do
    run "estimate-$name-$set" estimate "${traces[$name]}" "${step[@]}" \
      --base "${sizes[$name]},$fixed" --set "$set" --json
  done
done
for set in hidden=2048 seq=2048 mbs=8 dp=8 gpu=H100-SXM5-80GB "dp=64,net=ib100"; do
  run "estimate-est-base-$set" estimate "${traces[est-base]}" "${step[@]}" \
    --base "${sizes[est-base]},$fixed" --set "$set" --json
done
run estimate-text-est-base estimate "${traces[est-base]}" "${step[@]}" \
  --base "${sizes[est-base]},$fixed" --set layers=8
run estimate-timeline-est-base estimate "${traces[est-base]}" "${step[@]}" \
  --base "${sizes[est-base]},$fixed" --set layers=8 --timeline timeline.json
for set in layers=4 layers=8 micro_batches=4 dp=16 gpu=A100-SXM4-80GB hidden=2048 seq=2048; do
  run "estimate-gpt-$set" estimate "${traces[gpt]}" --set "$set" --json
done
run estimate-sweep-gpt estimate "${traces[gpt]}" --set layers=4 --sweep 'layers=2,8;mbs=1,4;dp=2,8'
run estimate-gpt-nonvtx estimate "${traces[gpt-nonvtx]}" --set layers=8 --json
run estimate-example estimate "${traces[example]}" --set net=ib400 --json
run estimate-example-layers estimate "${traces[example]}" --set layers=2 --json

# Diffs.
run diff-est-base-layers diff "${traces[est-base]}" "${traces[est-layers]}" --iteration '^step$' --json
run diff-text-est-base-width diff "${traces[est-base]}" "${traces[est-width]}" --iteration '^step$'
run diff-windows diff "${traces[windows-periodic]}" "${traces[windows-on-demand]}" --json
run diff-example-import diff "${traces[example]}" "${traces[dlrm-kineto]}" --json
run diff-gpt diff "${traces[gpt]}" "${traces[gpt-nonvtx]}" --json

# Cost models: fitted on the tables alone and with traces; queries of every kind.
run costs-fit-tables costs fit "$shared/costs" -o costs.json
# The H200 traces name no GPU in their headers (a defect of the agent's first run), so `costs fit`
# refuses them (compared too); the synthetic job and the example calibrate.
run costs-fit-h200 costs fit "$shared/costs" "$h200/est-base.pb.zst" -o costs.json
run costs-fit-traces costs fit "$shared/costs" "$root/examples/dlrm-8rank" "$inputs/gpt" \
  -o costs.json
cp "$out/base/costs-fit-tables/costs.json" "$inputs/costs-tables.json"
cp "$out/base/costs-fit-traces/costs.json" "$inputs/costs-traces.json"
printf 'm,n,k,dtype\n8192,8192,8192,bf16\n3000,5000,7000,bf16\n1024,4096,1024,bf16\n4096,4096,4096,fp8\n77,12288,4096,fp16\n' \
  >"$inputs/gemm-queries.csv"
printf 'op,dtype,ranks,bytes\nall_reduce,bfloat16,64,1073741824\nall_reduce,bfloat16,8,1073741824\nall_gather,bfloat16,16,65536\nreduce_scatter,float,4,1048576\nalltoall,half,8,33554432\n' \
  >"$inputs/collective-queries.csv"
printf 'class,dtype,bytes,flops\nelementwise,bf16,1048576,0\nnorm,bf16,4194304,1000000\nmemcpy HtoD pinned,fp32,67108864,0\nmemset,fp32,1024,0\n' \
  >"$inputs/kernel-queries.csv"
for model in tables traces; do
  for gpu in "NVIDIA H100 80GB HBM3" H200-SXM-141GB A100-SXM4-80GB; do
    for kind in gemm collective kernel; do
      run "costs-predict-$model-$kind-${gpu// /_}" costs predict "$inputs/costs-$model.json" \
        "$inputs/$kind-queries.csv" --gpu "$gpu" --net ib800
    done
  done
done

echo "== $cases cases, $differ different (base $rev: $base_lm; new: $new_lm)"
[ "$differ" -eq 0 ]
