//===- Run.cpp - Checking inputs and running entry points -----------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// tfc_run checks the inputs against the entry's metadata before the model
// sees them (a compiled model trusts its inputs: an id out of range would
// read out of bounds), builds the memref descriptors, runs the entry under
// the model's memory planner, and turns the descriptors the entry filled
// into caller-owned outputs: an output in a heap block the run allocated is
// adopted as it is; anything else (a view, a strided result, a block shared
// with another output) is copied.
//
//===----------------------------------------------------------------------===//

#include "Model.h"

#include "tfc/Runtime/Strided.h"

#include <cstdio>
#include <cstring>

using namespace tfc::rt;

namespace {

/// Sizes of named dims seen so far in a run, with who set them. A few
/// entries, searched linearly: no allocation on the success path.
struct NamedSizes {
  struct Seen {
    const std::string *name;
    int64_t size;
    const TensorSpec *by;
    bool byOutput;
  };
  std::vector<Seen> seen;

  /// The earlier size of `name`, or null after recording `size` for it.
  const Seen *check(const std::string &name, int64_t size, const TensorSpec &by,
                    bool byOutput) {
    for (const Seen &s : seen)
      if (*s.name == name)
        return s.size == size ? nullptr : &s;
    seen.push_back({&name, size, &by, byOutput});
    return nullptr;
  }
  static std::string who(const Seen &s) {
    return (s.byOutput ? "output '" : "input '") + s.by->name + "'";
  }
};

std::string indexString(uint64_t flat, const int64_t *shape, int32_t rank) {
  std::vector<int64_t> index(rank);
  for (int32_t k = rank - 1; k >= 0; --k) {
    if (shape[k] > 0) {
      index[k] = static_cast<int64_t>(flat % static_cast<uint64_t>(shape[k]));
      flat /= static_cast<uint64_t>(shape[k]);
    }
  }
  return shapeString(index.data(), index.size());
}

/// Checks an input's dtype and shape; sets `elements`. Messages are built
/// only on failure.
bool checkShape(const TensorSpec &spec, const tfc_tensor &t, NamedSizes &named,
                uint64_t &elements, std::string &error) {
  auto where = [&] { return "input '" + spec.name + "'"; };
  if (static_cast<unsigned>(t.dtype) > TFC_BOOL) {
    error = where() + ": dtype " + std::to_string(static_cast<int>(t.dtype)) +
            " is not a tfc_dtype";
    return false;
  }
  if (t.dtype != spec.dtype) {
    error = where() + ": dtype is " + tfc_dtype_name(t.dtype) +
            ", but the model expects " + tfc_dtype_name(spec.dtype);
    return false;
  }
  if (t.rank != static_cast<int32_t>(spec.shape.size())) {
    error = where() + ": rank is " + std::to_string(t.rank) +
            ", but the model expects rank " +
            std::to_string(spec.shape.size()) + " " + spec.shapeString();
    return false;
  }
  elements = 1;
  bool overflow = false;
  for (int32_t k = 0; k < t.rank; ++k) {
    int64_t s = t.shape[k];
    const DimSpec &d = spec.shape[k];
    auto dim = [&] {
      return where() + ": dim " + std::to_string(k) +
             (d.name.empty() ? "" : " ('" + d.name + "')") + " is " +
             std::to_string(s);
    };
    if (s < 0) {
      error = dim() + ", a negative size";
      return false;
    }
    if (d.isStatic() && s != d.size) {
      error = dim() + ", but the model expects " + std::to_string(d.size) +
              " (shape " + spec.shapeString() + ")";
      return false;
    }
    if (!d.name.empty()) {
      if (d.max >= 0 && s > d.max) {
        error =
            dim() + ", but the model allows at most " + std::to_string(d.max);
        return false;
      }
      if (const NamedSizes::Seen *other = named.check(d.name, s, spec, false)) {
        error = dim() + ", but " + NamedSizes::who(*other) + " has '" + d.name +
                "' = " + std::to_string(other->size);
        return false;
      }
    }
    if (s != 0 && elements > (UINT64_C(1) << 62) / static_cast<uint64_t>(s))
      overflow = true;
    elements *= static_cast<uint64_t>(s);
  }
  if (overflow || elements > (UINT64_C(1) << 62) / tfc_dtype_size(t.dtype)) {
    error = where() + " is too large";
    return false;
  }
  return true;
}

/// Checks integer bounds and booleans.
bool checkValues(const TensorSpec &spec, const tfc_tensor &t, const void *data,
                 uint64_t elements, std::string &error) {
  auto bad = [&](int64_t value, uint64_t i, const std::string &expected) {
    error = "input '" + spec.name + "' holds " + std::to_string(value) +
            " at " + indexString(i, t.shape, t.rank) + "; expected " + expected;
    return false;
  };
  if (spec.bound >= 0) {
    // A bound of 2 is a 1/0 attention mask or token types.
    std::string range =
        spec.bound == 2 ? "0 or 1"
                        : "values in [0, " + std::to_string(spec.bound) + ")";
    if (t.dtype == TFC_I64) {
      auto *p = static_cast<const int64_t *>(data);
      for (uint64_t i = 0; i < elements; ++i)
        if (p[i] < 0 || p[i] >= spec.bound)
          return bad(p[i], i, range);
    } else if (t.dtype == TFC_I32) {
      auto *p = static_cast<const int32_t *>(data);
      for (uint64_t i = 0; i < elements; ++i)
        if (p[i] < 0 || p[i] >= spec.bound)
          return bad(p[i], i, range);
    }
  }
  if (t.dtype == TFC_BOOL) {
    auto *p = static_cast<const uint8_t *>(data);
    for (uint64_t i = 0; i < elements; ++i)
      if (p[i] > 1)
        return bad(p[i], i, "0 or 1 (a bool)");
  }
  return true;
}

/// "8.0 GiB (8589934592 bytes)".
/// The `past` input of a cached entry (a scalar, or [batch] in the rows
/// form) against the caches: 0 <= past and past + seq <= context, seq the
/// tokens of the run (the sequence dim of its first token input).
bool checkPast(const EntrySpec &entry, const tfc_tensor *inputs,
               const std::vector<const void *> &data, const NamedSizes &named,
               std::string &error) {
  size_t past = entry.inputs.size();
  int64_t seq = -1;
  for (size_t i = 0; i < entry.inputs.size(); ++i) {
    const TensorSpec &in = entry.inputs[i];
    if (in.state)
      continue;
    if (in.name == "past" && in.dtype == TFC_I64 && in.shape.size() <= 1)
      past = i;
    else if (seq < 0 && in.shape.size() >= 2 && !in.shape[1].isStatic())
      seq = inputs[i].shape[1];
  }
  int64_t context = -1;
  for (const NamedSizes::Seen &s : named.seen)
    if (*s.name == "context" && !s.byOutput && s.by->state)
      context = s.size;
  if (past == entry.inputs.size() || context < 0)
    return true;
  int64_t n = entry.inputs[past].shape.empty() ? 1 : inputs[past].shape[0];
  const int64_t *p = static_cast<const int64_t *>(data[past]);
  for (int64_t r = 0; r < n; ++r)
    if (p[r] < 0 || p[r] > context - std::max<int64_t>(seq, 0)) {
      error =
          "input 'past'" +
          (entry.inputs[past].shape.empty() ? std::string()
                                            : "[" + std::to_string(r) + "]") +
          " is " + std::to_string(p[r]) + ": with " +
          std::to_string(std::max<int64_t>(seq, 0)) +
          " new tokens it must be in [0, " +
          std::to_string(context - std::max<int64_t>(seq, 0)) +
          "] (the caches hold a context of " + std::to_string(context) + ")";
      return false;
    }
  return true;
}

std::string bytesString(int64_t bytes) {
  if (bytes < 0)
    return "a size beyond 2^63 bytes";
  char buf[64];
  static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int unit = -1;
  while (v >= 1024 && unit < 4) {
    v /= 1024;
    ++unit;
  }
  if (unit < 0)
    std::snprintf(buf, sizeof buf, "%lld bytes", static_cast<long long>(bytes));
  else
    std::snprintf(buf, sizeof buf, "%.1f %s (%lld bytes)", v, units[unit],
                  static_cast<long long>(bytes));
  return buf;
}

} // namespace

tfc_status tfc_model::run(const char *entryName, const tfc_tensor *inputs,
                          size_t numInputs, tfc_tensor *outputs,
                          size_t numOutputs,
                          const std::vector<bool> *resident, bool into) {
  if (outputs && !into)
    for (size_t i = 0; i < numOutputs; ++i)
      outputs[i] = tfc_tensor();
  if (!runnable)
    return setError(TFC_ERR_INVALID_ARGUMENT,
                    path + " was opened with tfc_model_inspect and cannot "
                           "run; load it with tfc_model_load");
  auto entries = [&] {
    std::string names;
    for (const EntrySpec &e : spec.entries)
      names += (names.empty() ? "" : ", ") + e.name;
    return names;
  };
  int64_t index = 0;
  if (!entryName) {
    if (spec.entries.size() != 1)
      return setError(TFC_ERR_INVALID_ARGUMENT,
                      "model '" + spec.name + "' has " +
                          std::to_string(spec.entries.size()) + " entries (" +
                          entries() + "); name the one to run");
  } else if ((index = spec.findEntry(entryName)) < 0) {
    return setError(TFC_ERR_INVALID_ARGUMENT,
                    "model '" + spec.name + "' has no entry '" + entryName +
                        "' (entries: " + entries() + ")");
  }
  const EntrySpec &entry = spec.entries[index];
  // One run at a time per model (the planner and the table are shared).
  std::lock_guard<std::mutex> lock(mutex);
  if (!ready)
    return setError(TFC_ERR_INVALID_ARGUMENT,
                    "model '" + spec.name +
                        "': the weights are not loaded (call "
                        "tfc_model_load_weights first)");
  if (numInputs != entry.inputs.size()) {
    std::string names;
    for (const TensorSpec &t : entry.inputs)
      names += (names.empty() ? "" : ", ") + t.name;
    return setError(TFC_ERR_INPUT,
                    "entry '" + entry.name + "' takes " +
                        std::to_string(entry.inputs.size()) + " input" +
                        (entry.inputs.size() == 1 ? "" : "s") + " (" + names +
                        "), but " + std::to_string(numInputs) +
                        (numInputs == 1 ? " was" : " were") + " given");
  }
  if (numOutputs != entry.outputs.size())
    return setError(TFC_ERR_INPUT,
                    "entry '" + entry.name + "' returns " +
                        std::to_string(entry.outputs.size()) + " output" +
                        (entry.outputs.size() == 1 ? "" : "s") +
                        ", but num_outputs is " + std::to_string(numOutputs));
  if ((numInputs && !inputs) || (numOutputs && !outputs))
    return setError(TFC_ERR_INVALID_ARGUMENT,
                    std::string(numInputs && !inputs ? "inputs" : "outputs") +
                        " is NULL");
  // The caller's output buffers: dtype and rank as the metadata says, data
  // aligned to the element; their shapes are checked after the run (sizes
  // the entry decides are known only then).
  std::vector<std::pair<void *, uint64_t>> destinations;
  if (into)
    for (size_t i = 0; i < numOutputs; ++i) {
      const TensorSpec &o = entry.outputs[i];
      const tfc_tensor &t = outputs[i];
      std::string bad;
      if (t.dtype != o.dtype)
        bad = std::string("has dtype ") + tfc_dtype_name(t.dtype) +
              ", the output is " + tfc_dtype_name(o.dtype);
      else if (t.rank != static_cast<int32_t>(o.shape.size()))
        bad = "has rank " + std::to_string(t.rank) + ", the output " +
              o.shapeString();
      else if (!t.data)
        bad = "has no data";
      else if (reinterpret_cast<uintptr_t>(t.data) % tfc_dtype_size(o.dtype))
        bad = "is not aligned to its element size";
      uint64_t bytes = tfc_dtype_size(o.dtype);
      for (int32_t k = 0; k < t.rank && bad.empty(); ++k) {
        if (t.shape[k] < 0)
          bad = "has a negative size";
        else
          bytes *= static_cast<uint64_t>(t.shape[k]);
      }
      if (!bad.empty())
        return setError(TFC_ERR_INVALID_ARGUMENT,
                        "the caller's buffer for output '" + o.name + "' " +
                            bad);
      destinations.push_back({t.data, bytes});
    }

  // Inputs: shapes first (so that a shape error is reported before a value
  // error of another input), then alignment, then values.
  NamedSizes named;
  std::vector<uint64_t> elements(numInputs);
  std::string error;
  for (size_t i = 0; i < numInputs; ++i)
    if (!checkShape(entry.inputs[i], inputs[i], named, elements[i], error))
      return setError(TFC_ERR_INPUT, error);
  std::vector<AlignedBuffer> copies;
  std::vector<const void *> data(numInputs);
  alignas(64) static char emptyInput[64];
  auto isResident = [&](size_t i) {
    return resident && i < resident->size() && (*resident)[i];
  };
  for (size_t i = 0; i < numInputs; ++i) {
    size_t size = tfc_dtype_size(inputs[i].dtype);
    data[i] = inputs[i].data;
    if (isResident(i))
      continue; // device memory: the session sized and aligned it
    if (elements[i] == 0) {
      data[i] = emptyInput;
      continue;
    }
    if (!data[i])
      return setError(TFC_ERR_INPUT,
                      "input '" + entry.inputs[i].name + "': data is NULL");
    if (reinterpret_cast<uintptr_t>(data[i]) % size != 0) {
      void *copy = alignedAlloc(elements[i] * size, 64);
      if (!copy)
        return setError(TFC_ERR_OUT_OF_MEMORY,
                        "out of memory aligning input '" +
                            entry.inputs[i].name + "'");
      copies.emplace_back(copy);
      std::memcpy(copy, data[i], elements[i] * size);
      data[i] = copy;
    }
    if (!checkValues(entry.inputs[i], inputs[i], data[i], elements[i], error))
      return setError(TFC_ERR_INPUT, error);
  }
  // A cached entry writes its new keys at `past` (one per row in the rows
  // form): every position must leave room for the tokens in the caches'
  // context, or the entry would write outside them.
  if (!checkPast(entry, inputs, data, named, error))
    return setError(TFC_ERR_INPUT, error);
  // The caller's output buffers must be memory of their own: the entry
  // writes them while it reads the inputs (and the other outputs) in place.
  auto overlaps = [](const void *a, uint64_t an, const void *b, uint64_t bn) {
    auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
    return an && bn && x < y + bn && y < x + an;
  };
  for (size_t o = 0; o < destinations.size(); ++o) {
    auto [ptr, bytes] = destinations[o];
    for (size_t i = 0; i < numInputs; ++i)
      if (!isResident(i) &&
          overlaps(ptr, bytes, inputs[i].data,
                   elements[i] * tfc_dtype_size(inputs[i].dtype)))
        return setError(TFC_ERR_INVALID_ARGUMENT,
                        "the caller's buffer for output '" +
                            entry.outputs[o].name + "' overlaps input '" +
                            entry.inputs[i].name + "'");
    for (size_t p = 0; p < o; ++p)
      if (overlaps(ptr, bytes, destinations[p].first, destinations[p].second))
        return setError(TFC_ERR_INVALID_ARGUMENT,
                        "the caller's buffers for outputs '" +
                            entry.outputs[p].name + "' and '" +
                            entry.outputs[o].name + "' overlap");
  }

  // Descriptors: contiguous row-major inputs; outputs for the entry to fill.
  std::vector<tfc_memref> inDesc(numInputs), outDesc(numOutputs);
  std::vector<tfc_memref *> inPtrs(numInputs), outPtrs(numOutputs);
  std::string signature = std::to_string(index);
  for (size_t i = 0; i < numInputs; ++i) {
    tfc_memref &d = inDesc[i];
    d.allocated = d.aligned = const_cast<void *>(data[i]);
    d.offset = 0;
    int32_t rank = inputs[i].rank;
    int64_t stride = 1;
    signature += i ? ";" : ":";
    for (int32_t k = rank - 1; k >= 0; --k) {
      tfc_memref_sizes(&d)[k] = inputs[i].shape[k];
      tfc_memref_strides(&d, rank)[k] = stride;
      stride *= inputs[i].shape[k];
    }
    for (int32_t k = 0; k < rank; ++k)
      signature += (k ? "x" : "") + std::to_string(inputs[i].shape[k]);
    inPtrs[i] = &d;
  }
  for (size_t i = 0; i < numOutputs; ++i) {
    std::memset(&outDesc[i], 0, sizeof(tfc_memref));
    outPtrs[i] = &outDesc[i];
  }

  static void *emptyTable[1] = {nullptr};
  // A CUDA model runs on device copies of the inputs, with the device
  // table and planner; its outputs are downloaded below.
  MemoryPlanner &runPlanner = cuda ? cuda->planner : planner;
  void *const *runTable = table.empty() ? emptyTable : table.data();
  std::vector<AlignedBuffer> downloads;
  if (cuda) {
    cuda->failure.clear();
    CudaState::Scope scope(cuda.get());
    if (!cuda->deviceTable.empty())
      runTable = cuda->deviceTable.data();
    for (size_t i = 0; i < numInputs; ++i) {
      // Host scalars (`past`) stay where they are; a session's states
      // already live on the device.
      if (entry.inputs[i].host || isResident(i))
        continue;
      uint64_t bytes = tfc_dtype_size(inputs[i].dtype);
      for (int32_t k = 0; k < inputs[i].rank; ++k)
        bytes *= static_cast<uint64_t>(inputs[i].shape[k]);
      // Kept across runs: a repeated forward reads its inputs at the same
      // addresses (CUDA Graphs).
      std::string error;
      void *buffer =
          cuda->inputBuffer(static_cast<size_t>(index), i, bytes, error);
      if (!buffer)
        return setError(TFC_ERR_OUT_OF_MEMORY,
                        "device memory for input '" + entry.inputs[i].name +
                            "': " + error);
      auto ptr = reinterpret_cast<cuda::CUdeviceptr>(buffer);
      if (!cuda->driver->copyToDevice(ptr, inDesc[i].aligned, bytes, error))
        return setError(TFC_ERR_INTERNAL, "uploading input '" +
                                              entry.inputs[i].name +
                                              "': " + error);
      inDesc[i].allocated = inDesc[i].aligned = buffer;
    }
  }
  runPlanner.beginRun(signature);
  if (into && !cuda)
    runPlanner.setDestinations(destinations);
  if (cuda) {
    runPlanner.keepOutputs();
    // A kept buffer it could not allocate is no error: that output comes
    // from the heap as before.
    cuda->failure.clear();
  }
  cuda::CUevent startEvent = nullptr, endEvent = nullptr;
  {
    MemoryPlanner::Scope scope(&runPlanner);
    CudaState::Scope cudaScope(cuda.get());
    std::string ignored;
    if (cuda) {
      cuda->beginRun(/*record=*/runPlanner.replaying());
      if (!cuda->driver->recordEvent(startEvent, ignored))
        startEvent = nullptr;
    }
    entryFns[index](runTable, inPtrs.data(), outPtrs.data());
    if (cuda) {
      cuda->finishRun(signature);
      if (!cuda->driver->recordEvent(endEvent, ignored))
        endEvent = nullptr;
    }
  }
  // An allocation hook that returned null made the entry return early
  // (tfc-check-allocations): its outputs are undefined.
  int64_t failedSize = 0;
  bool outOfMemory = runPlanner.takeAllocationFailure(failedSize);
  auto outOfMemoryError = [&] {
    std::string shapes;
    for (size_t i = 0; i < numInputs; ++i)
      shapes += (i ? ", " : "") + entry.inputs[i].name + " " +
                shapeString(inputs[i].shape,
                            static_cast<size_t>(inputs[i].rank));
    return setError(TFC_ERR_OUT_OF_MEMORY,
                    "entry '" + entry.name + "' ran out of " +
                        (cuda ? "device " : "") + "memory: an allocation of " +
                        bytesString(failedSize) + " failed (inputs: " +
                        (shapes.empty() ? "none" : shapes) + ")");
  };
  if (cuda) {
    CudaState::Scope scope(cuda.get());
    std::string error;
    if (!cuda->driver->synchronize(error) && cuda->failure.empty())
      cuda->failure = error;
    cuda->collectProfile(/*run=*/true);
    float deviceMs = -1;
    cuda->lastDeviceMs =
        startEvent && endEvent &&
                cuda->driver->elapsedMs(startEvent, endEvent, deviceMs, error)
            ? deviceMs
            : -1;
    cuda->driver->destroyEvent(startEvent);
    cuda->driver->destroyEvent(endEvent);
    // Each output's span comes back to the host; the code below then
    // copies it out like a CPU model's strided output.
    for (size_t i = 0; i < numOutputs && cuda->failure.empty() && !outOfMemory;
         ++i) {
      tfc_memref &d = outDesc[i];
      int32_t rank = static_cast<int32_t>(entry.outputs[i].shape.size());
      const int64_t *sizes = tfc_memref_sizes(&d);
      const int64_t *strides = tfc_memref_strides(&d, rank);
      uint64_t last = 0;
      bool empty = false;
      for (int32_t k = 0; k < rank; ++k) {
        if (sizes[k] <= 0)
          empty = true;
        else
          last += static_cast<uint64_t>(sizes[k] - 1) *
                  static_cast<uint64_t>(strides[k]);
      }
      if (empty || !d.aligned)
        continue;
      size_t elem = tfc_dtype_size(entry.outputs[i].dtype);
      uint64_t bytes = (last + 1) * elem;
      void *host = alignedAlloc(bytes, 64);
      if (!host) {
        cuda->failure = "out of host memory for output '" +
                        entry.outputs[i].name + "'";
        break;
      }
      downloads.emplace_back(host);
      auto src = reinterpret_cast<cuda::CUdeviceptr>(d.aligned) +
                 static_cast<uint64_t>(d.offset) * elem;
      if (!cuda->driver->copyToHost(host, src, bytes, error)) {
        cuda->failure = "downloading output '" + entry.outputs[i].name +
                        "': " + error;
        break;
      }
      // A whole allocation: the plan learns it is output i (a replay then
      // serves it from a buffer kept across runs, keepOutputs); it stays in
      // the plan's care. The host copy below reads the download.
      uint64_t count = 1;
      for (int32_t k = 0; k < rank; ++k)
        count *= static_cast<uint64_t>(sizes[k]);
      if (d.allocated && d.allocated == d.aligned && d.offset == 0 &&
          last + 1 == count)
        runPlanner.noteOutput(i, d.allocated, bytes);
      d.allocated = nullptr;
      d.aligned = host;
      d.offset = 0;
    }
    if (outOfMemory) {
      runPlanner.endRun();
      return outOfMemoryError();
    }
    if (!cuda->failure.empty()) {
      runPlanner.endRun();
      return setError(TFC_ERR_INTERNAL, "entry '" + entry.name + "' on " +
                                            cuda->driver->description() +
                                            ": " + cuda->failure);
    }
  }

  if (outOfMemory) {
    runPlanner.endRun();
    return outOfMemoryError();
  }

  // Outputs: check against the metadata, then adopt or copy.
  tfc_status status = TFC_OK;
  for (size_t i = 0; i < numOutputs && status == TFC_OK; ++i) {
    const TensorSpec &o = entry.outputs[i];
    tfc_memref &d = outDesc[i];
    int32_t rank = static_cast<int32_t>(o.shape.size());
    const int64_t *sizes = tfc_memref_sizes(&d);
    const int64_t *strides = tfc_memref_strides(&d, rank);
    auto where = [&] {
      return "entry '" + entry.name + "' returned output '" + o.name + "'";
    };
    uint64_t count = 1;
    for (int32_t k = 0; k < rank && status == TFC_OK; ++k) {
      const DimSpec &dim = o.shape[k];
      std::string bad;
      if (sizes[k] < 0 || sizes[k] > (INT64_C(1) << 48)) {
        bad = "an invalid size " + std::to_string(sizes[k]);
      } else if (dim.isStatic() && sizes[k] != dim.size) {
        bad = "size " + std::to_string(sizes[k]) + " where the metadata says " +
              std::to_string(dim.size);
      } else if (!dim.name.empty()) {
        if (const NamedSizes::Seen *other =
                named.check(dim.name, sizes[k], o, true))
          bad = "'" + dim.name + "' = " + std::to_string(sizes[k]) + " where " +
                NamedSizes::who(*other) + " has " + std::to_string(other->size);
      }
      if (!bad.empty()) {
        status =
            setError(TFC_ERR_INTERNAL, where() + " with " + bad + " in dim " +
                                           std::to_string(k) + " (shape " +
                                           o.shapeString() + ")");
        break;
      }
      count *= static_cast<uint64_t>(sizes[k]);
    }
    if (status != TFC_OK)
      break;
    size_t size = tfc_dtype_size(o.dtype);
    if (count > (UINT64_C(1) << 56) / size) {
      status = setError(TFC_ERR_INTERNAL, where() + " of an absurd size");
      break;
    }
    tfc_tensor &t = outputs[i];
    if (into) {
      bool same = true;
      for (int32_t k = 0; k < rank; ++k)
        same &= t.shape[k] == sizes[k];
      if (!same) {
        status = setError(
            TFC_ERR_INPUT,
            "output '" + o.name + "' is " +
                shapeString(sizes, static_cast<size_t>(rank)) +
                " but the caller's buffer is " +
                shapeString(t.shape, static_cast<size_t>(rank)));
        break;
      }
    }
    t.dtype = o.dtype;
    t.rank = rank;
    for (int32_t k = 0; k < rank; ++k)
      t.shape[k] = sizes[k];
    if (count == 0) {
      if (into)
        continue;
      t.owner = t.data = alignedAlloc(0, 64);
      if (!t.owner)
        status = setError(TFC_ERR_OUT_OF_MEMORY, "out of memory");
      continue;
    }
    if (!d.aligned) {
      status = setError(TFC_ERR_INTERNAL, where() + " without data");
      break;
    }
    bool contiguous = true;
    int64_t expect = 1;
    for (int32_t k = rank - 1; k >= 0; --k) {
      if (sizes[k] != 1 && strides[k] != expect)
        contiguous = false;
      expect *= sizes[k];
    }
    auto *base = static_cast<uint8_t *>(d.aligned) +
                 d.offset * static_cast<int64_t>(size);
    // A whole allocation: the plan learns it is output i (a replay can then
    // serve it with the caller's buffer).
    if (contiguous && d.allocated && d.allocated == d.aligned && d.offset == 0)
      runPlanner.noteOutput(i, d.allocated, count * size);
    if (into) {
      // Computed in place (a replay served the caller's buffer), else
      // copied into it.
      if (base != t.data)
        copyStrided(static_cast<uint8_t *>(t.data), base, sizes, strides, rank,
                    size);
      continue;
    }
    if (contiguous && d.allocated && runPlanner.adopt(d.allocated)) {
      t.owner = d.allocated;
      t.data = base;
      continue;
    }
    void *copy = alignedAlloc(count * size, 64);
    if (!copy) {
      status = setError(TFC_ERR_OUT_OF_MEMORY,
                        "out of memory copying output '" + o.name + "'");
      break;
    }
    copyStrided(static_cast<uint8_t *>(copy), base, sizes, strides, rank, size);
    t.owner = t.data = copy;
  }
  runPlanner.endRun();
  if (status != TFC_OK && !into)
    for (size_t i = 0; i < numOutputs; ++i)
      tfc_tensor_release(&outputs[i]);
  return status;
}
