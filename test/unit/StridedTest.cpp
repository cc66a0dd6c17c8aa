//===- StridedTest.cpp - copyStrided --------------------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Runtime/Strided.h"

#include <gtest/gtest.h>

#include <vector>

using tfc::rt::copyStrided;

namespace {

/// The row-major copy of the view (sizes, strides) of `src`, element by
/// element: what copyStrided must produce.
std::vector<int32_t> reference(const std::vector<int32_t> &src,
                               const std::vector<int64_t> &sizes,
                               const std::vector<int64_t> &strides) {
  std::vector<int32_t> out;
  std::vector<int64_t> index(sizes.size(), 0);
  int64_t total = 1;
  for (int64_t s : sizes)
    total *= s;
  for (int64_t i = 0; i < total; ++i) {
    int64_t offset = 0;
    for (size_t k = 0; k < sizes.size(); ++k)
      offset += index[k] * strides[k];
    out.push_back(src[static_cast<size_t>(offset)]);
    for (size_t k = sizes.size(); k-- > 0;)
      if (++index[k] < sizes[k])
        break;
      else
        index[k] = 0;
  }
  return out;
}

std::vector<int32_t> copy(const std::vector<int32_t> &src,
                          const std::vector<int64_t> &sizes,
                          const std::vector<int64_t> &strides) {
  int64_t total = 1;
  for (int64_t s : sizes)
    total *= s;
  std::vector<int32_t> dst(static_cast<size_t>(total) + 1, -1);
  copyStrided(reinterpret_cast<uint8_t *>(dst.data()),
              reinterpret_cast<const uint8_t *>(src.data()), sizes.data(),
              strides.data(), static_cast<int>(sizes.size()), sizeof(int32_t));
  EXPECT_EQ(dst.back(), -1) << "wrote past the end";
  dst.pop_back();
  return dst;
}

} // namespace

TEST(CopyStrided, EveryKindOfViewComesOutRowMajor) {
  std::vector<int32_t> src(2 * 3 * 4 * 5);
  for (size_t i = 0; i < src.size(); ++i)
    src[i] = static_cast<int32_t>(i);
  struct Case {
    std::vector<int64_t> sizes, strides;
  } cases[] = {
      {{2, 3, 4, 5}, {60, 20, 5, 1}}, // contiguous: one run
      {{2, 2, 4, 5}, {60, 20, 5, 1}}, // a slice of axis 1: runs of 40
      {{2, 3, 4, 2}, {60, 20, 5, 1}}, // a slice of the last axis: runs of 2
      {{2, 3, 5, 4}, {60, 20, 1, 5}}, // transposed last two: element-wise
      {{3, 1, 4}, {20, 7, 5}},        // a size-1 axis with any stride
      {{4, 1}, {5, 3}},               // a column
      {{2, 0, 3}, {60, 20, 1}},       // empty
  };
  for (const Case &c : cases)
    EXPECT_EQ(copy(src, c.sizes, c.strides),
              reference(src, c.sizes, c.strides))
        << "sizes " << ::testing::PrintToString(c.sizes) << " strides "
        << ::testing::PrintToString(c.strides);
  // Rank 0: one element.
  int32_t one = 0;
  copyStrided(reinterpret_cast<uint8_t *>(&one),
              reinterpret_cast<const uint8_t *>(&src[7]), nullptr, nullptr, 0,
              sizeof(int32_t));
  EXPECT_EQ(one, 7);
}
