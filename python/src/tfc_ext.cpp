//===- tfc_ext.cpp - The _tfc extension: tfc.h for Python -----------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// A thin nanobind layer over the C API of libtfcrt (tfc/Runtime/tfc.h), no
// C++ classes of the runtime: models, entries, runs on NumPy arrays (inputs
// read in place, outputs handed over without a copy), sessions, step-wise
// generation, tokenizers, decode streams and chat templates. The GIL is
// released while tfc computes. A failing call raises with tfc_last_error():
// ValueError for bad arguments and inputs, OSError for files, MemoryError,
// and tfc.Error (a RuntimeError) for the rest. The Python API users see is
// python/tfc/__init__.py.
//
//===----------------------------------------------------------------------===//

#include "tfc/Runtime/tfc.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace nb = nanobind;
using namespace nb::literals;

namespace {

/// tfc.Error: a failure that is neither a bad argument nor a file.
struct TfcError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void raise(tfc_status status) {
  std::string message = tfc_last_error();
  switch (status) {
  case TFC_ERR_INVALID_ARGUMENT:
  case TFC_ERR_INPUT:
    throw nb::value_error(message.c_str());
  case TFC_ERR_IO:
    PyErr_SetString(PyExc_OSError, message.c_str());
    throw nb::python_error();
  case TFC_ERR_OUT_OF_MEMORY:
    PyErr_SetString(PyExc_MemoryError, message.c_str());
    throw nb::python_error();
  default:
    throw TfcError(message);
  }
}

void check(tfc_status status) {
  if (status != TFC_OK)
    raise(status);
}

nb::dlpack::dtype toDlpack(tfc_dtype d) {
  using nb::dlpack::dtype_code;
  auto make = [](dtype_code code, int bits) {
    return nb::dlpack::dtype{static_cast<uint8_t>(code),
                             static_cast<uint8_t>(bits), 1};
  };
  switch (d) {
  case TFC_F32:
    return make(dtype_code::Float, 32);
  case TFC_F64:
    return make(dtype_code::Float, 64);
  case TFC_F16:
    return make(dtype_code::Float, 16);
  case TFC_BF16:
    return make(dtype_code::Bfloat, 16);
  case TFC_I64:
    return make(dtype_code::Int, 64);
  case TFC_I32:
    return make(dtype_code::Int, 32);
  case TFC_BOOL:
    return make(dtype_code::Bool, 8);
  default:
    throw nb::value_error(
        (std::string("tfc dtype ") + tfc_dtype_name(d) + " has no array dtype")
            .c_str());
  }
}

tfc_dtype fromDlpack(nb::dlpack::dtype d) {
  using nb::dlpack::dtype_code;
  for (tfc_dtype t :
       {TFC_F32, TFC_F64, TFC_F16, TFC_BF16, TFC_I64, TFC_I32, TFC_BOOL}) {
    nb::dlpack::dtype x = toDlpack(t);
    if (x.code == d.code && x.bits == d.bits && d.lanes == 1)
      return t;
  }
  throw nb::type_error("an array of a dtype tfc does not take (tfc takes "
                       "float32, float64, float16, bfloat16, int64, int32 "
                       "and bool)");
}

using InArray = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;
using OutArray = nb::ndarray<nb::c_contig, nb::device::cpu>;
using NumpyArray = nb::ndarray<nb::numpy>;

/// A tfc_tensor over an array's own memory (an input, or an output the
/// caller gave).
template <typename Array> tfc_tensor viewOf(const Array &a) {
  if (a.ndim() > TFC_MAX_RANK)
    throw nb::value_error(("an array of rank " + std::to_string(a.ndim()) +
                           ": tfc takes rank " + std::to_string(TFC_MAX_RANK) +
                           " at most")
                              .c_str());
  tfc_tensor t{};
  t.dtype = fromDlpack(a.dtype());
  t.rank = static_cast<int32_t>(a.ndim());
  for (size_t i = 0; i < a.ndim(); ++i)
    t.shape[i] = static_cast<int64_t>(a.shape(i));
  t.data = const_cast<void *>(static_cast<const void *>(a.data()));
  return t;
}

/// An output of the runtime as a NumPy array that owns it (no copy).
nb::object adopt(tfc_tensor t) {
  auto *held = new tfc_tensor(t);
  nb::capsule owner(held, [](void *p) noexcept {
    auto *tensor = static_cast<tfc_tensor *>(p);
    tfc_tensor_release(tensor);
    delete tensor;
  });
  size_t shape[TFC_MAX_RANK];
  for (int32_t i = 0; i < t.rank; ++i)
    shape[i] = static_cast<size_t>(t.shape[i]);
  nb::dlpack::dtype dtype = toDlpack(t.dtype); // the capsule frees on throw
  return nb::cast(NumpyArray(t.data, static_cast<size_t>(t.rank), shape, owner,
                             nullptr, dtype));
}

nb::dict tensorInfo(const tfc_tensor_info &info) {
  nb::dict d;
  d["name"] = info.name ? info.name : "";
  d["dtype"] = tfc_dtype_name(info.dtype);
  nb::list shape;
  for (int32_t i = 0; i < info.rank; ++i) {
    if (info.dims[i] >= 0)
      shape.append(info.dims[i]);
    else if (info.dim_names[i])
      shape.append(nb::str(info.dim_names[i]));
    else
      shape.append(nb::none());
  }
  d["shape"] = nb::tuple(shape);
  nb::list dimMax;
  for (int32_t i = 0; i < info.rank; ++i)
    dimMax.append(info.dims[i] >= 0 ? info.dims[i] : info.dim_max[i]);
  d["max_shape"] = nb::tuple(dimMax);
  d["bound"] = info.bound;
  return d;
}

struct Model {
  tfc_model *m = nullptr;
  explicit Model(const std::string &path) {
    tfc_status s;
    {
      nb::gil_scoped_release unlocked;
      s = tfc_model_load(path.c_str(), &m);
    }
    check(s);
  }
  ~Model() { tfc_model_free(m); }
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;

  void loadWeights(const std::string &path) {
    tfc_status s;
    {
      nb::gil_scoped_release unlocked;
      s = tfc_model_load_weights(m, path.c_str());
    }
    check(s);
  }

  size_t entryIndex(const std::string &entry) const {
    int64_t e = tfc_model_find_entry(m, entry.c_str());
    if (e < 0) {
      std::string names;
      tfc_model_info info;
      tfc_model_get_info(m, &info);
      for (size_t i = 0; i < info.num_entries; ++i)
        names += std::string(i ? ", " : "") + tfc_model_entry_name(m, i);
      throw nb::value_error(
          ("the model has no entry '" + entry + "' (entries: " + names + ")")
              .c_str());
    }
    return static_cast<size_t>(e);
  }

  nb::list entries() const {
    tfc_model_info info;
    check(tfc_model_get_info(m, &info));
    nb::list out;
    for (size_t e = 0; e < info.num_entries; ++e) {
      nb::dict d;
      d["name"] = tfc_model_entry_name(m, e);
      nb::list ins, outs;
      for (size_t i = 0; i < tfc_entry_num_inputs(m, e); ++i) {
        tfc_tensor_info ti;
        check(tfc_entry_input_info(m, e, i, &ti));
        nb::dict t = tensorInfo(ti);
        t["state"] = tfc_entry_input_is_state(m, e, i) != 0;
        ins.append(t);
      }
      for (size_t i = 0; i < tfc_entry_num_outputs(m, e); ++i) {
        tfc_tensor_info ti;
        check(tfc_entry_output_info(m, e, i, &ti));
        outs.append(tensorInfo(ti));
      }
      d["inputs"] = ins;
      d["outputs"] = outs;
      out.append(d);
    }
    return out;
  }

  std::string metadataJson() const {
    const char *j = tfc_model_metadata_json(m);
    return j ? j : "";
  }

  nb::list run(const std::string &entry, const std::vector<InArray> &inputs,
               std::optional<std::vector<OutArray>> into) {
    size_t e = entryIndex(entry);
    std::vector<tfc_tensor> in;
    for (const InArray &a : inputs)
      in.push_back(viewOf(a));
    size_t numOut = tfc_entry_num_outputs(m, e);
    std::vector<tfc_tensor> out(numOut);
    nb::list result;
    if (into) {
      if (into->size() != numOut)
        throw nb::value_error(("entry '" + entry + "' has " +
                               std::to_string(numOut) + " outputs, out has " +
                               std::to_string(into->size()))
                                  .c_str());
      for (size_t i = 0; i < numOut; ++i)
        out[i] = viewOf((*into)[i]);
      tfc_status s;
      {
        nb::gil_scoped_release unlocked;
        s = tfc_run_into(m, entry.c_str(), in.data(), in.size(), out.data(),
                         out.size());
      }
      check(s);
      for (size_t i = 0; i < numOut; ++i)
        result.append(nb::cast((*into)[i]));
      return result;
    }
    tfc_status s;
    {
      nb::gil_scoped_release unlocked;
      s = tfc_run(m, entry.c_str(), in.data(), in.size(), out.data(),
                  out.size());
    }
    check(s);
    for (size_t i = 0; i < numOut; ++i)
      result.append(adopt(out[i]));
    return result;
  }
};

struct Session {
  nb::object model; // keeps the Model alive
  tfc_session *s = nullptr;
  Session(nb::object modelObj, const std::string &entry, int64_t batch,
          int64_t context)
      : model(std::move(modelObj)) {
    Model &m = nb::cast<Model &>(model);
    tfc_status st;
    {
      nb::gil_scoped_release unlocked;
      st = tfc_session_create(m.m, entry.c_str(), batch, context, &s);
    }
    check(st);
  }
  ~Session() { tfc_session_free(s); }
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;

  nb::list run(const std::vector<InArray> &inputs, size_t numOutputs) {
    std::vector<tfc_tensor> in;
    for (const InArray &a : inputs)
      in.push_back(viewOf(a));
    std::vector<tfc_tensor> out(numOutputs);
    tfc_status st;
    {
      nb::gil_scoped_release unlocked;
      st = tfc_session_run(s, in.data(), in.size(), out.data(), out.size());
    }
    check(st);
    nb::list result;
    for (tfc_tensor &t : out)
      result.append(adopt(t));
    return result;
  }
};

const char *reasonName(tfc_stop_reason r) {
  switch (r) {
  case TFC_STOP_EOS:
    return "stop";
  case TFC_STOP_LENGTH:
    return "length";
  case TFC_STOP_CONTEXT:
    return "context";
  default:
    return nullptr;
  }
}

struct Generation {
  nb::object session; // keeps the Session alive
  tfc_generation *g = nullptr;
  std::vector<int64_t> eos;
  Generation(nb::object sessionObj, const std::vector<int64_t> &prompt,
             int64_t maxNewTokens, double temperature, int64_t topK,
             double topP, double minP, double repetitionPenalty, uint64_t seed,
             std::vector<int64_t> eosIds)
      : session(std::move(sessionObj)), eos(std::move(eosIds)) {
    Session &s = nb::cast<Session &>(session);
    tfc_generate_params p;
    tfc_generate_params_init(&p);
    p.max_new_tokens = maxNewTokens;
    p.temperature = temperature;
    p.top_k = topK;
    p.top_p = topP;
    p.min_p = minP;
    p.repetition_penalty = repetitionPenalty;
    p.seed = seed;
    p.eos_ids = eos.data();
    p.num_eos_ids = eos.size();
    check(tfc_generation_start(s.s, prompt.data(), prompt.size(), &p, &g));
  }
  ~Generation() { tfc_generation_free(g); }
  Generation(const Generation &) = delete;
  Generation &operator=(const Generation &) = delete;

  /// (token, finish reason or None); token -1 once ended.
  std::pair<int64_t, std::optional<std::string>> next() {
    int64_t token;
    tfc_stop_reason reason;
    tfc_status st;
    {
      nb::gil_scoped_release unlocked;
      st = tfc_generation_next(g, &token, &reason);
    }
    check(st);
    const char *name = reasonName(reason);
    return {token, name ? std::optional<std::string>(name) : std::nullopt};
  }
};

struct Tokenizer {
  tfc_tokenizer *t = nullptr;
  explicit Tokenizer(const std::string &path) {
    tfc_status s;
    {
      nb::gil_scoped_release unlocked;
      s = tfc_tokenizer_load(path.c_str(), &t);
    }
    check(s);
  }
  ~Tokenizer() { tfc_tokenizer_free(t); }
  Tokenizer(const Tokenizer &) = delete;
  Tokenizer &operator=(const Tokenizer &) = delete;

  /// (ids, type ids, attention mask).
  std::tuple<std::vector<int64_t>, std::vector<int64_t>, std::vector<int64_t>>
  encode(const std::string &text, bool addSpecial) const {
    size_t n = 0;
    std::vector<int64_t> ids, types, mask;
    tfc_status s;
    {
      nb::gil_scoped_release unlocked;
      s = tfc_tokenizer_encode(t, text.data(), text.size(), addSpecial, nullptr,
                               0, &n);
      if (s == TFC_OK) {
        ids.resize(n);
        types.resize(n);
        mask.resize(n);
        s = tfc_tokenizer_encode_with_masks(t, text.data(), text.size(),
                                            addSpecial, ids.data(),
                                            types.data(), mask.data(), n, &n);
      }
    }
    check(s);
    return {ids, types, mask};
  }

  std::string decode(const std::vector<int64_t> &ids, bool skipSpecial) const {
    size_t len = 0;
    std::string text;
    tfc_status s;
    {
      nb::gil_scoped_release unlocked;
      s = tfc_tokenizer_decode(t, ids.data(), ids.size(), skipSpecial, nullptr,
                               0, &len);
      if (s == TFC_OK) {
        text.resize(len + 1);
        s = tfc_tokenizer_decode(t, ids.data(), ids.size(), skipSpecial,
                                 text.data(), text.size(), &len);
        text.resize(len);
      }
    }
    check(s);
    return text;
  }

  std::optional<int64_t> tokenToId(const std::string &token) const {
    int64_t id;
    if (tfc_tokenizer_token_to_id(t, token.c_str(), &id) != TFC_OK)
      return std::nullopt;
    return id;
  }

  std::optional<nb::bytes> idToToken(int64_t id) const {
    const char *token;
    size_t len;
    if (tfc_tokenizer_id_to_token(t, id, &token, &len) != TFC_OK)
      return std::nullopt;
    return nb::bytes(token, len);
  }

  std::tuple<int64_t, int64_t, bool> padIds() const {
    int64_t id, type;
    int left;
    check(tfc_tokenizer_pad_ids(t, &id, &type, &left));
    return {id, type, left != 0};
  }
};

struct DecodeStream {
  nb::object tokenizer; // keeps the Tokenizer alive
  tfc_decode_stream *d = nullptr;
  DecodeStream(nb::object tok, bool skipSpecial) : tokenizer(std::move(tok)) {
    check(tfc_decode_stream_create(nb::cast<Tokenizer &>(tokenizer).t,
                                   skipSpecial, &d));
  }
  ~DecodeStream() { tfc_decode_stream_free(d); }
  DecodeStream(const DecodeStream &) = delete;
  DecodeStream &operator=(const DecodeStream &) = delete;

  std::string feed(int64_t id) {
    const char *text;
    size_t len;
    check(tfc_decode_stream_feed(d, id, &text, &len));
    return std::string(text, len);
  }
  std::string finish() {
    const char *text;
    size_t len;
    check(tfc_decode_stream_finish(d, &text, &len));
    return std::string(text, len);
  }
};

/// Calls fn(ids, cap, &n) twice: for the size, then for the ids.
template <typename Fn> std::vector<int64_t> twoCalls(Fn fn) {
  size_t n = 0;
  check(fn(nullptr, 0, &n));
  std::vector<int64_t> ids(n);
  if (n)
    check(fn(ids.data(), n, &n));
  return ids;
}

struct ChatTemplate {
  tfc_chat_template *c = nullptr;
  ChatTemplate() = default;
  ~ChatTemplate() { tfc_chat_template_free(c); }
  ChatTemplate(const ChatTemplate &) = delete;
  ChatTemplate &operator=(const ChatTemplate &) = delete;

  std::string render(const std::string &contextJson) const {
    size_t len = 0;
    check(tfc_chat_template_render(c, contextJson.c_str(), nullptr, 0, &len));
    std::string text(len + 1, '\0');
    check(tfc_chat_template_render(c, contextJson.c_str(), text.data(),
                                   text.size(), &len));
    text.resize(len);
    return text;
  }
  std::vector<int64_t> stopIds(const Tokenizer &tok) const {
    return twoCalls([&](int64_t *ids, size_t cap, size_t *n) {
      return tfc_chat_template_stop_ids(c, tok.t, ids, cap, n);
    });
  }
};

} // namespace

NB_MODULE(_tfc, m) {
  m.doc() = "The C API of libtfcrt (tfc.h); use the tfc package, not this.";
  nb::exception<TfcError>(m, "Error", PyExc_RuntimeError);

  m.def(
      "set_num_threads", [](int n) { check(tfc_set_num_threads(n)); }, "n"_a);
  m.def("num_threads", &tfc_num_threads);
  m.def(
      "checkpoint_eos_ids",
      [](const std::string &path, const Tokenizer *tok) {
        return twoCalls([&](int64_t *ids, size_t cap, size_t *n) {
          return tfc_checkpoint_eos_ids(path.c_str(), tok ? tok->t : nullptr,
                                        ids, cap, n);
        });
      },
      "path"_a, "tokenizer"_a.none());

  nb::class_<Model>(m, "Model")
      .def(nb::init<const std::string &>(), "path"_a)
      .def("load_weights", &Model::loadWeights, "path"_a)
      .def("entries", &Model::entries)
      .def("metadata_json", &Model::metadataJson)
      .def("cpu_variant",
           [](const Model &self) {
             const char *v = tfc_model_cpu_variant(self.m);
             return std::string(v ? v : "");
           })
      .def("run", &Model::run, "entry"_a, "inputs"_a, "into"_a.none());

  nb::class_<Session>(m, "Session")
      .def(nb::init<nb::object, const std::string &, int64_t, int64_t>(),
           "model"_a, "entry"_a, "batch"_a, "context"_a)
      .def("run", &Session::run, "inputs"_a, "num_outputs"_a)
      .def_prop_ro("input_names",
                   [](const Session &s) {
                     std::vector<std::string> names;
                     for (size_t i = 0; i < tfc_session_num_inputs(s.s); ++i)
                       names.push_back(tfc_session_input_name(s.s, i));
                     return names;
                   })
      .def_prop_ro("position",
                   [](const Session &s) { return tfc_session_position(s.s); })
      .def_prop_ro("context",
                   [](const Session &s) { return tfc_session_context(s.s); })
      .def("rewind", [](Session &s, int64_t position) {
        check(tfc_session_rewind(s.s, position));
      });

  nb::class_<Generation>(m, "Generation")
      .def(nb::init<nb::object, const std::vector<int64_t> &, int64_t, double,
                    int64_t, double, double, double, uint64_t,
                    std::vector<int64_t>>(),
           "session"_a, "prompt"_a, "max_new_tokens"_a, "temperature"_a,
           "top_k"_a, "top_p"_a, "min_p"_a, "repetition_penalty"_a, "seed"_a,
           "eos_ids"_a)
      .def("next", &Generation::next)
      .def_prop_ro("num_tokens", [](const Generation &g) {
        return tfc_generation_num_tokens(g.g);
      });

  nb::class_<Tokenizer>(m, "Tokenizer")
      .def(nb::init<const std::string &>(), "path"_a)
      .def("encode", &Tokenizer::encode, "text"_a, "add_special_tokens"_a)
      .def("decode", &Tokenizer::decode, "ids"_a, "skip_special_tokens"_a)
      .def("token_to_id", &Tokenizer::tokenToId, "token"_a)
      .def("id_to_token", &Tokenizer::idToToken, "id"_a)
      .def("pad_ids", &Tokenizer::padIds)
      .def("set_truncation",
           [](Tokenizer &t, size_t n) {
             check(tfc_tokenizer_set_truncation(t.t, n));
           })
      .def("set_padding",
           [](Tokenizer &t, size_t n) {
             check(tfc_tokenizer_set_padding(t.t, n));
           })
      .def_prop_ro("vocab_size", [](const Tokenizer &t) {
        return tfc_tokenizer_vocab_size(t.t);
      });

  nb::class_<DecodeStream>(m, "DecodeStream")
      .def(nb::init<nb::object, bool>(), "tokenizer"_a, "skip_special_tokens"_a)
      .def("feed", &DecodeStream::feed, "id"_a)
      .def("finish", &DecodeStream::finish);

  nb::class_<ChatTemplate>(m, "ChatTemplate")
      .def_static(
          "load",
          [](const std::string &path) {
            auto *t = new ChatTemplate();
            tfc_status s = tfc_chat_template_load(path.c_str(), &t->c);
            if (s != TFC_OK) {
              delete t;
              raise(s);
            }
            return t;
          },
          "path"_a, nb::rv_policy::take_ownership)
      .def_static(
          "parse",
          [](const std::string &source, std::optional<std::string> bos,
             std::optional<std::string> eos) {
            auto *t = new ChatTemplate();
            tfc_status s = tfc_chat_template_parse(
                source.c_str(), bos ? bos->c_str() : nullptr,
                eos ? eos->c_str() : nullptr, &t->c);
            if (s != TFC_OK) {
              delete t;
              raise(s);
            }
            return t;
          },
          "source"_a, "bos_token"_a.none(), "eos_token"_a.none(),
          nb::rv_policy::take_ownership)
      .def("render", &ChatTemplate::render, "context_json"_a)
      .def("stop_ids", &ChatTemplate::stopIds, "tokenizer"_a);
}
