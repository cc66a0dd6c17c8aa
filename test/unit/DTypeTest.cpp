//===- DTypeTest.cpp - The one dtype table and its conversions ------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Formats/DType.h"
#include "tfc/Runtime/ModelMetadata.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <string>

using namespace tfc::rt;

namespace {

TEST(DType, TableIsConsistent) {
  std::set<std::string> names, fileNames;
  std::set<int32_t> ggml;
  int apiTypes = 0;
  for (const DTypeTraits &t : kDTypeTable) {
    EXPECT_TRUE(names.insert(t.name).second) << t.name;
    EXPECT_TRUE(fileNames.insert(t.fileName).second) << t.fileName;
    if (t.ggml >= 0)
      EXPECT_TRUE(ggml.insert(t.ggml).second) << t.name;
    EXPECT_GT(t.blockElements, 0u);
    EXPECT_GT(t.blockBytes, 0u);
    // Block formats are GGUF's and quantised; plain types are one element.
    EXPECT_EQ(t.quantized, t.blockElements > 1) << t.name;
    EXPECT_EQ(t.quantized, !t.inSafeTensors) << t.name;
    EXPECT_FALSE(t.quantized && t.npyDescr) << t.name;
    // Lookups by every key give this row back.
    EXPECT_EQ(dtypeByName(t.name), &t);
    EXPECT_EQ(&traitsOf(t.type), &t);
    if (t.ggml >= 0)
      EXPECT_EQ(dtypeByGgml(static_cast<uint32_t>(t.ggml)), &t);
    if (t.api != kNoApiDType) {
      ++apiTypes;
      EXPECT_EQ(dtypeTraits(t.api), &t);
      EXPECT_STREQ(tfc_dtype_name(t.api), t.name);
      EXPECT_EQ(tfc_dtype_size(t.api), t.elementSize());
      tfc_dtype parsed;
      ASSERT_TRUE(parseDTypeName(t.name, parsed));
      EXPECT_EQ(parsed, t.api);
    }
  }
  // Every C API dtype has exactly one row.
  EXPECT_EQ(apiTypes, TFC_Q6_K + 1);
  for (int d = 0; d <= TFC_Q6_K; ++d)
    EXPECT_NE(dtypeTraits(static_cast<tfc_dtype>(d)), nullptr) << d;
  EXPECT_EQ(dtypeTraits(static_cast<tfc_dtype>(TFC_Q6_K + 1)), nullptr);
  EXPECT_EQ(dtypeTraits(kNoApiDType), nullptr);
  tfc_dtype parsed;
  EXPECT_FALSE(parseDTypeName("u8", parsed)); // stored, not a model dtype
  EXPECT_EQ(quantFormatByName("f32"), nullptr);
  EXPECT_EQ(quantFormatByName("q4_1"), &traitsOf(DType::Q4_1));
  EXPECT_EQ(dtypeByGgml(12), &traitsOf(DType::Q4_K));
  EXPECT_EQ(dtypeByGgml(23), nullptr); // IQ4_XS: not read
  EXPECT_EQ(quantFormatList(), "q8_0, q4_0, q4_1, q5_0, q5_1, q2_k, q3_k, "
                               "q4_k, q5_k or q6_k");
}

TEST(DType, BlockSizes) {
  uint64_t bytes = 0;
  EXPECT_TRUE(dtypeBytes(DType::Q4_1, 64, bytes));
  EXPECT_EQ(bytes, 40u);
  EXPECT_FALSE(dtypeBytes(DType::Q8_0, 33, bytes)); // a partial block
  EXPECT_TRUE(dtypeBytes(DType::BF16, 3, bytes));
  EXPECT_EQ(bytes, 6u);
  EXPECT_FALSE(dtypeBytes(DType::F64, UINT64_MAX / 4, bytes)); // overflow
}

TEST(DType, LoadsAndStoresEveryPlainType) {
  for (const DTypeTraits &t : kDTypeTable) {
    if (t.quantized)
      continue;
    alignas(8) unsigned char buf[32] = {};
    // A value every plain type holds exactly.
    dtypeStore(t.type, buf, 1, t.type == DType::Bool ? 1.0 : 3.0);
    EXPECT_EQ(dtypeLoad(t.type, buf, 1), t.type == DType::Bool ? 1.0 : 3.0)
        << t.name;
    EXPECT_EQ(dtypeLoad(t.type, buf, 0), 0.0) << t.name;
    if (!t.isFloat) {
      dtypeStoreInt(t.type, buf, 2, 7);
      EXPECT_EQ(dtypeLoadInt(t.type, buf, 2), t.type == DType::Bool ? 1 : 7)
          << t.name;
    }
  }
  // Rounded once, to nearest even; integers truncate and saturate.
  unsigned char buf[16] = {};
  dtypeStore(DType::F16, buf, 0, 1.0 + 1.0 / 2048); // halfway: even
  EXPECT_EQ(dtypeLoad(DType::F16, buf, 0), 1.0);
  dtypeStore(DType::I8, buf, 0, -300.7);
  EXPECT_EQ(dtypeLoadInt(DType::I8, buf, 0), -128);
  dtypeStore(DType::U8, buf, 0, -1.0);
  EXPECT_EQ(dtypeLoadInt(DType::U8, buf, 0), 0);
  dtypeStore(DType::I16, buf, 0, 12345.9);
  EXPECT_EQ(dtypeLoadInt(DType::I16, buf, 0), 12345);
  dtypeStore(DType::I32, buf, 0, std::nan(""));
  EXPECT_EQ(dtypeLoadInt(DType::I32, buf, 0), 0);
  // i64 past 2^53 stays exact through the integer path.
  int64_t big = (INT64_C(1) << 60) + 1;
  dtypeStoreInt(DType::I64, buf, 0, big);
  EXPECT_EQ(dtypeLoadInt(DType::I64, buf, 0), big);
}

} // namespace
