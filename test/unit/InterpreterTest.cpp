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

// The tests below check one op family each against values worked out from
// the formulas of the design brief (docs/language.md), by hand or with
// Python's math module, never with the interpreter's code. Each input is
// chosen so that the usual mistakes (eps outside the square root, the
// unbiased variance, the other GELU, the other RoPE pairing, sin and cos in
// halves instead of interleaved, an ignored mask, heads split the wrong way)
// give visibly different values. Results are f32: 3e-7 is about one ulp at
// the magnitudes used.

TEST_F(InterpreterTest, LayerNormUsesTheBiasedVarianceWithEpsInsideTheRoot) {
  // Row 0: [1, 2, 3, 6] has mean 3, deviations [-2, -1, 0, 3] and biased
  // variance (4 + 1 + 0 + 9) / 4 = 3.5; with eps = 0.5, sqrt(3.5 + 0.5) = 2,
  // so the normalised row is [-1, -0.5, 0, 1.5]. (eps outside the root would
  // divide by 2.3708, the unbiased variance by 2.2730.) Then * gamma
  // [1, 2, 3, 4] + beta [0.5, 0, -0.5, 1]. Row 1 is constant: 0 / sqrt(eps),
  // so the output is beta.
  auto r = run(R"mlir(
    func.func @f(%x: tensor<2x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>)
        -> tensor<2x4xf32> {
      %0 = tfc.layer_norm %x scale(%g) bias(%b) {epsilon = 0.5}
          : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
      return %0 : tensor<2x4xf32>
    })mlir",
               {f32({2, 4}, {1, 2, 3, 6, 2, 2, 2, 2}), f32({4}, {1, 2, 3, 4}),
                f32({4}, {0.5, 0, -0.5, 1})});
  ASSERT_TRUE(succeeded(r)) << messages;
  EXPECT_EQ((*r)[0].data,
            (std::vector<double>{-0.5, -1, -0.5, 7, 0.5, 0, -0.5, 1}));
}

TEST_F(InterpreterTest, RmsNormDividesByTheRootMeanSquareWithoutCentring) {
  // [1, 3, 5, 7]: mean of squares (1 + 9 + 25 + 49) / 4 = 21; with eps = 4,
  // sqrt(25) = 5: [0.2, 0.6, 1.0, 1.4], times scale [1, 0.5, 2, -1]. (A
  // LayerNorm would centre at 4 first.)
  auto r = run(R"mlir(
    func.func @f(%x: tensor<1x4xf32>, %g: tensor<4xf32>) -> tensor<1x4xf32> {
      %0 = tfc.rms_norm %x scale(%g) {epsilon = 4.0}
          : (tensor<1x4xf32>, tensor<4xf32>) -> tensor<1x4xf32>
      return %0 : tensor<1x4xf32>
    })mlir",
               {f32({1, 4}, {1, 3, 5, 7}), f32({4}, {1, 0.5, 2, -1})});
  ASSERT_TRUE(succeeded(r)) << messages;
  const std::vector<double> &o = (*r)[0].data;
  std::vector<double> want = {0.2, 0.3, 2.0, -1.4};
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(o[i], want[i], 3e-7) << "element " << i;
}

TEST_F(InterpreterTest, GeluErfAndTanhForms) {
  // erf form: x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2)); tanh form ("gelu_new"):
  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). The two differ by 1.7e-5
  // to 4.1e-4 at these points, far above f32 rounding.
  std::vector<double> x = {-2, -1, -0.5, 0.5, 1, 2, 3};
  std::vector<double> erfForm = {-0.04550026389635842, -0.15865525393145707,
                                 -0.15426876936299344, 0.34573123063700656,
                                 0.8413447460685429,   1.9544997361036416,
                                 2.99595030590511};
  std::vector<double> tanhForm = {-0.04540230591222494, -0.15880800939172324,
                                  -0.15428599017485606, 0.34571400982514394,
                                  0.8411919906082768,   1.954597694087775,
                                  2.996362607918227};
  for (auto [form, want] : {std::pair{"erf", &erfForm}, {"tanh", &tanhForm}}) {
    std::string source = R"mlir(
      func.func @f(%x: tensor<7xf32>) -> tensor<7xf32> {
        %0 = tfc.gelu FORM %x : tensor<7xf32>
        return %0 : tensor<7xf32>
      })mlir";
    source.replace(source.find("FORM"), 4, form);
    auto r = run(source, {f32({7}, x)});
    ASSERT_TRUE(succeeded(r)) << messages;
    for (size_t i = 0; i < x.size(); ++i)
      EXPECT_NEAR((*r)[0].data[i], (*want)[i], 3e-7)
          << form << " form at x = " << x[i];
  }
}

TEST_F(InterpreterTest, SinusoidalPositionsInterleaveSinAndCos) {
  // PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(same), d = 4:
  // pair 0 has frequency 1, pair 1 frequency 1/100. Rows are positions 0, 1,
  // 2; with offset 2, one row at position 2.
  auto r = run(R"mlir(
    func.func @f() -> (tensor<3x4xf32>, tensor<1x4xf32>) {
      %n = arith.constant 3 : index
      %one = arith.constant 1 : index
      %two = arith.constant 2 : index
      %0 = tfc.sinusoidal_positions %n : tensor<3x4xf32>
      %1 = tfc.sinusoidal_positions %one offset(%two) : tensor<1x4xf32>
      return %0, %1 : tensor<3x4xf32>, tensor<1x4xf32>
    })mlir",
               {});
  ASSERT_TRUE(succeeded(r)) << messages;
  // Rows: sin(pos), cos(pos), sin(pos / 100), cos(pos / 100).
  const double want[3][4] = {{0, 1, 0, 1},
                             {0.8414709848078965, 0.5403023058681398,
                              0.009999833334166664, 0.9999500004166653},
                             {0.9092974268256817, -0.4161468365471424,
                              0.01999866669333308, 0.9998000066665778}};
  for (int pos = 0; pos < 3; ++pos)
    for (int i = 0; i < 4; ++i)
      EXPECT_NEAR((*r)[0].data[4 * pos + i], want[pos][i], 3e-7)
          << "position " << pos << ", feature " << i;
  for (int i = 0; i < 4; ++i)
    EXPECT_NEAR((*r)[1].data[i], want[2][i], 3e-7) << "offset, feature " << i;
}

TEST_F(InterpreterTest, RopeInBothPairings) {
  // Rows at positions 0, 1, 2 of x = [1, 2, 3, 4], d = 4: pair p rotates by
  // pos / 10000^(2p/4), i.e. by pos and pos / 100. Adjacent (GPT-J) pairs
  // are (x0, x1), (x2, x3); rotate-half (LLaMA) pairs are (x0, x2), (x1, x3).
  // First of a pair: a cos - b sin; second: b cos + a sin.
  const double adjacent[3][4] = {{1, 2, 3, 4},
                                 {-1.1426396637476532, 1.922075596544176,
                                  2.9598506679133294, 4.029799501669161},
                                 {-2.234741690198506, 0.0770037537313969,
                                  2.919405353226401, 4.05919602674631}};
  const double rotateHalf[3][4] = {{1, 2, 3, 4},
                                   {-1.9841106485555495, 1.959900667496664,
                                    2.4623779024123156, 4.019799668334994},
                                   {-3.1440391170241875, 1.9196053465598233,
                                    -0.33914308281574557, 4.039197360052977}};
  for (auto [mode, want] :
       {std::pair{"adjacent", &adjacent}, {"rotate_half", &rotateHalf}}) {
    std::string source = R"mlir(
      func.func @f(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
        %0 = tfc.rope MODE %x : tensor<3x4xf32>
        return %0 : tensor<3x4xf32>
      })mlir";
    source.replace(source.find("MODE"), 4, mode);
    auto r = run(source, {f32({3, 4}, {1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4})});
    ASSERT_TRUE(succeeded(r)) << messages;
    for (int pos = 0; pos < 3; ++pos)
      for (int i = 0; i < 4; ++i)
        EXPECT_NEAR((*r)[0].data[4 * pos + i], (*want)[pos][i], 5e-7)
            << mode << ", position " << pos << ", feature " << i;
  }
}

TEST_F(InterpreterTest, PaddingMaskMasksTheKeysOfEachBatchRow) {
  // The 1/0 mask [[1, 1, 0], [1, 0, 0]] becomes the additive bias
  // [B, 1, 1, T] = 0 where 1 and -inf where 0.
  double inf = INFINITY;
  Tensor mask(IntegerType::get(&context, 64), {2, 3});
  mask.data = {1, 1, 0, 1, 0, 0};
  auto r = run(R"mlir(
    func.func @f(%m: tensor<2x3xi64>) -> tensor<2x1x1x3xf32> {
      %0 = tfc.padding_mask %m : tensor<2x3xi64> -> tensor<2x1x1x3xf32>
      return %0 : tensor<2x1x1x3xf32>
    })mlir",
               {mask});
  ASSERT_TRUE(succeeded(r)) << messages;
  EXPECT_EQ((*r)[0].data, (std::vector<double>{0, 0, -inf, 0, -inf, -inf}));

  // Through attention: q = 1, keys [0, 1, 5], values [1, 2, 4], scale 1.
  // Row 0 keeps keys 0 and 1: (1 * e^0 + 2 * e^1) / (e^0 + e^1) = 1.7310586
  // (3.9445 if the mask were ignored); row 1 keeps key 0 only: 1.
  auto a =
      run(R"mlir(
    func.func @f(%q: tensor<2x1x1x1xf32>, %k: tensor<2x1x3x1xf32>,
                 %v: tensor<2x1x3x1xf32>, %m: tensor<2x3xi64>)
        -> tensor<2x1x1x1xf32> {
      %b = tfc.padding_mask %m : tensor<2x3xi64> -> tensor<2x1x1x3xf32>
      %0 = tfc.attention %q, %k, %v mask(%b) {scale = 1.0 : f64}
          : (tensor<2x1x1x1xf32>, tensor<2x1x3x1xf32>, tensor<2x1x3x1xf32>,
             tensor<2x1x1x3xf32>) -> tensor<2x1x1x1xf32>
      return %0 : tensor<2x1x1x1xf32>
    })mlir",
          {f32({2, 1, 1, 1}, {1, 1}), f32({2, 1, 3, 1}, {0, 1, 5, 0, 1, 5}),
           f32({2, 1, 3, 1}, {1, 2, 4, 1, 2, 4}), mask});
  ASSERT_TRUE(succeeded(a)) << messages;
  EXPECT_NEAR((*a)[0].data[0], 1.7310585786300048, 3e-7);
  EXPECT_NEAR((*a)[0].data[1], 1.0, 3e-7);
}

TEST_F(InterpreterTest, CausalMaskIsAlignedToTheEndOfTheKeys) {
  // 2 queries over 3 keys: query i sees keys j <= i + (3 - 2).
  double inf = INFINITY;
  auto r = run(R"mlir(
    func.func @f() -> tensor<2x3xf32> {
      %q = arith.constant 2 : index
      %k = arith.constant 3 : index
      %0 = tfc.causal_mask %q, %k : tensor<2x3xf32>
      return %0 : tensor<2x3xf32>
    })mlir",
               {});
  ASSERT_TRUE(succeeded(r)) << messages;
  EXPECT_EQ((*r)[0].data, (std::vector<double>{0, 0, -inf, 0, 0, 0}));
}

TEST_F(InterpreterTest, SplitAndMergeHeads) {
  // [1, T = 2, H*D = 4] with 2 heads of 2: head h of position t holds
  // features [2h, 2h + 1] of t. x = 0..7, so head 0 is [[0, 1], [4, 5]] and
  // head 1 [[2, 3], [6, 7]]; merging gives x back.
  auto r = run(R"mlir(
    func.func @f(%x: tensor<1x2x4xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x4xf32>) {
      %h = tfc.split_heads %x {heads = 2} : tensor<1x2x4xf32> -> tensor<1x2x2x2xf32>
      %m = tfc.merge_heads %h : tensor<1x2x2x2xf32> -> tensor<1x2x4xf32>
      return %h, %m : tensor<1x2x2x2xf32>, tensor<1x2x4xf32>
    })mlir",
               {f32({1, 2, 4}, {0, 1, 2, 3, 4, 5, 6, 7})});
  ASSERT_TRUE(succeeded(r)) << messages;
  EXPECT_EQ((*r)[0].data, (std::vector<double>{0, 1, 4, 5, 2, 3, 6, 7}));
  EXPECT_EQ((*r)[1].data, (std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7}));
}

// The comparisons of the test suite (tfc-interpret --compare, --compare-npy).

TEST_F(InterpreterTest, NaNsNeverCompareEqual) {
  Tensor nan = f32({2}, {NAN, NAN});
  EXPECT_TRUE(std::isnan(interp::maxAbsDifference(nan, nan)));
  EXPECT_FALSE(interp::maxAbsDifference(nan, nan) <= 1e30);
  EXPECT_TRUE(std::isnan(
      interp::maxAbsDifference(f32({2}, {1, NAN}), f32({2}, {1, NAN}))));
  interp::ElementwiseAgreement a = interp::compareElementwise(nan, nan);
  EXPECT_FALSE(a.within(1e30));
  EXPECT_EQ(a.problem, "2 non-finite values (NaN or inf) in the result");
  // Infinities are not accepted either (an overflow is a failure).
  double inf = INFINITY;
  EXPECT_FALSE(
      interp::compareElementwise(f32({2}, {1, inf}), f32({2}, {1, inf}))
          .within(1e30));
}

TEST_F(InterpreterTest, ElementwiseAgreementIsRelativeWithAnRmsFloor) {
  // want = [1, -2, 2, -1]: rms = sqrt(10 / 4) = 1.581; an error of 3e-5 on
  // the element 2 is 1.5e-5 of it.
  Tensor want = f32({2, 2}, {1, -2, 2, -1});
  interp::ElementwiseAgreement a =
      interp::compareElementwise(want, f32({2, 2}, {1, -2, 2.00003, -1}));
  EXPECT_TRUE(a.problem.empty()) << a.problem;
  EXPECT_NEAR(a.floor, std::sqrt(2.5), 1e-12);
  EXPECT_NEAR(a.worst, 1.5e-5, 1e-7);
  EXPECT_EQ(a.worstIndex, 2);
  EXPECT_FALSE(a.within(1e-5));
  EXPECT_TRUE(a.within(2e-5));
  // An error on an element near zero is measured against the rms (2 here),
  // not against the element itself.
  Tensor spike = f32({4}, {4, 0, 0, 0});
  EXPECT_TRUE(interp::compareElementwise(spike, f32({4}, {4, 1.5e-5, 0, 0}))
                  .within(1e-5));
  EXPECT_FALSE(interp::compareElementwise(spike, f32({4}, {4, 2.5e-5, 0, 0}))
                   .within(1e-5));
  // A whole-tensor scale (1e-5 x max |want| = 4e-5) would accept 3e-5 on the
  // element 1 of [4, 1, 1, 1]; per element (rms 2.18, so 1e-5 x 2.18) it is
  // a failure.
  EXPECT_FALSE(interp::compareElementwise(f32({4}, {4, 1, 1, 1}),
                                          f32({4}, {4, 1.00003, 1, 1}))
                   .within(1e-5));
}

TEST_F(InterpreterTest, ConstantOrMisshapenResultsNeverAgree) {
  EXPECT_EQ(interp::compareElementwise(f32({3}, {1, 2, 3}), f32({3}, {2, 2, 2}))
                .problem,
            "the result is constant");
  EXPECT_EQ(interp::compareElementwise(f32({3}, {0, 0, 0}), f32({3}, {0, 0, 0}))
                .problem,
            "the reference is constant");
  EXPECT_EQ(
      interp::compareElementwise(f32({3}, {1, 2, 3}), f32({1, 3}, {1, 2, 3}))
          .problem,
      "the shapes differ");
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
