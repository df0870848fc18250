#!/usr/bin/env python3
"""Times, on the GPU it runs on, the kernels the planning validation's open questions turn on
(docs/validation.md, "A real Megatron-LM forward against the plan's layer model"), and writes
them as one CSV.

1. FP8 GEMMs with and without fast accumulation. NVIDIA's measured tables (aiconfigurator,
   TensorRT-LLM's cuBLASLt FP8 GEMM) run with CUBLASLT_MATMUL_DESC_FAST_ACCUM on. Transformer
   Engine trains with it on for the forward GEMM only: its recipes set use_split_accumulator
   for dgrad and wgrad, i.e. fast accumulation off. On Hopper that is slower by an amount we
   have not measured. Each layer GEMM of the validated layouts (GPT-3 175B at tp 4, Llama 3
   8B at tp 1, 70B at tp 4, 405B at tp 8 cp 2), in its three orientations (forward: tokens x
   out x in; dgrad: tokens x in x out; wgrad: out x in x tokens), by torch._scaled_mm with
   per-tensor scales and a bf16 output, use_fast_accum on and off; the gradient operand of
   dgrad and wgrad in E5M2, as Transformer Engine's HYBRID format has it (E4M3 otherwise); and
   in bf16 (torch.mm).
2. Fused causal attention at the validated sequences (8192 and 2048), forward and backward, by
   torch's scaled_dot_product_attention in bf16 (the attention model was fitted at seq 1024).
3. Sustained against burst: the tables time a GEMM in a short burst; training runs them back to
   back for hours at the power limit, and FP8's tensor cores draw the most. GPT-3's fc1 forward
   (and Llama 3 70B's) in bf16 and FP8 (fast accumulation on and off) run back to back, without
   a synchronisation between calls, for SUSTAIN seconds each (--sustain, default 3): the mean
   call of that run (pass "sustained"), beside its burst median above. The H200's bf16 GEMMs held
   the tables under load (docs/validation.md, "Traced GEMMs against the tables"); FP8 was never
   measured so.

Each timing: WARMUP calls, then the median of REPEATS calls, each between two CUDA events. A
kernel that fails (an unsupported layout, out of memory) is a row with its error in `error`,
and the rest go on. Usage: kernel_timings.py --out FILE.csv [--device cuda|cpu] [--repeats N]
[--sustain SECONDS].
On a machine without a GPU (--device cpu) it times tiny shapes in bf16 only, to rehearse the
script; those times mean nothing. Exit status: 0 when the CSV is written, 2 on bad arguments,
no PyTorch or no CUDA device.
"""
import argparse
import contextlib
import csv
import statistics
import sys
import time

try:
    import torch
except ImportError as error:  # One clear line, not a traceback.
    print(f"kernel_timings: needs PyTorch ({error})", file=sys.stderr)
    sys.exit(2)

# family, gemm, tokens (a GPU's share of a micro-batch), out features, in features (per GPU).
LAYER_GEMMS = [
    ("gpt3-175b-tp4-mbs1", "qkv", 2048, 9216, 12288),
    ("gpt3-175b-tp4-mbs1", "projection", 2048, 12288, 3072),
    ("gpt3-175b-tp4-mbs1", "fc1", 2048, 12288, 12288),
    ("gpt3-175b-tp4-mbs1", "fc2", 2048, 12288, 12288),
    ("llama3-8b-tp1", "qkv", 8192, 6144, 4096),
    ("llama3-8b-tp1", "projection", 8192, 4096, 4096),
    ("llama3-8b-tp1", "fc1", 8192, 28672, 4096),
    ("llama3-8b-tp1", "fc2", 8192, 4096, 14336),
    ("llama3-70b-tp4", "qkv", 8192, 2560, 8192),
    ("llama3-70b-tp4", "projection", 8192, 8192, 2048),
    ("llama3-70b-tp4", "fc1", 8192, 14336, 8192),
    ("llama3-70b-tp4", "fc2", 8192, 8192, 7168),
    ("llama31-405b-tp8-cp2", "qkv", 4096, 2304, 16384),
    ("llama31-405b-tp8-cp2", "projection", 4096, 16384, 2048),
    ("llama31-405b-tp8-cp2", "fc1", 4096, 13312, 16384),
    ("llama31-405b-tp8-cp2", "fc2", 4096, 16384, 6656),
]
# family, batch, heads, kv heads, sequence, head size (a GPU's heads after tp).
ATTENTION = [
    ("gpt3-175b-tp4-mbs1", 1, 24, 24, 2048, 128),
    ("llama3-8b-tp1", 1, 32, 8, 8192, 128),
    ("llama3-70b-tp4", 1, 16, 2, 8192, 128),
]
TINY_GEMMS = [("tiny", "fc1", 64, 128, 96)]
TINY_ATTENTION = [("tiny", 1, 4, 2, 128, 32)]


def orientations(tokens, out_features, in_features):
    """(pass, m, n, k) of a linear layer's three GEMMs."""
    return [("forward", tokens, out_features, in_features),
            ("dgrad", tokens, in_features, out_features),
            ("wgrad", out_features, in_features, tokens)]


def timed(fn, device, warmup, repeats):
    """The median of `repeats` calls of fn, in microseconds."""
    for _ in range(warmup):
        fn()
    times = []
    if device == "cuda":
        for _ in range(repeats):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) * 1000.0)
    else:
        for _ in range(repeats):
            t = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t) * 1e6)
    return statistics.median(times)


def measured(row, fn, flops, device, warmup, repeats):
    """row + [median us, TFLOP/s, error]: the timing, or the error that stopped it."""
    try:
        us = timed(fn, device, warmup, repeats)
    except (RuntimeError, ValueError) as error:  # Unsupported here, or out of memory.
        return row + ["", "", str(error).splitlines()[0][:200]]
    return row + [f"{us:.2f}", f"{flops / us / 1e6:.1f}", ""]


def gemm_rows(shapes, device, fp8, warmup, repeats):
    for family, gemm, tokens, out_features, in_features in shapes:
        for pass_name, m, n, k in orientations(tokens, out_features, in_features):
            a = torch.randn(m, k, device=device, dtype=torch.bfloat16)
            b = torch.randn(n, k, device=device, dtype=torch.bfloat16)
            flops = 2.0 * m * n * k
            yield measured([family, "gemm", gemm, pass_name, m, n, k, "bf16", ""],
                           lambda: torch.mm(a, b.t()), flops, device, warmup, repeats)
            if not fp8:
                continue
            # The output gradient (dgrad's and wgrad's first operand) in E5M2, as TE's HYBRID.
            a_type = torch.float8_e4m3fn if pass_name == "forward" else torch.float8_e5m2
            a8, b8 = a.to(a_type), b.to(torch.float8_e4m3fn)
            one = torch.ones((), device=device, dtype=torch.float32)
            for fast in (True, False):
                # _scaled_mm wants its second operand column-major: b8.t() of a row-major n x k.
                call = lambda fast=fast: torch._scaled_mm(a8, b8.t(), scale_a=one, scale_b=one,
                                                          out_dtype=torch.bfloat16,
                                                          use_fast_accum=fast)
                dtype = "fp8" if pass_name == "forward" else "fp8 e5m2 x e4m3"
                yield measured([family, "gemm", gemm, pass_name, m, n, k, dtype,
                                "on" if fast else "off"], call, flops, device, warmup, repeats)
            del a8, b8
            del a, b


SUSTAINED = [("gpt3-175b-tp4-mbs1", "fc1", 2048, 12288, 12288),
             ("llama3-70b-tp4", "fc1", 8192, 14336, 8192)]


def sustained_rows(shapes, device, fp8, seconds):
    """Each GEMM called back to back for about `seconds`: the mean call, in microseconds."""
    for family, gemm, m, n, k in shapes:
        a = torch.randn(m, k, device=device, dtype=torch.bfloat16)
        b = torch.randn(n, k, device=device, dtype=torch.bfloat16)
        calls = [("bf16", "", lambda: torch.mm(a, b.t()))]
        if fp8:
            a8, b8 = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn)
            one = torch.ones((), device=device, dtype=torch.float32)
            for fast in (True, False):
                calls.append(("fp8", "on" if fast else "off",
                              lambda fast=fast: torch._scaled_mm(
                                  a8, b8.t(), scale_a=one, scale_b=one,
                                  out_dtype=torch.bfloat16, use_fast_accum=fast)))
        flops = 2.0 * m * n * k
        for dtype, fast, call in calls:
            name = f"{gemm} sustained {seconds:g} s"
            try:
                one_us = timed(call, device, 3, 5)
                count = max(1, int(seconds * 1e6 / max(one_us, 1.0)))
                if device == "cuda":
                    torch.cuda.synchronize()
                start = time.perf_counter()
                for _ in range(count):
                    call()
                if device == "cuda":
                    torch.cuda.synchronize()
                us = (time.perf_counter() - start) * 1e6 / count
            except (RuntimeError, ValueError) as error:
                yield [family, "gemm", name, "sustained", m, n, k, dtype, fast, "", "",
                       str(error).splitlines()[0][:200]]
                continue
            # The mean call of the run in median_us's place; the run's length in the name.
            yield [family, "gemm", f"{name} ({count} calls)", "sustained", m, n, k, dtype, fast,
                   f"{us:.2f}", f"{flops / us / 1e6:.1f}", ""]
        del a, b


def fused_only(device):
    """On a GPU, SDPA's fused backends only (an error rather than the unfused math path)."""
    if device != "cuda":
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel
    return sdpa_kernel([SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION,
                        SDPBackend.EFFICIENT_ATTENTION])


def attention_rows(shapes, device, warmup, repeats):
    sdpa = torch.nn.functional.scaled_dot_product_attention
    for family, batch, heads, kv_heads, seq, head in shapes:
        q = torch.randn(batch, heads, seq, head, device=device, dtype=torch.bfloat16,
                        requires_grad=True)
        k = torch.randn(batch, kv_heads, seq, head, device=device, dtype=torch.bfloat16,
                        requires_grad=True)
        v = torch.randn(batch, kv_heads, seq, head, device=device, dtype=torch.bfloat16,
                        requires_grad=True)
        # Grouped keys and values repeated to every query head: a fused kernel's work is the
        # query heads' (GQA saves memory, not FLOPs), and every fused backend takes it.
        k_all = k.repeat_interleave(heads // kv_heads, dim=1)
        v_all = v.repeat_interleave(heads // kv_heads, dim=1)
        call = lambda: sdpa(q, k_all, v_all, is_causal=True)
        try:
            with fused_only(device):
                out = call()
        except RuntimeError as error:  # No fused backend for this shape here.
            row = [family, "attention", f"b{batch} h{heads} s{seq} d{head}", "forward", "", "",
                   "", "bf16", "", "", "", str(error).splitlines()[0][:200]]
            yield row
            continue
        grad = torch.randn_like(out)
        # Causal: half the score matrix; forward 2 GEMMs, backward 5 (flash's recomputation).
        flops = 4.0 * batch * heads * seq * seq * head / 2
        shape = f"b{batch} h{heads} kv{kv_heads} s{seq} d{head}"
        with fused_only(device):
            yield measured([family, "attention", shape, "forward", "", "", "", "bf16", ""], call,
                           flops, device, warmup, repeats)
        backward = lambda: torch.autograd.grad(out, (q, k_all, v_all), grad, retain_graph=True)
        yield measured([family, "attention", shape, "backward", "", "", "", "bf16", ""], backward,
                       2.5 * flops, device, warmup, repeats)
        del q, k, v, k_all, v_all, out, grad


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--sustain", type=float, default=3.0)
    args = parser.parse_args()
    if args.repeats < 1 or args.warmup < 0 or not 0 <= args.sustain <= 60:
        print("kernel_timings: --repeats must be >= 1, --warmup >= 0 and --sustain in 0..60",
              file=sys.stderr)
        return 2
    device = args.device
    if device == "cuda" and not torch.cuda.is_available():
        print("kernel_timings: no CUDA device; --device cpu rehearses the script", file=sys.stderr)
        return 2
    gpu = torch.cuda.get_device_name() if device == "cuda" else "cpu"
    fp8 = device == "cuda" and torch.cuda.get_device_capability() >= (8, 9)
    gemms, attention = (LAYER_GEMMS, ATTENTION) if device == "cuda" else (TINY_GEMMS, TINY_ATTENTION)
    sustained = SUSTAINED if device == "cuda" else [(f, g, t, o, i) for f, g, t, o, i in TINY_GEMMS]
    header = ["family", "kind", "name", "pass", "m", "n", "k", "dtype", "fast_accum",
              "median_us", "tflops", "error", "gpu", "torch"]
    rows = 0
    with open(args.out, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        sources = [gemm_rows(gemms, device, fp8, args.warmup, args.repeats),
                   attention_rows(attention, device, args.warmup, args.repeats)]
        if args.sustain > 0:
            sources.append(sustained_rows(sustained, device, fp8, args.sustain))
        for source in sources:
            for row in source:
                writer.writerow(row + [gpu, torch.__version__])
                f.flush()  # A call cut short keeps what it timed.
                rows += 1
    print(f"kernel_timings: {rows} timings on {gpu} in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
