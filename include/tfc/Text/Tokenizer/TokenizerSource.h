//===- TokenizerSource.h - The tokenizer of a checkpoint ---------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Where a checkpoint keeps its tokenizer: a tokenizer.json file, a Hugging
// Face directory holding one, or the `tokenizer.ggml.*` metadata of a .gguf
// file (recognised by its magic).
//
// Plain C++17 with no LLVM dependency: this is part of libtfcrt.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TEXT_TOKENIZER_TOKENIZERSOURCE_H
#define TFC_TEXT_TOKENIZER_TOKENIZERSOURCE_H

#include "tfc/Text/Tokenizer/Tokenizer.h"

#include <memory>
#include <string>
#include <vector>

namespace tfc::rt {

class GgufFile;

/// Reads the tokenizer.ggml.* keys of a GGUF file. Fails (naming the file
/// and key) when the tokens are missing or a key has the wrong type, or the
/// per-token arrays disagree in length.
bool readGgufVocab(const GgufFile &file, GgufVocab &out, std::string &error);

/// Opens the tokenizer at `path` (see above). Returns null and sets `error`.
std::unique_ptr<Tokenizer> openTokenizer(const std::string &path,
                                         std::string &error);

/// The ids that end a generated sequence, as the checkpoint at `path` states
/// them: `tokenizer.ggml.eos_token_id` and `tokenizer.ggml.eot_token_id` of
/// a .gguf; `eos_token_id` (an id or a list) of `generation_config.json`,
/// else of `config.json`, in a Hugging Face directory (or the directory of a
/// file in one). Empty when the checkpoint states none (not an error); false
/// with `error` set (naming the file and key) when a value is malformed.
bool readEndOfSequenceIds(const std::string &path, std::vector<int64_t> &ids,
                          std::string &error);

/// The ids that end a generation when the caller names none: those stated
/// by the first of `paths` that states any (readEndOfSequenceIds; empty
/// paths are skipped), else the ids of the usual end-of-text tokens the
/// tokenizer knows ("<|endoftext|>", "<|im_end|>", "</s>", "<|eot_id|>",
/// "<|end_of_text|>"), else none. False with `error` on a malformed file.
bool defaultEndOfSequenceIds(const std::vector<std::string> &paths,
                             const Tokenizer *tokenizer,
                             std::vector<int64_t> &ids, std::string &error);

} // namespace tfc::rt

#endif // TFC_TEXT_TOKENIZER_TOKENIZERSOURCE_H
