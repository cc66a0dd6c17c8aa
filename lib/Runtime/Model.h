//===- Model.h - A loaded model (the C API's tfc_model) ---------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The definition behind the opaque `tfc_model` of tfc.h: the dlopen handle,
// the parsed metadata, the resolved symbols, the bound weights and constants
// (the table given to the model) and the memory planner of its runs.
// Model.cpp loads models and binds weights; Run.cpp checks inputs and runs
// entries; CApi.cpp holds the C functions and the thread's last error.
//
// Private to libtfcrt.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_LIB_RUNTIME_MODEL_H
#define TFC_LIB_RUNTIME_MODEL_H

#include "Cuda/CudaModel.h"

#include "tfc/Formats/PackedWeights.h"
#include "tfc/Formats/SafeTensors.h"
#include "tfc/Formats/Weights.h"
#include "tfc/Runtime/MemoryPlan.h"
#include "tfc/Runtime/ModelMetadata.h"
#include "tfc/Runtime/tfc.h"
#include "tfc/Schemas/ModelABI.h"

#include <exception>
#include <functional>
#include <memory>
#include <new>
#include <mutex>
#include <string>
#include <vector>

namespace tfc::rt {

/// Sets the calling thread's last error and returns `status`.
tfc_status setError(tfc_status status, std::string message);

/// Runs `body` (a C API function's work), mapping exceptions to statuses:
/// no C++ exception crosses the API.
template <typename Body> tfc_status guarded(Body &&body) {
  try {
    return body();
  } catch (const std::bad_alloc &) {
    return setError(TFC_ERR_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception &e) {
    return setError(TFC_ERR_INTERNAL,
                    std::string("internal error: ") + e.what());
  } catch (...) {
    return setError(TFC_ERR_INTERNAL, "internal error");
  }
}

/// Memory from alignedAlloc, released on destruction.
struct AlignedDeleter {
  void operator()(void *p) const { alignedFree(p); }
};
using AlignedBuffer = std::unique_ptr<void, AlignedDeleter>;
/// Memory from allocZeroedLarge, released on destruction.
struct ZeroedDeleter {
  uint64_t bytes = 0;
  void operator()(void *p) const { freeZeroedLarge(p, bytes); }
};
using ZeroedBuffer = std::unique_ptr<void, ZeroedDeleter>;
/// Memory from allocZeroed, released on destruction.
struct ZeroedHostDeleter {
  uint64_t bytes = 0;
  void operator()(void *p) const { freeZeroed(p, bytes); }
};
using ZeroedHostBuffer = std::unique_ptr<void, ZeroedHostDeleter>;

} // namespace tfc::rt

struct tfc_model {
  using InitFn = void (*)(void *const *table);
  using EntryFn = void (*)(void *const *table, tfc_memref *const *inputs,
                           tfc_memref *const *outputs);

  /// Loads `path`; `runnable` is false for tfc_model_inspect.
  static tfc_status load(const char *path, bool runnable, tfc_model **out);
  ~tfc_model();

  tfc_status bindWeights(const char *path);
  /// Writes the bound weights in their resident form (PackedWeights.h).
  tfc_status saveWeights(const char *path);
  /// `resident` (per input, optional): the data is already in the model's
  /// device memory (a session's states on a CUDA model): neither checked
  /// nor uploaded.
  /// `into`: the outputs are the caller's buffers (tfc_run_into).
  tfc_status run(const char *entry, const tfc_tensor *inputs, size_t numInputs,
                 tfc_tensor *outputs, size_t numOutputs,
                 const std::vector<bool> *resident = nullptr,
                 bool into = false);

  std::string path;
  /// The CPU variant run ("__x86_64_v4") of a multi-versioned library;
  /// empty for a single-build library.
  std::string variant;
  void *handle = nullptr;
  bool runnable = false;
  std::string metadataText;
  tfc::rt::ModelSpec spec;
  InitFn init = nullptr;
  std::vector<EntryFn> entryFns;

  /// Serialises runs and weight binding.
  std::mutex mutex;
  /// The bound weights: the checkpoint they are mapped from or the packed
  /// file, the memory each slot owns (null where it owns none), and the
  /// table (weights then constants). `ready` once init has run.
  std::unique_ptr<tfc::rt::WeightSource> weightsFile;
  std::unique_ptr<tfc::rt::PackedWeightsFile> packedFile;
  std::vector<tfc::rt::AlignedBuffer> buffers;
  /// The derived constants' memory: one allocation for all of them, so
  /// that they lie on whole huge pages with one partly used page in all
  /// (alignedAllocLarge).
  tfc::rt::ZeroedBuffer constantPool;
  std::vector<void *> table;
  bool ready = false;
  std::string notes;
  uint64_t weightBytesMapped = 0, weightBytesCopied = 0;
  /// Init-only weights released once init ran; derived constants' bytes;
  /// the size of the bound packed file (0 when bound from a checkpoint).
  uint64_t weightBytesReleased = 0, constantBytes = 0, packedFileBytes = 0;
  /// The library's key for packed files (hashLibraryFile), 0 until needed.
  uint64_t libraryKey = 0;

  tfc::rt::MemoryPlanner planner;
  /// The device side of a model compiled with --target=cuda.
  std::unique_ptr<tfc::rt::CudaState> cuda;

private:
  tfc_status bind(std::unique_ptr<tfc::rt::WeightSource> file,
                  const std::string &fileName);
  tfc_status bindPacked(const std::string &fileName);
  /// Picks the variant of `list` (tfc_model_variants) to run, or reports
  /// why none can; sets variant, metadataText and spec.
  tfc_status
  chooseVariant(const char *list, bool runnableModel,
                const std::function<bool(const std::string &, void *&)>
                    &symbol);
  tfc_status computeLibraryKey();
  /// After init: frees or unmaps what only init read (PackedWeights.h).
  void releaseInitOnlyWeights();
};

#endif // TFC_LIB_RUNTIME_MODEL_H
