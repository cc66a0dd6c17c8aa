//===- Gguf.cpp - GGUF checkpoints ----------------------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// .gguf files: the decoders llama.cpp builds (llama, mistral, qwen2, qwen3,
// gemma, gemma2, gemma3, phi3) and its BERT-derived encoders (bert,
// nomic-bert).
//
//===----------------------------------------------------------------------===//

#include "Common.h"
#include "Decoder.h"
#include "Encoder.h"

#include "tfc/Formats/Gguf.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace tfc::importer::detail {

/// The GGUF architectures of LLaMA-style decoders (llama.cpp's names), as
/// llama.cpp builds them (src/models/*.cpp).
static const char *const kGgufArchs[] = {"llama", "mistral", "qwen2",  "qwen3",
                                         "gemma", "gemma2",  "gemma3", "phi3"};

/// GGUF's BERT-derived encoders, as llama.cpp builds them
/// (src/models/bert.cpp): bert (learned positions, q/k/v with biases, GELU
/// MLP) and nomic-bert (fused QKV without biases, RoPE, SwiGLU); both add
/// token type 0 to every token.
static bool importGgufEncoder(const tfc::rt::GgufFile &f,
                              const std::string &path, const std::string &arch,
                              ImportedModel &out, std::string &error) {
  std::string kp = arch + ".";
  EncoderSpec s;
  auto need = [&](const std::string &suffix, int64_t &dst) {
    std::string key = kp + suffix;
    int64_t v;
    if (!f.getInt(key, v, error))
      return false;
    if (v <= 0 || v > (int64_t(1) << 40)) {
      error = path + ": metadata '" + key + "' should be positive, found " +
              std::to_string(v);
      return false;
    }
    dst = v;
    return true;
  };
  auto has = [&](const std::string &suffix) {
    return f.find(kp + suffix) != nullptr;
  };
  if (!need("embedding_length", s.dModel) || !need("block_count", s.layers) ||
      !need("attention.head_count", s.heads) ||
      !need("feed_forward_length", s.dFF) ||
      !need("context_length", s.maxPositions))
    return false;
  bool nomic = arch == "nomic-bert";
  if (!f.getFloat(kp + "attention.layer_norm_epsilon", s.eps, error) ||
      (nomic && !f.getFloat(kp + "rope.freq_base", s.ropeBase, error)))
    return false;
  if (!(s.eps > 0) || (nomic && !(s.ropeBase > 0))) {
    error = path + ": " + kp + "attention.layer_norm_epsilon and " + kp +
            "rope.freq_base must be positive";
    return false;
  }
  if (s.dModel % s.heads != 0) {
    error = path + ": " + kp + "embedding_length " + std::to_string(s.dModel) +
            " is not a multiple of " + kp + "attention.head_count " +
            std::to_string(s.heads);
    return false;
  }
  if (has("attention.head_count_kv")) {
    int64_t kv;
    if (!need("attention.head_count_kv", kv))
      return false;
    if (kv != s.heads) {
      error = path + ": " + kp + "attention.head_count_kv " +
              std::to_string(kv) +
              " differs from the head count; grouped "
              "queries are not supported in encoders";
      return false;
    }
  }
  if (nomic && has("rope.dimension_count")) {
    int64_t rot;
    if (!need("rope.dimension_count", rot))
      return false;
    if (rot != s.dModel / s.heads) {
      error = path + ": " + kp + "rope.dimension_count " + std::to_string(rot) +
              " is not the head size " + std::to_string(s.dModel / s.heads) +
              " (partial rotation is not supported in encoders)";
      return false;
    }
  }
  if (has("attention.causal")) {
    bool causal = false;
    if (!f.getBool(kp + "attention.causal", causal, error))
      return false;
    if (causal) {
      error = path + ": " + kp + "attention.causal is true; tfc imports " +
              arch + " as a bidirectional encoder";
      return false;
    }
  }
  // llama.cpp's pooling_type: 0 none, 1 mean, 2 cls (3 last, 4 rank).
  int64_t pooling = 0;
  if (has("pooling_type") && !f.getInt(kp + "pooling_type", pooling, error))
    return false;
  if (pooling < 0 || pooling > 2) {
    error = path + ": " + kp + "pooling_type " + std::to_string(pooling) +
            " is not supported (supported: 0 none, 1 mean, 2 cls)";
    return false;
  }
  if (pooling) {
    s.pool.present = true;
    s.pool.mode = pooling == 1 ? "mean" : "cls";
    s.pool.normalize = true; // as llama-server's embeddings
  }
  const tfc::rt::TensorView *emb = f.findTensor("token_embd.weight");
  if (!emb || emb->shape.size() != 2) {
    error = path + ": tensor 'token_embd.weight' is missing or not a matrix";
    return false;
  }
  s.vocab = emb->shape[0];
  if (const tfc::rt::TensorView *t = f.findTensor("token_types.weight")) {
    s.tokenType = "token_types";
    s.types = t->shape.empty() ? 0 : t->shape[0];
  }
  // llama.cpp: nomic-bert's MLP is SwiGLU, bert's GELU (ggml_gelu, the
  // tanh form) on ffn_up.
  s.activation = nomic ? "silu({x})" : "gelu({x}, approximate = \"tanh\")";
  s.gated = nomic;
  bool fused = f.findTensor("blk.0.attn_qkv.weight") != nullptr;
  s.biases = f.findTensor(fused ? "blk.0.attn_qkv.bias"
                                : "blk.0.attn_q.bias") != nullptr;
  if (!nomic) {
    s.position = "position_embd";
    if (const tfc::rt::TensorView *t = f.findTensor("position_embd.weight"))
      if (t->shape.size() == 2 && t->shape[0] < s.maxPositions)
        s.maxPositions = t->shape[0];
  }
  std::string name;
  if (f.find("general.name"))
    f.getString("general.name", name, error);
  s.name = identifier(name.empty() ? baseName(path) : name);
  s.header =
      "# GGUF " + arch + " encoder, imported by tfc-import from\n#   " + path +
      "\n# Hyper-parameters from the " + kp +
      "* metadata: embedding_length=" + std::to_string(s.dModel) +
      " block_count=" + std::to_string(s.layers) +
      "\n#   head_count=" + std::to_string(s.heads) +
      " feed_forward_length=" + std::to_string(s.dFF) +
      " context_length=" + std::to_string(s.maxPositions) +
      (nomic ? "\n#   rope.freq_base=" + fmtFloat(s.ropeBase) : "\n#  ") +
      " layer_norm_epsilon=" + fmtFloat(s.eps) +
      " pooling_type=" + std::to_string(pooling) +
      (nomic ? "\n# Post-norm layers, rotary positions, SwiGLU"
             : "\n# Post-norm layers, learned positions, GELU") +
      "; tensor names are GGUF's." +
      (s.pool.present ? "\n# Entry encode: " + s.pool.mode +
                            " pooling, L2-normalised (llama.cpp's "
                            "embeddings).\n"
                      : "\n");
  s.word = "token_embd";
  s.embedNorm = "token_embd_norm";
  std::string p = "blk.{l}";
  if (fused) {
    s.qkv = p + ".attn_qkv";
  } else {
    s.q = p + ".attn_q";
    s.k = p + ".attn_k";
    s.v = p + ".attn_v";
  }
  s.o = p + ".attn_output";
  s.attnNorm = p + ".attn_output_norm";
  s.gate = p + ".ffn_gate";
  s.up = p + ".ffn_up";
  s.down = p + ".ffn_down";
  s.outNorm = p + ".layer_output_norm";
  std::vector<Use> uses;
  writeEncoder(s, out.tfm, uses);
  out.family = "gguf:" + arch;
  out.weights = path;
  out.tokenizer = path;
  return checkUses(f, uses, "its " + kp + "* metadata", error);
}

bool importGguf(const std::string &path, ImportedModel &out,
                std::string &error) {
  std::unique_ptr<tfc::rt::GgufFile> f = tfc::rt::GgufFile::open(path, error);
  if (!f)
    return false;
  std::string arch;
  if (!f->getString("general.architecture", arch, error))
    return false;
  if (arch == "bert" || arch == "nomic-bert")
    return importGgufEncoder(*f, path, arch, out, error);
  std::string supported;
  for (const char *a : kGgufArchs)
    supported += std::string(supported.empty() ? "" : ", ") + a;
  supported += ", bert, nomic-bert";
  if (std::find(std::begin(kGgufArchs), std::end(kGgufArchs), arch) ==
      std::end(kGgufArchs)) {
    error = path + ": general.architecture '" + arch +
            "' is not supported (supported: " + supported + ")";
    return false;
  }
  bool gemma = arch.rfind("gemma", 0) == 0;
  // Metadata keys are prefixed by the architecture: "qwen2.block_count".
  std::string kp = arch + ".";
  DecoderSpec s;
  int64_t v;
  auto need = [&](const std::string &suffix, int64_t &dst) {
    std::string key = kp + suffix;
    if (!f->getInt(key, v, error))
      return false;
    if (v <= 0 || v > (int64_t(1) << 40)) {
      error = path + ": metadata '" + key + "' should be positive, found " +
              std::to_string(v);
      return false;
    }
    dst = v;
    return true;
  };
  auto has = [&](const std::string &suffix) {
    return f->find(kp + suffix) != nullptr;
  };
  if (!need("embedding_length", s.dModel) || !need("block_count", s.layers) ||
      !need("attention.head_count", s.heads) ||
      !need("feed_forward_length", s.dFF) || !need("context_length", s.ctx))
    return false;
  s.kvHeads = s.heads;
  if (has("attention.head_count_kv") &&
      !need("attention.head_count_kv", s.kvHeads))
    return false;
  s.headDim = s.dModel / s.heads;
  if (has("attention.key_length") && !need("attention.key_length", s.headDim))
    return false;
  if (has("attention.value_length")) {
    int64_t vd;
    if (!need("attention.value_length", vd))
      return false;
    if (vd != s.headDim) {
      error = path + ": " + kp + "attention.value_length " +
              std::to_string(vd) + " differs from the key length " +
              std::to_string(s.headDim) + ", which tfc does not support";
      return false;
    }
  }
  s.rotaryDim = s.headDim;
  if (has("rope.dimension_count") && !need("rope.dimension_count", s.rotaryDim))
    return false;
  if (!f->getFloat(kp + "attention.layer_norm_rms_epsilon", s.eps, error))
    return false;
  if (has("rope.freq_base") &&
      !f->getFloat(kp + "rope.freq_base", s.ropeBase, error))
    return false;
  if (!(s.eps > 0) || !(s.ropeBase > 0)) {
    error = path + ": " + kp + "attention.layer_norm_rms_epsilon and " + kp +
            "rope.freq_base must be positive";
    return false;
  }
  // llama.cpp runs Phi-3 without its sliding window (phi3.cpp: "Phi SWA is
  // currently disabled"), and so does transformers from a .gguf: the key is
  // ignored, as there (0 marks Phi-4).
  if (has("attention.sliding_window") && arch != "phi3") {
    if (!need("attention.sliding_window", s.window))
      return false;
  } else if (arch == "gemma2") {
    s.window = 4096; // llama.cpp's default for Gemma 2
  }
  if (s.window >= s.ctx)
    s.window = 0;
  if (arch == "gemma2" || arch == "gemma3") {
    // llama.cpp: every layer of Gemma 2 alternates (sliding first), Gemma 3
    // has one global layer in six; Gemma 3's sliding layers rotate with
    // base 10000 (rope.freq_base_swa when the file sets it).
    s.globalEvery = arch == "gemma2" ? 2 : 6;
    if (arch == "gemma3") {
      s.localRopeBase = 10000;
      if (has("rope.freq_base_swa") &&
          !f->getFloat(kp + "rope.freq_base_swa", s.localRopeBase, error))
        return false;
    }
  }
  if (arch == "gemma3" && has("final_logit_softcapping")) {
    // As llama.cpp: Gemma 3's logits are capped where the file sets it (0:
    // not); its scores never are (an attention cap key is ignored there).
    if (!f->getFloat(kp + "final_logit_softcapping", s.finalSoftcap, error))
      return false;
    if (s.finalSoftcap < 0 || !std::isfinite(s.finalSoftcap)) {
      error = path + ": " + kp +
              "final_logit_softcapping should be 0 or a positive number, "
              "found " +
              fmtFloat(s.finalSoftcap);
      return false;
    }
  }
  if (arch == "gemma2") {
    // Soft-capping of the scores and the logits: llama.cpp's defaults (50,
    // 30) where the file has no key, as Gemma 2 itself.
    s.attnSoftcap = 50;
    s.finalSoftcap = 30;
    for (auto [key, cap] : {std::pair<const char *, double *>{
                                "attn_logit_softcapping", &s.attnSoftcap},
                            {"final_logit_softcapping", &s.finalSoftcap}})
      if (has(key)) {
        if (!f->getFloat(kp + key, *cap, error))
          return false;
        if (!(*cap > 0) || !std::isfinite(*cap)) {
          error = path + ": " + kp + key +
                  " should be a positive number, "
                  "found " +
                  fmtFloat(*cap);
          return false;
        }
      }
    // The file has no query_pre_attn_scalar (llama.cpp's converter drops
    // it): llama.cpp scales by 1/sqrt(key_length), or by
    // 1/sqrt(embedding_length / head_count) for a file of 46 layers (Gemma 2
    // 27B, whose query_pre_attn_scalar is that), so tfc does the same, as
    // transformers does not (it keeps its default of 256).
    s.attnScalar = s.layers == 46 ? double(s.dModel / s.heads) : s.headDim;
  }
  if (const tfc::rt::GgufValue *st = f->find(kp + "rope.scaling.type")) {
    std::string type;
    if (!f->getString(kp + "rope.scaling.type", type, error))
      return false;
    if (type == "linear") {
      s.scaling.type = "linear";
      if (!f->getFloat(kp + "rope.scaling.factor", s.scaling.factor, error))
        return false;
    } else if (type != "none") {
      error = path + ": " + kp + "rope.scaling.type '" + type +
              "' is not supported (supported: none, linear)";
      return false;
    }
    (void)st;
  }
  const tfc::rt::TensorView *emb = f->findTensor("token_embd.weight");
  if (!emb || emb->shape.size() != 2) {
    error = path + ": tensor 'token_embd.weight' is missing or not a matrix";
    return false;
  }
  s.vocab = emb->shape[0];
  if (has("vocab_size") && !need("vocab_size", s.vocab))
    return false;
  // llama.cpp's conversion permutes the rows of Q and K of llama (and
  // mistral) models so that its RoPE rotates adjacent pairs: the same
  // rotation as rotate_half on the original rows, so the weights are used as
  // stored with "adjacent". The other families are stored as trained and
  // rotate halves (llama.cpp's NEOX rope type).
  s.ropeMode =
      arch == "llama" || arch == "mistral" ? "adjacent" : "rotate_half";
  std::string name;
  if (f->find("general.name"))
    f->getString("general.name", name, error);
  s.name = identifier(name.empty() ? baseName(path) : name);
  s.header = "# GGUF " + arch + " model, imported by tfc-import from\n#   " +
             path + "\n# Hyper-parameters from the " + kp +
             "* metadata: embedding_length=" + std::to_string(s.dModel) +
             " block_count=" + std::to_string(s.layers) +
             "\n#   head_count=" + std::to_string(s.heads) +
             " head_count_kv=" + std::to_string(s.kvHeads) +
             " feed_forward_length=" + std::to_string(s.dFF) +
             " context_length=" + std::to_string(s.ctx) +
             "\n#   rope.freq_base=" + fmtFloat(s.ropeBase) +
             " layer_norm_rms_epsilon=" + fmtFloat(s.eps) +
             " vocab=" + std::to_string(s.vocab) +
             (s.ropeMode == "adjacent"
                  ? "\n# GGUF's Q/K rows are permuted for adjacent-pair RoPE; "
                    "tensor names are GGUF's.\n"
                  : "\n# Tensor names are GGUF's.\n");
  s.embed = "token_embd.weight";
  s.finalNorm = "output_norm.weight";
  s.lmHead = f->findTensor("output.weight") ? "output.weight" : s.embed;
  std::string p = "blk.{l}";
  s.q = p + ".attn_q";
  s.k = p + ".attn_k";
  s.v = p + ".attn_v";
  s.o = p + ".attn_output";
  s.gate = p + ".ffn_gate";
  s.up = p + ".ffn_up";
  s.down = p + ".ffn_down";
  s.attnNorm = p + ".attn_norm";
  s.ffnNorm = p + ".ffn_norm";
  s.qkvBias = f->findTensor("blk.0.attn_q.bias") != nullptr;
  if (arch == "phi3") {
    // Fused QKV (or separate q, k, v) and ffn_up holding gate and up.
    if (f->findTensor("blk.0.attn_qkv.weight"))
      s.qkv = p + ".attn_qkv";
    s.gateUp = p + ".ffn_up";
    if (f->findTensor("rope_factors_long.weight")) {
      error = path + ": LongRoPE (tensor 'rope_factors_long.weight', the "
                     "128k-context Phi-3 models) is not supported yet";
      return false;
    }
  }
  if (f->findTensor("blk.0.attn_q_norm.weight")) {
    s.qNorm = p + ".attn_q_norm";
    s.kNorm = p + ".attn_k_norm";
  }
  if (gemma) {
    // llama.cpp's conversion stores Gemma's RMSNorm weights as 1 + w.
    s.embedScale = true;
    s.geluGate = true;
    if (arch != "gemma") {
      s.postAttnNorm = p + ".post_attention_norm";
      s.postFfnNorm = p + ".post_ffw_norm";
    }
  }
  // Matrices stay in the block format they are stored in: one declaration
  // when every layer has the same, else one per format (Q*_K_M files mix
  // them between layers).
  for (const std::string &t : s.matrices()) {
    std::vector<std::string> formats;
    for (int64_t l = 0; l < s.layers; ++l) {
      const tfc::rt::TensorView *v =
          f->findTensor(subst(t, "l", std::to_string(l)) + ".weight");
      formats.push_back(v ? quantStorage(v->dtype) : "");
    }
    bool uniform =
        std::all_of(formats.begin(), formats.end(),
                    [&](const std::string &x) { return x == formats.front(); });
    if (uniform && !formats.front().empty())
      s.storage[t + ".weight"] = formats.front();
    else if (!uniform)
      s.layerStorage[t + ".weight"] = formats;
  }
  for (const std::string &t : {s.embed, s.lmHead})
    if (const tfc::rt::TensorView *v = f->findTensor(t))
      if (std::string format = quantStorage(v->dtype); !format.empty())
        s.storage[t] = format;
  if (!checkDecoder(s, path, error))
    return false;
  std::vector<Use> uses;
  writeDecoder(s, out.tfm, uses);
  out.family = "gguf:" + arch;
  out.weights = path;
  out.tokenizer = path;
  return checkUses(*f, uses, "its " + kp + "* metadata", error);
}

} // namespace tfc::importer::detail
