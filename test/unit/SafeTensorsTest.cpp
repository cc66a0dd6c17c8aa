//===- SafeTensorsTest.cpp - The runtime's safetensors reader -------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Valid files, and each kind of malformed file with its message.
//
//===----------------------------------------------------------------------===//

#include "tfc/Runtime/SafeTensors.h"

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
  EXPECT_NE(errorOf(image(R"({} trailing)")).find("unexpected text"),
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
