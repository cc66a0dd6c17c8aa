//===- tfc-run.cpp - Run a compiled model from the command line -----------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//   tfc-run model.so --weights w.safetensors [--entry NAME]
//           [--input NAME=VALUES | NAME:SHAPE=VALUES | NAME=FILE.npy
//                  | NAME=@GENERATOR:SHAPE ...]
//           [--output FILE.npy | --output NAME=FILE.npy ...]
//           [--time N] [--threads N] [--seed N] [--stats] [--info]
//
// Loads the model and its weights through libtfcrt's C API (tfc.h), builds
// the inputs, runs one entry, prints each output (dtype, shape, first values,
// min/max/mean, the argmax of the last position of logits-like outputs) and
// writes the requested outputs as .npy. Links libtfcrt only, no LLVM. Every
// error is "tfc-run: error: ..." and exit status 1.
//
//===----------------------------------------------------------------------===//

#include "tfc/Formats/Float16.h"
#include "tfc/Formats/Npy.h"
#include "tfc/Runtime/MemoryPlan.h"
#include "tfc/Runtime/ModelMetadata.h"
#include "tfc/Runtime/ThreadPool.h"
#include "tfc/Runtime/WeightInit.h"
#include "tfc/Runtime/tfc.h"
#include "tfc/Text/Tokenizer/Tokenizer.h"
#include "tfc/Text/Tokenizer/TokenizerSource.h"

#include "CommandLine.h"
#include "ModelCache.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <new>
#include <random>
#include <string>
#include <sys/resource.h>
#include <utility>
#include <vector>

using namespace tfc::rt;

namespace {

const char *const kUsage = R"(usage: tfc-run MODEL.so|CHECKPOINT [options]

Runs an entry point of a model compiled by tfc-compile. A checkpoint (a
Hugging Face directory, a .gguf, a .tfm) is compiled once into the cache
($TFC_CACHE_DIR/compiled, default ~/.cache/tfc/compiled) and reused; its
weights are then the default --weights, kept packed in $TFC_CACHE_DIR/packed
once bound (TFC_WEIGHTS_CACHE=0: not).

options:
  -w, --weights FILE      the model's weights (.safetensors); needed to run
                          a model that has weights
  -e, --entry NAME        the entry to run (default: the model's only entry)
  -i, --input SPEC        an input, by name; every input must be given:
        NAME=1,2,3          values filling the last dim (other dims are 1)
        NAME:2x3=1,2,3,4,5,6
                            values with an explicit shape ('x'-separated; an
                            empty shape is a scalar: NAME:=5)
        NAME=FILE.npy       a NumPy array (<f4 <f8 <f2 <i8 <i4 <i2 |i1 |u1 |b1, C
                            order); ints and floats convert to the dtype
        NAME=@KIND:SHAPE    generated: @zeros, @ones, @range (0, 1, ...,
                            modulo the input's bound), @random (floats in
                            [-1, 1), ints in [0, bound) or [0, 100), bools);
                            @fill:SHAPE:VALUE
  -t, --text TEXT         an input text (repeatable: a batch), tokenised with
                          the checkpoint's tokenizer into the entry's
                          input_ids (and attention_mask, token_type_ids when
                          it has them), padded to the longest, truncated to
                          the entry's sequence bound
      --text-file FILE    one input text per line (a batch)
      --tokenizer PATH    tokenizer.json, a directory holding one, or a .gguf
                          (default: the --weights path when it has one)
      --tokens            print each text's ids and token pieces
      --max-length N      truncate texts to N tokens (special tokens
                          included)
  -o, --output SPEC       write outputs as .npy: FILE.npy when the entry has
                          one output, else NAME=FILE.npy (repeatable)
      --time N            after the run, time N more runs (into output
                          buffers reused from run to run); print the median
                          and the minimum; --output then writes the last
                          timed run's outputs
      --threads N         threads to run on (default: TFC_NUM_THREADS, else
                          all hardware threads)
      --seed N            seed of @random inputs (default 0)
      --stats             print the memory plan of the last run (and, with
                          --time, how busy the threads were in the timed runs)
      --info              print the model's metadata (entries, inputs,
                          outputs, weights) and exit; with --weights, also
                          check the weights file
      --device DEV        cpu or cuda: check that the model was compiled
                          for it (tfc-compile --target=cuda makes CUDA
                          models; running one needs an NVIDIA GPU and
                          driver)
      --host-cpu          print the instruction-set features the runtime
                          finds on this host (with TFC_HOST_CPU's mask, if
                          set) and exit; no model needed
  -h, --help              this text

exit status: 0 on success, 1 on any error.
)";

[[noreturn]] void fail(const std::string &message) {
  std::fprintf(stderr, "tfc-run: error: %s\n", message.c_str());
  std::exit(1);
}

void note(const std::string &message) {
  std::fprintf(stderr, "tfc-run: note: %s\n", message.c_str());
}

struct Options {
  std::string model, weights, entry, device, tokenizer;
  std::vector<std::string> inputs, outputs, texts;
  bool tokens = false;
  int64_t maxLength = 0;
  int64_t timeRuns = 0;
  int threads = 0;
  uint64_t seed = 0;
  bool stats = false, info = false;
};

/// The host as the runtime sees it: what decides which models and CPU
/// variants run here (lit reads it for its CPU features, test/lit.cfg.py).
void printHostCpu() {
  std::string error = hostMaskError();
  if (!error.empty())
    fail(error);
  std::printf("arch: %s\n", std::string(hostArchitecture()).c_str());
  if (!hostMaskLevel().empty())
    std::printf("masked to: %s (TFC_HOST_CPU)\n",
                std::string(hostMaskLevel()).c_str());
  std::string features;
  for (std::string_view f : testableHostFeatures())
    if (hostHasFeature(f) == FeatureSupport::Yes)
      features += (features.empty() ? "" : " ") + std::string(f);
  std::printf("features: %s\n", features.c_str());
}

/// The lines of --text-file FILE.
std::vector<std::string> textFileLines(const std::string &file) {
  std::ifstream in(file, std::ios::binary);
  if (!in)
    fail("--text-file " + file + ": cannot open: " + std::strerror(errno));
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    lines.push_back(line);
  }
  if (lines.empty())
    fail("--text-file " + file + ": no lines");
  return lines;
}

Options parseOptions(int argc, char **argv) {
  Options o;
  std::vector<std::string> texts, textFiles;
  tfc::tools::CommandLine cli("tfc-run", kUsage);
  cli.add_flag_callback("--host-cpu", [] {
    printHostCpu();
    std::exit(0);
  });
  cli.add_option("model", o.model);
  cli.add_option("-w,--weights", o.weights);
  cli.add_option("-e,--entry", o.entry);
  cli.addRepeated("-i,--input", o.inputs);
  cli.addRepeated("-o,--output", o.outputs);
  CLI::Option *text = cli.addRepeated("-t,--text", texts);
  CLI::Option *textFile = cli.addRepeated("--text-file", textFiles);
  cli.add_option("--tokenizer", o.tokenizer);
  cli.add_flag("--tokens", o.tokens);
  cli.add_option("--max-length", o.maxLength)
      ->transform(tfc::tools::integerAtLeast(1));
  cli.add_option("--time", o.timeRuns)
      ->transform(tfc::tools::integerAtLeast(1));
  cli.add_option("--threads", o.threads)
      ->transform(tfc::tools::integerAtLeast(1) &
                  CLI::Validator(
                      [](std::string &v) {
                        return std::strtoll(v.c_str(), nullptr, 10) > 1024
                                   ? std::string("allows at most 1024 threads")
                                   : std::string();
                      },
                      ""));
  cli.add_option("--seed", o.seed)->transform(tfc::tools::nonNegativeInteger());
  cli.add_option("--device", o.device)
      ->check(CLI::Validator(
          [](std::string &v) {
            return v == "cpu" || v == "cuda"
                       ? std::string()
                       : "takes cpu or cuda, not '" + v + "'";
          },
          "cpu|cuda"));
  cli.add_flag("--stats", o.stats);
  cli.add_flag("--info", o.info);
  cli.parseOrExit(argc, argv);
  // --text and --text-file lines, in the order given.
  size_t nextText = 0, nextFile = 0;
  for (const CLI::Option *option : cli.parse_order()) {
    if (option == text) {
      o.texts.push_back(texts[nextText++]);
    } else if (option == textFile) {
      for (std::string &line : textFileLines(textFiles[nextFile++]))
        o.texts.push_back(std::move(line));
    }
  }
  if (o.model.empty())
    fail("no model given\n" + std::string(kUsage));
  return o;
}

//===----------------------------------------------------------------------===//
// Describing models
//===----------------------------------------------------------------------===//

std::string describeShape(const tfc_tensor_info &t) {
  std::string s = "[";
  for (int k = 0; k < t.rank; ++k) {
    s += k ? ", " : "";
    if (t.dims[k] >= 0)
      s += std::to_string(t.dims[k]);
    else if (t.dim_names[k])
      s += t.dim_names[k] +
           (t.dim_max[k] >= 0 ? "<=" + std::to_string(t.dim_max[k]) : "");
    else
      s += "?";
  }
  return s + "]";
}

std::string describe(const tfc_tensor_info &t) {
  std::string s = std::string(tfc_dtype_name(t.dtype)) + " " + describeShape(t);
  if (t.bound >= 0)
    s += ", values in [0, " + std::to_string(t.bound) + ")";
  return s;
}

std::string bytesString(uint64_t bytes) {
  char buf[64];
  if (bytes < 1024)
    std::snprintf(buf, sizeof buf, "%llu B",
                  static_cast<unsigned long long>(bytes));
  else if (bytes < (1u << 20))
    std::snprintf(buf, sizeof buf, "%.1f KiB", bytes / 1024.0);
  else if (bytes < (1u << 30))
    std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / 1048576.0);
  else
    std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / 1073741824.0);
  return buf;
}

/// The model's resident memory by kind and the process's peak (VmHWM).
std::string residentLine(tfc_model *model) {
  tfc_memory_stats m;
  tfc_model_memory_stats(model, &m);
  tfc_resident_stats s = {};
  s.struct_size = sizeof(s);
  if (tfc_model_resident_stats(model, &s) != TFC_OK)
    return std::string("resident: ") + tfc_last_error();
  std::string line = "resident: weights " + bytesString(s.weight_bytes);
  if (s.packed_file_bytes)
    line += " and derived constants " + bytesString(s.constant_bytes) +
            " mapped from a packed file";
  else
    line += " (" + bytesString(m.weight_bytes_mapped) + " mapped, " +
            bytesString(m.weight_bytes_copied) + " copied, " +
            bytesString(s.released_weight_bytes) +
            " released after init), derived constants " +
            bytesString(s.constant_bytes);
  line += ", arena " + bytesString(s.arena_bytes);
  struct rusage usage;
  if (getrusage(RUSAGE_SELF, &usage) == 0)
    line += "; process peak " +
            bytesString(static_cast<uint64_t>(usage.ru_maxrss) * 1024);
  return line;
}

void printInfo(tfc_model *model) {
  tfc_model_info info;
  if (tfc_model_get_info(model, &info) != TFC_OK)
    fail(tfc_last_error());
  std::printf("model '%s'\n", info.name);
  std::printf("  target: %s, cpu '%s', kernels on %s\n", info.triple, info.cpu,
              info.device);
  if (*info.features)
    std::printf("  features: %s\n", info.features);
  if (*tfc_model_cpu_variant(model))
    std::printf("  cpu variant: %s (of a multi-versioned library; "
                "TFC_CPU_VARIANT picks another)\n",
                tfc_model_cpu_variant(model));
  std::map<std::string, std::pair<size_t, uint64_t>> byDType;
  for (size_t i = 0; i < info.num_weights; ++i) {
    tfc_tensor_info w;
    tfc_model_weight_info(model, i, &w);
    uint64_t elements = 1, n = 0;
    for (int k = 0; k < w.rank; ++k)
      elements *= static_cast<uint64_t>(w.dims[k]);
    size_t blockElements = 1, blockBytes = 0;
    if (tfc_dtype_block(w.dtype, &blockElements, &blockBytes))
      n = elements / blockElements * blockBytes;
    auto &entry = byDType[tfc_dtype_name(w.dtype)];
    ++entry.first;
    entry.second += n;
  }
  std::printf("  weights: %zu tensors, %s", info.num_weights,
              bytesString(info.weight_bytes).c_str());
  if (!byDType.empty()) {
    std::printf(" (");
    bool first = true;
    for (auto &[dtype, count] : byDType) {
      std::printf("%s%zu %s", first ? "" : ", ", count.first, dtype.c_str());
      first = false;
    }
    std::printf(")");
  }
  std::printf("\n  derived constants: %zu buffer%s, %s\n", info.num_constants,
              info.num_constants == 1 ? "" : "s",
              bytesString(info.constant_bytes).c_str());
  for (size_t e = 0; e < info.num_entries; ++e) {
    std::printf("entry '%s'\n", tfc_model_entry_name(model, e));
    for (size_t i = 0; i < tfc_entry_num_inputs(model, e); ++i) {
      tfc_tensor_info t;
      tfc_entry_input_info(model, e, i, &t);
      std::printf("  input  '%s': %s\n", t.name, describe(t).c_str());
    }
    for (size_t i = 0; i < tfc_entry_num_outputs(model, e); ++i) {
      tfc_tensor_info t;
      tfc_entry_output_info(model, e, i, &t);
      std::printf("  output '%s': %s\n", t.name, describe(t).c_str());
    }
  }
}

//===----------------------------------------------------------------------===//
// Inputs
//===----------------------------------------------------------------------===//

/// Memory from calloc, whose new elements are not written: a large input
/// is zero pages that cost nothing until touched (@zeros of gigabytes is
/// instant and takes no memory).
template <typename T> struct ZeroedAllocator {
  using value_type = T;
  ZeroedAllocator() = default;
  template <typename U> ZeroedAllocator(const ZeroedAllocator<U> &) {}
  T *allocate(size_t n) {
    void *p = std::calloc(n, sizeof(T));
    if (!p)
      throw std::bad_alloc();
    return static_cast<T *>(p);
  }
  void deallocate(T *p, size_t) { std::free(p); }
  /// Value-initialisation: calloc's memory is zero already.
  template <typename U> void construct(U *) {}
  template <typename U, typename... Args>
  void construct(U *p, Args &&...args) {
    ::new (static_cast<void *>(p)) U(std::forward<Args>(args)...);
  }
  bool operator==(const ZeroedAllocator &) const { return true; }
  bool operator!=(const ZeroedAllocator &) const { return false; }
};
using Bytes = std::vector<uint8_t, ZeroedAllocator<uint8_t>>;

/// An input being built: its metadata and its data.
struct Input {
  tfc_tensor_info info;
  std::vector<int64_t> shape;
  Bytes data;
  bool given = false;

  uint64_t count() const {
    uint64_t n = 1;
    for (int64_t d : shape)
      n *= static_cast<uint64_t>(d);
    return n;
  }
};

bool isFloatDType(tfc_dtype d) {
  const DTypeTraits *t = dtypeTraits(d);
  return t && t->isFloat;
}

/// Stores `v` as element `i` of a buffer of dtype `d` (DTypeTraits' one
/// conversion: rounded once).
void storeFloat(Bytes &buf, tfc_dtype d, uint64_t i, double v) {
  dtypeStore(d, buf.data(), i, v);
}

void storeInt(Bytes &buf, tfc_dtype d, uint64_t i, int64_t v) {
  dtypeStoreInt(d, buf.data(), i, v);
}

std::vector<int64_t> parseShape(const std::string &text,
                                const std::string &where) {
  std::vector<int64_t> shape;
  if (text.empty())
    return shape;
  size_t start = 0;
  while (true) {
    size_t x = text.find('x', start);
    std::string part = text.substr(
        start, x == std::string::npos ? std::string::npos : x - start);
    long long d;
    if (!tfc::tools::parseInteger(part, d) || d < 0)
      fail(where + ": '" + text +
           "' is not a shape (sizes separated by 'x', as in 2x7)");
    shape.push_back(d);
    if (x == std::string::npos)
      break;
    start = x + 1;
  }
  if (shape.size() > TFC_MAX_RANK)
    fail(where + ": a shape has at most " + std::to_string(TFC_MAX_RANK) +
         " dims");
  return shape;
}

/// Checks the rank, the static sizes and the named dims' maxima (before any
/// memory is spent on data the model would refuse), then allocates the data,
/// zero-filled.
void allocate(Input &in, const std::string &where) {
  if (static_cast<int>(in.shape.size()) != in.info.rank)
    fail(where + ": shape has rank " + std::to_string(in.shape.size()) +
         ", but input '" + in.info.name + "' is " + describe(in.info));
  uint64_t n = 1;
  for (size_t k = 0; k < in.shape.size(); ++k) {
    // The runtime's messages (it checks again).
    int64_t d = in.shape[k];
    std::string dim = "input '" + std::string(in.info.name) + "': dim " +
                      std::to_string(k);
    if (in.info.dims[k] >= 0 && d != in.info.dims[k])
      fail(dim + " is " + std::to_string(d) + ", but the model expects " +
           std::to_string(in.info.dims[k]) + " (shape " +
           describeShape(in.info) + ")");
    if (in.info.dim_max[k] >= 0 && d > in.info.dim_max[k])
      fail(dim + " ('" + in.info.dim_names[k] + "') is " + std::to_string(d) +
           ", but the model allows at most " +
           std::to_string(in.info.dim_max[k]));
    if (d != 0 && n > (UINT64_C(1) << 40) / static_cast<uint64_t>(d))
      fail(where + ": the shape is too large");
    n *= static_cast<uint64_t>(d);
  }
  uint64_t bytes = n * tfc_dtype_size(in.info.dtype);
  try {
    in.data = Bytes();
    in.data.resize(bytes); // zero
  } catch (const std::bad_alloc &) {
    fail(where + ": cannot allocate " + std::to_string(bytes) +
         " bytes for the input");
  }
}

void parseValues(Input &in, const std::string &text, bool shapeGiven,
                 const std::string &where) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(
        start, comma == std::string::npos ? std::string::npos : comma - start);
    // Trim spaces.
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    items.push_back(item);
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  if (items.size() == 1 && items[0].empty())
    items.clear();
  if (!shapeGiven) {
    in.shape.assign(in.info.rank, 1);
    if (in.info.rank == 0) {
      if (items.size() != 1)
        fail(where + ": input '" + in.info.name +
             "' is a scalar; give one "
             "value");
    } else {
      in.shape.back() = static_cast<int64_t>(items.size());
    }
  }
  allocate(in, where);
  if (items.size() != in.count())
    fail(where + ": the shape holds " + std::to_string(in.count()) +
         " values, but " + std::to_string(items.size()) + " are given");
  tfc_dtype d = in.info.dtype;
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string &s = items[i];
    if (isFloatDType(d)) {
      char *end = nullptr;
      double v = std::strtod(s.c_str(), &end);
      if (s.empty() || *end != '\0')
        fail(where + ": '" + s + "' is not a number");
      storeFloat(in.data, d, i, v);
    } else if (d == TFC_BOOL) {
      if (s == "1" || s == "true" || s == "True")
        storeInt(in.data, d, i, 1);
      else if (s == "0" || s == "false" || s == "False")
        storeInt(in.data, d, i, 0);
      else
        fail(where + ": '" + s + "' is not a bool (0, 1, true, false)");
    } else {
      long long v;
      if (!tfc::tools::parseInteger(s, v))
        fail(where + ": '" + s + "' is not an integer");
      if (d == TFC_I32 && (v < INT32_MIN || v > INT32_MAX))
        fail(where + ": " + s + " does not fit in i32");
      storeInt(in.data, d, i, v);
    }
  }
}

void generate(Input &in, const std::string &spec, uint64_t seed,
              const std::string &where) {
  // @KIND:SHAPE[:VALUE]
  std::vector<std::string> parts;
  size_t start = 1;
  while (true) {
    size_t colon = spec.find(':', start);
    parts.push_back(spec.substr(
        start, colon == std::string::npos ? std::string::npos : colon - start));
    if (colon == std::string::npos)
      break;
    start = colon + 1;
  }
  const std::string &kind = parts[0];
  bool fill = kind == "fill";
  if (kind != "zeros" && kind != "ones" && kind != "range" &&
      kind != "random" && !fill)
    fail(where + ": unknown generator '@" + kind +
         "' (expected @zeros, @ones, @range, @random or @fill)");
  if (parts.size() != (fill ? 3u : 2u))
    fail(where + ": write @" + kind + (fill ? ":SHAPE:VALUE" : ":SHAPE") +
         ", as in @" + kind + (fill ? ":2x7:0.5" : ":2x7"));
  in.shape = parseShape(parts[1], where);
  if (fill) {
    // One value repeated: parse it as an inline list of one.
    Input one;
    one.info = in.info;
    one.shape.clear();
    one.info.rank = 0;
    parseValues(one, parts[2], true, where);
    allocate(in, where);
    size_t size = tfc_dtype_size(in.info.dtype);
    for (uint64_t i = 0, n = in.count(); i < n; ++i)
      std::memcpy(in.data.data() + i * size, one.data.data(), size);
    return;
  }
  allocate(in, where);
  // One pass over the data per generator, the dtype dispatched once:
  // millions of elements take milliseconds, not minutes.
  tfc_dtype d = in.info.dtype;
  uint64_t n = in.count();
  size_t size = tfc_dtype_size(d);
  if (kind == "zeros" || n == 0)
    return; // allocate() zero-filled the data
  if (kind == "ones") {
    Bytes one(size);
    if (isFloatDType(d))
      storeFloat(one, d, 0, 1.0);
    else
      storeInt(one, d, 0, 1);
    for (uint64_t i = 0; i < n; ++i)
      std::memcpy(in.data.data() + i * size, one.data(), size);
    return;
  }
  std::mt19937_64 rng(weightSeed(in.info.name, seed));
  uint64_t bound = in.info.bound > 0    ? uint64_t(in.info.bound)
                   : in.info.bound == 0 ? 0
                                        : 100;
  bool isRange = kind == "range";
  if (isFloatDType(d)) {
    std::uniform_real_distribution<double> uniform(-1, 1);
    for (uint64_t i = 0; i < n; ++i)
      storeFloat(in.data, d, i,
                 isRange ? static_cast<double>(i) : uniform(rng));
  } else if (d == TFC_BOOL) {
    for (uint64_t i = 0; i < n; ++i)
      in.data[i] = static_cast<uint8_t>(isRange ? i % 2 : rng() & 1);
  } else {
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t v = bound == 0 ? 0 : (isRange ? i : rng()) % bound;
      storeInt(in.data, d, i, static_cast<int64_t>(v));
    }
  }
}

void loadNpy(Input &in, const std::string &path, const std::string &where) {
  NpyArray a;
  std::string error;
  if (!readNpy(path, a, error))
    fail(where + ": " + error);
  tfc_dtype d = in.info.dtype;
  const DTypeTraits &from = traitsOf(a.type);
  const char *descr = from.npyDescr;
  bool same = from.api == d;
  if (!same && from.isFloat != isFloatDType(d))
    fail(where + ": " + path + " holds " + descr + " values, but input '" +
         in.info.name + "' is " + tfc_dtype_name(d) +
         (from.isFloat ? " (no float-to-integer conversion)"
                       : " (no integer-to-float conversion)"));
  in.shape = a.shape;
  allocate(in, where);
  if (same) {
    in.data.assign(a.data.begin(), a.data.end());
    return;
  }
  note(where + ": converting " + descr + " to " + tfc_dtype_name(d));
  for (uint64_t i = 0; i < a.numElements(); ++i) {
    if (from.isFloat) {
      storeFloat(in.data, d, i, dtypeLoad(a.type, a.data.data(), i));
      continue;
    }
    int64_t v = dtypeLoadInt(a.type, a.data.data(), i);
    if (d == TFC_I32 && (v < INT32_MIN || v > INT32_MAX))
      fail(where + ": " + std::to_string(v) + " does not fit in i32");
    if (d == TFC_BOOL && v != 0 && v != 1)
      fail(where + ": " + std::to_string(v) + " is not a bool (0 or 1)");
    storeInt(in.data, d, i, v);
  }
}

/// An input made from texts (--text): its name, shape and i64 values.
struct TextInput {
  std::string name;
  std::vector<int64_t> shape, values;
};

/// The tokenizer of --text, also used to show the argmax tokens of logits.
std::unique_ptr<tfc::rt::Tokenizer> gTokenizer;

/// Tokenises --text into the entry's input_ids, attention_mask and
/// token_type_ids (those it has).
std::vector<TextInput> textInputs(tfc_model *model, size_t entry,
                                  const Options &o) {
  if (o.texts.empty()) {
    if (o.tokens || !o.tokenizer.empty() || o.maxLength)
      fail("--tokens, --tokenizer and --max-length go with --text");
    return {};
  }
  std::string path = o.tokenizer;
  if (path.empty() && !o.weights.empty() && tfc::tools::hasTokenizer(o.weights))
    path = o.weights;
  if (path.empty())
    fail("--text needs a tokenizer: give --tokenizer PATH (or --weights with "
         "a tokenizer.json or a .gguf)");
  std::string error;
  gTokenizer = tfc::rt::openTokenizer(path, error);
  if (!gTokenizer)
    fail(error);
  // The token input: input_ids, else the first integer [batch, seq] input.
  size_t n = tfc_entry_num_inputs(model, entry);
  int64_t ids = -1, bound = -1;
  std::map<std::string, size_t> byName;
  for (size_t i = 0; i < n; ++i) {
    tfc_tensor_info info;
    tfc_entry_input_info(model, entry, i, &info);
    byName[info.name] = i;
    bool tokens = info.rank == 2 && (info.dtype == TFC_I64 || info.dtype == TFC_I32);
    if (tokens && (ids < 0 || std::string(info.name) == "input_ids")) {
      ids = static_cast<int64_t>(i);
      bound = info.dim_max[1];
    }
  }
  if (ids < 0)
    fail("entry '" + std::string(tfc_model_entry_name(model, entry)) +
         "' has no integer [batch, seq] input for the token ids of --text");
  int64_t limit = o.maxLength ? o.maxLength : bound;
  if (limit > 0) {
    tfc::rt::TruncationParams tr;
    if (gTokenizer->truncation())
      tr = *gTokenizer->truncation();
    if (o.maxLength || !gTokenizer->truncation() ||
        static_cast<int64_t>(tr.maxLength) > limit)
      tr.maxLength = static_cast<size_t>(limit);
    gTokenizer->setTruncation(tr);
  }
  tfc::rt::PaddingParams pad;
  if (gTokenizer->padding())
    pad = *gTokenizer->padding();
  pad.strategy = tfc::rt::PaddingParams::Strategy::BatchLongest;
  pad.padToMultipleOf = 0;
  gTokenizer->setPadding(pad);
  std::vector<tfc::rt::Encoding> enc;
  if (!gTokenizer->encodeBatch(o.texts, /*addSpecialTokens=*/true, enc, error))
    fail(error);
  int64_t batch = static_cast<int64_t>(enc.size());
  int64_t len = batch ? static_cast<int64_t>(enc[0].ids.size()) : 0;
  if (len == 0)
    fail("--text: the texts have no tokens");
  std::vector<TextInput> out;
  tfc_tensor_info idsInfo;
  tfc_entry_input_info(model, entry, ids, &idsInfo);
  out.push_back({idsInfo.name, {batch, len}, {}});
  bool haveMask = byName.count("attention_mask"),
       haveTypes = byName.count("token_type_ids");
  if (haveMask)
    out.push_back({"attention_mask", {batch, len}, {}});
  if (haveTypes)
    out.push_back({"token_type_ids", {batch, len}, {}});
  for (const tfc::rt::Encoding &e : enc) {
    out[0].values.insert(out[0].values.end(), e.ids.begin(), e.ids.end());
    auto append = [](TextInput &t, const std::vector<int64_t> &v) {
      t.values.insert(t.values.end(), v.begin(), v.end());
    };
    if (haveMask)
      append(out[1], e.attentionMask);
    if (haveTypes)
      append(out[haveMask ? 2 : 1], e.typeIds);
  }
  if (o.tokens)
    for (size_t b = 0; b < enc.size(); ++b) {
      size_t real = enc[b].ids.size();
      if (!enc[b].attentionMask.empty())
        real = std::count(enc[b].attentionMask.begin(),
                          enc[b].attentionMask.end(), 1);
      std::printf("text %zu: %zu tokens:", b, real);
      for (size_t k = 0; k < enc[b].ids.size(); ++k) {
        if (!enc[b].attentionMask.empty() && !enc[b].attentionMask[k])
          continue; // padding
        std::optional<std::string> piece = gTokenizer->idToToken(enc[b].ids[k]);
        std::printf(" %lld '%s'", static_cast<long long>(enc[b].ids[k]),
                    piece ? piece->c_str() : "?");
      }
      std::printf("\n");
    }
  return out;
}

std::vector<Input> buildInputs(tfc_model *model, size_t entry,
                               const Options &o,
                               const std::vector<TextInput> &fromText) {
  std::vector<Input> inputs(tfc_entry_num_inputs(model, entry));
  std::string names;
  for (size_t i = 0; i < inputs.size(); ++i) {
    tfc_entry_input_info(model, entry, i, &inputs[i].info);
    names += (i ? ", " : "") + std::string(inputs[i].info.name);
  }
  for (const TextInput &t : fromText)
    for (Input &in : inputs) {
      if (t.name != in.info.name)
        continue;
      if (in.info.dtype != TFC_I64 && in.info.dtype != TFC_I32)
        fail("input '" + t.name + "' is not an integer input: it cannot take "
                                  "token ids from --text");
      in.given = true;
      in.shape = t.shape;
      in.data.resize(t.values.size() * tfc_dtype_size(in.info.dtype));
      for (size_t k = 0; k < t.values.size(); ++k)
        storeInt(in.data, in.info.dtype, k, t.values[k]);
    }
  for (const std::string &spec : o.inputs) {
    std::string where = "--input " + spec;
    size_t eq = spec.find('=');
    if (eq == std::string::npos)
      fail(where + ": expected NAME=VALUES, NAME:SHAPE=VALUES, NAME=FILE.npy "
                   "or NAME=@KIND:SHAPE");
    std::string name = spec.substr(0, eq), value = spec.substr(eq + 1);
    std::string shapeText;
    bool shapeGiven = false;
    if (size_t colon = name.find(':'); colon != std::string::npos) {
      shapeText = name.substr(colon + 1);
      name = name.substr(0, colon);
      shapeGiven = true;
    }
    where = "--input " + name;
    auto it = std::find_if(inputs.begin(), inputs.end(), [&](const Input &in) {
      return name == in.info.name;
    });
    if (it == inputs.end())
      fail("entry '" + std::string(tfc_model_entry_name(model, entry)) +
           "' has no input '" + name +
           "' (inputs: " + (names.empty() ? "none" : names) + ")");
    if (it->given)
      fail(where + (o.texts.empty() ? ": given twice"
                                    : ": given twice (--text fills it)"));
    it->given = true;
    bool isNpy = value.size() > 4 && value.substr(value.size() - 4) == ".npy";
    if (shapeGiven && (isNpy || (!value.empty() && value[0] == '@')))
      fail(where + ": a shape (NAME:SHAPE=...) goes with inline values only");
    if (isNpy)
      loadNpy(*it, value, where);
    else if (!value.empty() && value[0] == '@')
      generate(*it, value, o.seed, where);
    else {
      if (shapeGiven)
        it->shape = parseShape(shapeText, where);
      parseValues(*it, value, shapeGiven, where);
    }
  }
  for (const Input &in : inputs)
    if (!in.given)
      fail("entry '" + std::string(tfc_model_entry_name(model, entry)) +
           "' needs input '" + in.info.name + "' (" + describe(in.info) +
           "); give it with --input " + in.info.name + "=...");
  return inputs;
}

//===----------------------------------------------------------------------===//
// Outputs
//===----------------------------------------------------------------------===//

double loadAsDouble(const tfc_tensor &t, uint64_t i) {
  return dtypeLoad(t.dtype, t.data, i);
}

std::string shapeOf(const tfc_tensor &t) {
  std::string s = "[";
  for (int k = 0; k < t.rank; ++k)
    s += (k ? ", " : "") + std::to_string(t.shape[k]);
  return s + "]";
}

std::string formatValue(const tfc_tensor &t, double v) {
  char buf[64];
  if (isFloatDType(t.dtype))
    std::snprintf(buf, sizeof buf, "%.6g", v);
  else
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
  return buf;
}

/// The number of elements of `t`.
uint64_t elementsOf(const tfc_tensor &t) {
  uint64_t n = 1;
  for (int k = 0; k < t.rank; ++k)
    n *= static_cast<uint64_t>(t.shape[k]);
  return n;
}

void printOutput(const char *name, const tfc_tensor &t) {
  uint64_t n = elementsOf(t);
  std::printf("output '%s': %s %s\n", name, tfc_dtype_name(t.dtype),
              shapeOf(t).c_str());
  if (n == 0) {
    std::printf("  (no elements)\n");
    return;
  }
  std::string first;
  for (uint64_t i = 0; i < n && i < 8; ++i)
    first += (i ? ", " : "") + formatValue(t, loadAsDouble(t, i));
  std::printf("  values: %s%s\n", first.c_str(), n > 8 ? ", ..." : "");
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  uint64_t nans = 0;
  for (uint64_t i = 0; i < n; ++i) {
    double v = loadAsDouble(t, i);
    if (std::isnan(v)) {
      ++nans;
      continue;
    }
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  if (nans < n)
    std::printf("  min %s  max %s  mean %.6g%s\n", formatValue(t, lo).c_str(),
                formatValue(t, hi).c_str(), sum / static_cast<double>(n - nans),
                nans ? ("  (" + std::to_string(nans) + " NaN)").c_str() : "");
  else
    std::printf("  all NaN\n");
  // Logits-like ([batch, seq, vocab]): the argmax over the last dim at the
  // last position of the second-to-last dim, for each leading (batch) index.
  if (isFloatDType(t.dtype) && t.rank >= 3 && t.shape[t.rank - 1] > 1 &&
      t.shape[t.rank - 2] > 0) {
    uint64_t vocab = static_cast<uint64_t>(t.shape[t.rank - 1]);
    uint64_t positions = static_cast<uint64_t>(t.shape[t.rank - 2]);
    uint64_t batches = n / (vocab * positions);
    std::string text;
    for (uint64_t b = 0; b < batches && b < 4; ++b) {
      uint64_t row = (b * positions + positions - 1) * vocab;
      uint64_t best = 0;
      double bestValue = -INFINITY;
      for (uint64_t v = 0; v < vocab; ++v) {
        double x = loadAsDouble(t, row + v);
        if (x > bestValue) {
          bestValue = x;
          best = v;
        }
      }
      std::string piece;
      if (gTokenizer) {
        std::string decoded, error;
        if (gTokenizer->decode({static_cast<int64_t>(best)}, false, decoded,
                               error))
          piece = " '" + decoded + "'";
      }
      text += (b ? ", " : "") +
              (batches > 1 ? "[" + std::to_string(b) + "] " : std::string()) +
              std::to_string(best) + piece + " (" +
              formatValue(t, bestValue) + ")";
    }
    std::printf("  argmax at the last position: %s%s\n", text.c_str(),
                batches > 4 ? ", ..." : "");
  }
}

void writeOutput(const std::string &path, const tfc_tensor &t) {
  std::vector<int64_t> shape(t.shape, t.shape + t.rank);
  uint64_t n = elementsOf(t);
  std::string error;
  bool ok;
  const DTypeTraits *traits = dtypeTraits(t.dtype);
  if (traits && traits->npyDescr) {
    ok = writeNpy(path, traits->type, shape, t.data, error);
  } else if (traits && traits->isFloat) {
    // NumPy has no bfloat16: widen to f32 (exact).
    std::vector<float> wide(n);
    for (uint64_t i = 0; i < n; ++i)
      wide[i] = static_cast<float>(loadAsDouble(t, i));
    note(path + ": " + traits->name + " output written as <f4");
    ok = writeNpy(path, DType::F32, shape, wide.data(), error);
  } else {
    ok = false;
    error = path + ": unknown dtype";
  }
  if (!ok)
    fail(error);
}

} // namespace

int run(int argc, char **argv) {
  Options o = parseOptions(argc, argv);
  // A checkpoint instead of a library: compiled once into the cache.
  std::string packedCache;
  if (std::string error; !tfc::tools::resolveModelArgument(
          o.model, {}, argv[0], /*quiet=*/false, o.weights, error,
          o.info ? nullptr : &packedCache))
    fail(error);
  if (o.threads > 0 && tfc_set_num_threads(o.threads) != TFC_OK)
    fail(tfc_last_error());

  if (!o.device.empty()) {
    // The metadata says where the kernels run; no driver is needed for that.
    tfc_model *inspected = nullptr;
    if (tfc_model_inspect(o.model.c_str(), &inspected) != TFC_OK)
      fail(tfc_last_error());
    tfc_model_info info;
    tfc_model_get_info(inspected, &info);
    std::string device = info.device;
    tfc_model_free(inspected);
    if (device != o.device)
      fail("--device=" + o.device + ": " + o.model + " was compiled for " +
           (device == "cuda" ? std::string("CUDA GPUs")
                             : std::string("the CPU (tfc-compile "
                                           "--target=cuda makes a CUDA "
                                           "model)")));
  }

  tfc_model *model = nullptr;
  if ((o.info ? tfc_model_inspect : tfc_model_load)(o.model.c_str(), &model) !=
      TFC_OK)
    fail(tfc_last_error());

  if (o.info) {
    printInfo(model);
    if (!o.weights.empty()) {
      // Checking a weights file needs a loadable model.
      tfc_model *runnable = nullptr;
      if (tfc_model_load(o.model.c_str(), &runnable) != TFC_OK ||
          tfc_model_load_weights(runnable, o.weights.c_str()) != TFC_OK)
        fail(tfc_last_error());
      tfc_memory_stats stats;
      tfc_model_memory_stats(runnable, &stats);
      std::printf("weights file %s matches: %s used in place, %s copied\n",
                  o.weights.c_str(),
                  bytesString(stats.weight_bytes_mapped).c_str(),
                  bytesString(stats.weight_bytes_copied).c_str());
      if (*tfc_model_notes(runnable))
        note(tfc_model_notes(runnable));
      tfc_model_free(runnable);
    }
    tfc_model_free(model);
    return 0;
  }

  tfc_model_info info;
  tfc_model_get_info(model, &info);
  if (!o.weights.empty()) {
    std::string error;
    if (!tfc::tools::bindWeightsCached(model, o.weights, packedCache,
                                       /*quiet=*/false, error))
      fail(error);
    if (*tfc_model_notes(model))
      note(tfc_model_notes(model));
  } else if (info.num_weights > 0) {
    fail("model '" + std::string(info.name) + "' has " +
         std::to_string(info.num_weights) +
         " weights: give them with --weights FILE.safetensors (tfc-weights "
         "writes random ones)");
  }

  size_t entry = 0;
  if (!o.entry.empty()) {
    int64_t e = tfc_model_find_entry(model, o.entry.c_str());
    if (e < 0) {
      std::string names;
      for (size_t i = 0; i < info.num_entries; ++i)
        names += (i ? ", " : "") + std::string(tfc_model_entry_name(model, i));
      fail("model '" + std::string(info.name) + "' has no entry '" + o.entry +
           "' (entries: " + names + ")");
    }
    entry = static_cast<size_t>(e);
  } else if (info.num_entries != 1) {
    std::string names;
    for (size_t i = 0; i < info.num_entries; ++i)
      names += (i ? ", " : "") + std::string(tfc_model_entry_name(model, i));
    fail("model '" + std::string(info.name) + "' has " +
         std::to_string(info.num_entries) + " entries (" + names +
         "); choose one with --entry");
  }
  const char *entryName = tfc_model_entry_name(model, entry);

  std::vector<Input> inputs =
      buildInputs(model, entry, o, textInputs(model, entry, o));
  std::vector<tfc_tensor> in(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    in[i].dtype = inputs[i].info.dtype;
    in[i].rank = static_cast<int32_t>(inputs[i].shape.size());
    for (size_t k = 0; k < inputs[i].shape.size(); ++k)
      in[i].shape[k] = inputs[i].shape[k];
    in[i].data = inputs[i].data.data();
  }

  // Where outputs go.
  size_t numOutputs = tfc_entry_num_outputs(model, entry);
  std::vector<tfc_tensor_info> outInfo(numOutputs);
  for (size_t i = 0; i < numOutputs; ++i)
    tfc_entry_output_info(model, entry, i, &outInfo[i]);
  std::vector<std::string> outPaths(numOutputs);
  for (const std::string &spec : o.outputs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos) {
      if (numOutputs != 1)
        fail("--output " + spec + ": entry '" + entryName + "' has " +
             std::to_string(numOutputs) +
             " outputs; write --output NAME=FILE.npy");
      if (!outPaths[0].empty())
        fail("--output " + spec + ": the output is already written to " +
             outPaths[0]);
      outPaths[0] = spec;
      continue;
    }
    std::string name = spec.substr(0, eq);
    size_t i = 0;
    while (i < numOutputs && name != outInfo[i].name)
      ++i;
    if (i == numOutputs) {
      std::string names;
      for (size_t k = 0; k < numOutputs; ++k)
        names += (k ? ", " : "") + std::string(outInfo[k].name);
      fail("--output " + spec + ": entry '" + entryName + "' has no output '" +
           name + "' (outputs: " + names + ")");
    }
    if (!outPaths[i].empty())
      fail("--output " + spec + ": output '" + name + "' is given twice");
    outPaths[i] = spec.substr(eq + 1);
    if (outPaths[i].empty())
      fail("--output " + spec + ": no file name");
  }

  std::vector<tfc_tensor> out(numOutputs);
  if (tfc_run(model, entryName, in.data(), in.size(), out.data(), out.size()) !=
      TFC_OK)
    fail(tfc_last_error());
  for (size_t i = 0; i < numOutputs; ++i) {
    printOutput(outInfo[i].name, out[i]);
    if (!outPaths[i].empty() && o.timeRuns == 0)
      writeOutput(outPaths[i], out[i]);
  }
  // The shapes of the outputs, for the timed runs.
  std::vector<tfc_tensor> reused(out);
  for (tfc_tensor &t : out)
    tfc_tensor_release(&t);

  if (o.timeRuns > 0) {
    // The timed runs write into buffers of the caller reused from run to
    // run (tfc_run_into), as a serving loop would: a fresh allocation per
    // run would time the page faults of the outputs too (GPT-2's logits at
    // seq 128: 25 MB). They are allocated as the runtime allocates the
    // outputs of tfc_run (large ones on transparent huge pages: GPT-2's LM
    // head GEMM writes rows 200 KB apart, and on 4 KiB pages that GEMM
    // ran measurably slower; figures: commit 3159034).
    std::vector<std::unique_ptr<void, void (*)(void *)>> buffers;
    for (tfc_tensor &t : reused) {
      size_t bytes = tfc_dtype_size(t.dtype) * elementsOf(t);
      void *p = tfc::rt::alignedAllocLarge(std::max<size_t>(bytes, 1), 64);
      if (!p)
        fail("out of memory allocating the outputs of the timed runs");
      buffers.emplace_back(p, tfc::rt::alignedFree);
      t.data = p;
      t.owner = nullptr;
    }
    std::vector<double> ms, deviceMs;
    bool onDevice = std::string(info.device) == "cuda";
    // --stats: how busy the pool's threads were in the timed runs.
    tfc::rt::ThreadPool &pool = tfc::rt::ThreadPool::global();
    if (o.stats)
      pool.setStatsEnabled(true);
    for (int64_t r = 0; r < o.timeRuns; ++r) {
      auto start = std::chrono::steady_clock::now();
      tfc_status status = tfc_run_into(model, entryName, in.data(), in.size(),
                                       reused.data(), reused.size());
      auto end = std::chrono::steady_clock::now();
      if (status != TFC_OK)
        fail(tfc_last_error());
      double d;
      if (onDevice && tfc_model_last_device_ms(model, &d) == TFC_OK)
        deviceMs.push_back(d);
      ms.push_back(
          std::chrono::duration<double, std::milli>(end - start).count());
    }
    // --output: what the last timed run computed (a CUDA model's later
    // runs replay a graph: tfc-run -o --time checks them).
    for (size_t i = 0; i < numOutputs; ++i)
      if (!outPaths[i].empty())
        writeOutput(outPaths[i], reused[i]);
    std::sort(ms.begin(), ms.end());
    double median = ms.size() % 2
                        ? ms[ms.size() / 2]
                        : (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]) / 2;
    std::printf("time: %lld runs on %d threads: median %.3f ms, min %.3f ms\n",
                static_cast<long long>(o.timeRuns), tfc_num_threads(), median,
                ms.front());
    if (o.stats) {
      tfc::rt::ThreadPool::Stats ps = pool.stats();
      pool.setStatsEnabled(false);
      if (ps.regions)
        std::printf(
            "thread pool: %llu parallel regions in the timed runs, %.3f ms "
            "each on average; the %u threads ran tasks %.1f %% of their "
            "time in them (the rest: waiting for the last task, waking, "
            "dispatch)\n",
            static_cast<unsigned long long>(ps.regions),
            ps.threadNs / 1e6 / pool.numThreads() / ps.regions,
            pool.numThreads(), 100.0 * ps.busyNs / ps.threadNs);
    }
    if (!deviceMs.empty()) {
      // GPU time of the kernels alone (no input/output copies).
      std::sort(deviceMs.begin(), deviceMs.end());
      std::printf("device time: median %.3f ms, min %.3f ms\n",
                  deviceMs[deviceMs.size() / 2], deviceMs.front());
    }
  }
  if (o.stats || o.timeRuns > 0) {
    tfc_memory_stats s;
    tfc_model_memory_stats(model, &s);
    static const char *const modes[] = {"none", "recorded", "replayed",
                                        "fell back to the heap"};
    std::printf("memory plan (%s): arena %s for %s of temporaries (peak live "
                "%s); %llu allocations, %llu from the arena, %llu outputs\n",
                modes[std::min<int>(s.mode, 3)],
                bytesString(s.arena_bytes).c_str(),
                bytesString(s.planned_bytes).c_str(),
                bytesString(s.peak_live_bytes).c_str(),
                static_cast<unsigned long long>(s.allocs),
                static_cast<unsigned long long>(s.arena_allocs),
                static_cast<unsigned long long>(s.output_allocs));
    std::printf("%s\n", residentLine(model).c_str());
  }
  tfc_model_free(model);
  return 0;
}

int main(int argc, char **argv) {
  // Memory for inputs and outputs comes from std::vector: running out of
  // it is an error message, not an abort.
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc &) {
    fail("out of memory");
  }
}
