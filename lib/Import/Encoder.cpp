//===- Encoder.cpp - BERT-style encoder descriptions ----------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The .tfm of a post-norm encoder (bert, mpnet, nomic-bert) from an
// EncoderSpec.
//
//===----------------------------------------------------------------------===//

#include "Encoder.h"
#include "Common.h"

#include <cmath>
#include <sstream>

namespace tfc::importer::detail {

void writeEncoder(const EncoderSpec &s, std::string &tfm,
                  std::vector<Use> &uses) {
  auto params = [&](const std::string &indent) {
    return s.typeInput ? "input_ids: i64[batch, seq], token_type_ids: "
                         "i64[batch, seq],\n" +
                             indent + "attention_mask: i64[batch, seq]"
                       : std::string("input_ids: i64[batch, seq], "
                                     "attention_mask: i64[batch, seq]");
  };
  std::string args = s.typeInput ? "input_ids, token_type_ids, attention_mask"
                                 : "input_ids, attention_mask";
  bool learned = !s.position.empty();
  bool relative = !s.relativeBias.empty();
  const Dim D{"d_model", s.dModel}, F{"d_ff", s.dFF};
  WeightDecls w(s.layers);
  GenericBlock norm("norm", "x: [batch, seq, d_model]");
  norm.weight("g", {D}, ".weight").weight("b", {D}, ".bias");
  GenericBlock dense("dense", "x", {"d_out: int", "d_in: int"});
  dense.weight("w", {{"d_out"}, {"d_in"}}, ".weight");
  if (s.biases)
    dense.weight("b", {{"d_out"}}, ".bias");
  std::ostringstream o;
  o << s.header << "\nmodel " << s.name << "\n\n"
    << "const vocab = " << s.vocab << "\n"
    << (learned ? "const max_positions = " : "const n_ctx = ") << s.maxPositions
    << "\n";
  if (!s.tokenType.empty())
    o << "const type_vocab = " << s.types << "\n";
  o << "const d_model = " << s.dModel << "\nconst heads = " << s.heads
    << "\nconst layers = " << s.layers << "\nconst d_ff = " << s.dFF
    << "\nconst eps = " << fmtFloat(s.eps) << "\n";
  if (s.ropeBase)
    o << "const rope_base = " << fmtFloat(s.ropeBase) << "\n";
  if (relative)
    o << "const buckets = " << s.buckets
      << "\nconst max_distance = " << s.maxDistance << "\n";
  if (learned && s.positionOffset)
    o << "# The first position is row " << s.positionOffset << ".\n"
      << "const max_seq = " << s.maxPositions - s.positionOffset << "\n";
  o << "\ndim batch\ndim seq <= "
    << (!learned           ? "n_ctx"
        : s.positionOffset ? "max_seq"
                           : "max_positions")
    << "\n\n"
    << norm.text("  return layer_norm(x, g, b, eps = eps)\n")
    << dense.text(s.biases ? "  return linear(x, w, b)\n"
                           : "  return linear(x, w)\n");
  auto act = [&](const std::string &x) { return subst(s.activation, "x", x); };
  auto proj = [&](const std::string &x, const std::string &tensor, Dim out,
                  Dim in) {
    return dense.call(w, x, tensor, {out, in});
  };
  o << "block layer(x: [batch, seq, d_model], mask: i64[batch, seq], "
    << (relative ? "bias, " : "") << "l: int) {\n";
  if (!s.qkv.empty())
    o << "  qkv = " << proj("x", s.qkv, {"3 * d_model", 3 * s.dModel}, D)
      << "\n"
      << "  q = slice(qkv, 0, d_model)\n"
      << "  k = slice(qkv, d_model, d_model)\n"
      << "  v = slice(qkv, 2 * d_model, d_model)\n";
  else
    o << "  q = " << proj("x", s.q, D, D) << "\n"
      << "  k = " << proj("x", s.k, D, D) << "\n"
      << "  v = " << proj("x", s.v, D, D) << "\n";
  if (s.ropeBase)
    o << "  q = rope(split_heads(q, heads), base = rope_base)\n"
      << "  k = rope(split_heads(k, heads), base = rope_base)\n"
      << "  a = merge_heads(attention(q, k, split_heads(v, heads), mask = "
         "mask))\n";
  else
    o << "  a = attention(q, k, v, heads = heads, mask = mask"
      << (relative ? ", relative_bias = bias" : "") << ")\n";
  o << "  a = " << proj("a", s.o, D, D) << "\n"
    << "  x = " << norm.call(w, "x + a", s.attnNorm) << "\n";
  if (s.gated)
    o << "  g = " << proj("x", s.gate, F, D) << "\n"
      << "  h = " << act("g") << " * " << proj("x", s.up, F, D) << "\n";
  else
    o << "  h = " << proj("x", s.up, F, D) << "\n"
      << "  h = " << act("h") << "\n";
  o << "  h = " << proj("h", s.down, D, F) << "\n"
    << "  return " << norm.call(w, "x + h", s.outNorm) << "\n}\n\n";

  o << "block encoder(" << params("              ") << ") {\n"
    << w("word", {{"vocab", s.vocab}, D}, s.word + ".weight");
  if (learned)
    o << w("position", {{"max_positions", s.maxPositions}, D},
           s.position + ".weight");
  if (!s.tokenType.empty())
    o << w("token_type", {{"type_vocab", s.types}, D}, s.tokenType + ".weight");
  o << "  x = embed(word, input_ids)\n";
  if (learned)
    o << "  x = x + embed(position, arange(seq"
      << (s.positionOffset ? ", offset = " + std::to_string(s.positionOffset)
                           : "")
      << "))\n";
  if (!s.tokenType.empty())
    o << (s.typeInput ? "  x = x + embed(token_type, token_type_ids)\n"
                      : "  x = x + reshape(slice(token_type, 0, 1, axis = 0), "
                        "[d_model])   # type 0\n");
  o << "  x = " << norm.call(w, "x", s.embedNorm) << "\n";
  if (relative)
    o << w("table", {{"buckets", s.buckets}, {"heads", s.heads}},
           s.relativeBias + ".weight")
      << "  bias = relative_position_bias(table, buckets = buckets,\n"
      << "                                max_distance = max_distance)\n";
  o << "  for l in 0..layers {\n    x = layer(x, attention_mask, "
    << (relative ? "bias, " : "") << "l)\n  }\n"
    << "  return x\n}\n\n";

  std::string pooled;
  bool pooler = !s.pooler.empty();
  if (pooler)
    pooled = "  first = reshape(slice(hidden, 0, 1, axis = 1), [batch, "
             "d_model])\n"
             "  pooled = tanh(" +
             proj("first", s.pooler, D, D) + ")\n";
  o << "# The last hidden states" << (pooler ? " and the pooler output" : "")
    << ".\n"
    << "entry forward(" << params("              ") << ") {\n"
    << "  hidden = encoder(" << args << ")\n";
  if (pooler)
    o << pooled << "  return hidden, pooled\n}\n";
  else
    o << "  return hidden\n}\n";
  if (!s.classifier.empty()) {
    Dim labels{std::to_string(s.labels), s.labels};
    o << "\n# Sequence classification: the pooled first token through the "
         "classifier;\n# logits and their softmax over the "
      << s.labels << " labels"
      << (s.labelNames.empty() ? "" : " (" + s.labelNames + ")") << ".\n"
      << "entry classify(" << params("               ") << ") {\n"
      << w("w", {labels, D}, s.classifier + ".weight")
      << w("b", {labels}, s.classifier + ".bias") << "  hidden = encoder("
      << args << ")\n"
      << pooled << "  logits = linear(pooled, w, b)\n"
      << "  probabilities = softmax(logits)\n"
      << "  return logits, probabilities\n}\n";
  }
  const Pooling &pool = s.pool;
  if (pool.present) {
    o << "\n# Sentence embeddings as sentence-transformers computes them.\n"
      << "entry encode(" << params("             ") << ") {\n"
      << "  hidden = encoder(" << args << ")\n";
    if (pool.mode == "mean")
      o << "  m = reshape(cast(attention_mask, f32), [batch, seq, 1])\n"
        << "  sentence_embedding = (sum(hidden * m, axis = 1) /\n"
        << "                        maximum(sum(m, axis = 1), 1e-9))\n";
    else if (pool.mode == "cls")
      o << "  sentence_embedding = reshape(slice(hidden, 0, 1, axis = 1), "
           "[batch, d_model])\n";
    else
      o << "  m = reshape(cast(attention_mask, f32), [batch, seq, 1])\n"
        << "  sentence_embedding = max(hidden + (m - 1.0) * 1e9, axis = 1)\n";
    int64_t width = s.dModel; // of the embedding, through the Dense modules
    for (size_t i = 0; i < pool.dense.size(); ++i) {
      const DenseModule &d = pool.dense[i];
      std::string var = "dense" + std::to_string(i);
      Dim out{std::to_string(d.out), d.out};
      o << w(var + "_w", {out, {std::to_string(d.in), width}},
             d.path + ".linear.weight");
      if (d.bias)
        o << w(var + "_b", {out}, d.path + ".linear.bias");
      width = d.out;
      std::string lin = "linear(sentence_embedding, " + var + "_w" +
                        (d.bias ? ", " + var + "_b" : std::string()) + ")";
      o << "  sentence_embedding = "
        << (d.activation.empty() ? lin : d.activation + "(" + lin + ")")
        << "   # " << d.path << "\n";
    }
    if (pool.normalize)
      o << "  e = sentence_embedding\n"
        << "  sentence_embedding = e / maximum(sqrt(sum(e * e, keepdim = "
           "true)),"
           " 1e-12)\n";
    o << "  return sentence_embedding\n}\n";
  }
  tfm = o.str();
  // Each weight was declared once, above: those are what must match.
  uses = w.uses();
}

} // namespace tfc::importer::detail
