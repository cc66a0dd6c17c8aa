//===- Gguf.h - Reading GGUF model files ------------------------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The runtime's reader of GGUF (versions 2 and 3), the file format of
// llama.cpp/ggml: a header (magic "GGUF", version, tensor count, metadata
// count), typed key/value metadata (scalars, strings, arrays), tensor infos
// (name, dims innermost first, ggml type, offset) and the tensor data,
// starting at a multiple of `general.alignment` (default 32).
//
// The file is memory-mapped and every structural property is checked on
// open, before anything is allocated from a count in the file: counts and
// string lengths are bounded by the bytes that remain, dims by overflow
// checks, tensors lie inside the data section at aligned offsets and do not
// overlap, and their type is one tfc reads (F32, F16, BF16, Q8_0, Q4_0, Q4_1;
// others are an error naming the type). Tensors are exposed as TensorViews
// in row-major order (GGUF's dims reversed), quantized ones with their
// block dtype (SafeTensors.h's DType::Q8_0, ...): the runtime dequantises
// them while binding.
//
// Plain C++17 with no LLVM dependency: this is part of libtfcrt.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_FORMATS_GGUF_H
#define TFC_FORMATS_GGUF_H

#include "tfc/Formats/Files.h"
#include "tfc/Formats/Weights.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tfc::rt {

/// GGUF's metadata value types (gguf_type).
enum class GgufType : uint32_t {
  U8 = 0,
  I8 = 1,
  U16 = 2,
  I16 = 3,
  U32 = 4,
  I32 = 5,
  F32 = 6,
  Bool = 7,
  String = 8,
  Array = 9,
  U64 = 10,
  I64 = 11,
  F64 = 12,
};
const char *ggufTypeName(GgufType type);

/// One metadata value. Scalars are held widened; strings as views into the
/// mapping; arrays by element type, count and the offset of their first
/// element (read on demand through GgufFile's accessors).
struct GgufValue {
  GgufType type = GgufType::U8;
  uint64_t u = 0; // unsigned integers and bool
  int64_t i = 0;  // signed integers (also set for unsigned ones that fit)
  double f = 0;   // floats
  std::string_view str;
  GgufType elemType = GgufType::U8; // arrays
  uint64_t count = 0;               // arrays
  uint64_t offset = 0;              // arrays: first element in the file
  /// The value as stored: its type tag and payload (for writing it again).
  std::string_view raw;

  bool isInteger() const;
  bool isFloat() const { return type == GgufType::F32 || type == GgufType::F64; }
};

class GgufFile : public WeightSource {
public:
  /// Maps and checks `path`. On failure returns null and sets `error`.
  static std::unique_ptr<GgufFile> open(const std::string &path,
                                        std::string &error);
  /// Checks an in-memory image (copied). For tests and fuzzers.
  static std::unique_ptr<GgufFile> fromBytes(std::string_view bytes,
                                             std::string &error);
  ~GgufFile() override;

  uint32_t version() const { return ver; }
  uint64_t alignment() const { return align; }
  const std::string &path() const { return name; }

  /// The metadata value of `key`, or null.
  const GgufValue *find(std::string_view key) const;
  const std::map<std::string, GgufValue, std::less<>> &metadata() const {
    return kv;
  }

  /// Typed accessors: false (and `error` naming the key, what was expected
  /// and what the file has) when the key is missing or of another type.
  /// Integers accept any integer type whose value fits.
  bool getString(std::string_view key, std::string &out,
                 std::string &error) const;
  bool getInt(std::string_view key, int64_t &out, std::string &error) const;
  bool getFloat(std::string_view key, double &out, std::string &error) const;
  bool getBool(std::string_view key, bool &out, std::string &error) const;
  bool getStringArray(std::string_view key, std::vector<std::string> &out,
                      std::string &error) const;
  bool getIntArray(std::string_view key, std::vector<int64_t> &out,
                   std::string &error) const;
  bool getFloatArray(std::string_view key, std::vector<double> &out,
                     std::string &error) const;

  // WeightSource.
  const TensorView *findTensor(std::string_view name) const override;
  std::vector<const TensorView *> allTensors() const override;
  std::string describe() const override { return name; }
  bool isFileMapping() const override { return mapping.mapped(); }
  bool mapsRange(const void *p, uint64_t bytes) const override {
    return mapping.contains(p, bytes);
  }

private:
  GgufFile() = default;
  bool parse(std::string &error);

  std::string name;
  MappedFile mapping;            // open()
  std::vector<uint8_t> owned;    // fromBytes()
  const uint8_t *base = nullptr; // the bytes of one or the other
  size_t size = 0;
  uint32_t ver = 0;
  uint64_t align = 32;
  std::map<std::string, GgufValue, std::less<>> kv;
  std::vector<TensorView> views; // sorted by name
};

/// What writeRequantizedGguf did.
struct GgufWriteStats {
  uint64_t tensors = 0, converted = 0, bytesIn = 0, bytesOut = 0;
};

/// Writes a copy of `src` to `path` (whole or not at all) whose matrices are
/// in `target` (F32 or a format canQuantize accepts), as llama.cpp's
/// `llama-quantize --pure` does: every tensor of two or more dims whose rows
/// are whole blocks of the target is converted (through its f32 values,
/// quantised with GGUF's reference quantisers: tfc's and llama.cpp's files
/// are interchangeable) but for those llama-quantize keeps (norms, position
/// embeddings, BERT's token types); every other tensor is written in F32.
/// The metadata is copied as stored except `general.file_type`, which names
/// the target.
bool writeRequantizedGguf(const GgufFile &src, const std::string &path,
                          DType target, GgufWriteStats &stats,
                          std::string &error);

} // namespace tfc::rt

#endif // TFC_FORMATS_GGUF_H
