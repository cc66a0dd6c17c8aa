//===- Npy.h - Reading and writing NumPy .npy files -------------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The .npy format (numpy.lib.format): the magic "\x93NUMPY", a version
// (1.0, 2.0 or 3.0), a header length (2 bytes in 1.0, 4 bytes after), a
// Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...)},
// then the raw elements. Supported element types: those of DType.h with an
// npyDescr ('<f4', '<f8', '<f2', '<i8', '<i4', '<i2', '|i1', '|u1', '|b1';
// '<' may also be '=' and '|' for one-byte types). Only C order. Everything is checked: the magic, the version, the
// dict's syntax and keys, the shape, and that the data is exactly the bytes
// the shape needs. Errors are messages, never crashes.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_FORMATS_NPY_H
#define TFC_FORMATS_NPY_H

#include "tfc/Formats/DType.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tfc::rt {

/// Arrays hold the element types of DType.h that NumPy has (a row with an
/// npyDescr): f64, f32, f16, i64, i32, i16, i8, u8, bool.

struct NpyArray {
  DType type = DType::F32;
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
/// `data` must hold numElements(shape) * dtypeSize(type) bytes; a type
/// NumPy lacks (no npyDescr) gives an empty string.
std::string encodeNpy(DType type, const std::vector<int64_t> &shape,
                      const void *data);
/// Writes the same to `path`.
bool writeNpy(const std::string &path, DType type,
              const std::vector<int64_t> &shape, const void *data,
              std::string &error);

} // namespace tfc::rt

#endif // TFC_FORMATS_NPY_H
