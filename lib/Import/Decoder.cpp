//===- Decoder.cpp - LLaMA-style decoder descriptions ---------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The .tfm of a LLaMA-style decoder from a DecoderSpec, shared by the Hugging
// Face families and GGUF.
//
//===----------------------------------------------------------------------===//

#include "Decoder.h"
#include "Common.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace tfc::importer::detail {

static std::string ropeArgs(const DecoderSpec &s) {
  std::string a = "mode = \"" + s.ropeMode + "\", base = rope_base";
  if (s.rotaryDim && s.rotaryDim != s.headDim)
    a += ", rotary_dim = " + std::to_string(s.rotaryDim);
  if (s.scaling.type == "linear")
    a += ", scaling = \"linear\", factor = " + fmtFloat(s.scaling.factor);
  else if (s.scaling.type == "llama3")
    a += ", scaling = \"llama3\", factor = " + fmtFloat(s.scaling.factor) +
         ", low_freq_factor = " + fmtFloat(s.scaling.lowFreqFactor) +
         ", high_freq_factor = " + fmtFloat(s.scaling.highFreqFactor) +
         ", original_context = " + std::to_string(s.scaling.originalContext);
  return a;
}

void writeDecoder(const DecoderSpec &s, std::string &tfm,
                  std::vector<Use> &uses) {
  bool interleaved = s.window && s.globalEvery;
  std::ostringstream o;
  o << s.header << "\nmodel " << s.name << "\n\n"
    << "const vocab = " << s.vocab << "\n"
    << "const n_ctx = " << s.ctx << "\n"
    << "const d_model = " << s.dModel << "\n"
    << "const layers = " << s.layers << "\n"
    << "const heads = " << s.heads << "\n"
    << "const kv_heads = " << s.kvHeads << "\n"
    << "const d_head = " << s.headDim << "\n"
    << "const d_ff = " << s.dFF << "\n"
    << "const eps = " << fmtFloat(s.eps) << "\n"
    << "const rope_base = " << fmtFloat(s.ropeBase) << "\n";
  if (interleaved)
    o << "# Layers l with (l + 1) % global_every == 0 attend to every key, "
         "the others to\n# the last `window`"
      << (s.localRopeBase ? ", rotating with local_rope_base" : "")
      << ".\nconst window = " << s.window
      << "\nconst global_every = " << s.globalEvery << "\n"
      << (s.localRopeBase
              ? "const local_rope_base = " + fmtFloat(s.localRopeBase) + "\n"
              : std::string());
  if (s.attnSoftcap)
    o << "# Attention scores become attn_softcap * tanh(score / "
         "attn_softcap).\n"
      << "const attn_softcap = " << fmtFloat(s.attnSoftcap) << "\n";
  if (s.finalSoftcap)
    o << "# Logits become final_softcap * tanh(logit / final_softcap).\n"
      << "const final_softcap = " << fmtFloat(s.finalSoftcap) << "\n";
  o << "\ndim batch\ndim seq <= n_ctx\n\n";
  // rms_norm of a weight w: Hugging Face's Gemma scales by (1 + w).
  auto norm = [&](const std::string &x, const char *w) {
    return "rms_norm(" + x + ", " + (s.normPlusOne ? "1 + " : "") + w +
           ", eps = eps)";
  };
  int64_t qd = s.heads * s.headDim, kd = s.kvHeads * s.headDim;
  const Dim D{"d_model", s.dModel}, F{"d_ff", s.dFF}, Q{"heads * d_head", qd},
      K{"kv_heads * d_head", kd};
  WeightDecls decls(s.layers);
  auto w = [&](const char *var, const std::vector<Dim> &dims,
               const std::string &name) {
    std::string shape = decls.shape(dims, name);
    auto perLayer = s.layerStorage.find(name);
    if (perLayer != s.layerStorage.end()) {
      // One branch per format, naming its layers.
      std::vector<std::string> formats;
      for (const std::string &f : perLayer->second)
        if (std::find(formats.begin(), formats.end(), f) == formats.end())
          formats.push_back(f);
      for (size_t i = 0; i < formats.size(); ++i) {
        if (i + 1 < formats.size()) {
          std::string cond;
          for (size_t l = 0; l < perLayer->second.size(); ++l)
            if (perLayer->second[l] == formats[i])
              cond +=
                  (cond.empty() ? "l == " : " or l == ") + std::to_string(l);
          o << (i == 0 ? "  if " : " else if ") << cond << " {\n";
        } else {
          o << " else {\n";
        }
        o << "    weight " << var << ": " << formats[i] << shape << " = \""
          << name << "\"\n  }";
      }
      o << "\n";
      return;
    }
    auto format = s.storage.find(name);
    o << "  weight " << var << ": "
      << (format == s.storage.end() ? "" : format->second) << shape << " = \""
      << name << "\"\n";
  };
  o << "block attention_block(x: [batch, seq, d_model], l: int) {\n";
  bool fusedQkv = !s.qkv.empty();
  if (fusedQkv) {
    w("wqkv", {{"(heads + 2 * kv_heads) * d_head", qd + 2 * kd}, D},
      s.qkv + ".weight");
  } else {
    w("wq", {Q, D}, s.q + ".weight");
    w("wk", {K, D}, s.k + ".weight");
    w("wv", {K, D}, s.v + ".weight");
  }
  w("wo", {D, Q}, s.o + ".weight");
  std::string bq, bk, bv;
  if (s.qkvBias) {
    w("bq", {Q}, s.q + ".bias");
    w("bk", {K}, s.k + ".bias");
    w("bv", {K}, s.v + ".bias");
    bq = ", bq";
    bk = ", bk";
    bv = ", bv";
  }
  std::string qh = "split_heads(linear(x, wq" + bq + "), heads)",
              kh = "split_heads(linear(x, wk" + bk + "), kv_heads)",
              vh = "split_heads(linear(x, wv" + bv + "), kv_heads)";
  if (fusedQkv) {
    // Rows q, k, v of the fused projection's output.
    o << "  qkv = linear(x, wqkv)\n";
    qh = "split_heads(slice(qkv, 0, " + std::to_string(qd) + "), heads)";
    kh = "split_heads(slice(qkv, " + std::to_string(qd) + ", " +
         std::to_string(kd) + "), kv_heads)";
    vh = "split_heads(slice(qkv, " + std::to_string(qd + kd) + ", " +
         std::to_string(kd) + "), kv_heads)";
  }
  if (!s.qNorm.empty()) {
    w("q_norm", {{"d_head", s.headDim}}, s.qNorm + ".weight");
    w("k_norm", {{"d_head", s.headDim}}, s.kNorm + ".weight");
    qh = norm(qh, "q_norm");
    kh = norm(kh, "k_norm");
  }
  std::string scale =
      s.attnScalar ? ", scale = " + fmtFloat(1 / std::sqrt(s.attnScalar)) : "";
  if (s.attnSoftcap)
    scale += ", softcap = attn_softcap";
  auto attend = [&](const std::string &indent, const std::string &args,
                    const std::string &window) {
    o << indent << "q = rope(" << qh << ", " << args << ")\n"
      << indent << "k = rope(" << kh << ", " << args << ")\n"
      << indent << "a = attention(q, k, v, causal = true" << window << scale
      << ")\n";
  };
  o << "  v = " << vh << "\n";
  if (interleaved) {
    DecoderSpec localSpec = s;
    localSpec.scaling = RopeScaling(); // Gemma 3 scales only global layers
    std::string local = ropeArgs(localSpec);
    if (s.localRopeBase)
      local.replace(local.find("base = rope_base"), 16,
                    "base = local_rope_base");
    o << "  if (l + 1) % global_every == 0 {\n";
    attend("    ", ropeArgs(s), "");
    o << "  } else {\n";
    attend("    ", local, ", window = window");
    o << "  }\n";
  } else {
    attend("  ", ropeArgs(s),
           s.window ? ", window = " + std::to_string(s.window) : "");
  }
  o << "  return linear(merge_heads(a), wo)\n}\n\n";
  if (s.geluGate)
    o << "# GeGLU: down(gelu_tanh(gate(x)) * up(x)).\n";
  else
    o << "# SwiGLU: down(silu(gate(x)) * up(x)).\n";
  o << "block mlp(x: [batch, seq, d_model], l: int) {\n";
  std::string gateOut = "linear(x, w_gate)", upOut = "linear(x, w_up)";
  if (!s.gateUp.empty()) {
    w("w_gate_up", {{"2 * d_ff", 2 * s.dFF}, D}, s.gateUp + ".weight");
    o << "  gate_up = linear(x, w_gate_up)   # gate rows first\n";
    gateOut = "slice(gate_up, 0, d_ff)";
    upOut = "slice(gate_up, d_ff, d_ff)";
  } else {
    w("w_gate", {F, D}, s.gate + ".weight");
    w("w_up", {F, D}, s.up + ".weight");
  }
  w("w_down", {D, F}, s.down + ".weight");
  o << "  return linear("
    << (s.geluGate ? "gelu(" + gateOut + ", approximate = \"tanh\")"
                   : "silu(" + gateOut + ")")
    << " * " << upOut << ", w_down)\n"
    << "}\n\n";
  o << "block layer(x: [batch, seq, d_model], l: int) {\n";
  w("norm1", {D}, s.attnNorm + ".weight");
  w("norm2", {D}, s.ffnNorm + ".weight");
  if (!s.postAttnNorm.empty()) {
    w("post_norm1", {D}, s.postAttnNorm + ".weight");
    w("post_norm2", {D}, s.postFfnNorm + ".weight");
    o << "  x = x + "
      << norm("attention_block(" + norm("x", "norm1") + ", l)", "post_norm1")
      << "\n"
      << "  x = x + "
      << norm("mlp(" + norm("x", "norm2") + ", l)", "post_norm2") << "\n";
  } else {
    o << "  x = x + attention_block(" << norm("x", "norm1") << ", l)\n"
      << "  x = x + mlp(" << norm("x", "norm2") << ", l)\n";
  }
  o << "  return x\n}\n\n";
  o << "# Next-token logits for every position.\n"
    << "entry forward(input_ids: i64[batch, seq]) {\n";
  w("embed_tokens", {{"vocab", s.vocab}, D}, s.embed);
  w("final_norm", {D}, s.finalNorm);
  bool tied = s.lmHead == s.embed;
  if (!tied)
    w("lm_head", {{"vocab", s.vocab}, D}, s.lmHead);
  o << "\n  x = embed(embed_tokens, input_ids)"
    << (s.embedScale ? " * " + fmtFloat(std::sqrt(double(s.dModel))) +
                           "   # times sqrt(d_model)"
                     : "")
    << "\n"
    << "  for l in 0..layers {\n    x = layer(x, l)\n  }\n"
    << "  logits = linear(" << norm("x", "final_norm") << ", "
    << (tied ? "embed_tokens)   # the LM head is tied to the embedding"
             : "lm_head)")
    << "\n"
    << (s.finalSoftcap
            ? "  logits = tanh(logits / final_softcap) * final_softcap\n"
            : "")
    << "  return logits\n}\n";
  tfm = o.str();
  // Each weight was declared once, above: those are what must match.
  uses = decls.uses();
}

/// The language's name of a block-quantised file dtype that tfc runs as
/// stored (on its int8 kernels: every block format tfc reads), or "" for
/// float types.
std::string quantStorage(tfc::rt::DType d) {
  switch (d) {
  case tfc::rt::DType::Q8_0:
  case tfc::rt::DType::Q4_0:
  case tfc::rt::DType::Q4_1:
  case tfc::rt::DType::Q5_0:
  case tfc::rt::DType::Q5_1:
  case tfc::rt::DType::Q2_K:
  case tfc::rt::DType::Q3_K:
  case tfc::rt::DType::Q4_K:
  case tfc::rt::DType::Q5_K:
  case tfc::rt::DType::Q6_K:
    return tfc::rt::traitsOf(d).name;
  default:
    return "";
  }
}

bool checkDecoder(DecoderSpec &s, const std::string &file, std::string &error) {
  if (!s.qkv.empty() && s.qkvBias) {
    error = file + ": q/k/v biases with a fused QKV projection are not "
                   "supported";
    return false;
  }
  if (s.heads % s.kvHeads != 0) {
    error = file + ": the number of attention heads (" +
            std::to_string(s.heads) +
            ") is not a multiple of the key/value "
            "heads (" +
            std::to_string(s.kvHeads) + ")";
    return false;
  }
  if (s.rotaryDim % 2 != 0 || s.rotaryDim > s.headDim) {
    error = file + ": the rotary dimension " + std::to_string(s.rotaryDim) +
            " must be even and at most the head size " +
            std::to_string(s.headDim);
    return false;
  }
  return true;
}

/// RoPE's base and scaling as transformers defines them (none, linear,
/// llama3): `rope_theta` + `rope_scaling` (transformers 4), or
/// `rope_parameters` holding both (transformers 5).
bool readRope(const Json &config, const std::string &file, double &theta,
              RopeScaling &out, std::string &error) {
  const char *key =
      config.contains("rope_parameters") && !config["rope_parameters"].is_null()
          ? "rope_parameters"
          : "rope_scaling";
  ConfigReader top(file, config);
  theta = top.positiveNumberOr("rope_theta", 10000.0);
  if (!top.ok()) {
    error = top.message();
    return false;
  }
  if (!config.contains(key) || config[key].is_null())
    return true;
  const Json &rs = config[key];
  if (!rs.is_object()) {
    error = file + ": key '" + key + "' should be an object or null, found " +
            jsonKind(rs);
    return false;
  }
  ConfigReader r(file + " " + key, rs);
  theta = r.positiveNumberOr("rope_theta", theta);
  out.type = r.has("rope_type") ? r.string("rope_type") : r.string("type");
  if (out.type == "default") {
    out.type.clear();
    return r.ok() || (error = r.message(), false);
  }
  if (out.type == "linear") {
    out.factor = r.number("factor");
  } else if (out.type == "llama3") {
    out.factor = r.number("factor");
    out.lowFreqFactor = r.number("low_freq_factor");
    out.highFreqFactor = r.number("high_freq_factor");
    out.originalContext = r.positive("original_max_position_embeddings");
    if (r.ok() && !(out.highFreqFactor > out.lowFreqFactor))
      r.fail("high_freq_factor must be larger than low_freq_factor");
  } else if (r.ok()) {
    error = file + ": " + key + " type '" + out.type +
            "' is not supported (supported: none, \"linear\", \"llama3\")";
    return false;
  }
  if (r.ok() && !(out.factor > 0 && std::isfinite(out.factor)))
    r.fail("factor must be a positive number");
  if (!r.ok()) {
    error = r.message();
    return false;
  }
  return true;
}

/// The config.json keys every transformers decoder shares; `head_dim`
/// defaults to `defaultHeadDim`, or hidden_size / heads when it is 0.
void readDecoderSizes(ConfigReader &r, DecoderSpec &s, int64_t defaultHeadDim) {
  s.vocab = r.positive("vocab_size");
  s.dModel = r.positive("hidden_size");
  s.layers = r.positive("num_hidden_layers");
  s.heads = r.positive("num_attention_heads");
  s.kvHeads = r.positiveOr("num_key_value_heads", s.heads);
  s.dFF = r.positive("intermediate_size");
  s.ctx = r.positive("max_position_embeddings");
  s.eps = r.positiveNumberOr("rms_norm_eps", 1e-6);
  s.headDim = r.positiveOr(
      "head_dim", defaultHeadDim ? defaultHeadDim
                                 : s.dModel / std::max<int64_t>(s.heads, 1));
}

} // namespace tfc::importer::detail
