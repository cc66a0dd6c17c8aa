//===- PackedWeights.h - A model's weights in their resident form -*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// A packed weights file (`.tfcw`, written by `tfc-pack` or
// tfc_model_save_weights) holds every table slot of one model library in the
// form its kernels read: the weights its entries use, in the model's dtype,
// and the derived constants (packed GEMM panels, merged projections) that
// tfc_model_init computed. Weights only init reads are left out. Binding it
// maps the file and points the table into the mapping: nothing is copied,
// converted or computed, every byte is resident once, and processes running
// the same model share the pages through the page cache (docs/runtime.md,
// "Memory").
//
// Layout (little-endian):
//
//   0   char[8]  magic "TFCPACK\0"
//   8   u32      format version (1)
//   12  u32      flags (0)
//   16  u64      key: a hash of the model library's bytes
//   24  u64      number of slots (the model's weights, then its constants)
//   32  u64      file size
//   40  u64[2] x slots: {offset, bytes} per slot; bytes 0 = no data
//   ... data, each slot at a 64-byte aligned offset past the slot table
//
// The constants depend on how the compiler packed them, so a file is bound
// only to the library whose key it carries: another build is refused with a
// message saying to pack again.
//
// Plain C++17 with no LLVM dependency: this is part of libtfcrt.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_FORMATS_PACKEDWEIGHTS_H
#define TFC_FORMATS_PACKEDWEIGHTS_H

#include "tfc/Formats/Files.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tfc::rt {

constexpr uint32_t kPackedWeightsVersion = 1;
constexpr uint64_t kPackedWeightsHeaderBytes = 40;
constexpr uint64_t kPackedWeightsAlign = 64;

struct PackedSlot {
  uint64_t offset = 0, bytes = 0;
};

/// The checked header and slot table of a packed weights file.
struct PackedHeader {
  uint64_t key = 0;
  std::vector<PackedSlot> slots;
};

/// Parses and checks `bytes` (the whole file): magic, version, flags, the
/// size recorded against the real one, every slot inside the file, aligned,
/// past the slot table, without overflow. `error` names the problem
/// ("slot 3: offset 100 is not a multiple of 64").
bool parsePackedWeights(std::string_view bytes, PackedHeader &out,
                        std::string &error);

/// A packed weights file mapped read-only.
class PackedWeightsFile {
public:
  static std::unique_ptr<PackedWeightsFile> open(const std::string &path,
                                                 std::string &error);
  ~PackedWeightsFile();
  PackedWeightsFile(const PackedWeightsFile &) = delete;
  PackedWeightsFile &operator=(const PackedWeightsFile &) = delete;

  const std::string &path() const { return path_; }
  const PackedHeader &header() const { return header_; }
  uint64_t size() const { return mapping_.size(); }
  /// Slot i's bytes inside the mapping (null when it holds none).
  const void *slotData(size_t i) const;

private:
  PackedWeightsFile() = default;
  std::string path_;
  MappedFile mapping_;
  PackedHeader header_;
};

/// Whether `path` is a regular file that starts with the packed magic.
bool isPackedWeightsFile(const std::string &path);

/// Writes a packed file of `slots` (data and size each; null data or size 0
/// for an absent slot) with `key`, whole or not at all (a temporary file in
/// the same directory, renamed). False with `error` set on failure. Each
/// slot goes out in pieces of at most kPackedWriteChunk bytes, and
/// `written` (if any) is called with each piece once it is written: a
/// caller whose slots are pages of a file mapping drops them there, so that
/// writing never holds more than a piece of them resident.
inline constexpr uint64_t kPackedWriteChunk = uint64_t(8) << 20;
bool writePackedWeights(
    const std::string &path, uint64_t key,
    const std::vector<std::pair<const void *, uint64_t>> &slots,
    std::string &error,
    const std::function<void(const void *, uint64_t)> &written = {});

/// The key of a model library: FNV-1a (64-bit) of the file's bytes.
bool hashLibraryFile(const std::string &path, uint64_t &key,
                     std::string &error);

} // namespace tfc::rt

#endif // TFC_FORMATS_PACKEDWEIGHTS_H
