#!/usr/bin/env python3
"""scripts/traced-gemms.py TRACE.json[.gz] [--split SEED OUT_A.csv OUT_B.csv]

The GEMMs of a PyTorch profiler (Kineto) trace recorded with record_shapes=True, read straight
from its JSON, independently of lumos-model: the check of what `costs fit` takes from an import
of it (modeler/models/costs/cost_inputs.h has the rule this follows) and the halves of the validation
in docs/validation.md ("GEMM model on traced kernels").

A kernel launch (cudaLaunchKernel) belongs to the innermost cpu_op on its thread around its
start; when that op is aten::mm / addmm / bmm / baddbmm / matmul / linear / _scaled_mm (2-D
operands here: m, n, k from "Input Dims", batch from a 3-D bmm) and the kernel is not one of
ATen's own (at::native::), the kernel is that GEMM's. One op call is one GEMM: its duration is
the sum of its kernels' (a split-K GEMM and its splitKreduce kernel). dtype: bf16, fp16, fp32;
fp32 is tf32 when one of its kernels is a TF32 tensor-core one by name (s1688gemm, tf32).
Batched GEMMs are counted and left out. Each (dtype, m, n, k) is a point: the median of its
calls' durations (the mean of the two middle ones, rounded up, for an even count).

Prints one JSON object: kernels, calls, batched, points per dtype and every point
[dtype, m, n, k, median_ns, calls]. With --split, the distinct shapes are shuffled with SEED and
split in two halves written as measured tables (gpu,dtype,m,n,k,latency_us) OUT_A and OUT_B.
"""
import bisect
import collections
import gzip
import json
import random
import sys

GEMM_OPS = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul",
            "aten::linear", "aten::_scaled_mm"}
DTYPES = {"float": "fp32", "c10::BFloat16": "bf16", "c10::Half": "fp16"}


def shape_of(op):
    args = op.get("args", {})
    dims = args.get("Input Dims") or []
    types = args.get("Input type") or []
    name = op["name"]
    if name == "aten::addmm" or name == "aten::baddbmm":
        dims, types = dims[1:3], types[1:3]
    elif name == "aten::linear":
        x, w = dims[0], dims[1]
        if len(w) != 2:
            return None
        m = 1
        for d in x[:-1]:
            m *= d
        return (1, m, w[0], x[-1], types[0])
    else:
        dims, types = dims[:2], types[:2]
    if len(dims) != 2 or not types:
        return None
    a, b = dims
    if len(a) == 2 and len(b) == 2:
        return (1, a[0], b[1], a[1], types[0])
    if len(a) == 3 and len(b) == 3:
        return (a[0], a[1], b[2], a[2], types[0])
    return None


def main(argv):
    if len(argv) not in (2, 6) or (len(argv) == 6 and argv[2] != "--split"):
        sys.exit(__doc__)
    with (gzip.open if argv[1].endswith(".gz") else open)(argv[1], "rt") as f:
        trace = json.load(f)
    events = trace["traceEvents"]
    ops = collections.defaultdict(list)  # tid -> [(ts, -dur, index)]
    for i, e in enumerate(events):
        if e.get("cat") == "cpu_op" and e.get("ph") == "X":
            ops[e["tid"]].append((e["ts"], -e["dur"], i))
    for tid in ops:
        ops[tid].sort()
    starts = {tid: [o[0] for o in v] for tid, v in ops.items()}
    kernels = {}
    for e in events:
        if e.get("cat") == "kernel":
            kernels[e["args"]["correlation"]] = e
    gemms = collections.OrderedDict()  # op index -> [shape, duration_us, tf32]
    kernel_count = 0
    for e in events:
        if e.get("cat") != "cuda_runtime" or e.get("name") != "cudaLaunchKernel":
            continue
        kernel = kernels.get(e["args"]["correlation"])
        if kernel is None or "at::native::" in kernel["name"]:
            continue
        tid, ts = e["tid"], e["ts"]
        candidates = ops.get(tid, [])
        j = bisect.bisect_right(starts.get(tid, []), ts)
        inner = None
        # Innermost: the latest start whose span holds ts (ties: the shorter span, sorted first
        # by -dur reversed, so scanning back finds the longest first; keep the last match).
        for ts0, neg_dur, index in reversed(candidates[:j]):
            if ts0 + (-neg_dur) >= ts:
                if inner is None or ts0 > events[inner]["ts"] or (
                        ts0 == events[inner]["ts"] and -neg_dur < events[inner]["dur"]):
                    inner = index
            if inner is not None and ts0 < events[inner]["ts"]:
                break
        if inner is None or events[inner]["name"] not in GEMM_OPS:
            continue
        shape = shape_of(events[inner])
        if shape is None:
            continue
        kernel_count += 1
        g = gemms.setdefault(inner, [shape, 0, False])
        g[1] += kernel["dur"]
        g[2] |= "s1688gemm" in kernel["name"] or "tf32" in kernel["name"]
    points = collections.defaultdict(list)
    batched = 0
    for shape, dur_us, tf32 in gemms.values():
        batch, m, n, k, t = shape
        if batch > 1:
            batched += 1
            continue
        dtype = DTYPES.get(t)
        if dtype is None:
            continue
        if dtype == "fp32" and tf32:
            dtype = "tf32"
        points[(dtype, m, n, k)].append(round(dur_us * 1000))
    rows = []
    for key in sorted(points):
        d = sorted(points[key])
        h = len(d) // 2
        median = d[h] if len(d) % 2 else (d[h - 1] + d[h] + 1) // 2
        rows.append([*key, median, len(d)])
    per_dtype = collections.Counter(r[0] for r in rows)
    print(json.dumps({"kernels": kernel_count, "calls": len(gemms), "batched": batched,
                      "points": dict(sorted(per_dtype.items())), "shapes": rows}))
    if len(argv) == 6:
        gpu = trace.get("deviceProperties", [{}])[0].get("name", "")
        random.Random(int(argv[3])).shuffle(rows)
        half = len(rows) // 2
        for path, part in ((argv[4], rows[:half]), (argv[5], rows[half:])):
            with open(path, "w") as out:
                out.write("gpu,dtype,m,n,k,latency_us\n")
                for dtype, m, n, k, median, _ in sorted(part):
                    out.write(f"{gpu},{dtype},{m},{n},{k},{median / 1000:.3f}\n")


if __name__ == "__main__":
    main(sys.argv)
