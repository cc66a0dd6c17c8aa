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

#include <functional>
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
  MemoryPlanner planner;

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

  /// Starts counting the launches of a run.
  void beginRun() { launches = 0; }
  /// After a synchronisation: adds the timed launches to the process's
  /// kernel profile (printed at exit), and for a run (not init) its launch
  /// count.
  void collectProfile(bool run);

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
