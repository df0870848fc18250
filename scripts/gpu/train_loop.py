"""A small GPT-style training loop for scripts/gpu-check.sh: a few pre-norm causal transformer
layers (bf16 autocast, AdamW) on random data, no downloads. Each step is an NVTX range ("step"), with
"forward" and "backward" (once per micro-batch: --accumulate N is gradient accumulation) and
"optimizer" inside it, so the agent's NVTX channel has work.

Prints one JSON line: the median and mean step time in ms over the measured steps, and the
settings. With --profile the measured steps run under torch.profiler (CPU + CUDA activities) and
the Kineto trace is written to --out as a gzipped JSON. --no-nvtx leaves every NVTX range out (a
job without an iteration marker: the agent's windows find iterations in the kernel stream). --device cpu rehearses the script (and
gpu-check.sh) on a machine without a GPU; its times mean nothing.
"""

import argparse
import gzip
import json
import os
import shutil
import statistics
import time

import torch
from torch import nn


class Gpt(nn.Module):
    """Pre-norm decoder-only blocks: each token attends to itself and the tokens before it."""

    def __init__(self, layers, width, heads, seq, device):
        super().__init__()
        self.blocks = nn.ModuleList(
            nn.TransformerEncoderLayer(width, heads, dim_feedforward=4 * width, dropout=0.0,
                                       batch_first=True, norm_first=True)
            for _ in range(layers))
        self.norm = nn.LayerNorm(width)
        self.register_buffer(
            "mask", nn.Transformer.generate_square_subsequent_mask(seq, device=device))

    def forward(self, x):
        for block in self.blocks:
            x = block(x, src_mask=self.mask, is_causal=True)
        return self.norm(x)


def synchronize(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


class NoNvtx:
    """torch.cuda.nvtx's range_push/range_pop doing nothing (--no-nvtx)."""

    @staticmethod
    def range_push(_):
        pass

    @staticmethod
    def range_pop():
        pass


nvtx = torch.cuda.nvtx


def step(model, optimizer, x, target, accumulate):
    nvtx.range_push("step")
    for _ in range(accumulate):  # Gradient accumulation: micro-batches, then one update.
        nvtx.range_push("forward")
        with torch.autocast(x.device.type, dtype=torch.bfloat16):
            loss = nn.functional.mse_loss(model(x).float(), target) / accumulate
        nvtx.range_pop()
        nvtx.range_push("backward")
        loss.backward()
        nvtx.range_pop()
    nvtx.range_push("optimizer")
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    nvtx.range_pop()
    nvtx.range_pop()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--width", type=int, default=2048)
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--seq", type=int, default=1024)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--accumulate", type=int, default=1,
                        help="micro-batches per step (gradient accumulation)")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--no-nvtx", action="store_true")
    parser.add_argument("--out", default=".")
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    args = parser.parse_args()

    global nvtx
    if args.no_nvtx:
        nvtx = NoNvtx
    torch.manual_seed(0)
    device = torch.device(args.device)
    model = Gpt(args.layers, args.width, args.heads, args.seq, device).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(args.batch, args.seq, args.width, device=device)
    target = torch.randn(args.batch, args.seq, args.width, device=device)

    for _ in range(args.warmup):
        step(model, optimizer, x, target, args.accumulate)
    synchronize(device)

    def measured():
        times = []
        for _ in range(args.steps):
            start = time.perf_counter()
            step(model, optimizer, x, target, args.accumulate)
            synchronize(device)
            times.append((time.perf_counter() - start) * 1e3)
        return times

    if args.profile:
        activities = [torch.profiler.ProfilerActivity.CPU]
        if device.type == "cuda":
            activities.append(torch.profiler.ProfilerActivity.CUDA)
        with torch.profiler.profile(activities=activities) as profiler:
            times = measured()
        path = os.path.join(args.out, "torch_profiler.json")
        profiler.export_chrome_trace(path)
        with open(path, "rb") as raw, gzip.open(path + ".gz", "wb") as packed:
            shutil.copyfileobj(raw, packed)
        os.remove(path)
    else:
        times = measured()

    print(json.dumps({
        "median_ms": statistics.median(times),
        "mean_ms": statistics.fmean(times),
        "steps": args.steps,
        "layers": args.layers, "width": args.width, "heads": args.heads, "seq": args.seq,
        "batch": args.batch, "accumulate": args.accumulate,
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name(0) if device.type == "cuda" else "cpu",
    }))


if __name__ == "__main__":
    main()
