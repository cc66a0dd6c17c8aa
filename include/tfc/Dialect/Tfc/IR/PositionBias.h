//===- PositionBias.h - ALiBi slopes and T5 buckets -------------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The two relative position schemes tfc.attention computes on the fly
// (TfcOps.td has their definitions): ALiBi's per-head slopes and T5's
// buckets of the distance between query and key. The interpreter, the
// lowering of tfc.relative_position_bias and the kernels (through
// buildAlibiSlope; the C decode micro-kernel gets the slopes computed by it)
// share these.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_DIALECT_TFC_IR_POSITIONBIAS_H
#define TFC_DIALECT_TFC_IR_POSITIONBIAS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace mlir::tfc {

/// ALiBi slope of head `head` of `heads` with maximum bias `maxBias`:
/// 2^(-m(h+1)/p) for h < p (p the largest power of two <= heads), else
/// 2^(-m(2(h-p)+1)/(2p)) (BLOOM's and MPT's heads past a power of two).
double alibiSlope(int64_t head, int64_t heads, double maxBias);

/// The same slope computed in f32 by IR at run time, from index values.
Value buildAlibiSlope(OpBuilder &b, Location loc, Value head, Value heads,
                      double maxBias);

/// T5's bucket of the distance r = key - query (Hugging Face's
/// `_relative_position_bucket`, its single-precision arithmetic included).
int64_t relativeBucket(int64_t r, int64_t numBuckets, int64_t maxDistance,
                       bool bidirectional);

/// The logarithmic buckets of one direction with `buckets` buckets (after
/// halving for bidirectional): the distance at which each bucket after the
/// first logarithmic one (buckets / 2) begins, so that the bucket of a
/// distance d >= buckets / 2 is buckets / 2 + (the number of starts <= d);
/// distances from `maxDistance` on fall into the last bucket.
SmallVector<int64_t> relativeBucketStarts(int64_t buckets,
                                          int64_t maxDistance);

/// Why (numBuckets, maxDistance, bidirectional) does not define buckets, or
/// an empty string.
std::string relativeBucketsError(int64_t numBuckets, int64_t maxDistance,
                                 bool bidirectional);

} // namespace mlir::tfc

#endif // TFC_DIALECT_TFC_IR_POSITIONBIAS_H
