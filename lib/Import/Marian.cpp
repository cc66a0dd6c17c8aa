//===- Marian.cpp - MarianMT ----------------------------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// marian directories: the encoder-decoder of "Attention Is All You Need" as
// transformers' MarianMTModel builds it.
//
//===----------------------------------------------------------------------===//

#include "Common.h"

#include <cmath>
#include <sstream>

namespace tfc::importer::detail {

bool importMarian(HfCheckpoint &c, ImportedModel &out, std::string &error) {
  ConfigReader r(c.configPath, c.config);
  int64_t vocab = r.positive("vocab_size");
  int64_t d = r.positive("d_model");
  int64_t encLayers = r.positive("encoder_layers");
  int64_t decLayers = r.positive("decoder_layers");
  int64_t encHeads = r.positive("encoder_attention_heads");
  int64_t decHeads = r.positive("decoder_attention_heads");
  int64_t encFF = r.positive("encoder_ffn_dim");
  int64_t decFF = r.positive("decoder_ffn_dim");
  int64_t ctx = r.positive("max_position_embeddings");
  std::string act = r.stringOr("activation_function", "gelu");
  bool scale = r.boolOr("scale_embedding", false);
  bool tied = r.boolOr("tie_word_embeddings", true);
  if (r.ok() && !r.boolOr("share_encoder_decoder_embeddings", true))
    r.fail("share_encoder_decoder_embeddings = false is not supported");
  if (r.ok() && c.config.contains("decoder_vocab_size") &&
      !c.config["decoder_vocab_size"].is_null() &&
      r.positive("decoder_vocab_size") != vocab)
    r.fail("decoder_vocab_size must equal vocab_size");
  if (!r.ok()) {
    error = r.message();
    return false;
  }
  for (auto [heads, what] : {std::pair{encHeads, "encoder_attention_heads"},
                             std::pair{decHeads, "decoder_attention_heads"}})
    if (d % heads != 0) {
      error = c.configPath + ": d_model " + std::to_string(d) +
              " is not a multiple of " + what + " " + std::to_string(heads);
      return false;
    }
  std::string activation;
  if (act == "swish" || act == "silu")
    activation = "silu(h)";
  else if (act == "gelu")
    activation = "gelu(h)";
  else if (act == "gelu_new" || act == "gelu_pytorch_tanh")
    activation = "gelu(h, approximate = \"tanh\")";
  else if (act == "relu")
    activation = "relu(h)";
  else {
    error = c.configPath + ": activation_function '" + act +
            "' is not supported (supported: swish, silu, gelu, gelu_new, "
            "gelu_pytorch_tanh, relu)";
    return false;
  }
  if (!tied && !c.hasTensor("lm_head.weight")) {
    error = c.dir + ": tie_word_embeddings is false but the checkpoint has "
                    "no 'lm_head.weight'";
    return false;
  }
  // The token tables: the encoder's and decoder's own when the checkpoint
  // has them (transformers unties them from `shared` when
  // tie_word_embeddings is false), else the shared one.
  auto table = [&](const std::string &side) {
    std::string own = "model." + side + ".embed_tokens.weight";
    return c.hasTensor(own) ? own : std::string("model.shared.weight");
  };
  std::string encTable = table("encoder"), decTable = table("decoder");
  std::string lmHead = tied ? decTable : "lm_head.weight";
  const Dim D{"d_model", d}, FF{"d_ff"};
  WeightDecls w(encLayers);
  GenericBlock norm("norm", "x");
  norm.weight("g", {D}, ".weight").weight("b", {D}, ".bias");
  GenericBlock proj("proj", "x", {"d_out: int", "d_in: int"});
  proj.weight("w", {{"d_out"}, {"d_in"}}, ".weight")
      .weight("b", {{"d_out"}}, ".bias");
  GenericBlock mha("mha", "xq, xkv, mask", {"heads: int", "causal: bool"});
  std::string mhaBody =
      "  q = " + proj.call(mha, "xq", "{p}.q_proj", {D, D}) + "\n" +
      "  k = " + proj.call(mha, "xkv", "{p}.k_proj", {D, D}) + "\n" +
      "  v = " + proj.call(mha, "xkv", "{p}.v_proj", {D, D}) + "\n" +
      "  a = attention(q, k, v, heads = heads, mask = mask, causal = "
      "causal)\n" +
      "  return " + proj.call(mha, "a", "{p}.out_proj", {D, D}) + "\n";
  GenericBlock ffn("ffn", "x", {"d_ff: int"});
  std::string ffnBody = "  h = " + proj.call(ffn, "x", "{p}.fc1", {FF, D}) +
                        "\n  h = " + activation + "\n  return " +
                        proj.call(ffn, "h", "{p}.fc2", {D, FF}) + "\n";
  GenericBlock embedTokens("embed_tokens", "ids", {}, "name");
  embedTokens.weight("table", {{"vocab", vocab}, D}, "");
  const Dim yes{"true"}, no{"false"};
  Prefix enc{"p", "model.encoder.layers.{l}"},
      dec{"p", "model.decoder.layers.{l}"};
  std::ostringstream o;
  o << hfHeader(c, "MarianMTModel",
                {"model_type", "vocab_size", "d_model", "encoder_layers",
                 "decoder_layers", "encoder_attention_heads",
                 "decoder_attention_heads", "encoder_ffn_dim",
                 "decoder_ffn_dim", "max_position_embeddings",
                 "activation_function", "scale_embedding",
                 "tie_word_embeddings", "decoder_start_token_id"})
    << "# Post-norm layers; sinusoidal positions with the sines in the first "
       "half\n# of the features; `encode` once per source, `decode` per "
       "target prefix\n# (tfc-compile --kv-cache adds decode_cached and "
       "decode_cross).\n"
    << "\nmodel " << identifier(baseName(c.dir)) << "\n\n"
    << "const vocab = " << vocab << "\nconst n_ctx = " << ctx
    << "\nconst d_model = " << d << "\nconst encoder_heads = " << encHeads
    << "\nconst decoder_heads = " << decHeads
    << "\nconst encoder_layers = " << encLayers
    << "\nconst decoder_layers = " << decLayers
    << "\nconst encoder_ffn = " << encFF << "\nconst decoder_ffn = " << decFF
    << "\nconst eps = 1e-5\n\n"
    << "dim batch\ndim src_seq <= n_ctx\ndim tgt_seq <= n_ctx\n\n"
    << norm.text("  return layer_norm(x, g, b, eps = eps)\n")
    << proj.text("  return linear(x, w, b)\n")
    << "# Queries from xq over keys/values from xkv; mask: 1/0 per key.\n"
    << mha.text(mhaBody) << ffn.text(ffnBody)
    << embedTokens.text("  x = embed(table, ids)" +
                        std::string(scale ? " * d_model ** 0.5" : "") +
                        "\n  return x + sinusoidal_positions(size(ids, 1), "
                        "d_model, interleaved = false)\n")
    << "block encoder_layer(x, mask, l: int) {\n"
    << enc.line() << "  x = "
    << norm.call(w,
                 "x + " + mha.call(w, "x, x, mask", enc(".self_attn"),
                                   {{"encoder_heads"}, no}),
                 enc(".self_attn_layer_norm"))
    << "\n  return "
    << norm.call(w,
                 "x + " + ffn.call(w, "x", enc(""), {{"encoder_ffn", encFF}}),
                 enc(".final_layer_norm"))
    << "\n}\n\n";
  w.setLayers(decLayers);
  o << "block decoder_layer(y, memory, tgt_mask, src_mask, l: int) {\n"
    << dec.line() << "  y = "
    << norm.call(w,
                 "y + " + mha.call(w, "y, y, tgt_mask", dec(".self_attn"),
                                   {{"decoder_heads"}, yes}),
                 dec(".self_attn_layer_norm"))
    << "\n  y = "
    << norm.call(w,
                 "y + " + mha.call(w, "y, memory, src_mask",
                                   dec(".encoder_attn"),
                                   {{"decoder_heads"}, no}),
                 dec(".encoder_attn_layer_norm"))
    << "\n  return "
    << norm.call(w,
                 "y + " + ffn.call(w, "y", dec(""), {{"decoder_ffn", decFF}}),
                 dec(".final_layer_norm"))
    << "\n}\n\n"
    << "# Source tokens -> the encoder's output.\n"
    << "entry encode(input_ids: i64[batch, src_seq],\n"
    << "             attention_mask: i64[batch, src_seq]) {\n"
    << "  x = " << embedTokens.call(w, "input_ids", encTable) << "\n"
    << "  for l in 0..encoder_layers {\n"
    << "    x = encoder_layer(x, attention_mask, l)\n  }\n"
    << "  encoder_hidden_states = x\n  return encoder_hidden_states\n}\n\n"
    << "# Target prefix + the encoder's output -> next-token logits.\n"
    << "entry decode(decoder_input_ids: i64[batch, tgt_seq],\n"
    << "             decoder_attention_mask: i64[batch, tgt_seq],\n"
    << "             encoder_hidden_states: f32[batch, src_seq, d_model],\n"
    << "             attention_mask: i64[batch, src_seq]) {\n"
    << w("lm_head", {{"vocab", vocab}, D}, lmHead)
    << w("final_logits_bias", {{"1", 1}, {"vocab", vocab}}, "final_logits_bias")
    << "  y = " << embedTokens.call(w, "decoder_input_ids", decTable) << "\n"
    << "  for l in 0..decoder_layers {\n"
    << "    y = decoder_layer(y, encoder_hidden_states, "
       "decoder_attention_mask,\n"
    << "                      attention_mask, l)\n  }\n"
    << "  logits = linear(y, lm_head) + final_logits_bias\n"
    << "  return logits\n}\n";
  out.tfm = o.str();
  // Each weight was declared once, above: those are what must match.
  return checkUses(*c.weights, w.uses(), c.configPath, error);
}

} // namespace tfc::importer::detail
