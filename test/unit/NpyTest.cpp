//===- NpyTest.cpp - Reading and writing .npy files -----------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Round trips of every supported type and rank; headers as NumPy writes them
// (versions 1.0, 2.0, 3.0, Python 2 longs); each malformed header, shape and
// byte count with its message.
//
//===----------------------------------------------------------------------===//

#include "tfc/Formats/Npy.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <cstring>

using namespace tfc::rt;

namespace {

/// A .npy image with a hand-written header dict.
std::string npy(const std::string &dict, const std::string &data,
                int major = 1) {
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  size_t n = dict.size();
  for (int i = 0; i < (major == 1 ? 2 : 4); ++i)
    out += static_cast<char>((n >> (8 * i)) & 0xFF);
  return out + dict + data;
}

std::string errorOf(const std::string &bytes) {
  NpyArray a;
  std::string error;
  return parseNpy(bytes, a, error, "x.npy") ? "" : error;
}

::testing::AssertionResult contains(const std::string &text,
                                    const std::string &part) {
  if (text.find(part) != std::string::npos)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "'" << text << "' does not contain '" << part << "'";
}

TEST(Npy, RoundTripsEveryType) {
  int types = 0;
  for (const DTypeTraits &traits : kDTypeTable) {
    if (!traits.npyDescr)
      continue;
    ++types;
    DType type = traits.type;
    for (std::vector<int64_t> shape : std::vector<std::vector<int64_t>>{
             {}, {0}, {5}, {2, 3}, {2, 0, 4}, {1, 2, 3, 4}}) {
      uint64_t n = 1;
      for (int64_t d : shape)
        n *= d;
      std::vector<uint8_t> data(n * dtypeSize(type));
      for (size_t i = 0; i < data.size(); ++i)
        data[i] = static_cast<uint8_t>(type == DType::Bool ? i % 2 : i * 7);
      std::string bytes = encodeNpy(type, shape, data.data());
      EXPECT_EQ((bytes.size() - data.size()) % 64, 0u);
      NpyArray a;
      std::string error;
      ASSERT_TRUE(parseNpy(bytes, a, error)) << error;
      EXPECT_EQ(a.type, type);
      EXPECT_EQ(a.shape, shape);
      EXPECT_EQ(a.data, data);
      EXPECT_EQ(a.numElements(), n);
    }
  }
  EXPECT_EQ(types, 9); // f64 f32 f16 i64 i32 i16 i8 u8 bool
}

TEST(Npy, RefusesTypesNumPyLacks) {
  uint16_t values[32] = {};
  std::string error;
  EXPECT_TRUE(encodeNpy(DType::BF16, {3}, values).empty());
  EXPECT_FALSE(writeNpy(::testing::TempDir() + "/bf16.npy", DType::BF16, {3},
                        values, error));
  EXPECT_TRUE(contains(error, "NumPy has no bf16 arrays"));
}

TEST(Npy, ReadsAndWritesFiles) {
  std::string path = ::testing::TempDir() + "tfc-npy-test.npy";
  float values[] = {1.5f, -2, 3};
  std::string error;
  ASSERT_TRUE(writeNpy(path, DType::F32, {3}, values, error)) << error;
  NpyArray a;
  ASSERT_TRUE(readNpy(path, a, error)) << error;
  ASSERT_EQ(a.data.size(), sizeof values);
  EXPECT_EQ(std::memcmp(a.data.data(), values, sizeof values), 0);
  std::remove(path.c_str());
  EXPECT_FALSE(readNpy(path, a, error));
  EXPECT_TRUE(contains(error, "cannot open"));
  EXPECT_FALSE(
      writeNpy("/nonexistent/dir/x.npy", DType::F32, {3}, values, error));
  EXPECT_TRUE(contains(error, "cannot create"));
}

TEST(Npy, AcceptsWhatNumPyWrites) {
  std::string four(16, '\0');
  // NumPy's own padding and trailing newline; versions 2.0 and 3.0.
  NpyArray a;
  std::string error;
  for (int major : {1, 2, 3}) {
    std::string dict = "{'descr': '<i4', 'fortran_order': False, 'shape': "
                       "(2, 2), }          \n";
    ASSERT_TRUE(parseNpy(npy(dict, four, major), a, error)) << error;
    EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 2}));
  }
  // Python 2 longs, double quotes, no trailing comma, other key order.
  ASSERT_TRUE(parseNpy(npy("{\"shape\": (2L, 2L), \"fortran_order\": False, "
                           "\"descr\": \"=i4\"}",
                           four),
                       a, error))
      << error;
  EXPECT_EQ(a.type, DType::I32);
  ASSERT_TRUE(parseNpy(npy("{'descr': '|b1', 'fortran_order': False, "
                           "'shape': (3,), }",
                           std::string(3, '\1')),
                       a, error))
      << error;
  EXPECT_EQ(a.type, DType::Bool);
  // A scalar.
  ASSERT_TRUE(parseNpy(npy("{'descr': '<f8', 'fortran_order': False, "
                           "'shape': (), }",
                           std::string(8, '\0')),
                       a, error))
      << error;
  EXPECT_TRUE(a.shape.empty());
}

TEST(Npy, MalformedFiles) {
  const std::string ok = "{'descr': '<f4', 'fortran_order': False, "
                         "'shape': (2,), }";
  const std::string eight(8, '\0');
  EXPECT_EQ(errorOf(npy(ok, eight)), "");
  EXPECT_TRUE(
      contains(errorOf("PK\x03\x04 not npy"), "x.npy: not a .npy file"));
  EXPECT_TRUE(
      contains(errorOf(npy(ok, eight, 4)), "unsupported .npy version 4.0"));
  EXPECT_TRUE(
      contains(errorOf(npy(ok, eight).substr(0, 9)), "not a .npy file"));
  EXPECT_TRUE(contains(errorOf(npy(ok, eight).substr(0, 30)),
                       "truncated: the header needs"));
  EXPECT_TRUE(contains(errorOf(npy(ok, eight.substr(0, 6))),
                       "truncated: shape (2,) of '<f4' needs 8 bytes of data "
                       "but the file has 6"));
  EXPECT_TRUE(contains(errorOf(npy(ok, eight + "xx")),
                       "2 unexpected bytes after the data of shape (2,)"));
  EXPECT_TRUE(contains(
      errorOf(npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }",
                  eight)),
      "Fortran-order arrays are not supported"));
  EXPECT_TRUE(contains(
      errorOf(npy("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }",
                  eight)),
      "big-endian data ('>f4') is not supported"));
  EXPECT_TRUE(contains(
      errorOf(npy("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }",
                  eight)),
      "unsupported dtype '<c8'"));
  EXPECT_TRUE(
      contains(errorOf(npy("{'descr': [('a', '<f4')], 'fortran_order': False, "
                           "'shape': (1,), }",
                           std::string(4, '\0'))),
               "structured dtypes are not supported"));
  EXPECT_TRUE(
      contains(errorOf(npy("{'descr': '<f4', 'fortran_order': False}", eight)),
               "the header has no 'shape'"));
  EXPECT_TRUE(contains(
      errorOf(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), "
                  "'extra': 1}",
                  eight)),
      "unexpected key 'extra'"));
  EXPECT_TRUE(contains(
      errorOf(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2), }",
                  eight)),
      "a one-dimensional shape needs a trailing comma"));
  EXPECT_TRUE(contains(
      errorOf(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }",
                  eight)),
      "expected a non-negative integer"));
  EXPECT_TRUE(contains(
      errorOf(
          npy("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,), }", eight)),
      "'fortran_order' must be True or False"));
  EXPECT_TRUE(
      contains(errorOf(npy("{'descr': '<f4', 'fortran_order': False, 'shape': "
                           "(4294967296, 4294967296, 4294967296), }",
                           eight)),
               "the shape is too large"));
  EXPECT_TRUE(contains(errorOf(npy("{'descr': '<f4', 'shape': (2,), "
                                   "'shape': (2,)}",
                                   eight)),
                       "'shape' appears twice"));
  EXPECT_TRUE(contains(errorOf(npy("not a dict", eight)),
                       "malformed header at offset 0: expected '{'"));
  EXPECT_TRUE(contains(errorOf(npy(ok + " junk", eight)),
                       "unexpected text after the dict"));
}

} // namespace
