#!/usr/bin/env bash
# scripts/validate-megatron-forward.sh [BUILD_DIR]: docs/validation.md's "A real Megatron-LM
# forward against the plan's layer model": the one public Kineto profile of Megatron-LM we hold
# (tests/data/megatron-tp8-a100: 8 A100-SXM4-80GB, fp16, GPT of 40 layers, hidden 4096, ffn
# 16384, 64 heads, micro-batch 4, seq 2048, tp 8, unfused attention, one forward-only step)
# against `lumos-model estimate --model` of the same layout (the cost model every planning
# validation uses, scripts/plan-validation-setup.sh). Its GEMMs are a score (NVIDIA's tables);
# its non-GEMM kernels are what that cost model's elementwise, norm and softmax classes are
# calibrated on (data/costs/kernels_a100_megatron.csv), so the forward total checks consistency.
# Compared: (1) each GEMM of a layer, the median of its 40 kernels (in call order, six a layer:
# QKV, the attention's two batched GEMMs, the projection, fc1, fc2; then the LM head) against
# `costs predict` of its shape; (2) the forward's GPU time without NCCL (median over the 8
# ranks; their all-reduces are mostly waits for each other) against the modelled forward of a
# micro-batch less its tensor-parallel collectives (half of tp_comm_ms: two of the four a layer).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/plan-validation-setup.sh "$@"  # $lm, $work, $work/costs.json
# No dropout ran: no dropout kernel over the attention's probabilities, and the fused
# bias-dropout-add takes four pointers (input, bias, residual, output: no mask); dropout=0.
model=gpt:layers=40,hidden=4096,heads=64,seq=2048,vocab=51200,ffn=16384,dropout=0
"$lm" estimate --model "$model" --gpu A100-SXM4-80GB --costs "$work/costs.json" \
  --set tp=8,pp=1,dp=1,mbs=4,gbs=4,flash_attention=0,sequence_parallel=0 --json >"$work/plan.json"
# The layer's GEMMs as the plan costs them (pass_work.cc), tokens in m (8192 = mbs 4 x seq
# 2048), per GPU at tp 8; the attention's batched GEMMs as one of 4 x 8 heads x 2048 rows
# (TimeUnfusedAttention), where Megatron runs them batched.
cat >"$work/gemms.csv" <<'CSV'
gpu,dtype,m,n,k
A100-SXM4-80GB,bf16,8192,1536,4096
A100-SXM4-80GB,bf16,65536,2048,128
A100-SXM4-80GB,bf16,65536,128,2048
A100-SXM4-80GB,bf16,8192,4096,512
A100-SXM4-80GB,bf16,8192,2048,4096
A100-SXM4-80GB,bf16,8192,4096,2048
A100-SXM4-80GB,bf16,8192,6400,4096
CSV
"$lm" costs predict "$work/costs.json" "$work/gemms.csv" -o "$work/predicted.csv"
python3 - "$work/plan.json" "$work/predicted.csv" tests/data/megatron-tp8-a100 <<'PY'
import csv, gzip, json, statistics, sys
plan = json.load(open(sys.argv[1]))["searches"][0]["ranked"][0]
predicted = [float(r["predicted_us"]) for r in csv.DictReader(open(sys.argv[2]))]
names = ["QKV", "attention Q K^T (batched)", "attention P V (batched)", "projection", "fc1", "fc2",
         "LM head"]
per_rank, gemm_by_position = [], [[] for _ in names]
for rank in range(8):
    events = json.load(gzip.open(f"{sys.argv[3]}/megatron_kineto_{rank}.json.gz"))["traceEvents"]
    kernels = sorted((e for e in events if e.get("ph") == "X" and e.get("cat") in ("kernel", "Kernel")),
                     key=lambda e: e["ts"])
    per_rank.append(sum(e["dur"] for e in kernels if "nccl" not in e["name"].lower()) / 1e3)
    gemms = [e for e in kernels if any(w in e["name"].lower() for w in ("gemm", "xmma"))]
    if len(gemms) != 241:
        sys.exit(f"rank {rank}: {len(gemms)} GEMM kernels, not 40 x 6 + 1")
    for i, e in enumerate(gemms[:240]):
        gemm_by_position[i % 6].append(e["dur"])
    gemm_by_position[6].append(gemms[240]["dur"])
print("| GEMM (a layer's, per GPU) | kernels | measured median us | the table's us | table / measured |")
print("|---|---:|---:|---:|---:|")
for name, durations, table in zip(names, gemm_by_position, predicted):
    measured = statistics.median(durations)
    print(f"| {name} | {len(durations)} | {measured:.1f} | {table:.1f} | {table / measured:.3f} |")
measured = statistics.median(per_rank)
modelled = plan["forward_ms"] - plan["tp_comm_ms"] / 2
print()
print(f"forward GPU time without NCCL: measured {measured:.1f} ms (median of 8 ranks, "
      f"{min(per_rank):.1f}-{max(per_rank):.1f}); modelled {modelled:.1f} ms "
      f"(forward {plan['forward_ms']:.1f} less half the TP collectives {plan['tp_comm_ms']:.1f}): "
      f"{100 * (modelled / measured - 1):+.1f} %")
PY
