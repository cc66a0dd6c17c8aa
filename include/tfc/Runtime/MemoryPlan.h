//===- MemoryPlan.h - Record-and-replay arena planning ----------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// A compiled model allocates its intermediates through the runtime's hooks
// (ModelABI.h). For a given shape signature (the entry and its input shapes)
// the sequence of allocations and frees is the same on every run, so the
// runtime records it once and then serves every later run with that
// signature from one arena:
//
//  1. Record: a run with a new signature gets heap memory and the planner
//     records each allocation's (size, alignment) by ordinal and the event
//     times of its alloc and free.
//  2. Plan: the freed allocations get arena offsets such that allocations
//     live at the same time never share bytes (planArena: greedy by size,
//     best fit). Allocations never freed during the run (the outputs) are
//     not in the arena: they outlive it.
//  3. Replay: later runs with the signature get `arena + offset` by ordinal
//     as long as the events match the recording exactly (same order, sizes
//     and alignments). On the first difference the rest of the run is served
//     from the heap, and the signature is recorded again on its next run.
//     The arena stays valid for the whole run, so memory handed out before
//     the difference stays correct.
//
// The hooks are process-wide functions: they find the planner of the run
// through a thread-local set by MemoryPlanner::Scope. Allocations from
// threads running a parallel_for chunk (ParallelScope) go to the heap but
// are tracked, so outputs and leaks are still accounted for; allocations with
// no planner at all (model initialisation) are plain heap memory. Frees
// recognise arena pointers (no-ops) and heap ones.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_MEMORYPLAN_H
#define TFC_RUNTIME_MEMORYPLAN_H

#include "tfc/Runtime/tfc.h"

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace tfc::rt {

/// Heap memory aligned to max(align, 64) (align a power of two). Size 0
/// gives a unique pointer. Null if memory is exhausted or the size absurd.
void *alignedAlloc(uint64_t size, uint64_t align);
void alignedFree(void *ptr);
/// alignedAlloc for a buffer that lives as long as a model or a session
/// (weights, derived constants, state, large outputs): one of
/// kHugePageBytes or more starts on a kHugePageBytes boundary and is advised
/// as transparent huge pages (Linux MADV_HUGEPAGE; ignored where unsupported
/// or disabled), so that streaming hundreds of MiB of packed weights takes
/// one TLB entry per 2 MiB instead of per 4 KiB. The last partial huge page
/// is advised too (the buffer rounded up to whole ones) when that adds at
/// most an eighth of its size; else it stays on 4 KiB pages. Callers with
/// many buffers that are read in full pool them (the derived constants).
/// Released with alignedFree.
void *alignedAllocLarge(uint64_t size, uint64_t align);
inline constexpr uint64_t kHugePageBytes = UINT64_C(2) << 20;
/// Zeroed memory of `size` bytes for a buffer written once and then read
/// (the derived constants), straight from the kernel: on whole huge pages
/// (advised as alignedAllocLarge advises), aligned to `align` (at most
/// kHugePageBytes), and zero without being written, so that its pages
/// become resident as they are first written rather than all at once
/// (tfc_model_init writes the constants one after another, releasing each
/// weight it has consumed). Null when the kernel refuses. Released with
/// freeZeroedLarge(p, size).
void *allocZeroedLarge(uint64_t size, uint64_t align);
void freeZeroedLarge(void *ptr, uint64_t size);
/// Zeroed memory of any size (`align` at most 4096): allocZeroedLarge from
/// kHugePageBytes up, else the heap, cleared. Released with
/// freeZeroed(p, size).
void *allocZeroed(uint64_t size, uint64_t align);
void freeZeroed(void *ptr, uint64_t size);
/// `v` rounded up to a multiple of `a` (a power of two).
inline constexpr uint64_t alignUp(uint64_t v, uint64_t a) {
  return (v + a - 1) & ~(a - 1);
}

/// One allocation of a recorded run. Times are positions in the run's
/// sequence of allocation and free events.
struct Lifetime {
  static constexpr uint64_t kForever = UINT64_MAX;
  uint64_t size = 0, align = 64;
  uint64_t begin = 0, end = kForever;
};

struct ArenaPlan {
  static constexpr uint64_t kNotInArena = UINT64_MAX;
  /// Per lifetime: its offset, or kNotInArena for those never freed.
  std::vector<uint64_t> offsets;
  /// The arena's size and the alignment its base needs.
  uint64_t arenaBytes = 0, alignment = 64;
  /// The sum of the placed sizes, and the most bytes live at one time (no
  /// arena can be smaller).
  uint64_t plannedBytes = 0, peakLiveBytes = 0;
};

/// Offsets for `lifetimes`: sizes are rounded up to 64 bytes; the largest
/// allocation is placed first, each at the smallest gap that fits among the
/// allocations live at the same time (else after them). Allocations whose
/// lifetimes overlap never overlap in memory.
ArenaPlan planArena(const std::vector<Lifetime> &lifetimes);

struct PlannerStats {
  tfc_plan_mode mode = TFC_PLAN_NONE;
  /// The last run.
  uint64_t allocs = 0, allocBytes = 0, arenaAllocs = 0, heapAllocs = 0;
  /// Allocations adopted as outputs, and those left live that endRun freed.
  uint64_t outputAllocs = 0, leakedAllocs = 0;
  /// The plan of the last run's signature (0 if none).
  uint64_t arenaBytes = 0, plannedBytes = 0, peakLiveBytes = 0;
  uint64_t numPlans = 0, arenaCapacity = 0;
};

/// Where a planner's heap allocations and arenas come from: host memory, or
/// device memory for a CUDA model (pointers are only compared, never
/// dereferenced, by the planner).
struct MemorySource {
  void *(*alloc)(uint64_t size, uint64_t align, void *ctx);
  void (*free)(void *ptr, void *ctx);
  void *ctx;
};
/// alignedAlloc / alignedFree.
MemorySource hostMemory();

class MemoryPlanner {
public:
  /// Plans are kept for the `maxPlans` most recently used signatures.
  explicit MemoryPlanner(size_t maxPlans = 8,
                         MemorySource source = hostMemory());
  ~MemoryPlanner();
  MemoryPlanner(const MemoryPlanner &) = delete;
  MemoryPlanner &operator=(const MemoryPlanner &) = delete;

  /// Starts a run. One run at a time per planner.
  void beginRun(const std::string &signature);
  /// The planned path: allocations of the run's thread, in order.
  void *allocate(int64_t size, int64_t align);
  void deallocate(void *ptr);
  /// Allocations from parallel chunks: heap, tracked for the run.
  void *allocateShared(int64_t size, int64_t align);
  void deallocateShared(void *ptr);
  /// After the entry returned: takes a live heap allocation of the run out
  /// of the planner's care (an output), to be released with alignedFree.
  /// False if `ptr` is not one (then it must be copied, not kept).
  bool adopt(void *ptr);
  /// Ends the run: frees what is still live, records or updates the plan.
  void endRun();

  /// In a recorded run, after the entry returned: output `index`, of
  /// `bytes`, starts the live allocation `ptr` (contiguous). The plan
  /// remembers which allocation that was when it holds nothing else.
  void noteOutput(size_t index, void *ptr, uint64_t bytes);
  /// In a replayed run, before the entry: the caller's buffer for each
  /// output (null: none). The allocation a recorded run returned as output
  /// i is served with buffer i when it fits (size and alignment), so the
  /// entry computes straight into it; a buffer that does not fit (too
  /// little aligned for the kernels) gets one kept across runs instead, for
  /// the caller to copy from, rather than a fresh heap block (and its page
  /// faults) every run.
  void setDestinations(const std::vector<std::pair<void *, uint64_t>> &dests);

  /// Whether an allocation through this planner (in a run or not, from any
  /// thread) returned null for a non-zero size since the last call; `size`
  /// is the first such request. The model library then returned early
  /// (tfc-check-allocations) and its results are undefined. A run with a
  /// failure records no plan.
  bool takeAllocationFailure(int64_t &size);

  /// In a replayed run of a planner on device memory, before the entry:
  /// the allocation a recorded run returned as output i (noteOutput) is
  /// served from a buffer of the planner's kept across runs, so that a
  /// repeated run writes its outputs at the same addresses (a CUDA Graph's
  /// launches stay valid). The caller downloads it; it is never freed by
  /// the run.
  void keepOutputs();
  /// Whether the run under way replays a plan (since beginRun; a replay
  /// that falls back mid-run still counts).
  bool replaying() const { return running && mode == TFC_PLAN_REPLAYED; }

  const PlannerStats &stats() const { return lastStats; }

  /// Routes the calling thread's hook allocations to `planner` while alive.
  class Scope {
  public:
    explicit Scope(MemoryPlanner *planner);
    ~Scope();
    Scope(const Scope &) = delete;
    Scope &operator=(const Scope &) = delete;

  private:
    MemoryPlanner *savedPlanner;
    bool savedParallel;
  };

  /// Marks the calling thread as running a parallel chunk for `planner`
  /// (possibly null): its allocations take the shared path.
  class ParallelScope {
  public:
    explicit ParallelScope(MemoryPlanner *planner);
    ~ParallelScope();
    ParallelScope(const ParallelScope &) = delete;
    ParallelScope &operator=(const ParallelScope &) = delete;

  private:
    MemoryPlanner *savedPlanner;
    bool savedParallel;
  };

  /// The planner of the calling thread, or null.
  static MemoryPlanner *current();

private:
  struct Plan;
  struct Live {
    uint32_t ordinal;
    bool heap;
  };

  void fallBack();
  void *heap(uint64_t size, uint64_t align);
  bool inArena(const void *ptr) const;
  bool ensureArena(uint64_t bytes, uint64_t alignment);
  void releaseArena();
  /// Output i's kept block of at least `bytes` aligned to `align` (null if
  /// out of memory or the alignment absurd).
  void *outputScratch(size_t i, uint64_t bytes, uint64_t align);

  struct Scratch {
    void *ptr = nullptr;
    uint64_t bytes = 0, align = 0;
  };
  static void releaseScratch(Scratch &s);
  /// Per output index, host planners only: see setDestinations.
  std::vector<Scratch> scratch;
  /// keepOutputs' buffers, from the source.
  std::vector<Scratch> sourceScratch;

  const size_t maxPlans;
  MemorySource source;
  /// Whether `source` is hostMemory() (unknown pointers then go to the host
  /// allocator; never for a device source).
  bool hostSource;
  void releaseUnknown(void *ptr);
  void *sourceAlloc(uint64_t size, uint64_t align) {
    return source.alloc(size, align, source.ctx);
  }
  void sourceFree(void *ptr) { source.free(ptr, source.ctx); }
  std::vector<Plan *> plans;
  uint64_t useClock = 0;

  std::mutex mutex;
  bool running = false;
  tfc_plan_mode mode = TFC_PLAN_NONE;
  Plan *plan = nullptr;
  std::string signature;
  bool recordingBroken = false;
  uint64_t failedAllocs = 0;
  int64_t firstFailedSize = 0;
  void noteFailure(int64_t size);
  uint64_t event = 0;
  uint32_t nextOrdinal = 0;
  std::vector<Lifetime> recording;
  /// Per output index of the recording run: its allocation's ordinal, or -1.
  std::vector<int64_t> recordedOutputs;
  std::vector<uint64_t> recordedOutputBytes;
  /// Ordinal -> the caller's buffer, in a replayed run.
  std::unordered_map<uint32_t, void *> destinations;
  std::vector<uint64_t> recordedEvents;
  std::unordered_map<void *, Live> live;
  std::unordered_set<void *> shared;
  PlannerStats runStats, lastStats;

  uint8_t *arena = nullptr;
  uint64_t arenaCapacity = 0;
};

/// The hooks' alloc and free (ModelABI.h): the calling thread's planner, or
/// the heap. Alignments that are not powers of two are rounded up; negative
/// sizes and alignments above 1 MiB give null.
void *hookAlloc(int64_t size, int64_t align);
void hookFree(void *ptr);

} // namespace tfc::rt

#endif // TFC_RUNTIME_MEMORYPLAN_H
