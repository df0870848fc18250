#!/usr/bin/env bash
# scripts/validate-plan-bridge.sh [BUILD_DIR]: docs/validation.md's "Planning without a trace:
# Llama 3 and 3.1 (8B, 70B, 405B) on H100, H200, B200 and GB200": `lumos-model estimate --model`
# (both paths) for the
# dense DGX-H100 rows of NVIDIA's published Megatron-Bridge performance tables (Llama 3 70B;
# Llama 3.1 405B with context parallelism and the embedding and loss counted in its pipeline
# split) and the DGXC 405B step times of ../shared/docs/estimation-anchors.md, against the
# measured throughput or step they give.
# Source (Apache-2.0), scored only in the last column: NVIDIA-NeMo/Megatron-Bridge
#   docs/performance-summary.md @ 00b7660b (NeMo 25.11, "System: DGX-H100", LLAMA3_70B, FP8-CS)
#   docs/performance-summary-archive.md @ 0a25f911 (NeMo 26.02, "Model: LLAMA3_70B", DGX-H100)
# Settings the tables leave out, read from the recipes they name (inputs, never the results):
#   scripts/performance/configs/llama/llama3_workload_base_configs.py @ 00919dcf: H100 FP8-CS
#     tp 4, pp 8, vp 5, cp 1, mbs 1 (the base), GBS 128 (V1) and 256 (V2), 64 GPUs;
#   scripts/performance/configs/llama/llama3_llm_pretrain.py @ 2a0d46e2: seq 8192, vocab 128256,
#     gradients reduced in bf16 (grad_reduce_in_fp32 False), TP overlap (userbuffers
#     fp8_h100_h8192_tp4_mbs1_seqlen8192);
#   src/megatron/bridge/recipes/llama/llama3.py (llama3_70b_pretrain_config, _pretrain_common):
#     sequence parallel, distributed optimizer, overlap_grad_reduce and overlap_param_gather,
#     no recomputation named; src/megatron/bridge/training/comm_overlap.py: overlap_p2p_comm
#     when vp > 1.
#   scripts/performance/configs/llama/llama31_workload_base_configs.py: H100 FP8-CS 405B tp 8,
#     pp 8, cp 2, vp 8 on 1,024 GPUs, GBS 512 (V1) and 1536 (V2); llama31_llm_pretrain.py: TP
#     overlap (userbuffers fp8_h100_h16384_tp8_cp2), bf16 gradients; the recipe
#     (llama31_405b_pretrain_config): account_for_embedding/loss_in_pipeline_split.
#   DGXC (anchors): only tp, pp, cp, vp, GBS and the step are given; the rest is assumed as the
#     Bridge recipe's (not read from DGXC's scripts), but FP8 with delayed scaling (NeMo's
#     scripts/performance default, fp8_recipe "ds").
# GEMMs column: fp8 (delayed scaling), fp8pg (delayed, weights all-gathered in FP8: MLPerf's
#   FP8_PARAMS=True), fp8cs (current scaling with FP8 weight gathers: the Bridge recipe's
#   bf16_with_fp8_current_scaling_mixed sets fp8_param_gather), bf16.
# FP8-CS (the Bridge tables' precision): per-tensor current scaling (fp8_current_scaling=1),
#   every layer in FP8 (the performance configs turn the recipe's bf16 first and last layers
#   off: scripts/performance/utils get_precision_config).
# MLPerf Training v5.1, Llama 3.1 405B on H200 (mlcommons/training_results_v5.1 @ 441d65f4,
#   Nebius/benchmarks/llama31_405b/implementations/nebius_h200_n{64,128}: config_DGXH200_64x8x144x
#   tp4pp8cp2.sh and config_DGXH200_128x8x72xtp4pp8cp2.sh, config_common.sh, conf/custom.yaml):
#   tp 4, pp 8, cp 2, vp 8, mbs 1, GBS 1152, the full 126 layers, the embedding and loss in the
#   split (ASYM_PP_EMBED/LOSS), vocab 32000 (the benchmark's tokenizer), FP8 (delayed scaling),
#   TP overlap, overlapped gradient reduction and weight gather, overlap_p2p_comm, bf16
#   gradients, no recomputation. Scored: the median `train_step_time` over each result's three
#   logs (its DeltaTimingCallback: the wall time of one 1152-sample step) and rank 0's logged
#   `max_memory_usage` (GiB: the two scales differ by 4.221, the 12-byte optimizer state of rank
#   0's 12,086,378,496 parameters over 16 against 32 ranks), against the memory model's stage 0.
# MLPerf Training v5.1, Llama 3.1 8B on H100 (Cisco hpf_n8 and hpf_n16, the same repository:
#   Cisco/benchmarks/llama31_8b/implementations/nemo/config_DGXH100_8x8x1xtp1pp1cp1.sh and
#   config_DGXH100_16x8x1xtp2pp1cp1.sh, config_common.sh, conf/custom.yaml): tp 1 on 64 GPUs
#   and tp 2 (sequence parallel, TP overlap) on 128, pp 1, cp 1, mbs 1, one micro-batch a
#   replica (GBS 64, as logged), seq 8192, FP8, distributed optimizer with overlapped gradient
#   reduction and weight gather, no recomputation; vocab 128256 (the benchmark's Llama 3.1
#   tokenizer: mlcommons/training small_language_model_pretraining/nemo/README.md); gradients in
#   bf16 assumed as in the 405B implementation. Scored: the median over each setting's ten logs
#   of the median per-step `train_step_time` (the lines with reduced_train_loss; throughput
#   86.5 samples/s = 64 / 0.74 s confirms one line is one 64-sample step) and rank 0's
#   `max_memory_usage`.
# MLPerf Training v5.1, Llama 3.1 8B on 64 H200s (HPE, HPE/results/HPE-Cray-XD670-H200-SXM5-141GB_
#   n8_25.09: 8 nodes of 8, its log's DLPAL line names XD670_8x8x1xtp1pp1cp2_8b;
#   HPE/benchmarks/llama3_8b/implementations/nemo-x86_64/config_XD670_8x8x1xtp1pp1cp2_8b.sh,
#   config_common.sh, config_common_cg.sh): tp 1, pp 1, cp 2, mbs 1, one micro-batch a replica
#   (GBS 32), FP8 tensorwise (current scaling) with FP8 weight gathers, distributed optimizer,
#   overlapped reduction and gather. Not modelled: its FP8 attention (config_common_fp8attn.sh;
#   the model's attention is bf16) and its full-iteration CUDA graph (the model has no host time).
#   Scored: the median over its ten logs of the median per-step `train_step_time`; no memory is
#   logged.
# MLPerf Training v5.0, Llama 3.1 405B on 512 to 8,192 H100s (NVIDIA's eos-dfw, mlcommons/
#   training_results_v5.0 @ 0fdc28f0: NVIDIA/results/eos-dfw_n{64,256,304,320,1024}_ngc25.01_nemo,
#   NVIDIA/benchmarks/llama31_405b/implementations/*/config_DGXH100_{64x8x288,256x8x72,
#   304x8x64,320x8x56,1024x8x24}xtp8pp8cp2.sh, config_common.sh, conf/custom.yaml): tp 8, pp 8,
#   cp 2, vp 8, mbs 1, GBS as logged (1152, 1152, 1216, 1120, 1536), 126 layers, the embedding
#   and loss in the split, vocab 32000 (Mixtral's tokenizer), FP8 (E4M3, delayed scaling: the
#   recipe is not passed on in that container) with FP8 weights (FP8_PARAMS), TP overlap,
#   overlapped reduction and gather, overlap_p2p_comm, bf16 gradients (pretrain.py), no
#   recomputation, no CUDA graphs. The logs hold only MLLOG lines; the settings are the
#   configuration files', the same files whose resolved values the Nebius H200 logs print.
#   Scored: the median over three logs of the median per-step train_step_time (first three steps
#   dropped) and rank 0's max_memory_usage. (v5.0's Nebius H200 results are the v5.1 rows above:
#   the same log files.)
# MLPerf Training v5.1 on Blackwell (the same repository; helpers read each result's config and
#   logs, the settings from NeMo's resolved-configuration dump where the log prints one, else from
#   the config file it names and the files that sources): every Llama 3.1 result on a GPU the
#   specs hold (B200, GB200) whose GEMMs are FP8 (tensorwise: current scaling, FP8 weight
#   gathers, bf16 attention, bf16 gradients, no recomputation, full-iteration CUDA graphs):
#   405B on 256 and 448 B200s (University of Florida hpg.dgxb200x8.n32/n56:
#   config_DGXB200_{32,56}x8x144xtp4pp8cp2_cg.sh: tp 4, pp 8, cp 2, vp 8, GBS 576 and 1008, no
#   TP overlap, vocab 32000); 8B on 8-256 B200s (UF n1/n2/n4/n8/n16/n32, Dell 2xXE9680L and
#   2xXE9685L, Oracle 8xBM.GPU.B200.8, Verda b200_8x8: tp 1, mbs 2 without cp, mbs 1 with cp 2,
#   GBS as logged); 8B on 72 and 512 GB200s (NVIDIA tyche_ngpu72 tp 1 cp 2, tyche_ngpu512 tp 2
#   cp 4 with TP overlap). Not scored: the NVFP4 results (the model has no FP4 GEMMs) and B300 /
#   GB300 (not in the specs). B200 nodes on 400 Gb/s NICs (ib400); GB200's NVLink domain of 72
#   from its specs. The last field of a row, when present, is TP overlap (else on with tp > 1).
#   Scored: the median over each result's logs of its median `train_step_time`. University of
#   Florida's 8B rows are the calibration of the host time a step (kHostStepNs,
#   scripts/calibrate-host-step.sh): printed, marked, and left out of the scores.
# Megatron-Bridge 26.06 on GB200 (docs/performance-summary-archive.md @ 067f987d, "26.06 NeMo
#   Container", LLAMA3.1_405B, DGX-GB200, FP8: 843 tokens/s/GPU; 26.04.01 gave 864): 256 GPUs,
#   tp 4, pp 16, vp 4, cp 1, mbs 1, GBS 1536. Settings from the recipe it names
#   (src/megatron/bridge/perf_recipes/llama/gb200/llama31.py,
#   llama31_405b_pretrain_128gpu_gb200_fp8cs_config, the 128-GPU base scaled by the table's GPU
#   count and GBS): FP8 current scaling ("fp8_cs"), sequence parallel, TP overlap with
#   userbuffers, the parameter gather overlapped, llama31_405b_pretrain_config's embedding and
#   loss in the split; vocab 128256. Not scored: its Llama 3 70B GB200 row (CPU activation
#   offloading, which the model does not have).
# Models: Llama 3 70B (80 layers, hidden 8192, 64 heads, 8 KV heads, ffn 28672) and Llama 3.1
# 405B (126 layers, hidden 16384, 128 heads, 8 KV heads, ffn 53248), untied embeddings.
# Step = GBS x 8192 / (tokens/s/GPU x GPUs). The cost model is the same fit as
# scripts/validate-plan-mlperf.sh (../shared/data/costs and one real H200 run's attention),
# nothing from these tables. Deterministic.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/plan-validation-setup.sh "$@"  # $lm, $work, $work/costs.json
llama70=llama:layers=80,hidden=8192,heads=64,kv_heads=8,ffn=28672,seq=8192,vocab=128256
llama405=llama:layers=126,hidden=16384,heads=128,kv_heads=8,ffn=53248,seq=8192,vocab=128256
llama405mlperf=llama:layers=126,hidden=16384,heads=128,kv_heads=8,ffn=53248,seq=8192,vocab=32000
llama8=llama:layers=32,hidden=4096,heads=32,kv_heads=8,ffn=14336,seq=8192,vocab=128256
# source | model | GPU | GEMMs | GPUs | tp | pp | vp | cp | mbs | gbs | published tokens/s/GPU
# ("=S": a step of S seconds) | rank 0's measured peak memory, GiB ("-": none published)
rows="Bridge 25.11 Llama 3 70B|llama70|H100-SXM5-80GB|fp8cs|64|4|8|5|1|1|128|1602|-
Bridge 26.02 Llama 3 70B|llama70|H100-SXM5-80GB|fp8cs|64|4|8|5|1|1|256|1621|-
Bridge 25.11 Llama 3.1 405B|llama405|H100-SXM5-80GB|fp8cs|1024|8|8|8|2|1|512|292|-
Bridge 26.02 Llama 3.1 405B|llama405|H100-SXM5-80GB|fp8cs|1024|8|8|8|2|1|1536|311|-
DGXC 25.05 Llama 3.1 405B (anchors)|llama405|H100-SXM5-80GB|fp8|512|8|8|8|2|1|256|=13.020|-
DGXC 25.05 Llama 3.1 405B (anchors)|llama405|H100-SXM5-80GB|bf16|512|8|8|8|2|1|256|=19.810|-
MLPerf v5.1 Nebius n64 (H200)|llama405mlperf|H200-SXM-141GB|fp8pg|512|4|8|8|2|1|1152|=50.01|109.067
MLPerf v5.1 Nebius n128 (H200)|llama405mlperf|H200-SXM-141GB|fp8pg|1024|4|8|8|2|1|1152|=25.36|104.846
MLPerf v5.1 Cisco n8 Llama 3.1 8B|llama8|H100-SXM5-80GB|fp8pg|64|1|1|1|1|1|64|=0.7205|71.229
MLPerf v5.1 Cisco n16 Llama 3.1 8B|llama8|H100-SXM5-80GB|fp8pg|128|2|1|1|1|1|64|=0.4850|35.706
MLPerf v5.1 HPE n8 Llama 3.1 8B (H200)|llama8|H200-SXM-141GB|fp8cs|64|1|1|1|2|1|32|=0.3530|-
MLPerf v5.0 NVIDIA eos n64 Llama 3.1 405B|llama405mlperf|H100-SXM5-80GB|fp8pg|512|8|8|8|2|1|1152|=55.143|58.817
MLPerf v5.0 NVIDIA eos n256 Llama 3.1 405B|llama405mlperf|H100-SXM5-80GB|fp8pg|2048|8|8|8|2|1|1152|=14.221|52.484
MLPerf v5.0 NVIDIA eos n304 Llama 3.1 405B|llama405mlperf|H100-SXM5-80GB|fp8pg|2432|8|8|8|2|1|1216|=12.711|52.151
MLPerf v5.0 NVIDIA eos n320 Llama 3.1 405B|llama405mlperf|H100-SXM5-80GB|fp8pg|2560|8|8|8|2|1|1120|=11.173|52.062
MLPerf v5.0 NVIDIA eos n1024 Llama 3.1 405B|llama405mlperf|H100-SXM5-80GB|fp8pg|8192|8|8|8|2|1|1536|=5.177|50.901
MLPerf v5.1 U. Florida n32 Llama 3.1 405B (B200)|llama405mlperf|B200|fp8cs|256|4|8|8|2|1|576|=27.646|-|0
MLPerf v5.1 U. Florida n56 Llama 3.1 405B (B200)|llama405mlperf|B200|fp8cs|448|4|8|8|2|1|1008|=27.979|-|0
MLPerf v5.1 U. Florida n1 Llama 3.1 8B (B200)|llama8|B200|fp8cs|8|1|1|1|1|2|16|=0.5441|-
MLPerf v5.1 U. Florida n2 Llama 3.1 8B (B200)|llama8|B200|fp8cs|16|1|1|1|1|2|32|=0.5749|-
MLPerf v5.1 Dell 2xXE9680L Llama 3.1 8B (B200)|llama8|B200|fp8cs|16|1|1|1|1|2|32|=0.5818|-
MLPerf v5.1 Dell 2xXE9685L Llama 3.1 8B (B200)|llama8|B200|fp8cs|16|1|1|1|1|2|32|=0.5757|-
MLPerf v5.1 U. Florida n4 Llama 3.1 8B (B200)|llama8|B200|fp8cs|32|1|1|1|2|1|16|=0.1886|-
MLPerf v5.1 U. Florida n8 Llama 3.1 8B (B200)|llama8|B200|fp8cs|64|1|1|1|2|1|32|=0.1895|-
MLPerf v5.1 Oracle n8 Llama 3.1 8B (B200)|llama8|B200|fp8cs|64|1|1|1|2|1|32|=0.1902|-
MLPerf v5.1 Verda n8 Llama 3.1 8B (B200)|llama8|B200|fp8cs|64|1|1|1|2|1|32|=0.1909|-
MLPerf v5.1 U. Florida n16 Llama 3.1 8B (B200)|llama8|B200|fp8cs|128|1|1|1|2|1|64|=0.1928|-
MLPerf v5.1 U. Florida n32 Llama 3.1 8B (B200)|llama8|B200|fp8cs|256|1|1|1|2|1|128|=0.2211|-
MLPerf v5.1 NVIDIA tyche n72 Llama 3.1 8B (GB200)|llama8|GB200|fp8cs|72|1|1|1|2|1|36|=0.1709|-
MLPerf v5.1 NVIDIA tyche n512 Llama 3.1 8B (GB200)|llama8|GB200|fp8cs|512|2|1|1|4|1|64|=0.0889|-|1
Bridge 26.06 Llama 3.1 405B (GB200)|llama405|GB200|fp8cs|256|4|16|4|1|1|1536|843|-|1"
echo "$rows" | while IFS='|' read -r name which gpu dtype gpus tp pp vp cp mbs gbs tokens peak overlap; do
  model=${!which}
  current=$([ "$dtype" = fp8cs ] && echo 1 || echo 0)  # FP8 with current scaling,
  gather=$([ "$dtype" = fp8cs ] || [ "$dtype" = fp8pg ] && echo 1 || echo 0)  # FP8 weight gathers.
  # Delayed scaling's amaxes over the TP group only: the MLPerf v5.0/v5.1 Llama implementations
  # (conf/custom.yaml tp_only_amax_red, True by default, no config overriding it; Nebius's log
  # prints it true; their current-scaling rows have no amax history to reduce, and `estimate`
  # refuses the key there). Bridge's and DGXC's recipes do not set it.
  tponly=0
  if [[ "$name" == "MLPerf v5."* && "$current" = 0 ]]; then tponly=1; fi
  label=$dtype
  dtype=${dtype%cs}
  dtype=${dtype%pg}
  dp=$((gpus / (tp * cp * pp)))
  ends=$([ "$pp" -gt 1 ] && [ "$which" != llama70 ] && echo 1 || echo 0)
  split=$([ "$tp" -gt 1 ] && echo 1 || echo 0)  # Sequence parallel and TP overlap need tp > 1.
  overlap=${overlap:-$split}
  "$lm" estimate --model "$model" --gpu "$gpu" --dtype "$dtype" --costs "$work/costs.json" \
    --set "tp=$tp,pp=$pp,vp=$vp,cp=$cp,dp=$dp,mbs=$mbs,gbs=$gbs,sequence_parallel=$split,zero=1,recompute=none,tp_overlap=$overlap,p2p_overlap=1,grad_sync_bytes=2,ends_in_split=$ends,fp8_current_scaling=$current,fp8_param_gather=$gather,tp_only_amax_red=$tponly" \
    --json | python3 -c '
import json, sys
name, dtype, gpus, gbs, tokens, peak = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
# Throughput tables give tokens/s/GPU; the anchors file and the MLPerf logs a step ("=S").
step = float(tokens[1:]) if tokens.startswith("=") else gbs * 8192 / (float(tokens) * gpus)
e = json.load(sys.stdin)["searches"][0]["ranked"][0]
cp = " cp%d" % e["cp"] if e["cp"] > 1 else ""
vp = " vp%d" % e["vp"] if e["vp"] > 1 else ""
layout = "%dx%d%s%s dp%d mbs%d" % (e["tp"], e["pp"], vp, cp, e["dp"], e["mbs"])
fast, slow = e["step_s"], e["simulated_step_s"]
# Rank 0 is pipeline stage 0: its modelled bytes in GiB, as the logs count them.
first = e["memory_stages"][0]["gb"] * 1e9 / 2**30
measured = "-" if peak == "-" else "%s / %.1f (%+.1f %%)" % (peak, first, 100 * (first / float(peak) - 1))
print("%s|%s %s|%d|%s|%.3f|%.3f|%+.1f|%.3f|%+.1f|%.1f|%s|%s|%s" % (name, layout, dtype, gbs, tokens.lstrip("="), step,
      slow, 100 * (slow / step - 1), fast, 100 * (fast / step - 1), e["memory_gb"], e["fits"], measured, sys.argv[7]))
' "$name" "$label" "$gpus" "$gbs" "$tokens" "$peak" "$gpu"
done >"$work/rows"
python3 - "$work/rows" <<'PY'
import statistics, sys
rows = [l.strip().split("|") for l in open(sys.argv[1])]
print("| result | layout | GBS | published tokens/s/GPU (or step) | step s | simulated s | error | fast path s | error | memory GB (fits) | rank 0 peak GiB: measured / stage 0 modelled |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
# University of Florida's 8B rows calibrate the host time a step (scripts/calibrate-host-step.sh):
# printed, never scored. Other submitters' rows on the very same GPU, layout and batch are scored
# but also summarised without, as they test the submitters' spread more than the model.
def calibration(name):
    return name.startswith("MLPerf v5.1 U. Florida") and "8B" in name
seen = {(r[12], r[1], r[2]) for r in rows if calibration(r[0])}
hopper, blackwell, unseen = ([], []), ([], []), ([], [])
residuals = []
for name, layout, gbs, tokens, step, sim, sim_err, est, err, mem, fits, peak, gpu in rows:
    if calibration(name):
        name += " (calibration)"
        residuals.append(float(step) - float(sim))
    else:
        groups = [hopper]
        if gpu.startswith(("B", "GB")):
            groups = [blackwell]
            if (gpu, layout, gbs) in seen:
                name += " (a calibration layout)"
            else:
                groups.append(unseen)
        for slow, fast in groups:
            slow.append(abs(float(sim_err)))
            fast.append(abs(float(err)))
    print(f"| {name} | {layout} | {gbs} | {tokens} | {step} | {sim} | {sim_err} % | {est} | {err} % | {mem} ({fits}) | {peak} |")
print()
for family, (slow, fast) in (("Hopper (H100, H200)", hopper), ("Blackwell (B200, GB200)", blackwell),
                             ("Blackwell, layouts no calibration row has", unseen)):
    for label, errors in (("simulated (slow path)", slow), ("fast path", fast)):
        print(f"{family}, {label}: median |error| {statistics.median(errors):.1f} %, worst {max(errors):.1f} % "
              f"over {len(errors)} results (targets: median <= 8 %, worst <= 20 %)")
print("calibration rows (not scored): published less simulated (host term included), s: " +
      ", ".join("%+.4f" % r for r in residuals))
PY
