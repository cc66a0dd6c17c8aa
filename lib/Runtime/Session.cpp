//===- Session.cpp - Sessions: per-sequence state for generation ----------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// A session owns the state inputs of a cached entry (the key/value caches,
// "state": true in the metadata) and the position of its sequences in them.
// A run passes the caller's inputs, the position as the scalar `past` and
// the state buffers to the entry, which writes the new keys and values into
// the buffers in place (the model ABI materialises them into the state
// arguments), then advances the position. See docs/abi.md.
//
//===----------------------------------------------------------------------===//

#include "Cuda/CudaModel.h"
#include "Model.h"

#include "tfc/Runtime/MemoryPlan.h"
#include "tfc/Sampling/Sampler.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <map>
#include <memory>
#include <new>

using namespace tfc::rt;

struct tfc_session {
  tfc_model *model = nullptr;
  const EntrySpec *entry = nullptr;
  int64_t batch = 0, context = 0, position = 0;
  /// Entry input indices: the caller's, `past`, the states.
  std::vector<size_t> userInputs;
  size_t pastInput = 0;
  struct State {
    /// The input of the session's entry.
    size_t input;
    std::string name;
    tfc_dtype dtype = TFC_F32;
    std::vector<DimSpec> dims;
    /// Sizes once allocated (not yet: no buffer).
    std::vector<int64_t> shape;
    /// Host memory (CPU models) or device memory (CUDA models).
    ZeroedHostBuffer buffer;
    tfc::rt::cuda::CUdeviceptr device = 0;
    uint64_t bytes = 0;

    bool allocated() const { return buffer || device; }
    void *data() const {
      return device ? reinterpret_cast<void *>(device) : buffer.get();
    }
  };
  std::vector<State> states;

  State *findState(const std::string &name) {
    for (State &st : states)
      if (st.name == name)
        return &st;
    return nullptr;
  }

  /// Frees a state's device memory (CUDA models).
  void releaseDevice(State &st) {
    if (!st.device)
      return;
    tfc::rt::CudaState::Scope scope(model->cuda.get());
    model->cuda->driver->release(st.device);
    st.device = 0;
  }

  ~tfc_session() {
    for (State &st : states)
      releaseDevice(st);
  }
  /// The smallest rolling buffer among the states (a windowed attention's
  /// cache keeps the last `ring` positions), 0 if none.
  int64_t ring = 0;
  /// The named dim along which runs add tokens (input_ids' second axis).
  std::string seqDim;
  std::string batchDim;
  /// Set while a call runs: a session is used by one thread at a time.
  std::atomic<bool> busy{false};
};

/// A generation in progress (tfc_generation_start): what the next step
/// feeds, the tokens so far (for the repetition penalty) and the sampler.
struct tfc_generation {
  tfc_session *session = nullptr;
  tfc_generate_params params{};
  std::vector<int64_t> eos;
  std::unique_ptr<Sampler> sampler;
  std::vector<int64_t> history, feed, ones;
  std::vector<bool> isMask;
  int64_t vocab = 0;
  bool lastOnly = false;
  AlignedBuffer logits;
  int64_t count = 0;
  tfc_stop_reason stopped = TFC_STOP_NONE;
};

namespace {

/// The error of a run given `numInputs` inputs where the session's entry
/// takes its user inputs.
tfc_status inputCountError(const tfc_session *s, size_t numInputs) {
  const EntrySpec &e = *s->entry;
  std::string names;
  for (size_t u : s->userInputs)
    names += (names.empty() ? "" : ", ") + e.inputs[u].name;
  return setError(TFC_ERR_INPUT, "a session of entry '" + e.name + "' takes " +
                                     std::to_string(s->userInputs.size()) +
                                     " inputs (" + names + "), " +
                                     std::to_string(numInputs) + " given");
}

/// The tokens a run adds: the size along the session's sequence dim of the
/// first of `inputs` (entry inputs `user[k]` of `e`) that has it; -1 if
/// none does.
int64_t tokensAdded(const tfc_session *s, const EntrySpec &e,
                    const std::vector<size_t> &user, const tfc_tensor *inputs,
                    size_t numInputs) {
  for (size_t k = 0; k < numInputs; ++k) {
    const TensorSpec &spec = e.inputs[user[k]];
    for (size_t a = 0; a < spec.shape.size(); ++a)
      if (!spec.shape[a].isStatic() && spec.shape[a].name == s->seqDim &&
          static_cast<int32_t>(a) < inputs[k].rank)
        return inputs[k].shape[a];
  }
  return -1;
}

tfc_status noTokensError(const tfc_session *s) {
  return setError(TFC_ERR_INPUT, "a session run needs at least one token "
                                 "along '" +
                                     s->seqDim + "'");
}

tfc_status run(tfc_session *s, const tfc_tensor *inputs, size_t numInputs,
               tfc_tensor *outputs, size_t numOutputs, const int64_t *keep,
               bool into = false);

/// Copies `bytes` between host memory and a state at byte `offset`, in the
/// direction `toState`: a memcpy, or a transfer for device states.
bool copyState(tfc_session *s, tfc_session::State &st, uint64_t offset,
               void *host, uint64_t bytes, bool toState, std::string &error) {
  if (!st.device) {
    char *p = static_cast<char *>(st.buffer.get()) + offset;
    if (toState)
      std::memcpy(p, host, bytes);
    else
      std::memcpy(host, p, bytes);
    return true;
  }
  if (!bytes)
    return true;
  tfc::rt::CudaState::Scope scope(s->model->cuda.get());
  tfc::rt::cuda::Driver *driver = s->model->cuda->driver;
  return toState ? driver->copyToDevice(st.device + offset, host, bytes, error)
                 : driver->copyToHost(host, st.device + offset, bytes, error);
}

/// (Re)allocates a state, zeroed, with the sizes of its named dims: host
/// memory, or device memory for a CUDA model (the caches stay there).
tfc_status allocate(tfc_session *s, tfc_session::State &st,
                    const std::map<std::string, int64_t> &sizes) {
  uint64_t bytes = tfc_dtype_size(st.dtype);
  std::vector<int64_t> shape;
  for (const DimSpec &d : st.dims) {
    int64_t n = d.isStatic() ? d.size : sizes.at(d.name);
    if (n < 0)
      return setError(TFC_ERR_INPUT, "state '" + st.name + "' would have a "
                                     "negative size");
    if (n > 0 && bytes > UINT64_MAX / static_cast<uint64_t>(n))
      return setError(TFC_ERR_OUT_OF_MEMORY,
                      "state input '" + st.name + "' is too large");
    bytes *= static_cast<uint64_t>(n);
    shape.push_back(n);
  }
  st.buffer.reset();
  s->releaseDevice(st);
  st.bytes = 0;
  st.shape.clear();
  if (s->model->cuda) {
    tfc::rt::CudaState::Scope scope(s->model->cuda.get());
    tfc::rt::cuda::Driver *driver = s->model->cuda->driver;
    std::string error;
    tfc::rt::cuda::CUdeviceptr ptr = 0;
    if (!driver->allocate(bytes, ptr, error))
      return setError(TFC_ERR_OUT_OF_MEMORY,
                      "device memory for state '" + st.name + "': " + error);
    // Zeroed in chunks from one host buffer.
    std::vector<char> zeros(std::min<uint64_t>(bytes, 1 << 20), 0);
    for (uint64_t at = 0; at < bytes; at += zeros.size())
      if (!driver->copyToDevice(ptr + at, zeros.data(),
                                std::min<uint64_t>(zeros.size(), bytes - at),
                                error)) {
        driver->release(ptr);
        return setError(TFC_ERR_INTERNAL,
                        "clearing state '" + st.name + "': " + error);
      }
    st.device = ptr;
    st.bytes = bytes;
    st.shape = std::move(shape);
    return TFC_OK;
  }
  // Zero from the kernel where the state is large (a KV cache): its pages
  // become resident as positions are written, not all at session creation
  // (a 32,768-token cache of a 1.5B model is 1.9 GB).
  void *p = allocZeroed(bytes ? bytes : 1, 64);
  if (!p)
    return setError(TFC_ERR_OUT_OF_MEMORY,
                    "out of memory allocating state '" + st.name + "' (" +
                        std::to_string(bytes) + " bytes)");
  st.buffer = ZeroedHostBuffer(p, ZeroedHostDeleter{bytes ? bytes : 1});
  st.bytes = bytes;
  st.shape = std::move(shape);
  return TFC_OK;
}

tfc_status create(tfc_model *model, const char *entryName, int64_t batch,
                  int64_t context, tfc_session **out) {
  if (!out)
    return setError(TFC_ERR_INVALID_ARGUMENT, "out is NULL");
  *out = nullptr;
  if (!model || !entryName)
    return setError(TFC_ERR_INVALID_ARGUMENT,
                    std::string(!model ? "model" : "entry") + " is NULL");
  if (!model->runnable)
    return setError(TFC_ERR_INVALID_ARGUMENT,
                    model->path + " was opened with tfc_model_inspect");
  int64_t index = model->spec.findEntry(entryName);
  if (index < 0)
    return setError(TFC_ERR_INVALID_ARGUMENT, "model '" + model->spec.name +
                                                  "' has no entry '" +
                                                  entryName + "'");
  auto s = std::make_unique<tfc_session>();
  s->model = model;
  s->entry = &model->spec.entries[index];
  const EntrySpec &e = *s->entry;
  bool havePast = false;
  for (size_t i = 0; i < e.inputs.size(); ++i) {
    const TensorSpec &in = e.inputs[i];
    if (in.state) {
      s->states.emplace_back();
      s->states.back().input = i;
      if (in.window > 0)
        s->ring = s->ring ? std::min(s->ring, in.window) : in.window;
    }
    else if (in.name == "past" && in.shape.empty() && in.dtype == TFC_I64) {
      s->pastInput = i;
      havePast = true;
    } else {
      s->userInputs.push_back(i);
      if (s->seqDim.empty() && in.shape.size() >= 2 && !in.shape[1].isStatic()) {
        s->seqDim = in.shape[1].name;
        if (!in.shape[0].isStatic())
          s->batchDim = in.shape[0].name;
      }
    }
  }
  if (s->states.empty() || !havePast || s->seqDim.empty())
    return setError(TFC_ERR_INVALID_ARGUMENT,
                    "entry '" + e.name + "' of model '" + model->spec.name +
                        "' is not a cached entry (it needs `past` and state "
                        "inputs: compile with tfc-compile --kv-cache and use "
                        "<entry>_cached)");
  if (batch <= 0 || context <= 0)
    return setError(TFC_ERR_INVALID_ARGUMENT,
                    "batch and context must be positive, got " +
                        std::to_string(batch) + " and " +
                        std::to_string(context));
  for (size_t u : s->userInputs)
    for (const DimSpec &d : e.inputs[u].shape) {
      if (d.isStatic() || d.max < 0)
        continue;
      int64_t limit = d.name == s->batchDim ? batch : context;
      if (limit > d.max)
        return setError(TFC_ERR_INVALID_ARGUMENT,
                        std::string(d.name == s->batchDim ? "batch " : "context ") +
                            std::to_string(limit) + " exceeds the entry's " +
                            d.name + " <= " + std::to_string(d.max));
    }
  s->batch = batch;
  s->context = context;
  // States over dims other than the batch and the context (the encoder's
  // length, for cross-attention caches) are sized by the entry that writes
  // them (tfc_session_run_entry), from its inputs.
  std::map<std::string, int64_t> sizes = {{"context", context}};
  if (!s->batchDim.empty())
    sizes[s->batchDim] = batch;
  for (tfc_session::State &st : s->states) {
    const TensorSpec &in = e.inputs[st.input];
    st.name = in.name;
    st.dtype = in.dtype;
    st.dims = in.shape;
    bool sizable = true;
    for (const DimSpec &d : in.shape)
      sizable &= d.isStatic() || sizes.count(d.name);
    if (!sizable)
      continue;
    if (tfc_status status = allocate(s.get(), st, sizes); status != TFC_OK)
      return status;
  }
  *out = s.release();
  return TFC_OK;
}

/// The sizes of the named dims of `e`'s inputs in `all` (inputs that are
/// not given are skipped).
void bindDims(const EntrySpec &e, const std::vector<tfc_tensor> &all,
              const std::vector<bool> &given,
              std::map<std::string, int64_t> &sizes) {
  for (size_t i = 0; i < e.inputs.size(); ++i) {
    if (!given[i])
      continue;
    const std::vector<DimSpec> &shape = e.inputs[i].shape;
    for (size_t a = 0; a < shape.size(); ++a)
      if (!shape[a].isStatic() && !shape[a].name.empty() &&
          static_cast<int32_t>(a) < all[i].rank)
        sizes.emplace(shape[a].name, all[i].shape[a]);
  }
}

/// Passes the session's states to the state inputs of `e` in `all`
/// (marked resident: on a CUDA model they are device memory).
tfc_status passStates(tfc_session *s, const EntrySpec &e,
                      std::vector<tfc_tensor> &all,
                      std::vector<bool> &resident) {
  resident.assign(e.inputs.size(), false);
  for (size_t i = 0; i < e.inputs.size(); ++i) {
    if (!e.inputs[i].state)
      continue;
    tfc_session::State *st = s->findState(e.inputs[i].name);
    if (!st->allocated()) {
      // Name the entry that fills it.
      std::string writer;
      for (const EntrySpec &other : s->model->spec.entries) {
        bool hasPast = false, writes = false;
        for (const TensorSpec &in : other.inputs) {
          hasPast |= in.name == "past" && in.shape.empty();
          writes |= in.state && in.name == st->name;
        }
        if (writes && !hasPast && writer.empty())
          writer = other.name;
      }
      return setError(TFC_ERR_INPUT,
                      "the session's state '" + st->name + "' is not set yet" +
                          (writer.empty() ? std::string()
                                          : ": run entry '" + writer +
                                                "' first "
                                                "(tfc_session_run_entry)"));
    }
    tfc_tensor &t = all[i];
    t.dtype = st->dtype;
    t.rank = static_cast<int32_t>(st->shape.size());
    for (size_t k = 0; k < st->shape.size(); ++k)
      t.shape[k] = st->shape[k];
    t.data = st->data();
    t.owner = nullptr;
    resident[i] = st->device != 0;
  }
  return TFC_OK;
}

/// Runs another entry of the model on the session's states (one that fills
/// cross-attention caches from the encoder's output).
tfc_status runEntry(tfc_session *s, const char *entryName,
                    const tfc_tensor *inputs, size_t numInputs,
                    tfc_tensor *outputs, size_t numOutputs) {
  if (!s || !entryName)
    return setError(TFC_ERR_INVALID_ARGUMENT,
                    std::string(!s ? "session" : "entry") + " is NULL");
  if (entryName == s->entry->name)
    return run(s, inputs, numInputs, outputs, numOutputs, nullptr);
  int64_t index = s->model->spec.findEntry(entryName);
  if (index < 0)
    return setError(TFC_ERR_INVALID_ARGUMENT, "model '" + s->model->spec.name +
                                                  "' has no entry '" +
                                                  entryName + "'");
  const EntrySpec &e = s->model->spec.entries[index];
  std::vector<size_t> user;
  bool anyState = false;
  for (size_t i = 0; i < e.inputs.size(); ++i) {
    const TensorSpec &in = e.inputs[i];
    if (!in.state) {
      if (in.name == "past" && in.shape.empty())
        return setError(TFC_ERR_INVALID_ARGUMENT,
                        "entry '" + e.name + "' is a cached entry of its own: "
                        "give it a session of its own");
      user.push_back(i);
      continue;
    }
    anyState = true;
    tfc_session::State *st = s->findState(in.name);
    if (!st || st->dtype != in.dtype ||
        st->dims.size() != in.shape.size())
      return setError(TFC_ERR_INVALID_ARGUMENT,
                      "entry '" + e.name + "' has the state '" + in.name +
                          "' " + in.shapeString() + ", which a session of '" +
                          s->entry->name + "' does not hold");
  }
  if (!anyState)
    return setError(TFC_ERR_INVALID_ARGUMENT,
                    "entry '" + e.name + "' has no state inputs: run it with "
                    "tfc_run");
  if (numInputs != user.size() || (numInputs && !inputs)) {
    std::string names;
    for (size_t u : user)
      names += (names.empty() ? "" : ", ") + e.inputs[u].name;
    return setError(TFC_ERR_INPUT, "entry '" + e.name + "' takes " +
                                       std::to_string(user.size()) +
                                       " inputs (" + names + "), " +
                                       std::to_string(numInputs) + " given");
  }
  std::vector<tfc_tensor> all(e.inputs.size());
  std::vector<bool> given(e.inputs.size(), false);
  for (size_t k = 0; k < numInputs; ++k) {
    all[user[k]] = inputs[k];
    given[user[k]] = true;
  }
  // Size the states it writes from its inputs (the session's batch and
  // context first); a state of another size is made anew.
  std::map<std::string, int64_t> sizes = {{"context", s->context}};
  if (!s->batchDim.empty())
    sizes[s->batchDim] = s->batch;
  bindDims(e, all, given, sizes);
  for (const TensorSpec &in : e.inputs) {
    if (!in.state)
      continue;
    tfc_session::State *st = s->findState(in.name);
    std::vector<int64_t> shape;
    for (const DimSpec &d : in.shape) {
      auto found = d.isStatic() ? sizes.end() : sizes.find(d.name);
      if (!d.isStatic() && found == sizes.end())
        return setError(TFC_ERR_INVALID_MODEL,
                        "state input '" + in.name + "' has the dim '" + d.name +
                            "', which no input of '" + e.name + "' has");
      shape.push_back(d.isStatic() ? d.size : found->second);
    }
    if (st->allocated() && st->shape == shape)
      continue;
    if (tfc_status status = allocate(s, *st, sizes); status != TFC_OK)
      return status;
  }
  std::vector<bool> resident;
  if (tfc_status status = passStates(s, e, all, resident); status != TFC_OK)
    return status;
  return s->model->run(e.name.c_str(), all.data(), all.size(), outputs,
                       numOutputs, &resident);
}

/// Permutes the sequences of the batch: sequence i becomes what sequence
/// rows[i] was, in every state (beam search keeps the caches of the beams it
/// continues). Only the rows below the position are moved.
tfc_status reorder(tfc_session *s, const int64_t *rows, size_t numRows) {
  if (!s || (!rows && numRows))
    return setError(TFC_ERR_INVALID_ARGUMENT,
                    std::string(!s ? "session" : "rows") + " is NULL");
  if (numRows != static_cast<size_t>(s->batch))
    return setError(TFC_ERR_INVALID_ARGUMENT,
                    "reorder needs one row per sequence of the batch (" +
                        std::to_string(s->batch) + "), got " +
                        std::to_string(numRows));
  for (size_t i = 0; i < numRows; ++i)
    if (rows[i] < 0 || rows[i] >= s->batch)
      return setError(TFC_ERR_INVALID_ARGUMENT,
                      "reorder row " + std::to_string(i) + " is " +
                          std::to_string(rows[i]) + ", not in [0, " +
                          std::to_string(s->batch) + ")");
  bool identity = true;
  for (size_t i = 0; i < numRows; ++i)
    identity &= rows[i] == static_cast<int64_t>(i);
  if (identity)
    return TFC_OK;
  std::vector<char> scratch;
  std::string error;
  for (tfc_session::State &st : s->states) {
    if (!st.allocated() || st.dims.empty() || st.dims[0].isStatic() ||
        st.dims[0].name != s->batchDim)
      continue;
    // Per batch row: `outer` blocks of `inner` bytes, of which the first
    // `used` bytes matter (the rows of the context below the position).
    uint64_t elem = tfc_dtype_size(st.dtype);
    uint64_t outer = 1, inner = elem, used = elem;
    bool afterContext = false;
    for (size_t a = 1; a < st.dims.size(); ++a) {
      uint64_t n = static_cast<uint64_t>(st.shape[a]);
      if (afterContext) {
        inner *= n;
        used *= n;
      } else if (!st.dims[a].isStatic() && st.dims[a].name == "context") {
        afterContext = true;
        inner *= n;
        used *= static_cast<uint64_t>(s->position);
      } else {
        outer *= n;
      }
    }
    if (!afterContext)
      used = inner;
    uint64_t rowBytes = outer * inner;
    scratch.resize(static_cast<size_t>(numRows * outer * used));
    for (size_t i = 0; i < numRows; ++i)
      for (uint64_t o = 0; o < outer; ++o)
        if (!copyState(s, st, rows[i] * rowBytes + o * inner,
                       scratch.data() + (i * outer + o) * used, used,
                       /*toState=*/false, error))
          return setError(TFC_ERR_INTERNAL, "reordering '" + st.name +
                                                "': " + error);
    for (size_t i = 0; i < numRows; ++i)
      for (uint64_t o = 0; o < outer; ++o)
        if (!copyState(s, st, i * rowBytes + o * inner,
                       scratch.data() + (i * outer + o) * used, used,
                       /*toState=*/true, error))
          return setError(TFC_ERR_INTERNAL, "reordering '" + st.name +
                                                "': " + error);
  }
  return TFC_OK;
}

/// Writes the padding bias of the positions [position, position + added):
/// 0 for a token, -inf where keep (batch x added, row-major) is 0.
tfc_status writePaddingBias(tfc_session *s, tfc_session::State &bias,
                            int64_t added, const int64_t *keep) {
  uint64_t elem = tfc_dtype_size(bias.dtype);
  std::vector<unsigned char> row(static_cast<size_t>(added) * elem);
  std::string error;
  for (int64_t b = 0; b < s->batch; ++b) {
    for (int64_t t = 0; t < added; ++t) {
      bool token = !keep || keep[b * added + t];
      unsigned char *p = row.data() + t * elem;
      dtypeStore(bias.dtype, p, 0, token ? 0.0 : -INFINITY);
    }
    uint64_t at = (static_cast<uint64_t>(b) * s->context + s->position) * elem;
    if (!copyState(s, bias, at, row.data(), row.size(), /*toState=*/true,
                   error))
      return setError(TFC_ERR_INTERNAL, "writing the padding bias: " + error);
  }
  return TFC_OK;
}

tfc_status run(tfc_session *s, const tfc_tensor *inputs, size_t numInputs,
               tfc_tensor *outputs, size_t numOutputs, const int64_t *keep,
               bool into) {
  if (!s)
    return setError(TFC_ERR_INVALID_ARGUMENT, "session is NULL");
  const EntrySpec &e = *s->entry;
  if (numInputs != s->userInputs.size() || (numInputs && !inputs))
    return inputCountError(s, numInputs);
  // The tokens this run adds: the size of the sequence dim.
  int64_t added = tokensAdded(s, e, s->userInputs, inputs, numInputs);
  if (added < 1)
    return noTokensError(s);
  if (added > s->context - s->position)
    return setError(TFC_ERR_INPUT,
                    "the context is full: " + std::to_string(s->position) +
                        " tokens + " + std::to_string(added) +
                        " new exceed the session's context of " +
                        std::to_string(s->context));
  tfc_session::State *bias = s->findState("cache.bias");
  if (keep) {
    if (!bias)
      return setError(TFC_ERR_INVALID_ARGUMENT,
                      "entry '" + e.name + "' cannot take left-padded "
                      "sequences: it has absolute positions (learned or "
                      "sinusoidal), which padding would shift, or a padding "
                      "mask input of its own");
    for (int64_t i = 0; i < s->batch * added; ++i)
      if (keep[i] != 0 && keep[i] != 1)
        return setError(TFC_ERR_INPUT,
                        "keep[" + std::to_string(i) + "] is " +
                            std::to_string(keep[i]) + ", not 0 or 1");
  }
  if (bias && bias->allocated())
    if (tfc_status status = writePaddingBias(s, *bias, added, keep);
        status != TFC_OK)
      return status;
  std::vector<tfc_tensor> all(e.inputs.size());
  for (size_t k = 0; k < numInputs; ++k)
    all[s->userInputs[k]] = inputs[k];
  int64_t past = s->position;
  all[s->pastInput] = tfc_tensor{TFC_I64, 0, {}, &past, nullptr};
  std::vector<bool> resident;
  if (tfc_status status = passStates(s, e, all, resident); status != TFC_OK)
    return status;
  tfc_status status = s->model->run(e.name.c_str(), all.data(), all.size(),
                                    outputs, numOutputs, &resident, into);
  if (status == TFC_OK)
    s->position += added;
  return status;
}

/// Runs rows [first, first + n) of the session's states, row i at
/// positions[i] (tfc_session_run_rows): the rows form `<entry>_rows` (one
/// `past` per row), or for one row the session's own cached entry (the same
/// computation; it reads only the keys below the row's position, where the
/// rows form reads the whole context). The states are passed as views of
/// those rows (every state is batch-major), the padding bias of the columns
/// each row adds is cleared, and the session's position is left alone.
/// The name of the rows form of the session's entry: `<entry>_rows` beside
/// `<entry>_cached`.
std::string rowsEntryName(const tfc_session *s) {
  std::string base = s->entry->name;
  const std::string suffix = "_cached";
  if (base.size() > suffix.size() &&
      base.compare(base.size() - suffix.size(), suffix.size(), suffix) == 0)
    base.resize(base.size() - suffix.size());
  return base + "_rows";
}

/// The rows form of the session's entry, or null when the model has none.
const EntrySpec *rowsEntry(const tfc_session *s) {
  int64_t index = s->model->spec.findEntry(rowsEntryName(s));
  return index < 0 ? nullptr : &s->model->spec.entries[index];
}

tfc_status runRows(tfc_session *s, int64_t first, int64_t n,
                   const int64_t *positions, const tfc_tensor *inputs,
                   size_t numInputs, tfc_tensor *outputs, size_t numOutputs) {
  if (!s)
    return setError(TFC_ERR_INVALID_ARGUMENT, "session is NULL");
  if (!positions)
    return setError(TFC_ERR_INVALID_ARGUMENT, "positions is NULL");
  if (first < 0 || n < 1 || first > s->batch || n > s->batch - first)
    return setError(TFC_ERR_INVALID_ARGUMENT,
                    "rows [" + std::to_string(first) + ", " +
                        std::to_string(first + n) +
                        ") are not rows of the session's batch of " +
                        std::to_string(s->batch));
  const EntrySpec *e = s->entry;
  if (n > 1) {
    e = rowsEntry(s);
    if (!e)
      return setError(TFC_ERR_INVALID_ARGUMENT,
                      "model '" + s->model->spec.name + "' has no entry '" +
                          rowsEntryName(s) +
                          "' to run rows at their own positions "
                          "together: compile it with tfc-compile --kv-cache "
                          "--kv-cache-rows");
  }
  // The entry's inputs: the caller's (those of the session, in order),
  // `past`, the states.
  std::vector<size_t> user;
  size_t pastInput = 0;
  for (size_t i = 0; i < e->inputs.size(); ++i) {
    const TensorSpec &in = e->inputs[i];
    if (in.state)
      continue;
    if (in.name == "past")
      pastInput = i;
    else
      user.push_back(i);
  }
  if (user.size() != s->userInputs.size() || numInputs != user.size() ||
      (numInputs && !inputs))
    return inputCountError(s, numInputs);
  int64_t added = tokensAdded(s, *e, user, inputs, numInputs);
  for (size_t k = 0; k < numInputs; ++k) {
    const TensorSpec &spec = e->inputs[user[k]];
    if (inputs[k].rank < 1 || inputs[k].shape[0] != n)
      return setError(TFC_ERR_INPUT,
                      "input '" + spec.name + "' has " +
                          (inputs[k].rank < 1
                               ? std::string("no batch dim")
                               : std::to_string(inputs[k].shape[0]) + " rows") +
                          ", the run " + std::to_string(n));
  }
  if (added < 1)
    return noTokensError(s);
  for (int64_t i = 0; i < n; ++i)
    if (positions[i] < 0 || positions[i] > s->context - added)
      return setError(TFC_ERR_INPUT,
                      "row " + std::to_string(first + i) + " at position " +
                          std::to_string(positions[i]) + " with " +
                          std::to_string(added) +
                          " new tokens does not fit the session's context of " +
                          std::to_string(s->context));
  // One row runs the cached entry, rolling caches and all; several need
  // the rows form, which has none.
  if (s->ring && n > 1)
    return setError(TFC_ERR_INVALID_ARGUMENT,
                    "rows at their own positions need caches of every "
                    "position; this model keeps rolling (sliding-window) "
                    "caches");
  std::vector<tfc_tensor> all(e->inputs.size());
  std::vector<bool> resident(e->inputs.size(), false);
  for (size_t k = 0; k < numInputs; ++k)
    all[user[k]] = inputs[k];
  int64_t past = positions[0];
  all[pastInput] = n > 1 || !e->inputs[pastInput].shape.empty()
                       ? tfc_tensor{TFC_I64,
                                    1,
                                    {n},
                                    const_cast<int64_t *>(positions),
                                    nullptr}
                       : tfc_tensor{TFC_I64, 0, {}, &past, nullptr};
  for (size_t i = 0; i < e->inputs.size(); ++i) {
    const TensorSpec &in = e->inputs[i];
    if (!in.state)
      continue;
    tfc_session::State *st = s->findState(in.name);
    if (!st || !st->allocated() || st->shape.empty() ||
        st->shape[0] != s->batch || in.shape.empty() ||
        in.shape[0].isStatic() || in.shape[0].name != s->batchDim)
      return setError(TFC_ERR_INVALID_ARGUMENT,
                      "state '" + in.name + "' of entry '" + e->name +
                          "' is not one the session holds per row");
    tfc_tensor &t = all[i];
    t.dtype = st->dtype;
    t.rank = static_cast<int32_t>(st->shape.size());
    for (size_t k = 0; k < st->shape.size(); ++k)
      t.shape[k] = st->shape[k];
    t.shape[0] = n;
    uint64_t rowBytes = st->bytes / static_cast<uint64_t>(s->batch);
    t.data = static_cast<char *>(st->data()) + first * rowBytes;
    t.owner = nullptr;
    resident[i] = st->device != 0;
  }
  // The columns each row adds hold tokens (0 in the padding bias).
  if (tfc_session::State *bias = s->findState("cache.bias");
      bias && bias->allocated()) {
    uint64_t elem = tfc_dtype_size(bias->dtype);
    std::vector<unsigned char> zeros(static_cast<size_t>(added) * elem);
    for (int64_t t = 0; t < added; ++t)
      dtypeStore(bias->dtype, zeros.data() + t * elem, 0, 0.0);
    std::string error;
    for (int64_t i = 0; i < n; ++i) {
      uint64_t at = (static_cast<uint64_t>(first + i) * s->context +
                     static_cast<uint64_t>(positions[i])) *
                    elem;
      if (!copyState(s, *bias, at, zeros.data(), zeros.size(),
                     /*toState=*/true, error))
        return setError(TFC_ERR_INTERNAL, "writing the padding bias: " + error);
    }
  }
  return s->model->run(e->name.c_str(), all.data(), all.size(), outputs,
                       numOutputs, &resident, /*into=*/true);
}

/// Marks a session busy for the length of a call; a second thread's call
/// meanwhile is refused (not serialised: a session's calls must come in an
/// order, which only its one user knows).
class BusyGuard {
public:
  explicit BusyGuard(tfc_session *s)
      : s(s), ok(s && !s->busy.exchange(true)) {}
  ~BusyGuard() {
    if (ok)
      s->busy = false;
  }
  tfc_status refuse() const {
    return setError(TFC_ERR_INVALID_ARGUMENT,
                    "the session is in use by another thread (a session "
                    "runs on one thread at a time; create one per thread)");
  }
  bool acquired() const { return ok; }

private:
  tfc_session *s;
  bool ok;
};

template <typename Fn> tfc_status exclusive(tfc_session *s, Fn fn) {
  if (!s)
    return setError(TFC_ERR_INVALID_ARGUMENT, "session is NULL");
  BusyGuard guard(s);
  if (!guard.acquired())
    return guard.refuse();
  return fn();
}

/// Validates a generation's arguments and fills `g` (nothing runs).
tfc_status startGeneration(tfc_session *s, const int64_t *prompt,
                           size_t promptLen, const tfc_generate_params *given,
                           tfc_generation &g) {
  if (!given || (!prompt && promptLen))
    return setError(TFC_ERR_INVALID_ARGUMENT,
                    std::string(!given ? "params" : "prompt") + " is NULL");
  if (given->struct_size < offsetof(tfc_generate_params, temperature))
    return setError(TFC_ERR_INVALID_ARGUMENT,
                    "params->struct_size is " +
                        std::to_string(given->struct_size) +
                        ": set it to sizeof(tfc_generate_params) "
                        "(tfc_generate_params_init)");
  tfc_generate_params &p = g.params;
  tfc_generate_params_init(&p);
  std::memcpy(&p, given, std::min(given->struct_size, sizeof(p)));
  if (p.max_new_tokens < 1)
    return setError(TFC_ERR_INVALID_ARGUMENT,
                    "max_new_tokens must be >= 1, not " +
                        std::to_string(p.max_new_tokens));
  if (p.num_eos_ids && !p.eos_ids)
    return setError(TFC_ERR_INVALID_ARGUMENT, "eos_ids is NULL");
  g.eos.assign(p.eos_ids, p.eos_ids + p.num_eos_ids);
  p.eos_ids = nullptr; // the copy in g.eos is used
  SamplingParams sampling;
  sampling.temperature = p.temperature;
  sampling.topK = p.top_k;
  sampling.topP = p.top_p;
  sampling.minP = p.min_p;
  sampling.repetitionPenalty = p.repetition_penalty;
  sampling.seed = p.seed;
  std::string error;
  if (!validateSamplingParams(sampling, error))
    return setError(TFC_ERR_INVALID_ARGUMENT, error);
  if (s->batch != 1)
    return setError(TFC_ERR_INVALID_ARGUMENT,
                    "generation needs a session of batch 1, not " +
                        std::to_string(s->batch));
  // The entry's inputs: the token ids, and masks of ones along them.
  const EntrySpec &e = *s->entry;
  g.isMask.assign(s->userInputs.size(), false);
  for (size_t k = 1; k < s->userInputs.size(); ++k) {
    const TensorSpec &in = e.inputs[s->userInputs[k]];
    g.isMask[k] = in.dtype == TFC_I64 && in.shape.size() == 2 &&
                  !in.shape[1].isStatic() && in.shape[1].name == s->seqDim;
    if (!g.isMask[k])
      return setError(TFC_ERR_INVALID_ARGUMENT,
                      "entry '" + e.name + "' takes '" + in.name +
                          "' besides the token ids: run it with "
                          "tfc_session_run");
  }
  if (promptLen == 0)
    return setError(TFC_ERR_INPUT, "the prompt has no tokens");
  if (static_cast<int64_t>(promptLen) > s->context - s->position)
    return setError(TFC_ERR_INPUT,
                    "the context is full: " + std::to_string(s->position) +
                        " tokens + " + std::to_string(promptLen) +
                        " new exceed the session's context of " +
                        std::to_string(s->context));
  // Logits [1, n, vocab] into one buffer when the vocabulary is static.
  // An entry compiled with --kv-cache-last returns the last position only.
  g.vocab = 0;
  g.lastOnly = false;
  if (e.outputs.size() == 1 && e.outputs[0].dtype == TFC_F32 &&
      e.outputs[0].shape.size() == 3 && e.outputs[0].shape[2].isStatic()) {
    g.vocab = e.outputs[0].shape[2].size;
    g.lastOnly =
        e.outputs[0].shape[1].isStatic() && e.outputs[0].shape[1].size == 1;
  }
  if (g.vocab > 0) {
    g.logits.reset(
        alignedAlloc(static_cast<uint64_t>(g.lastOnly ? 1 : promptLen) *
                         g.vocab * sizeof(float),
                     64));
    if (!g.logits)
      return setError(TFC_ERR_OUT_OF_MEMORY, "out of memory for the logits");
  }
  g.session = s;
  g.sampler = std::make_unique<Sampler>(sampling);
  g.history.assign(prompt, prompt + promptLen);
  g.feed.assign(prompt, prompt + promptLen);
  g.ones.assign(promptLen, 1);
  return TFC_OK;
}

/// One step of a generation: runs what is fed (the prompt, then the last
/// token) and decides the next token.
tfc_status stepGeneration(tfc_generation &g, int64_t *token,
                          tfc_stop_reason *reason) {
  *token = -1;
  *reason = g.stopped;
  if (g.stopped != TFC_STOP_NONE)
    return TFC_OK;
  tfc_session *s = g.session;
  int64_t n = static_cast<int64_t>(g.feed.size());
  std::vector<tfc_tensor> inputs;
  for (size_t k = 0; k < s->userInputs.size(); ++k)
    inputs.push_back(tfc_tensor{TFC_I64,
                                2,
                                {1, n},
                                g.isMask[k] ? g.ones.data() : g.feed.data(),
                                nullptr});
  const float *row = nullptr;
  tfc_tensor out{};
  if (g.vocab > 0) {
    int64_t positions = g.lastOnly ? 1 : n;
    out = tfc_tensor{
        TFC_F32, 3, {1, positions, g.vocab}, g.logits.get(), nullptr};
    if (tfc_status status = run(s, inputs.data(), inputs.size(), &out, 1,
                                nullptr, /*into=*/true);
        status != TFC_OK)
      return status;
    row =
        static_cast<const float *>(g.logits.get()) + (positions - 1) * g.vocab;
  } else {
    if (tfc_status status =
            run(s, inputs.data(), inputs.size(), &out, 1, nullptr, false);
        status != TFC_OK)
      return status;
    row = static_cast<const float *>(out.data) +
          (out.shape[1] - 1) * out.shape[2];
  }
  int64_t v = g.vocab > 0 ? g.vocab : out.shape[2];
  int64_t next = g.sampler->sample(row, static_cast<size_t>(v), g.history);
  if (g.vocab <= 0)
    tfc_tensor_release(&out);
  g.history.push_back(next);
  ++g.count;
  if (std::find(g.eos.begin(), g.eos.end(), next) != g.eos.end())
    g.stopped = TFC_STOP_EOS;
  else if (g.count >= g.params.max_new_tokens)
    g.stopped = TFC_STOP_LENGTH;
  else if (s->position + 1 > s->context)
    g.stopped = TFC_STOP_CONTEXT;
  g.feed.assign(1, next);
  g.ones.assign(1, 1);
  *token = next;
  *reason = g.stopped;
  return TFC_OK;
}

tfc_status generate(tfc_session *s, const int64_t *prompt, size_t promptLen,
                    const tfc_generate_params *given,
                    tfc_token_callback onToken, void *user, int64_t *generated,
                    size_t capacity, size_t *numGenerated) {
  if (!generated || !numGenerated)
    return setError(TFC_ERR_INVALID_ARGUMENT,
                    std::string(!generated ? "generated" : "num_generated") +
                        " is NULL");
  *numGenerated = 0;
  tfc_generation g;
  if (tfc_status status = startGeneration(s, prompt, promptLen, given, g);
      status != TFC_OK)
    return status;
  if (capacity < static_cast<uint64_t>(g.params.max_new_tokens))
    return setError(TFC_ERR_INVALID_ARGUMENT,
                    "generated holds " + std::to_string(capacity) +
                        " tokens, fewer than max_new_tokens " +
                        std::to_string(g.params.max_new_tokens));
  size_t count = 0;
  tfc_stop_reason reason = TFC_STOP_NONE;
  while (reason == TFC_STOP_NONE) {
    int64_t next;
    if (tfc_status status = stepGeneration(g, &next, &reason); status != TFC_OK)
      return status;
    generated[count++] = next;
    *numGenerated = count;
    if (onToken && onToken(user, next) != 0)
      return setError(TFC_ERR_CANCELLED,
                      "the generation was cancelled by its token callback "
                      "after " +
                          std::to_string(count) + " token" +
                          (count == 1 ? "" : "s"));
  }
  return TFC_OK;
}

} // namespace

void tfc_generate_params_init(tfc_generate_params *params) {
  if (!params)
    return;
  *params = tfc_generate_params();
  params->struct_size = sizeof(tfc_generate_params);
  params->max_new_tokens = 64;
  params->temperature = 0;
  params->top_k = 0;
  params->top_p = 1;
  params->min_p = 0;
  params->repetition_penalty = 1;
  params->seed = 0;
}

tfc_status tfc_session_generate(tfc_session *session, const int64_t *prompt,
                                size_t prompt_len,
                                const tfc_generate_params *params,
                                tfc_token_callback on_token, void *user,
                                int64_t *generated, size_t capacity,
                                size_t *num_generated) {
  if (num_generated)
    *num_generated = 0;
  return guarded([&] {
    return exclusive(session, [&] {
      return generate(session, prompt, prompt_len, params, on_token, user,
                      generated, capacity, num_generated);
    });
  });
}

tfc_status tfc_generation_start(tfc_session *session, const int64_t *prompt,
                                size_t prompt_len,
                                const tfc_generate_params *params,
                                tfc_generation **out) {
  if (out)
    *out = nullptr;
  return guarded([&] {
    if (!out)
      return setError(TFC_ERR_INVALID_ARGUMENT, "out is NULL");
    return exclusive(session, [&] {
      auto g = std::make_unique<tfc_generation>();
      if (tfc_status status =
              startGeneration(session, prompt, prompt_len, params, *g);
          status != TFC_OK)
        return status;
      *out = g.release();
      return TFC_OK;
    });
  });
}

tfc_status tfc_generation_next(tfc_generation *generation, int64_t *token,
                               tfc_stop_reason *reason) {
  if (token)
    *token = -1;
  return guarded([&] {
    if (!generation || !token || !reason)
      return setError(TFC_ERR_INVALID_ARGUMENT,
                      std::string(!generation ? "generation"
                                  : !token    ? "token"
                                              : "reason") +
                          " is NULL");
    return exclusive(generation->session, [&] {
      return stepGeneration(*generation, token, reason);
    });
  });
}

int64_t tfc_generation_num_tokens(const tfc_generation *generation) {
  return generation ? generation->count : 0;
}

void tfc_generation_free(tfc_generation *generation) { delete generation; }

tfc_status tfc_session_create(tfc_model *model, const char *entry,
                              int64_t batch, int64_t context,
                              tfc_session **out) {
  return guarded([&] { return create(model, entry, batch, context, out); });
}

tfc_status tfc_session_run(tfc_session *session, const tfc_tensor *inputs,
                           size_t num_inputs, tfc_tensor *outputs,
                           size_t num_outputs) {
  return guarded([&] {
    return exclusive(session, [&] {
      return run(session, inputs, num_inputs, outputs, num_outputs, nullptr);
    });
  });
}

tfc_status tfc_session_run_padded(tfc_session *session,
                                  const tfc_tensor *inputs, size_t num_inputs,
                                  const int64_t *keep, tfc_tensor *outputs,
                                  size_t num_outputs) {
  return guarded([&] {
    return exclusive(session, [&] {
      return run(session, inputs, num_inputs, outputs, num_outputs, keep);
    });
  });
}

tfc_status tfc_session_run_into(tfc_session *session,
                                const tfc_tensor *inputs, size_t num_inputs,
                                const int64_t *keep, tfc_tensor *outputs,
                                size_t num_outputs) {
  return guarded([&] {
    return exclusive(session, [&] {
      return run(session, inputs, num_inputs, outputs, num_outputs, keep,
                 /*into=*/true);
    });
  });
}

tfc_status tfc_session_run_rows(tfc_session *session, int64_t first,
                                int64_t num_rows, const int64_t *positions,
                                const tfc_tensor *inputs, size_t num_inputs,
                                tfc_tensor *outputs, size_t num_outputs) {
  return guarded([&] {
    return exclusive(session, [&] {
      return runRows(session, first, num_rows, positions, inputs, num_inputs,
                     outputs, num_outputs);
    });
  });
}

int tfc_session_can_run_rows(const tfc_session *session) {
  return session && rowsEntry(session) ? 1 : 0;
}

int tfc_session_can_pad(const tfc_session *session) {
  if (!session)
    return 0;
  for (const tfc_session::State &st : session->states)
    if (st.name == "cache.bias")
      return 1;
  return 0;
}

tfc_status tfc_session_run_entry(tfc_session *session, const char *entry,
                                 const tfc_tensor *inputs, size_t num_inputs,
                                 tfc_tensor *outputs, size_t num_outputs) {
  return guarded([&] {
    return exclusive(session, [&] {
      return runEntry(session, entry, inputs, num_inputs, outputs,
                      num_outputs);
    });
  });
}

tfc_status tfc_session_reorder(tfc_session *session, const int64_t *rows,
                               size_t num_rows) {
  return guarded([&] {
    return exclusive(session, [&] { return reorder(session, rows, num_rows); });
  });
}

size_t tfc_session_num_inputs(const tfc_session *session) {
  return session ? session->userInputs.size() : 0;
}

const char *tfc_session_input_name(const tfc_session *session, size_t index) {
  if (!session || index >= session->userInputs.size())
    return nullptr;
  return session->entry->inputs[session->userInputs[index]].name.c_str();
}

int64_t tfc_session_position(const tfc_session *session) {
  return session ? session->position : 0;
}

int64_t tfc_session_context(const tfc_session *session) {
  return session ? session->context : 0;
}

tfc_status tfc_session_rewind(tfc_session *session, int64_t position) {
  return exclusive(session, [&] {
    if (position < 0 || position > session->position)
      return setError(TFC_ERR_INVALID_ARGUMENT,
                      "cannot rewind to " + std::to_string(position) +
                          ": the session holds " +
                          std::to_string(session->position) + " tokens");
    // A rolling cache of W positions holds [P - W, P) of the P tokens; the
    // next step at `position` reads its window's position - min(position,
    // W - 1) onwards, which must not have been overwritten.
    int64_t w = session->ring, held = session->position;
    if (w > 0 && position > 0 &&
        position - std::min<int64_t>(position, w - 1) < held - w)
      return setError(TFC_ERR_INVALID_ARGUMENT,
                      "cannot rewind to " + std::to_string(position) +
                          ": the session's sliding-window cache keeps only "
                          "the last " +
                          std::to_string(w) + " of its " +
                          std::to_string(held) +
                          " positions (rewind to 0 or to " +
                          std::to_string(std::max<int64_t>(held - 1, 0)) +
                          " or later)");
    session->position = position;
    return TFC_OK;
  });
}

uint64_t tfc_session_state_bytes(const tfc_session *session) {
  uint64_t total = 0;
  if (session)
    for (const tfc_session::State &st : session->states)
      total += st.bytes;
  return total;
}

void tfc_session_free(tfc_session *session) { delete session; }
