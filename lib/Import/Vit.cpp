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
    << "  x = reshape(pixel_values, [batch, channels, grid, patch, grid, "
       "patch])\n"
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

} // namespace tfc::importer::detail
