// Design: GEMM and attention shapes from PyTorch profiler traces recorded with
// record_shapes=True: the "Input Dims", "Input type" (and, from PyTorch 2.3 on, "Concrete
// Inputs") of matmul and attention operators (cpu_op) become GemmCall events (schema 2.2)
// linked to the kernels those operators launched, so RankTrace::GemmOf() works on imported
// traces as on the agent's.
//   GEMMs (api FRAMEWORK_MATMUL; m, n, k and batch of the product as PyTorch writes it, row
//   major: op(A) m x k, op(B) k x n):
//     aten::mm(a [m,k], b [k,n]), aten::_scaled_mm, aten::_int_mm (the same);
//     aten::addmm(bias, a [m,k], b [k,n]); aten::bmm(a [B,m,k], b [B,k,n]);
//     aten::baddbmm(c, a [B,m,k], b [B,k,n]); aten::matmul(a [...,m,k], b [...,k,n]) (1-D
//     operands as torch.matmul takes them, batch = the broadcast leading dimensions);
//     aten::linear(x [...,k], w [n,k]): m = the product of x's leading dimensions.
//   Attention (api FRAMEWORK_ATTENTION or _BACKWARD; the fields as trace.proto's GemmCall
//   documents them: m query length, n key length, k head dimension, batch_count batch x heads,
//   heads, kv_heads, head_dim_v, mask):
//     [B,H,L,D] operands: aten::scaled_dot_product_attention,
//     aten::_scaled_dot_product_{flash,efficient,cudnn}_attention and their _backward (whose
//     first input is the output's gradient);
//     [B,L,H,D] operands: aten::_flash_attention_forward/_backward,
//     aten::_efficient_attention_forward/_backward, flash_attn::_flash_attn_forward/_backward
//     (flash-attn 2.6 and later). Variable-length (packed, 3-D) inputs are skipped.
//     Mask: CAUSAL or NONE from is_causal (custom_mask_type for the efficient kernels) in
//     "Concrete Inputs"; else TENSOR when an attn_mask / attn_bias tensor was passed; else
//     UNSPECIFIED (older traces record no scalars).
//   Types from "Input type" (c10 names: float, c10::BFloat16, c10::Float8_e4m3fn, ...): A and B
//   the operands' (attention: query and key), C and D the result's (A's, but for _scaled_mm,
//   whose output type the trace does not give, and _int_mm's int32). The transposes and the
//   compute type are not in the trace and stay UNSPECIFIED. An operator whose inputs do not
//   have the shapes it takes is skipped (no shape rather than a wrong one).
//   Linking: a kernel launch (a LAUNCH_KERNEL runtime or driver call) belongs to the innermost
//   cpu_op on its thread whose span holds the call's start (equal starts: the shorter span is
//   inside). When that operator is one of the above, one GemmCall is written per such launch:
//   the operator's span, thread, name and External id, and the launch's correlation id, so the
//   shape goes to exactly that launch's kernels (both of a split-K GEMM: two launches). A launch
//   inside a child operator (aten::matmul -> aten::copy_ for a contiguous copy) is the child's,
//   so copies never get a GEMM shape; an operator that launches nothing itself (its GEMM runs
//   in a child: aten::linear -> aten::addmm) gives the child's launch the child's shape.
//   Launches of ATen's own kernels (names with "at::native::": the bias copy aten::addmm makes
//   before its GEMM) get no shape either.
// Threading: one trace per thread.
#pragma once

#include <optional>
#include <string_view>

#include "modeler/import/kineto_json.h"
#include "schema/writer/trace_events.h"

namespace lumos::modeler::kineto {

struct KinetoTrace;

// The problem of operator `name` from its "Input Dims", "Input type" and "Concrete Inputs"
// (either of the last two may be absent): api, m, n, k, batch_count, operand types and, for
// attention, heads, kv_heads, head_dim_v and mask, into `shape` (its span, thread, name and
// ids are the caller's). False when `name` is not one of the operators above or its inputs do
// not have the shapes it takes.
bool ParseGemmOperator(std::string_view name, dom::element input_dims,
                       std::optional<dom::element> input_types,
                       std::optional<dom::element> concrete_inputs, schema::GemmCallEvent* shape);

// Appends one GemmCallEvent per kernel launch made directly by a GEMM or attention operator
// (the trace's gemm_ops, see KinetoTrace); the launches, kernels and operators are among
// trace->events.
void AddGemmCalls(KinetoTrace* trace);

}  // namespace lumos::modeler::kineto
