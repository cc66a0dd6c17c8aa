//===- Bloom.cpp - BLOOM --------------------------------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// bloom directories (BloomForCausalLM): ALiBi, no position embeddings.
//
//===----------------------------------------------------------------------===//

#include "Common.h"

#include <cmath>
#include <sstream>

namespace tfc::importer::detail {

bool importBloom(HfCheckpoint &c, ImportedModel &out, std::string &error) {
  ConfigReader r(c.configPath, c.config);
  // transformers' BloomConfig also takes these under other names.
  auto key = [&](const char *name, const char *alias) {
    return r.has(name) ? name : alias;
  };
  const char *dKey = key("n_embed", "hidden_size");
  const char *headsKey = key("n_head", "num_attention_heads");
  int64_t vocab = r.positive("vocab_size");
  int64_t d = r.positive(dKey);
  int64_t layers = r.positive(key("n_layer", "num_hidden_layers"));
  int64_t heads = r.positive(headsKey);
  double eps = r.positiveNumberOr("layer_norm_epsilon", 1e-5);
  bool postNorm = r.boolOr("apply_residual_connection_post_layernorm", false);
  bool tied = r.boolOr("tie_word_embeddings", true);
  if (r.ok() && r.boolOr("slow_but_exact", false))
    r.fail("slow_but_exact = true is not supported");
  if (!r.ok()) {
    error = r.message();
    return false;
  }
  if (d % heads != 0) {
    error = c.configPath + ": " + dKey + " " + std::to_string(d) +
            " is not a multiple of " + headsKey + " " + std::to_string(heads);
    return false;
  }
  // BloomForCausalLM's tensors are under "transformer.", BloomModel's not.
  const std::string pre =
      c.hasTensor("transformer.word_embeddings.weight") ? "transformer." : "";
  if (!tied && !c.hasTensor("lm_head.weight")) {
    error = c.dir + ": tie_word_embeddings is false but the checkpoint has "
                    "no 'lm_head.weight'";
    return false;
  }
  const Dim D{"d_model", d}, F{"d_ff", 4 * d};
  WeightDecls w(layers);
  GenericBlock norm("norm", "x");
  norm.weight("g", {D}, ".weight").weight("b", {D}, ".bias");
  GenericBlock proj("proj", "x", {"d_out: int", "d_in: int"});
  proj.weight("w", {{"d_out"}, {"d_in"}}, ".weight")
      .weight("b", {{"d_out"}}, ".bias");
  Prefix attn{"p", pre + "h.{l}.self_attention"}, mlp{"p", pre + "h.{l}.mlp"};
  std::string h = pre + "h.{l}.";
  std::ostringstream o;
  o << hfHeader(c, "BloomForCausalLM",
                {"model_type", "vocab_size", "hidden_size", "n_embed",
                 "n_layer", "num_hidden_layers", "n_head",
                 "num_attention_heads", "layer_norm_epsilon",
                 "apply_residual_connection_post_layernorm",
                 "tie_word_embeddings"})
    << "# ALiBi (slopes with the maximum bias 8) instead of position "
       "embeddings;\n# the fused query_key_value projection holds each "
       "head's query, key and\n# value rows in turn.\n"
    << "\nmodel " << identifier(baseName(c.dir)) << "\n\n"
    << "const vocab = " << vocab << "\nconst d_model = " << d
    << "\nconst heads = " << heads << "\nconst d_head = " << d / heads
    << "\nconst layers = " << layers << "\nconst d_ff = " << 4 * d
    << "\nconst eps = " << fmtFloat(eps) << "\n\ndim batch, seq\n\n"
    << norm.text("  return layer_norm(x, g, b, eps = eps)\n")
    << proj.text("  return linear(x, w, b)\n")
    << "block attn(x: [batch, seq, d_model], l: int) {\n"
    << attn.line() << "  qkv = reshape("
    << proj.call(w, "x", attn(".query_key_value"), {{"3 * d_model", 3 * d}, D})
    << ",\n                [batch, seq, heads, 3, d_head])\n"
    << "  q, k, v = split(qkv, 3, axis = 3)\n"
    << "  q = reshape(q, [batch, seq, d_model])\n"
    << "  k = reshape(k, [batch, seq, d_model])\n"
    << "  v = reshape(v, [batch, seq, d_model])\n"
    << "  a = attention(q, k, v, heads = heads, causal = true, alibi = 8.0)\n"
    << "  return " << proj.call(w, "a", attn(".dense"), {D, D}) << "\n}\n\n"
    << "block mlp(x: [batch, seq, d_model], l: int) {\n"
    << mlp.line() << "  h = gelu("
    << proj.call(w, "x", mlp(".dense_h_to_4h"), {F, D})
    << ", approximate = \"tanh\")\n"
    << "  return " << proj.call(w, "h", mlp(".dense_4h_to_h"), {D, F})
    << "\n}\n\n"
    << "block layer(x: [batch, seq, d_model], l: int) {\n"
    << "  h = " << norm.call(w, "x", h + "input_layernorm") << "\n"
    << "  x = " << (postNorm ? "h" : "x") << " + attn(h, l)\n"
    << "  h = " << norm.call(w, "x", h + "post_attention_layernorm") << "\n"
    << "  return " << (postNorm ? "h" : "x") << " + mlp(h, l)\n}\n\n"
    << "# Next-token logits for every position.\n"
    << "entry forward(input_ids: i64[batch, seq]) {\n"
    << w("wte", {{"vocab", vocab}, D}, pre + "word_embeddings.weight");
  if (!tied)
    o << w("lm_head", {{"vocab", vocab}, D}, "lm_head.weight");
  o << "  x = "
    << norm.call(w, "embed(wte, input_ids)", pre + "word_embeddings_layernorm")
    << "\n"
    << "  for l in 0..layers {\n    x = layer(x, l)\n  }\n"
    << "  x = " << norm.call(w, "x", pre + "ln_f") << "\n"
    << "  logits = linear(x, " << (tied ? "wte)   # tied LM head" : "lm_head)")
    << "\n  return logits\n}\n";
  out.tfm = o.str();
  // Each weight was declared once, above: those are what must match.
  return checkUses(*c.weights, w.uses(), c.configPath, error);
}

} // namespace tfc::importer::detail
