//===- Decoder.h - LLaMA-style decoder descriptions ----------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Private to lib/Import: what a LLaMA-style decoder is made of (DecoderSpec),
// filled by the Hugging Face families (Llama.cpp, Gemma.cpp) and by GGUF
// (Gguf.cpp), and the one writer of its .tfm (Decoder.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TFC_LIB_IMPORT_DECODER_H
#define TFC_LIB_IMPORT_DECODER_H

#include "Common.h"

#include "tfc/Formats/DType.h"

#include <map>

namespace tfc::importer::detail {

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
  /// Gemma 2's soft-capping: scores become c tanh(s / c) with c =
  /// attnSoftcap, and the logits with c = finalSoftcap (0: none).
  double attnSoftcap = 0, finalSoftcap = 0;
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

/// The description of `s` and the tensors it uses, with their shapes.
void writeDecoder(const DecoderSpec &s, std::string &tfm,
                  std::vector<Use> &uses);

/// The language's name of a block-quantised file dtype that tfc runs as
/// stored (on its int8 kernels: every block format tfc reads), or "" for
/// float types.
std::string quantStorage(tfc::rt::DType d);

/// What the writer cannot express (fused QKV with biases, heads not a
/// multiple of the key/value heads, an odd rotary dimension).
bool checkDecoder(DecoderSpec &s, const std::string &file, std::string &error);

/// RoPE's base and scaling as transformers defines them (none, linear,
/// llama3): `rope_theta` + `rope_scaling` (transformers 4), or
/// `rope_parameters` holding both (transformers 5).
bool readRope(const Json &config, const std::string &file, double &theta,
              RopeScaling &out, std::string &error);

/// The config.json keys every transformers decoder shares; `head_dim`
/// defaults to `defaultHeadDim`, or hidden_size / heads when it is 0.
void readDecoderSizes(ConfigReader &r, DecoderSpec &s,
                      int64_t defaultHeadDim = 0);

} // namespace tfc::importer::detail

#endif // TFC_LIB_IMPORT_DECODER_H
