//===- CudaModel.h - Running models compiled with --target=cuda -*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The device side of a loaded CUDA model: the driver, the PTX module chosen
// for the device, the kernels in launch-index order, the weights and
// constants in device memory, and a memory planner over device memory for
// the intermediates. The model's host code reaches it through the hooks
// (ModelABI.h) and a thread-local "current model" set around init and runs.
//
// Private to libtfcrt.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_LIB_RUNTIME_CUDAMODEL_H
#define TFC_LIB_RUNTIME_CUDAMODEL_H

#include "tfc/Runtime/Cuda.h"
#include "tfc/Runtime/MemoryPlan.h"
#include "tfc/Runtime/tfc.h"
#include "tfc/Schemas/ModelABI.h"

#include <algorithm>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

struct tfc_model;

namespace tfc::rt {

struct CudaState {
  explicit CudaState(cuda::Driver *driver);
  ~CudaState();
  CudaState(const CudaState &) = delete;
  CudaState &operator=(const CudaState &) = delete;

  cuda::Driver *driver;
  cuda::CUmodule module = nullptr;
  std::string arch;
  std::vector<cuda::CUfunction> kernels;
  std::vector<std::string> kernelNames;
  /// Weights and constants on the device, in table order.
  std::vector<void *> deviceBuffers;
  /// Over-aligned device allocations: aligned address -> cuMemAlloc's.
  std::mutex alignedMutex;
  std::unordered_map<cuda::CUdeviceptr, cuda::CUdeviceptr> alignedBases;
  std::vector<void *> deviceTable;
  /// The first failure of a launch or allocation during init or a run.
  std::string failure;
  /// Device time of the last run's entry (CUDA events around its launches),
  /// or a negative value when it could not be measured.
  double lastDeviceMs = -1;

  /// Kernel launches since the last beginRun.
  uint64_t launches = 0;
  /// TFC_CUDA_PROFILE: each launch between two events, timed once the
  /// device has finished them (collectProfile).
  struct TimedLaunch {
    int64_t kernel;
    cuda::CUevent start, end;
  };
  bool profiling = false;
  std::vector<TimedLaunch> timedLaunches;

  /// CUDA Graphs: on where the driver has them and every kernel's
  /// parameter sizes are known, unless TFC_CUDA_GRAPHS=0 or profiling. A
  /// run's launches are recorded (kernel, grid, parameter bytes) and
  /// issued when its entry returns (the host code never reads device
  /// memory): the same kernels (blocks, shared sizes) as the last run of
  /// that entry and shapes are one graph, captured the second time they
  /// are seen, replayed as it is where the parameters and grids are the
  /// same too (a repeated forward: same buffers), else updated in place
  /// (cuGraphExecUpdate: a decode step, whose position moved); other
  /// launches go one by one and become the candidate. Persistent buffers
  /// (inputBuffer, the memory plan's arena) make a repeated forward's
  /// launches identical from its third run.
  bool graphs = false;
  std::vector<std::vector<size_t>> paramSizes;
  struct RecordedLaunch {
    int64_t kernel;
    int64_t grid[3], block[3];
    int32_t shared;
    std::vector<uint8_t> args;
    bool operator==(const RecordedLaunch &o) const {
      return kernel == o.kernel && shared == o.shared &&
             std::equal(grid, grid + 3, o.grid) &&
             std::equal(block, block + 3, o.block) && args == o.args;
    }
  };
  bool recording = false;
  std::vector<RecordedLaunch> pending;
  /// Device memory the entry released while its launches were recorded:
  /// freed once they are issued.
  std::vector<void *> deferredFrees;
  struct CachedGraph {
    std::vector<RecordedLaunch> launches;
    cuda::CUgraphExec exec = nullptr;
    /// Capturing or launching its graph failed: launched one by one.
    bool noGraph = false;
  };
  std::map<std::string, CachedGraph> graphCache;
  /// Runs whose launches were one graph (since load).
  uint64_t graphRuns = 0;

  /// Device buffers for the inputs of entry `entry`, kept across runs (a
  /// graph's launches read them at fixed addresses): input `input`'s,
  /// grown to `bytes` when smaller. Null with `error` on failure.
  void *inputBuffer(size_t entry, size_t input, uint64_t bytes,
                    std::string &error);
  std::map<std::pair<size_t, size_t>, std::pair<void *, uint64_t>> inputBuffers;

  /// Starts counting the launches of a run, and recording them when
  /// graphs are on and `record` (a run on a replayed memory plan: only its
  /// buffers are where the next run's will be; recording defers frees).
  void beginRun(bool record = false) {
    launches = 0;
    recording = record && graphs;
    pending.clear();
  }
  /// After the entry returned: issues a recorded run's launches (`key`:
  /// the entry and its input shapes). A failure lands in `failure`.
  void finishRun(const std::string &key);
  void issueRecorded(const std::string &key);
  /// Launches `list` one by one; false (with `failure` set) on an error.
  bool launchAll(const std::vector<RecordedLaunch> &list);
  /// Stops recording for good (graphs off for this model): the launches
  /// recorded so far go now, in order.
  void stopRecording();
  /// After a synchronisation: adds the timed launches to the process's
  /// kernel profile (printed at exit), and for a run (not init) its launch
  /// count.
  void collectProfile(bool run);

  /// Last: its destructor releases device memory through deviceFree, which
  /// reads the members above.
  MemoryPlanner planner;

  /// Marks the calling thread as running this model's host code.
  class Scope {
  public:
    explicit Scope(CudaState *state);
    ~Scope();

  private:
    CudaState *saved;
  };
};

/// Device memory of `state` aligned to `align`, and its release (the
/// planner's MemorySource of a CUDA model).
void *deviceAlloc(uint64_t size, uint64_t align, void *state);
void deviceFree(void *ptr, void *state);

/// The hooks of CUDA models.
extern const tfc_rt_hooks kCudaHooks;

/// Opens the driver, picks and loads the PTX for the device, resolves the
/// kernels. `symbol(name, out)` looks up an exported symbol of the model.
tfc_status
loadCudaModel(tfc_model &model,
              const std::function<bool(const char *, void *&)> &symbol);

/// Copies the bound weights (the host table) to the device, allocates the
/// constants there and runs the model's init on the device table.
tfc_status initCudaModel(tfc_model &model);

} // namespace tfc::rt

#endif // TFC_LIB_RUNTIME_CUDAMODEL_H
