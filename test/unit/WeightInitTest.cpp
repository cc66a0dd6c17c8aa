//===- WeightInitTest.cpp - tfc-weights' recipe equals the interpreter's --===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// WeightInit.h reproduces interp::randomWeights without LLVM; this checks
// that both give bit-identical values for each kind of weight (matrices,
// biases, normalisation scales, scalars) and element type, so a change to
// either side fails here. Also the 16-bit conversions against APFloat.
//
//===----------------------------------------------------------------------===//

#include "tfc/Runtime/WeightInit.h"
#include "tfc/Formats/Float16.h"
#include "tfc/Interpreter/Interpreter.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/APFloat.h"

#include "gtest/gtest.h"

#include <random>

using namespace mlir;
using namespace ::tfc::rt;
namespace interp = mlir::tfc::interp;

namespace {

/// What tfc-weights writes for an element type, as a double.
double roundLikeTheRuntime(Type type, double v) {
  if (type.isF32())
    return static_cast<float>(v);
  if (type.isF16())
    return halfToFloat(doubleToHalf(v));
  if (type.isBF16())
    return bfloat16ToFloat(doubleToBFloat16(v));
  return v;
}

TEST(WeightInit, MatchesTheInterpretersRandomWeights) {
  MLIRContext context;
  Builder b(&context);
  struct Case {
    const char *name;
    std::vector<int64_t> shape;
  };
  const Case cases[] = {{"h.0.attn.c_attn.weight", {7, 13}},
                        {"h.0.attn.c_attn.bias", {13}},
                        {"ln_f.weight", {16}},
                        {"ln_f.beta", {16}},
                        {"proj.b", {5}},
                        {"scale", {}},
                        {"wte.weight", {3, 4, 5}},
                        {"", {4}},
                        {"emb", {0, 3}}};
  for (Type element : {Type(b.getF32Type()), Type(b.getF16Type()),
                       Type(b.getBF16Type()), Type(b.getF64Type())}) {
    for (uint64_t seed : {0ull, 1ull, 12345ull}) {
      interp::WeightProvider weights = interp::randomWeights(seed);
      for (const Case &c : cases) {
        auto type = RankedTensorType::get(c.shape, element);
        FailureOr<interp::Tensor> expected = weights(c.name, type);
        ASSERT_TRUE(succeeded(expected));
        std::vector<double> ours;
        generateWeight(c.name, c.shape, seed, [&](double v) {
          ours.push_back(roundLikeTheRuntime(element, v));
        });
        ASSERT_EQ(ours.size(), expected->data.size()) << c.name;
        for (size_t i = 0; i < ours.size(); ++i)
          ASSERT_EQ(ours[i], expected->data[i])
              << c.name << "[" << i << "], seed " << seed;
      }
    }
  }
  // The float helper is the same recipe.
  std::vector<float> f(6);
  tfcFillWeight("w", {2, 3}, 7, f.data());
  auto expected = interp::randomWeights(7)(
      "w", RankedTensorType::get({2, 3}, b.getF32Type()));
  for (size_t i = 0; i < f.size(); ++i)
    EXPECT_EQ(f[i], expected->data[i]);
}

TEST(WeightInit, SixteenBitRoundingMatchesAPFloat) {
  std::mt19937_64 rng(1);
  std::vector<double> values = {0.0,      -0.0,     1.0,      65504.0, 65519.0,
                                65520.0,  1e-8,     5.96e-8,  2.98e-8, 6.1e-5,
                                1e38,     3.4e38,   -3.39e38, 1e-40,   -1e-45,
                                INFINITY, -INFINITY};
  std::uniform_real_distribution<double> unit(-1, 1);
  for (int i = 0; i < 20000; ++i)
    values.push_back(std::ldexp(unit(rng), static_cast<int>(rng() % 80) - 40));
  for (double v : values) {
    bool lost;
    llvm::APFloat h(v);
    h.convert(llvm::APFloat::IEEEhalf(), llvm::APFloat::rmNearestTiesToEven,
              &lost);
    EXPECT_EQ(doubleToHalf(v), h.bitcastToAPInt().getZExtValue()) << v;
    llvm::APFloat bf(v);
    bf.convert(llvm::APFloat::BFloat(), llvm::APFloat::rmNearestTiesToEven,
               &lost);
    EXPECT_EQ(doubleToBFloat16(v), bf.bitcastToAPInt().getZExtValue()) << v;
    EXPECT_EQ(static_cast<double>(halfToFloat(doubleToHalf(v))),
              h.convertToDouble());
  }
  EXPECT_TRUE(std::isnan(halfToFloat(doubleToHalf(NAN))));
  EXPECT_TRUE(std::isnan(bfloat16ToFloat(doubleToBFloat16(NAN))));
}

} // namespace
