//===- CudaModel.cpp - Running models compiled with --target=cuda ---------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "CudaModel.h"

#include "Model.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

using namespace tfc::rt;

namespace {

thread_local CudaState *currentState = nullptr;

/// cuMemAlloc aligns to 256 bytes; larger alignments over-allocate.
constexpr uint64_t kDriverAlignment = 256;

/// TFC_CUDA_PROFILE=1: device time per kernel, aggregated over the process
/// by kernel name without the _N that tells repeats apart
/// (tfc_linear_f32_5 -> tfc_linear_f32), printed to stderr at exit.
class KernelProfile {
public:
  /// The process's profile, or null when TFC_CUDA_PROFILE is not set.
  static KernelProfile *get() {
    static KernelProfile profile;
    return profile.enabled ? &profile : nullptr;
  }

  void add(const std::string &kernel, double ms, const std::string &device) {
    std::lock_guard<std::mutex> lock(mutex);
    Entry &e = entries[family(kernel)];
    ++e.launches;
    e.ms += ms;
    if (this->device.empty())
      this->device = device;
  }

  void addInit(uint64_t launches) {
    std::lock_guard<std::mutex> lock(mutex);
    initLaunches += launches;
  }

  void addRun(uint64_t launches) {
    std::lock_guard<std::mutex> lock(mutex);
    minLaunches = runs ? std::min(minLaunches, launches) : launches;
    maxLaunches = runs ? std::max(maxLaunches, launches) : launches;
    ++runs;
  }

  ~KernelProfile() {
    if (!enabled || entries.empty())
      return;
    std::vector<std::pair<std::string, Entry>> rows(entries.begin(),
                                                    entries.end());
    std::sort(rows.begin(), rows.end(), [](const auto &a, const auto &b) {
      return a.second.ms != b.second.ms ? a.second.ms > b.second.ms
                                        : a.first < b.first;
    });
    Entry all;
    for (const auto &row : rows) {
      all.launches += row.second.launches;
      all.ms += row.second.ms;
    }
    std::string perRun =
        minLaunches == maxLaunches
            ? std::to_string(minLaunches)
            : std::to_string(minLaunches) + "-" + std::to_string(maxLaunches);
    std::fprintf(stderr,
                 "tfc: CUDA kernel profile (TFC_CUDA_PROFILE) on %s: %llu "
                 "runs, %s launches per run (and %llu at init)\n",
                 device.c_str(), static_cast<unsigned long long>(runs),
                 perRun.c_str(), static_cast<unsigned long long>(initLaunches));
    std::fprintf(stderr, "  %-32s %9s %12s %10s %7s\n", "kernel", "launches",
                 "total ms", "mean us", "share");
    auto print = [&](const std::string &name, const Entry &e) {
      std::fprintf(stderr, "  %-32s %9llu %12.3f %10.2f %6.1f%%\n",
                   name.c_str(), static_cast<unsigned long long>(e.launches),
                   e.ms, e.launches ? 1000.0 * e.ms / e.launches : 0.0,
                   all.ms > 0 ? 100.0 * e.ms / all.ms : 0.0);
    };
    for (const auto &row : rows)
      print(row.first, row.second);
    print("all", all);
  }

private:
  struct Entry {
    uint64_t launches = 0;
    double ms = 0;
  };

  KernelProfile() {
    const char *env = std::getenv("TFC_CUDA_PROFILE");
    enabled = env && *env && std::strcmp(env, "0") != 0;
  }

  /// The kernel's name without a trailing _<digits>.
  static std::string family(const std::string &name) {
    size_t pos = name.find_last_of('_');
    if (pos == std::string::npos || pos + 1 == name.size())
      return name;
    for (size_t i = pos + 1; i < name.size(); ++i)
      if (name[i] < '0' || name[i] > '9')
        return name;
    return name.substr(0, pos);
  }

  bool enabled = false;
  std::mutex mutex;
  std::map<std::string, Entry> entries;
  std::string device;
  uint64_t runs = 0, minLaunches = 0, maxLaunches = 0, initLaunches = 0;
};

} // namespace

void *tfc::rt::deviceAlloc(uint64_t size, uint64_t align, void *ctx) {
  auto *state = static_cast<CudaState *>(ctx);
  cuda::CUdeviceptr ptr = 0;
  std::string error;
  uint64_t extra = align > kDriverAlignment ? align : 0;
  if (!state->driver->allocate(size + extra, ptr, error)) {
    if (state->failure.empty())
      state->failure = error;
    return nullptr;
  }
  if (!extra)
    return reinterpret_cast<void *>(ptr);
  cuda::CUdeviceptr aligned = (ptr + align - 1) / align * align;
  std::lock_guard<std::mutex> lock(state->alignedMutex);
  state->alignedBases[aligned] = ptr;
  return reinterpret_cast<void *>(aligned);
}

void tfc::rt::deviceFree(void *ptr, void *ctx) {
  auto *state = static_cast<CudaState *>(ctx);
  // The recorded launches that use it have not been issued yet.
  if (state->recording) {
    state->deferredFrees.push_back(ptr);
    return;
  }
  auto p = reinterpret_cast<cuda::CUdeviceptr>(ptr);
  {
    std::lock_guard<std::mutex> lock(state->alignedMutex);
    auto it = state->alignedBases.find(p);
    if (it != state->alignedBases.end()) {
      p = it->second;
      state->alignedBases.erase(it);
    }
  }
  state->driver->release(p);
}

namespace {

void *cudaHookAlloc(int64_t size, int64_t align) {
  CudaState *state = currentState;
  if (!state)
    return nullptr;
  if (MemoryPlanner::current() == &state->planner)
    return state->planner.allocate(size, align);
  return deviceAlloc(static_cast<uint64_t>(size), align, state);
}

void cudaHookFree(void *ptr) {
  CudaState *state = currentState;
  if (!state || !ptr)
    return;
  if (MemoryPlanner::current() == &state->planner)
    state->planner.deallocate(ptr);
  else
    deviceFree(ptr, state);
}

void cudaHookParallelFor(int64_t n, void (*fn)(void *, int64_t, int64_t),
                         void *ctx) {
  // CUDA models have no host loops; run serially if one appears.
  if (n > 0 && fn)
    fn(ctx, 0, n);
}

void cudaHookLaunch(int64_t kernel, int64_t gx, int64_t gy, int64_t gz,
                    int64_t bx, int64_t by, int64_t bz, int32_t shared,
                    void **args, int64_t num_args) {
  CudaState *state = currentState;
  if (!state || !state->failure.empty())
    return;
  // A kernel over an empty range (a zero-length dim) has nothing to do.
  if (gx <= 0 || gy <= 0 || gz <= 0)
    return;
  // The hardware's limits: a larger grid would wrap to a smaller one.
  if (gx > INT32_MAX || gy > 65535 || gz > 65535 || bx <= 0 || by <= 0 ||
      bz <= 0 || bx * by * bz > 1024) {
    state->failure = "kernel #" + std::to_string(kernel) +
                     " launched with grid " + std::to_string(gx) + "x" +
                     std::to_string(gy) + "x" + std::to_string(gz) +
                     " and block " + std::to_string(bx) + "x" +
                     std::to_string(by) + "x" + std::to_string(bz) +
                     ", beyond the device's limits";
    return;
  }
  if (kernel < 0 || kernel >= static_cast<int64_t>(state->kernels.size())) {
    state->failure = "the model launched kernel #" + std::to_string(kernel) +
                     " of " + std::to_string(state->kernels.size());
    return;
  }
  const int64_t grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
  std::string error;
  if (state->recording) {
    const std::vector<size_t> &sizes = state->paramSizes[kernel];
    if (num_args != static_cast<int64_t>(sizes.size())) {
      // The driver's parameter sizes do not fit the model's launches: no
      // graphs for this model; this launch and the rest go one by one.
      state->graphs = false;
      state->stopRecording();
    }
  }
  if (state->recording) {
    const std::vector<size_t> &sizes = state->paramSizes[kernel];
    CudaState::RecordedLaunch l{kernel, {gx, gy, gz}, {bx, by, bz}, shared, {}};
    for (size_t i = 0; i < sizes.size(); ++i) {
      const auto *p = static_cast<const uint8_t *>(args[i]);
      l.args.insert(l.args.end(), p, p + sizes[i]);
    }
    state->pending.push_back(std::move(l));
    ++state->launches;
    return;
  }
  CudaState::TimedLaunch timed{kernel, nullptr, nullptr};
  if (state->profiling && !state->driver->recordEvent(timed.start, error))
    timed.start = nullptr;
  ++state->launches;
  if (!state->driver->launch(state->kernels[kernel], grid, block,
                             static_cast<unsigned>(shared), args, error))
    state->failure = "kernel '" + state->kernelNames[kernel] + "': " + error;
  else if (timed.start && state->driver->recordEvent(timed.end, error))
    state->timedLaunches.push_back(timed);
  if (timed.start && !timed.end)
    state->driver->destroyEvent(timed.start);
}

std::vector<std::string> split(const char *s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (; *s; ++s) {
    if (*s == sep) {
      if (!cur.empty())
        out.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(*s);
    }
  }
  if (!cur.empty())
    out.push_back(cur);
  return out;
}

} // namespace

const tfc_rt_hooks tfc::rt::kCudaHooks = {cudaHookAlloc, cudaHookFree,
                                          cudaHookParallelFor, cudaHookLaunch,
                                          nullptr};

CudaState::CudaState(cuda::Driver *driver)
    : driver(driver), profiling(KernelProfile::get() != nullptr),
      planner(8, MemorySource{deviceAlloc, deviceFree, this}) {}

void *CudaState::inputBuffer(size_t entry, size_t input, uint64_t bytes,
                             std::string &error) {
  auto &slot = inputBuffers[{entry, input}];
  if (slot.first && slot.second >= bytes)
    return slot.first;
  if (slot.first)
    deviceFree(slot.first, this);
  slot = {nullptr, 0};
  failure.clear();
  void *p = deviceAlloc(bytes ? bytes : 1, 256, this);
  if (!p) {
    error = failure;
    failure.clear();
    return nullptr;
  }
  slot = {p, bytes};
  return p;
}

namespace {
/// Pointers to each parameter of `l` (into its bytes).
std::vector<void *> argPointers(const CudaState::RecordedLaunch &l,
                                const std::vector<size_t> &sizes) {
  std::vector<void *> out;
  size_t at = 0;
  for (size_t size : sizes) {
    out.push_back(const_cast<uint8_t *>(l.args.data() + at));
    at += size;
  }
  return out;
}
} // namespace

bool CudaState::launchAll(const std::vector<RecordedLaunch> &list) {
  std::string error;
  for (const RecordedLaunch &l : list) {
    std::vector<void *> pointers = argPointers(l, paramSizes[l.kernel]);
    if (!driver->launch(kernels[l.kernel], l.grid, l.block,
                        static_cast<unsigned>(l.shared), pointers.data(),
                        error)) {
      failure = "kernel '" + kernelNames[l.kernel] + "': " + error;
      return false;
    }
  }
  return true;
}

void CudaState::stopRecording() {
  if (!recording)
    return;
  recording = false;
  if (failure.empty())
    launchAll(pending);
  pending.clear();
}

void CudaState::finishRun(const std::string &key) {
  if (recording) {
    recording = false;
    issueRecorded(key);
  }
  // After the launches that used them (cuMemFree waits for the device).
  std::vector<void *> frees = std::move(deferredFrees);
  deferredFrees.clear();
  for (void *p : frees)
    deviceFree(p, this);
}

void CudaState::issueRecorded(const std::string &key) {
  if (!failure.empty()) {
    pending.clear();
    return;
  }
  std::string error;
  // A bounded cache: past 16 entries and shapes, start again.
  if (graphCache.size() >= 16 && !graphCache.count(key)) {
    for (auto &entry : graphCache)
      driver->destroyGraph(entry.second.exec);
    graphCache.clear();
  }
  CachedGraph &cached = graphCache[key];
  // The same kernels as the last run of this key, in the same order, with
  // the same blocks and shared sizes: one graph. Replayed as it is where
  // the parameters and grids are the same too (a repeated forward), else
  // updated in place (a decode step: the position moved) or, the first
  // time, captured.
  auto sameKernels = [](const std::vector<RecordedLaunch> &a,
                        const std::vector<RecordedLaunch> &b) {
    return a.size() == b.size() &&
           std::equal(a.begin(), a.end(), b.begin(),
                      [](const RecordedLaunch &x, const RecordedLaunch &y) {
                        return x.kernel == y.kernel && x.shared == y.shared &&
                               std::equal(x.block, x.block + 3, y.block);
                      });
  };
  if (pending.empty() || cached.noGraph ||
      !sameKernels(cached.launches, pending)) {
    driver->destroyGraph(cached.exec);
    cached.exec = nullptr;
    cached.noGraph = cached.noGraph && sameKernels(cached.launches, pending);
    cached.launches = std::move(pending);
    pending.clear();
    launchAll(cached.launches);
    return;
  }
  bool same = cached.launches == pending;
  cached.launches = std::move(pending);
  pending.clear();
  // A graph that cannot be made or launched (the driver's limits, a capture
  // another thread's work disturbed): the same launches one by one, and
  // these kernels launch so from now on.
  auto fallBack = [&] {
    driver->destroyGraph(cached.exec);
    cached.exec = nullptr;
    cached.noGraph = true;
    launchAll(cached.launches);
  };
  if (!cached.exec || !same) {
    std::vector<std::vector<void *>> pointers;
    std::vector<cuda::Driver::GraphLaunch> launches;
    for (const RecordedLaunch &l : cached.launches) {
      pointers.push_back(argPointers(l, paramSizes[l.kernel]));
      cuda::Driver::GraphLaunch g{kernels[l.kernel],
                                  {l.grid[0], l.grid[1], l.grid[2]},
                                  {l.block[0], l.block[1], l.block[2]},
                                  static_cast<unsigned>(l.shared),
                                  pointers.back().data()};
      launches.push_back(g);
    }
    // An update the driver refuses would refuse again at the next step, and
    // a new graph per step costs more than the launches: one by one then.
    if (cached.exec) {
      if (!driver->updateGraph(cached.exec, launches, error))
        return fallBack();
    } else if (!driver->captureGraph(launches, cached.exec, error)) {
      return fallBack();
    }
  }
  if (!driver->launchGraph(cached.exec, error))
    return fallBack();
  ++graphRuns;
}

void CudaState::collectProfile(bool run) {
  KernelProfile *profile = KernelProfile::get();
  for (const TimedLaunch &t : timedLaunches) {
    float ms = 0;
    std::string error;
    if (profile && failure.empty() &&
        driver->elapsedMs(t.start, t.end, ms, error))
      profile->add(kernelNames[t.kernel], ms, driver->description());
    driver->destroyEvent(t.start);
    driver->destroyEvent(t.end);
  }
  timedLaunches.clear();
  if (profile && failure.empty()) {
    if (run)
      profile->addRun(launches);
    else
      profile->addInit(launches);
  }
}

CudaState::~CudaState() {
  // The freeing thread may never have used the context; the planner member
  // (destroyed after this body) releases its arena through it too.
  std::string ignored;
  driver->makeCurrent(ignored);
  for (const TimedLaunch &t : timedLaunches) {
    driver->destroyEvent(t.start);
    driver->destroyEvent(t.end);
  }
  for (void *p : deviceBuffers)
    if (p)
      deviceFree(p, this);
  for (auto &entry : inputBuffers)
    deviceFree(entry.second.first, this);
  for (auto &entry : graphCache)
    driver->destroyGraph(entry.second.exec);
  driver->unloadModule(module);
}

CudaState::Scope::Scope(CudaState *state) : saved(currentState) {
  currentState = state;
  if (state) {
    std::string ignored;
    state->driver->makeCurrent(ignored);
  }
}

CudaState::Scope::~Scope() { currentState = saved; }

tfc_status tfc::rt::loadCudaModel(
    tfc_model &model,
    const std::function<bool(const char *, void *&)> &symbol) {
  const std::string &path = model.path;
  void *archsSym = nullptr, *kernelsSym = nullptr;
  if (!symbol("tfc_cuda_archs", archsSym) ||
      !symbol("tfc_cuda_kernels", kernelsSym))
    return setError(TFC_ERR_INVALID_MODEL,
                    path + ": a CUDA model must export 'tfc_cuda_archs' and "
                           "'tfc_cuda_kernels'");
  std::vector<std::string> archs =
      split(static_cast<const char *>(archsSym), ',');

  std::string error;
  cuda::Driver *driver = cuda::Driver::get(error);
  if (!driver)
    return setError(TFC_ERR_UNSUPPORTED_HOST,
                    path + ": compiled for CUDA, but " + error);
  int index = cuda::selectArch(archs, driver->computeCapability());
  if (index < 0) {
    std::string list;
    for (const std::string &a : archs)
      list += (list.empty() ? "" : ", ") + a;
    return setError(TFC_ERR_UNSUPPORTED_HOST,
                    path + ": compiled for " +
                        (list.empty() ? "no GPU" : list) +
                        ", which cannot run on " + driver->description() +
                        " (recompile with --gpu-arch)");
  }
  auto state = std::make_unique<CudaState>(driver);
  state->arch = archs[index];
  void *ptx = nullptr;
  std::string ptxSymbol = "tfc_cuda_ptx_" + state->arch;
  if (!symbol(ptxSymbol.c_str(), ptx))
    return setError(TFC_ERR_INVALID_MODEL, path + ": lists " + state->arch +
                                               " but does not export '" +
                                               ptxSymbol + "'");
  CudaState::Scope scope(state.get());
  if (!driver->loadModule(static_cast<const char *>(ptx), state->module, error))
    return setError(TFC_ERR_INVALID_MODEL,
                    path + ": loading its " + state->arch + " PTX on " +
                        driver->description() + ": " + error);
  state->kernelNames = split(static_cast<const char *>(kernelsSym), '\n');
  for (const std::string &name : state->kernelNames) {
    cuda::CUfunction fn = nullptr;
    if (!driver->getFunction(state->module, name.c_str(), fn, error))
      return setError(TFC_ERR_INVALID_MODEL, path + ": " + error);
    state->kernels.push_back(fn);
  }
  // Graphs need every kernel's parameter sizes (to record launches).
  const char *graphsEnv = std::getenv("TFC_CUDA_GRAPHS");
  state->graphs = driver->supportsGraphs() && !state->profiling &&
                  !(graphsEnv && std::string(graphsEnv) == "0");
  for (size_t i = 0; state->graphs && i < state->kernels.size(); ++i) {
    state->paramSizes.emplace_back();
    state->graphs =
        driver->paramSizes(state->kernels[i], state->paramSizes.back(), error);
  }
  model.cuda = std::move(state);
  return TFC_OK;
}

tfc_status tfc::rt::initCudaModel(tfc_model &model) {
  CudaState &state = *model.cuda;
  cuda::Driver &driver = *state.driver;
  CudaState::Scope scope(&state);
  for (void *p : state.deviceBuffers)
    if (p)
      deviceFree(p, &state);
  state.deviceBuffers.clear();
  state.deviceTable.clear();
  state.failure.clear();
  std::string error;
  const ModelSpec &spec = model.spec;
  for (size_t i = 0; i < model.table.size(); ++i) {
    uint64_t bytes, align = 64;
    bool upload = i < spec.weights.size();
    if (upload) {
      bytes = spec.weights[i].byteSize();
    } else {
      const ConstantSpec &c = spec.constants[i - spec.weights.size()];
      bytes = c.bytes;
      align = c.align;
    }
    state.failure.clear();
    void *ptr = deviceAlloc(bytes, align, &state);
    if (!ptr)
      return setError(TFC_ERR_OUT_OF_MEMORY,
                      "device memory for " +
                          (upload ? "weight '" + spec.weights[i].name + "'"
                                  : std::string("a derived constant")) +
                          ": " + state.failure);
    state.deviceBuffers.push_back(ptr);
    state.deviceTable.push_back(ptr);
    if (upload && !driver.copyToDevice(reinterpret_cast<cuda::CUdeviceptr>(ptr),
                                       model.table[i], bytes, error))
      return setError(TFC_ERR_INTERNAL, "uploading weight '" +
                                            spec.weights[i].name +
                                            "': " + error);
  }
  static void *emptyTable[1] = {nullptr};
  state.beginRun();
  model.init(state.deviceTable.empty() ? emptyTable : state.deviceTable.data());
  if (!driver.synchronize(error) && state.failure.empty())
    state.failure = error;
  state.collectProfile(/*run=*/false);
  if (!state.failure.empty())
    return setError(TFC_ERR_INTERNAL, "computing the derived constants on " +
                                          driver.description() + ": " +
                                          state.failure);
  // Weights only init read (converted, packed or merged into derived
  // constants) leave the device.
  for (size_t i = 0; i < spec.weights.size() && i < state.deviceBuffers.size();
       ++i)
    if (spec.weights[i].initOnly && state.deviceBuffers[i]) {
      deviceFree(state.deviceBuffers[i], &state);
      state.deviceBuffers[i] = state.deviceTable[i] = nullptr;
    }
  return TFC_OK;
}
