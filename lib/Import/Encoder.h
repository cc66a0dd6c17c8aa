//===- Encoder.h - BERT-style encoder descriptions -----------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Private to lib/Import: a post-norm encoder (EncoderSpec), filled by bert
// and mpnet directories (Bert.cpp) and by GGUF's bert and nomic-bert
// (Gguf.cpp), its writer (Encoder.cpp), and the sentence-transformers
// modules that pool its output (SentenceTransformers.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TFC_LIB_IMPORT_ENCODER_H
#define TFC_LIB_IMPORT_ENCODER_H

#include "Common.h"

namespace tfc::importer::detail {

/// A sentence-transformers Dense module after the pooling:
/// activation(linear(e)), its weights "<path>.linear.weight" / ".bias".
struct DenseModule {
  std::string path;
  int64_t in = 0, out = 0;
  bool bias = true;
  std::string activation; // "tanh", or "" (Identity)
};

/// sentence-transformers' modules.json + 1_Pooling/config.json, if present.
struct Pooling {
  bool present = false;
  std::string mode; // "mean", "cls", "max"
  bool normalize = false;
  int64_t maxSeqLength = 0;
  /// In modules.json order, after the pooling (before Normalize).
  std::vector<DenseModule> dense;
};

/// A post-norm encoder (LayerNorm after each residual sum), as BERT and the
/// families derived from it build one.
struct EncoderSpec {
  std::string header, name;
  int64_t vocab = 0, dModel = 0, heads = 0, layers = 0, dFF = 0;
  double eps = 1e-12;
  /// The longest sequence: the rows of a learned position table, or the
  /// context length of a rotary encoder.
  int64_t maxPositions = 0;
  /// Learned positions: the table; the token at index i takes row
  /// i + positionOffset (MPNet and RoBERTa count from padding_idx + 1).
  std::string position;
  int64_t positionOffset = 0;
  /// Rotary positions on q and k (rotating halves) with this base; 0: none.
  double ropeBase = 0;
  /// MPNet: a bias by query-key distance from a [buckets, heads] table
  /// shared by every layer (T5's bidirectional buckets); "" for none.
  std::string relativeBias;
  int64_t buckets = 0, maxDistance = 0;
  /// Token types: the table, whose row is chosen per token by the input
  /// token_type_ids when typeInput, else row 0 is added to every token
  /// (llama.cpp's nomic-bert); "" for none.
  std::string tokenType;
  int64_t types = 0;
  bool typeInput = false;
  /// The activation as a call on "{x}": "gelu({x})".
  std::string activation;
  /// down(act(gate(x)) * up(x)) (nomic-bert's SwiGLU) instead of
  /// down(act(up(x))).
  bool gated = false;
  /// Whether the linear layers have biases.
  bool biases = true;
  // Tensor names without .weight/.bias; "{l}" is the layer. `qkv` is a
  // fused [3 d, d] projection (then q, k, v are unused).
  std::string word, embedNorm, qkv, q, k, v, o, attnNorm, up, gate, down,
      outNorm;
  /// BERT's pooler (tanh of a dense layer on the first token) and a
  /// classifier over it; "" for none.
  std::string pooler, classifier;
  int64_t labels = 0;
  std::string labelNames;
  Pooling pool;
};

/// A sentence-transformers directory's modules.json and 1_Pooling/config.json
/// (and Dense modules), if it has them; `p.present` stays false otherwise.
bool readPooling(const std::string &dir, Pooling &p, std::string &error);

/// The description of `s` and the tensors it uses, with their shapes.
void writeEncoder(const EncoderSpec &s, std::string &tfm,
                  std::vector<Use> &uses);

} // namespace tfc::importer::detail

#endif // TFC_LIB_IMPORT_ENCODER_H
