//===- ModelCache.h - Checkpoints compiled once, for the runtime tools ----===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// tfc-run and tfc-generate take a checkpoint where they take a model
// library: it is compiled once by the tfc-compile beside the tool (or
// TFC_COMPILE) into the user's cache and reused. The key is what decides
// the generated code: the checkpoint's configuration (every JSON file of a
// Hugging Face directory, a .gguf's metadata, each weight's name, type and
// shape; never the weights' values), the compile options, the compiler
// binary and the host CPU as the compiler sees it (TFC_HOST_CPU included).
// An entry that does not load is compiled again.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TOOLS_COMMON_MODELCACHE_H
#define TFC_TOOLS_COMMON_MODELCACHE_H

#include "tfc/Runtime/tfc.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tfc::tools {

/// Whether `path` is a model library (an ELF shared object).
bool isModelLibrary(const std::string &path);

/// Whether `path` holds a tokenizer: a .gguf, a .json file, or a directory
/// with tokenizer.json (what tfc_tokenizer_load reads).
bool hasTokenizer(const std::string &path);

/// The directory compiled models are cached in: $TFC_CACHE_DIR/compiled,
/// else $XDG_CACHE_HOME/tfc/compiled, else ~/.cache/tfc/compiled.
std::string compiledCacheDir();
/// The directory of the packed weights of cached models: "packed" beside
/// compiledCacheDir().
std::string packedCacheDir();

/// The library for `checkpoint` compiled with `flags` (tfc-compile options),
/// from the cache or compiled into it now (a line on stderr says so unless
/// `quiet`). `tool` is argv[0], for finding tfc-compile beside it. On a
/// failure returns false with `error` (tfc-compile's message when it
/// refused the checkpoint).
bool compiledModel(const std::string &checkpoint,
                   const std::vector<std::string> &flags,
                   const std::string &tool, bool quiet, std::string &library,
                   std::string &error);

/// A tool's model argument: a library is kept; an existing checkpoint (a
/// directory, a .gguf, a .tfm) becomes its cached library (compiledModel;
/// an entry that does not load is compiled again), and `weights`, when
/// empty, becomes the checkpoint (not for a .tfm, which has none). Any
/// other path (a library, a missing or mistaken file) is kept, for the
/// loader's message.
/// `packedCache`, when given, is set to where the cache keeps the packed
/// weights of the compiled model bound to `weights` (packedWeightsCachePath)
/// when the model was a checkpoint compiled here, else cleared.
bool resolveModelArgument(std::string &model,
                          const std::vector<std::string> &flags,
                          const std::string &tool, bool quiet,
                          std::string &weights, std::string &error,
                          std::string *packedCache = nullptr);

/// The packed weights file (PackedWeights.h) that the cache keeps for the
/// cached `library` bound to `checkpoint`, in packedCacheDir() (created):
/// named after the library's key and
/// the identity of the checkpoint's files (each file's path, size and
/// modification time: a checkpoint changed in place gets a new entry).
/// Empty when TFC_WEIGHTS_CACHE=0, `checkpoint` is itself a packed file or
/// the directory cannot be made.
std::string packedWeightsCachePath(const std::string &library,
                                   const std::string &checkpoint);

/// Binds weights to `model`, a cached library's model: the packed file
/// `packedCache` when it exists and binds (the checkpoint is then not read:
/// nothing is converted or packed, the pages are shared between processes),
/// else `checkpoint`, after which the packed file is written (whole or not
/// at all) for the next run. A packed file that does not bind (truncated,
/// from another build) is removed and written again. `packedCache` empty:
/// the checkpoint alone. A note on stderr unless `quiet`.
bool bindWeightsCached(tfc_model *model, const std::string &checkpoint,
                       const std::string &packedCache, bool quiet,
                       std::string &error);

/// Removes every compiled library and packed weights file from the cache
/// (compiledCacheDir(), packedCacheDir()), and any partial file a killed
/// compile left; `removed` and `bytes` count them.
bool clearCompiledCache(size_t &removed, uint64_t &bytes, std::string &error);

} // namespace tfc::tools

#endif // TFC_TOOLS_COMMON_MODELCACHE_H
