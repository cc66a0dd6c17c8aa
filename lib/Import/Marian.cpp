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
    << "block norm(x, p: str) {\n"
    << "  weight g: [d_model] = \"{p}.weight\"\n"
    << "  weight b: [d_model] = \"{p}.bias\"\n"
    << "  return layer_norm(x, g, b, eps = eps)\n}\n\n"
    << "block proj(x, p: str, d_out: int, d_in: int) {\n"
    << "  weight w: [d_out, d_in] = \"{p}.weight\"\n"
    << "  weight b: [d_out] = \"{p}.bias\"\n"
    << "  return linear(x, w, b)\n}\n\n"
    << "# Queries from xq over keys/values from xkv; mask: 1/0 per key.\n"
    << "block mha(xq, xkv, mask, p: str, heads: int, causal: bool) {\n"
    << "  q = proj(xq, \"{p}.q_proj\", d_model, d_model)\n"
    << "  k = proj(xkv, \"{p}.k_proj\", d_model, d_model)\n"
    << "  v = proj(xkv, \"{p}.v_proj\", d_model, d_model)\n"
    << "  a = attention(q, k, v, heads = heads, mask = mask, causal = causal)\n"
    << "  return proj(a, \"{p}.out_proj\", d_model, d_model)\n}\n\n"
    << "block ffn(x, p: str, d_ff: int) {\n"
    << "  h = proj(x, \"{p}.fc1\", d_ff, d_model)\n"
    << "  h = " << activation << "\n"
    << "  return proj(h, \"{p}.fc2\", d_model, d_ff)\n}\n\n"
    << "block embed_tokens(ids, name: str) {\n"
    << "  weight table: [vocab, d_model] = \"{name}\"\n"
    << "  x = embed(table, ids)" << (scale ? " * d_model ** 0.5" : "") << "\n"
    << "  return x + sinusoidal_positions(size(ids, 1), d_model, "
       "interleaved = false)\n}\n\n"
    << "block encoder_layer(x, mask, l: int) {\n"
    << "  p = \"model.encoder.layers.{l}\"\n"
    << "  x = norm(x + mha(x, x, mask, \"{p}.self_attn\", encoder_heads, "
       "false),\n           \"{p}.self_attn_layer_norm\")\n"
    << "  return norm(x + ffn(x, p, encoder_ffn), \"{p}.final_layer_norm\")\n"
    << "}\n\n"
    << "block decoder_layer(y, memory, tgt_mask, src_mask, l: int) {\n"
    << "  p = \"model.decoder.layers.{l}\"\n"
    << "  y = norm(y + mha(y, y, tgt_mask, \"{p}.self_attn\", decoder_heads, "
       "true),\n           \"{p}.self_attn_layer_norm\")\n"
    << "  y = norm(y + mha(y, memory, src_mask, \"{p}.encoder_attn\", "
       "decoder_heads, false),\n           \"{p}.encoder_attn_layer_norm\")\n"
    << "  return norm(y + ffn(y, p, decoder_ffn), \"{p}.final_layer_norm\")\n"
    << "}\n\n"
    << "# Source tokens -> the encoder's output.\n"
    << "entry encode(input_ids: i64[batch, src_seq],\n"
    << "             attention_mask: i64[batch, src_seq]) {\n"
    << "  x = embed_tokens(input_ids, \"" << encTable << "\")\n"
    << "  for l in 0..encoder_layers {\n"
    << "    x = encoder_layer(x, attention_mask, l)\n  }\n"
    << "  encoder_hidden_states = x\n  return encoder_hidden_states\n}\n\n"
    << "# Target prefix + the encoder's output -> next-token logits.\n"
    << "entry decode(decoder_input_ids: i64[batch, tgt_seq],\n"
    << "             decoder_attention_mask: i64[batch, tgt_seq],\n"
    << "             encoder_hidden_states: f32[batch, src_seq, d_model],\n"
    << "             attention_mask: i64[batch, src_seq]) {\n"
    << "  weight lm_head: [vocab, d_model] = \"" << lmHead << "\"\n"
    << "  weight final_logits_bias: [1, vocab] = \"final_logits_bias\"\n"
    << "  y = embed_tokens(decoder_input_ids, \"" << decTable << "\")\n"
    << "  for l in 0..decoder_layers {\n"
    << "    y = decoder_layer(y, encoder_hidden_states, "
       "decoder_attention_mask,\n"
    << "                      attention_mask, l)\n  }\n"
    << "  logits = linear(y, lm_head) + final_logits_bias\n"
    << "  return logits\n}\n";
  out.tfm = o.str();

  std::vector<Use> uses = {{encTable, {vocab, d}},
                           {"final_logits_bias", {1, vocab}}};
  if (decTable != encTable)
    uses.push_back({decTable, {vocab, d}});
  if (!tied)
    uses.push_back({"lm_head.weight", {vocab, d}});
  auto attn = [&](const std::string &p) {
    for (const char *n : {"q_proj", "k_proj", "v_proj", "out_proj"}) {
      uses.push_back({p + "." + n + ".weight", {d, d}});
      uses.push_back({p + "." + n + ".bias", {d}});
    }
  };
  auto layer = [&](const std::string &p, int64_t ff,
                   std::vector<const char *> norms) {
    uses.push_back({p + "fc1.weight", {ff, d}});
    uses.push_back({p + "fc1.bias", {ff}});
    uses.push_back({p + "fc2.weight", {d, ff}});
    uses.push_back({p + "fc2.bias", {d}});
    for (const char *n : norms) {
      uses.push_back({p + n + ".weight", {d}});
      uses.push_back({p + n + ".bias", {d}});
    }
  };
  for (int64_t l = 0; l < encLayers; ++l) {
    std::string p = "model.encoder.layers." + std::to_string(l) + ".";
    attn(p + "self_attn");
    layer(p, encFF, {"self_attn_layer_norm", "final_layer_norm"});
  }
  for (int64_t l = 0; l < decLayers; ++l) {
    std::string p = "model.decoder.layers." + std::to_string(l) + ".";
    attn(p + "self_attn");
    attn(p + "encoder_attn");
    layer(p, decFF,
          {"self_attn_layer_norm", "encoder_attn_layer_norm",
           "final_layer_norm"});
  }
  return checkUses(*c.weights, uses, c.configPath, error);
}

} // namespace tfc::importer::detail
