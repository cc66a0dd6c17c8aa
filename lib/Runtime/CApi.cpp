//===- CApi.cpp - The C functions of tfc.h --------------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Thin wrappers: argument checks, the thread's last error, and a guard that
// turns C++ exceptions (std::bad_alloc from a container) into a status, so
// that no exception crosses the C boundary.
//
//===----------------------------------------------------------------------===//

#include "Model.h"

#include "tfc/Runtime/ThreadPool.h"

#include <cstring>
#include <new>

using namespace tfc::rt;

namespace {

thread_local std::string lastError;

tfc_status nullModel() {
  return setError(TFC_ERR_INVALID_ARGUMENT, "the model is NULL");
}

void describe(const TensorSpec &spec, tfc_tensor_info *out) {
  *out = tfc_tensor_info();
  out->name = spec.name.c_str();
  out->dtype = spec.dtype;
  out->rank = static_cast<int32_t>(spec.shape.size());
  for (size_t k = 0; k < spec.shape.size(); ++k) {
    const DimSpec &d = spec.shape[k];
    out->dims[k] = d.size;
    out->dim_names[k] = d.name.empty() ? nullptr : d.name.c_str();
    out->dim_max[k] = d.name.empty() ? -1 : d.max;
  }
  out->bound = spec.bound;
}

const EntrySpec *entryAt(const tfc_model *model, size_t entry) {
  return model && entry < model->spec.entries.size()
             ? &model->spec.entries[entry]
             : nullptr;
}

} // namespace

tfc_status tfc::rt::setError(tfc_status status, std::string message) {
  try {
    lastError = std::move(message);
  } catch (...) {
    lastError.clear();
  }
  return status;
}

extern "C" {

const char *tfc_status_name(tfc_status status) {
  switch (status) {
  case TFC_OK:
    return "TFC_OK";
  case TFC_ERR_INVALID_ARGUMENT:
    return "TFC_ERR_INVALID_ARGUMENT";
  case TFC_ERR_IO:
    return "TFC_ERR_IO";
  case TFC_ERR_INVALID_MODEL:
    return "TFC_ERR_INVALID_MODEL";
  case TFC_ERR_UNSUPPORTED_HOST:
    return "TFC_ERR_UNSUPPORTED_HOST";
  case TFC_ERR_WEIGHTS:
    return "TFC_ERR_WEIGHTS";
  case TFC_ERR_INPUT:
    return "TFC_ERR_INPUT";
  case TFC_ERR_OUT_OF_MEMORY:
    return "TFC_ERR_OUT_OF_MEMORY";
  case TFC_ERR_INTERNAL:
    return "TFC_ERR_INTERNAL";
  case TFC_ERR_CANCELLED:
    return "TFC_ERR_CANCELLED";
  case TFC_STATUS_MAX_ENUM:
    break;
  }
  return "?";
}

const char *tfc_dtype_name(tfc_dtype dtype) {
  const DTypeTraits *t = dtypeTraits(dtype);
  return t ? t->name : "?";
}

size_t tfc_dtype_size(tfc_dtype dtype) {
  const DTypeTraits *t = dtypeTraits(dtype);
  return t && t->blockElements == 1 ? t->blockBytes : 0;
}

int tfc_dtype_block(tfc_dtype dtype, size_t *block_elements,
                    size_t *block_bytes) {
  const DTypeTraits *t = dtypeTraits(dtype);
  if (!t)
    return 0;
  if (block_elements)
    *block_elements = t->blockElements;
  if (block_bytes)
    *block_bytes = t->blockBytes;
  return 1;
}

const char *tfc_last_error(void) { return lastError.c_str(); }

tfc_status tfc_model_load(const char *so_path, tfc_model **out) {
  return guarded([&] { return tfc_model::load(so_path, true, out); });
}

tfc_status tfc_model_inspect(const char *so_path, tfc_model **out) {
  return guarded([&] { return tfc_model::load(so_path, false, out); });
}

tfc_status tfc_model_load_weights(tfc_model *model,
                                  const char *safetensors_path) {
  if (!model)
    return nullModel();
  return guarded([&] { return model->bindWeights(safetensors_path); });
}

tfc_status tfc_model_save_weights(tfc_model *model, const char *path) {
  if (!model)
    return nullModel();
  return guarded([&] { return model->saveWeights(path); });
}

const char *tfc_model_notes(const tfc_model *model) {
  return model ? model->notes.c_str() : "";
}

const char *tfc_model_cpu_variant(const tfc_model *model) {
  if (!model || model->variant.size() < 2)
    return "";
  return model->variant.c_str() + 2;
}

void tfc_model_free(tfc_model *model) { delete model; }

tfc_status tfc_set_num_threads(int n) {
  if (n < 0 || n > static_cast<int>(ThreadPool::kMaxThreads))
    return setError(TFC_ERR_INVALID_ARGUMENT,
                    "the thread count " + std::to_string(n) +
                        " is not in [0, " +
                        std::to_string(ThreadPool::kMaxThreads) + "]");
  return guarded([&] {
    unsigned threads =
        n == 0 ? ThreadPool::defaultThreads() : static_cast<unsigned>(n);
    if (!ThreadPool::global().resize(threads))
      return setError(TFC_ERR_INVALID_ARGUMENT,
                      "the thread count cannot change inside an entry point");
    return TFC_OK;
  });
}

int tfc_num_threads(void) {
  return static_cast<int>(ThreadPool::global().numThreads());
}

tfc_status tfc_model_get_info(const tfc_model *model, tfc_model_info *out) {
  if (!model)
    return nullModel();
  if (!out)
    return setError(TFC_ERR_INVALID_ARGUMENT, "the output pointer is NULL");
  const ModelSpec &spec = model->spec;
  *out = tfc_model_info();
  out->name = spec.name.c_str();
  out->triple = spec.target.triple.c_str();
  out->cpu = spec.target.cpu.c_str();
  out->features = spec.target.features.c_str();
  out->device = spec.target.device.c_str();
  out->num_entries = spec.entries.size();
  out->num_weights = spec.weights.size();
  for (const TensorSpec &w : spec.weights)
    out->weight_bytes += w.byteSize();
  out->num_constants = spec.constants.size();
  for (const ConstantSpec &c : spec.constants)
    out->constant_bytes += c.bytes;
  return TFC_OK;
}

const char *tfc_model_metadata_json(const tfc_model *model) {
  return model ? model->metadataText.c_str() : "";
}

int64_t tfc_model_find_entry(const tfc_model *model, const char *name) {
  return model && name ? model->spec.findEntry(name) : -1;
}

const char *tfc_model_entry_name(const tfc_model *model, size_t entry) {
  const EntrySpec *e = entryAt(model, entry);
  return e ? e->name.c_str() : nullptr;
}

size_t tfc_entry_num_inputs(const tfc_model *model, size_t entry) {
  const EntrySpec *e = entryAt(model, entry);
  return e ? e->inputs.size() : 0;
}

size_t tfc_entry_num_outputs(const tfc_model *model, size_t entry) {
  const EntrySpec *e = entryAt(model, entry);
  return e ? e->outputs.size() : 0;
}

static tfc_status argumentInfo(const tfc_model *model, size_t entry,
                               size_t index, tfc_tensor_info *out, bool input) {
  if (!model)
    return nullModel();
  const EntrySpec *e = entryAt(model, entry);
  if (!e)
    return setError(TFC_ERR_INVALID_ARGUMENT,
                    "entry index " + std::to_string(entry) +
                        " is out of range (the model has " +
                        std::to_string(model->spec.entries.size()) + ")");
  const std::vector<TensorSpec> &list = input ? e->inputs : e->outputs;
  if (index >= list.size())
    return setError(TFC_ERR_INVALID_ARGUMENT,
                    std::string(input ? "input" : "output") + " index " +
                        std::to_string(index) + " is out of range (entry '" +
                        e->name + "' has " + std::to_string(list.size()) + ")");
  if (!out)
    return setError(TFC_ERR_INVALID_ARGUMENT, "the output pointer is NULL");
  describe(list[index], out);
  return TFC_OK;
}

tfc_status tfc_entry_input_info(const tfc_model *model, size_t entry,
                                size_t index, tfc_tensor_info *out) {
  return argumentInfo(model, entry, index, out, true);
}

int tfc_entry_input_is_state(const tfc_model *model, size_t entry,
                             size_t index) {
  if (!model || entry >= model->spec.entries.size() ||
      index >= model->spec.entries[entry].inputs.size())
    return 0;
  return model->spec.entries[entry].inputs[index].state ? 1 : 0;
}

tfc_status tfc_entry_output_info(const tfc_model *model, size_t entry,
                                 size_t index, tfc_tensor_info *out) {
  return argumentInfo(model, entry, index, out, false);
}

tfc_status tfc_model_weight_info(const tfc_model *model, size_t index,
                                 tfc_tensor_info *out) {
  if (!model)
    return nullModel();
  if (index >= model->spec.weights.size())
    return setError(TFC_ERR_INVALID_ARGUMENT,
                    "weight index " + std::to_string(index) +
                        " is out of range (the model has " +
                        std::to_string(model->spec.weights.size()) + ")");
  if (!out)
    return setError(TFC_ERR_INVALID_ARGUMENT, "the output pointer is NULL");
  describe(model->spec.weights[index], out);
  return TFC_OK;
}

tfc_status tfc_run(tfc_model *model, const char *entry,
                   const tfc_tensor *inputs, size_t num_inputs,
                   tfc_tensor *outputs, size_t num_outputs) {
  if (!model) {
    if (outputs)
      for (size_t i = 0; i < num_outputs; ++i)
        outputs[i] = tfc_tensor();
    return nullModel();
  }
  return guarded([&] {
    return model->run(entry, inputs, num_inputs, outputs, num_outputs);
  });
}

tfc_status tfc_run_into(tfc_model *model, const char *entry,
                        const tfc_tensor *inputs, size_t num_inputs,
                        tfc_tensor *outputs, size_t num_outputs) {
  if (!model)
    return nullModel();
  return guarded([&] {
    return model->run(entry, inputs, num_inputs, outputs, num_outputs,
                      nullptr, /*into=*/true);
  });
}

void tfc_tensor_release(tfc_tensor *tensor) {
  if (!tensor)
    return;
  alignedFree(tensor->owner);
  tensor->owner = nullptr;
  tensor->data = nullptr;
}

tfc_status tfc_model_memory_stats(const tfc_model *model,
                                  tfc_memory_stats *out) {
  if (!model)
    return nullModel();
  if (!out)
    return setError(TFC_ERR_INVALID_ARGUMENT, "the output pointer is NULL");
  auto *m = const_cast<tfc_model *>(model);
  std::lock_guard<std::mutex> lock(m->mutex);
  // A CUDA model's intermediates are planned in device memory.
  const PlannerStats &s =
      m->cuda ? m->cuda->planner.stats() : m->planner.stats();
  *out = tfc_memory_stats();
  out->mode = s.mode;
  out->allocs = s.allocs;
  out->alloc_bytes = s.allocBytes;
  out->arena_allocs = s.arenaAllocs;
  out->heap_allocs = s.heapAllocs;
  out->output_allocs = s.outputAllocs;
  out->arena_bytes = s.arenaBytes;
  out->planned_bytes = s.plannedBytes;
  out->peak_live_bytes = s.peakLiveBytes;
  out->num_plans = s.numPlans;
  out->arena_capacity = s.arenaCapacity;
  out->weight_bytes_mapped = m->weightBytesMapped;
  out->weight_bytes_copied = m->weightBytesCopied;
  return TFC_OK;
}

tfc_status tfc_model_resident_stats(const tfc_model *model,
                                    tfc_resident_stats *out) {
  if (!model || !out)
    return setError(TFC_ERR_INVALID_ARGUMENT, "null argument");
  if (out->struct_size < sizeof(size_t))
    return setError(TFC_ERR_INVALID_ARGUMENT,
                    "tfc_resident_stats.struct_size is not set (expected "
                    "sizeof(tfc_resident_stats))");
  auto *m = const_cast<tfc_model *>(model);
  std::lock_guard<std::mutex> lock(m->mutex);
  tfc_resident_stats s = {};
  s.struct_size = sizeof(s);
  s.weight_bytes =
      m->weightBytesMapped + m->weightBytesCopied - m->weightBytesReleased;
  s.constant_bytes = m->constantBytes;
  s.released_weight_bytes = m->weightBytesReleased;
  s.packed_file_bytes = m->packedFileBytes;
  s.arena_bytes = m->cuda ? m->cuda->planner.stats().arenaCapacity
                          : m->planner.stats().arenaCapacity;
  size_t n = out->struct_size < sizeof(s) ? out->struct_size : sizeof(s);
  std::memcpy(out, &s, n);
  out->struct_size = n;
  return TFC_OK;
}

tfc_status tfc_model_last_device_ms(const tfc_model *model, double *out) {
  if (!model || !out)
    return setError(TFC_ERR_INVALID_ARGUMENT, "null argument");
  if (!model->cuda)
    return setError(TFC_ERR_INVALID_ARGUMENT,
                    "model '" + model->spec.name + "' does not run on CUDA");
  if (model->cuda->lastDeviceMs < 0)
    return setError(TFC_ERR_INVALID_ARGUMENT,
                    "model '" + model->spec.name +
                        "' has no timed run yet");
  *out = model->cuda->lastDeviceMs;
  return TFC_OK;
}

} // extern "C"
