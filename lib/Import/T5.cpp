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
  std::string ffProj = r.stringOr("feed_forward_proj", "relu");
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
  bool gated = ffProj.rfind("gated-", 0) == 0;
  std::string act = gated ? ffProj.substr(6) : ffProj;
  if (ffProj == "gated-gelu") // transformers' backward compatibility
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
    error = c.configPath + ": feed_forward_proj '" + ffProj +
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
  const Dim D{"d_model", d}, I{"d_inner", heads * dKv}, F{"d_ff", dFF};
  WeightDecls w(encLayers);
  GenericBlock norm("norm", "x");
  norm.weight("g", {D}, ".weight");
  GenericBlock proj("proj", "x", {"d_out: int", "d_in: int"});
  proj.weight("w", {{"d_out"}, {"d_in"}}, ".weight");
  // Attention over q from xq and k, v from xkv, with or without the bias.
  auto attentionBody = [&](GenericBlock &block, const char *xq, const char *xkv,
                           const char *extra) {
    return "  q = " + proj.call(block, xq, "{p}.q", {I, D}) + "\n" +
           "  k = " + proj.call(block, xkv, "{p}.k", {I, D}) + "\n" +
           "  v = " + proj.call(block, xkv, "{p}.v", {I, D}) + "\n" +
           "  a = attention(q, k, v, heads = heads, mask = mask, causal = "
           "causal,\n                scale = 1.0" +
           extra + ")\n" + "  return " +
           proj.call(block, "a", "{p}.o", {D, I}) + "\n";
  };
  GenericBlock mha("mha", "xq, xkv, mask", {"causal: bool"});
  std::string mhaBody = attentionBody(mha, "xq", "xkv", "");
  GenericBlock self("self_attention", "x, mask, bias", {"causal: bool"});
  std::string selfBody =
      attentionBody(self, "x", "x", ", relative_bias = bias");
  GenericBlock ffn("ffn", "x");
  std::string ffnBody =
      gated ? "  h = " + proj.call(ffn, "x", "{p}.wi_0", {F, D}) + "\n" +
                  "  h = " + activation + " * " +
                  proj.call(ffn, "x", "{p}.wi_1", {F, D}) + "\n"
            : "  h = " + proj.call(ffn, "x", "{p}.wi", {F, D}) + "\n" +
                  "  h = " + activation + "\n";
  ffnBody += "  return " + proj.call(ffn, "h", "{p}.wo", {D, F}) + "\n";
  GenericBlock positionBias("position_bias", "", {"bidirectional: bool"},
                            "side");
  positionBias.weight("t", {{"buckets", buckets}, {"heads", heads}},
                      ".block.0.layer.0.SelfAttention.relative_attention_bias."
                      "weight");
  const Dim yes{"true"}, no{"false"};
  Prefix enc{"p", "encoder.block.{l}.layer"},
      dec{"p", "decoder.block.{l}.layer"};
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
    << norm.text("  return rms_norm(x, g, eps = eps)\n")
    << proj.text("  return linear(x, w)\n")
    << "# Queries from xq over keys/values from xkv; mask: 1/0 per key; bias:\n"
    << "# the position bias by distance (none in cross-attention).\n"
    << mha.text(mhaBody) << self.text(selfBody) << ffn.text(ffnBody)
    << "# The bias by distance of one stack, from its first layer's table.\n"
    << positionBias.text(
           "  return relative_position_bias(t, buckets = buckets, "
           "max_distance = max_distance,\n                                "
           "bidirectional = bidirectional)\n")
    << "block encoder_layer(x, mask, bias, l: int) {\n"
    << enc.line() << "  x = x + "
    << self.call(w, norm.call(w, "x", enc(".0.layer_norm")) + ", mask, bias",
                 enc(".0.SelfAttention"), {no})
    << "\n  return x + "
    << ffn.call(w, norm.call(w, "x", enc(".1.layer_norm")),
                enc(".1.DenseReluDense"))
    << "\n}\n\n";
  w.setLayers(decLayers);
  o << "block decoder_layer(y, memory, tgt_mask, src_mask, bias, l: int) {\n"
    << dec.line() << "  y = y + "
    << self.call(w,
                 norm.call(w, "y", dec(".0.layer_norm")) + ", tgt_mask, bias",
                 dec(".0.SelfAttention"), {yes})
    << "\n  y = y + "
    << mha.call(w,
                norm.call(w, "y", dec(".1.layer_norm")) + ", memory, src_mask",
                dec(".1.EncDecAttention"), {no})
    << "\n  return y + "
    << ffn.call(w, norm.call(w, "y", dec(".2.layer_norm")),
                dec(".2.DenseReluDense"))
    << "\n}\n\n"
    << "# Source tokens -> the encoder's output.\n"
    << "entry encode(input_ids: i64[batch, src_seq],\n"
    << "             attention_mask: i64[batch, src_seq]) {\n"
    << w("table", {{"vocab", vocab}, D}, encTable)
    << "  bias = " << positionBias.call(w, "", "encoder", {yes}) << "\n"
    << "  x = embed(table, input_ids)\n"
    << "  for l in 0..encoder_layers {\n"
    << "    x = encoder_layer(x, attention_mask, bias, l)\n  }\n"
    << "  encoder_hidden_states = "
    << norm.call(w, "x", "encoder.final_layer_norm") << "\n"
    << "  return encoder_hidden_states\n}\n\n"
    << "# Target prefix + the encoder's output -> next-token logits.\n"
    << "entry decode(decoder_input_ids: i64[batch, tgt_seq],\n"
    << "             decoder_attention_mask: i64[batch, tgt_seq],\n"
    << "             encoder_hidden_states: f32[batch, src_seq, d_model],\n"
    << "             attention_mask: i64[batch, src_seq]) {\n"
    << w("table", {{"vocab", vocab}, D}, decTable);
  if (lmHead != decTable)
    o << w("lm_head", {{"vocab", vocab}, D}, lmHead);
  o << "  bias = " << positionBias.call(w, "", "decoder", {no}) << "\n"
    << "  y = embed(table, decoder_input_ids)\n"
    << "  for l in 0..decoder_layers {\n"
    << "    y = decoder_layer(y, encoder_hidden_states, "
       "decoder_attention_mask,\n"
    << "                      attention_mask, bias, l)\n  }\n"
    << "  y = " << norm.call(w, "y", "decoder.final_layer_norm")
    << (scaleOutput ? " * d_model ** -0.5" : "") << "\n"
    << "  logits = linear(y, " << (lmHead != decTable ? "lm_head" : "table")
    << ")\n  return logits\n}\n";
  out.tfm = o.str();
  // Each weight was declared once, above: those are what must match.
  return checkUses(*c.weights, w.uses(), c.configPath, error);
}

} // namespace tfc::importer::detail
