# Finds every dependency offline (Debian packages; see scripts/setup.sh). No downloads.
find_package(Protobuf REQUIRED)
find_package(zstd CONFIG REQUIRED)
find_package(simdjson CONFIG REQUIRED)
find_package(ZLIB REQUIRED)
find_package(Threads REQUIRED)
if(LUMOS_BUILD_TESTS)
  find_package(GTest CONFIG REQUIRED)
endif()
if(LUMOS_BUILD_BENCHMARKS)
  find_package(benchmark CONFIG REQUIRED)
endif()

# The agent links zstd statically so it cannot clash with a copy in the traced job.
if(TARGET zstd::libzstd_static)
  set(LUMOS_ZSTD_STATIC zstd::libzstd_static)
else()
  set(LUMOS_ZSTD_STATIC zstd::libzstd_shared)
endif()
if(TARGET zstd::libzstd_shared)
  set(LUMOS_ZSTD zstd::libzstd_shared)
else()
  set(LUMOS_ZSTD zstd::libzstd_static)
endif()

# CUDA 13 (CUPTI, NCCL, NVTX headers) is optional: without it the CPU-only parts build.
set(LUMOS_CUDA_ROOT "/usr/local/cuda" CACHE PATH "CUDA toolkit root")
if(EXISTS "${LUMOS_CUDA_ROOT}/include/cupti.h")
  set(LUMOS_HAVE_CUDA ON)
  message(STATUS "Lumos: CUDA headers found in ${LUMOS_CUDA_ROOT}")
else()
  set(LUMOS_HAVE_CUDA OFF)
  message(STATUS "Lumos: no CUDA under ${LUMOS_CUDA_ROOT}; building the CPU-only parts")
endif()

# RE2 for users' patterns (modeler/io/name_pattern.h): linear-time matching of untrusted names.
find_package(PkgConfig REQUIRED)
pkg_check_modules(RE2 REQUIRED IMPORTED_TARGET re2)
