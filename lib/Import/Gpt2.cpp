//===- Gpt2.cpp - GPT-2 ---------------------------------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// gpt2 directories (GPT2LMHeadModel).
//
//===----------------------------------------------------------------------===//

#include "Common.h"

#include <cmath>
#include <sstream>

namespace tfc::importer::detail {

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
  const Dim D{"d_model", d}, F{"d_ff", inner};
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

} // namespace tfc::importer::detail
