//===- Importer.h - Model descriptions from checkpoints ---------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Turns a checkpoint a user has into a `.tfm` model description:
//  * a Hugging Face directory (`config.json` + `model.safetensors`, or shards
//    listed by `model.safetensors.index.json`) of the families `bert`
//    (BertModel; with a sentence-transformers directory's pooling, an entry
//    `encode` returning the sentence embeddings), `gpt2` (GPT2LMHeadModel),
//    `llama` (LlamaForCausalLM), `mistral` and `qwen2`;
//  * a `.gguf` file whose `general.architecture` is `llama`.
// The description uses the checkpoint's own tensor names, takes every
// hyper-parameter from the checkpoint, names its source in a header comment,
// and is checked against the checkpoint's tensors (every tensor it uses
// exists with the shape the hyper-parameters imply). Anything unsupported is
// an error that names it and lists what is supported.
//
// No MLIR here: the result is text that the frontend compiles like any
// other description (tfc-import writes it, tfc-compile PATH compiles it).
//
//===----------------------------------------------------------------------===//

#ifndef TFC_IMPORT_IMPORTER_H
#define TFC_IMPORT_IMPORTER_H

#include <string>

namespace tfc::importer {

struct ImportedModel {
  /// The model description.
  std::string tfm;
  /// "bert", "gpt2", "llama", "marian", "mistral", "qwen2" (Hugging Face) or
  /// "gguf:llama".
  std::string family;
  /// What to bind with `tfc-run --weights` (the directory or the .gguf).
  std::string weights;
  /// Where the tokenizer is: a tokenizer.json, the .gguf, or "" if none.
  std::string tokenizer;
};

/// Whether `path` is a checkpoint (a directory, or a file starting with
/// GGUF's magic) rather than a model description.
bool isCheckpoint(const std::string &path);

/// Imports the checkpoint at `path`. On failure returns false and sets
/// `error` (naming the file, the key or tensor, and what was expected).
bool importCheckpoint(const std::string &path, ImportedModel &out,
                      std::string &error);

/// The model families and GGUF architectures importCheckpoint supports, for
/// messages and --help.
const char *supportedFamilies();

} // namespace tfc::importer

#endif // TFC_IMPORT_IMPORTER_H
