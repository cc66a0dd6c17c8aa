//===- MemoryPlan.cpp - Record-and-replay arena planning ------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Events of a run are numbered; an event is encoded as ordinal * 2 for an
// allocation and ordinal * 2 + 1 for a free, so a replay compares each event
// with the recording in one step. Only events of the run's own thread outside
// parallel chunks count: those are deterministic.
//
//===----------------------------------------------------------------------===//

#include "tfc/Runtime/MemoryPlan.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <sys/mman.h>

using namespace tfc::rt;

static constexpr uint64_t kQuantum = 64;
static constexpr uint64_t kMaxAlign = 1u << 20;
/// Above this many allocations a recording is not planned (planning is
/// quadratic); the signature's runs then use the heap.
static constexpr size_t kMaxPlannedAllocs = 20000;

/// Heap memory at `align` (a power of two of at least kQuantum), null for
/// an absurd size or when memory is exhausted.
static void *heapAligned(uint64_t size, uint64_t align) {
  void *p = nullptr;
  if (size > (UINT64_C(1) << 62) ||
      posix_memalign(&p, align, size ? size : 1) != 0)
    return nullptr;
  return p;
}

void *tfc::rt::alignedAlloc(uint64_t size, uint64_t align) {
  align = std::max<uint64_t>(align, kQuantum);
  return align > kMaxAlign ? nullptr : heapAligned(size, align);
}

void *tfc::rt::alignedAllocLarge(uint64_t size, uint64_t align) {
  if (size < kHugePageBytes || align > kHugePageBytes)
    return alignedAlloc(size, align);
  if (size > (UINT64_C(1) << 62))
    return nullptr;
  // Whole huge pages: a tail left on 4 KiB pages (advice must not reach
  // memory the heap may give to others) was read slower than the rest, and
  // whichever thread's share of a GEMM's panels lay there finished last.
  // Unless that wastes more than an eighth of the buffer (a 2.25 MiB one
  // would take 4 MiB once its last page is touched): then only its whole
  // huge pages are advised.
  uint64_t rounded = alignUp(size, kHugePageBytes);
  uint64_t advised =
      rounded - size <= size / 8 ? rounded : size & ~(kHugePageBytes - 1);
  void *p = heapAligned(std::max(size, advised), kHugePageBytes);
#ifdef MADV_HUGEPAGE
  // Advice only: a kernel without transparent huge pages refuses it, and the
  // buffer works the same on small pages.
  if (p)
    (void)madvise(p, advised, MADV_HUGEPAGE);
#endif
  return p;
}

void tfc::rt::alignedFree(void *ptr) { std::free(ptr); }

void *tfc::rt::allocZeroedLarge(uint64_t size, uint64_t align) {
  if (size == 0 || size > (UINT64_C(1) << 62) || align > kHugePageBytes)
    return nullptr;
  uint64_t rounded = alignUp(size, kHugePageBytes);
  // Over-allocated by a huge page, then trimmed to a boundary.
  uint64_t span = rounded + kHugePageBytes;
  void *raw = mmap(nullptr, span, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED)
    return nullptr;
  uintptr_t begin = reinterpret_cast<uintptr_t>(raw);
  uintptr_t aligned = alignUp(begin, kHugePageBytes);
  if (aligned > begin)
    munmap(raw, aligned - begin);
  uintptr_t end = begin + span, used = aligned + rounded;
  if (end > used)
    munmap(reinterpret_cast<void *>(used), end - used);
#ifdef MADV_HUGEPAGE
  (void)madvise(reinterpret_cast<void *>(aligned), rounded, MADV_HUGEPAGE);
#endif
  return reinterpret_cast<void *>(aligned);
}

void tfc::rt::freeZeroedLarge(void *ptr, uint64_t size) {
  if (ptr)
    munmap(ptr, alignUp(size, kHugePageBytes));
}

void *tfc::rt::allocZeroed(uint64_t size, uint64_t align) {
  if (size >= kHugePageBytes)
    return allocZeroedLarge(size, align);
  void *p = alignedAlloc(size, align);
  if (p)
    std::memset(p, 0, size);
  return p;
}

void tfc::rt::freeZeroed(void *ptr, uint64_t size) {
  if (size >= kHugePageBytes)
    freeZeroedLarge(ptr, size);
  else
    alignedFree(ptr);
}

//===----------------------------------------------------------------------===//
// Planning
//===----------------------------------------------------------------------===//

ArenaPlan tfc::rt::planArena(const std::vector<Lifetime> &lifetimes) {
  ArenaPlan out;
  size_t n = lifetimes.size();
  out.offsets.assign(n, ArenaPlan::kNotInArena);
  std::vector<uint64_t> sizes(n), aligns(n);
  std::vector<size_t> order;
  for (size_t i = 0; i < n; ++i) {
    const Lifetime &l = lifetimes[i];
    sizes[i] = alignUp(std::max<uint64_t>(l.size, 1), kQuantum);
    aligns[i] = std::max<uint64_t>(l.align, kQuantum);
    if (l.end == Lifetime::kForever)
      continue;
    order.push_back(i);
    out.plannedBytes += sizes[i];
    out.alignment = std::max(out.alignment, aligns[i]);
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (sizes[a] != sizes[b])
      return sizes[a] > sizes[b];
    if (lifetimes[a].begin != lifetimes[b].begin)
      return lifetimes[a].begin < lifetimes[b].begin;
    return a < b;
  });

  // Placed allocations, sorted by offset.
  std::vector<size_t> placed;
  placed.reserve(order.size());
  for (size_t i : order) {
    const Lifetime &li = lifetimes[i];
    uint64_t prevEnd = 0, best = ArenaPlan::kNotInArena, bestGap = UINT64_MAX;
    for (size_t j : placed) {
      const Lifetime &lj = lifetimes[j];
      if (!(lj.begin < li.end && li.begin < lj.end))
        continue; // not live at the same time
      uint64_t candidate = alignUp(prevEnd, aligns[i]);
      uint64_t offset = out.offsets[j];
      if (offset >= candidate && offset - candidate >= sizes[i] &&
          offset - prevEnd < bestGap) {
        best = candidate;
        bestGap = offset - prevEnd;
      }
      prevEnd = std::max(prevEnd, offset + sizes[j]);
    }
    if (best == ArenaPlan::kNotInArena)
      best = alignUp(prevEnd, aligns[i]);
    out.offsets[i] = best;
    out.arenaBytes = std::max(out.arenaBytes, best + sizes[i]);
    auto at = std::upper_bound(
        placed.begin(), placed.end(), best,
        [&](uint64_t off, size_t k) { return off < out.offsets[k]; });
    placed.insert(at, i);
  }

  // The most bytes live at once: sweep the alloc (+) and free (-) events.
  std::vector<std::pair<uint64_t, int64_t>> events;
  for (size_t i : order) {
    events.push_back({lifetimes[i].begin, static_cast<int64_t>(sizes[i])});
    events.push_back({lifetimes[i].end, -static_cast<int64_t>(sizes[i])});
  }
  std::sort(events.begin(), events.end());
  int64_t liveBytes = 0;
  for (auto &e : events) {
    liveBytes += e.second;
    out.peakLiveBytes =
        std::max(out.peakLiveBytes, static_cast<uint64_t>(liveBytes));
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Thread state and the arena registry
//===----------------------------------------------------------------------===//

namespace {

struct ThreadState {
  MemoryPlanner *planner = nullptr;
  bool parallel = false;
};
thread_local ThreadState threadState;

/// Every planner's arena, for frees from threads that have no planner.
struct ArenaRegistry {
  std::mutex mutex;
  std::vector<std::pair<uintptr_t, uintptr_t>> ranges;

  static ArenaRegistry &get() {
    static ArenaRegistry *registry = new ArenaRegistry(); // never destroyed
    return *registry;
  }
  void add(const void *p, uint64_t n) {
    std::lock_guard<std::mutex> lock(mutex);
    uintptr_t b = reinterpret_cast<uintptr_t>(p);
    ranges.push_back({b, b + n});
  }
  void remove(const void *p) {
    std::lock_guard<std::mutex> lock(mutex);
    uintptr_t b = reinterpret_cast<uintptr_t>(p);
    for (size_t i = 0; i < ranges.size(); ++i)
      if (ranges[i].first == b) {
        ranges.erase(ranges.begin() + i);
        return;
      }
  }
  bool contains(const void *p) {
    std::lock_guard<std::mutex> lock(mutex);
    uintptr_t a = reinterpret_cast<uintptr_t>(p);
    for (auto &r : ranges)
      if (a >= r.first && a < r.second)
        return true;
    return false;
  }
};

/// Frees memory no current planner knows: arena pointers are ignored.
void freeUnknown(void *ptr) {
  if (ptr && !ArenaRegistry::get().contains(ptr))
    alignedFree(ptr);
}

} // namespace

MemoryPlanner *MemoryPlanner::current() { return threadState.planner; }

MemoryPlanner::Scope::Scope(MemoryPlanner *planner)
    : savedPlanner(threadState.planner), savedParallel(threadState.parallel) {
  threadState.planner = planner;
  threadState.parallel = false;
}

MemoryPlanner::Scope::~Scope() {
  threadState.planner = savedPlanner;
  threadState.parallel = savedParallel;
}

MemoryPlanner::ParallelScope::ParallelScope(MemoryPlanner *planner)
    : savedPlanner(threadState.planner), savedParallel(threadState.parallel) {
  threadState.planner = planner;
  threadState.parallel = true;
}

MemoryPlanner::ParallelScope::~ParallelScope() {
  threadState.planner = savedPlanner;
  threadState.parallel = savedParallel;
}

/// A power of two of at least kQuantum; beyond kMaxAlign it stays above it
/// and the allocation fails.
static uint64_t normalizeAlign(int64_t align) {
  if (align <= 0)
    return kQuantum;
  uint64_t a = 1;
  while (a < static_cast<uint64_t>(align) && a <= kMaxAlign)
    a <<= 1;
  return std::max(a, kQuantum);
}

void *tfc::rt::hookAlloc(int64_t size, int64_t align) {
  ThreadState &ts = threadState;
  if (ts.planner)
    return ts.parallel ? ts.planner->allocateShared(size, align)
                       : ts.planner->allocate(size, align);
  if (size < 0)
    return nullptr;
  return alignedAlloc(static_cast<uint64_t>(size), normalizeAlign(align));
}

void tfc::rt::hookFree(void *ptr) {
  if (!ptr)
    return;
  ThreadState &ts = threadState;
  if (!ts.planner)
    freeUnknown(ptr);
  else if (ts.parallel)
    ts.planner->deallocateShared(ptr);
  else
    ts.planner->deallocate(ptr);
}

//===----------------------------------------------------------------------===//
// MemoryPlanner
//===----------------------------------------------------------------------===//

struct MemoryPlanner::Plan {
  std::string signature;
  std::vector<Lifetime> lifetimes;
  std::vector<uint64_t> events;
  ArenaPlan arena;
  /// Per output index: the ordinal of the allocation returned as it, or -1.
  std::vector<int64_t> outputs;
  /// Per output index: its bytes.
  std::vector<uint64_t> outputBytes;
  uint64_t lastUse = 0;
  /// False once a replay left the plan: record again.
  bool valid = true;
};

MemorySource tfc::rt::hostMemory() {
  // Large buffers (an output such as GPT-2's 25 MB of logits, the arena) on
  // huge pages: alignedAllocLarge.
  return {[](uint64_t size, uint64_t align, void *) {
            return alignedAllocLarge(size, align);
          },
          [](void *ptr, void *) { alignedFree(ptr); }, nullptr};
}

MemoryPlanner::MemoryPlanner(size_t maxPlans, MemorySource source)
    : maxPlans(std::max<size_t>(maxPlans, 1)), source(source),
      hostSource(source.alloc == hostMemory().alloc) {}

void MemoryPlanner::releaseUnknown(void *ptr) {
  // Memory from outside any run (model initialisation): host memory may
  // also belong to another planner's arena; device memory is always the
  // source's own (never handed to the host allocator).
  if (hostSource)
    freeUnknown(ptr);
  else if (ptr && !ArenaRegistry::get().contains(ptr))
    sourceFree(ptr);
}

MemoryPlanner::~MemoryPlanner() {
  if (running)
    endRun();
  for (Plan *p : plans)
    delete p;
  releaseArena();
  for (Scratch &s : scratch)
    releaseScratch(s);
  for (Scratch &s : sourceScratch)
    if (s.ptr)
      source.free(s.ptr, source.ctx);
}

void MemoryPlanner::releaseScratch(Scratch &s) {
  if (!s.ptr)
    return;
  ArenaRegistry::get().remove(s.ptr);
  alignedFree(s.ptr);
  s = Scratch();
}

void *MemoryPlanner::outputScratch(size_t i, uint64_t bytes, uint64_t align) {
  if (scratch.size() <= i)
    scratch.resize(i + 1);
  Scratch &s = scratch[i];
  if (s.ptr && s.bytes >= bytes && s.align >= align)
    return s.ptr;
  // Grown to serve every request so far: signatures that alternate never
  // reallocate it.
  bytes = std::max(bytes, s.bytes);
  align = std::max(align, s.align);
  void *p = alignedAllocLarge(bytes, align);
  if (!p)
    return nullptr;
  releaseScratch(s);
  // Registered like an arena: a free of it from a thread without this
  // planner is ignored, never passed to the heap.
  ArenaRegistry::get().add(p, bytes);
  s = {p, bytes, align};
  return p;
}

void MemoryPlanner::releaseArena() {
  if (!arena)
    return;
  ArenaRegistry::get().remove(arena);
  sourceFree(arena);
  arena = nullptr;
  arenaCapacity = 0;
}

bool MemoryPlanner::ensureArena(uint64_t bytes, uint64_t alignment) {
  if (arena && arenaCapacity >= bytes &&
      reinterpret_cast<uintptr_t>(arena) % alignment == 0)
    return true;
  releaseArena();
  arena = static_cast<uint8_t *>(
      sourceAlloc(bytes, std::max<uint64_t>(alignment, 4096)));
  if (!arena)
    return false;
  arenaCapacity = bytes;
  ArenaRegistry::get().add(arena, bytes);
  return true;
}

bool MemoryPlanner::inArena(const void *ptr) const {
  auto p = reinterpret_cast<uintptr_t>(ptr);
  auto a = reinterpret_cast<uintptr_t>(arena);
  return arena && p >= a && p < a + arenaCapacity;
}

void MemoryPlanner::beginRun(const std::string &runSignature) {
  std::lock_guard<std::mutex> lock(mutex);
  running = true;
  signature = runSignature;
  event = 0;
  nextOrdinal = 0;
  recording.clear();
  recordedEvents.clear();
  recordingBroken = false;
  failedAllocs = 0;
  live.clear();
  shared.clear();
  recordedOutputs.clear();
  recordedOutputBytes.clear();
  destinations.clear();
  runStats = PlannerStats();
  plan = nullptr;
  for (Plan *p : plans)
    if (p->signature == signature && p->valid)
      plan = p;
  if (plan && !ensureArena(plan->arena.arenaBytes, plan->arena.alignment))
    plan = nullptr; // no memory for the arena: record (on the heap) instead
  if (plan) {
    plan->lastUse = ++useClock;
    mode = TFC_PLAN_REPLAYED;
    runStats.arenaBytes = plan->arena.arenaBytes;
    runStats.plannedBytes = plan->arena.plannedBytes;
    runStats.peakLiveBytes = plan->arena.peakLiveBytes;
  } else {
    mode = TFC_PLAN_RECORDED;
  }
}

void MemoryPlanner::fallBack() {
  mode = TFC_PLAN_FELL_BACK;
  if (plan)
    plan->valid = false;
}

void *MemoryPlanner::heap(uint64_t size, uint64_t align) {
  void *p = sourceAlloc(size, align);
  if (p)
    ++runStats.heapAllocs;
  return p;
}

void MemoryPlanner::noteFailure(int64_t size) {
  if (failedAllocs++ == 0)
    firstFailedSize = size;
}

bool MemoryPlanner::takeAllocationFailure(int64_t &size) {
  std::lock_guard<std::mutex> lock(mutex);
  if (failedAllocs == 0)
    return false;
  size = firstFailedSize;
  failedAllocs = 0;
  return true;
}

void *MemoryPlanner::allocate(int64_t size, int64_t alignArg) {
  if (size < 0) {
    std::lock_guard<std::mutex> lock(mutex);
    noteFailure(size);
    recordingBroken = true;
    return nullptr;
  }
  uint64_t bytes = static_cast<uint64_t>(size);
  uint64_t align = normalizeAlign(alignArg);
  std::lock_guard<std::mutex> lock(mutex);
  if (!running) {
    void *p = sourceAlloc(bytes, align);
    if (!p && bytes)
      noteFailure(size);
    return p;
  }
  uint32_t ordinal = nextOrdinal++;
  uint64_t code = uint64_t(ordinal) * 2;
  void *p = nullptr;
  bool inHeap = true;
  ++runStats.allocs;
  runStats.allocBytes += bytes;
  if (mode == TFC_PLAN_RECORDED) {
    p = heap(bytes, align);
    if (!p)
      recordingBroken = true;
    recording.push_back({bytes, align, event, Lifetime::kForever});
    recordedEvents.push_back(code);
  } else if (mode == TFC_PLAN_REPLAYED) {
    bool same = event < plan->events.size() && plan->events[event] == code &&
                plan->lifetimes[ordinal].size == bytes &&
                plan->lifetimes[ordinal].align == align;
    if (!same) {
      fallBack();
      p = heap(bytes, align);
    } else if (plan->arena.offsets[ordinal] == ArenaPlan::kNotInArena) {
      // An output: it outlives the arena; the caller's buffer if given.
      auto dest = destinations.find(ordinal);
      if (dest != destinations.end()) {
        p = dest->second;
        inHeap = false;
      } else {
        p = heap(bytes, align);
      }
    } else {
      p = arena + plan->arena.offsets[ordinal];
      inHeap = false;
      ++runStats.arenaAllocs;
    }
  } else {
    p = heap(bytes, align);
  }
  ++event;
  if (p)
    live[p] = {ordinal, inHeap};
  else if (bytes) {
    noteFailure(size);
    recordingBroken = true;
  }
  return p;
}

void MemoryPlanner::deallocate(void *ptr) {
  if (!ptr)
    return;
  std::unique_lock<std::mutex> lock(mutex);
  auto it = live.find(ptr);
  if (it != live.end()) {
    Live info = it->second;
    live.erase(it);
    uint64_t code = uint64_t(info.ordinal) * 2 + 1;
    if (mode == TFC_PLAN_RECORDED) {
      recording[info.ordinal].end = event;
      recordedEvents.push_back(code);
    } else if (mode == TFC_PLAN_REPLAYED) {
      if (event >= plan->events.size() || plan->events[event] != code)
        fallBack();
    }
    ++event;
    if (info.heap)
      sourceFree(ptr);
    return;
  }
  if (shared.erase(ptr)) {
    sourceFree(ptr);
    return;
  }
  if (inArena(ptr))
    return;
  lock.unlock();
  releaseUnknown(ptr);
}

void *MemoryPlanner::allocateShared(int64_t size, int64_t alignArg) {
  void *p = size < 0 ? nullptr
                     : sourceAlloc(static_cast<uint64_t>(size),
                                   normalizeAlign(alignArg));
  std::lock_guard<std::mutex> lock(mutex);
  if (!p && size != 0) {
    noteFailure(size);
    recordingBroken = true;
  }
  if (!running || !p)
    return p;
  shared.insert(p);
  ++runStats.allocs;
  ++runStats.heapAllocs;
  runStats.allocBytes += static_cast<uint64_t>(size);
  return p;
}

void MemoryPlanner::deallocateShared(void *ptr) {
  if (!ptr)
    return;
  std::unique_lock<std::mutex> lock(mutex);
  if (shared.erase(ptr)) {
    sourceFree(ptr);
    return;
  }
  // An allocation of the run's thread freed inside a parallel chunk: not an
  // event (its order is not deterministic), so the recording keeps it live
  // to the end and replays give it heap memory.
  auto it = live.find(ptr);
  if (it != live.end()) {
    bool inHeap = it->second.heap;
    live.erase(it);
    if (inHeap)
      sourceFree(ptr);
    return;
  }
  if (inArena(ptr))
    return;
  lock.unlock();
  releaseUnknown(ptr);
}

void MemoryPlanner::noteOutput(size_t index, void *ptr, uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!running || mode != TFC_PLAN_RECORDED)
    return;
  auto it = live.find(ptr);
  if (it == live.end() || !it->second.heap ||
      recording[it->second.ordinal].end != Lifetime::kForever)
    return;
  // The allocation is the output and nothing more: its size, or its size
  // plus the alignment that memref.alloc's lowering asks for on top to
  // align the pointer itself (the hooks return aligned memory, so that
  // slack is the unused tail). A larger buffer (a padded kernel's) is not
  // served with the caller's buffer.
  const Lifetime &l = recording[it->second.ordinal];
  if (l.size != bytes && l.size != bytes + l.align)
    return;
  if (recordedOutputs.size() <= index) {
    recordedOutputs.resize(index + 1, -1);
    recordedOutputBytes.resize(index + 1, 0);
  }
  recordedOutputs[index] = it->second.ordinal;
  recordedOutputBytes[index] = bytes;
}

void MemoryPlanner::setDestinations(
    const std::vector<std::pair<void *, uint64_t>> &dests) {
  std::lock_guard<std::mutex> lock(mutex);
  destinations.clear();
  if (!running || mode != TFC_PLAN_REPLAYED || !hostSource)
    return;
  for (size_t i = 0; i < dests.size() && i < plan->outputs.size(); ++i) {
    int64_t ordinal = plan->outputs[i];
    void *ptr = dests[i].first;
    if (ordinal < 0 || !ptr)
      continue;
    const Lifetime &l = plan->lifetimes[static_cast<size_t>(ordinal)];
    uint64_t needed = plan->outputBytes[i];
    if (dests[i].second < needed || l.size > needed + l.align)
      continue;
    if (reinterpret_cast<uintptr_t>(ptr) % l.align != 0)
      ptr = outputScratch(i, l.size, l.align);
    if (ptr)
      destinations[static_cast<uint32_t>(ordinal)] = ptr;
  }
}

void MemoryPlanner::keepOutputs() {
  std::lock_guard<std::mutex> lock(mutex);
  if (!running || mode != TFC_PLAN_REPLAYED || hostSource)
    return;
  for (size_t i = 0; i < plan->outputs.size(); ++i) {
    int64_t ordinal = plan->outputs[i];
    if (ordinal < 0)
      continue;
    const Lifetime &l = plan->lifetimes[static_cast<size_t>(ordinal)];
    if (sourceScratch.size() <= i)
      sourceScratch.resize(i + 1);
    Scratch &s = sourceScratch[i];
    if (!s.ptr || s.bytes < l.size || s.align < l.align) {
      // Grown to serve every request so far.
      uint64_t bytes = std::max(l.size, s.bytes);
      uint64_t align = std::max(l.align, s.align);
      void *p = source.alloc(bytes, align, source.ctx);
      if (!p)
        continue; // served from the heap as before
      if (s.ptr)
        source.free(s.ptr, source.ctx);
      s = {p, bytes, align};
    }
    destinations[static_cast<uint32_t>(ordinal)] = s.ptr;
  }
}

bool MemoryPlanner::adopt(void *ptr) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = live.find(ptr);
  if (it != live.end() && it->second.heap) {
    live.erase(it);
    ++runStats.outputAllocs;
    return true;
  }
  if (shared.erase(ptr)) {
    ++runStats.outputAllocs;
    return true;
  }
  return false;
}

void MemoryPlanner::endRun() {
  std::lock_guard<std::mutex> lock(mutex);
  if (!running)
    return;
  running = false;
  for (auto &[ptr, info] : live) {
    if (info.heap) {
      sourceFree(ptr);
      ++runStats.leakedAllocs;
    }
  }
  for (void *ptr : shared) {
    sourceFree(ptr);
    ++runStats.leakedAllocs;
  }
  live.clear();
  shared.clear();

  if (mode == TFC_PLAN_RECORDED && !recordingBroken) {
    Plan *p = nullptr;
    for (Plan *q : plans)
      if (q->signature == signature)
        p = q;
    if (!p) {
      if (plans.size() >= maxPlans) {
        auto lru =
            std::min_element(plans.begin(), plans.end(), [](Plan *a, Plan *b) {
              return a->lastUse < b->lastUse;
            });
        delete *lru;
        plans.erase(lru);
      }
      p = new Plan();
      p->signature = signature;
      plans.push_back(p);
    }
    p->lifetimes = std::move(recording);
    p->events = std::move(recordedEvents);
    p->outputs = std::move(recordedOutputs);
    p->outputBytes = std::move(recordedOutputBytes);
    if (p->lifetimes.size() <= kMaxPlannedAllocs) {
      p->arena = planArena(p->lifetimes);
    } else {
      p->arena = ArenaPlan();
      p->arena.offsets.assign(p->lifetimes.size(), ArenaPlan::kNotInArena);
    }
    p->valid = true;
    p->lastUse = ++useClock;
    runStats.arenaBytes = p->arena.arenaBytes;
    runStats.plannedBytes = p->arena.plannedBytes;
    runStats.peakLiveBytes = p->arena.peakLiveBytes;
  } else if (mode == TFC_PLAN_REPLAYED && event != plan->events.size()) {
    // Fewer events than recorded: the run took another path.
    plan->valid = false;
  }
  recording.clear();
  recordedEvents.clear();
  recordedOutputs.clear();
  recordedOutputBytes.clear();
  destinations.clear();
  plan = nullptr;
  runStats.mode = mode;
  runStats.numPlans = plans.size();
  runStats.arenaCapacity = arenaCapacity;
  lastStats = runStats;
}
