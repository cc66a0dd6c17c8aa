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

#include "Model.h"

#include "tfc/Runtime/MemoryPlan.h"

#include <cstring>
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
    size_t input;
    std::vector<int64_t> shape;
    AlignedBuffer buffer;
    uint64_t bytes;
  };
  std::vector<State> states;
  /// The named dim along which runs add tokens (input_ids' second axis).
  std::string seqDim;
  std::string batchDim;
};

namespace {

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
  if (model->cuda)
    return setError(TFC_ERR_INVALID_ARGUMENT,
                    "sessions do not support CUDA models yet (the caches "
                    "would have to stay on the device)");
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
    if (in.state)
      s->states.push_back({i, {}, nullptr, 0});
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
  for (tfc_session::State &st : s->states) {
    const TensorSpec &in = e.inputs[st.input];
    uint64_t bytes = tfc_dtype_size(in.dtype);
    for (const DimSpec &d : in.shape) {
      int64_t n = d.isStatic()           ? d.size
                  : d.name == s->batchDim ? batch
                  : d.name == "context"   ? context
                                          : -1;
      if (n < 0)
        return setError(TFC_ERR_INVALID_MODEL,
                        "state input '" + in.name + "' has the dim '" + d.name +
                            "', which a session cannot size");
      if (n > 0 && bytes > UINT64_MAX / static_cast<uint64_t>(n))
        return setError(TFC_ERR_OUT_OF_MEMORY,
                        "state input '" + in.name + "' is too large");
      bytes *= static_cast<uint64_t>(n);
      st.shape.push_back(n);
    }
    void *p = alignedAlloc(bytes, 64);
    if (!p)
      return setError(TFC_ERR_OUT_OF_MEMORY,
                      "out of memory allocating state '" + in.name + "' (" +
                          std::to_string(bytes) + " bytes)");
    std::memset(p, 0, bytes);
    st.buffer.reset(p);
    st.bytes = bytes;
  }
  *out = s.release();
  return TFC_OK;
}

tfc_status run(tfc_session *s, const tfc_tensor *inputs, size_t numInputs,
               tfc_tensor *outputs, size_t numOutputs) {
  if (!s)
    return setError(TFC_ERR_INVALID_ARGUMENT, "session is NULL");
  const EntrySpec &e = *s->entry;
  if (numInputs != s->userInputs.size() || (numInputs && !inputs)) {
    std::string names;
    for (size_t u : s->userInputs)
      names += (names.empty() ? "" : ", ") + e.inputs[u].name;
    return setError(TFC_ERR_INPUT, "a session of entry '" + e.name +
                                       "' takes " +
                                       std::to_string(s->userInputs.size()) +
                                       " inputs (" + names + "), " +
                                       std::to_string(numInputs) + " given");
  }
  // The tokens this run adds: the size of the sequence dim.
  int64_t added = -1;
  for (size_t k = 0; k < numInputs && added < 0; ++k) {
    const TensorSpec &spec = e.inputs[s->userInputs[k]];
    for (size_t a = 0; a < spec.shape.size(); ++a)
      if (!spec.shape[a].isStatic() && spec.shape[a].name == s->seqDim &&
          static_cast<int32_t>(a) < inputs[k].rank)
        added = inputs[k].shape[a];
  }
  if (added < 1)
    return setError(TFC_ERR_INPUT, "a session run needs at least one token "
                                   "along '" + s->seqDim + "'");
  if (added > s->context - s->position)
    return setError(TFC_ERR_INPUT,
                    "the context is full: " + std::to_string(s->position) +
                        " tokens + " + std::to_string(added) +
                        " new exceed the session's context of " +
                        std::to_string(s->context));
  std::vector<tfc_tensor> all(e.inputs.size());
  for (size_t k = 0; k < numInputs; ++k)
    all[s->userInputs[k]] = inputs[k];
  int64_t past = s->position;
  all[s->pastInput] = tfc_tensor{TFC_I64, 0, {}, &past, nullptr};
  for (tfc_session::State &st : s->states) {
    tfc_tensor &t = all[st.input];
    t.dtype = e.inputs[st.input].dtype;
    t.rank = static_cast<int32_t>(st.shape.size());
    for (size_t k = 0; k < st.shape.size(); ++k)
      t.shape[k] = st.shape[k];
    t.data = st.buffer.get();
    t.owner = nullptr;
  }
  tfc_status status = s->model->run(e.name.c_str(), all.data(), all.size(),
                                    outputs, numOutputs);
  if (status == TFC_OK)
    s->position += added;
  return status;
}

} // namespace

tfc_status tfc_session_create(tfc_model *model, const char *entry,
                              int64_t batch, int64_t context,
                              tfc_session **out) {
  return guarded([&] { return create(model, entry, batch, context, out); });
}

tfc_status tfc_session_run(tfc_session *session, const tfc_tensor *inputs,
                           size_t num_inputs, tfc_tensor *outputs,
                           size_t num_outputs) {
  return guarded(
      [&] { return run(session, inputs, num_inputs, outputs, num_outputs); });
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
  if (!session)
    return setError(TFC_ERR_INVALID_ARGUMENT, "session is NULL");
  if (position < 0 || position > session->position)
    return setError(TFC_ERR_INVALID_ARGUMENT,
                    "cannot rewind to " + std::to_string(position) +
                        ": the session holds " +
                        std::to_string(session->position) + " tokens");
  session->position = position;
  return TFC_OK;
}

uint64_t tfc_session_state_bytes(const tfc_session *session) {
  uint64_t total = 0;
  if (session)
    for (const tfc_session::State &st : session->states)
      total += st.bytes;
  return total;
}

void tfc_session_free(tfc_session *session) { delete session; }
