//===- Strided.cpp - Copies out of strided arrays -------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Runtime/Strided.h"

#include <cstring>
#include <vector>

void tfc::rt::copyStrided(uint8_t *dst, const uint8_t *src,
                          const int64_t *sizes, const int64_t *strides,
                          int rank, size_t elementSize) {
  uint64_t total = 1;
  for (int k = 0; k < rank; ++k)
    total *= static_cast<uint64_t>(sizes[k]);
  if (total == 0)
    return;
  // Dimensions [inner, rank) are one contiguous run of `run` elements.
  int inner = rank;
  int64_t run = 1;
  while (inner > 0 && (sizes[inner - 1] == 1 || strides[inner - 1] == run)) {
    --inner;
    run *= sizes[inner];
  }
  size_t runBytes = static_cast<size_t>(run) * elementSize;
  std::vector<int64_t> index(static_cast<size_t>(inner), 0);
  for (uint64_t i = 0; i < total / static_cast<uint64_t>(run); ++i) {
    int64_t offset = 0;
    for (int k = 0; k < inner; ++k)
      offset += index[k] * strides[k];
    std::memcpy(dst + i * runBytes,
                src + offset * static_cast<int64_t>(elementSize), runBytes);
    for (int k = inner - 1; k >= 0; --k) {
      if (++index[k] < sizes[k])
        break;
      index[k] = 0;
    }
  }
}
