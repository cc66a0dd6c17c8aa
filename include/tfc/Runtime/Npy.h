//===- Npy.h - Reading and writing NumPy .npy files -------------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The .npy format (numpy.lib.format): the magic "\x93NUMPY", a version
// (1.0, 2.0 or 3.0), a header length (2 bytes in 1.0, 4 bytes after), a
// Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...)},
// then the raw elements. Supported element types: '<f4', '<f8', '<f2',
// '<i8', '<i4', '|b1', '|u1' ('<' may also be '=' and '|' for one-byte
// types). Only C order. Everything is checked: the magic, the version, the
// dict's syntax and keys, the shape, and that the data is exactly the bytes
// the shape needs. Errors are messages, never crashes.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_NPY_H
#define TFC_RUNTIME_NPY_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tfc::rt {

enum class NpyType { F32, F64, F16, I64, I32, Bool, U8 };

/// '<f4', ... and the element size.
const char *npyDescr(NpyType type);
size_t npyTypeSize(NpyType type);

struct NpyArray {
  NpyType type = NpyType::F32;
  std::vector<int64_t> shape;
  /// The elements, row-major, little-endian.
  std::vector<uint8_t> data;

  uint64_t numElements() const;
};

/// Parses an in-memory .npy image. `what` names it in messages.
bool parseNpy(std::string_view bytes, NpyArray &out, std::string &error,
              const std::string &what = "<memory>");
/// Reads a .npy file.
bool readNpy(const std::string &path, NpyArray &out, std::string &error);

/// The .npy image of an array (version 1.0, or 2.0 when the header needs
/// it; the header padded so that the data starts at a multiple of 64).
/// `data` must hold numElements(shape) * npyTypeSize(type) bytes.
std::string encodeNpy(NpyType type, const std::vector<int64_t> &shape,
                      const void *data);
/// Writes the same to `path`.
bool writeNpy(const std::string &path, NpyType type,
              const std::vector<int64_t> &shape, const void *data,
              std::string &error);

} // namespace tfc::rt

#endif // TFC_RUNTIME_NPY_H
