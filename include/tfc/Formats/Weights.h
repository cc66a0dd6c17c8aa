//===- Weights.h - Opening a checkpoint's weights ---------------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The weights a model binds can come from:
//  * a `.safetensors` file;
//  * a Hugging Face checkpoint directory: `model.safetensors`, or the shards
//    named by `model.safetensors.index.json` (its "weight_map": tensor name
//    -> shard file); every shard is mapped and checked, a tensor in two
//    shards or a shard missing is an error naming the file; a
//    sentence-transformers directory's Dense modules (modules.json) add
//    their model.safetensors under "<module path>.<name>"
//    ("2_Dense.linear.weight");
//  * a `.gguf` file (Gguf.h), recognised by its magic, whatever its name.
// Every source is a WeightSource (SafeTensors.h): tensors by name as views
// into memory-mapped files.
//
// Plain C++17 with no LLVM dependency: this is part of libtfcrt.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_FORMATS_WEIGHTS_H
#define TFC_FORMATS_WEIGHTS_H

#include "tfc/Formats/SafeTensors.h"

#include <memory>
#include <string>

namespace tfc::rt {

/// Opens `path` as one of the sources above. On failure returns null and
/// sets `error` (naming the file and the problem).
std::unique_ptr<WeightSource> openWeights(const std::string &path,
                                          std::string &error);

/// Whether `path` is a regular file that starts with GGUF's magic.
bool isGgufFile(const std::string &path);

} // namespace tfc::rt

#endif // TFC_FORMATS_WEIGHTS_H
