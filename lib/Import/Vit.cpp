//===- Vit.cpp - Vision Transformer ---------------------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// vit directories (ViTModel, ViTForImageClassification).
//
//===----------------------------------------------------------------------===//

#include "Common.h"

#include <cmath>
#include <sstream>

namespace tfc::importer::detail {

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
            " is not a multiple of num_attention_heads " +
            std::to_string(heads);
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
  const Dim D{"d_model", d}, F{"d_ff", dFF};
  WeightDecls w(layers);
  GenericBlock norm("norm", "x");
  norm.weight("g", {D}, ".weight").weight("b", {D}, ".bias");
  GenericBlock dense("dense", "x", {"d_out: int", "d_in: int"});
  dense.weight("w", {{"d_out"}, {"d_in"}}, ".weight")
      .weight("b", {{"d_out"}}, ".bias");
  GenericBlock project("project", "x");
  project.weight("w", {D, D}, ".weight");
  Prefix p{"p", pre + "encoder.layer.{l}"};
  auto qkv = [&](const char *which) {
    Prefix::Name name = p(std::string(".attention.attention.") + which);
    return qkvBias ? dense.call(w, "h", name, {D, D})
                   : project.call(w, "h", name);
  };
  std::ostringstream o;
  o << hfHeader(c, classifier ? "ViTForImageClassification" : "ViTModel",
                {"model_type", "image_size", "patch_size", "num_channels",
                 "hidden_size", "num_hidden_layers", "num_attention_heads",
                 "intermediate_size", "layer_norm_eps", "hidden_act",
                 "qkv_bias"})
    << "# Patches of patch x patch pixels through a linear projection (the\n"
       "# checkpoint's stride-patch convolution), a class token first, "
       "learned\n"
       "# positions, pre-norm layers, a final LayerNorm.\n"
    << "\nmodel " << identifier(baseName(c.dir)) << "\n\n"
    << "const image = " << image << "\nconst patch = " << patch
    << "\nconst channels = " << channels << "\nconst grid = image / patch"
    << "\nconst patches = grid * grid\nconst d_model = " << d
    << "\nconst heads = " << heads << "\nconst layers = " << layers
    << "\nconst d_ff = " << dFF << "\nconst eps = " << fmtFloat(eps)
    << "\n\ndim batch\n\n"
    << norm.text("  return layer_norm(x, g, b, eps = eps)\n")
    << dense.text("  return linear(x, w, b)\n");
  if (!qkvBias)
    o << project.text("  return linear(x, w)\n");
  o << "block layer(x, l: int) {\n"
    << p.line() << "  h = " << norm.call(w, "x", p(".layernorm_before")) << "\n"
    << "  q = " << qkv("query") << "\n"
    << "  k = " << qkv("key") << "\n"
    << "  v = " << qkv("value") << "\n"
    << "  a = attention(q, k, v, heads = heads)\n"
    << "  x = x + " << dense.call(w, "a", p(".attention.output.dense"), {D, D})
    << "\n"
    << "  h = " << norm.call(w, "x", p(".layernorm_after")) << "\n"
    << "  h = " << dense.call(w, "h", p(".intermediate.dense"), {F, D}) << "\n"
    << "  h = " << actCall << "\n"
    << "  return x + " << dense.call(w, "h", p(".output.dense"), {D, F})
    << "\n}\n\n"
    << "block encoder(pixel_values: [batch, channels, image, image]) {\n"
    << w("w", {D, {"channels", channels}, {"patch", patch}, {"patch", patch}},
         pre + "embeddings.patch_embeddings.projection.weight")
    << w("b", {D}, pre + "embeddings.patch_embeddings.projection.bias")
    << w("cls", {{"1", 1}, {"1", 1}, D}, pre + "embeddings.cls_token")
    << w("pos", {{"1", 1}, {"patches + 1", patches + 1}, D},
         pre + "embeddings.position_embeddings")
    << "  # [batch, patches, channels * patch * patch], patches row by row\n"
    << "  x = reshape(pixel_values, [batch, channels, grid, patch, grid, "
       "patch])\n"
    << "  x = transpose(x, perm = [0, 2, 4, 1, 3, 5])\n"
    << "  x = reshape(x, [batch, patches, channels * patch * patch])\n"
    << "  x = linear(x, reshape(w, [d_model, channels * patch * patch]), b)\n"
    << "  first = slice(x, 0, 1, axis = 1) * 0.0 + cls   # one class token per "
       "image\n"
    << "  x = concat(first, x, axis = 1) + pos\n"
    << "  for l in 0..layers {\n    x = layer(x, l)\n  }\n"
    << "  return " << norm.call(w, "x", pre + "layernorm") << "\n}\n\n"
    << "# The last hidden states" << (pooler ? " and the pooler output" : "")
    << " (image: [batch, channels, height, width]).\n"
    << "entry forward(pixel_values: [batch, channels, image, image]) {\n"
    << "  last_hidden_state = encoder(pixel_values)\n";
  if (pooler)
    o << "  first = reshape(slice(last_hidden_state, 0, 1, axis = 1), [batch, "
         "d_model])\n"
      << "  pooler_output = tanh("
      << dense.call(w, "first", pre + "pooler.dense", {D, D}) << ")\n"
      << "  return last_hidden_state, pooler_output\n}\n";
  else
    o << "  return last_hidden_state\n}\n";
  if (classifier) {
    Dim L{std::to_string(labels), labels};
    o << "\n# Image classification: the class token's final state through the "
         "classifier;\n# logits and their softmax over the "
      << labels << " labels.\n"
      << "entry classify(pixel_values: [batch, channels, image, image]) {\n"
      << w("w", {L, D}, "classifier.weight") << w("b", {L}, "classifier.bias")
      << "  hidden = encoder(pixel_values)\n"
      << "  first = reshape(slice(hidden, 0, 1, axis = 1), [batch, d_model])\n"
      << "  logits = linear(first, w, b)\n"
      << "  probabilities = softmax(logits)\n"
      << "  return logits, probabilities\n}\n";
  }
  out.tfm = o.str();
  // Each weight was declared once, above: those are what must match.
  return checkUses(*c.weights, w.uses(), c.configPath, error);
}

} // namespace tfc::importer::detail
