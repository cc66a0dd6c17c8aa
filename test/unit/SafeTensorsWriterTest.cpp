//===- SafeTensorsWriterTest.cpp - Writing .safetensors files -------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// What the writer produces reads back with the same names, dtypes, shapes
// and bytes; tensors whose size is a multiple of 64 bytes are 64-byte
// aligned; the data is contiguous (the format allows no holes); bad tensors
// are errors; a failed write leaves no file behind.
//
//===----------------------------------------------------------------------===//

#include "tfc/Formats/SafeTensors.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <cstring>
#include <fstream>

using namespace tfc::rt;

namespace {

TEST(SafeTensorsWriter, RoundTripsAndAligns) {
  std::vector<float> big(48), odd(3);
  for (size_t i = 0; i < big.size(); ++i)
    big[i] = static_cast<float>(i);
  odd = {1, 2, 3};
  int64_t ids[2] = {7, -8};
  uint16_t half[5] = {1, 2, 3, 4, 5};
  std::vector<TensorToWrite> tensors = {
      {"z.odd", DType::F32, {3}, odd.data()},
      {"a.half", DType::F16, {5}, half},
      {"m.big", DType::F32, {4, 12}, big.data()},
      {"ids", DType::I64, {2}, ids},
      {"empty", DType::F32, {0, 4}, nullptr},
      {"scalar", DType::F32, {}, odd.data()}};
  std::string image, error;
  ASSERT_TRUE(encodeSafeTensors(tensors, {{"format", "pt"}}, image, error))
      << error;
  auto file = SafeTensorsFile::fromBytes(image, error);
  ASSERT_TRUE(file) << error;
  EXPECT_EQ(file->metadata().at("format"), "pt");
  ASSERT_EQ(file->tensors().size(), tensors.size());
  for (const TensorToWrite &t : tensors) {
    const TensorView *v = file->find(t.name);
    ASSERT_TRUE(v) << t.name;
    EXPECT_EQ(v->dtype, t.dtype);
    EXPECT_EQ(v->shape, t.shape);
    uint64_t bytes = v->numElements() * dtypeSize(v->dtype);
    if (bytes)
      EXPECT_EQ(std::memcmp(v->data, t.data, bytes), 0) << t.name;
  }
  // 192 bytes: first, at the 64-byte aligned start of the data section.
  uint64_t headerEnd = image.size() - (192 + 16 + 12 + 10 + 4);
  EXPECT_EQ(headerEnd % 64, 0u);
  EXPECT_EQ(file->find("m.big")->begin, 0u);
  // No holes: the ranges tile the data section.
  uint64_t covered = 0;
  for (const TensorView &v : file->tensors())
    covered += v.end - v.begin;
  EXPECT_EQ(covered, image.size() - headerEnd);
}

TEST(SafeTensorsWriter, Errors) {
  float one = 1;
  std::string image, error;
  EXPECT_FALSE(encodeSafeTensors(
      {{"a", DType::F32, {1}, &one}, {"a", DType::F32, {1}, &one}}, {}, image,
      error));
  EXPECT_NE(error.find("tensor 'a' is given twice"), std::string::npos);
  EXPECT_FALSE(
      encodeSafeTensors({{"", DType::F32, {1}, &one}}, {}, image, error));
  EXPECT_FALSE(encodeSafeTensors({{"__metadata__", DType::F32, {1}, &one}}, {},
                                 image, error));
  EXPECT_FALSE(
      encodeSafeTensors({{"n", DType::F32, {-1}, &one}}, {}, image, error));
  EXPECT_NE(error.find("negative dim"), std::string::npos);
  EXPECT_FALSE(
      encodeSafeTensors({{"n", DType::F32, {2}, nullptr}}, {}, image, error));
  EXPECT_NE(error.find("tensor 'n' has no data"), std::string::npos);
  EXPECT_FALSE(encodeSafeTensors(
      {{"n", DType::F32, {INT64_C(1) << 40, INT64_C(1) << 40}, &one}}, {},
      image, error));
  EXPECT_NE(error.find("too large"), std::string::npos);
}

TEST(SafeTensorsWriter, WritesFilesAtomically) {
  std::string path = ::testing::TempDir() + "tfc-writer-test.safetensors";
  float v[2] = {1, 2};
  std::string error;
  ASSERT_TRUE(writeSafeTensors(path, {{"w", DType::F32, {2}, v}}, {}, error))
      << error;
  auto file = SafeTensorsFile::open(path, error);
  ASSERT_TRUE(file) << error;
  EXPECT_EQ(static_cast<const float *>(file->find("w")->data)[1], 2.0f);
  // A failed write leaves the old file as it was.
  EXPECT_FALSE(
      writeSafeTensors(path, {{"w", DType::F32, {2}, nullptr}}, {}, error));
  file = SafeTensorsFile::open(path, error);
  ASSERT_TRUE(file) << error;
  std::remove(path.c_str());
  EXPECT_FALSE(writeSafeTensors("/nonexistent/dir/w.safetensors",
                                {{"w", DType::F32, {2}, v}}, {}, error));
  EXPECT_NE(error.find("cannot create a temporary file"), std::string::npos)
      << error;
}

} // namespace
