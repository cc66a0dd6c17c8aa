//===- Cuda.h - The CUDA driver API, loaded at run time ---------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// libtfcrt never links libcuda: the driver is opened with
// dlopen("libcuda.so.1") the first time a CUDA model is loaded (the path
// can be overridden with TFC_CUDA_DRIVER, which the tests use to simulate a
// machine without a driver). Everything that can fail returns false with a
// message naming the call and the driver's error name and string.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_CUDA_H
#define TFC_RUNTIME_CUDA_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tfc::rt::cuda {

using CUdeviceptr = uint64_t;
using CUcontext = void *;
using CUmodule = void *;
using CUfunction = void *;
using CUstream = void *;
using CUevent = void *;
using CUgraphExec = void *;

/// The driver: opened once per process, with device TFC_CUDA_DEVICE (default
/// 0) and its primary context current on the threads that call in.
class Driver {
public:
  /// The process's driver, or null with `error` ("no CUDA driver found: ...",
  /// "no CUDA device", ...). A failure is remembered: later calls fail the
  /// same way without retrying.
  static Driver *get(std::string &error);

  /// Makes the context current on the calling thread.
  bool makeCurrent(std::string &error);
  /// "NVIDIA H100 80GB HBM3, sm_90".
  const std::string &description() const { return deviceDescription; }
  /// Compute capability as major * 10 + minor (90 for sm_90).
  int computeCapability() const { return capability; }

  bool allocate(size_t bytes, CUdeviceptr &out, std::string &error);
  void release(CUdeviceptr ptr);
  bool copyToDevice(CUdeviceptr dst, const void *src, size_t bytes,
                    std::string &error);
  bool copyToHost(void *dst, CUdeviceptr src, size_t bytes, std::string &error);
  bool synchronize(std::string &error);

  /// Loads PTX; a failure includes the JIT's error log.
  bool loadModule(const char *ptx, CUmodule &out, std::string &error);
  void unloadModule(CUmodule module);
  bool getFunction(CUmodule module, const char *name, CUfunction &out,
                   std::string &error);
  bool launch(CUfunction fn, const int64_t grid[3], const int64_t block[3],
              unsigned sharedBytes, void **args, std::string &error);

  /// CUDA Graphs (driver 12.4 or later: cuFuncGetParamInfo and stream
  /// capture). Without them the calls below fail and runs launch kernel by
  /// kernel.
  bool supportsGraphs() const { return graphs; }
  /// The byte size of each of `fn`'s parameters.
  bool paramSizes(CUfunction fn, std::vector<size_t> &sizes,
                  std::string &error);
  /// One launch of a graph: `args[i]` points to parameter i.
  struct GraphLaunch {
    CUfunction fn;
    int64_t grid[3], block[3];
    unsigned sharedBytes;
    void **args;
  };
  /// Captures `launches` in order as an executable graph (on a stream of
  /// its own, non-blocking: work other threads put on the default stream
  /// meanwhile neither joins nor invalidates the capture).
  bool captureGraph(const std::vector<GraphLaunch> &launches, CUgraphExec &out,
                    std::string &error);
  /// Makes `exec` run `launches` instead (the same kernels, blocks and
  /// shared sizes in the same order as its graph; grids and parameters may
  /// differ, as a decode step's do): captured and applied by
  /// cuGraphExecUpdate, much cheaper than a new graph. False, `exec`
  /// unchanged, where the driver lacks it or refuses the update.
  bool updateGraph(CUgraphExec exec, const std::vector<GraphLaunch> &launches,
                   std::string &error);
  /// Launches `graph` on the default stream (ordered with launch() and the
  /// copies).
  bool launchGraph(CUgraphExec graph, std::string &error);
  void destroyGraph(CUgraphExec graph);

  /// Events for timing on the default stream.
  bool recordEvent(CUevent &event, std::string &error);
  bool elapsedMs(CUevent start, CUevent end, float &ms, std::string &error);
  void destroyEvent(CUevent event);

private:
  Driver() = default;
  bool open(std::string &error);
  std::string describe(int result, const char *call);
  /// `launches` captured in order as a graph (not instantiated).
  bool capture(const std::vector<GraphLaunch> &launches, void *&graph,
               std::string &error);

  void *library = nullptr;
  int device = 0, capability = 0;
  CUcontext context = nullptr;
  std::string deviceDescription;

  // Driver entry points (CUresult is int).
  int (*cuInit)(unsigned) = nullptr;
  int (*cuDeviceGetCount)(int *) = nullptr;
  int (*cuDeviceGet)(int *, int) = nullptr;
  int (*cuDeviceGetAttribute)(int *, int, int) = nullptr;
  int (*cuDeviceGetName)(char *, int, int) = nullptr;
  int (*cuDevicePrimaryCtxRetain)(CUcontext *, int) = nullptr;
  int (*cuCtxSetCurrent)(CUcontext) = nullptr;
  int (*cuCtxSynchronize)() = nullptr;
  int (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *,
                            void **) = nullptr;
  int (*cuModuleUnload)(CUmodule) = nullptr;
  int (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *) = nullptr;
  int (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                        unsigned, unsigned, unsigned, CUstream, void **,
                        void **) = nullptr;
  int (*cuMemAlloc)(CUdeviceptr *, size_t) = nullptr;
  int (*cuMemFree)(CUdeviceptr) = nullptr;
  int (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t) = nullptr;
  int (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t) = nullptr;
  int (*cuEventCreate)(CUevent *, unsigned) = nullptr;
  int (*cuEventRecord)(CUevent, CUstream) = nullptr;
  int (*cuEventSynchronize)(CUevent) = nullptr;
  int (*cuEventElapsedTime)(float *, CUevent, CUevent) = nullptr;
  int (*cuEventDestroy)(CUevent) = nullptr;
  // Optional (graphs).
  bool graphs = false;
  int (*cuFuncGetParamInfo)(CUfunction, size_t, size_t *, size_t *) = nullptr;
  int (*cuStreamCreate)(CUstream *, unsigned) = nullptr;
  int (*cuStreamDestroy)(CUstream) = nullptr;
  int (*cuStreamBeginCapture)(CUstream, int) = nullptr;
  int (*cuStreamEndCapture)(CUstream, void **) = nullptr;
  int (*cuGraphInstantiateWithFlags)(CUgraphExec *, void *,
                                     unsigned long long) = nullptr;
  int (*cuGraphLaunch)(CUgraphExec, CUstream) = nullptr;
  int (*cuGraphExecDestroy)(CUgraphExec) = nullptr;
  int (*cuGraphDestroy)(void *) = nullptr;
  int (*cuGraphExecUpdate)(CUgraphExec, void *, void *) = nullptr;
  int (*cuGetErrorName)(int, const char **) = nullptr;
  int (*cuGetErrorString)(int, const char **) = nullptr;
};

/// Picks the PTX to load for a device of compute capability `capability`
/// (90 for 9.0): the newest of `archs` ("sm_80,sm_90,sm_90a") that runs on
/// the device: sm_<N> on N and newer, sm_<N>f on N and the newer members of
/// its family (same major version), sm_<N>a on N alone; at the same N, a
/// before f before plain. Returns the index into the list, or -1 (no arch
/// runs on this device).
int selectArch(const std::vector<std::string> &archs, int capability);

} // namespace tfc::rt::cuda

#endif // TFC_RUNTIME_CUDA_H
