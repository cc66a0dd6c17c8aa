//===- SafeTensors.h - Reading .safetensors weight files ----------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The runtime's reader of the safetensors format
// (https://huggingface.co/docs/safetensors): an 8-byte little-endian header
// length, a JSON header mapping tensor names to {dtype, shape, data_offsets}
// (plus an optional "__metadata__" string map), then the tensor bytes. The
// file is memory-mapped and tensors are views into it (zero-copy). Every
// structural property is checked on open; a malformed file gives an error
// message naming the tensor and the problem, never a crash. The writer is what
// tfc-weights and the tests use to produce files.
//
// Plain C++17 with no LLVM dependency: this is part of libtfcrt.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_FORMATS_SAFETENSORS_H
#define TFC_FORMATS_SAFETENSORS_H

#include "tfc/Formats/DType.h"
#include "tfc/Formats/Files.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tfc::rt {

/// Dequantises `elements` elements (whole blocks) of a quantized dtype.
void dequantize(DType dtype, const void *src, float *dst, uint64_t elements);
/// Quantises `elements` floats (whole blocks) into a quantized dtype exactly
/// as GGUF's reference quantisers do (ggml's quantize_row_*_ref), so that
/// files written from tfc's blocks and llama.cpp's agree bit for bit. Only
/// for the dtypes canQuantize accepts (others are left as they are).
void quantize(DType dtype, const float *src, void *dst, uint64_t elements);


struct TensorView {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  /// Offsets relative to the start of the data section.
  uint64_t begin = 0, end = 0;
  /// The bytes, inside the mapping.
  const void *data = nullptr;

  uint64_t numElements() const;
};

/// A named set of stored tensors: a safetensors file, the shards of a
/// Hugging Face checkpoint, a GGUF file (Weights.h).
class WeightSource {
public:
  virtual ~WeightSource();
  /// The tensor called `name`, or null.
  virtual const TensorView *findTensor(std::string_view name) const = 0;
  /// Every tensor, sorted by name.
  virtual std::vector<const TensorView *> allTensors() const = 0;
  /// What to call the source in messages (its path).
  virtual std::string describe() const = 0;
  /// Whether the views point into read-only file mappings, whose pages the
  /// runtime may drop once it no longer reads them (not owned copies).
  virtual bool isFileMapping() const { return false; }
  /// Whether [p, p + bytes) lies inside one of its read-only file mappings.
  virtual bool mapsRange(const void *p, uint64_t bytes) const {
    (void)p;
    (void)bytes;
    return false;
  }
};

class SafeTensorsFile : public WeightSource {
public:
  /// The largest header accepted (the reference implementation's limit).
  static constexpr uint64_t kMaxHeaderBytes = 100u << 20;

  /// Maps and checks `path`. On failure returns null and sets `error`.
  static std::unique_ptr<SafeTensorsFile> open(const std::string &path,
                                               std::string &error);
  /// Checks an in-memory image (copied). For tests and embedded weights.
  static std::unique_ptr<SafeTensorsFile>
  fromBytes(std::string_view bytes, std::string &error);

  ~SafeTensorsFile() override;
  SafeTensorsFile(const SafeTensorsFile &) = delete;
  SafeTensorsFile &operator=(const SafeTensorsFile &) = delete;

  /// The tensor called `name`, or null.
  const TensorView *find(std::string_view name) const;
  /// Every tensor, sorted by name.
  const std::vector<TensorView> &tensors() const { return views; }
  const std::map<std::string, std::string> &metadata() const { return meta; }

  const TensorView *findTensor(std::string_view name) const override {
    return find(name);
  }
  std::vector<const TensorView *> allTensors() const override;
  std::string describe() const override { return path; }
  bool isFileMapping() const override { return mapping.mapped(); }
  bool mapsRange(const void *p, uint64_t bytes) const override {
    return mapping.contains(p, bytes);
  }

private:
  SafeTensorsFile() = default;
  bool parse(const std::string &what, std::string &error);

  std::string path = "<memory>";
  MappedFile mapping;            // open()
  std::vector<uint8_t> owned;    // an owned copy of bytes
  const uint8_t *base = nullptr; // the bytes of one or the other
  size_t size = 0;
  std::vector<TensorView> views;
  std::map<std::string, std::string> meta;
};

/// A tensor for the writer: `data` holds its elements, row-major.
struct TensorToWrite {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  const void *data = nullptr;
};

/// The safetensors image of `tensors` and `metadata`: the data section starts
/// at a multiple of 64 bytes and tensors are contiguous, those whose size is
/// a multiple of 64 bytes first (so they stay 64-byte aligned), then by
/// element size (largest first) and name. Fails (with `error`) on duplicate or
/// empty names, negative or overflowing shapes, and null data with elements.
bool encodeSafeTensors(const std::vector<TensorToWrite> &tensors,
                       const std::map<std::string, std::string> &metadata,
                       std::string &image, std::string &error);

/// Writes the same to `path`, streaming the tensors' bytes, through a
/// temporary file renamed into place: `path` is complete or untouched.
bool writeSafeTensors(const std::string &path,
                      const std::vector<TensorToWrite> &tensors,
                      const std::map<std::string, std::string> &metadata,
                      std::string &error);

} // namespace tfc::rt

#endif // TFC_FORMATS_SAFETENSORS_H
