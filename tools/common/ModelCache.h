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
bool resolveModelArgument(std::string &model,
                          const std::vector<std::string> &flags,
                          const std::string &tool, bool quiet,
                          std::string &weights, std::string &error);

} // namespace tfc::tools

#endif // TFC_TOOLS_COMMON_MODELCACHE_H
