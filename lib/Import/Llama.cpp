//===- Llama.cpp - LLaMA-style Hugging Face decoders ----------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// llama, mistral, qwen2, qwen3 and phi3 directories (LlamaForCausalLM and the
// families that share its layout) as a DecoderSpec.
//
//===----------------------------------------------------------------------===//

#include "Common.h"
#include "Decoder.h"

#include <cmath>
#include <sstream>

namespace tfc::importer::detail {

bool importLlamaLike(HfCheckpoint &c, const std::string &type,
                     ImportedModel &out, std::string &error) {
  ConfigReader r(c.configPath, c.config);
  DecoderSpec s;
  readDecoderSizes(r, s);
  std::string act = r.stringOr("hidden_act", "silu");
  // transformers' default for all three families is untied.
  bool tied = r.boolOr("tie_word_embeddings", false);
  if (!r.ok()) {
    error = r.message();
    return false;
  }
  if (act != "silu") {
    error = c.configPath + ": hidden_act '" + act + "' is not supported for " +
            type + " (supported: \"silu\")";
    return false;
  }
  if (type == "llama" && r.boolOr("attention_bias", false)) {
    error = c.configPath + ": attention_bias = true is not supported for "
                           "llama (q/k/v biases are supported for qwen2)";
    return false;
  }
  if (type == "qwen3" && r.boolOr("attention_bias", false)) {
    error = c.configPath + ": attention_bias = true is not supported for "
                           "qwen3 (it would add a bias to o_proj too)";
    return false;
  }
  if (type == "llama" && r.boolOr("mlp_bias", false)) {
    error = c.configPath + ": mlp_bias = true is not supported";
    return false;
  }
  if (!readRope(c.config, c.configPath, s.ropeBase, s.scaling, error))
    return false;
  std::string note;
  if (type == "phi3") {
    // Phi-3's partial rotation (Phi-4-mini: 0.75 of each head).
    double factor = r.positiveNumberOr("partial_rotary_factor", 1.0);
    if (c.config.contains("rope_parameters") &&
        c.config["rope_parameters"].is_object()) {
      ConfigReader rp(c.configPath + " rope_parameters",
                      c.config["rope_parameters"]);
      factor = rp.positiveNumberOr("partial_rotary_factor", factor);
      if (!rp.ok()) {
        error = rp.message();
        return false;
      }
    }
    if (!r.ok()) {
      error = r.message();
      return false;
    }
    s.rotaryDim = static_cast<int64_t>(factor * double(s.headDim));
  }
  if (type == "mistral" || type == "phi3" || type == "qwen2" ||
      type == "qwen3") {
    bool windowed =
        type == "mistral" || type == "phi3"
            ? r.has("sliding_window")
            : r.boolOr("use_sliding_window", false) && r.has("sliding_window");
    if (windowed) {
      int64_t w = r.positive("sliding_window");
      if (!r.ok()) {
        error = r.message();
        return false;
      }
      if (w < s.ctx && (type == "mistral" || type == "phi3")) {
        // Every layer attends to the last w keys.
        note = "# sliding_window=" + std::to_string(w) +
               ": each query attends to the last " + std::to_string(w) +
               " keys.\n";
        s.window = w;
      } else if (w < s.ctx) {
        // Qwen2/3 window only some layers (max_window_layers): full causal
        // attention is exact while the sequence fits the window, so the
        // context is limited to it.
        note = "# sliding_window=" + std::to_string(w) +
               ": Qwen's per-layer windows are not supported yet, so "
               "sequences are limited\n# to the window (n_ctx), where full "
               "attention is exact.\n";
        s.ctx = w;
      }
    }
  }
  s.qkvBias = type == "qwen2";
  if (type != "phi3")
    s.rotaryDim = s.headDim;
  s.name = identifier(baseName(c.dir));
  s.header = hfHeader(c,
                      type == "llama"     ? "LlamaForCausalLM"
                      : type == "mistral" ? "MistralForCausalLM"
                      : type == "qwen2"   ? "Qwen2ForCausalLM"
                      : type == "qwen3"   ? "Qwen3ForCausalLM"
                                          : "Phi3ForCausalLM",
                      {"model_type", "vocab_size", "hidden_size",
                       "num_hidden_layers", "num_attention_heads",
                       "num_key_value_heads", "head_dim", "intermediate_size",
                       "max_position_embeddings", "rms_norm_eps", "rope_theta",
                       "rope_scaling", "rope_parameters", "tie_word_embeddings",
                       "sliding_window", "partial_rotary_factor"}) +
             note;
  s.embed = "model.embed_tokens.weight";
  s.finalNorm = "model.norm.weight";
  s.lmHead = tied ? s.embed : "lm_head.weight";
  if (!tied && !c.hasTensor("lm_head.weight")) {
    error = c.dir + ": tie_word_embeddings is false but the checkpoint has no "
                    "'lm_head.weight'";
    return false;
  }
  std::string p = "model.layers.{l}";
  s.q = p + ".self_attn.q_proj";
  s.k = p + ".self_attn.k_proj";
  s.v = p + ".self_attn.v_proj";
  s.o = p + ".self_attn.o_proj";
  s.gate = p + ".mlp.gate_proj";
  s.up = p + ".mlp.up_proj";
  s.down = p + ".mlp.down_proj";
  s.attnNorm = p + ".input_layernorm";
  s.ffnNorm = p + ".post_attention_layernorm";
  if (type == "qwen3") {
    s.qNorm = p + ".self_attn.q_norm";
    s.kNorm = p + ".self_attn.k_norm";
  }
  if (type == "phi3") {
    s.qkv = p + ".self_attn.qkv_proj";
    s.gateUp = p + ".mlp.gate_up_proj";
  }
  if (!checkDecoder(s, c.configPath, error))
    return false;
  std::vector<Use> uses;
  writeDecoder(s, out.tfm, uses);
  return checkUses(*c.weights, uses, c.configPath, error);
}

} // namespace tfc::importer::detail
