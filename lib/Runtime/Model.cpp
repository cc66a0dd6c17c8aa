//===- Model.cpp - Loading models and binding weights ---------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Loading: dlopen (RTLD_NOW | RTLD_LOCAL), the metadata symbol read within
// its ELF size, the metadata parsed and checked, the host checked against the
// target, the init and entry symbols resolved, and the runtime hooks
// installed. Binding: every weight of the metadata found in the checkpoint
// with its shape, then used in place (same dtype, aligned to its element) or
// copied/converted into 64-byte aligned memory (the file's pages dropped);
// constants allocated and zeroed; the model's init called; the weights only
// init reads released. A packed weights file (PackedWeights.h) is mapped and
// used as it is. A failed binding leaves the previous one.
//
//===----------------------------------------------------------------------===//

#include "Model.h"

#include "ElfCheck.h"

#include "tfc/Runtime/ThreadPool.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <link.h>
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace tfc::rt;

//===----------------------------------------------------------------------===//
// Hooks
//===----------------------------------------------------------------------===//

namespace {

/// A parallel_for chunk runs with the caller's planner in parallel mode, so
/// that allocations inside chunks (whose order is not deterministic) take
/// the planner's shared path.
struct ChunkContext {
  void (*fn)(void *ctx, int64_t begin, int64_t end);
  void *ctx;
  MemoryPlanner *planner;
};

void runChunk(void *context, int64_t begin, int64_t end) {
  auto *c = static_cast<ChunkContext *>(context);
  MemoryPlanner::ParallelScope scope(c->planner);
  c->fn(c->ctx, begin, end);
}

void hookParallelFor(int64_t n, void (*fn)(void *ctx, int64_t, int64_t),
                     void *ctx) {
  if (n <= 0 || !fn)
    return;
  ChunkContext c{fn, ctx, MemoryPlanner::current()};
  ThreadPool::global().parallelFor(n, runChunk, &c);
}

/// What the models running tfc_model_init now bound: the release hook
/// drops the pages of a weight init has consumed when they belong to a
/// read-only file mapping (they map again if read) or to the runtime's copy
/// of a weight only init reads (converted at bind; never read again).
struct InitMemory {
  const WeightSource *source = nullptr; // when it maps its file
  std::vector<std::pair<const void *, uint64_t>> initOnlyCopies;
};
std::mutex initMemoryMutex;
std::vector<const InitMemory *> initMemory;

/// Registers a model's memory for the duration of its init.
struct InitMemoryScope {
  const InitMemory *memory;
  explicit InitMemoryScope(const InitMemory *m) : memory(m) {
    std::lock_guard<std::mutex> lock(initMemoryMutex);
    initMemory.push_back(memory);
  }
  ~InitMemoryScope() {
    std::lock_guard<std::mutex> lock(initMemoryMutex);
    initMemory.erase(std::find(initMemory.begin(), initMemory.end(), memory));
  }
};

void hookRelease(const void *data, int64_t bytes) {
  if (!data || bytes <= 0)
    return;
  {
    std::lock_guard<std::mutex> lock(initMemoryMutex);
    bool ours = false;
    for (const InitMemory *m : initMemory) {
      ours = ours ||
             (m->source && m->source->mapsRange(data, static_cast<uint64_t>(bytes)));
      for (const auto &[p, n] : m->initOnlyCopies)
        ours = ours || (p == data && n == static_cast<uint64_t>(bytes));
    }
    if (!ours)
      return; // memory an entry may read again
  }
  // The whole pages inside the range only: the neighbours' stay.
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + page - 1) / page * page;
  uintptr_t end = (reinterpret_cast<uintptr_t>(data) +
                   static_cast<uintptr_t>(bytes)) / page * page;
  if (end > begin)
    madvise(reinterpret_cast<void *>(begin), end - begin, MADV_DONTNEED);
}

// CPU models never launch kernels.
const tfc_rt_hooks kHooks = {hookAlloc, hookFree, hookParallelFor, nullptr,
                             hookRelease};

/// The text of the NUL-terminated string `s` of symbol `name`, read no
/// further than the symbol's size when the dynamic linker knows it.
bool readMetadata(const char *s, std::string &out, std::string &error) {
  size_t limit = size_t(256) << 20;
#ifdef __GLIBC__
  Dl_info info;
  void *entry = nullptr;
  if (dladdr1(s, &info, &entry, RTLD_DL_SYMENT) && entry) {
    const auto *sym = static_cast<const ElfW(Sym) *>(entry);
    if (sym->st_size > 0)
      limit = sym->st_size;
  }
#endif
  const void *nul = std::memchr(s, '\0', limit);
  if (!nul) {
    error = "tfc_model_metadata is not NUL-terminated";
    return false;
  }
  out.assign(s, static_cast<const char *>(nul));
  return true;
}

/// "" unless `path` is an ELF file for another machine than this host.
std::string checkElfMachine(const std::string &path) {
  unsigned char header[20];
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f)
    return "";
  size_t n = std::fread(header, 1, sizeof header, f);
  std::fclose(f);
  if (n < sizeof header || std::memcmp(header,
                                       "\x7f"
                                       "ELF",
                                       4) != 0)
    return ""; // not ELF: dlopen will say so
  bool little = header[5] == 1;
  unsigned machine =
      little ? header[18] | (header[19] << 8) : (header[18] << 8) | header[19];
  static const struct {
    unsigned machine;
    const char *name;
  } kMachines[] = {{3, "i386"},      {40, "arm"},       {62, "x86_64"},
                   {183, "aarch64"}, {243, "riscv"},    {21, "ppc64"},
                   {22, "s390x"},    {258, "loongarch"}};
  const char *name = nullptr;
  for (auto &m : kMachines)
    if (m.machine == machine)
      name = m.name;
  std::string_view host = hostArchitecture();
  if (!name || host == "unknown" || std::string_view(name) == host ||
      (host == "riscv64" && std::string_view(name) == "riscv"))
    return "";
  return "the library is for " + std::string(name) + ", but this host is " +
         std::string(host);
}

} // namespace

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

tfc_model::~tfc_model() {
  // Buffers and the mapping go with the members; the library last.
  table.clear();
  buffers.clear();
  constantPool.reset();
  weightsFile.reset();
  packedFile.reset();
  if (handle)
    dlclose(handle);
}

tfc_status tfc_model::load(const char *pathArg, bool runnable,
                           tfc_model **out) {
  if (!out)
    return setError(TFC_ERR_INVALID_ARGUMENT, "the output pointer is NULL");
  *out = nullptr;
  if (!pathArg)
    return setError(TFC_ERR_INVALID_ARGUMENT, "the model path is NULL");
  std::string path = pathArg;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return setError(TFC_ERR_IO,
                    path + ": cannot open: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return setError(TFC_ERR_IO, path + ": not a regular file");

  // A library for another machine cannot be loaded to read its metadata:
  // say what it is rather than pass on dlopen's "wrong ELF class".
  std::string why = checkElfMachine(path);
  if (!why.empty())
    return setError(TFC_ERR_UNSUPPORTED_HOST, path + ": " + why);
  // dlopen dies of SIGBUS on a truncated library and runs the constructors
  // of any library: read the file first (ElfCheck.h).
  ElfCheck check = checkModelLibrary(path, "tfc_model_metadata", why);
  if (check == ElfCheck::NoSymbol) {
    // A multi-versioned library: suffixed metadata, a list of variants.
    std::string variantsWhy;
    if (checkModelLibrary(path, "tfc_model_variants", variantsWhy) ==
        ElfCheck::Ok)
      check = ElfCheck::Ok;
  }
  switch (check) {
  case ElfCheck::Ok:
    break;
  case ElfCheck::Malformed:
    return setError(TFC_ERR_INVALID_MODEL,
                    path + ": cannot load the model library: " + why);
  case ElfCheck::NoSymbol:
    return setError(TFC_ERR_INVALID_MODEL, path + ": not a tfc model: " + why);
  }

  std::unique_ptr<tfc_model> model(new tfc_model());
  model->path = path;
  model->runnable = runnable;
  // Without a slash dlopen searches the library path, not the directory.
  std::string dlPath = path.find('/') == std::string::npos ? "./" + path : path;
  dlerror();
  model->handle = dlopen(dlPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!model->handle) {
    const char *why = dlerror();
    return setError(TFC_ERR_INVALID_MODEL,
                    path + ": cannot load the model library: " +
                        (why ? why : "unknown dlopen error"));
  }
  auto symbol = [&](const std::string &name, void *&addr) {
    dlerror();
    addr = dlsym(model->handle, name.c_str());
    return addr != nullptr;
  };

  // The variant to run: "" for a single-build library, else the first of
  // tfc_model_variants whose target this host runs (TFC_CPU_VARIANT picks
  // one by name instead).
  std::string error;
  void *variants = nullptr;
  if (symbol("tfc_model_variants", variants)) {
    tfc_status status = model->chooseVariant(
        static_cast<const char *>(variants), runnable, symbol);
    if (status != TFC_OK)
      return status;
  } else {
    void *metadata;
    if (!symbol("tfc_model_metadata", metadata))
      return setError(TFC_ERR_INVALID_MODEL,
                      path + ": not a tfc model: it does not export "
                             "'tfc_model_metadata'");
    if (!readMetadata(static_cast<const char *>(metadata),
                      model->metadataText, error) ||
        !parseModelMetadata(model->metadataText, model->spec, error))
      return setError(TFC_ERR_INVALID_MODEL, path + ": " + error);
    if (runnable) {
      std::string why = checkHostTarget(model->spec.target);
      if (!why.empty())
        return setError(TFC_ERR_UNSUPPORTED_HOST, path + ": " + why);
    }
  }
  const ModelSpec &spec = model->spec;
  const std::string &suffix = model->variant;

  void *hooks, *init;
  if (!symbol("tfc_model_hooks" + suffix, hooks))
    return setError(TFC_ERR_INVALID_MODEL,
                    path + ": not a tfc model: it does not export "
                           "'tfc_model_hooks" + suffix + "'");
  if (!symbol("tfc_model_init" + suffix, init))
    return setError(TFC_ERR_INVALID_MODEL,
                    path + ": not a tfc model: it does not export "
                           "'tfc_model_init" + suffix + "'");
  model->init = reinterpret_cast<InitFn>(init);
  for (const EntrySpec &e : spec.entries) {
    void *fn;
    if (!symbol(e.symbol + suffix, fn))
      return setError(TFC_ERR_INVALID_MODEL,
                      path + ": entry '" + e.name + "' names symbol '" +
                          e.symbol + suffix +
                          "', which the library does not export");
    model->entryFns.push_back(reinterpret_cast<EntryFn>(fn));
  }

  if (runnable && spec.target.device == "cuda") {
    tfc_status status = loadCudaModel(
        *model, [&](const char *name, void *&addr) {
          return symbol(name, addr);
        });
    if (status != TFC_OK)
      return status;
  }

  if (runnable) {
    *static_cast<const tfc_rt_hooks **>(hooks) =
        model->cuda ? &kCudaHooks : &kHooks;
    // Nothing to bind: the model is ready once its constants exist.
    if (spec.weights.empty()) {
      tfc_status status = model->bind(nullptr, "");
      if (status != TFC_OK)
        return status;
    }
  }
  *out = model.release();
  return TFC_OK;
}

//===----------------------------------------------------------------------===//
// Weights
//===----------------------------------------------------------------------===//

static bool isFloat(tfc_dtype d) {
  const DTypeTraits *t = dtypeTraits(d);
  return t && t->isFloat;
}

static bool isQuantized(tfc_dtype d) {
  const DTypeTraits *t = dtypeTraits(d);
  return t && t->quantized;
}

/// Whether weights stored as `from` can be given to a model wanting `to`.
static bool convertible(DType from, tfc_dtype to) {
  // Quantised weights of another format or floats are quantised at bind (a
  // quantised file of another format through its dequantised values).
  if (isQuantized(to)) {
    if (!canQuantize(dtypeTraits(to)->type))
      return traitsOf(from).api == to; // only as stored: no quantiser yet
    tfc_dtype f;
    return isQuantized(from) || (dtypeOfStorage(from, f) && isFloat(f));
  }
  if (isQuantized(from))
    return isFloat(to); // dequantised at bind
  tfc_dtype f;
  if (!dtypeOfStorage(from, f))
    return false;
  return f == to || (isFloat(f) && isFloat(to)) ||
         (f == TFC_I32 && to == TFC_I64);
}

/// Converts `count` elements from the file's dtype into the model's.
static void convert(const void *src, DType from, void *dst, tfc_dtype to,
                    uint64_t count) {
  if (isQuantized(to)) {
    // Through f32, in the blocks GGUF's reference quantiser makes.
    std::vector<float> tmp(count);
    convert(src, from, tmp.data(), TFC_F32, count);
    quantize(dtypeTraits(to)->type, tmp.data(), dst, count);
    return;
  }
  if (isQuantized(from)) {
    if (to == TFC_F32) {
      dequantize(from, src, static_cast<float *>(dst), count);
      return;
    }
    std::vector<float> tmp(count);
    dequantize(from, src, tmp.data(), count);
    convert(tmp.data(), DType::F32, dst, to, count);
    return;
  }
  const DTypeTraits *t = dtypeTraits(to);
  if (!traitsOf(from).isFloat && !t->isFloat) {
    // Integers exactly (i64 past 2^53).
    for (uint64_t i = 0; i < count; ++i)
      dtypeStoreInt(t->type, dst, i, dtypeLoadInt(from, src, i));
    return;
  }
  for (uint64_t i = 0; i < count; ++i)
    dtypeStore(t->type, dst, i, dtypeLoad(from, src, i));
}

namespace {

/// Drops the pages of [p, p + bytes) inside a read-only file mapping from the
/// process: the page cache keeps them, a later read would fault them in
/// again. Rounded outwards to pages: neighbours in the same file lose nothing
/// but residency.
void dropMappedPages(const void *p, uint64_t bytes) {
  static const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  uintptr_t begin = reinterpret_cast<uintptr_t>(p) / page * page;
  uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes + page - 1) / page *
                  page;
  madvise(reinterpret_cast<void *>(begin), end - begin, MADV_DONTNEED);
}

} // namespace

/// The table entry of a weight with no elements: never read, but not null.
// Aligned as the most any tensor asks (metadata: 4096), for the empty
// derived constants too.
alignas(4096) static char emptyTensor[64];

static std::string fileShape(const TensorView &v) {
  return shapeString(v.shape.data(), v.shape.size());
}

tfc_status tfc_model::bindWeights(const char *pathArg) {
  if (!pathArg)
    return setError(TFC_ERR_INVALID_ARGUMENT, "the weights path is NULL");
  if (!runnable)
    return setError(TFC_ERR_INVALID_ARGUMENT,
                    path + " was opened with tfc_model_inspect and cannot "
                           "bind weights; load it with tfc_model_load");
  std::string file = pathArg;
  struct stat st;
  if (::stat(file.c_str(), &st) != 0)
    return setError(TFC_ERR_IO,
                    file + ": cannot open: " + std::strerror(errno));
  if (isPackedWeightsFile(file))
    return bindPacked(file);
  std::string error;
  std::unique_ptr<WeightSource> weights = openWeights(file, error);
  if (!weights)
    return setError(TFC_ERR_WEIGHTS, error);
  return bind(std::move(weights), file);
}

tfc_status tfc_model::bind(std::unique_ptr<WeightSource> file,
                           const std::string &fileName) {
  // Check every weight first, and report all problems at once.
  std::vector<std::string> problems;
  std::vector<const TensorView *> views;
  for (const TensorSpec &w : spec.weights) {
    const TensorView *v = file ? file->findTensor(w.name) : nullptr;
    views.push_back(v);
    std::string expected =
        std::string(tfc_dtype_name(w.dtype)) + " " + w.shapeString();
    if (!v) {
      problems.push_back("weight '" + w.name + "' (" + expected +
                         ") is missing");
      continue;
    }
    bool sameShape = v->shape.size() == w.shape.size();
    for (size_t k = 0; sameShape && k < w.shape.size(); ++k)
      sameShape = v->shape[k] == w.shape[k].size;
    if (!sameShape)
      problems.push_back("weight '" + w.name + "': the file has shape " +
                         fileShape(*v) + ", the model expects " +
                         w.shapeString());
    else if (!convertible(v->dtype, w.dtype))
      problems.push_back("weight '" + w.name + "': the file has dtype " +
                         dtypeName(v->dtype) + ", the model expects " +
                         tfc_dtype_name(w.dtype) +
                         " (no conversion between them)");
  }
  if (!problems.empty()) {
    std::string message = fileName + " does not match model '" + spec.name +
                          "' (" + std::to_string(problems.size()) +
                          (problems.size() == 1 ? " problem" : " problems") +
                          "):";
    const size_t kShown = 20;
    for (size_t i = 0; i < problems.size() && i < kShown; ++i)
      message += "\n  " + problems[i];
    if (problems.size() > kShown)
      message +=
          "\n  ... and " + std::to_string(problems.size() - kShown) + " more";
    return setError(TFC_ERR_WEIGHTS, message);
  }

  std::vector<AlignedBuffer> newBuffers(spec.weights.size() +
                                        spec.constants.size());
  std::vector<void *> newTable;
  uint64_t mapped = 0, copied = 0, constants = 0;
  size_t converted = 0;
  // The memory of the slot about to be pushed onto newTable.
  auto allocate = [&](uint64_t bytes, uint64_t align) -> void * {
    void *p = alignedAllocLarge(bytes, align);
    if (p)
      newBuffers[newTable.size()].reset(p);
    return p;
  };
  for (size_t i = 0; i < spec.weights.size(); ++i) {
    const TensorSpec &w = spec.weights[i];
    const TensorView &v = *views[i];
    uint64_t count = v.numElements();
    uint64_t bytes = w.byteSize();
    tfc_dtype stored = TFC_DTYPE_MAX_ENUM; // a file dtype models never have
    if (!dtypeOfStorage(v.dtype, stored))
      stored = TFC_DTYPE_MAX_ENUM;
    if (count == 0) {
      newTable.push_back(emptyTensor);
      continue;
    }
    // The kernels' loads assume the element's alignment, nothing more (the
    // block formats' kernels none).
    uint64_t align = std::max<uint64_t>(tfc_dtype_size(w.dtype), 1);
    if (stored == w.dtype &&
        reinterpret_cast<uintptr_t>(v.data) % align == 0) {
      newTable.push_back(const_cast<void *>(v.data));
      mapped += bytes;
      continue;
    }
    void *p = allocate(bytes, 64);
    if (!p)
      return setError(TFC_ERR_OUT_OF_MEMORY,
                      "out of memory copying weight '" + w.name + "' (" +
                          std::to_string(bytes) + " bytes)");
    if (stored == w.dtype) {
      std::memcpy(p, v.data, bytes); // not aligned enough in the file
    } else {
      convert(v.data, v.dtype, p, w.dtype, count);
      ++converted;
    }
    // The file's copy is not read again: drop its pages now, so that the
    // checkpoint and its conversion are never resident together.
    if (file->isFileMapping())
      dropMappedPages(v.data, v.end - v.begin);
    copied += bytes;
    newTable.push_back(p);
  }
  // The derived constants (the packed GEMM weights, most of a forward's
  // reads) share one allocation: on their own, each one's last partial
  // huge page would take up to 2 MiB more, or (advised only over its whole
  // huge pages, as before) stay on 4 KiB pages, and the thread whose GEMM
  // columns fell there ran slower than the other, which waited for it in
  // every GEMM (figures: commit 3159034).
  // (The metadata bounds each: a power-of-two alignment up to 4096, at most
  // 2^48 bytes; the total is bounded here.)
  uint64_t poolBytes = 0, poolAlign = 64;
  std::vector<uint64_t> offsets;
  for (const ConstantSpec &c : spec.constants) {
    if (poolBytes > (UINT64_C(1) << 60))
      return setError(TFC_ERR_OUT_OF_MEMORY,
                      "model '" + spec.name +
                          "': the derived constants take more than 2^60 "
                          "bytes");
    uint64_t align = std::max<uint64_t>(c.align, 64);
    poolAlign = std::max(poolAlign, align);
    poolBytes = alignUp(poolBytes, align);
    offsets.push_back(poolBytes);
    poolBytes += c.bytes;
  }
  // A CUDA model's constants live on the device (initCudaModel allocates
  // them): no host copy.
  // Zero from the kernel, not written here: each constant's pages become
  // resident as init writes it, while the weights it has packed are
  // released, rather than all of them before init reads the first weight
  // (SmolLM2-135M f32: the first run peaked at 1.24x its weights).
  ZeroedBuffer newPool(nullptr, ZeroedDeleter{poolBytes});
  if (poolBytes && !cuda) {
    newPool.reset(allocZeroedLarge(poolBytes, poolAlign));
    if (!newPool)
      return setError(TFC_ERR_OUT_OF_MEMORY,
                      "out of memory allocating the derived constants (" +
                          std::to_string(poolBytes) + " bytes)");
  }
  for (size_t i = 0; i < spec.constants.size(); ++i) {
    newTable.push_back(cuda ? nullptr
                       : spec.constants[i].bytes
                           ? static_cast<char *>(newPool.get()) + offsets[i]
                           : emptyTensor);
    constants += spec.constants[i].bytes;
  }

  // Notes: what was converted or copied, and what the model does not use.
  std::string newNotes;
  if (converted)
    newNotes += std::to_string(converted) +
                (converted == 1 ? " weight was" : " weights were") +
                " converted to the model's dtype\n";
  if (file) {
    std::map<std::string, bool> used;
    for (const TensorSpec &w : spec.weights)
      used[w.name] = true;
    std::vector<std::string> extra;
    for (const TensorView *v : file->allTensors())
      if (!used.count(v->name))
        extra.push_back(v->name);
    if (!extra.empty()) {
      newNotes += std::to_string(extra.size()) +
                  (extra.size() == 1 ? " tensor" : " tensors") + " of " +
                  fileName + " not used by the model:";
      for (size_t i = 0; i < extra.size() && i < 10; ++i)
        newNotes += (i ? ", '" : " '") + extra[i] + "'";
      if (extra.size() > 10)
        newNotes += " and " + std::to_string(extra.size() - 10) + " more";
      newNotes += "\n";
    }
  }
  if (!newNotes.empty())
    newNotes.pop_back();

  std::lock_guard<std::mutex> lock(mutex);
  weightsFile = std::move(file);
  packedFile.reset();
  buffers = std::move(newBuffers);
  constantPool = std::move(newPool);
  table = std::move(newTable);
  notes = std::move(newNotes);
  weightBytesMapped = mapped;
  weightBytesCopied = copied;
  weightBytesReleased = 0;
  constantBytes = constants;
  packedFileBytes = 0;
  if (cuda) {
    ready = false;
    tfc_status status = initCudaModel(*this);
    if (status != TFC_OK)
      return status;
    ready = true;
    return TFC_OK;
  }
  {
    // init's allocations go through the planner (heap memory outside runs),
    // which notes one that fails; init then returns early.
    MemoryPlanner::Scope scope(&planner);
    InitMemory memory;
    if (weightsFile && weightsFile->isFileMapping())
      memory.source = weightsFile.get();
    for (size_t i = 0; i < spec.weights.size(); ++i)
      if (spec.weights[i].initOnly && buffers[i])
        memory.initOnlyCopies.push_back(
            {buffers[i].get(), spec.weights[i].byteSize()});
    InitMemoryScope released(&memory);
    init(table.data());
  }
  int64_t failedSize = 0;
  if (planner.takeAllocationFailure(failedSize)) {
    ready = false; // the derived constants are incomplete
    return setError(TFC_ERR_OUT_OF_MEMORY,
                    "model '" + spec.name +
                        "': out of memory computing the derived constants "
                        "(an allocation of " +
                        std::to_string(failedSize) +
                        " bytes failed); bind the weights again");
  }
  ready = true;
  releaseInitOnlyWeights();
  return TFC_OK;
}

//===----------------------------------------------------------------------===//
// Each weight resident once (docs/runtime.md, "Memory")
//===----------------------------------------------------------------------===//


void tfc_model::releaseInitOnlyWeights() {
  if (!weightsFile)
    return;
  for (size_t i = 0; i < spec.weights.size(); ++i) {
    const TensorSpec &w = spec.weights[i];
    const TensorView *v = weightsFile->findTensor(w.name);
    if (!v || v->numElements() == 0)
      continue;
    // Init touched every page of the weights it read (packing them); the
    // entries read them again only where they need to (the rows of an
    // embedding table that are looked up), so the file's pages are dropped
    // from the process and come back on demand. Copies are not re-read.
    if (weightsFile->isFileMapping())
      dropMappedPages(v->data, v->end - v->begin);
    if (!w.initOnly)
      continue;
    uint64_t bytes = w.byteSize();
    if (buffers[i])
      buffers[i].reset();
    table[i] = nullptr; // no entry reads it
    weightBytesReleased += bytes;
  }
}

tfc_status tfc_model::computeLibraryKey() {
  if (libraryKey != 0)
    return TFC_OK;
  std::string error;
  uint64_t key = 0;
  if (!hashLibraryFile(path, key, error))
    return setError(TFC_ERR_IO, error);
  // The variant's constants are what a packed file holds: its suffix is
  // part of the key.
  for (char c : variant)
    key = (key ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  libraryKey = key == 0 ? 1 : key;
  return TFC_OK;
}

tfc_status tfc_model::bindPacked(const std::string &fileName) {
  if (cuda)
    return setError(TFC_ERR_WEIGHTS,
                    fileName + ": packed weights files are for CPU models; "
                               "model '" + spec.name +
                        "' runs on CUDA: bind its checkpoint instead");
  std::string error;
  std::unique_ptr<PackedWeightsFile> file =
      PackedWeightsFile::open(fileName, error);
  if (!file)
    return setError(TFC_ERR_WEIGHTS, error);
  if (tfc_status status = computeLibraryKey(); status != TFC_OK)
    return status;
  const PackedHeader &h = file->header();
  auto hex = [](uint64_t v) {
    char buf[17];
    std::snprintf(buf, sizeof(buf), "%016llx",
                  static_cast<unsigned long long>(v));
    return std::string(buf);
  };
  if (h.key != libraryKey)
    return setError(TFC_ERR_WEIGHTS,
                    fileName + " was packed for another build of the model "
                               "library (key " + hex(h.key) + ", " + path +
                        " has " + hex(libraryKey) +
                        "): pack it again (tfc-pack " + path +
                        " --weights CHECKPOINT -o " + fileName + ")");
  size_t numSlots = spec.weights.size() + spec.constants.size();
  if (h.slots.size() != numSlots)
    return setError(TFC_ERR_WEIGHTS,
                    fileName + ": " + std::to_string(h.slots.size()) +
                        " slots, but model '" + spec.name + "' has " +
                        std::to_string(numSlots) + " (" +
                        std::to_string(spec.weights.size()) + " weights, " +
                        std::to_string(spec.constants.size()) +
                        " constants)");
  std::vector<void *> newTable;
  uint64_t weights = 0, constants = 0;
  for (size_t i = 0; i < numSlots; ++i) {
    bool isWeight = i < spec.weights.size();
    uint64_t expected =
        isWeight ? spec.weights[i].byteSize()
                 : spec.constants[i - spec.weights.size()].bytes;
    uint64_t align =
        isWeight ? 16 : spec.constants[i - spec.weights.size()].align;
    uint64_t have = h.slots[i].bytes;
    std::string what =
        isWeight ? "weight '" + spec.weights[i].name + "'"
                 : "constant " + std::to_string(i - spec.weights.size());
    bool absentOk = expected == 0 || (isWeight && spec.weights[i].initOnly);
    if (have == 0 && absentOk) {
      newTable.push_back(expected == 0 ? emptyTensor : nullptr);
      continue;
    }
    if (have != expected)
      return setError(TFC_ERR_WEIGHTS,
                      fileName + ": " + what + " has " +
                          std::to_string(have) + " bytes, the model expects " +
                          std::to_string(expected));
    const void *data = file->slotData(i);
    if (reinterpret_cast<uintptr_t>(data) % align != 0)
      return setError(TFC_ERR_WEIGHTS, fileName + ": " + what +
                                           " is not " + std::to_string(align) +
                                           "-byte aligned");
    // Entries never write weights or constants (read-only tensors).
    newTable.push_back(const_cast<void *>(data));
    (isWeight ? weights : constants) += expected;
  }

  std::lock_guard<std::mutex> lock(mutex);
  weightsFile.reset();
  buffers.clear();
  buffers.resize(numSlots);
  constantPool.reset();
  packedFileBytes = file->size();
  packedFile = std::move(file);
  table = std::move(newTable);
  notes.clear();
  weightBytesMapped = weights;
  weightBytesCopied = 0;
  weightBytesReleased = 0;
  constantBytes = constants;
  ready = true;
  return TFC_OK;
}

tfc_status tfc_model::saveWeights(const char *pathArg) {
  if (!pathArg)
    return setError(TFC_ERR_INVALID_ARGUMENT, "the output path is NULL");
  std::lock_guard<std::mutex> lock(mutex);
  if (!ready)
    return setError(TFC_ERR_INVALID_ARGUMENT,
                    "model '" + spec.name +
                        "' has no weights bound: bind a checkpoint first");
  if (cuda)
    return setError(TFC_ERR_INVALID_ARGUMENT,
                    "model '" + spec.name +
                        "' runs on CUDA: packed weights files are for CPU "
                        "models");
  if (tfc_status status = computeLibraryKey(); status != TFC_OK)
    return status;
  std::vector<std::pair<const void *, uint64_t>> slots;
  for (size_t i = 0; i < spec.weights.size(); ++i) {
    const TensorSpec &w = spec.weights[i];
    uint64_t bytes = w.byteSize();
    if (w.initOnly || !table[i])
      slots.push_back({nullptr, 0});
    else
      slots.push_back({table[i], bytes});
  }
  for (size_t c = 0; c < spec.constants.size(); ++c)
    slots.push_back({table[spec.weights.size() + c], spec.constants[c].bytes});
  // The weights entries read straight from the checkpoint's mapping (a tied
  // embedding table above all) are dropped from the process piece by piece
  // as they are written, as after init: the first run of a checkpoint,
  // which writes the packed cache, never has them resident beside the
  // packed constants (SmolLM2-135M f32: 113 MiB more at its peak).
  auto dropWritten = [&](const void *p, uint64_t bytes) {
    if (weightsFile && weightsFile->isFileMapping() &&
        weightsFile->mapsRange(p, bytes))
      dropMappedPages(p, bytes);
  };
  std::string error;
  if (!writePackedWeights(pathArg, libraryKey, slots, error, dropWritten))
    return setError(TFC_ERR_IO, error);
  return TFC_OK;
}

//===----------------------------------------------------------------------===//
// Multi-versioned libraries (docs/abi.md, "CPU variants")
//===----------------------------------------------------------------------===//

tfc_status tfc_model::chooseVariant(
    const char *list, bool runnableModel,
    const std::function<bool(const std::string &, void *&)> &symbol) {
  std::string text, error;
  if (!readMetadata(list, text, error))
    return setError(TFC_ERR_INVALID_MODEL,
                    path + ": tfc_model_variants: " + error);
  std::vector<std::string> suffixes;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find(',', begin);
    if (end == std::string::npos)
      end = text.size();
    std::string s = text.substr(begin, end - begin);
    bool ok = s.size() > 2 && s.size() <= 64 && s.compare(0, 2, "__") == 0;
    for (char c : s)
      ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (!ok || suffixes.size() >= 16)
      return setError(TFC_ERR_INVALID_MODEL,
                      path + ": tfc_model_variants: '" + text +
                          "' is not a list of at most 16 suffixes "
                          "(\"__name,__name\")");
    suffixes.push_back(s);
    begin = end + 1;
  }
  const char *forced = std::getenv("TFC_CPU_VARIANT");
  std::string wanted;
  if (forced && *forced) {
    wanted = forced;
    if (wanted.compare(0, 2, "__") != 0)
      wanted = "__" + wanted;
    for (char &c : wanted)
      if (!std::isalnum(static_cast<unsigned char>(c)))
        c = '_';
    if (std::find(suffixes.begin(), suffixes.end(), wanted) ==
        suffixes.end()) {
      std::string names;
      for (const std::string &s : suffixes)
        names += (names.empty() ? "" : ", ") + s.substr(2);
      return setError(TFC_ERR_UNSUPPORTED_HOST,
                      path + ": TFC_CPU_VARIANT=" + forced +
                          ": the library has the variants " + names);
    }
  }
  std::string reasons;
  // Inspecting (not running) still describes the variant this host would
  // run, else the first.
  std::string fallbackText, fallbackSuffix;
  ModelSpec fallback;
  auto take = [&](std::string &text, ModelSpec &candidate,
                  const std::string &suffix) {
    metadataText = std::move(text);
    spec = std::move(candidate);
    variant = suffix;
    return TFC_OK;
  };
  for (const std::string &suffix : suffixes) {
    if (!wanted.empty() && suffix != wanted)
      continue;
    void *metadata;
    if (!symbol("tfc_model_metadata" + suffix, metadata))
      return setError(TFC_ERR_INVALID_MODEL,
                      path + ": variant " + suffix.substr(2) +
                          ": the library does not export "
                          "'tfc_model_metadata" + suffix + "'");
    std::string candidateText;
    ModelSpec candidate;
    if (!readMetadata(static_cast<const char *>(metadata), candidateText,
                      error) ||
        !parseModelMetadata(candidateText, candidate, error))
      return setError(TFC_ERR_INVALID_MODEL, path + ": variant " +
                                                 suffix.substr(2) + ": " +
                                                 error);
    std::string why = checkHostTarget(candidate.target);
    if (!why.empty()) {
      reasons += "\n  " + suffix.substr(2) + ": " + why;
      if (!runnableModel && fallbackSuffix.empty()) {
        fallbackText = candidateText;
        fallback = candidate;
        fallbackSuffix = suffix;
      }
      continue;
    }
    return take(candidateText, candidate, suffix);
  }
  if (!fallbackSuffix.empty())
    return take(fallbackText, fallback, fallbackSuffix);
  return setError(TFC_ERR_UNSUPPORTED_HOST,
                  path + ": this host runs none of the library's CPU "
                         "variants" +
                      (wanted.empty() ? std::string()
                                      : " (TFC_CPU_VARIANT=" +
                                            std::string(forced) + ")") +
                      ":" + reasons);
}
