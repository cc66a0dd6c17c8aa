//===- T5.cpp - T5 --------------------------------------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// t5 directories (T5ForConditionalGeneration): relative position bias, RMS
// norms.
//
//===----------------------------------------------------------------------===//

#include "Common.h"

#include <cmath>
#include <sstream>

namespace tfc::importer::detail {

bool importT5(HfCheckpoint &c, ImportedModel &out, std::string &error) {
  ConfigReader r(c.configPath, c.config);
  int64_t vocab = r.positive("vocab_size");
  int64_t d = r.positive("d_model");
  int64_t dKv = r.positive("d_kv");
  int64_t dFF = r.positive("d_ff");
  int64_t encLayers = r.positive("num_layers");
  int64_t decLayers = r.positiveOr("num_decoder_layers", encLayers);
  int64_t heads = r.positive("num_heads");
  int64_t buckets = r.positiveOr("relative_attention_num_buckets", 32);
  int64_t distance = r.positiveOr("relative_attention_max_distance", 128);
  double eps = r.positiveNumberOr("layer_norm_epsilon", 1e-6);
  std::string proj = r.stringOr("feed_forward_proj", "relu");
  bool tied = r.boolOr("tie_word_embeddings", true);
  // transformers 5 records whether the decoder output is scaled by
  // d_model^-0.5 (original T5) in scale_decoder_outputs; earlier versions
  // scaled exactly when the head was tied.
  bool scaleOutput = r.boolOr("scale_decoder_outputs", tied);
  if (!r.ok()) {
    error = r.message();
    return false;
  }
  // The encoder's buckets are halved per direction; each direction needs
  // exact buckets below max_distance (tfc.relative_position_bias).
  if (buckets < 4 || distance <= buckets / 2 || distance > (1 << 20)) {
    error = c.configPath + ": relative_attention_num_buckets " +
            std::to_string(buckets) + " and relative_attention_max_distance " +
            std::to_string(distance) +
            " are not supported (at least 4 buckets and a max_distance above "
            "half of them, at most 2^20)";
    return false;
  }
  bool gated = proj.rfind("gated-", 0) == 0;
  std::string act = gated ? proj.substr(6) : proj;
  if (proj == "gated-gelu") // transformers' backward compatibility
    act = "gelu_new";
  std::string activation;
  if (act == "relu")
    activation = "relu(h)";
  else if (act == "gelu")
    activation = "gelu(h)";
  else if (act == "gelu_new" || act == "gelu_pytorch_tanh" ||
           act == "gelu_fast")
    activation = "gelu(h, approximate = \"tanh\")";
  else if (act == "silu" || act == "swish")
    activation = "silu(h)";
  else {
    error = c.configPath + ": feed_forward_proj '" + proj +
            "' is not supported (supported: relu, gelu, gelu_new, silu, or "
            "one of them after 'gated-')";
    return false;
  }
  auto table = [&](const std::string &side) {
    std::string own = side + ".embed_tokens.weight";
    return c.hasTensor(own) ? own : std::string("shared.weight");
  };
  std::string encTable = table("encoder"), decTable = table("decoder");
  std::string lmHead = tied ? decTable : "lm_head.weight";
  if (!tied && !c.hasTensor(lmHead)) {
    error = c.dir + ": tie_word_embeddings is false but the checkpoint has "
                    "no 'lm_head.weight'";
    return false;
  }
  std::ostringstream o;
  o << hfHeader(c, "T5ForConditionalGeneration",
                {"model_type", "vocab_size", "d_model", "d_kv", "d_ff",
                 "num_layers", "num_decoder_layers", "num_heads",
                 "relative_attention_num_buckets",
                 "relative_attention_max_distance", "layer_norm_epsilon",
                 "feed_forward_proj", "tie_word_embeddings",
                 "scale_decoder_outputs", "decoder_start_token_id"})
    << "# Pre-norm layers with RMS norms (no mean, no bias); no position\n"
       "# embeddings: a bias by query-key distance in buckets, learned per "
       "head by\n# the first layer of each stack and shared by its layers "
       "(bidirectional in\n# the encoder, causal in the decoder); unscaled "
       "attention scores; `encode`\n# once per source, `decode` per target "
       "prefix (tfc-compile --kv-cache adds\n# decode_cached and "
       "decode_cross).\n"
    << "\nmodel " << identifier(baseName(c.dir)) << "\n\n"
    << "const vocab = " << vocab << "\nconst d_model = " << d
    << "\nconst heads = " << heads << "\nconst d_inner = " << heads * dKv
    << "\nconst d_ff = " << dFF << "\nconst encoder_layers = " << encLayers
    << "\nconst decoder_layers = " << decLayers
    << "\nconst buckets = " << buckets << "\nconst max_distance = " << distance
    << "\nconst eps = " << fmtFloat(eps) << "\n\n"
    << "dim batch, src_seq, tgt_seq\n\n"
    << "block norm(x, p: str) {\n"
    << "  weight g: [d_model] = \"{p}.weight\"\n"
    << "  return rms_norm(x, g, eps = eps)\n}\n\n"
    << "block proj(x, p: str, d_out: int, d_in: int) {\n"
    << "  weight w: [d_out, d_in] = \"{p}.weight\"\n"
    << "  return linear(x, w)\n}\n\n"
    << "# Queries from xq over keys/values from xkv; mask: 1/0 per key; bias:\n"
    << "# the position bias by distance (none in cross-attention).\n"
    << "block mha(xq, xkv, mask, p: str, causal: bool) {\n"
    << "  q = proj(xq, \"{p}.q\", d_inner, d_model)\n"
    << "  k = proj(xkv, \"{p}.k\", d_inner, d_model)\n"
    << "  v = proj(xkv, \"{p}.v\", d_inner, d_model)\n"
    << "  a = attention(q, k, v, heads = heads, mask = mask, causal = causal,\n"
    << "                scale = 1.0)\n"
    << "  return proj(a, \"{p}.o\", d_model, d_inner)\n}\n\n"
    << "block self_attention(x, mask, bias, p: str, causal: bool) {\n"
    << "  q = proj(x, \"{p}.q\", d_inner, d_model)\n"
    << "  k = proj(x, \"{p}.k\", d_inner, d_model)\n"
    << "  v = proj(x, \"{p}.v\", d_inner, d_model)\n"
    << "  a = attention(q, k, v, heads = heads, mask = mask, causal = causal,\n"
    << "                scale = 1.0, relative_bias = bias)\n"
    << "  return proj(a, \"{p}.o\", d_model, d_inner)\n}\n\n"
    << "block ffn(x, p: str) {\n";
  if (gated)
    o << "  h = proj(x, \"{p}.wi_0\", d_ff, d_model)\n"
      << "  h = " << activation << " * proj(x, \"{p}.wi_1\", d_ff, d_model)\n";
  else
    o << "  h = proj(x, \"{p}.wi\", d_ff, d_model)\n"
      << "  h = " << activation << "\n";
  o << "  return proj(h, \"{p}.wo\", d_model, d_ff)\n}\n\n"
    << "# The bias by distance of one stack, from its first layer's table.\n"
    << "block position_bias(side: str, bidirectional: bool) {\n"
    << "  weight t: [buckets, heads] = "
       "\"{side}.block.0.layer.0.SelfAttention.relative_attention_bias."
       "weight\"\n"
    << "  return relative_position_bias(t, buckets = buckets, max_distance = "
       "max_distance,\n                                bidirectional = "
       "bidirectional)\n}\n\n"
    << "block encoder_layer(x, mask, bias, l: int) {\n"
    << "  p = \"encoder.block.{l}.layer\"\n"
    << "  x = x + self_attention(norm(x, \"{p}.0.layer_norm\"), mask, bias,\n"
    << "                         \"{p}.0.SelfAttention\", false)\n"
    << "  return x + ffn(norm(x, \"{p}.1.layer_norm\"), "
       "\"{p}.1.DenseReluDense\")\n}\n\n"
    << "block decoder_layer(y, memory, tgt_mask, src_mask, bias, l: int) {\n"
    << "  p = \"decoder.block.{l}.layer\"\n"
    << "  y = y + self_attention(norm(y, \"{p}.0.layer_norm\"), tgt_mask, "
       "bias,\n                         \"{p}.0.SelfAttention\", true)\n"
    << "  y = y + mha(norm(y, \"{p}.1.layer_norm\"), memory, src_mask,\n"
    << "              \"{p}.1.EncDecAttention\", false)\n"
    << "  return y + ffn(norm(y, \"{p}.2.layer_norm\"), "
       "\"{p}.2.DenseReluDense\")\n}\n\n"
    << "# Source tokens -> the encoder's output.\n"
    << "entry encode(input_ids: i64[batch, src_seq],\n"
    << "             attention_mask: i64[batch, src_seq]) {\n"
    << "  weight table: [vocab, d_model] = \"" << encTable << "\"\n"
    << "  bias = position_bias(\"encoder\", true)\n"
    << "  x = embed(table, input_ids)\n"
    << "  for l in 0..encoder_layers {\n"
    << "    x = encoder_layer(x, attention_mask, bias, l)\n  }\n"
    << "  encoder_hidden_states = norm(x, \"encoder.final_layer_norm\")\n"
    << "  return encoder_hidden_states\n}\n\n"
    << "# Target prefix + the encoder's output -> next-token logits.\n"
    << "entry decode(decoder_input_ids: i64[batch, tgt_seq],\n"
    << "             decoder_attention_mask: i64[batch, tgt_seq],\n"
    << "             encoder_hidden_states: f32[batch, src_seq, d_model],\n"
    << "             attention_mask: i64[batch, src_seq]) {\n"
    << "  weight table: [vocab, d_model] = \"" << decTable << "\"\n";
  if (lmHead != decTable)
    o << "  weight lm_head: [vocab, d_model] = \"" << lmHead << "\"\n";
  o << "  bias = position_bias(\"decoder\", false)\n"
    << "  y = embed(table, decoder_input_ids)\n"
    << "  for l in 0..decoder_layers {\n"
    << "    y = decoder_layer(y, encoder_hidden_states, "
       "decoder_attention_mask,\n"
    << "                      attention_mask, bias, l)\n  }\n"
    << "  y = norm(y, \"decoder.final_layer_norm\")"
    << (scaleOutput ? " * d_model ** -0.5" : "") << "\n"
    << "  logits = linear(y, " << (lmHead != decTable ? "lm_head" : "table")
    << ")\n  return logits\n}\n";
  out.tfm = o.str();

  std::vector<Use> uses = {{encTable, {vocab, d}},
                           {"encoder.final_layer_norm.weight", {d}},
                           {"decoder.final_layer_norm.weight", {d}}};
  if (decTable != encTable)
    uses.push_back({decTable, {vocab, d}});
  if (lmHead != decTable)
    uses.push_back({lmHead, {vocab, d}});
  for (const char *side : {"encoder", "decoder"})
    uses.push_back({std::string(side) +
                        ".block.0.layer.0.SelfAttention.relative_attention_"
                        "bias.weight",
                    {buckets, heads}});
  auto attn = [&](const std::string &p) {
    for (const char *n : {".q", ".k", ".v"})
      uses.push_back({p + n + ".weight", {heads * dKv, d}});
    uses.push_back({p + ".o.weight", {d, heads * dKv}});
  };
  auto ffn = [&](const std::string &p) {
    for (const char *n : gated ? std::vector<const char *>{".wi_0", ".wi_1"}
                               : std::vector<const char *>{".wi"})
      uses.push_back({p + n + ".weight", {dFF, d}});
    uses.push_back({p + ".wo.weight", {d, dFF}});
  };
  for (int64_t l = 0; l < encLayers; ++l) {
    std::string p = "encoder.block." + std::to_string(l) + ".layer.";
    attn(p + "0.SelfAttention");
    ffn(p + "1.DenseReluDense");
    for (const char *n : {"0", "1"})
      uses.push_back({p + n + ".layer_norm.weight", {d}});
  }
  for (int64_t l = 0; l < decLayers; ++l) {
    std::string p = "decoder.block." + std::to_string(l) + ".layer.";
    attn(p + "0.SelfAttention");
    attn(p + "1.EncDecAttention");
    ffn(p + "2.DenseReluDense");
    for (const char *n : {"0", "1", "2"})
      uses.push_back({p + n + ".layer_norm.weight", {d}});
  }
  return checkUses(*c.weights, uses, c.configPath, error);
}

} // namespace tfc::importer::detail
