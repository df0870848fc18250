#!/usr/bin/env python3
"""Writes data/costs/kernels_a100_megatron.csv: the measured non-GEMM kernels of a transformer
layer's forward in a real Megatron-LM run, as a table `lumos-model costs fit` calibrates the
kernel model from (gpu, class, dtype, bytes, flops, latency_us; kernel, rank and count say what
each row is).

Source: tests/data/megatron-tp8-a100 (the one public Kineto profile of Megatron-LM we hold; its
README: 8 A100-SXM4-80GB, fp16, GPT of 40 layers, hidden 4096, ffn 16384, 64 heads, micro-batch
4, seq 2048, tp 8, no sequence parallelism). One row per rank and kernel: the median duration of
its calls (one a layer; two LayerNorms and two bias-dropout-adds a layer, the final LayerNorm
the 81st). The bytes each moves follow
from that configuration and the op that launched it (the profile's cpu ops and their Input Dims;
the two Triton kernels have none, and are told by their arguments and grids):
  LayerNorm    FusedLayerNormAffineFunction [[2048, 4, 4096], [4096], [4096]] (Apex, cuApplyLayerNorm):
               reads x and writes y in fp16, reads gamma and beta, writes fp32 mean and inverse std
  bias-dropout-add  triton, 4 pointers, grid 32768 x 128 threads x 8 elements = 4 x 2048 x 4096:
               reads x and the residual, writes the sum (no mask stored), reads the bias
  bias-gelu    triton, 3 pointers, grid 16384 x 128 x 8 = 4 x 2048 x 2048 (ffn / tp): reads x,
               writes y, reads the bias
  qkv bias add aten::add [[2048, 4, 1536], [1536]]: reads x and the bias, writes y
  context copy aten::copy_ [[2048, 4, 8, 64]] x2: reads and writes the attention output
  softmax      ScaledUpperTriangMaskedSoftmax [[32, 2048, 2048]]: reads the scores, writes the
               probabilities (fp16)
Usage: derive-megatron-kernels.py [PROFILE_DIR] [OUT_CSV]. Deterministic.
"""
import csv
import gzip
import json
import statistics
import sys

T, H, FFN_TP, QKV_TP, CTX_TP = 4 * 2048, 4096, 2048, 1536, 512
SCORES = 32 * 2048 * 2048
KINDS = [
    # name, class, match(kernel name, grid), bytes
    ("LayerNorm", "norm", lambda n, g: "cuApplyLayerNorm" in n, 4 * T * H + 4 * H + 8 * T),
    ("bias-dropout-add", "elementwise", lambda n, g: n == "triton__0d1d2d3d4de",
     6 * T * H + 2 * H),
    ("bias-gelu", "elementwise", lambda n, g: n == "triton__0d1d2d3de",
     4 * T * FFN_TP + 2 * FFN_TP),
    ("qkv bias add", "elementwise",
     lambda n, g: n.startswith("void at::native::elementwise_kernel<128, 4") and g == [24576, 1, 1],
     4 * T * QKV_TP + 2 * QKV_TP),
    ("context copy", "elementwise",
     lambda n, g: n.startswith("void at::native::elementwise_kernel<128, 4") and g == [8192, 1, 1],
     4 * T * CTX_TP),
    ("softmax", "softmax", lambda n, g: "scaled_upper_triang_masked_softmax_warp_forward" in n,
     4 * SCORES),
]


def main():
    profile = sys.argv[1] if len(sys.argv) > 1 else "tests/data/megatron-tp8-a100"
    out = sys.argv[2] if len(sys.argv) > 2 else "data/costs/kernels_a100_megatron.csv"
    rows = []
    for rank in range(8):
        events = json.load(gzip.open(f"{profile}/megatron_kineto_{rank}.json.gz"))["traceEvents"]
        kernels = [e for e in events
                   if e.get("ph") == "X" and e.get("cat") in ("kernel", "Kernel")]
        for name, cls, match, nbytes in KINDS:
            durations = [e["dur"] for e in kernels
                         if match(e["name"], e.get("args", {}).get("grid"))]
            expected = {"LayerNorm": 81, "bias-dropout-add": 80}.get(name, 40)
            if len(durations) != expected:
                sys.exit(f"rank {rank}: {len(durations)} {name} kernels, not {expected}")
            rows.append(["A100-SXM4-80GB", cls, "fp16", nbytes, "",
                         f"{statistics.median(durations):.1f}", name, rank, len(durations)])
    with open(out, "w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(["gpu", "class", "dtype", "bytes", "flops", "latency_us", "kernel", "rank",
                         "count"])
        writer.writerows(rows)
    print(f"{out}: {len(rows)} rows")


if __name__ == "__main__":
    main()
