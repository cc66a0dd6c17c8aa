//===- DType.h - Element types and their traits, in one table ---*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Every element type tfc stores, reads or writes, and everything known about
// it, in one table (as ggml's type traits): the metadata's and the C API's
// name, the name safetensors and GGUF files give it, the storage block, the
// C API's `tfc_dtype`, its NumPy and ggml type codes. The runtime's loaders
// and writers (safetensors, GGUF, .npy), the metadata parser, the tools and
// the compiler's quantised-weight checks all read this table; adding a
// type (a new GGUF block format, say) is one row here plus its kernels.
//
// Header-only and constexpr, so that the compiler reads the same rows
// without linking the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_FORMATS_DTYPE_H
#define TFC_FORMATS_DTYPE_H

#include "tfc/Runtime/tfc.h"

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>

namespace tfc::rt {

/// Element types of stored tensors, in the table's order. From Q8_0 on they
/// are GGUF's block quantizations (docs/abi.md, "Quantized weights", has
/// the layouts): a block of 32 elements is an f16 scale d (and for Q4_1 and
/// Q5_1 an f16 minimum m) followed by the quants: Q8_0 x = d * q (int8 q);
/// Q4_0 x = d * (q - 8) and Q4_1 x = d * q + m (4-bit q; byte j holds
/// element j in its low and j + 16 in its high nibble); Q5_0 x = d * (q - 16)
/// and Q5_1 x = d * q + m (Q4's nibbles plus a 32-bit word of fifth bits).
/// The K-quants are super-blocks of 256 in sub-blocks of 16 or 32, each with
/// an integer scale (and minimum) relative to the super-block's f16 d (and
/// dmin): Q2_K, Q3_K, Q4_K, Q5_K, Q6_K.
enum class DType : uint8_t {
  F64,
  F32,
  F16,
  BF16,
  I64,
  I32,
  I16,
  I8,
  U8,
  Bool,
  Q8_0,
  Q4_0,
  Q4_1,
  Q5_0,
  Q5_1,
  Q2_K,
  Q3_K,
  Q4_K,
  Q5_K,
  Q6_K
};

/// What tfc knows about one element type.
struct DTypeTraits {
  DType type;
  /// The metadata's, the C API's and the descriptions' spelling: "f32", ...,
  /// "q4_1".
  const char *name;
  /// The spelling of safetensors headers and of messages about files: "F32",
  /// ..., "BOOL", "Q4_1".
  const char *fileName;
  /// Elements and bytes of one storage block: (1, element size) for plain
  /// types, (32, 34) for Q8_0, (256, 144) for Q4_K, ...
  uint32_t blockElements, blockBytes;
  bool isFloat;
  /// A block-quantised weight format: weights only, never an input or output.
  bool quantized;
  /// A safetensors file may hold it (the block formats only come in GGUF).
  bool inSafeTensors;
  /// The C API's dtype; TFC_DTYPE_MAX_ENUM for the stored types no model
  /// input, output or weight has (i16, i8, u8).
  tfc_dtype api;
  /// The .npy descr ("<f4", "|b1"), or null when NumPy has no such type.
  const char *npyDescr;
  /// The ggml_type number in GGUF files, or -1 when tfc reads none.
  int32_t ggml;

  /// A type a model's values (inputs, outputs, intermediates) can have: in
  /// the C API and not a weight-only block format.
  constexpr bool isModelType() const {
    return !quantized && api != TFC_DTYPE_MAX_ENUM;
  }
  /// The size of one element of a plain type; 0 for the block formats.
  constexpr uint32_t elementSize() const {
    return blockElements == 1 ? blockBytes : 0;
  }
};

inline constexpr tfc_dtype kNoApiDType = TFC_DTYPE_MAX_ENUM;

/// One row per DType, in its order.
inline constexpr DTypeTraits kDTypeTable[] = {
    // type, name, fileName, block elements and bytes, float, quantized,
    // in safetensors, C API, .npy, ggml
    {DType::F64, "f64", "F64", 1, 8, true, false, true, TFC_F64, "<f8", -1},
    {DType::F32, "f32", "F32", 1, 4, true, false, true, TFC_F32, "<f4", 0},
    {DType::F16, "f16", "F16", 1, 2, true, false, true, TFC_F16, "<f2", 1},
    {DType::BF16, "bf16", "BF16", 1, 2, true, false, true, TFC_BF16, nullptr,
     30},
    {DType::I64, "i64", "I64", 1, 8, false, false, true, TFC_I64, "<i8", -1},
    {DType::I32, "i32", "I32", 1, 4, false, false, true, TFC_I32, "<i4", -1},
    {DType::I16, "i16", "I16", 1, 2, false, false, true, kNoApiDType, "<i2",
     -1},
    {DType::I8, "i8", "I8", 1, 1, false, false, true, kNoApiDType, "|i1", -1},
    {DType::U8, "u8", "U8", 1, 1, false, false, true, kNoApiDType, "|u1", -1},
    {DType::Bool, "bool", "BOOL", 1, 1, false, false, true, TFC_BOOL, "|b1",
     -1},
    {DType::Q8_0, "q8_0", "Q8_0", 32, 34, false, true, false, TFC_Q8_0, nullptr,
     8},
    {DType::Q4_0, "q4_0", "Q4_0", 32, 18, false, true, false, TFC_Q4_0, nullptr,
     2},
    {DType::Q4_1, "q4_1", "Q4_1", 32, 20, false, true, false, TFC_Q4_1, nullptr,
     3},
    {DType::Q5_0, "q5_0", "Q5_0", 32, 22, false, true, false, TFC_Q5_0, nullptr,
     6},
    {DType::Q5_1, "q5_1", "Q5_1", 32, 24, false, true, false, TFC_Q5_1, nullptr,
     7},
    {DType::Q2_K, "q2_k", "Q2_K", 256, 84, false, true, false, TFC_Q2_K,
     nullptr, 10},
    {DType::Q3_K, "q3_k", "Q3_K", 256, 110, false, true, false, TFC_Q3_K,
     nullptr, 11},
    {DType::Q4_K, "q4_k", "Q4_K", 256, 144, false, true, false, TFC_Q4_K,
     nullptr, 12},
    {DType::Q5_K, "q5_k", "Q5_K", 256, 176, false, true, false, TFC_Q5_K,
     nullptr, 13},
    {DType::Q6_K, "q6_k", "Q6_K", 256, 210, false, true, false, TFC_Q6_K,
     nullptr, 14},
};

inline constexpr size_t kNumDTypes = std::size(kDTypeTable);

constexpr bool tableIsInOrder() {
  for (size_t i = 0; i < kNumDTypes; ++i)
    if (static_cast<size_t>(kDTypeTable[i].type) != i)
      return false;
  return true;
}
static_assert(tableIsInOrder(), "kDTypeTable rows must follow DType's order");

/// The row of `type`.
constexpr const DTypeTraits &traitsOf(DType type) {
  return kDTypeTable[static_cast<size_t>(type)];
}

/// The row of a C API dtype, or null if `dtype` is not one.
constexpr const DTypeTraits *dtypeTraits(tfc_dtype dtype) {
  for (const DTypeTraits &t : kDTypeTable)
    if (t.api == dtype && dtype != kNoApiDType)
      return &t;
  return nullptr;
}

/// The row called `name` ("f32", ..., "q4_1"), or null.
constexpr const DTypeTraits *dtypeByName(std::string_view name) {
  for (const DTypeTraits &t : kDTypeTable)
    if (name == t.name)
      return &t;
  return nullptr;
}

/// The block format called `name` (q8_0, ..., q6_k), or null.
constexpr const DTypeTraits *quantFormatByName(std::string_view name) {
  const DTypeTraits *t = dtypeByName(name);
  return t && t->quantized ? t : nullptr;
}

/// The row of a ggml_type number, or null when tfc does not read it.
constexpr const DTypeTraits *dtypeByGgml(uint32_t ggml) {
  for (const DTypeTraits &t : kDTypeTable)
    if (t.ggml >= 0 && static_cast<uint32_t>(t.ggml) == ggml)
      return &t;
  return nullptr;
}

/// The name of a dtype in files ("F32", ..., "Q4_1").
constexpr const char *dtypeName(DType dtype) {
  return traitsOf(dtype).fileName;
}
/// Its size in bytes (0 for the block formats: see DTypeTraits).
/// The names of the block formats, "q8_0, q4_0, ... or q6_k", for messages
/// (`upper`: their file spelling, "Q8_0, ...").
inline std::string quantFormatList(const char *lastJoiner = "or",
                                   bool upper = false) {
  std::string out;
  size_t count = 0, seen = 0;
  for (const DTypeTraits &t : kDTypeTable)
    count += t.quantized;
  for (const DTypeTraits &t : kDTypeTable) {
    if (!t.quantized)
      continue;
    if (seen)
      out += seen + 1 == count ? std::string(" ") + lastJoiner + " " : ", ";
    out += upper ? t.fileName : t.name;
    ++seen;
  }
  return out;
}
constexpr size_t dtypeSize(DType dtype) {
  return traitsOf(dtype).elementSize();
}
constexpr bool isQuantized(DType dtype) { return traitsOf(dtype).quantized; }
/// Whether tfc has a quantiser for the block format `dtype` (BlockQuants.cpp:
/// ggml's reference ones): every block format tfc reads.
constexpr bool canQuantize(DType dtype) {
  return dtype == DType::Q8_0 || dtype == DType::Q4_0 || dtype == DType::Q4_1 ||
         dtype == DType::Q5_0 || dtype == DType::Q5_1 || dtype == DType::Q2_K ||
         dtype == DType::Q3_K || dtype == DType::Q4_K || dtype == DType::Q5_K ||
         dtype == DType::Q6_K;
}

/// The bytes of `elements` elements of `dtype`; false when `elements` is not
/// a whole number of blocks or the size overflows.
bool dtypeBytes(DType dtype, uint64_t elements, uint64_t &bytes);

/// Element `i` of an array of the plain `dtype` as a double: floats widen
/// exactly, integers convert, bool is 0 or 1; 0 for the block formats.
double dtypeLoad(DType dtype, const void *base, uint64_t i);
/// The same for integer types, exactly (i64 values past 2^53 too).
int64_t dtypeLoadInt(DType dtype, const void *base, uint64_t i);
/// Stores `v` as element `i`, rounded once to `dtype` (to nearest even for
/// the floats; integers truncate toward zero, saturate, and NaN gives 0;
/// bool is v != 0); block formats are left as they are.
void dtypeStore(DType dtype, void *base, uint64_t i, double v);
/// Stores an exact integer (i64 values past 2^53 stay exact; narrower
/// integers wrap as a C cast does).
void dtypeStoreInt(DType dtype, void *base, uint64_t i, int64_t v);

} // namespace tfc::rt

#endif // TFC_FORMATS_DTYPE_H
