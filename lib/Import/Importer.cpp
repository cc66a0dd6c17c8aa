//===- Importer.cpp - Model descriptions from checkpoints ------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Each family reads its hyper-parameters (config.json through ConfigReader,
// GGUF metadata through GgufFile's typed accessors), fills a description of
// the architecture, and one writer per architecture (encoder, GPT-2,
// LLaMA-style decoder) prints the .tfm and the list of tensors it uses with
// their shapes; every one is then checked against the checkpoint's tensors.
//
//===----------------------------------------------------------------------===//

#include "tfc/Import/Importer.h"

#include "tfc/Formats/Gguf.h"
#include "tfc/Formats/JsonDocument.h"
#include "tfc/Formats/Weights.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <sys/stat.h>
#include <vector>

using tfc::importer::ImportedModel;
using Json = nlohmann::json;

namespace {

const char *kSupported =
    "Hugging Face directories of model_type bert (BertModel, with "
    "sentence-transformers pooling), mpnet (MPNetModel, the same), gpt2 (GPT2LMHeadModel), llama "
    "(LlamaForCausalLM), mistral (MistralForCausalLM), qwen2 "
    "(Qwen2ForCausalLM), qwen3 (Qwen3ForCausalLM), gemma3_text "
    "(Gemma3ForCausalLM), phi3 (Phi3ForCausalLM), bloom (BloomForCausalLM), marian (MarianMTModel), "
    "t5 (T5ForConditionalGeneration) and vit (ViTModel, "
    "ViTForImageClassification); .gguf files of general.architecture "
    "llama, mistral, qwen2, qwen3, gemma3, phi3, bert and nomic-bert";

bool isDirectory(const std::string &p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
bool isRegularFile(const std::string &p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool readText(const std::string &path, std::string &out, std::string &error) {
  if (!isRegularFile(path)) {
    error = path + ": " +
            (isDirectory(path) ? std::string("is a directory")
                               : std::string("cannot open: ") +
                                     std::strerror(ENOENT));
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = path + ": cannot open: " + std::strerror(errno);
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

bool parseJsonFile(const std::string &path, Json &out, std::string &error) {
  std::string text;
  if (!readText(path, text, error))
    return false;
  if (!::tfc::rt::parseJsonDocument(text, path, out, error))
    return false;
  if (!out.is_object()) {
    error = path + ": expected a JSON object at the top level";
    return false;
  }
  return true;
}

std::string jsonKind(const Json &v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a bool";
  if (v.is_number_integer() || v.is_number_unsigned()) return "an integer";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string (" + v.dump() + ")";
  if (v.is_array()) return "an array";
  return "an object";
}

/// Typed reads of config.json keys; the first problem is kept in `error`
/// (file, key, expected, found) and later reads return defaults.
class ConfigReader {
public:
  ConfigReader(std::string file, const Json &json)
      : file(std::move(file)), json(json) {}

  bool ok() const { return error.empty(); }
  const std::string &message() const { return error; }
  bool has(const std::string &key) const {
    return json.contains(key) && !json.at(key).is_null();
  }
  void fail(const std::string &m) {
    if (error.empty())
      error = file + ": " + m;
  }

  int64_t positive(const std::string &key) {
    const Json *v = find(key, "a positive integer");
    if (!v)
      return 1;
    if (!(v->is_number_integer() || v->is_number_unsigned()) ||
        v->get<int64_t>() <= 0 || v->get<int64_t>() > (int64_t(1) << 40)) {
      fail("key '" + key + "' should be a positive integer, found " +
           (v->is_number_integer() ? v->dump() : jsonKind(*v)));
      return 1;
    }
    return v->get<int64_t>();
  }
  int64_t positiveOr(const std::string &key, int64_t dflt) {
    return has(key) ? positive(key) : dflt;
  }
  double number(const std::string &key) {
    const Json *v = find(key, "a number");
    if (!v)
      return 0;
    if (!v->is_number()) {
      fail("key '" + key + "' should be a number, found " + jsonKind(*v));
      return 0;
    }
    return v->get<double>();
  }
  double positiveNumberOr(const std::string &key, double dflt) {
    if (!has(key))
      return dflt;
    double x = number(key);
    if (ok() && !(x > 0 && std::isfinite(x)))
      fail("key '" + key + "' should be a positive number, found " +
           json.at(key).dump());
    return x;
  }
  std::string string(const std::string &key) {
    const Json *v = find(key, "a string");
    if (!v)
      return "";
    if (!v->is_string()) {
      fail("key '" + key + "' should be a string, found " + jsonKind(*v));
      return "";
    }
    return v->get<std::string>();
  }
  std::string stringOr(const std::string &key, const std::string &dflt) {
    return has(key) ? string(key) : dflt;
  }
  bool boolOr(const std::string &key, bool dflt) {
    if (!has(key))
      return dflt;
    const Json &v = json.at(key);
    if (!v.is_boolean()) {
      fail("key '" + key + "' should be true or false, found " + jsonKind(v));
      return dflt;
    }
    return v.get<bool>();
  }

private:
  const Json *find(const std::string &key, const char *expected) {
    if (!json.contains(key)) {
      fail("key '" + key + "' is missing (expected " + expected + ")");
      return nullptr;
    }
    return &json.at(key);
  }

  std::string file;
  const Json &json;
  std::string error;
};

/// A tensor the description uses, with the shape its hyper-parameters imply.
struct Use {
  std::string name;
  std::vector<int64_t> shape;
};

std::string shapeText(const std::vector<int64_t> &s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i)
    out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

/// "{p}" in a name template replaced by the layer's prefix.
std::string subst(std::string t, const std::string &key,
                  const std::string &value) {
  std::string pat = "{" + key + "}";
  for (size_t at; (at = t.find(pat)) != std::string::npos;)
    t.replace(at, pat.size(), value);
  return t;
}

std::string fmtFloat(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos)
    s += ".0";
  return s;
}

/// A model name the language accepts: letters, digits and '_'.
std::string identifier(const std::string &raw) {
  std::string out;
  for (char c : raw)
    out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0])))
    out = "m_" + out;
  return out;
}

std::string baseName(std::string p) {
  while (p.size() > 1 && p.back() == '/')
    p.pop_back();
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

/// The weights a family's .tfm declares, each declared once: the call
/// writes its `weight` line and records the checkpoint tensor that must
/// match, so the description and the checks cannot disagree. A tensor name
/// with "{l}" belongs to a layer and is checked for every layer, after the
/// model's own weights (in declaration order).
class WeightDecls {
public:
  explicit WeightDecls(int64_t layers) : layers(layers) {}

  /// `  weight VAR: [DIM, ...] = "TENSOR"` and a newline; each dim is given
  /// as its .tfm expression and its value.
  std::string
  operator()(const std::string &var,
             std::initializer_list<std::pair<const char *, int64_t>> dims,
             const std::string &tensor) {
    std::string line = "  weight " + var + ": [";
    std::vector<int64_t> shape;
    for (const auto &[text, value] : dims) {
      line += (shape.empty() ? "" : ", ") + std::string(text);
      shape.push_back(value);
    }
    line += "] = \"" + tensor + "\"\n";
    (tensor.find("{l}") == std::string::npos ? model : perLayer)
        .push_back({tensor, std::move(shape)});
    return line;
  }

  /// Every tensor to check, with each layer's names filled in.
  std::vector<Use> uses() const {
    std::vector<Use> all = model;
    for (int64_t l = 0; l < layers; ++l)
      for (const Use &u : perLayer)
        all.push_back({subst(u.name, "l", std::to_string(l)), u.shape});
    return all;
  }

private:
  int64_t layers;
  std::vector<Use> model, perLayer;
};

bool checkUses(const tfc::rt::WeightSource &source, const std::vector<Use> &uses,
               const std::string &configName, std::string &error) {
  std::vector<std::string> problems;
  for (const Use &u : uses) {
    const tfc::rt::TensorView *v = source.findTensor(u.name);
    if (!v)
      problems.push_back("tensor '" + u.name + "' (" + shapeText(u.shape) +
                         ") is missing");
    else if (v->shape != u.shape)
      problems.push_back("tensor '" + u.name + "' has shape " +
                         shapeText(v->shape) + ", " + configName +
                         " implies " + shapeText(u.shape));
  }
  if (problems.empty())
    return true;
  error = source.describe() + " does not match " + configName + " (" +
          std::to_string(problems.size()) +
          (problems.size() == 1 ? " problem" : " problems") + "):";
  for (size_t i = 0; i < problems.size() && i < 10; ++i)
    error += "\n  " + problems[i];
  if (problems.size() > 10)
    error += "\n  ... and " + std::to_string(problems.size() - 10) + " more";
  return false;
}

//===----------------------------------------------------------------------===//
// LLaMA-style decoders: llama, mistral, qwen2 and GGUF llama
//===----------------------------------------------------------------------===//

struct RopeScaling {
  std::string type; // "", "linear", "llama3"
  double factor = 1, lowFreqFactor = 1, highFreqFactor = 4;
  int64_t originalContext = 8192;
};

struct DecoderSpec {
  std::string header, name;
  int64_t vocab = 0, ctx = 0, dModel = 0, layers = 0, heads = 0, kvHeads = 0,
          headDim = 0, dFF = 0, rotaryDim = 0;
  double eps = 1e-5, ropeBase = 10000;
  std::string ropeMode = "rotate_half";
  RopeScaling scaling;
  bool qkvBias = false;
  /// Sliding-window attention (Mistral): each query sees the last `window`
  /// keys; 0: full causal attention.
  int64_t window = 0;
  /// Gemma 2/3's interleaving: with a window, layer l is a global
  /// (full-attention) layer when (l + 1) % globalEvery == 0, the others
  /// slide; 0: every layer slides. Sliding layers rotate with
  /// `localRopeBase` when it is set.
  int64_t globalEvery = 0;
  double localRopeBase = 0;
  /// Per-head RMSNorm of q and k before RoPE (Qwen3, Gemma 3): the tensor
  /// names without .weight, or "".
  std::string qNorm, kNorm;
  /// Gemma: the embedding times sqrt(d_model), GELU (tanh) gate, RMSNorm
  /// scaled by (1 + w) (Hugging Face's weights; GGUF stores 1 + w), norms
  /// after attention and the MLP as well as before (Gemma 2/3: names without
  /// .weight, or ""), the attention scale 1/sqrt(query_pre_attn_scalar)
  /// (0: 1/sqrt(d_head)).
  bool embedScale = false, geluGate = false, normPlusOne = false;
  std::string postAttnNorm, postFfnNorm;
  double attnScalar = 0;
  // Tensor names; "{l}" is the layer index.
  std::string embed, finalNorm, lmHead;
  // The block-quantised storage format ("q4_1") of a tensor name (with its
  // "{l}"), when every layer's tensor is stored in it: declared so, the
  // weight is bound as stored and multiplied by the int8 kernels.
  std::map<std::string, std::string> storage;
  /// The same for per-layer tensors whose format differs between layers
  /// (a Q4_K_M file's ffn_down: Q6_K in some layers, Q4_K in the others):
  /// one format ("" for floats) per layer, declared per layer by an `if`.
  std::map<std::string, std::vector<std::string>> layerStorage;
  std::string q, k, v, o, gate, up, down, attnNorm, ffnNorm; // without .weight
  /// Phi-3's fused projections (without .weight), or "": `qkv` is
  /// [(heads + 2 kv_heads) d_head, d_model] (q, k, v rows in that order; q,
  /// k, v unused), `gateUp` is [2 d_ff, d_model] (gate rows first; gate and
  /// up unused).
  std::string qkv, gateUp;
  /// The matrices as named in the checkpoint: the fused ones where there
  /// are, else the separate ones.
  std::vector<std::string> matrices() const {
    std::vector<std::string> m;
    if (qkv.empty())
      m.insert(m.end(), {q, k, v});
    else
      m.push_back(qkv);
    m.push_back(o);
    if (gateUp.empty())
      m.insert(m.end(), {gate, up});
    else
      m.push_back(gateUp);
    m.push_back(down);
    return m;
  }
};

std::string ropeArgs(const DecoderSpec &s) {
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
  o << "\ndim batch\ndim seq <= n_ctx\n\n";
  // rms_norm of a weight w: Hugging Face's Gemma scales by (1 + w).
  auto norm = [&](const std::string &x, const char *w) {
    return "rms_norm(" + x + ", " + (s.normPlusOne ? "1 + " : "") + w +
           ", eps = eps)";
  };
  auto w = [&](const char *var, const std::string &shape,
               const std::string &name) {
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
              cond += (cond.empty() ? "l == " : " or l == ") + std::to_string(l);
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
      << (format == s.storage.end() ? "" : format->second) << shape
      << " = \"" << name << "\"\n";
  };
  o << "block attention_block(x: [batch, seq, d_model], l: int) {\n";
  bool fusedQkv = !s.qkv.empty();
  if (fusedQkv) {
    w("wqkv", "[(heads + 2 * kv_heads) * d_head, d_model]", s.qkv + ".weight");
  } else {
    w("wq", "[heads * d_head, d_model]", s.q + ".weight");
    w("wk", "[kv_heads * d_head, d_model]", s.k + ".weight");
    w("wv", "[kv_heads * d_head, d_model]", s.v + ".weight");
  }
  w("wo", "[d_model, heads * d_head]", s.o + ".weight");
  std::string bq, bk, bv;
  if (s.qkvBias) {
    w("bq", "[heads * d_head]", s.q + ".bias");
    w("bk", "[kv_heads * d_head]", s.k + ".bias");
    w("bv", "[kv_heads * d_head]", s.v + ".bias");
    bq = ", bq";
    bk = ", bk";
    bv = ", bv";
  }
  std::string qh = "split_heads(linear(x, wq" + bq + "), heads)",
              kh = "split_heads(linear(x, wk" + bk + "), kv_heads)",
              vh = "split_heads(linear(x, wv" + bv + "), kv_heads)";
  if (fusedQkv) {
    // Rows q, k, v of the fused projection's output.
    int64_t qd = s.heads * s.headDim, kd = s.kvHeads * s.headDim;
    o << "  qkv = linear(x, wqkv)\n";
    qh = "split_heads(slice(qkv, 0, " + std::to_string(qd) + "), heads)";
    kh = "split_heads(slice(qkv, " + std::to_string(qd) + ", " +
         std::to_string(kd) + "), kv_heads)";
    vh = "split_heads(slice(qkv, " + std::to_string(qd + kd) + ", " +
         std::to_string(kd) + "), kv_heads)";
  }
  if (!s.qNorm.empty()) {
    w("q_norm", "[d_head]", s.qNorm + ".weight");
    w("k_norm", "[d_head]", s.kNorm + ".weight");
    qh = norm(qh, "q_norm");
    kh = norm(kh, "k_norm");
  }
  std::string scale =
      s.attnScalar ? ", scale = " + fmtFloat(1 / std::sqrt(s.attnScalar)) : "";
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
    w("w_gate_up", "[2 * d_ff, d_model]", s.gateUp + ".weight");
    o << "  gate_up = linear(x, w_gate_up)   # gate rows first\n";
    gateOut = "slice(gate_up, 0, d_ff)";
    upOut = "slice(gate_up, d_ff, d_ff)";
  } else {
    w("w_gate", "[d_ff, d_model]", s.gate + ".weight");
    w("w_up", "[d_ff, d_model]", s.up + ".weight");
  }
  w("w_down", "[d_model, d_ff]", s.down + ".weight");
  o << "  return linear("
    << (s.geluGate ? "gelu(" + gateOut + ", approximate = \"tanh\")"
                   : "silu(" + gateOut + ")")
    << " * " << upOut << ", w_down)\n"
    << "}\n\n";
  o << "block layer(x: [batch, seq, d_model], l: int) {\n";
  w("norm1", "[d_model]", s.attnNorm + ".weight");
  w("norm2", "[d_model]", s.ffnNorm + ".weight");
  if (!s.postAttnNorm.empty()) {
    w("post_norm1", "[d_model]", s.postAttnNorm + ".weight");
    w("post_norm2", "[d_model]", s.postFfnNorm + ".weight");
    o << "  x = x + " << norm("attention_block(" + norm("x", "norm1") + ", l)",
                              "post_norm1")
      << "\n"
      << "  x = x + " << norm("mlp(" + norm("x", "norm2") + ", l)", "post_norm2")
      << "\n";
  } else {
    o << "  x = x + attention_block(" << norm("x", "norm1") << ", l)\n"
      << "  x = x + mlp(" << norm("x", "norm2") << ", l)\n";
  }
  o << "  return x\n}\n\n";
  o << "# Next-token logits for every position.\n"
    << "entry forward(input_ids: i64[batch, seq]) {\n";
  w("embed_tokens", "[vocab, d_model]", s.embed);
  w("final_norm", "[d_model]", s.finalNorm);
  bool tied = s.lmHead == s.embed;
  if (!tied)
    w("lm_head", "[vocab, d_model]", s.lmHead);
  o << "\n  x = embed(embed_tokens, input_ids)"
    << (s.embedScale ? " * " + fmtFloat(std::sqrt(double(s.dModel))) +
                           "   # times sqrt(d_model)"
                     : "")
    << "\n"
    << "  for l in 0..layers {\n    x = layer(x, l)\n  }\n"
    << "  logits = linear(" << norm("x", "final_norm") << ", "
    << (tied ? "embed_tokens)   # the LM head is tied to the embedding"
             : "lm_head)")
    << "\n  return logits\n}\n";
  tfm = o.str();

  int64_t qd = s.heads * s.headDim, kd = s.kvHeads * s.headDim;
  uses.push_back({s.embed, {s.vocab, s.dModel}});
  uses.push_back({s.finalNorm, {s.dModel}});
  if (!tied)
    uses.push_back({s.lmHead, {s.vocab, s.dModel}});
  for (int64_t l = 0; l < s.layers; ++l) {
    auto n = [&](const std::string &t, const char *suffix) {
      return subst(t, "l", std::to_string(l)) + suffix;
    };
    if (s.qkv.empty()) {
      uses.push_back({n(s.q, ".weight"), {qd, s.dModel}});
      uses.push_back({n(s.k, ".weight"), {kd, s.dModel}});
      uses.push_back({n(s.v, ".weight"), {kd, s.dModel}});
    } else {
      uses.push_back({n(s.qkv, ".weight"), {qd + 2 * kd, s.dModel}});
    }
    uses.push_back({n(s.o, ".weight"), {s.dModel, qd}});
    if (s.qkvBias) {
      uses.push_back({n(s.q, ".bias"), {qd}});
      uses.push_back({n(s.k, ".bias"), {kd}});
      uses.push_back({n(s.v, ".bias"), {kd}});
    }
    if (s.gateUp.empty()) {
      uses.push_back({n(s.gate, ".weight"), {s.dFF, s.dModel}});
      uses.push_back({n(s.up, ".weight"), {s.dFF, s.dModel}});
    } else {
      uses.push_back({n(s.gateUp, ".weight"), {2 * s.dFF, s.dModel}});
    }
    uses.push_back({n(s.down, ".weight"), {s.dModel, s.dFF}});
    uses.push_back({n(s.attnNorm, ".weight"), {s.dModel}});
    uses.push_back({n(s.ffnNorm, ".weight"), {s.dModel}});
    if (!s.qNorm.empty()) {
      uses.push_back({n(s.qNorm, ".weight"), {s.headDim}});
      uses.push_back({n(s.kNorm, ".weight"), {s.headDim}});
    }
    if (!s.postAttnNorm.empty()) {
      uses.push_back({n(s.postAttnNorm, ".weight"), {s.dModel}});
      uses.push_back({n(s.postFfnNorm, ".weight"), {s.dModel}});
    }
  }
}

/// The language's name of a block-quantised file dtype that tfc runs as
/// stored (on its int8 kernels), or "": the others (Q2_K, Q3_K) are
/// declared f32 and dequantised when bound.
std::string quantStorage(tfc::rt::DType d) {
  switch (d) {
  case tfc::rt::DType::Q8_0:
  case tfc::rt::DType::Q4_0:
  case tfc::rt::DType::Q4_1:
  case tfc::rt::DType::Q5_0:
  case tfc::rt::DType::Q5_1:
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
            std::to_string(s.heads) + ") is not a multiple of the key/value "
            "heads (" + std::to_string(s.kvHeads) + ")";
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
  const char *key = config.contains("rope_parameters") &&
                            !config["rope_parameters"].is_null()
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

//===----------------------------------------------------------------------===//
// Hugging Face directories
//===----------------------------------------------------------------------===//

struct HfCheckpoint {
  std::string dir, configPath;
  Json config;
  std::unique_ptr<tfc::rt::WeightSource> weights;
  std::string header;

  bool hasTensor(const std::string &n) const {
    return weights->findTensor(n) != nullptr;
  }
};

std::string hfHeader(const HfCheckpoint &c, const std::string &what,
                     const std::vector<std::string> &keys) {
  std::string h = "# " + what + ", imported by tfc-import from\n#   " + c.dir +
                  "\n# Hyper-parameters from config.json";
  if (!keys.empty()) {
    h += ":";
    size_t col = 80;
    for (const std::string &k : keys) {
      if (!c.config.contains(k))
        continue;
      std::string item = " " + k + "=" + c.config[k].dump();
      if (col + item.size() > 78) {
        h += "\n#  ";
        col = 3;
      }
      h += item;
      col += item.size();
    }
  }
  h += "\n# Tensor names are the checkpoint's own.\n";
  return h;
}

/// The config.json keys every transformers decoder shares; `head_dim`
/// defaults to `defaultHeadDim`, or hidden_size / heads when it is 0.
void readDecoderSizes(ConfigReader &r, DecoderSpec &s,
                      int64_t defaultHeadDim = 0) {
  s.vocab = r.positive("vocab_size");
  s.dModel = r.positive("hidden_size");
  s.layers = r.positive("num_hidden_layers");
  s.heads = r.positive("num_attention_heads");
  s.kvHeads = r.positiveOr("num_key_value_heads", s.heads);
  s.dFF = r.positive("intermediate_size");
  s.ctx = r.positive("max_position_embeddings");
  s.eps = r.positiveNumberOr("rms_norm_eps", 1e-6);
  s.headDim = r.positiveOr("head_dim",
                           defaultHeadDim ? defaultHeadDim
                                          : s.dModel / std::max<int64_t>(
                                                           s.heads, 1));
}

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
    error = c.configPath + ": hidden_act '" + act +
            "' is not supported for " + type + " (supported: \"silu\")";
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
    bool windowed = type == "mistral" || type == "phi3"
                        ? r.has("sliding_window")
                                      : r.boolOr("use_sliding_window", false) &&
                                            r.has("sliding_window");
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

/// gemma3_text (Gemma3ForCausalLM): Gemma's (1 + w) RMSNorms before and
/// after attention and the MLP, per-head q/k norms, the embedding times
/// sqrt(d), GELU (tanh) gate, 1/sqrt(query_pre_attn_scalar), and sliding
/// layers interleaved with global ones, each kind with its own RoPE.
bool importGemma3Text(HfCheckpoint &c, ImportedModel &out,
                      std::string &error) {
  ConfigReader r(c.configPath, c.config);
  DecoderSpec s;
  readDecoderSizes(r, s, /*defaultHeadDim=*/256);
  s.attnScalar = r.positiveNumberOr("query_pre_attn_scalar", 256);
  std::string act = r.stringOr("hidden_activation", "gelu_pytorch_tanh");
  bool tied = r.boolOr("tie_word_embeddings", true);
  int64_t window = r.has("sliding_window") ? r.positive("sliding_window") : 0;
  if (r.ok() && r.boolOr("attention_bias", false))
    r.fail("attention_bias = true is not supported");
  if (r.ok() && r.boolOr("use_bidirectional_attention", false))
    r.fail("use_bidirectional_attention = true is not supported (a "
           "decoder is causal)");
  for (const char *cap : {"attn_logit_softcapping", "final_logit_softcapping"})
    if (r.ok() && r.has(cap))
      r.fail(std::string("key '") + cap +
             "' is set; logit soft-capping is not supported yet");
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
                "found " + lt[l].dump();
        return false;
      }
      global[l] = t == "full_attention";
    }
  } else {
    int64_t every = r.positiveOr("sliding_window_pattern", 6);
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
  bool allGlobal = std::all_of(global.begin(), global.end(),
                               [](bool g) { return g; });
  if (window && window < s.ctx && !allGlobal && !regular) {
    error = c.configPath + ": layer_types: the global layers must be every "
                           "N-th layer (layers N-1, 2N-1, ...), as in Gemma 3";
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
    s.localRopeBase = localBase;
  }
  s.rotaryDim = s.headDim;
  s.embedScale = s.geluGate = s.normPlusOne = true;
  s.name = identifier(baseName(c.dir));
  s.header = hfHeader(c, "Gemma3ForCausalLM",
                      {"model_type", "vocab_size", "hidden_size",
                       "num_hidden_layers", "num_attention_heads",
                       "num_key_value_heads", "head_dim", "intermediate_size",
                       "max_position_embeddings", "rms_norm_eps",
                       "query_pre_attn_scalar", "sliding_window",
                       "rope_parameters", "rope_theta", "rope_local_base_freq",
                       "rope_scaling", "tie_word_embeddings"});
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
  s.qNorm = p + ".self_attn.q_norm";
  s.kNorm = p + ".self_attn.k_norm";
  s.gate = p + ".mlp.gate_proj";
  s.up = p + ".mlp.up_proj";
  s.down = p + ".mlp.down_proj";
  s.attnNorm = p + ".input_layernorm";
  s.postAttnNorm = p + ".post_attention_layernorm";
  s.ffnNorm = p + ".pre_feedforward_layernorm";
  s.postFfnNorm = p + ".post_feedforward_layernorm";
  if (!checkDecoder(s, c.configPath, error))
    return false;
  std::vector<Use> uses;
  writeDecoder(s, out.tfm, uses);
  return checkUses(*c.weights, uses, c.configPath, error);
}

bool importGpt2(HfCheckpoint &c, ImportedModel &out, std::string &error) {
  ConfigReader r(c.configPath, c.config);
  int64_t vocab = r.positive("vocab_size");
  int64_t d = r.positive("n_embd");
  int64_t layers = r.positive("n_layer");
  int64_t heads = r.positive("n_head");
  int64_t ctx = r.positive("n_positions");
  int64_t inner = r.positiveOr("n_inner", 4 * d);
  double eps = r.positiveNumberOr("layer_norm_epsilon", 1e-5);
  std::string act = r.stringOr("activation_function", "gelu_new");
  bool tied = r.boolOr("tie_word_embeddings", true);
  if (r.ok() && r.boolOr("scale_attn_by_inverse_layer_idx", false))
    r.fail("scale_attn_by_inverse_layer_idx = true is not supported");
  if (r.ok() && r.boolOr("reorder_and_upcast_attn", false))
    r.fail("reorder_and_upcast_attn = true is not supported");
  if (r.ok() && !r.boolOr("scale_attn_weights", true))
    r.fail("scale_attn_weights = false is not supported");
  if (!r.ok()) {
    error = r.message();
    return false;
  }
  if (d % heads != 0) {
    error = c.configPath + ": n_embd " + std::to_string(d) +
            " is not a multiple of n_head " + std::to_string(heads);
    return false;
  }
  std::string gelu;
  if (act == "gelu_new" || act == "gelu_pytorch_tanh" || act == "gelu_fast")
    gelu = "gelu(h, approximate = \"tanh\")";
  else if (act == "gelu")
    gelu = "gelu(h)";
  else if (act == "relu")
    gelu = "relu(h)";
  else {
    error = c.configPath + ": activation_function '" + act +
            "' is not supported (supported: gelu_new, gelu_pytorch_tanh, "
            "gelu_fast, gelu, relu)";
    return false;
  }
  std::string pre = c.hasTensor("transformer.wte.weight") ? "transformer." : "";
  std::string lmHead = pre + "wte.weight";
  if (!tied) {
    if (!c.hasTensor("lm_head.weight")) {
      error = c.dir + ": tie_word_embeddings is false but the checkpoint has "
                      "no 'lm_head.weight'";
      return false;
    }
    lmHead = "lm_head.weight";
  }
  const std::pair<const char *, int64_t> D{"d_model", d}, F{"d_ff", inner};
  WeightDecls w(layers);
  std::string h = pre + "h.{l}.";
  std::ostringstream o;
  o << hfHeader(c, "GPT2LMHeadModel",
                {"model_type", "vocab_size", "n_embd", "n_layer", "n_head",
                 "n_positions", "n_inner", "layer_norm_epsilon",
                 "activation_function", "tie_word_embeddings"})
    << "# Conv1D weights are [in, out] and applied with '@'.\n"
    << "\nmodel " << identifier(baseName(c.dir)) << "\n\n"
    << "const vocab = " << vocab << "\nconst n_ctx = " << ctx
    << "\nconst d_model = " << d << "\nconst heads = " << heads
    << "\nconst layers = " << layers << "\nconst d_ff = " << inner
    << "\nconst eps = " << fmtFloat(eps)
    << "\n\ndim batch\ndim seq <= n_ctx\n\n"
    << "block attn(x: [batch, seq, d_model], l: int) {\n"
    << w("w_qkv", {D, {"3 * d_model", 3 * d}}, h + "attn.c_attn.weight")
    << w("b_qkv", {{"3 * d_model", 3 * d}}, h + "attn.c_attn.bias")
    << w("w_out", {D, D}, h + "attn.c_proj.weight")
    << w("b_out", {D}, h + "attn.c_proj.bias")
    << "  q, k, v = split(x @ w_qkv + b_qkv, 3)\n"
    << "  a = attention(q, k, v, heads = heads, causal = true)\n"
    << "  return a @ w_out + b_out\n}\n\n"
    << "block mlp(x: [batch, seq, d_model], l: int) {\n"
    << w("w_fc", {D, F}, h + "mlp.c_fc.weight")
    << w("b_fc", {F}, h + "mlp.c_fc.bias")
    << w("w_proj", {F, D}, h + "mlp.c_proj.weight")
    << w("b_proj", {D}, h + "mlp.c_proj.bias") << "  h = x @ w_fc + b_fc\n"
    << "  h = " << gelu << "\n"
    << "  return h @ w_proj + b_proj\n}\n\n"
    << "block layer(x: [batch, seq, d_model], l: int) {\n"
    << w("ln1_g", {D}, h + "ln_1.weight") << w("ln1_b", {D}, h + "ln_1.bias")
    << w("ln2_g", {D}, h + "ln_2.weight") << w("ln2_b", {D}, h + "ln_2.bias")
    << "  x = x + attn(layer_norm(x, ln1_g, ln1_b, eps = eps), l)\n"
    << "  x = x + mlp(layer_norm(x, ln2_g, ln2_b, eps = eps), l)\n"
    << "  return x\n}\n\n"
    << "# Next-token logits for every position.\n"
    << "entry forward(input_ids: i64[batch, seq]) {\n"
    << w("wte", {{"vocab", vocab}, D}, pre + "wte.weight")
    << w("wpe", {{"n_ctx", ctx}, D}, pre + "wpe.weight")
    << w("lnf_g", {D}, pre + "ln_f.weight")
    << w("lnf_b", {D}, pre + "ln_f.bias");
  if (!tied)
    o << w("lm_head", {{"vocab", vocab}, D}, "lm_head.weight");
  o << "\n  x = embed(wte, input_ids) + embed(wpe, arange(seq))\n"
    << "  for l in 0..layers {\n    x = layer(x, l)\n  }\n"
    << "  x = layer_norm(x, lnf_g, lnf_b, eps = eps)\n"
    << "  logits = linear(x, " << (tied ? "wte)   # tied LM head" : "lm_head)")
    << "\n  return logits\n}\n";
  out.tfm = o.str();
  // Each weight was declared once, above: those are what must match.
  return checkUses(*c.weights, w.uses(), c.configPath, error);
}

//===----------------------------------------------------------------------===//
// Vision Transformer (ViTModel, ViTForImageClassification)
//===----------------------------------------------------------------------===//

bool importVit(HfCheckpoint &c, ImportedModel &out, std::string &error) {
  ConfigReader r(c.configPath, c.config);
  int64_t image = r.positive("image_size");
  int64_t patch = r.positive("patch_size");
  int64_t channels = r.positiveOr("num_channels", 3);
  int64_t d = r.positive("hidden_size");
  int64_t layers = r.positive("num_hidden_layers");
  int64_t heads = r.positive("num_attention_heads");
  int64_t dFF = r.positive("intermediate_size");
  double eps = r.positiveNumberOr("layer_norm_eps", 1e-12);
  std::string act = r.stringOr("hidden_act", "gelu");
  bool qkvBias = r.boolOr("qkv_bias", true);
  if (!r.ok()) {
    error = r.message();
    return false;
  }
  if (image % patch != 0) {
    error = c.configPath + ": image_size " + std::to_string(image) +
            " is not a multiple of patch_size " + std::to_string(patch);
    return false;
  }
  if (d % heads != 0) {
    error = c.configPath + ": hidden_size " + std::to_string(d) +
            " is not a multiple of num_attention_heads " + std::to_string(heads);
    return false;
  }
  std::string actCall;
  if (act == "gelu")
    actCall = "gelu(h)";
  else if (act == "gelu_new" || act == "gelu_pytorch_tanh")
    actCall = "gelu(h, approximate = \"tanh\")";
  else if (act == "relu")
    actCall = "relu(h)";
  else {
    error = c.configPath + ": hidden_act '" + act +
            "' is not supported (supported: gelu, gelu_new, "
            "gelu_pytorch_tanh, relu)";
    return false;
  }
  std::string pre = c.hasTensor("vit.embeddings.cls_token") ? "vit." : "";
  bool pooler = c.hasTensor(pre + "pooler.dense.weight");
  bool classifier = c.hasTensor("classifier.weight");
  int64_t labels = 0;
  if (classifier) {
    const tfc::rt::TensorView *w = c.weights->findTensor("classifier.weight");
    labels = w && w->shape.size() == 2 ? w->shape[0] : 0;
    if (labels <= 0) {
      error = c.dir + ": tensor 'classifier.weight' should be [num_labels, " +
              std::to_string(d) + "]";
      return false;
    }
  }
  int64_t grid = image / patch, patches = grid * grid;
  std::ostringstream o;
  o << hfHeader(c, classifier ? "ViTForImageClassification" : "ViTModel",
                {"model_type", "image_size", "patch_size", "num_channels",
                 "hidden_size", "num_hidden_layers", "num_attention_heads",
                 "intermediate_size", "layer_norm_eps", "hidden_act",
                 "qkv_bias"})
    << "# Patches of patch x patch pixels through a linear projection (the\n"
       "# checkpoint's stride-patch convolution), a class token first, learned\n"
       "# positions, pre-norm layers, a final LayerNorm.\n"
    << "\nmodel " << identifier(baseName(c.dir)) << "\n\n"
    << "const image = " << image << "\nconst patch = " << patch
    << "\nconst channels = " << channels << "\nconst grid = image / patch"
    << "\nconst patches = grid * grid\nconst d_model = " << d
    << "\nconst heads = " << heads << "\nconst layers = " << layers
    << "\nconst d_ff = " << dFF << "\nconst eps = " << fmtFloat(eps)
    << "\n\ndim batch\n\n"
    << "block norm(x, p: str) {\n"
    << "  weight g: [d_model] = \"{p}.weight\"\n"
    << "  weight b: [d_model] = \"{p}.bias\"\n"
    << "  return layer_norm(x, g, b, eps = eps)\n}\n\n"
    << "block dense(x, p: str, d_out: int, d_in: int) {\n"
    << "  weight w: [d_out, d_in] = \"{p}.weight\"\n"
    << "  weight b: [d_out] = \"{p}.bias\"\n"
    << "  return linear(x, w, b)\n}\n\n";
  if (!qkvBias)
    o << "block project(x, p: str) {\n"
      << "  weight w: [d_model, d_model] = \"{p}.weight\"\n"
      << "  return linear(x, w)\n}\n\n";
  std::string qkv = qkvBias ? "dense" : "project";
  std::string qkvArgs = qkvBias ? ", d_model, d_model)" : ")";
  o << "block layer(x, l: int) {\n"
    << "  p = \"" << pre << "encoder.layer.{l}\"\n"
    << "  h = norm(x, \"{p}.layernorm_before\")\n"
    << "  q = " << qkv << "(h, \"{p}.attention.attention.query\"" << qkvArgs
    << "\n"
    << "  k = " << qkv << "(h, \"{p}.attention.attention.key\"" << qkvArgs
    << "\n"
    << "  v = " << qkv << "(h, \"{p}.attention.attention.value\"" << qkvArgs
    << "\n"
    << "  a = attention(q, k, v, heads = heads)\n"
    << "  x = x + dense(a, \"{p}.attention.output.dense\", d_model, d_model)\n"
    << "  h = norm(x, \"{p}.layernorm_after\")\n"
    << "  h = dense(h, \"{p}.intermediate.dense\", d_ff, d_model)\n"
    << "  h = " << actCall << "\n"
    << "  return x + dense(h, \"{p}.output.dense\", d_model, d_ff)\n}\n\n"
    << "block encoder(pixel_values: [batch, channels, image, image]) {\n"
    << "  weight w: [d_model, channels, patch, patch] = \"" << pre
    << "embeddings.patch_embeddings.projection.weight\"\n"
    << "  weight b: [d_model] = \"" << pre
    << "embeddings.patch_embeddings.projection.bias\"\n"
    << "  weight cls: [1, 1, d_model] = \"" << pre << "embeddings.cls_token\"\n"
    << "  weight pos: [1, patches + 1, d_model] = \"" << pre
    << "embeddings.position_embeddings\"\n"
    << "  # [batch, patches, channels * patch * patch], patches row by row\n"
    << "  x = reshape(pixel_values, [batch, channels, grid, patch, grid, patch])\n"
    << "  x = transpose(x, perm = [0, 2, 4, 1, 3, 5])\n"
    << "  x = reshape(x, [batch, patches, channels * patch * patch])\n"
    << "  x = linear(x, reshape(w, [d_model, channels * patch * patch]), b)\n"
    << "  first = slice(x, 0, 1, axis = 1) * 0.0 + cls   # one class token per "
       "image\n"
    << "  x = concat(first, x, axis = 1) + pos\n"
    << "  for l in 0..layers {\n    x = layer(x, l)\n  }\n"
    << "  return norm(x, \"" << pre << "layernorm\")\n}\n\n"
    << "# The last hidden states" << (pooler ? " and the pooler output" : "")
    << " (image: [batch, channels, height, width]).\n"
    << "entry forward(pixel_values: [batch, channels, image, image]) {\n"
    << "  last_hidden_state = encoder(pixel_values)\n";
  if (pooler)
    o << "  first = reshape(slice(last_hidden_state, 0, 1, axis = 1), [batch, "
         "d_model])\n"
      << "  pooler_output = tanh(dense(first, \"" << pre
      << "pooler.dense\", d_model, d_model))\n"
      << "  return last_hidden_state, pooler_output\n}\n";
  else
    o << "  return last_hidden_state\n}\n";
  if (classifier)
    o << "\n# Image classification: the class token's final state through the "
         "classifier;\n# logits and their softmax over the "
      << labels << " labels.\n"
      << "entry classify(pixel_values: [batch, channels, image, image]) {\n"
      << "  weight w: [" << labels << ", d_model] = \"classifier.weight\"\n"
      << "  weight b: [" << labels << "] = \"classifier.bias\"\n"
      << "  hidden = encoder(pixel_values)\n"
      << "  first = reshape(slice(hidden, 0, 1, axis = 1), [batch, d_model])\n"
      << "  logits = linear(first, w, b)\n"
      << "  probabilities = softmax(logits)\n"
      << "  return logits, probabilities\n}\n";
  out.tfm = o.str();

  std::vector<Use> uses = {
      {pre + "embeddings.patch_embeddings.projection.weight",
       {d, channels, patch, patch}},
      {pre + "embeddings.patch_embeddings.projection.bias", {d}},
      {pre + "embeddings.cls_token", {1, 1, d}},
      {pre + "embeddings.position_embeddings", {1, patches + 1, d}},
      {pre + "layernorm.weight", {d}},
      {pre + "layernorm.bias", {d}}};
  if (pooler) {
    uses.push_back({pre + "pooler.dense.weight", {d, d}});
    uses.push_back({pre + "pooler.dense.bias", {d}});
  }
  if (classifier) {
    uses.push_back({"classifier.weight", {labels, d}});
    uses.push_back({"classifier.bias", {labels}});
  }
  for (int64_t l = 0; l < layers; ++l) {
    std::string p = pre + "encoder.layer." + std::to_string(l) + ".";
    for (const char *n : {"query", "key", "value"}) {
      uses.push_back({p + "attention.attention." + n + ".weight", {d, d}});
      if (qkvBias)
        uses.push_back({p + "attention.attention." + n + ".bias", {d}});
    }
    uses.push_back({p + "attention.output.dense.weight", {d, d}});
    uses.push_back({p + "attention.output.dense.bias", {d}});
    uses.push_back({p + "intermediate.dense.weight", {dFF, d}});
    uses.push_back({p + "intermediate.dense.bias", {dFF}});
    uses.push_back({p + "output.dense.weight", {d, dFF}});
    uses.push_back({p + "output.dense.bias", {d}});
    for (const char *n : {"layernorm_before", "layernorm_after"}) {
      uses.push_back({p + n + ".weight", {d}});
      uses.push_back({p + n + ".bias", {d}});
    }
  }
  return checkUses(*c.weights, uses, c.configPath, error);
}

//===----------------------------------------------------------------------===//
// BLOOM (BloomForCausalLM): ALiBi, no position embeddings
//===----------------------------------------------------------------------===//

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
  bool postNorm =
      r.boolOr("apply_residual_connection_post_layernorm", false);
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
  std::string lmHead = pre + "word_embeddings.weight";
  if (!tied) {
    if (!c.hasTensor("lm_head.weight")) {
      error = c.dir + ": tie_word_embeddings is false but the checkpoint has "
                      "no 'lm_head.weight'";
      return false;
    }
    lmHead = "lm_head.weight";
  }
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
    << "block norm(x, p: str) {\n"
    << "  weight g: [d_model] = \"{p}.weight\"\n"
    << "  weight b: [d_model] = \"{p}.bias\"\n"
    << "  return layer_norm(x, g, b, eps = eps)\n}\n\n"
    << "block proj(x, p: str, d_out: int, d_in: int) {\n"
    << "  weight w: [d_out, d_in] = \"{p}.weight\"\n"
    << "  weight b: [d_out] = \"{p}.bias\"\n"
    << "  return linear(x, w, b)\n}\n\n"
    << "block attn(x: [batch, seq, d_model], l: int) {\n"
    << "  p = \"" << pre << "h.{l}.self_attention\"\n"
    << "  qkv = reshape(proj(x, \"{p}.query_key_value\", 3 * d_model, "
       "d_model),\n                [batch, seq, heads, 3, d_head])\n"
    << "  q, k, v = split(qkv, 3, axis = 3)\n"
    << "  q = reshape(q, [batch, seq, d_model])\n"
    << "  k = reshape(k, [batch, seq, d_model])\n"
    << "  v = reshape(v, [batch, seq, d_model])\n"
    << "  a = attention(q, k, v, heads = heads, causal = true, alibi = 8.0)\n"
    << "  return proj(a, \"{p}.dense\", d_model, d_model)\n}\n\n"
    << "block mlp(x: [batch, seq, d_model], l: int) {\n"
    << "  p = \"" << pre << "h.{l}.mlp\"\n"
    << "  h = gelu(proj(x, \"{p}.dense_h_to_4h\", d_ff, d_model), "
       "approximate = \"tanh\")\n"
    << "  return proj(h, \"{p}.dense_4h_to_h\", d_model, d_ff)\n}\n\n"
    << "block layer(x: [batch, seq, d_model], l: int) {\n"
    << "  h = norm(x, \"" << pre << "h.{l}.input_layernorm\")\n"
    << "  x = " << (postNorm ? "h" : "x") << " + attn(h, l)\n"
    << "  h = norm(x, \"" << pre << "h.{l}.post_attention_layernorm\")\n"
    << "  return " << (postNorm ? "h" : "x") << " + mlp(h, l)\n}\n\n"
    << "# Next-token logits for every position.\n"
    << "entry forward(input_ids: i64[batch, seq]) {\n"
    << "  weight wte: [vocab, d_model] = \"" << pre
    << "word_embeddings.weight\"\n";
  if (!tied)
    o << "  weight lm_head: [vocab, d_model] = \"lm_head.weight\"\n";
  o << "  x = norm(embed(wte, input_ids), \"" << pre
    << "word_embeddings_layernorm\")\n"
    << "  for l in 0..layers {\n    x = layer(x, l)\n  }\n"
    << "  x = norm(x, \"" << pre << "ln_f\")\n"
    << "  logits = linear(x, " << (tied ? "wte)   # tied LM head" : "lm_head)")
    << "\n  return logits\n}\n";
  out.tfm = o.str();

  std::vector<Use> uses = {{pre + "word_embeddings.weight", {vocab, d}}};
  if (!tied)
    uses.push_back({"lm_head.weight", {vocab, d}});
  for (const char *n : {"word_embeddings_layernorm", "ln_f"})
    for (const char *k : {".weight", ".bias"})
      uses.push_back({pre + n + k, {d}});
  for (int64_t l = 0; l < layers; ++l) {
    std::string p = pre + "h." + std::to_string(l) + ".";
    auto linear = [&](const std::string &n, int64_t dOut, int64_t dIn) {
      uses.push_back({p + n + ".weight", {dOut, dIn}});
      uses.push_back({p + n + ".bias", {dOut}});
    };
    linear("self_attention.query_key_value", 3 * d, d);
    linear("self_attention.dense", d, d);
    linear("mlp.dense_h_to_4h", 4 * d, d);
    linear("mlp.dense_4h_to_h", d, 4 * d);
    for (const char *n : {"input_layernorm", "post_attention_layernorm"})
      for (const char *k : {".weight", ".bias"})
        uses.push_back({p + n + k, {d}});
  }
  return checkUses(*c.weights, uses, c.configPath, error);
}

//===----------------------------------------------------------------------===//
// T5 (T5ForConditionalGeneration): relative position bias, RMS norms
//===----------------------------------------------------------------------===//

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
    << "    y = decoder_layer(y, encoder_hidden_states, decoder_attention_mask,\n"
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

//===----------------------------------------------------------------------===//
// MarianMT: the encoder-decoder of "Attention Is All You Need" as
// transformers' MarianMTModel builds it
//===----------------------------------------------------------------------===//

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
    << "    y = decoder_layer(y, encoder_hidden_states, decoder_attention_mask,\n"
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

/// A sentence-transformers Dense module after the pooling:
/// activation(linear(e)), its weights "<path>.linear.weight" / ".bias".
struct DenseModule {
  std::string path;
  int64_t in = 0, out = 0;
  bool bias = true;
  std::string activation; // "tanh", or "" (Identity)
};

/// sentence-transformers' modules.json + 1_Pooling/config.json, if present.
struct Pooling {
  bool present = false;
  std::string mode; // "mean", "cls", "max"
  bool normalize = false;
  int64_t maxSeqLength = 0;
  /// In modules.json order, after the pooling (before Normalize).
  std::vector<DenseModule> dense;
};

/// A Dense module's config.json (in_features, out_features, bias,
/// activation_function) and its weights file.
bool readDense(const std::string &dir, const std::string &modulesPath,
               const std::string &path, DenseModule &d, std::string &error) {
  if (path.empty() || path.find("..") != std::string::npos ||
      path.front() == '/') {
    error = modulesPath + ": the Dense module's path must be inside the "
                          "directory";
    return false;
  }
  d.path = path;
  std::string configPath = dir + "/" + path + "/config.json";
  Json config;
  if (!parseJsonFile(configPath, config, error))
    return false;
  ConfigReader r(configPath, config);
  d.in = r.positive("in_features");
  d.out = r.positive("out_features");
  d.bias = r.boolOr("bias", true);
  std::string act =
      r.stringOr("activation_function", "torch.nn.modules.activation.Tanh");
  if (!r.ok()) {
    error = r.message();
    return false;
  }
  if (act == "torch.nn.modules.activation.Tanh")
    d.activation = "tanh";
  else if (act != "torch.nn.modules.linear.Identity") {
    error = configPath + ": activation_function '" + act +
            "' is not supported (supported: torch.nn.modules.activation.Tanh, "
            "torch.nn.modules.linear.Identity)";
    return false;
  }
  if (!isRegularFile(dir + "/" + path + "/model.safetensors")) {
    error = dir + "/" + path + ": the Dense module's weights must be in "
            "model.safetensors" +
            (isRegularFile(dir + "/" + path + "/pytorch_model.bin")
                 ? " (pytorch_model.bin is a pickle tfc does not read: save "
                   "the module with safe_serialization)"
                 : "");
    return false;
  }
  return true;
}

bool readPooling(const std::string &dir, Pooling &p, std::string &error) {
  std::string modulesPath = dir + "/modules.json";
  if (!isRegularFile(modulesPath))
    return true;
  std::string text;
  if (!readText(modulesPath, text, error))
    return false;
  Json modules;
  if (!::tfc::rt::parseJsonDocument(text, modulesPath, modules, error))
    return false;
  if (!modules.is_array()) {
    error = modulesPath + ": expected an array of modules";
    return false;
  }
  std::string poolingDir;
  for (size_t i = 0; i < modules.size(); ++i) {
    const Json &m = modules[i];
    if (!m.is_object() || !m.contains("type") || !m["type"].is_string()) {
      error = modulesPath + ": module " + std::to_string(i) +
              " should be an object with a string 'type'";
      return false;
    }
    std::string type = m["type"].get<std::string>();
    std::string path = m.contains("path") && m["path"].is_string()
                           ? m["path"].get<std::string>()
                           : "";
    // "sentence_transformers.models.Pooling" (up to 5.x) or
    // "sentence_transformers.sentence_transformer.modules.pooling.Pooling"
    // (6.x): the class name decides.
    std::string cls = type.rfind("sentence_transformers.", 0) == 0
                          ? type.substr(type.rfind('.') + 1)
                          : "";
    if (cls == "Transformer")
      continue;
    if (cls == "Pooling") {
      p.present = true;
      poolingDir = path;
    } else if (cls == "Normalize") {
      p.normalize = true;
    } else if (cls == "Dense" && p.present && !p.normalize) {
      p.dense.emplace_back();
      if (!readDense(dir, modulesPath, path, p.dense.back(), error))
        return false;
    } else {
      error = modulesPath + ": module type '" + type +
              "' is not supported" +
              (cls == "Dense"
                   ? std::string(" here (Dense is supported between Pooling "
                                 "and Normalize)")
                   : std::string(" (supported: Transformer, Pooling, "
                                 "Dense, Normalize)"));
      return false;
    }
  }
  if (!p.present)
    return true;
  if (poolingDir.find("..") != std::string::npos) {
    error = modulesPath + ": the Pooling module's path must be inside the "
                          "directory";
    return false;
  }
  std::string poolConfig = dir + "/" + poolingDir + "/config.json";
  Json pc;
  if (!parseJsonFile(poolConfig, pc, error))
    return false;
  ConfigReader r(poolConfig, pc);
  int modes = 0;
  // sentence-transformers 6: "pooling_mode": "mean" (or "cls", "max", ...).
  if (r.has("pooling_mode")) {
    std::string mode = r.string("pooling_mode");
    if (r.ok() && mode != "mean" && mode != "cls" && mode != "max")
      r.fail("pooling_mode '" + mode +
             "' is not supported (supported: mean, cls, max)");
    if (!r.ok()) {
      error = r.message();
      return false;
    }
    p.mode = mode;
    modes = 1;
  }
  if (r.boolOr("pooling_mode_mean_tokens", false))
    p.mode = "mean", ++modes;
  if (r.boolOr("pooling_mode_cls_token", false))
    p.mode = "cls", ++modes;
  if (r.boolOr("pooling_mode_max_tokens", false))
    p.mode = "max", ++modes;
  for (const char *k : {"pooling_mode_mean_sqrt_len_tokens",
                        "pooling_mode_weightedmean_tokens",
                        "pooling_mode_lasttoken"})
    if (r.boolOr(k, false))
      r.fail(std::string("key '") + k +
             "' is not supported (supported: mean, cls, max)");
  if (r.ok() && modes != 1)
    r.fail("exactly one of pooling_mode_mean_tokens, pooling_mode_cls_token "
           "and pooling_mode_max_tokens must be true");
  if (!r.ok()) {
    error = r.message();
    return false;
  }
  std::string sbert = dir + "/sentence_bert_config.json";
  if (isRegularFile(sbert)) {
    Json sc;
    if (!parseJsonFile(sbert, sc, error))
      return false;
    ConfigReader sr(sbert, sc);
    p.maxSeqLength = sr.positiveOr("max_seq_length", 0);
    if (!sr.ok()) {
      error = sr.message();
      return false;
    }
  }
  return true;
}

//===----------------------------------------------------------------------===//
// BERT-style encoders: bert, mpnet (Hugging Face), nomic-bert (GGUF)
//===----------------------------------------------------------------------===//

/// A post-norm encoder (LayerNorm after each residual sum), as BERT and the
/// families derived from it build one.
struct EncoderSpec {
  std::string header, name;
  int64_t vocab = 0, dModel = 0, heads = 0, layers = 0, dFF = 0;
  double eps = 1e-12;
  /// The longest sequence: the rows of a learned position table, or the
  /// context length of a rotary encoder.
  int64_t maxPositions = 0;
  /// Learned positions: the table; the token at index i takes row
  /// i + positionOffset (MPNet and RoBERTa count from padding_idx + 1).
  std::string position;
  int64_t positionOffset = 0;
  /// Rotary positions on q and k (rotating halves) with this base; 0: none.
  double ropeBase = 0;
  /// MPNet: a bias by query-key distance from a [buckets, heads] table
  /// shared by every layer (T5's bidirectional buckets); "" for none.
  std::string relativeBias;
  int64_t buckets = 0, maxDistance = 0;
  /// Token types: the table, whose row is chosen per token by the input
  /// token_type_ids when typeInput, else row 0 is added to every token
  /// (llama.cpp's nomic-bert); "" for none.
  std::string tokenType;
  int64_t types = 0;
  bool typeInput = false;
  /// The activation as a call on "{x}": "gelu({x})".
  std::string activation;
  /// down(act(gate(x)) * up(x)) (nomic-bert's SwiGLU) instead of
  /// down(act(up(x))).
  bool gated = false;
  /// Whether the linear layers have biases.
  bool biases = true;
  // Tensor names without .weight/.bias; "{l}" is the layer. `qkv` is a
  // fused [3 d, d] projection (then q, k, v are unused).
  std::string word, embedNorm, qkv, q, k, v, o, attnNorm, up, gate, down,
      outNorm;
  /// BERT's pooler (tanh of a dense layer on the first token) and a
  /// classifier over it; "" for none.
  std::string pooler, classifier;
  int64_t labels = 0;
  std::string labelNames;
  Pooling pool;
};

void writeEncoder(const EncoderSpec &s, std::string &tfm,
                  std::vector<Use> &uses) {
  std::string d = std::to_string(s.dModel);
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
  std::ostringstream o;
  o << s.header << "\nmodel " << s.name << "\n\n"
    << "const vocab = " << s.vocab << "\n"
    << (learned ? "const max_positions = " : "const n_ctx = ")
    << s.maxPositions << "\n";
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
    << (!learned ? "n_ctx" : s.positionOffset ? "max_seq" : "max_positions")
    << "\n\n"
    << "block norm(x: [batch, seq, d_model], p: str) {\n"
    << "  weight g: [d_model] = \"{p}.weight\"\n"
    << "  weight b: [d_model] = \"{p}.bias\"\n"
    << "  return layer_norm(x, g, b, eps = eps)\n}\n\n"
    << "block dense(x, p: str, d_out: int, d_in: int) {\n"
    << "  weight w: [d_out, d_in] = \"{p}.weight\"\n";
  if (s.biases)
    o << "  weight b: [d_out] = \"{p}.bias\"\n"
      << "  return linear(x, w, b)\n}\n\n";
  else
    o << "  return linear(x, w)\n}\n\n";
  auto act = [&](const std::string &x) { return subst(s.activation, "x", x); };
  o << "block layer(x: [batch, seq, d_model], mask: i64[batch, seq], "
    << (relative ? "bias, " : "") << "l: int) {\n";
  if (!s.qkv.empty())
    o << "  qkv = dense(x, \"" << s.qkv << "\", 3 * d_model, d_model)\n"
      << "  q = slice(qkv, 0, d_model)\n"
      << "  k = slice(qkv, d_model, d_model)\n"
      << "  v = slice(qkv, 2 * d_model, d_model)\n";
  else
    o << "  q = dense(x, \"" << s.q << "\", d_model, d_model)\n"
      << "  k = dense(x, \"" << s.k << "\", d_model, d_model)\n"
      << "  v = dense(x, \"" << s.v << "\", d_model, d_model)\n";
  if (s.ropeBase)
    o << "  q = rope(split_heads(q, heads), base = rope_base)\n"
      << "  k = rope(split_heads(k, heads), base = rope_base)\n"
      << "  a = merge_heads(attention(q, k, split_heads(v, heads), mask = "
         "mask))\n";
  else
    o << "  a = attention(q, k, v, heads = heads, mask = mask"
      << (relative ? ", relative_bias = bias" : "") << ")\n";
  o << "  a = dense(a, \"" << s.o << "\", d_model, d_model)\n"
    << "  x = norm(x + a, \"" << s.attnNorm << "\")\n";
  if (s.gated)
    o << "  g = dense(x, \"" << s.gate << "\", d_ff, d_model)\n"
      << "  h = " << act("g") << " * dense(x, \"" << s.up
      << "\", d_ff, d_model)\n";
  else
    o << "  h = dense(x, \"" << s.up << "\", d_ff, d_model)\n"
      << "  h = " << act("h") << "\n";
  o << "  h = dense(h, \"" << s.down << "\", d_model, d_ff)\n"
    << "  return norm(x + h, \"" << s.outNorm << "\")\n}\n\n";

  o << "block encoder(" << params("              ") << ") {\n"
    << "  weight word: [vocab, d_model] = \"" << s.word << ".weight\"\n";
  if (learned)
    o << "  weight position: [max_positions, d_model] = \"" << s.position
      << ".weight\"\n";
  if (!s.tokenType.empty())
    o << "  weight token_type: [type_vocab, d_model] = \"" << s.tokenType
      << ".weight\"\n";
  o << "  x = embed(word, input_ids)\n";
  if (learned)
    o << "  x = x + embed(position, arange(seq"
      << (s.positionOffset ? ", offset = " + std::to_string(s.positionOffset)
                           : "")
      << "))\n";
  if (!s.tokenType.empty())
    o << (s.typeInput
              ? "  x = x + embed(token_type, token_type_ids)\n"
              : "  x = x + reshape(slice(token_type, 0, 1, axis = 0), "
                "[d_model])   # type 0\n");
  o << "  x = norm(x, \"" << s.embedNorm << "\")\n";
  if (relative)
    o << "  weight table: [buckets, heads] = \"" << s.relativeBias
      << ".weight\"\n"
      << "  bias = relative_position_bias(table, buckets = buckets,\n"
      << "                                max_distance = max_distance)\n";
  o << "  for l in 0..layers {\n    x = layer(x, attention_mask, "
    << (relative ? "bias, " : "") << "l)\n  }\n"
    << "  return x\n}\n\n";

  std::string pooled =
      "  first = reshape(slice(hidden, 0, 1, axis = 1), [batch, d_model])\n"
      "  pooled = tanh(dense(first, \"" +
      s.pooler + "\", d_model, d_model))\n";
  bool pooler = !s.pooler.empty();
  o << "# The last hidden states" << (pooler ? " and the pooler output" : "")
    << ".\n"
    << "entry forward(" << params("              ") << ") {\n"
    << "  hidden = encoder(" << args << ")\n";
  if (pooler)
    o << pooled << "  return hidden, pooled\n}\n";
  else
    o << "  return hidden\n}\n";
  if (!s.classifier.empty())
    o << "\n# Sequence classification: the pooled first token through the "
         "classifier;\n# logits and their softmax over the "
      << s.labels << " labels"
      << (s.labelNames.empty() ? "" : " (" + s.labelNames + ")") << ".\n"
      << "entry classify(" << params("               ") << ") {\n"
      << "  weight w: [" << s.labels << ", d_model] = \"" << s.classifier
      << ".weight\"\n"
      << "  weight b: [" << s.labels << "] = \"" << s.classifier
      << ".bias\"\n"
      << "  hidden = encoder(" << args << ")\n"
      << pooled << "  logits = linear(pooled, w, b)\n"
      << "  probabilities = softmax(logits)\n"
      << "  return logits, probabilities\n}\n";
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
    for (size_t i = 0; i < pool.dense.size(); ++i) {
      const DenseModule &d = pool.dense[i];
      std::string w = "dense" + std::to_string(i);
      o << "  weight " << w << "_w: [" << d.out << ", " << d.in << "] = \""
        << d.path << ".linear.weight\"\n";
      if (d.bias)
        o << "  weight " << w << "_b: [" << d.out << "] = \"" << d.path
          << ".linear.bias\"\n";
      std::string lin = "linear(sentence_embedding, " + w + "_w" +
                        (d.bias ? ", " + w + "_b" : std::string()) + ")";
      o << "  sentence_embedding = "
        << (d.activation.empty() ? lin : d.activation + "(" + lin + ")")
        << "   # " << d.path << "\n";
    }
    if (pool.normalize)
      o << "  e = sentence_embedding\n"
        << "  sentence_embedding = e / maximum(sqrt(sum(e * e, keepdim = true)),"
           " 1e-12)\n";
    o << "  return sentence_embedding\n}\n";
  }
  tfm = o.str();

  int64_t dm = s.dModel;
  int64_t width = dm; // of the sentence embedding, through the Dense modules
  for (const DenseModule &d : pool.dense) {
    uses.push_back({d.path + ".linear.weight", {d.out, width}});
    if (d.bias)
      uses.push_back({d.path + ".linear.bias", {d.out}});
    width = d.out;
  }
  uses.push_back({s.word + ".weight", {s.vocab, dm}});
  if (learned)
    uses.push_back({s.position + ".weight", {s.maxPositions, dm}});
  if (!s.tokenType.empty())
    uses.push_back({s.tokenType + ".weight", {s.types, dm}});
  uses.push_back({s.embedNorm + ".weight", {dm}});
  uses.push_back({s.embedNorm + ".bias", {dm}});
  if (relative)
    uses.push_back({s.relativeBias + ".weight", {s.buckets, s.heads}});
  if (pooler) {
    uses.push_back({s.pooler + ".weight", {dm, dm}});
    uses.push_back({s.pooler + ".bias", {dm}});
  }
  if (!s.classifier.empty()) {
    uses.push_back({s.classifier + ".weight", {s.labels, dm}});
    uses.push_back({s.classifier + ".bias", {s.labels}});
  }
  for (int64_t l = 0; l < s.layers; ++l) {
    auto linear = [&](const std::string &t, int64_t out, int64_t in) {
      std::string n = subst(t, "l", std::to_string(l));
      uses.push_back({n + ".weight", {out, in}});
      if (s.biases)
        uses.push_back({n + ".bias", {out}});
    };
    if (!s.qkv.empty()) {
      linear(s.qkv, 3 * dm, dm);
    } else {
      linear(s.q, dm, dm);
      linear(s.k, dm, dm);
      linear(s.v, dm, dm);
    }
    linear(s.o, dm, dm);
    if (s.gated)
      linear(s.gate, s.dFF, dm);
    linear(s.up, s.dFF, dm);
    linear(s.down, dm, s.dFF);
    for (const std::string &t : {s.attnNorm, s.outNorm}) {
      std::string n = subst(t, "l", std::to_string(l));
      uses.push_back({n + ".weight", {dm}});
      uses.push_back({n + ".bias", {dm}});
    }
  }
}

/// BERT's hidden_act as a call on "{x}", or "".
std::string encoderActivation(const std::string &act) {
  if (act == "gelu")
    return "gelu({x})";
  if (act == "gelu_new" || act == "gelu_pytorch_tanh")
    return "gelu({x}, approximate = \"tanh\")";
  if (act == "relu")
    return "relu({x})";
  return "";
}

/// The sentence-transformers comment of an encoder with pooling.
std::string poolingNote(const Pooling &pool) {
  if (!pool.present)
    return "";
  std::string dense;
  for (const DenseModule &d : pool.dense)
    dense += ", Dense " + std::to_string(d.in) + " -> " +
             std::to_string(d.out) + (d.activation.empty() ? "" : " (tanh)");
  return "# sentence-transformers: " + pool.mode + " pooling" + dense +
         (pool.normalize ? ", L2-normalised" : "") + " (modules.json)" +
         (pool.maxSeqLength
              ? ", max_seq_length " + std::to_string(pool.maxSeqLength)
              : "") +
         ": entry encode.\n";
}

/// bert (BertModel, BertForSequenceClassification) and mpnet (MPNetModel:
/// BERT's layers with a T5-style bias by distance, positions from
/// padding_idx + 1, no token types).
bool importBert(HfCheckpoint &c, const std::string &type, ImportedModel &out,
                std::string &error) {
  bool mpnet = type == "mpnet";
  ConfigReader r(c.configPath, c.config);
  EncoderSpec s;
  s.vocab = r.positive("vocab_size");
  s.dModel = r.positive("hidden_size");
  s.layers = r.positive("num_hidden_layers");
  s.heads = r.positive("num_attention_heads");
  s.dFF = r.positive("intermediate_size");
  s.maxPositions = r.positive("max_position_embeddings");
  s.types = mpnet ? 0 : r.positiveOr("type_vocab_size", 2);
  s.eps = r.positiveNumberOr("layer_norm_eps", 1e-12);
  std::string act = r.stringOr("hidden_act", "gelu");
  std::string posType =
      mpnet ? "absolute" : r.stringOr("position_embedding_type", "absolute");
  int64_t padding = mpnet ? r.positiveOr("pad_token_id", 1) : 0;
  s.buckets = mpnet ? r.positiveOr("relative_attention_num_buckets", 32) : 0;
  if (!r.ok()) {
    error = r.message();
    return false;
  }
  if (posType != "absolute") {
    error = c.configPath + ": position_embedding_type '" + posType +
            "' is not supported (supported: \"absolute\")";
    return false;
  }
  s.activation = encoderActivation(act);
  if (s.activation.empty()) {
    error = c.configPath + ": hidden_act '" + act +
            "' is not supported (supported: gelu, gelu_new, "
            "gelu_pytorch_tanh, relu)";
    return false;
  }
  if (s.dModel % s.heads != 0) {
    error = c.configPath + ": hidden_size " + std::to_string(s.dModel) +
            " is not a multiple of num_attention_heads " +
            std::to_string(s.heads);
    return false;
  }
  // transformers' MPNet: the distance saturates at 128; each direction has
  // half the buckets, exact below a quarter of them.
  s.maxDistance = 128;
  if (mpnet && (s.buckets < 4 || s.maxDistance <= s.buckets / 2)) {
    error = c.configPath + ": relative_attention_num_buckets " +
            std::to_string(s.buckets) +
            " is not supported (at least 4 and at most 256)";
    return false;
  }
  if (!readPooling(c.dir, s.pool, error))
    return false;
  std::string pre = mpnet ? "mpnet." : "bert.";
  if (!c.hasTensor(pre + "embeddings.word_embeddings.weight"))
    pre = "";
  // MPNet positions start after padding_idx; a sequence that uses every
  // row starts at padding_idx + 1, so it is that much shorter.
  if (mpnet) {
    s.positionOffset = padding + 1;
    if (s.maxPositions <= s.positionOffset) {
      error = c.configPath + ": max_position_embeddings " +
              std::to_string(s.maxPositions) + " leaves no position after "
              "pad_token_id " + std::to_string(padding);
      return false;
    }
  }
  bool pooler = c.hasTensor(pre + "pooler.dense.weight");
  // BertForSequenceClassification: a classifier over the pooled [CLS].
  bool classifier = !mpnet && pooler && c.hasTensor("classifier.weight");
  if (classifier) {
    const tfc::rt::TensorView *w = c.weights->findTensor("classifier.weight");
    s.labels = w && w->shape.size() == 2 ? w->shape[0] : 0;
    if (s.labels <= 0) {
      error = c.dir + ": tensor 'classifier.weight' should be [num_labels, " +
              std::to_string(s.dModel) + "]";
      return false;
    }
    // id2label, in id order, for the description's comment.
    if (c.config.contains("id2label") && c.config["id2label"].is_object())
      for (int64_t i = 0; i < s.labels; ++i) {
        std::string key = std::to_string(i);
        s.labelNames += (i ? ", " : "") + key + " = " +
                        (c.config["id2label"].contains(key) &&
                                 c.config["id2label"][key].is_string()
                             ? c.config["id2label"][key].get<std::string>()
                             : std::string("?"));
      }
    s.classifier = "classifier";
  }
  s.header = hfHeader(c,
                      mpnet        ? "MPNetModel"
                      : classifier ? "BertForSequenceClassification"
                                   : "BertModel",
                      {"model_type", "vocab_size", "hidden_size",
                       "num_hidden_layers", "num_attention_heads",
                       "intermediate_size", "max_position_embeddings",
                       "type_vocab_size", "layer_norm_eps", "hidden_act",
                       "pad_token_id", "relative_attention_num_buckets"}) +
             (mpnet ? "# Positions from pad_token_id + 1; a bias by "
                      "query-key distance (T5's buckets,\n# distances "
                      "saturating at 128) learned once and added in every "
                      "layer.\n"
                    : "") +
             poolingNote(s.pool);
  s.name = identifier(baseName(c.dir));
  s.word = pre + "embeddings.word_embeddings";
  s.position = pre + "embeddings.position_embeddings";
  s.embedNorm = pre + "embeddings.LayerNorm";
  std::string p = pre + "encoder.layer.{l}";
  if (mpnet) {
    s.relativeBias = pre + "encoder.relative_attention_bias";
    s.q = p + ".attention.attn.q";
    s.k = p + ".attention.attn.k";
    s.v = p + ".attention.attn.v";
    s.o = p + ".attention.attn.o";
    s.attnNorm = p + ".attention.LayerNorm";
  } else {
    s.tokenType = pre + "embeddings.token_type_embeddings";
    s.typeInput = true;
    s.q = p + ".attention.self.query";
    s.k = p + ".attention.self.key";
    s.v = p + ".attention.self.value";
    s.o = p + ".attention.output.dense";
    s.attnNorm = p + ".attention.output.LayerNorm";
  }
  s.up = p + ".intermediate.dense";
  s.down = p + ".output.dense";
  s.outNorm = p + ".output.LayerNorm";
  if (pooler)
    s.pooler = pre + "pooler.dense";
  std::vector<Use> uses;
  writeEncoder(s, out.tfm, uses);
  return checkUses(*c.weights, uses, c.configPath, error);
}

bool importHuggingFace(const std::string &dir, ImportedModel &out,
                       std::string &error) {
  HfCheckpoint c;
  c.dir = dir;
  c.configPath = dir + "/config.json";
  if (!isRegularFile(c.configPath)) {
    error = dir + ": not a checkpoint directory: it has no config.json "
                  "(supported: " + std::string(kSupported) + ")";
    return false;
  }
  if (!parseJsonFile(c.configPath, c.config, error))
    return false;
  ConfigReader r(c.configPath, c.config);
  std::string type = r.string("model_type");
  if (!r.ok()) {
    error = r.message();
    return false;
  }
  if (type != "bert" && type != "mpnet" && type != "gpt2" &&
      type != "llama" && type != "mistral" && type != "qwen2" &&
      type != "qwen3" && type != "gemma3_text" && type != "phi3" &&
      type != "marian" &&
      type != "vit" && type != "bloom" && type != "t5") {
    error = c.configPath + ": model_type '" + type +
            "' is not supported (supported: bert, bloom, gemma3_text, gpt2, "
            "llama, marian, mistral, mpnet, phi3, qwen2, qwen3, t5, vit)";
    return false;
  }
  c.weights = tfc::rt::openWeights(dir, error);
  if (!c.weights)
    return false;
  out.family = type;
  out.weights = dir;
  out.tokenizer =
      isRegularFile(dir + "/tokenizer.json") ? dir + "/tokenizer.json" : "";
  if (type == "bert" || type == "mpnet")
    return importBert(c, type, out, error);
  if (type == "gpt2")
    return importGpt2(c, out, error);
  if (type == "marian")
    return importMarian(c, out, error);
  if (type == "vit")
    return importVit(c, out, error);
  if (type == "bloom")
    return importBloom(c, out, error);
  if (type == "t5")
    return importT5(c, out, error);
  if (type == "gemma3_text")
    return importGemma3Text(c, out, error);
  return importLlamaLike(c, type, out, error);
}

//===----------------------------------------------------------------------===//
// GGUF
//===----------------------------------------------------------------------===//

/// The GGUF architectures of LLaMA-style decoders (llama.cpp's names), as
/// llama.cpp builds them (src/models/*.cpp).
/// (Gemma and Gemma 2 are not: transformers cannot load the first from a
/// .gguf to check it against, and every Gemma 2 soft-caps its logits.)
const char *const kGgufArchs[] = {"llama", "mistral", "qwen2", "qwen3",
                                  "gemma3", "phi3"};

/// GGUF's BERT-derived encoders, as llama.cpp builds them
/// (src/models/bert.cpp): bert (learned positions, q/k/v with biases, GELU
/// MLP) and nomic-bert (fused QKV without biases, RoPE, SwiGLU); both add
/// token type 0 to every token.
bool importGgufEncoder(const tfc::rt::GgufFile &f, const std::string &path,
                       const std::string &arch, ImportedModel &out,
                       std::string &error) {
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
              std::to_string(kv) + " differs from the head count; grouped "
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
  s.biases = f.findTensor(fused ? "blk.0.attn_qkv.bias" : "blk.0.attn_q.bias") !=
             nullptr;
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
      "\n# Hyper-parameters from the " + kp + "* metadata: embedding_length=" +
      std::to_string(s.dModel) + " block_count=" + std::to_string(s.layers) +
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
  if (has("rope.dimension_count") &&
      !need("rope.dimension_count", s.rotaryDim))
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
    if (s.window >= s.ctx)
      s.window = 0;
  }
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
    for (const char *key : {"attn_logit_softcapping", "final_logit_softcapping"})
      if (has(key)) {
        double cap = 0;
        if (!f->getFloat(kp + key, cap, error))
          return false;
        if (cap != 0) {
          error = path + ": " + kp + key +
                  " is set; logit soft-capping is not supported yet";
          return false;
        }
      }
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
  s.ropeMode = arch == "llama" || arch == "mistral" ? "adjacent" : "rotate_half";
  std::string name;
  if (f->find("general.name"))
    f->getString("general.name", name, error);
  s.name = identifier(name.empty() ? baseName(path) : name);
  s.header = "# GGUF " + arch + " model, imported by tfc-import from\n#   " +
             path + "\n# Hyper-parameters from the " + kp +
             "* metadata: embedding_length=" +
             std::to_string(s.dModel) + " block_count=" +
             std::to_string(s.layers) + "\n#   head_count=" +
             std::to_string(s.heads) + " head_count_kv=" +
             std::to_string(s.kvHeads) + " feed_forward_length=" +
             std::to_string(s.dFF) + " context_length=" + std::to_string(s.ctx) +
             "\n#   rope.freq_base=" + fmtFloat(s.ropeBase) +
             " layer_norm_rms_epsilon=" + fmtFloat(s.eps) + " vocab=" +
             std::to_string(s.vocab) +
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
    bool uniform = std::all_of(formats.begin(), formats.end(),
                               [&](const std::string &x) {
                                 return x == formats.front();
                               });
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

} // namespace

bool tfc::importer::isCheckpoint(const std::string &path) {
  return isDirectory(path) || tfc::rt::isGgufFile(path);
}

const char *tfc::importer::supportedFamilies() { return kSupported; }

bool tfc::importer::importCheckpoint(const std::string &pathArg,
                                     ImportedModel &out, std::string &error) {
  std::string path = pathArg;
  while (path.size() > 1 && path.back() == '/')
    path.pop_back();
  try {
    if (isDirectory(path))
      return importHuggingFace(path, out, error);
    if (tfc::rt::isGgufFile(path) ||
        (path.size() > 5 && path.compare(path.size() - 5, 5, ".gguf") == 0 &&
         isRegularFile(path)))
      return importGguf(path, out, error); // the reader names what is wrong
  } catch (const std::exception &e) {
    error = path + ": " + e.what();
    return false;
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    error = path + ": cannot open: " + std::strerror(errno);
  else
    error = path + ": not a checkpoint (supported: " + kSupported + ")";
  return false;
}
