#!/usr/bin/env bash
# scripts/gpu-bundle.sh [BUNDLE_DIR]: builds what scripts/gpu-check.sh needs and copies it, with
# the shared libraries it needs beyond glibc and the C++ runtime, into BUNDLE_DIR (default
# gpu-bundle/, ignored by git): bin/ (lumos-run, lumos-ctl, lumos-model, the cuda_tests checkers and
# workloads) and lib/ (liblumos_agent.so, where lumos-run finds it, and libprotobuf, libzstd,
# ...). A GPU machine that has CUDA and PyTorch but none of our build dependencies runs
# gpu-check.sh from it: carry the folder (the device tool's `carry`), it stays under ~40 MiB.
# libnccl, libcuda, libcudart and libcublas(Lt) are not copied: they come from the GPU machine.
set -euo pipefail
cd "$(dirname "$0")/.."
bundle=${1:-gpu-bundle}
build_dir=${LUMOS_BUILD_DIR:-build}
checkers="lumos_cuda_two_streams_test lumos_cuda_graph_test lumos_cuda_launch_paths_test
  lumos_cuda_nccl_allreduce_test lumos_cuda_cublas_gemm_test"
workloads="two_streams_workload graph_workload launch_paths_workload nccl_allreduce_workload
  cublas_gemm_workload cublas_gemm_calls"
LUMOS_TARGETS="lumos_agent lumos-run lumos-ctl lumos-model $checkers $workloads" bash scripts/build.sh "$build_dir"

rm -rf "$bundle"
mkdir -p "$bundle/bin" "$bundle/lib"
cp "$build_dir/agent/inject/liblumos_agent.so" "$bundle/lib/"
cp "$build_dir/agent/tools/lumos-run" "$build_dir/agent/tools/lumos-ctl" \
  "$build_dir/modeler/tools/lumos-model" "$bundle/bin/"
for name in $checkers $workloads; do
  # A library target's file is lib<name>.so (the cuBLAS workload loads it from beside itself).
  path=$(find "$build_dir/cuda_tests" -maxdepth 1 \( -name "$name" -o -name "lib$name.so" \) \
    -type f | head -1)
  if [ -z "$path" ]; then
    echo "gpu-bundle: $name was not built (no nvcc or no libnccl?); left out" >&2
    continue
  fi
  cp "$path" "$bundle/bin/"
done
# Debug info is most of their size; symbols stay for backtraces.
strip --strip-debug "$bundle"/bin/* "$bundle"/lib/*
# Shared libraries beyond the C library, the C++ runtime and CUDA's own.
system='^(linux-vdso|ld-linux|libc\.|libm\.|libgcc_s|libstdc\+\+|libdl\.|libpthread|librt\.|libnccl|libcuda\.|libcudart|libcublas)'
for binary in "$bundle"/bin/*; do
  ldd "$binary" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r name path; do
  if ! [[ $name =~ $system ]]; then cp -L "$path" "$bundle/lib/$name"; fi
done
du -sh "$bundle"
ls "$bundle/bin" "$bundle/lib"
