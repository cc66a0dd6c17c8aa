//===- Gemma.cpp - Gemma, Gemma 2 and Gemma 3 text decoders ---------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// gemma (GemmaForCausalLM), gemma2 (Gemma2ForCausalLM) and gemma3_text
// (Gemma3ForCausalLM) directories as a DecoderSpec.
//
//===----------------------------------------------------------------------===//

#include "Common.h"
#include "Decoder.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace tfc::importer::detail {

/// Every Gemma: Gemma's (1 + w) RMSNorms, the embedding times sqrt(d),
/// GELU (tanh) gate, scores scaled by 1/sqrt(query_pre_attn_scalar) (Gemma
/// 1: 1/sqrt(head_dim)). Gemma 2 and 3 add norms after attention and the MLP
/// and sliding layers interleaved with global ones; Gemma 2 soft-caps the
/// scores and the logits (attn_logit_softcapping, final_logit_softcapping);
/// Gemma 3 normalises q and k per head, and its two kinds of layers have
/// their own RoPE.
bool importGemmaText(HfCheckpoint &c, const std::string &type,
                     ImportedModel &out, std::string &error) {
  bool gemma1 = type == "gemma", gemma2 = type == "gemma2";
  ConfigReader r(c.configPath, c.config);
  DecoderSpec s;
  readDecoderSizes(r, s, /*defaultHeadDim=*/256);
  if (!gemma1)
    s.attnScalar = r.positiveNumberOr("query_pre_attn_scalar", 256);
  // Gemma 1's configs name it hidden_act; transformers runs GELU (tanh)
  // whatever they say, as llama.cpp does.
  std::string act = r.stringOr("hidden_activation", "gelu_pytorch_tanh");
  bool tied = r.boolOr("tie_word_embeddings", true);
  // transformers' default window (4096) where the key is absent; null: none.
  int64_t window = gemma1                                 ? 0
                   : !c.config.contains("sliding_window") ? 4096
                   : r.has("sliding_window") ? r.positive("sliding_window")
                                             : 0;
  if (r.ok() && r.boolOr("attention_bias", false))
    r.fail("attention_bias = true is not supported");
  if (r.ok() && r.boolOr("use_bidirectional_attention", false))
    r.fail("use_bidirectional_attention = true is not supported (a "
           "decoder is causal)");
  // Soft-capping: Gemma 2's, transformers' defaults (50, 30) where a key is
  // absent, null turning it off; Gemma and Gemma 3 have none.
  auto softcap = [&](const char *key, double dflt, double &dst) {
    if (!r.ok())
      return;
    if (!gemma2) {
      if (r.has(key))
        r.fail(std::string("key '") + key + "' is set; " + type +
               " models do not soft-cap");
      return;
    }
    dst = !c.config.contains(key) ? dflt : r.positiveNumberOr(key, 0);
  };
  softcap("attn_logit_softcapping", 50, s.attnSoftcap);
  softcap("final_logit_softcapping", 30, s.finalSoftcap);
  if (!r.ok()) {
    error = r.message();
    return false;
  }
  if (act != "gelu_pytorch_tanh" && act != "gelu_new") {
    error = c.configPath + ": hidden_activation '" + act +
            "' is not supported (supported: \"gelu_pytorch_tanh\")";
    return false;
  }
  // Which layers are global: layer_types (transformers 5), else one in
  // sliding_window_pattern (transformers 4, default 6).
  std::vector<bool> global(s.layers);
  if (c.config.contains("layer_types") && c.config["layer_types"].is_array()) {
    const Json &lt = c.config["layer_types"];
    if (static_cast<int64_t>(lt.size()) != s.layers) {
      error = c.configPath + ": key 'layer_types' has " +
              std::to_string(lt.size()) + " entries for " +
              std::to_string(s.layers) + " layers";
      return false;
    }
    for (int64_t l = 0; l < s.layers; ++l) {
      std::string t = lt[l].is_string() ? lt[l].get<std::string>() : "";
      if (t != "full_attention" && t != "sliding_attention") {
        error = c.configPath + ": layer_types[" + std::to_string(l) +
                "] should be \"full_attention\" or \"sliding_attention\", "
                "found " +
                lt[l].dump();
        return false;
      }
      global[l] = t == "full_attention";
    }
  } else {
    // Gemma 2 alternates, sliding first (transformers 4 hard-codes it).
    int64_t every = gemma2 ? 2 : r.positiveOr("sliding_window_pattern", 6);
    if (!r.ok()) {
      error = r.message();
      return false;
    }
    for (int64_t l = 0; l < s.layers; ++l)
      global[l] = (l + 1) % every == 0;
  }
  // tfc's interleaving: layer l is global when (l + 1) % every == 0.
  int64_t every = 0;
  for (int64_t l = 0; l < s.layers && !every; ++l)
    if (global[l])
      every = l + 1;
  bool regular = every > 0;
  for (int64_t l = 0; l < s.layers && regular; ++l)
    regular = global[l] == ((l + 1) % every == 0);
  bool allGlobal =
      std::all_of(global.begin(), global.end(), [](bool g) { return g; });
  if (window && window < s.ctx && !allGlobal && !regular) {
    error = c.configPath + ": layer_types: the global layers must be every "
                           "N-th layer (layers N-1, 2N-1, ...), as in Gemma 2 "
                           "and 3";
    return false;
  }
  // RoPE: rope_parameters per layer kind (transformers 5) or rope_theta +
  // rope_local_base_freq + rope_scaling (transformers 4).
  double localBase = 10000;
  if (c.config.contains("rope_parameters") &&
      c.config["rope_parameters"].is_object() &&
      c.config["rope_parameters"].contains("full_attention")) {
    const Json &rp = c.config["rope_parameters"];
    Json full = Json::object(), local = Json::object();
    full["rope_parameters"] = rp["full_attention"];
    if (rp.contains("sliding_attention"))
      local["rope_parameters"] = rp["sliding_attention"];
    RopeScaling localScaling;
    if (!readRope(full, c.configPath + " rope_parameters.full_attention",
                  s.ropeBase, s.scaling, error) ||
        !readRope(local, c.configPath + " rope_parameters.sliding_attention",
                  localBase, localScaling, error))
      return false;
    if (!localScaling.type.empty()) {
      error = c.configPath + ": rope_parameters.sliding_attention: scaling "
                             "of the sliding layers is not supported";
      return false;
    }
  } else {
    if (!readRope(c.config, c.configPath, s.ropeBase, s.scaling, error))
      return false;
    localBase = r.positiveNumberOr("rope_local_base_freq", 10000);
    if (!r.ok()) {
      error = r.message();
      return false;
    }
  }
  if (window && window < s.ctx && !allGlobal) {
    s.window = window;
    s.globalEvery = every > 0 ? every : s.layers + 1;
    // Gemma 2's sliding layers rotate as its global ones.
    s.localRopeBase = gemma2 ? 0 : localBase;
  }
  s.rotaryDim = s.headDim;
  s.embedScale = s.geluGate = s.normPlusOne = true;
  s.name = identifier(baseName(c.dir));
  s.header =
      hfHeader(c,
               gemma1   ? "GemmaForCausalLM"
               : gemma2 ? "Gemma2ForCausalLM"
                        : "Gemma3ForCausalLM",
               {"model_type", "vocab_size", "hidden_size", "num_hidden_layers",
                "num_attention_heads", "num_key_value_heads", "head_dim",
                "intermediate_size", "max_position_embeddings", "rms_norm_eps",
                "query_pre_attn_scalar", "sliding_window", "rope_parameters",
                "rope_theta", "rope_local_base_freq", "rope_scaling",
                "attn_logit_softcapping", "final_logit_softcapping",
                "tie_word_embeddings"});
  std::string pre = c.hasTensor("model.language_model.embed_tokens.weight")
                        ? "model.language_model."
                        : "model.";
  s.embed = pre + "embed_tokens.weight";
  s.finalNorm = pre + "norm.weight";
  s.lmHead = tied ? s.embed : "lm_head.weight";
  if (!tied && !c.hasTensor("lm_head.weight")) {
    error = c.dir + ": tie_word_embeddings is false but the checkpoint has no "
                    "'lm_head.weight'";
    return false;
  }
  std::string p = pre + "layers.{l}";
  s.q = p + ".self_attn.q_proj";
  s.k = p + ".self_attn.k_proj";
  s.v = p + ".self_attn.v_proj";
  s.o = p + ".self_attn.o_proj";
  if (!gemma1 && !gemma2) {
    s.qNorm = p + ".self_attn.q_norm";
    s.kNorm = p + ".self_attn.k_norm";
  }
  s.gate = p + ".mlp.gate_proj";
  s.up = p + ".mlp.up_proj";
  s.down = p + ".mlp.down_proj";
  s.attnNorm = p + ".input_layernorm";
  if (gemma1) { // LLaMA's names: post_attention_layernorm is the MLP's
    s.ffnNorm = p + ".post_attention_layernorm";
  } else {
    s.postAttnNorm = p + ".post_attention_layernorm";
    s.ffnNorm = p + ".pre_feedforward_layernorm";
    s.postFfnNorm = p + ".post_feedforward_layernorm";
  }
  if (!checkDecoder(s, c.configPath, error))
    return false;
  std::vector<Use> uses;
  writeDecoder(s, out.tfm, uses);
  return checkUses(*c.weights, uses, c.configPath, error);
}

} // namespace tfc::importer::detail
