//===- tfc-metadata-fuzzer.cpp - libFuzzer target of the model metadata ---===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Arbitrary bytes through parseModelMetadata, the checks every model
// library's `tfc_model_metadata` JSON gets before the runtime trusts it (ABI
// version, required fields, dtypes, ranks, names, dims, bounds, constant
// sizes and alignments), then through what the runtime does with an
// accepted spec: shapes printed, entries looked up, the host checked
// against the target. An accepted spec must keep the parser's promises
// (ranks up to TFC_MAX_RANK, unique names, declared dims, power-of-two
// alignments, weight sizes without overflow). Errors are the expected
// outcome for most inputs; a crash, a sanitizer report or a broken promise
// (a trap) is a bug.
//
//   tfc-metadata-fuzzer -max_total_time=600 CORPUS_DIR \
//       tools/tfc-metadata-fuzzer/seeds
//
//===----------------------------------------------------------------------===//

#include "tfc/Runtime/ModelMetadata.h"
#include "tfc/Schemas/ModelABI.h"

#include <cstdint>
#include <cstdio>
#include <set>
#include <string>
#include <string_view>

using namespace tfc::rt;

namespace {

[[noreturn]] void broken(const char *what, const std::string &detail) {
  std::fprintf(stderr, "broken promise: %s: %s\n", what, detail.c_str());
  __builtin_trap();
}

void checkTensor(const TensorSpec &t, const std::set<std::string> &dims,
                 bool weight) {
  if (t.shape.size() > TFC_MAX_RANK)
    broken("rank above TFC_MAX_RANK", t.name);
  const DTypeTraits *traits = dtypeTraits(t.dtype);
  if (!traits)
    broken("an unknown dtype", t.name);
  if (traits->quantized && !weight)
    broken("a block-quantised input or output", t.name);
  if (traits->quantized &&
      (t.shape.empty() || t.shape.back().size % traits->blockElements != 0))
    broken("a block-quantised weight whose last dim is not whole blocks",
           t.name);
  for (const DimSpec &d : t.shape) {
    if (!d.isStatic() && !d.name.empty() && !dims.count(d.name))
      broken("an undeclared dim", t.name + ": " + d.name);
    if (weight && !d.isStatic())
      broken("a weight with a dynamic dim", t.name);
  }
  if (t.bound >= 0 && t.dtype != TFC_I64 && t.dtype != TFC_I32)
    broken("a bound on a non-integer tensor", t.name);
  (void)t.shapeString();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  ModelSpec spec;
  std::string error;
  if (!parseModelMetadata(text, spec, error)) {
    if (error.empty())
      broken("rejected metadata has no message", "");
    return 0;
  }
  if (spec.abi != TFC_ABI_VERSION)
    broken("another ABI version accepted", std::to_string(spec.abi));

  std::set<std::string> dims, names;
  for (const NamedDimSpec &d : spec.dims)
    if (!dims.insert(d.name).second)
      broken("a dim declared twice", d.name);
  for (const TensorSpec &w : spec.weights) {
    checkTensor(w, dims, /*weight=*/true);
    if (!names.insert(w.name).second)
      broken("a weight named twice", w.name);
    (void)w.numElements();
  }
  for (const ConstantSpec &c : spec.constants)
    if (c.align == 0 || (c.align & (c.align - 1)) != 0 || c.align > 4096)
      broken("a constant alignment that is not a power of two up to 4096",
             std::to_string(c.align));
  std::set<std::string> entries, symbols;
  for (const EntrySpec &e : spec.entries) {
    if (!entries.insert(e.name).second || !symbols.insert(e.symbol).second)
      broken("an entry or symbol named twice", e.name);
    if (spec.findEntry(e.name) < 0)
      broken("findEntry misses an entry", e.name);
    std::set<std::string> args;
    for (const TensorSpec &t : e.inputs) {
      checkTensor(t, dims, /*weight=*/false);
      if (!args.insert(t.name).second)
        broken("an argument named twice", e.name + ": " + t.name);
    }
    for (const TensorSpec &t : e.outputs)
      checkTensor(t, dims, /*weight=*/false);
  }
  // What tfc_model_load does next with an accepted spec.
  (void)checkHostTarget(spec.target);
  return 0;
}
