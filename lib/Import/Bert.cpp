//===- Bert.cpp - BERT and MPNet ------------------------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// bert and mpnet directories (BertModel, BertForSequenceClassification,
// MPNetModel) as an EncoderSpec.
//
//===----------------------------------------------------------------------===//

#include "Common.h"
#include "Encoder.h"

#include <cmath>
#include <sstream>

namespace tfc::importer::detail {

/// BERT's hidden_act as a call on "{x}", or "".
static std::string encoderActivation(const std::string &act) {
  if (act == "gelu")
    return "gelu({x})";
  if (act == "gelu_new" || act == "gelu_pytorch_tanh")
    return "gelu({x}, approximate = \"tanh\")";
  if (act == "relu")
    return "relu({x})";
  return "";
}

/// The sentence-transformers comment of an encoder with pooling.
static std::string poolingNote(const Pooling &pool) {
  if (!pool.present)
    return "";
  std::string dense;
  for (const DenseModule &d : pool.dense)
    dense += ", Dense " + std::to_string(d.in) + " -> " +
             std::to_string(d.out) + (d.activation.empty() ? "" : " (tanh)");
  return "# sentence-transformers: " + pool.mode + " pooling" + dense +
         (pool.normalize ? ", L2-normalised" : "") + " (modules.json)" +
         (pool.maxSeqLength
              ? ", max_seq_length " + std::to_string(pool.maxSeqLength)
              : "") +
         ": entry encode.\n";
}

/// bert (BertModel, BertForSequenceClassification) and mpnet (MPNetModel:
/// BERT's layers with a T5-style bias by distance, positions from
/// padding_idx + 1, no token types).
bool importBert(HfCheckpoint &c, const std::string &type, ImportedModel &out,
                std::string &error) {
  bool mpnet = type == "mpnet";
  ConfigReader r(c.configPath, c.config);
  EncoderSpec s;
  s.vocab = r.positive("vocab_size");
  s.dModel = r.positive("hidden_size");
  s.layers = r.positive("num_hidden_layers");
  s.heads = r.positive("num_attention_heads");
  s.dFF = r.positive("intermediate_size");
  s.maxPositions = r.positive("max_position_embeddings");
  s.types = mpnet ? 0 : r.positiveOr("type_vocab_size", 2);
  s.eps = r.positiveNumberOr("layer_norm_eps", 1e-12);
  std::string act = r.stringOr("hidden_act", "gelu");
  std::string posType =
      mpnet ? "absolute" : r.stringOr("position_embedding_type", "absolute");
  int64_t padding = mpnet ? r.positiveOr("pad_token_id", 1) : 0;
  s.buckets = mpnet ? r.positiveOr("relative_attention_num_buckets", 32) : 0;
  if (!r.ok()) {
    error = r.message();
    return false;
  }
  if (posType != "absolute") {
    error = c.configPath + ": position_embedding_type '" + posType +
            "' is not supported (supported: \"absolute\")";
    return false;
  }
  s.activation = encoderActivation(act);
  if (s.activation.empty()) {
    error = c.configPath + ": hidden_act '" + act +
            "' is not supported (supported: gelu, gelu_new, "
            "gelu_pytorch_tanh, relu)";
    return false;
  }
  if (s.dModel % s.heads != 0) {
    error = c.configPath + ": hidden_size " + std::to_string(s.dModel) +
            " is not a multiple of num_attention_heads " +
            std::to_string(s.heads);
    return false;
  }
  // transformers' MPNet: the distance saturates at 128; each direction has
  // half the buckets, exact below a quarter of them.
  s.maxDistance = 128;
  if (mpnet && (s.buckets < 4 || s.maxDistance <= s.buckets / 2)) {
    error = c.configPath + ": relative_attention_num_buckets " +
            std::to_string(s.buckets) +
            " is not supported (at least 4 and at most 256)";
    return false;
  }
  if (!readPooling(c.dir, s.pool, error))
    return false;
  std::string pre = mpnet ? "mpnet." : "bert.";
  if (!c.hasTensor(pre + "embeddings.word_embeddings.weight"))
    pre = "";
  // MPNet positions start after padding_idx; a sequence that uses every
  // row starts at padding_idx + 1, so it is that much shorter.
  if (mpnet) {
    s.positionOffset = padding + 1;
    if (s.maxPositions <= s.positionOffset) {
      error = c.configPath + ": max_position_embeddings " +
              std::to_string(s.maxPositions) +
              " leaves no position after "
              "pad_token_id " +
              std::to_string(padding);
      return false;
    }
  }
  bool pooler = c.hasTensor(pre + "pooler.dense.weight");
  // BertForSequenceClassification: a classifier over the pooled [CLS].
  bool classifier = !mpnet && pooler && c.hasTensor("classifier.weight");
  if (classifier) {
    const tfc::rt::TensorView *w = c.weights->findTensor("classifier.weight");
    s.labels = w && w->shape.size() == 2 ? w->shape[0] : 0;
    if (s.labels <= 0) {
      error = c.dir + ": tensor 'classifier.weight' should be [num_labels, " +
              std::to_string(s.dModel) + "]";
      return false;
    }
    // id2label, in id order, for the description's comment.
    if (c.config.contains("id2label") && c.config["id2label"].is_object())
      for (int64_t i = 0; i < s.labels; ++i) {
        std::string key = std::to_string(i);
        s.labelNames += (i ? ", " : "") + key + " = " +
                        (c.config["id2label"].contains(key) &&
                                 c.config["id2label"][key].is_string()
                             ? c.config["id2label"][key].get<std::string>()
                             : std::string("?"));
      }
    s.classifier = "classifier";
  }
  s.header = hfHeader(c,
                      mpnet        ? "MPNetModel"
                      : classifier ? "BertForSequenceClassification"
                                   : "BertModel",
                      {"model_type", "vocab_size", "hidden_size",
                       "num_hidden_layers", "num_attention_heads",
                       "intermediate_size", "max_position_embeddings",
                       "type_vocab_size", "layer_norm_eps", "hidden_act",
                       "pad_token_id", "relative_attention_num_buckets"}) +
             (mpnet ? "# Positions from pad_token_id + 1; a bias by "
                      "query-key distance (T5's buckets,\n# distances "
                      "saturating at 128) learned once and added in every "
                      "layer.\n"
                    : "") +
             poolingNote(s.pool);
  s.name = identifier(baseName(c.dir));
  s.word = pre + "embeddings.word_embeddings";
  s.position = pre + "embeddings.position_embeddings";
  s.embedNorm = pre + "embeddings.LayerNorm";
  std::string p = pre + "encoder.layer.{l}";
  if (mpnet) {
    s.relativeBias = pre + "encoder.relative_attention_bias";
    s.q = p + ".attention.attn.q";
    s.k = p + ".attention.attn.k";
    s.v = p + ".attention.attn.v";
    s.o = p + ".attention.attn.o";
    s.attnNorm = p + ".attention.LayerNorm";
  } else {
    s.tokenType = pre + "embeddings.token_type_embeddings";
    s.typeInput = true;
    s.q = p + ".attention.self.query";
    s.k = p + ".attention.self.key";
    s.v = p + ".attention.self.value";
    s.o = p + ".attention.output.dense";
    s.attnNorm = p + ".attention.output.LayerNorm";
  }
  s.up = p + ".intermediate.dense";
  s.down = p + ".output.dense";
  s.outNorm = p + ".output.LayerNorm";
  if (pooler)
    s.pooler = pre + "pooler.dense";
  std::vector<Use> uses;
  writeEncoder(s, out.tfm, uses);
  return checkUses(*c.weights, uses, c.configPath, error);
}

} // namespace tfc::importer::detail
