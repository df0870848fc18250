// Design: the element types a kernel model knows, their names in tables and on the command line,
// and their sizes. The dense peak of a GPU is given per DType (hardware_specs.h).
// Threading: constants only.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace lumos::modeler::models {

enum class DType : uint8_t { kFp32 = 0, kTf32, kBf16, kFp16, kFp8 };
inline constexpr int kDTypeCount = 5;

// "fp32", "tf32", "bf16", "fp16", "fp8": the names specs files, tables and model files use.
std::string_view DTypeName(DType dtype);
// Also accepts the spellings the tables and frameworks use: float/float32, bfloat16,
// half/float16, fp8_e4m3/e4m3/fp8_e5m2/e5m2 (case-insensitive).
std::optional<DType> ParseDType(std::string_view text);
// "fp32, tf32, bf16, fp16, fp8", for error messages.
std::string_view DTypeNames();

// Bytes of one input operand element (tf32 is stored as fp32).
int InputBytes(DType dtype);
// Bytes of one output element: fp32 and tf32 GEMMs write fp32, bf16 and fp16 write their own
// type; fp8 GEMMs write bf16 (TensorRT-LLM's and Transformer Engine's default; an assumption
// where a table does not say).
int OutputBytes(DType dtype);

}  // namespace lumos::modeler::models
