//===- SafeTensorsTest.cpp - The runtime's safetensors reader -------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Valid files, and each kind of malformed file with its message.
//
//===----------------------------------------------------------------------===//

#include "tfc/Formats/SafeTensors.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <unistd.h>

using namespace tfc::rt;

namespace {

/// A safetensors image: the 8-byte length, `header`, then `data`.
std::string image(const std::string &header, const std::string &data = "") {
  std::string out(8, '\0');
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i)
    out[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
  return out + header + data;
}

std::string floats(std::initializer_list<float> values) {
  std::string out;
  for (float v : values)
    out.append(reinterpret_cast<const char *>(&v), sizeof v);
  return out;
}

/// The error of opening `bytes`, or "" if it opened.
/// Element `i` of f32 tensor data, which the format does not align.
float floatAt(const void *data, size_t i) {
  float v;
  std::memcpy(&v, static_cast<const char *>(data) + 4 * i, 4);
  return v;
}

std::string errorOf(const std::string &bytes) {
  std::string error;
  auto file = SafeTensorsFile::fromBytes(bytes, error);
  return file ? "" : error;
}

TEST(SafeTensors, ReadsTensorsAndMetadata) {
  std::string header =
      R"({"__metadata__": {"format": "pt"},)"
      R"( "b": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},)"
      R"( "a.weight": {"dtype": "F32", "shape": [1, 1], "data_offsets": [8, 12]},)"
      R"( "empty": {"dtype": "BF16", "shape": [0, 3], "data_offsets": [12, 12]}})";
  std::string error;
  auto file =
      SafeTensorsFile::fromBytes(image(header, floats({1, 2, 3})), error);
  ASSERT_TRUE(file) << error;
  EXPECT_EQ(file->tensors().size(), 3u);
  EXPECT_EQ(file->metadata().at("format"), "pt");
  const TensorView *b = file->find("b");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->dtype, DType::F32);
  EXPECT_EQ(b->shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(floatAt(b->data, 1), 2.0f);
  const TensorView *a = file->find("a.weight");
  ASSERT_TRUE(a);
  EXPECT_EQ(floatAt(a->data, 0), 3.0f);
  EXPECT_EQ(file->find("empty")->numElements(), 0u);
  EXPECT_EQ(file->find("missing"), nullptr);
}

TEST(SafeTensors, MapsAFile) {
  std::string path = ::testing::TempDir() + "tfc-safetensors-test.safetensors";
  {
    std::ofstream out(path, std::ios::binary);
    out << image(R"({"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 12]}})",
                 floats({4, 5, 6}));
  }
  std::string error;
  auto file = SafeTensorsFile::open(path, error);
  ASSERT_TRUE(file) << error;
  EXPECT_EQ(floatAt(file->find("w")->data, 2), 6.0f);
  std::remove(path.c_str());

  EXPECT_FALSE(SafeTensorsFile::open(path, error));
  EXPECT_NE(error.find("cannot open"), std::string::npos) << error;
}

TEST(SafeTensors, Truncated) {
  EXPECT_NE(errorOf("abc").find("truncated: 3 bytes"), std::string::npos);
  std::string full = image(R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})",
                           floats({1, 2}));
  // Cut inside the data section.
  EXPECT_NE(errorOf(full.substr(0, full.size() - 1))
                .find("tensor 'w': data_offsets end at 8 but the data "
                      "section has 7 bytes (truncated file?)"),
            std::string::npos);
  // Cut inside the header.
  EXPECT_NE(errorOf(full.substr(0, 20)).find("truncated: the header needs"),
            std::string::npos);
}

TEST(SafeTensors, HeaderTooLarge) {
  std::string bytes(16, '\0');
  uint64_t n = SafeTensorsFile::kMaxHeaderBytes + 1;
  std::memcpy(&bytes[0], &n, 8);
  EXPECT_NE(errorOf(bytes).find("is larger than the limit"),
            std::string::npos);
}

TEST(SafeTensors, WrongDTypeAndSize) {
  EXPECT_NE(errorOf(image(R"({"w": {"dtype": "F33", "shape": [1], "data_offsets": [0, 4]}})",
                          floats({1})))
                .find("tensor 'w': unknown dtype 'F33'"),
            std::string::npos);
  // Shape [3] of F32 needs 12 bytes, the offsets give 8.
  EXPECT_NE(errorOf(image(R"({"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})",
                          floats({1, 2})))
                .find("tensor 'w': holds 8 bytes but F32 of 3 elements "
                      "needs 12"),
            std::string::npos);
  // A shape whose element count overflows.
  EXPECT_NE(errorOf(image(R"({"w": {"dtype": "F32", "shape": [4294967296, 4294967296, 16], "data_offsets": [0, 4]}})",
                          floats({1})))
                .find("shape is too large"),
            std::string::npos);
  EXPECT_NE(errorOf(image(R"({"w": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}})",
                          floats({1})))
                .find("shape entries must be non-negative integers"),
            std::string::npos);
}

TEST(SafeTensors, OverlappingAndDuplicate) {
  EXPECT_NE(errorOf(image(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},)"
                          R"( "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})",
                          floats({1, 2, 3})))
                .find("tensors 'a' [0, 8) and 'b' [4, 12) overlap"),
            std::string::npos);
  EXPECT_NE(errorOf(image(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},)"
                          R"( "a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})",
                          floats({1, 2})))
                .find("tensor 'a' appears twice"),
            std::string::npos);
  EXPECT_NE(errorOf(image(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [8, 4]}})",
                          floats({1, 2})))
                .find("end before they begin"),
            std::string::npos);
}

TEST(SafeTensors, MalformedHeaders) {
  EXPECT_NE(errorOf(image("[1, 2]")).find("the header is not a JSON object"),
            std::string::npos);
  EXPECT_NE(errorOf(image(R"({"a": )")).find("invalid JSON header"),
            std::string::npos);
  EXPECT_NE(errorOf(image(R"({"a": {"dtype": "F32"}})"))
                .find("tensor 'a': needs dtype, shape and data_offsets"),
            std::string::npos);
  EXPECT_NE(errorOf(image(R"({"__metadata__": {"k": 1}})"))
                .find("__metadata__ value of 'k' is not a string"),
            std::string::npos);
  EXPECT_NE(errorOf(image(R"({} trailing)"))
                .find("invalid JSON header at byte 5: syntax error while "
                      "parsing value - invalid literal; last read: '{} tra'; "
                      "expected end of input"),
            std::string::npos);
  // Deep nesting is an error, not a stack overflow.
  EXPECT_NE(errorOf(image(std::string(100000, '[') + std::string(100000, ']')))
                .find("nested too deeply"),
            std::string::npos);
  // Escapes decode; a name with \u escapes is found by its UTF-8 spelling.
  std::string error;
  auto file = SafeTensorsFile::fromBytes(
      image(R"({"caf\u00e9": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}})",
            "x"),
      error);
  ASSERT_TRUE(file) << error;
  EXPECT_TRUE(file->find("caf\xc3\xa9"));
}

} // namespace

// GGUF's reference quantisers, worked out by hand from their definitions
// (ggml's quantize_row_*_ref): one block each, then dequantised.
TEST(Quantize, BlocksAsGgufDefinesThem) {
  float x[32];
  for (int j = 0; j < 32; ++j)
    x[j] = static_cast<float>(j - 16) / 4; // -4 .. 3.75
  uint8_t q8[34], q40[18], q41[20];
  float y[32];

  // Q8_0: d = max|x| / 127 = 4 / 127; q = round(x / d).
  quantize(DType::Q8_0, x, q8, 32);
  dequantize(DType::Q8_0, q8, y, 32);
  EXPECT_EQ(static_cast<int8_t>(q8[2]), -127); // x = -4
  EXPECT_EQ(static_cast<int8_t>(q8[2 + 16]), 0);
  EXPECT_EQ(static_cast<int8_t>(q8[2 + 17]), 8); // round(0.25 * 127 / 4 = 7.94)
  for (int j = 0; j < 32; ++j)
    EXPECT_NEAR(y[j], x[j], 4.0 / 127 / 2 + 1e-3) << j;

  // Q4_0: the element of largest magnitude is -4 (at j = 0): d = -4 / -8 =
  // 0.5, q = min(15, trunc(x / d + 8.5)): -4 -> 0, 3.75 -> 15 (min).
  quantize(DType::Q4_0, x, q40, 32);
  dequantize(DType::Q4_0, q40, y, 32);
  EXPECT_EQ(q40[2] & 0xF, 0);     // j = 0
  EXPECT_EQ(q40[2 + 15] >> 4, 15); // j = 31
  EXPECT_FLOAT_EQ(y[0], -4.0f);
  EXPECT_FLOAT_EQ(y[16], 0.0f); // j = 16, x = 0: q = trunc(8.5) = 8
  for (int j = 0; j < 32; ++j)
    EXPECT_NEAR(y[j], x[j], 0.5) << j;

  // Q4_1: d = (max - min) / 15 = 7.75 / 15, m = min = -4;
  // q = min(15, trunc((x - m) / d + 0.5)).
  quantize(DType::Q4_1, x, q41, 32);
  dequantize(DType::Q4_1, q41, y, 32);
  EXPECT_EQ(q41[4] & 0xF, 0);
  EXPECT_EQ(q41[4 + 15] >> 4, 15);
  EXPECT_NEAR(y[0], -4.0f, 2e-3);  // m in f16
  EXPECT_NEAR(y[31], 3.75f, 4e-3); // m + 15 d in f16
  for (int j = 0; j < 32; ++j)
    EXPECT_NEAR(y[j], x[j], 7.75 / 15 / 2 + 4e-3) << j;

  // A block of zeros: d = 0, every quant at its zero point.
  float zeros[32] = {};
  quantize(DType::Q4_0, zeros, q40, 32);
  dequantize(DType::Q4_0, q40, y, 32);
  for (int j = 0; j < 32; ++j)
    EXPECT_EQ(y[j], 0.0f);
}
