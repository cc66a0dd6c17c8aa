//===- PackedWeightsTest.cpp - Packed weights files -----------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The writer and the checked reader of include/tfc/Formats/PackedWeights.h:
// a round trip, and every rule of the reader on damaged images.
//
//===----------------------------------------------------------------------===//

#include "tfc/Formats/PackedWeights.h"

#include "gtest/gtest.h"

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace tfc::rt;

namespace {

std::string tempPath(const std::string &name) {
  return ::testing::TempDir() + "tfc-packed-test-" + name;
}

std::string readAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// A file of three slots: 12 bytes, none, 5000 bytes.
std::string writeSample(std::vector<char> &big) {
  static const float small[] = {1, 2, 3};
  big.assign(5000, 0);
  for (size_t i = 0; i < big.size(); ++i)
    big[i] = static_cast<char>(i * 7);
  std::string path = tempPath("sample.tfcw"), error;
  EXPECT_TRUE(writePackedWeights(
      path, 0x1234, {{small, sizeof(small)}, {nullptr, 0}, {big.data(), 5000}},
      error))
      << error;
  return path;
}

std::string parseError(const std::string &bytes) {
  PackedHeader h;
  std::string error;
  EXPECT_FALSE(parsePackedWeights(bytes, h, error));
  return error;
}

void putU64(std::string &bytes, size_t at, uint64_t v) {
  std::memcpy(&bytes[at], &v, 8);
}

} // namespace

TEST(PackedWeightsTest, RoundTrip) {
  std::vector<char> big;
  std::string path = writeSample(big), error;
  EXPECT_TRUE(isPackedWeightsFile(path));
  auto file = PackedWeightsFile::open(path, error);
  ASSERT_TRUE(file) << error;
  EXPECT_EQ(file->header().key, 0x1234u);
  ASSERT_EQ(file->header().slots.size(), 3u);
  auto *small = static_cast<const float *>(file->slotData(0));
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(small[2], 3.0f);
  EXPECT_EQ(file->slotData(1), nullptr);
  EXPECT_EQ(file->slotData(3), nullptr);
  const void *b = file->slotData(2);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % 4096, 0u); // on its own pages
  EXPECT_EQ(std::memcmp(b, big.data(), big.size()), 0);
}

TEST(PackedWeightsTest, DamagedImages) {
  std::vector<char> big;
  std::string good = readAll(writeSample(big));
  EXPECT_NE(parseError(good.substr(0, 20)).find("not a packed weights file"),
            std::string::npos);
  std::string bytes = good;
  bytes[0] = 'X';
  EXPECT_NE(parseError(bytes).find("not a packed weights file"),
            std::string::npos);
  bytes = good;
  bytes[8] = 2;
  EXPECT_NE(parseError(bytes).find("format version 2 is not supported"),
            std::string::npos);
  bytes = good;
  bytes[12] = 1;
  EXPECT_NE(parseError(bytes).find("unknown flags 1"), std::string::npos);
  EXPECT_NE(parseError(good + "x").find("truncated or appended to"),
            std::string::npos);
  bytes = good;
  putU64(bytes, 24, uint64_t(1) << 60); // slot count
  EXPECT_NE(parseError(bytes).find("more than the file can hold"),
            std::string::npos);
  bytes = good;
  putU64(bytes, 40, 4100); // slot 0's offset
  EXPECT_NE(parseError(bytes).find("slot 0: offset 4100 is not a multiple of "
                                   "64"),
            std::string::npos);
  bytes = good;
  putU64(bytes, 40 + 2 * 16 + 8, ~uint64_t(0)); // slot 2's size
  EXPECT_NE(parseError(bytes).find("slot 2: bytes ["), std::string::npos);
  bytes = good;
  putU64(bytes, 40, 0); // slot 0 inside the header
  EXPECT_NE(parseError(bytes).find("run outside the data section"),
            std::string::npos);
  bytes = good;
  putU64(bytes, 40 + 16, 64); // an empty slot with an offset
  EXPECT_NE(parseError(bytes).find("slot 1: no bytes but offset 64"),
            std::string::npos);
}

TEST(PackedWeightsTest, WriteFailsWhole) {
  std::string error;
  float x = 1;
  EXPECT_FALSE(writePackedWeights(tempPath("no/such/dir.tfcw"), 1,
                                  {{&x, sizeof(x)}}, error));
  EXPECT_NE(error.find("cannot create a temporary file"), std::string::npos);
  EXPECT_FALSE(isPackedWeightsFile(tempPath("no/such/dir.tfcw")));
}
