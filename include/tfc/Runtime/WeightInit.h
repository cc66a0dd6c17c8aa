//===- WeightInit.h - Deterministic pseudo-random weights -------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The recipe of the reference interpreter's randomWeights(seed)
// (lib/Interpreter/Interpreter.cpp), reproduced bit for bit without LLVM so
// that tfc-weights writes the weights the interpreter uses and compiled
// models can be compared with it:
//
//  * the generator of a weight is std::mt19937_64 seeded with a 64-bit FNV-1a
//    hash of its name whose offset basis is xor-ed with `seed`;
//  * each element, in row-major order, draws one uniform u in [-1, 1):
//    u = 2 * (x / 2^64) - 1 for the next 64-bit output x (libstdc++'s
//    uniform_real_distribution<double>, spelled out so that it does not
//    depend on the standard library);
//  * biases (names ending in "bias", "beta" or ".b") are 0.1 * u;
//    other rank-1 weights (normalisation scales) are 1 + 0.1 * u;
//    the rest are u / sqrt(fan-in), fan-in being the last dim of a weight of
//    rank 2 or more (1 for scalars);
//  * the double is then rounded once to the weight's element type (nearest,
//    ties to even; integers truncate, booleans are value != 0).
//
// test/unit/WeightInitTest.cpp checks this against the interpreter.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_WEIGHTINIT_H
#define TFC_RUNTIME_WEIGHTINIT_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace tfc::rt {

/// The seed of the generator of weight `name`.
inline uint64_t weightSeed(std::string_view name, uint64_t seed) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (char c : name)
    h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

/// Calls `sink(double)` with the value of every element of weight `name` of
/// `shape`, in row-major order, before rounding to an element type.
template <typename Sink>
void generateWeight(std::string_view name, const std::vector<int64_t> &shape,
                    uint64_t seed, Sink &&sink) {
  auto endsWith = [&](std::string_view suffix) {
    return name.size() >= suffix.size() &&
           name.substr(name.size() - suffix.size()) == suffix;
  };
  bool isBias = endsWith("bias") || endsWith("beta") || endsWith(".b");
  bool isNormScale = shape.size() == 1 && !isBias;
  int64_t fanIn = shape.size() >= 2 ? shape.back() : 1;
  double scale =
      isBias
          ? 0.1
          : 1.0 / std::sqrt(static_cast<double>(std::max<int64_t>(fanIn, 1)));
  uint64_t count = 1;
  for (int64_t d : shape)
    count *= static_cast<uint64_t>(std::max<int64_t>(d, 0));
  std::mt19937_64 rng(weightSeed(name, seed));
  for (uint64_t i = 0; i < count; ++i) {
    double canonical = static_cast<double>(rng()) * 0x1p-64;
    if (canonical >= 1.0)
      canonical = std::nextafter(1.0, 0.0);
    double u = canonical * 2.0 + -1.0;
    sink(isNormScale ? 1.0 + 0.1 * u : scale * u);
  }
}

/// The f32 weights of the recipe, into `out` (one float per element).
inline void tfcFillWeight(const std::string &name,
                          const std::vector<int64_t> &shape, uint64_t seed,
                          float *out) {
  generateWeight(name, shape, seed,
                 [&](double v) { *out++ = static_cast<float>(v); });
}

} // namespace tfc::rt

#endif // TFC_RUNTIME_WEIGHTINIT_H
