#include "modeler/models/hardware/dtype.h"

#include <array>
#include <cctype>
#include <string>

namespace lumos::modeler::models {
namespace {

struct Spelling {
  std::string_view text;
  DType dtype;
};

constexpr std::array<Spelling, 16> kSpellings = {{
    {"fp32", DType::kFp32},
    {"float", DType::kFp32},
    {"float32", DType::kFp32},
    {"tf32", DType::kTf32},
    {"bf16", DType::kBf16},
    {"bfloat16", DType::kBf16},
    {"fp16", DType::kFp16},
    {"half", DType::kFp16},
    {"float16", DType::kFp16},
    {"fp8", DType::kFp8},
    {"fp8_e4m3", DType::kFp8},
    {"e4m3", DType::kFp8},
    {"fp8_e5m2", DType::kFp8},
    {"e5m2", DType::kFp8},
    {"float8_e4m3fn", DType::kFp8},
    {"float8_e5m2", DType::kFp8},
}};

}  // namespace

std::string_view DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kFp32:
      return "fp32";
    case DType::kTf32:
      return "tf32";
    case DType::kBf16:
      return "bf16";
    case DType::kFp16:
      return "fp16";
    case DType::kFp8:
      return "fp8";
  }
  return "?";
}

std::optional<DType> ParseDType(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const Spelling& spelling : kSpellings) {
    if (spelling.text == lower) return spelling.dtype;
  }
  return std::nullopt;
}

std::string_view DTypeNames() { return "fp32, tf32, bf16, fp16, fp8"; }

int InputBytes(DType dtype) {
  switch (dtype) {
    case DType::kFp32:
    case DType::kTf32:
      return 4;
    case DType::kBf16:
    case DType::kFp16:
      return 2;
    case DType::kFp8:
      return 1;
  }
  return 4;
}

int OutputBytes(DType dtype) {
  switch (dtype) {
    case DType::kFp32:
    case DType::kTf32:
      return 4;
    case DType::kBf16:
    case DType::kFp16:
    case DType::kFp8:
      return 2;
  }
  return 4;
}

}  // namespace lumos::modeler::models
