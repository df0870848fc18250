// Design: one orientation for GEMM shapes wherever the modeler reads them: row-major, as
// PyTorch, the Kineto import and the measured tables (../shared/data/costs) write a problem: D
// is m x n with m its rows, the tokens of a linear layer (y = x W^T: m tokens, n output
// features, k input features). cuBLAS and cuBLASLt are column-major, and the agent records
// their m, n, k as the call gave them: PyTorch computes y^T = W x^T there, so m is the output
// features and n the tokens. In row-major terms the same problem is D^T = op(B)^T op(A)^T: m and
// n swap, and so do the operands (transposes and element types). The loader turns every
// cuBLAS/cuBLASLt call so (modeler/graph/job.cc); `inspect` shows the file as written.
// Threading: pure functions.
#pragma once

#include <cstddef>
#include <vector>

#include "schema/writer/trace_events.h"

namespace lumos::modeler {

// Whether `api` is a column-major library entry (cuBLAS, cuBLASLt) rather than a framework op.
bool IsColumnMajorGemmApi(schema::GemmApi api);

// The same problem, row-major: m <-> n, transa <-> transb, a_type <-> b_type.
void ToRowMajor(schema::GemmCallEvent* call);
// And back, as cuBLAS is called (`synth` writes its GEMMs so): the same swap.
inline void ToColumnMajor(schema::GemmCallEvent* call) { ToRowMajor(call); }

// Every column-major call of `calls` turned row-major; returns how many.
size_t GemmCallsToRowMajor(std::vector<schema::GemmCallEvent>* calls);

}  // namespace lumos::modeler
