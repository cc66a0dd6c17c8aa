//===- tfc-weights.cpp - Deterministic weights for a compiled model -------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//   tfc-weights model.so -o w.safetensors [--seed N] [--scale F]
//               [--dtype f32|f64|f16|bf16]
//   tfc-weights model.so --manifest
//
// Writes pseudo-random values for every weight in the model's metadata with
// the recipe of WeightInit.h, which is the reference interpreter's
// randomWeights(seed): with the same seed, tfc-interpret and a compiled model
// run on these weights compute the same function. --manifest prints the
// weights the model expects (name, dtype, shape) as JSON. The model is only
// inspected, so this works for models compiled for other CPUs. Links libtfcrt
// only, no LLVM.
//
//===----------------------------------------------------------------------===//

#include "tfc/Formats/Json.h"
#include "tfc/Formats/SafeTensors.h"
#include "tfc/Runtime/ModelMetadata.h"
#include "tfc/Runtime/WeightInit.h"
#include "tfc/Runtime/tfc.h"

#include "CommandLine.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

using namespace tfc::rt;

namespace {

const char *const kUsage =
    R"(usage: tfc-weights MODEL.so -o FILE.safetensors [options]
       tfc-weights MODEL.so --manifest

Writes deterministic pseudo-random weights for every weight of a model
compiled by tfc-compile: the values of the reference interpreter's random
weights (tfc-interpret --seed N), so both sides agree.

options:
  -o, --output FILE     the .safetensors file to write (written whole, or
                        not at all)
      --seed N          the seed (default 0)
      --scale F         multiply every value by F (default 1; other values
                        no longer match the interpreter)
      --dtype D         store float weights as D (f32, f64, f16 or bf16)
                        instead of the model's dtype; the runtime converts
                        them when loading
      --manifest        print the weights the model expects as JSON
  -h, --help            this text

exit status: 0 on success, 1 on any error.
)";

[[noreturn]] void fail(const std::string &message) {
  std::fprintf(stderr, "tfc-weights: error: %s\n", message.c_str());
  std::exit(1);
}

} // namespace

int main(int argc, char **argv) {
  std::string model, output;
  uint64_t seed = 0;
  double scale = 1.0;
  bool manifest = false, haveDType = false;
  tfc_dtype storeAs = TFC_F32;
  std::string dtypeName;
  tfc::tools::CommandLine cli("tfc-weights", kUsage);
  cli.add_option("model", model);
  cli.add_option("-o,--output", output);
  cli.add_option("--seed", seed)->transform(tfc::tools::nonNegativeInteger());
  cli.add_option("--scale", scale)->check(tfc::tools::finiteNumber());
  cli.add_option("--dtype", dtypeName)->check([](const std::string &v) {
    const DTypeTraits *t = dtypeByName(v);
    return t && t->isFloat && t->isModelType()
               ? std::string()
               : "needs f32, f64, f16 or bf16, not '" + v + "'";
  });
  cli.add_flag("--manifest", manifest);
  cli.parseOrExit(argc, argv);
  if (!dtypeName.empty()) {
    storeAs = dtypeByName(dtypeName)->api;
    haveDType = true;
  }
  if (model.empty())
    fail("no model given\n" + std::string(kUsage));
  if (!manifest && output.empty())
    fail("no output file: give -o FILE.safetensors (or --manifest)");

  tfc_model *m = nullptr;
  if (tfc_model_inspect(model.c_str(), &m) != TFC_OK)
    fail(tfc_last_error());
  tfc_model_info info;
  tfc_model_get_info(m, &info);

  std::vector<tfc_tensor_info> weights(info.num_weights);
  for (size_t i = 0; i < weights.size(); ++i)
    tfc_model_weight_info(m, i, &weights[i]);

  if (manifest) {
    std::printf("{\"model\": %s, \"weights\": [",
                json::quote(info.name).c_str());
    for (size_t i = 0; i < weights.size(); ++i) {
      const tfc_tensor_info &w = weights[i];
      std::printf("%s\n  {\"name\": %s, \"dtype\": \"%s\", \"shape\": [",
                  i ? "," : "", json::quote(w.name).c_str(),
                  tfc_dtype_name(w.dtype));
      for (int k = 0; k < w.rank; ++k)
        std::printf("%s%lld", k ? ", " : "", static_cast<long long>(w.dims[k]));
      std::printf("]}");
    }
    std::printf("%s]}\n", weights.empty() ? "" : "\n");
    tfc_model_free(m);
    return 0;
  }

  std::vector<std::vector<uint8_t>> data(weights.size());
  std::vector<TensorToWrite> tensors;
  for (size_t i = 0; i < weights.size(); ++i) {
    const tfc_tensor_info &w = weights[i];
    tfc_dtype d =
        haveDType && dtypeTraits(w.dtype)->isFloat ? storeAs : w.dtype;
    // Quantised weights are written as f32: binding quantises them.
    if (dtypeTraits(d)->quantized)
      d = haveDType ? storeAs : TFC_F32;
    std::vector<int64_t> shape(w.dims, w.dims + w.rank);
    uint64_t count = 1;
    for (int64_t s : shape)
      count *= static_cast<uint64_t>(s);
    size_t size = tfc_dtype_size(d);
    if (count > (UINT64_C(1) << 40) / size)
      fail(std::string("weight '") + w.name + "' is too large to generate");
    data[i].resize(count * size);
    uint8_t *p = data[i].data();
    generateWeight(w.name, shape, seed, [&](double v) {
      dtypeStore(d, p, 0, scale == 1.0 ? v : v * scale + 0.0); // no -0
      p += size;
    });
    tensors.push_back({w.name, dtypeTraits(d)->type, shape, data[i].data()});
  }
  std::map<std::string, std::string> metadata = {
      {"generator", "tfc-weights"},
      {"model", info.name},
      {"seed", std::to_string(seed)}};
  if (scale != 1.0)
    metadata["scale"] = std::to_string(scale);
  std::string error;
  if (!writeSafeTensors(output, tensors, metadata, error))
    fail(error);
  tfc_model_free(m);
  return 0;
}
