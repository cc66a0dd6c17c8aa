//===- Strided.h - Copies out of strided arrays -----------------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_STRIDED_H
#define TFC_RUNTIME_STRIDED_H

#include <cstddef>
#include <cstdint>

namespace tfc::rt {

/// Copies the `rank`-dimensional array at `src` (element strides `strides`,
/// in elements of `elementSize` bytes) into contiguous row-major `dst`. The
/// innermost dimensions that are contiguous in `src` (all of them for an
/// output the model wrote densely) go in one memcpy per run of them. Rank 0
/// copies one element.
void copyStrided(uint8_t *dst, const uint8_t *src, const int64_t *sizes,
                 const int64_t *strides, int rank, size_t elementSize);

} // namespace tfc::rt

#endif // TFC_RUNTIME_STRIDED_H
