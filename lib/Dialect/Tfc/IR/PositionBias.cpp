//===- PositionBias.cpp - ALiBi slopes and T5 buckets ---------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Dialect/Tfc/IR/PositionBias.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <algorithm>
#include <cmath>
#include <string>

using namespace mlir;

namespace {
int64_t largestPowerOfTwoAtMost(int64_t n) {
  int64_t p = 1;
  while (p * 2 <= n)
    p *= 2;
  return p;
}

/// The logarithmic bucket offset of distance d >= maxExact, before the cap:
/// (int64)(log(f32(d) / maxExact) / f32(log(maxDistance / maxExact)) *
/// (buckets - maxExact)) in f32, as transformers computes it.
int64_t logarithmicOffset(int64_t d, int64_t buckets, int64_t maxDistance) {
  int64_t maxExact = buckets / 2;
  float ratio = static_cast<float>(d) / static_cast<float>(maxExact);
  float scale = static_cast<float>(
      std::log(static_cast<double>(maxDistance) / static_cast<double>(maxExact)));
  float v = std::log(ratio) / scale * static_cast<float>(buckets - maxExact);
  return static_cast<int64_t>(v);
}
} // namespace

double tfc::alibiSlope(int64_t head, int64_t heads, double maxBias) {
  int64_t p = largestPowerOfTwoAtMost(std::max<int64_t>(heads, 1));
  if (head < p)
    return std::exp2(-maxBias * static_cast<double>(head + 1) /
                     static_cast<double>(p));
  return std::exp2(-maxBias * static_cast<double>(2 * (head - p) + 1) /
                   static_cast<double>(2 * p));
}

Value tfc::buildAlibiSlope(OpBuilder &b, Location loc, Value head,
                           Value heads, double maxBias) {
  Type i64 = b.getI64Type(), f32 = b.getF32Type();
  auto i64c = [&](int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v))
        .getResult();
  };
  Value h = arith::IndexCastOp::create(b, loc, i64, head);
  Value n = arith::MaxSIOp::create(
      b, loc, arith::IndexCastOp::create(b, loc, i64, heads), i64c(1));
  // p = 2^(63 - clz(n))
  Value p = arith::ShLIOp::create(
      b, loc, i64c(1),
      arith::SubIOp::create(b, loc, i64c(63),
                            math::CountLeadingZerosOp::create(b, loc, n)));
  Value below = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, h, p);
  // exponent numerator / denominator as in alibiSlope
  Value numLow = arith::AddIOp::create(b, loc, h, i64c(1));
  Value numHigh = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, arith::SubIOp::create(b, loc, h, p),
                            i64c(2)),
      i64c(1));
  Value num = arith::SelectOp::create(b, loc, below, numLow, numHigh);
  Value den = arith::SelectOp::create(
      b, loc, below, p, arith::MulIOp::create(b, loc, p, i64c(2)));
  Value exponent = arith::DivFOp::create(
      b, loc,
      arith::MulFOp::create(
          b, loc, arith::SIToFPOp::create(b, loc, f32, num),
          arith::ConstantOp::create(b, loc,
                                    b.getF32FloatAttr(static_cast<float>(
                                        -maxBias)))),
      arith::SIToFPOp::create(b, loc, f32, den));
  return math::Exp2Op::create(b, loc, exponent);
}

int64_t tfc::relativeBucket(int64_t r, int64_t numBuckets,
                            int64_t maxDistance, bool bidirectional) {
  int64_t bucket = 0, buckets = numBuckets, d;
  if (bidirectional) {
    buckets /= 2;
    if (r > 0)
      bucket += buckets;
    d = r < 0 ? -r : r;
  } else {
    d = r < 0 ? -r : 0;
  }
  int64_t maxExact = buckets / 2;
  if (d < maxExact)
    return bucket + d;
  return bucket + std::min(maxExact + logarithmicOffset(d, buckets,
                                                        maxDistance),
                           buckets - 1);
}

SmallVector<int64_t> tfc::relativeBucketStarts(int64_t buckets,
                                               int64_t maxDistance) {
  SmallVector<int64_t> starts;
  int64_t maxExact = buckets / 2;
  int64_t last = maxExact;
  for (int64_t d = maxExact; d <= maxDistance; ++d) {
    int64_t bucket = std::min(
        maxExact + logarithmicOffset(d, buckets, maxDistance), buckets - 1);
    while (last < bucket) {
      starts.push_back(d);
      ++last;
    }
  }
  return starts;
}

std::string tfc::relativeBucketsError(int64_t numBuckets,
                                      int64_t maxDistance,
                                      bool bidirectional) {
  int64_t buckets = bidirectional ? numBuckets / 2 : numBuckets;
  if (buckets < 2)
    return "needs at least " + std::to_string(bidirectional ? 4 : 2) +
           " buckets" + (bidirectional ? " (bidirectional)" : "") + ", got " +
           std::to_string(numBuckets);
  if (maxDistance <= buckets / 2)
    return "max_distance " + std::to_string(maxDistance) +
           " must exceed the " + std::to_string(buckets / 2) +
           " exact buckets";
  // The bias by distance has 2 max_distance + 1 columns per head.
  if (maxDistance > (int64_t(1) << 20))
    return "max_distance " + std::to_string(maxDistance) +
           " is larger than 2^20 (T5 uses 128)";
  return "";
}
