//===- Cuda.cpp - The CUDA driver API, loaded at run time -----------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Runtime/Cuda.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

using namespace tfc::rt::cuda;

namespace {
// Values from the CUDA driver API (cuda.h), which libtfcrt does not include.
constexpr int kSuccess = 0;
constexpr int kAttrCapabilityMajor = 75, kAttrCapabilityMinor = 76;
constexpr int kJitErrorLogBuffer = 5, kJitErrorLogBufferSize = 6;
constexpr size_t kJitLogBytes = 16 * 1024;
} // namespace

std::string Driver::describe(int result, const char *call) {
  const char *name = nullptr, *text = nullptr;
  if (cuGetErrorName)
    cuGetErrorName(result, &name);
  if (cuGetErrorString)
    cuGetErrorString(result, &text);
  std::string message = std::string(call) + " failed: ";
  message += name ? name : ("CUDA error " + std::to_string(result));
  if (text)
    message += std::string(" (") + text + ")";
  return message;
}

Driver *Driver::get(std::string &error) {
  static std::mutex mutex;
  static Driver *driver = nullptr;
  static std::string failure;
  std::lock_guard<std::mutex> lock(mutex);
  if (driver)
    return driver;
  if (!failure.empty()) {
    error = failure;
    return nullptr;
  }
  auto *candidate = new Driver();
  if (!candidate->open(failure)) {
    delete candidate; // the library stays open: harmless
    error = failure;
    return nullptr;
  }
  driver = candidate;
  return driver;
}

bool Driver::open(std::string &error) {
  const char *path = std::getenv("TFC_CUDA_DRIVER");
  if (!path || !*path)
    path = "libcuda.so.1";
  library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *why = dlerror();
    error = std::string("no CUDA driver found: cannot load ") + path + " (" +
            (why ? why : "unknown error") +
            "); a CUDA model needs an NVIDIA GPU and its driver";
    return false;
  }
  bool missing = false;
  std::string missingName;
  auto bind = [&](auto &fn, const char *name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
        dlsym(library, name));
    if (!fn && !missing) {
      missing = true;
      missingName = name;
    }
  };
  bind(cuGetErrorName, "cuGetErrorName");
  bind(cuGetErrorString, "cuGetErrorString");
  bind(cuInit, "cuInit");
  bind(cuDeviceGetCount, "cuDeviceGetCount");
  bind(cuDeviceGet, "cuDeviceGet");
  bind(cuDeviceGetAttribute, "cuDeviceGetAttribute");
  bind(cuDeviceGetName, "cuDeviceGetName");
  bind(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  bind(cuCtxSetCurrent, "cuCtxSetCurrent");
  bind(cuCtxSynchronize, "cuCtxSynchronize");
  bind(cuModuleLoadDataEx, "cuModuleLoadDataEx");
  bind(cuModuleUnload, "cuModuleUnload");
  bind(cuModuleGetFunction, "cuModuleGetFunction");
  bind(cuLaunchKernel, "cuLaunchKernel");
  bind(cuMemAlloc, "cuMemAlloc_v2");
  bind(cuMemFree, "cuMemFree_v2");
  bind(cuMemcpyHtoD, "cuMemcpyHtoD_v2");
  bind(cuMemcpyDtoH, "cuMemcpyDtoH_v2");
  bind(cuEventCreate, "cuEventCreate");
  bind(cuEventRecord, "cuEventRecord");
  bind(cuEventSynchronize, "cuEventSynchronize");
  bind(cuEventElapsedTime, "cuEventElapsedTime");
  bind(cuEventDestroy, "cuEventDestroy_v2");
  if (missing) {
    error = std::string("the CUDA driver at ") + path + " lacks " +
            missingName + " (too old a driver?)";
    return false;
  }
  auto optional = [&](auto &fn, const char *name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
        dlsym(library, name));
    return fn != nullptr;
  };
  graphs = optional(cuFuncGetParamInfo, "cuFuncGetParamInfo");
  graphs &= optional(cuStreamCreate, "cuStreamCreate");
  graphs &= optional(cuStreamDestroy, "cuStreamDestroy_v2");
  graphs &= optional(cuStreamBeginCapture, "cuStreamBeginCapture_v2");
  graphs &= optional(cuStreamEndCapture, "cuStreamEndCapture");
  graphs &=
      optional(cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags");
  graphs &= optional(cuGraphLaunch, "cuGraphLaunch");
  graphs &= optional(cuGraphExecDestroy, "cuGraphExecDestroy");
  graphs &= optional(cuGraphDestroy, "cuGraphDestroy");
  optional(cuGraphExecUpdate, "cuGraphExecUpdate_v2");
  int result = cuInit(0);
  if (result != kSuccess) {
    error = "no usable CUDA driver: " + describe(result, "cuInit");
    return false;
  }
  int count = 0;
  if ((result = cuDeviceGetCount(&count)) != kSuccess || count == 0) {
    error = result != kSuccess ? describe(result, "cuDeviceGetCount")
                               : "no CUDA device found";
    return false;
  }
  int ordinal = 0;
  if (const char *env = std::getenv("TFC_CUDA_DEVICE"); env && *env)
    ordinal = std::atoi(env);
  if (ordinal < 0 || ordinal >= count) {
    error = "TFC_CUDA_DEVICE=" + std::to_string(ordinal) +
            " is not a device (there are " + std::to_string(count) + ")";
    return false;
  }
  if ((result = cuDeviceGet(&device, ordinal)) != kSuccess) {
    error = describe(result, "cuDeviceGet");
    return false;
  }
  int major = 0, minor = 0;
  cuDeviceGetAttribute(&major, kAttrCapabilityMajor, device);
  cuDeviceGetAttribute(&minor, kAttrCapabilityMinor, device);
  capability = major * 10 + minor;
  char name[256] = {};
  cuDeviceGetName(name, sizeof(name) - 1, device);
  deviceDescription = std::string(name) + ", sm_" + std::to_string(capability);
  if ((result = cuDevicePrimaryCtxRetain(&context, device)) != kSuccess) {
    error = describe(result, "cuDevicePrimaryCtxRetain");
    return false;
  }
  return makeCurrent(error);
}

bool Driver::makeCurrent(std::string &error) {
  int result = cuCtxSetCurrent(context);
  if (result != kSuccess) {
    error = describe(result, "cuCtxSetCurrent");
    return false;
  }
  return true;
}

bool Driver::allocate(size_t bytes, CUdeviceptr &out, std::string &error) {
  int result = cuMemAlloc(&out, bytes ? bytes : 1);
  if (result != kSuccess) {
    error = describe(result, "cuMemAlloc") + " for " + std::to_string(bytes) +
            " bytes";
    out = 0;
    return false;
  }
  return true;
}

void Driver::release(CUdeviceptr ptr) {
  if (ptr)
    cuMemFree(ptr);
}

bool Driver::copyToDevice(CUdeviceptr dst, const void *src, size_t bytes,
                          std::string &error) {
  if (!bytes)
    return true;
  int result = cuMemcpyHtoD(dst, src, bytes);
  if (result != kSuccess) {
    error = describe(result, "cuMemcpyHtoD");
    return false;
  }
  return true;
}

bool Driver::copyToHost(void *dst, CUdeviceptr src, size_t bytes,
                        std::string &error) {
  if (!bytes)
    return true;
  int result = cuMemcpyDtoH(dst, src, bytes);
  if (result != kSuccess) {
    error = describe(result, "cuMemcpyDtoH");
    return false;
  }
  return true;
}

bool Driver::synchronize(std::string &error) {
  int result = cuCtxSynchronize();
  if (result != kSuccess) {
    error = describe(result, "cuCtxSynchronize");
    return false;
  }
  return true;
}

bool Driver::loadModule(const char *ptx, CUmodule &out, std::string &error) {
  std::vector<char> log(kJitLogBytes, '\0');
  int options[] = {kJitErrorLogBuffer, kJitErrorLogBufferSize};
  void *values[] = {log.data(), reinterpret_cast<void *>(log.size() - 1)};
  int result = cuModuleLoadDataEx(&out, ptx, 2, options, values);
  if (result != kSuccess) {
    error = describe(result, "cuModuleLoadDataEx");
    if (log[0])
      error += "; JIT log: " + std::string(log.data());
    out = nullptr;
    return false;
  }
  return true;
}

void Driver::unloadModule(CUmodule module) {
  if (module)
    cuModuleUnload(module);
}

bool Driver::getFunction(CUmodule module, const char *name, CUfunction &out,
                         std::string &error) {
  int result = cuModuleGetFunction(&out, module, name);
  if (result != kSuccess) {
    error =
        describe(result, "cuModuleGetFunction") + " for kernel '" + name + "'";
    return false;
  }
  return true;
}

bool Driver::launch(CUfunction fn, const int64_t grid[3],
                    const int64_t block[3], unsigned sharedBytes, void **args,
                    std::string &error) {
  int result = cuLaunchKernel(
      fn, static_cast<unsigned>(grid[0]), static_cast<unsigned>(grid[1]),
      static_cast<unsigned>(grid[2]), static_cast<unsigned>(block[0]),
      static_cast<unsigned>(block[1]), static_cast<unsigned>(block[2]),
      sharedBytes, nullptr, args, nullptr);
  if (result != kSuccess) {
    error = describe(result, "cuLaunchKernel");
    return false;
  }
  return true;
}

bool Driver::paramSizes(CUfunction fn, std::vector<size_t> &sizes,
                        std::string &error) {
  sizes.clear();
  if (!graphs) {
    error = "the driver has no cuFuncGetParamInfo";
    return false;
  }
  // CUDA_ERROR_INVALID_VALUE past the last parameter; any other error
  // means the sizes are unknown. (A kernel has at most a few hundred: 32 KB
  // of parameters.)
  constexpr int kInvalidValue = 1;
  for (size_t i = 0; i < 4096; ++i) {
    size_t offset = 0, size = 0;
    int result = cuFuncGetParamInfo(fn, i, &offset, &size);
    if (result == kInvalidValue)
      return true;
    if (result != kSuccess) {
      error = describe(result, "cuFuncGetParamInfo");
      return false;
    }
    sizes.push_back(size);
  }
  error = "a kernel with more than 4096 parameters";
  return false;
}

bool Driver::capture(const std::vector<GraphLaunch> &launches, void *&graph,
                     std::string &error) {
  graph = nullptr;
  if (!graphs) {
    error = "the driver has no CUDA Graphs";
    return false;
  }
  constexpr unsigned kStreamNonBlocking = 1;
  CUstream captureStream = nullptr;
  int result = cuStreamCreate(&captureStream, kStreamNonBlocking);
  if (result != kSuccess) {
    error = describe(result, "cuStreamCreate");
    return false;
  }
  struct Destroy {
    Driver *d;
    CUstream s;
    ~Destroy() { d->cuStreamDestroy(s); }
  } destroy{this, captureStream};
  constexpr int kCaptureModeRelaxed = 2;
  if ((result = cuStreamBeginCapture(captureStream, kCaptureModeRelaxed)) !=
      kSuccess) {
    error = describe(result, "cuStreamBeginCapture");
    return false;
  }
  int failed = kSuccess;
  for (const GraphLaunch &l : launches) {
    failed = cuLaunchKernel(
        l.fn, static_cast<unsigned>(l.grid[0]),
        static_cast<unsigned>(l.grid[1]), static_cast<unsigned>(l.grid[2]),
        static_cast<unsigned>(l.block[0]), static_cast<unsigned>(l.block[1]),
        static_cast<unsigned>(l.block[2]), l.sharedBytes, captureStream, l.args,
        nullptr);
    if (failed != kSuccess)
      break;
  }
  result = cuStreamEndCapture(captureStream, &graph);
  if (failed != kSuccess || result != kSuccess) {
    error = failed != kSuccess ? describe(failed, "cuLaunchKernel (capture)")
                               : describe(result, "cuStreamEndCapture");
    if (graph)
      cuGraphDestroy(graph);
    graph = nullptr;
    return false;
  }
  return true;
}

bool Driver::captureGraph(const std::vector<GraphLaunch> &launches,
                          CUgraphExec &out, std::string &error) {
  out = nullptr;
  void *graph = nullptr;
  if (!capture(launches, graph, error))
    return false;
  int result = cuGraphInstantiateWithFlags(&out, graph, 0);
  cuGraphDestroy(graph);
  if (result != kSuccess) {
    out = nullptr;
    error = describe(result, "cuGraphInstantiateWithFlags");
    return false;
  }
  return true;
}

bool Driver::updateGraph(CUgraphExec exec,
                         const std::vector<GraphLaunch> &launches,
                         std::string &error) {
  if (!cuGraphExecUpdate) {
    error = "the driver has no cuGraphExecUpdate";
    return false;
  }
  void *graph = nullptr;
  if (!capture(launches, graph, error))
    return false;
  // CUgraphExecUpdateResultInfo: the result and the nodes it names.
  struct {
    int result;
    void *errorNode, *errorFromNode;
  } info = {};
  int result = cuGraphExecUpdate(exec, graph, &info);
  cuGraphDestroy(graph);
  if (result != kSuccess) {
    error = describe(result, "cuGraphExecUpdate") + " (update result " +
            std::to_string(info.result) + ")";
    return false;
  }
  return true;
}

bool Driver::launchGraph(CUgraphExec graph, std::string &error) {
  int result = cuGraphLaunch(graph, nullptr);
  if (result != kSuccess) {
    error = describe(result, "cuGraphLaunch");
    return false;
  }
  return true;
}

void Driver::destroyGraph(CUgraphExec graph) {
  if (graph && cuGraphExecDestroy)
    cuGraphExecDestroy(graph);
}

bool Driver::recordEvent(CUevent &event, std::string &error) {
  event = nullptr;
  int result = cuEventCreate(&event, 0);
  if (result != kSuccess) {
    error = describe(result, "cuEventCreate");
    event = nullptr;
    return false;
  }
  if ((result = cuEventRecord(event, nullptr)) != kSuccess) {
    error = describe(result, "cuEventRecord");
    cuEventDestroy(event);
    event = nullptr;
    return false;
  }
  return true;
}

bool Driver::elapsedMs(CUevent start, CUevent end, float &ms,
                       std::string &error) {
  int result = cuEventSynchronize(end);
  if (result == kSuccess)
    result = cuEventElapsedTime(&ms, start, end);
  if (result != kSuccess) {
    error = describe(result, "cuEventElapsedTime");
    return false;
  }
  return true;
}

void Driver::destroyEvent(CUevent event) {
  if (event)
    cuEventDestroy(event);
}

namespace {
/// "sm_<N>" (rank 0), "sm_<N>f" (1), "sm_<N>a" (2): N, or -1 if malformed.
int parseArch(const std::string &arch, int &rank) {
  if (arch.rfind("sm_", 0) != 0)
    return -1;
  size_t i = 3;
  int version = 0;
  while (i < arch.size() && arch[i] >= '0' && arch[i] <= '9' && version < 10000)
    version = version * 10 + (arch[i++] - '0');
  if (i == 3)
    return -1;
  std::string suffix = arch.substr(i);
  if (suffix.empty())
    rank = 0;
  else if (suffix == "f")
    rank = 1;
  else if (suffix == "a")
    rank = 2;
  else
    return -1;
  return version;
}
} // namespace

int tfc::rt::cuda::selectArch(const std::vector<std::string> &archs,
                              int capability) {
  int best = -1, bestVersion = -1, bestRank = -1;
  for (size_t i = 0; i < archs.size(); ++i) {
    int rank = 0;
    int version = parseArch(archs[i], rank);
    if (version <= 0 || version > capability)
      continue;
    // Architecture-specific code runs on that architecture alone, family
    // code on the newer members of its family (same major version).
    if ((rank == 2 && version != capability) ||
        (rank == 1 && version / 10 != capability / 10))
      continue;
    if (version < bestVersion || (version == bestVersion && rank <= bestRank))
      continue;
    best = static_cast<int>(i);
    bestVersion = version;
    bestRank = rank;
  }
  return best;
}
