//===- ElfCheck.h - Validating a model library before dlopen ----*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// dlopen maps a library's loadable segments and runs its constructors: a
// truncated file (segments past its end) dies of SIGBUS inside dlopen, and
// any shared library runs its own code. So libtfcrt reads the ELF file
// first: a 64-bit shared object of the host's byte order whose program
// headers, loadable segments and dynamic section lie within the file, and
// which defines `tfc_model_metadata` in its dynamic symbol table, inside a
// loadable segment's file data. Only then is it dlopen'ed.
//
// Private to libtfcrt.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_LIB_RUNTIME_ELFCHECK_H
#define TFC_LIB_RUNTIME_ELFCHECK_H

#include <string>

namespace tfc::rt {

enum class ElfCheck {
  Ok,
  /// Not a file dlopen could load: `error` says why.
  Malformed,
  /// A valid library that does not define `symbol`.
  NoSymbol,
};

/// Checks the file `path` (already known to be an ELF file for this host's
/// machine or not ELF at all) as described above; `error` is a sentence
/// without the path.
ElfCheck checkModelLibrary(const std::string &path, const char *symbol,
                           std::string &error);

} // namespace tfc::rt

#endif // TFC_LIB_RUNTIME_ELFCHECK_H
