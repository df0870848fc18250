// The work of an op's kernel from the inputs the PyTorch profiler records
// (modeler/models/kernels/kernel_op_work.h), on inputs as they appear in the real traces of
// ../shared/data/traces; and which op launched a kernel (kernel_op_link.h).
#include "modeler/models/kernels/kernel_op_work.h"

#include <gtest/gtest.h>

#include "modeler/models/kernels/kernel_op_link.h"

namespace lumos::modeler::models {
namespace {

OpInput T(std::vector<int64_t> dims, const char* type) { return OpInput{std::move(dims), type}; }
OpInput Scalar() { return OpInput{{}, "Scalar"}; }

TEST(KernelOpWorkTest, ElementSizesOfKinetoTypes) {
  EXPECT_EQ(ElementBytes("float"), 4);
  EXPECT_EQ(ElementBytes("c10::BFloat16"), 2);
  EXPECT_EQ(ElementBytes("c10::Half"), 2);
  EXPECT_EQ(ElementBytes("long int"), 8);
  EXPECT_EQ(ElementBytes("bool"), 1);
  EXPECT_EQ(ElementBytes("Scalar"), 0);
  EXPECT_EQ(ElementBytes("TensorList"), 0);
  EXPECT_EQ(ElementBytes(""), 0);
}

TEST(KernelOpWorkTest, ElementwiseOpsReadTheirInputsAndWriteTheBroadcastOutput) {
  // DLRM: aten::add [[1024, 256], [1024, 256], []] float, float, Scalar.
  std::optional<KernelWork> add =
      OpWork("aten::add", {T({1024, 256}, "float"), T({1024, 256}, "float"), Scalar()},
             KernelClass::kElementwise);
  ASSERT_TRUE(add.has_value());
  EXPECT_DOUBLE_EQ(add->bytes, 3.0 * 1024 * 256 * 4);
  EXPECT_DOUBLE_EQ(add->flops, 1024.0 * 256);
  // Broadcasting: [1024, 1] × [1, 256] writes 1024 × 256.
  std::optional<KernelWork> mul =
      OpWork("aten::mul", {T({1024, 1}, "float"), T({1, 256}, "float")}, KernelClass::kElementwise);
  ASSERT_TRUE(mul.has_value());
  EXPECT_DOUBLE_EQ(mul->bytes, (1024.0 + 256 + 1024 * 256) * 4);
  // A 0-d tensor is one element; comparisons write bools.
  std::optional<KernelWork> gt =
      OpWork("aten::gt", {T({1024}, "long int"), T({}, "long int")}, KernelClass::kElementwise);
  ASSERT_TRUE(gt.has_value());
  EXPECT_DOUBLE_EQ(gt->bytes, 1024.0 * 8 + 8 + 1024);
  // Shapes that do not broadcast: no rule.
  EXPECT_FALSE(
      OpWork("aten::add", {T({3, 4}, "float"), T({5, 4}, "float")}, KernelClass::kElementwise)
          .has_value());
}

TEST(KernelOpWorkTest, InPlaceCopyAndFillOpsMoveWhatTheyTouch) {
  // aten::addcmul_ [[3, 16], [3, 16], [3, 16], []]: three read, the first written back.
  std::optional<KernelWork> addcmul = OpWork(
      "aten::addcmul_", {T({3, 16}, "float"), T({3, 16}, "float"), T({3, 16}, "float"), Scalar()},
      KernelClass::kElementwise);
  ASSERT_TRUE(addcmul.has_value());
  EXPECT_DOUBLE_EQ(addcmul->bytes, 4.0 * 48 * 4);
  // aten::copy_ [[3, 128], [3, 128], []] long int ← int: read 4-byte ints, write 8-byte longs.
  std::optional<KernelWork> copy =
      OpWork("aten::copy_", {T({3, 128}, "long int"), T({3, 128}, "int"), Scalar()},
             KernelClass::kElementwise);
  ASSERT_TRUE(copy.has_value());
  EXPECT_DOUBLE_EQ(copy->bytes, 384.0 * 8 + 384.0 * 4);
  std::optional<KernelWork> fill =
      OpWork("aten::fill_", {T({4096}, "float"), Scalar()}, KernelClass::kElementwise);
  ASSERT_TRUE(fill.has_value());
  EXPECT_DOUBLE_EQ(fill->bytes, 4096.0 * 4);
  // A fill whose first input is no tensor we know: no rule.
  EXPECT_FALSE(OpWork("aten::fill_", {Scalar(), T({4}, "float")}, KernelClass::kElementwise));
}

TEST(KernelOpWorkTest, ReductionsNormsAndSoftmaxes) {
  std::optional<KernelWork> sum =
      OpWork("aten::sum", {T({1024, 58272}, "float"), OpInput{{}, ""}, Scalar(), OpInput{{}, ""}},
             KernelClass::kReduction);
  ASSERT_TRUE(sum.has_value());
  EXPECT_DOUBLE_EQ(sum->bytes, 1024.0 * 58272 * 4);
  EXPECT_FALSE(OpWork("aten::sort", {T({1024}, "float")}, KernelClass::kReduction));
  // aten::native_layer_norm [[1024, 512], [], [512], [512], []].
  std::optional<KernelWork> norm = OpWork(
      "aten::native_layer_norm",
      {T({1024, 512}, "float"), OpInput{{}, ""}, T({512}, "float"), T({512}, "float"), Scalar()},
      KernelClass::kNorm);
  ASSERT_TRUE(norm.has_value());
  EXPECT_DOUBLE_EQ(norm->bytes, 2.0 * 1024 * 512 * 4 + 2.0 * 512 * 4);
  EXPECT_FALSE(
      OpWork("aten::native_layer_norm_backward", {T({1024, 512}, "float")}, KernelClass::kNorm));
  std::optional<KernelWork> softmax =
      OpWork("aten::_softmax", {T({64, 1000}, "c10::Half"), Scalar(), OpInput{{}, "bool"}},
             KernelClass::kSoftmax);
  ASSERT_TRUE(softmax.has_value());
  EXPECT_DOUBLE_EQ(softmax->bytes, 2.0 * 64 * 1000 * 2);
  std::optional<KernelWork> back =
      OpWork("aten::_softmax_backward_data", {T({64, 1000}, "float"), T({64, 1000}, "float")},
             KernelClass::kSoftmax);
  ASSERT_TRUE(back.has_value());
  EXPECT_DOUBLE_EQ(back->bytes, 3.0 * 64 * 1000 * 4);
}

TEST(KernelOpWorkTest, ListsAndUnknownOpsHaveNoRule) {
  EXPECT_FALSE(
      OpWork("aten::cat", {OpInput{{}, "TensorList"}, Scalar()}, KernelClass::kElementwise));
  EXPECT_FALSE(OpWork("aten::_foreach_add_", {OpInput{{}, "TensorList"}}, KernelClass::kOptimizer));
  EXPECT_FALSE(OpWork("aten::index_select", {T({755000}, "float"), Scalar(), T({1024}, "int")},
                      KernelClass::kEmbedding));
  EXPECT_FALSE(OpWork("aten::add", {Scalar(), Scalar()}, KernelClass::kElementwise));
  EXPECT_FALSE(OpWork("aten::add", {T({-1, 4}, "float")}, KernelClass::kElementwise));
  EXPECT_FALSE(OpWork("aten::add", {T({1 << 30, 1 << 30}, "float")}, KernelClass::kElementwise));
}

TEST(NestedRangesTest, TheInnermostRangeAroundALaunchIsItsOp) {
  NestedRanges ranges;
  ranges.Add(0, 100, 0);  // aten::linear
  ranges.Add(10, 40, 1);  //   aten::addmm
  ranges.Add(50, 90, 2);  //   aten::add
  ranges.Add(60, 70, 3);  //     aten::copy_
  ranges.Add(200, 300, 4);
  ranges.Build();
  EXPECT_EQ(ranges.Innermost(20, 25), 1);
  EXPECT_EQ(ranges.Innermost(45, 46), 0);  // Between children: the parent.
  EXPECT_EQ(ranges.Innermost(62, 65), 3);
  EXPECT_EQ(ranges.Innermost(75, 80), 2);
  EXPECT_EQ(ranges.Innermost(95, 120), -1);  // Runs past every range.
  EXPECT_EQ(ranges.Innermost(150, 151), -1);
  EXPECT_EQ(ranges.Innermost(250, 250), 4);
  EXPECT_EQ(ranges.Innermost(-5, -1), -1);
  NestedRanges empty;
  empty.Build();
  EXPECT_EQ(empty.Innermost(0, 1), -1);
}

}  // namespace
}  // namespace lumos::modeler::models
