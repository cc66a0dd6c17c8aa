//===- InterpreterTest.cpp - The reference interpreter on known values ----===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The interpreter is the oracle of the fusion and end-to-end tests, so its
// own semantics are checked here against values worked out by hand.
//
//===----------------------------------------------------------------------===//

#include "tfc/Dialect/Tfc/IR/TfcDialect.h"
#include "tfc/Interpreter/Interpreter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tfc;
using interp::Tensor;

namespace {

class InterpreterTest : public ::testing::Test {
protected:
  InterpreterTest() {
    context.loadDialect<TfcDialect, func::FuncDialect, arith::ArithDialect,
                        tensor::TensorDialect>();
  }

  /// Runs the single function of `source` on `args`; records diagnostics.
  FailureOr<SmallVector<Tensor>> run(StringRef source,
                                     ArrayRef<Tensor> args) {
    module = parseSourceString<ModuleOp>(source, &context);
    if (!module)
      return failure();
    auto fn = *module->getOps<func::FuncOp>().begin();
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
      messages += d.str() + "\n";
      return success();
    });
    return interp::run(fn, args, interp::randomWeights(0));
  }

  Tensor f32(ArrayRef<int64_t> shape, ArrayRef<double> values) {
    Tensor t(Float32Type::get(&context), shape);
    t.data.assign(values.begin(), values.end());
    return t;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  std::string messages;
};

TEST_F(InterpreterTest, SoftmaxOfAFullyMaskedRowIsZero) {
  double inf = INFINITY;
  auto r = run(R"mlir(
    func.func @f(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
      %0 = tfc.softmax %x {axis = 1} : tensor<2x2xf32>
      return %0 : tensor<2x2xf32>
    })mlir",
               {f32({2, 2}, {0.0, std::log(3.0), -inf, -inf})});
  ASSERT_TRUE(succeeded(r)) << messages;
  EXPECT_NEAR((*r)[0].data[0], 0.25, 1e-7);
  EXPECT_NEAR((*r)[0].data[1], 0.75, 1e-7);
  EXPECT_EQ((*r)[0].data[2], 0.0);
  EXPECT_EQ((*r)[0].data[3], 0.0);
}

TEST_F(InterpreterTest, CausalAttentionIsAlignedToTheEndOfTheKeys) {
  // One head, d = 1, keys 0 and 1, values 10 and 20, scale 1.
  StringRef source = R"mlir(
    func.func @f(%q: tensor<1x1x?x1xf32>, %k: tensor<1x1x2x1xf32>,
                 %v: tensor<1x1x2x1xf32>) -> tensor<1x1x?x1xf32> {
      %0 = tfc.attention %q, %k, %v {causal, scale = 1.0 : f64}
          : (tensor<1x1x?x1xf32>, tensor<1x1x2x1xf32>, tensor<1x1x2x1xf32>)
          -> tensor<1x1x?x1xf32>
      return %0 : tensor<1x1x?x1xf32>
    })mlir";
  Tensor k = f32({1, 1, 2, 1}, {0.0, 1.0});
  Tensor v = f32({1, 1, 2, 1}, {10.0, 20.0});
  // Two queries over two keys: query 0 sees key 0 only.
  auto r = run(source, {f32({1, 1, 2, 1}, {1.0, 1.0}), k, v});
  ASSERT_TRUE(succeeded(r)) << messages;
  double p1 = std::exp(1.0) / (1.0 + std::exp(1.0));
  EXPECT_NEAR((*r)[0].data[0], 10.0, 1e-6);
  EXPECT_NEAR((*r)[0].data[1], 10.0 + 10.0 * p1, 1e-5);
  // One query (a decode step) sees both keys.
  r = run(source, {f32({1, 1, 1, 1}, {1.0}), k, v});
  ASSERT_TRUE(succeeded(r)) << messages;
  EXPECT_NEAR((*r)[0].data[0], 10.0 + 10.0 * p1, 1e-5);
}

TEST_F(InterpreterTest, GroupedQueryHeadsShareKeyValueHeads) {
  // Four query heads over two kv heads: heads 0, 1 read kv 0; 2, 3 read kv 1.
  auto r = run(R"mlir(
    func.func @f(%q: tensor<1x4x1x1xf32>, %k: tensor<1x2x1x1xf32>,
                 %v: tensor<1x2x1x1xf32>) -> tensor<1x4x1x1xf32> {
      %0 = tfc.attention %q, %k, %v {scale = 1.0 : f64}
          : (tensor<1x4x1x1xf32>, tensor<1x2x1x1xf32>, tensor<1x2x1x1xf32>)
          -> tensor<1x4x1x1xf32>
      return %0 : tensor<1x4x1x1xf32>
    })mlir",
               {f32({1, 4, 1, 1}, {1, 1, 1, 1}), f32({1, 2, 1, 1}, {0, 0}),
                f32({1, 2, 1, 1}, {3, 7})});
  ASSERT_TRUE(succeeded(r)) << messages;
  EXPECT_EQ((*r)[0].data, (std::vector<double>{3, 3, 7, 7}));
}

TEST_F(InterpreterTest, FullyMaskedAttentionRowIsZero) {
  double inf = INFINITY;
  auto r = run(R"mlir(
    func.func @f(%q: tensor<1x1x2x1xf32>, %k: tensor<1x1x2x1xf32>,
                 %v: tensor<1x1x2x1xf32>, %m: tensor<2x2xf32>)
        -> tensor<1x1x2x1xf32> {
      %0 = tfc.attention %q, %k, %v mask(%m) {scale = 1.0 : f64}
          : (tensor<1x1x2x1xf32>, tensor<1x1x2x1xf32>, tensor<1x1x2x1xf32>,
             tensor<2x2xf32>) -> tensor<1x1x2x1xf32>
      return %0 : tensor<1x1x2x1xf32>
    })mlir",
               {f32({1, 1, 2, 1}, {1, 1}), f32({1, 1, 2, 1}, {0, 0}),
                f32({1, 1, 2, 1}, {4, 8}), f32({2, 2}, {0, 0, -inf, -inf})});
  ASSERT_TRUE(succeeded(r)) << messages;
  EXPECT_NEAR((*r)[0].data[0], 6.0, 1e-6);
  EXPECT_EQ((*r)[0].data[1], 0.0);
}

TEST_F(InterpreterTest, MatmulBroadcastsBatchAndTransposes) {
  // [2, 1, 2] @ [2, 2]ᵀ with transpose_rhs: each batch row times Wᵀ.
  auto r = run(R"mlir(
    func.func @f(%a: tensor<2x1x2xf32>, %w: tensor<2x2xf32>) -> tensor<2x1x2xf32> {
      %0 = tfc.matmul %a, %w {transpose_rhs}
          : (tensor<2x1x2xf32>, tensor<2x2xf32>) -> tensor<2x1x2xf32>
      return %0 : tensor<2x1x2xf32>
    })mlir",
               {f32({2, 1, 2}, {1, 2, 3, 4}), f32({2, 2}, {1, 0, 1, 1})});
  ASSERT_TRUE(succeeded(r)) << messages;
  EXPECT_EQ((*r)[0].data, (std::vector<double>{1, 3, 3, 7}));
}

TEST_F(InterpreterTest, RotateHalfRope) {
  // Position 1 of [x0, x1 | y0, y1]: pair i rotates by 1 / 10000^(2i/4).
  auto r = run(R"mlir(
    func.func @f(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
      %0 = tfc.rope rotate_half %x : tensor<2x4xf32>
      return %0 : tensor<2x4xf32>
    })mlir",
               {f32({2, 4}, {1, 2, 3, 4, 1, 2, 3, 4})});
  ASSERT_TRUE(succeeded(r)) << messages;
  const std::vector<double> &o = (*r)[0].data;
  // Position 0 is unchanged.
  EXPECT_EQ(std::vector<double>(o.begin(), o.begin() + 4),
            (std::vector<double>{1, 2, 3, 4}));
  double t0 = 1.0, t1 = 1.0 / 100.0;
  EXPECT_NEAR(o[4], 1 * std::cos(t0) - 3 * std::sin(t0), 1e-6);
  EXPECT_NEAR(o[6], 3 * std::cos(t0) + 1 * std::sin(t0), 1e-6);
  EXPECT_NEAR(o[5], 2 * std::cos(t1) - 4 * std::sin(t1), 1e-6);
  EXPECT_NEAR(o[7], 4 * std::cos(t1) + 2 * std::sin(t1), 1e-6);
}

TEST_F(InterpreterTest, ResultsAreRoundedToF32) {
  auto r = run(R"mlir(
    func.func @f(%x: tensor<1xf32>) -> tensor<1xf32> {
      %e = arith.constant dense<1.0e-8> : tensor<f32>
      %0 = tfc.add %x, %e : (tensor<1xf32>, tensor<f32>) -> tensor<1xf32>
      return %0 : tensor<1xf32>
    })mlir",
               {f32({1}, {1.0})});
  ASSERT_TRUE(succeeded(r)) << messages;
  EXPECT_EQ((*r)[0].data[0], 1.0);
}

TEST_F(InterpreterTest, EmbeddingIdOutOfRangeIsAnError) {
  Tensor ids(IntegerType::get(&context, 64), {2});
  ids.data = {1, 5};
  auto r = run(R"mlir(
    func.func @f(%ids: tensor<2xi64>) -> tensor<2x4xf32> {
      %t = tfc.weight "table" : tensor<3x4xf32>
      %0 = tfc.embedding %t[%ids] : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
      return %0 : tensor<2x4xf32>
    })mlir",
               {ids});
  EXPECT_TRUE(failed(r));
  EXPECT_NE(messages.find("id 5 is outside the table [0, 3)"),
            std::string::npos)
      << messages;
}

TEST_F(InterpreterTest, WrongArgumentShapeIsAnError) {
  auto r = run(R"mlir(
    func.func @f(%x: tensor<2x?xf32>) -> tensor<2x?xf32> {
      return %x : tensor<2x?xf32>
    })mlir",
               {f32({3, 1}, {1, 2, 3})});
  EXPECT_TRUE(failed(r));
  EXPECT_NE(messages.find("argument #0 has shape [3, 1]"), std::string::npos)
      << messages;
}

} // namespace
