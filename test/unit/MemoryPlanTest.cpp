//===- MemoryPlanTest.cpp - Record-and-replay arena planning --------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// planArena on random lifetimes (no two live allocations share bytes), and
// the planner driven through the hooks like a model would: record, replay
// (every buffer is filled and checked, so an overlap would be seen), outputs
// outside the arena, fallback on any difference, re-planning, plan eviction.
//
//===----------------------------------------------------------------------===//

#include "tfc/Runtime/MemoryPlan.h"

#include "gtest/gtest.h"

#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

using namespace tfc::rt;

namespace {

/// Checks the plan's invariants for `lifetimes`.
void checkPlan(const std::vector<Lifetime> &lifetimes, const ArenaPlan &plan) {
  ASSERT_EQ(plan.offsets.size(), lifetimes.size());
  uint64_t end = 0;
  for (size_t i = 0; i < lifetimes.size(); ++i) {
    const Lifetime &a = lifetimes[i];
    if (a.end == Lifetime::kForever) {
      EXPECT_EQ(plan.offsets[i], ArenaPlan::kNotInArena) << i;
      continue;
    }
    ASSERT_NE(plan.offsets[i], ArenaPlan::kNotInArena) << i;
    EXPECT_EQ(plan.offsets[i] % std::max<uint64_t>(a.align, 64), 0u) << i;
    EXPECT_EQ(plan.alignment % std::max<uint64_t>(a.align, 64), 0u);
    end = std::max(end, plan.offsets[i] + std::max<uint64_t>(a.size, 1));
    for (size_t j = 0; j < i; ++j) {
      const Lifetime &b = lifetimes[j];
      if (b.end == Lifetime::kForever)
        continue;
      bool liveTogether = a.begin < b.end && b.begin < a.end;
      bool shareBytes =
          plan.offsets[i] < plan.offsets[j] + std::max<uint64_t>(b.size, 1) &&
          plan.offsets[j] < plan.offsets[i] + std::max<uint64_t>(a.size, 1);
      ASSERT_FALSE(liveTogether && shareBytes)
          << "allocations " << j << " and " << i << " overlap";
    }
  }
  EXPECT_LE(end, plan.arenaBytes);
  EXPECT_GE(plan.arenaBytes, plan.peakLiveBytes);
  EXPECT_LE(plan.peakLiveBytes, plan.plannedBytes);
}

/// Random stack-like and interleaved lifetimes, some never freed.
std::vector<Lifetime> randomLifetimes(std::mt19937_64 &rng, int count) {
  std::vector<Lifetime> out;
  std::vector<size_t> live;
  uint64_t time = 0;
  std::uniform_int_distribution<int> coin(0, 2);
  std::uniform_int_distribution<uint64_t> size(1, 5000);
  std::uniform_int_distribution<int> alignLog(0, 9);
  while (static_cast<int>(out.size()) < count || !live.empty()) {
    bool allocate = static_cast<int>(out.size()) < count &&
                    (live.empty() || coin(rng) != 0);
    if (allocate) {
      Lifetime l;
      l.size = size(rng) * (coin(rng) == 0 ? 1000 : 1);
      l.align = uint64_t(1) << alignLog(rng);
      l.begin = time++;
      live.push_back(out.size());
      out.push_back(l);
    } else {
      std::uniform_int_distribution<size_t> pick(0, live.size() - 1);
      size_t k = pick(rng);
      size_t i = live[k];
      live.erase(live.begin() + k);
      if (coin(rng) == 0 && i % 7 == 0)
        continue; // never freed: an output
      out[i].end = time++;
    }
  }
  return out;
}

TEST(PlanArena, NoLiveAllocationsOverlap) {
  std::mt19937_64 rng(42);
  for (int round = 0; round < 200; ++round) {
    std::vector<Lifetime> lifetimes = randomLifetimes(rng, 1 + round % 60);
    ArenaPlan plan = planArena(lifetimes);
    checkPlan(lifetimes, plan);
    if (HasFatalFailure())
      return;
  }
}

TEST(PlanArena, ReusesMemoryOfDeadAllocations) {
  // A chain: each buffer dies right after the next one is allocated, as in
  // x1 = f(x0); free(x0); x2 = g(x1); free(x1); ...
  std::vector<Lifetime> chain;
  uint64_t t = 0;
  for (int i = 0; i < 10; ++i) {
    chain.push_back({1000, 64, t, Lifetime::kForever});
    ++t;
    if (i > 0)
      chain[i - 1].end = t++;
  }
  chain.back().end = t++;
  ArenaPlan plan = planArena(chain);
  checkPlan(chain, plan);
  EXPECT_EQ(plan.plannedBytes, 10 * 1024u);
  EXPECT_EQ(plan.peakLiveBytes, 2 * 1024u);
  EXPECT_EQ(plan.arenaBytes, 2 * 1024u);
}

TEST(PlanArena, ADeadAllocationsSlotIsReused) {
  // A (1 KiB) and B (4 KiB) live together; A dies; C (1 KiB) comes while B
  // lives and fits where A was; D (2 KiB) lives with everything.
  std::vector<Lifetime> l = {
      {1024, 64, 0, 3}, {4096, 64, 1, 6}, {1024, 64, 4, 7}, {2048, 64, 2, 8}};
  ArenaPlan plan = planArena(l);
  checkPlan(l, plan);
  EXPECT_EQ(plan.arenaBytes, 7168u);
  EXPECT_EQ(plan.offsets[2], plan.offsets[0]);
}

TEST(PlanArena, OutputsAreNotPlaced) {
  std::vector<Lifetime> l = {{100, 64, 0, Lifetime::kForever}, {100, 64, 1, 2}};
  ArenaPlan plan = planArena(l);
  EXPECT_EQ(plan.offsets[0], ArenaPlan::kNotInArena);
  EXPECT_EQ(plan.offsets[1], 0u);
  EXPECT_EQ(plan.arenaBytes, 128u);
  EXPECT_TRUE(planArena({}).offsets.empty());
}

//===----------------------------------------------------------------------===//
// The planner through the hooks
//===----------------------------------------------------------------------===//

struct Op {
  bool alloc;
  int id;
  int64_t size = 0, align = 64;
};

Op A(int id, int64_t size, int64_t align = 64) {
  return {true, id, size, align};
}
Op F(int id) { return {false, id}; }

/// Runs `ops` like a model would: each buffer is filled with its id and
/// checked when freed. Returns the pointers by id; those never freed are the
/// outputs, adopted (and returned in `outputs`).
std::map<int, void *> play(MemoryPlanner &planner, const std::string &sig,
                           const std::vector<Op> &ops,
                           std::vector<void *> *outputs = nullptr) {
  std::map<int, void *> ptrs, live;
  std::map<int, int64_t> sizes;
  planner.beginRun(sig);
  {
    MemoryPlanner::Scope scope(&planner);
    for (const Op &op : ops) {
      if (op.alloc) {
        void *p = hookAlloc(op.size, op.align);
        EXPECT_NE(p, nullptr);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(p) %
                      static_cast<uintptr_t>(std::max<int64_t>(op.align, 1)),
                  0u);
        std::memset(p, op.id & 0xFF, op.size);
        // Every live buffer is intact.
        for (auto &[id, q] : live)
          for (int64_t k = 0; k < sizes[id]; k += 61)
            EXPECT_EQ(static_cast<uint8_t *>(q)[k], id & 0xFF)
                << "buffer " << id << " was overwritten by " << op.id;
        ptrs[op.id] = live[op.id] = p;
        sizes[op.id] = op.size;
      } else {
        void *p = live[op.id];
        for (int64_t k = 0; k < sizes[op.id]; ++k)
          if (static_cast<uint8_t *>(p)[k] != (op.id & 0xFF)) {
            ADD_FAILURE() << "buffer " << op.id << " was overwritten";
            break;
          }
        live.erase(op.id);
        hookFree(p);
      }
    }
  }
  for (auto &[id, p] : live) {
    EXPECT_TRUE(planner.adopt(p)) << "output " << id;
    if (outputs)
      outputs->push_back(p);
    else
      alignedFree(p);
  }
  planner.endRun();
  return ptrs;
}

const std::vector<Op> kProgram = {
    A(1, 4000), A(2, 1000, 256), F(1), A(3, 3000), A(4, 10),
    F(2),       A(5, 8000),      F(3), A(6, 100),  F(4),
    F(5),       A(7, 5000),      F(6), F(7),       A(8, 2048), // the output
};

TEST(MemoryPlanner, RecordsThenReplaysFromTheArena) {
  MemoryPlanner planner;
  auto first = play(planner, "s", kProgram);
  EXPECT_EQ(planner.stats().mode, TFC_PLAN_RECORDED);
  EXPECT_EQ(planner.stats().allocs, 8u);
  EXPECT_EQ(planner.stats().arenaAllocs, 0u);
  EXPECT_EQ(planner.stats().outputAllocs, 1u);
  uint64_t arenaBytes = planner.stats().arenaBytes;
  EXPECT_GT(arenaBytes, 0u);
  EXPECT_LT(arenaBytes, planner.stats().plannedBytes);

  auto second = play(planner, "s", kProgram);
  const PlannerStats &s = planner.stats();
  EXPECT_EQ(s.mode, TFC_PLAN_REPLAYED);
  EXPECT_EQ(s.arenaAllocs, 7u);
  EXPECT_EQ(s.heapAllocs, 1u);
  EXPECT_EQ(s.outputAllocs, 1u);
  EXPECT_EQ(s.arenaBytes, arenaBytes);
  EXPECT_GE(s.arenaCapacity, arenaBytes);
  // The same offsets every time.
  auto third = play(planner, "s", kProgram);
  for (int id = 1; id <= 7; ++id)
    EXPECT_EQ(second[id], third[id]) << id;
  // Arena pointers are inside [base, base + arenaBytes).
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  for (int id = 1; id <= 7; ++id) {
    lo = std::min(lo, reinterpret_cast<uintptr_t>(second[id]));
    hi = std::max(hi, reinterpret_cast<uintptr_t>(second[id]));
  }
  EXPECT_LT(hi - lo, arenaBytes);
  // The output is not in the arena.
  auto out = reinterpret_cast<uintptr_t>(third[8]);
  EXPECT_TRUE(out < lo || out >= lo + s.arenaCapacity);
}

TEST(MemoryPlanner, OutputsOutliveLaterRuns) {
  MemoryPlanner planner;
  std::vector<void *> outputs;
  for (int run = 0; run < 3; ++run) {
    play(planner, "s", kProgram, &outputs);
    std::memset(outputs.back(), run, 2048);
  }
  for (int run = 0; run < 3; ++run) {
    EXPECT_EQ(static_cast<uint8_t *>(outputs[run])[2047], run);
    alignedFree(outputs[run]);
  }
}

TEST(MemoryPlanner, ADifferentSizeFallsBackToTheHeap) {
  MemoryPlanner planner;
  play(planner, "s", kProgram);
  std::vector<Op> changed = kProgram;
  changed[3].size = 3001; // ordinal 2
  play(planner, "s", changed);
  EXPECT_EQ(planner.stats().mode, TFC_PLAN_FELL_BACK);
  EXPECT_EQ(planner.stats().arenaAllocs, 2u); // before the difference
  EXPECT_EQ(planner.stats().heapAllocs, 6u);
  // The plan is recorded again, then replayed.
  play(planner, "s", changed);
  EXPECT_EQ(planner.stats().mode, TFC_PLAN_RECORDED);
  play(planner, "s", changed);
  EXPECT_EQ(planner.stats().mode, TFC_PLAN_REPLAYED);
}

TEST(MemoryPlanner, MoreAllocationsOrAnotherOrderFallBack) {
  MemoryPlanner planner;
  play(planner, "s", kProgram);
  std::vector<Op> more = kProgram;
  more.insert(more.end() - 1, {A(9, 500), F(9)});
  more.push_back(A(10, 64));
  play(planner, "s", more);
  EXPECT_EQ(planner.stats().mode, TFC_PLAN_FELL_BACK);

  MemoryPlanner other;
  play(other, "s", kProgram);
  std::vector<Op> reordered = kProgram;
  std::swap(reordered[9], reordered[10]); // free 5 before 4
  play(other, "s", reordered);
  EXPECT_EQ(other.stats().mode, TFC_PLAN_FELL_BACK);
  EXPECT_EQ(other.stats().leakedAllocs, 0u);
}

TEST(MemoryPlanner, FewerAllocationsReplanNextTime) {
  MemoryPlanner planner;
  play(planner, "s", kProgram);
  // The same events, but the run ends before the last allocation.
  std::vector<Op> fewer(kProgram.begin(), kProgram.end() - 1);
  play(planner, "s", fewer);
  EXPECT_EQ(planner.stats().mode, TFC_PLAN_REPLAYED);
  play(planner, "s", fewer);
  EXPECT_EQ(planner.stats().mode, TFC_PLAN_RECORDED);
}

TEST(MemoryPlanner, SignaturesHaveTheirOwnPlansAndTheOldestIsEvicted) {
  MemoryPlanner planner(2);
  std::vector<Op> small = {A(1, 100), A(2, 100), F(1), F(2)};
  play(planner, "a", kProgram);
  play(planner, "b", small);
  play(planner, "a", kProgram);
  EXPECT_EQ(planner.stats().mode, TFC_PLAN_REPLAYED);
  EXPECT_EQ(planner.stats().numPlans, 2u);
  play(planner, "c", small); // evicts "b", the least recently used
  play(planner, "a", kProgram);
  EXPECT_EQ(planner.stats().mode, TFC_PLAN_REPLAYED);
  play(planner, "b", small);
  EXPECT_EQ(planner.stats().mode, TFC_PLAN_RECORDED);
}

TEST(MemoryPlanner, ParallelAllocationsAreTrackedAndLeaksFreed) {
  MemoryPlanner planner;
  planner.beginRun("p");
  void *kept, *leaked, *mainFreedInChunk;
  {
    MemoryPlanner::Scope scope(&planner);
    mainFreedInChunk = hookAlloc(256, 64);
    {
      MemoryPlanner::ParallelScope chunk(&planner);
      kept = hookAlloc(128, 64);
      leaked = hookAlloc(128, 64);
      void *temp = hookAlloc(64, 64);
      hookFree(temp);
      hookFree(mainFreedInChunk);
    }
  }
  EXPECT_TRUE(planner.adopt(kept));
  EXPECT_FALSE(planner.adopt(kept));
  planner.endRun();
  EXPECT_EQ(planner.stats().allocs, 4u);
  EXPECT_EQ(planner.stats().outputAllocs, 1u);
  EXPECT_EQ(planner.stats().leakedAllocs, 1u);
  (void)leaked;
  alignedFree(kept);
}

// A null allocation is noted (the model returns early, and tfc_run reports
// TFC_ERR_OUT_OF_MEMORY): in and out of runs, on the planned and the shared
// path; the run keeps no plan; zero-size requests never count.
TEST(MemoryPlanner, FailedAllocationsAreNoted) {
  const int64_t huge = (int64_t(1) << 62) + 1; // beyond what alignedAlloc tries
  MemoryPlanner planner;
  int64_t size = 0;
  EXPECT_FALSE(planner.takeAllocationFailure(size));
  EXPECT_EQ(planner.allocate(huge, 64), nullptr); // outside a run (init)
  EXPECT_TRUE(planner.takeAllocationFailure(size));
  EXPECT_EQ(size, huge);
  EXPECT_FALSE(planner.takeAllocationFailure(size));

  planner.beginRun("s");
  {
    MemoryPlanner::Scope scope(&planner);
    void *a = hookAlloc(64, 64);
    ASSERT_NE(a, nullptr);
    {
      MemoryPlanner::ParallelScope chunk(&planner);
      EXPECT_EQ(hookAlloc(huge + 2, 64), nullptr);
    }
    EXPECT_EQ(hookAlloc(huge, 64), nullptr);
    EXPECT_EQ(hookAlloc(-8, 64), nullptr);
  }
  EXPECT_TRUE(planner.takeAllocationFailure(size));
  EXPECT_EQ(size, huge + 2); // the first failure
  planner.endRun();          // `a` is freed with the run
  EXPECT_EQ(planner.stats().leakedAllocs, 1u);
  EXPECT_EQ(planner.stats().mode, TFC_PLAN_RECORDED);

  // No plan was kept: the next run of the signature records again.
  std::vector<Op> prog = {A(1, 64), F(1)};
  play(planner, "s", prog);
  EXPECT_EQ(planner.stats().mode, TFC_PLAN_RECORDED);
  play(planner, "s", prog);
  EXPECT_EQ(planner.stats().mode, TFC_PLAN_REPLAYED);
  EXPECT_FALSE(planner.takeAllocationFailure(size));

  // A failure not taken is forgotten by the next run.
  EXPECT_EQ(planner.allocate(huge, 64), nullptr);
  planner.beginRun("t");
  EXPECT_FALSE(planner.takeAllocationFailure(size));
  planner.endRun();
}

TEST(MemoryPlanner, HooksWithoutAPlannerUseTheHeap) {
  EXPECT_EQ(MemoryPlanner::current(), nullptr);
  void *p = hookAlloc(10, 256);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 256, 0u);
  hookFree(p);
  void *q = hookAlloc(0, 48); // 48 is rounded up to a power of two
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(q) % 64, 0u);
  hookFree(q);
  hookFree(nullptr);
  EXPECT_EQ(hookAlloc(-1, 64), nullptr);
  EXPECT_EQ(hookAlloc(16, int64_t(1) << 40), nullptr);
  EXPECT_EQ(alignedAlloc(UINT64_MAX / 2, 64), nullptr);

  // An arena pointer freed by a thread without the planner is ignored.
  MemoryPlanner planner;
  std::vector<Op> prog = {A(1, 100), A(2, 100), F(1), F(2)};
  play(planner, "s", prog);
  planner.beginRun("s");
  void *a;
  {
    MemoryPlanner::Scope scope(&planner);
    a = hookAlloc(100, 64);
  }
  hookFree(a); // no planner on this thread now: recognised as arena memory
  {
    MemoryPlanner::Scope scope(&planner);
    void *b = hookAlloc(100, 64);
    hookFree(a);
    hookFree(b);
  }
  planner.endRun();
  EXPECT_EQ(planner.stats().arenaAllocs, 2u);
}

} // namespace

TEST(MemoryPlanner, LargeLongLivedBuffersStartOnAHugePage) {
  // Below a huge page: alignedAlloc's alignment.
  void *small = alignedAllocLarge(kHugePageBytes - 1, 128);
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small) % 128, 0u);
  alignedFree(small);
  // From one huge page on: a huge-page boundary, whatever was asked, and
  // every byte usable.
  for (uint64_t size : {kHugePageBytes, 3 * kHugePageBytes + 4096 + 12}) {
    auto *p = static_cast<unsigned char *>(alignedAllocLarge(size, 64));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % kHugePageBytes, 0u);
    std::memset(p, 0x5a, size);
    EXPECT_EQ(p[size - 1], 0x5a);
    alignedFree(p);
  }
  EXPECT_EQ(alignedAllocLarge(UINT64_MAX / 2, 64), nullptr);
  // An alignment beyond a huge page is alignedAlloc's (which refuses it).
  EXPECT_EQ(alignedAllocLarge(kHugePageBytes, UINT64_C(1) << 40), nullptr);
}

namespace {

/// The VmFlags of the mapping of /proc/self/smaps that holds `p`; empty if
/// none does or smaps cannot be read.
std::string vmFlagsOf(const void *p) {
  std::ifstream smaps("/proc/self/smaps");
  auto at = reinterpret_cast<uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    unsigned long long begin, end;
    char dash;
    std::istringstream head(line);
    if (line.find(':') == std::string::npos ||
        line.find('-') < line.find(' ')) {
      if (head >> std::hex >> begin >> dash >> end && dash == '-')
        inside = begin <= at && at < end;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0)
      return line.substr(8) + " ";
  }
  return "";
}

} // namespace

TEST(MemoryPlanner, LargeBuffersAreAdvisedToTheirLastByte) {
  // The last partial huge page too: left on 4 KiB pages, the packed GEMM
  // columns there were read ~10 % slower (docs/runtime.md, "Binding").
  // Above glibc's largest mmap threshold (32 MiB), so that the buffer is a
  // mapping of its own, whose flags no earlier buffer set.
  uint64_t size = 17 * kHugePageBytes + 4096 + 12;
  auto *p = static_cast<unsigned char *>(alignedAllocLarge(size, 64));
  ASSERT_NE(p, nullptr);
  std::string first = vmFlagsOf(p), last = vmFlagsOf(p + size - 1);
  if (first.find(" hg ") == std::string::npos) {
    alignedFree(p);
    GTEST_SKIP() << "no MADV_HUGEPAGE here (kernel or /proc): '" << first
                 << "'";
  }
  EXPECT_NE(last.find(" hg "), std::string::npos) << last;
  alignedFree(p);
  // (Where rounding up would waste more than an eighth, the tail stays on
  // 4 KiB pages; a buffer that small may come from heap memory an earlier
  // buffer advised, so that case is not checked here.)
}

TEST(AllocZeroed, SmallBuffersComeFromTheHeapCleared) {
  auto *p = static_cast<unsigned char *>(allocZeroed(100, 64));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  for (int i = 0; i < 100; ++i)
    ASSERT_EQ(p[i], 0) << i;
  std::memset(p, 0xAB, 100);
  freeZeroed(p, 100);
}

TEST(AllocZeroed, LargeBuffersAreZeroWithoutBeingResident) {
  // A session's KV cache: its pages must not all be resident (nor written)
  // when the session is created, only once positions are written.
  uint64_t size = 4 * kHugePageBytes + 4096 + 12;
  auto *p = static_cast<unsigned char *>(allocZeroed(size, 64));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  uint64_t pages = (size + page - 1) / page;
  auto resident = [&] {
    std::vector<unsigned char> in(pages);
    EXPECT_EQ(mincore(p, pages * page, in.data()), 0);
    uint64_t n = 0;
    for (unsigned char c : in)
      n += c & 1;
    return n;
  };
  EXPECT_EQ(resident(), 0u);
  p[0] = 1;
  uint64_t afterOne = resident();
  EXPECT_GE(afterOne, 1u);
  EXPECT_LT(afterOne, pages); // one (huge) page, not the buffer
  for (uint64_t i = 1; i < size; i += 4093)
    ASSERT_EQ(p[i], 0) << i;
  EXPECT_EQ(p[size - 1], 0);
  p[size - 1] = 2; // writable to its last byte
  freeZeroed(p, size);
}

TEST(MemoryPlanner, AMisalignedDestinationIsServedWithAKeptBlock) {
  MemoryPlanner planner;
  alignas(64) static unsigned char caller[64 + 1000];
  // One run of a model with a temporary and a 1000-byte output; returns
  // the block the output was computed in.
  auto run = [&](void *dest) {
    planner.beginRun("s");
    planner.setDestinations({{dest, 1000}});
    void *out;
    {
      MemoryPlanner::Scope scope(&planner);
      void *tmp = hookAlloc(256, 64);
      out = hookAlloc(1000, 64);
      EXPECT_NE(out, nullptr);
      std::memset(out, 7, 1000);
      hookFree(tmp);
    }
    planner.noteOutput(0, out, 1000);
    planner.endRun(); // an output left in the planner's care is freed
    return out;
  };
  run(caller); // recorded: the heap
  EXPECT_EQ(planner.stats().mode, TFC_PLAN_RECORDED);
  // Replayed into an aligned buffer: computed in place.
  EXPECT_EQ(run(caller), caller);
  EXPECT_EQ(planner.stats().mode, TFC_PLAN_REPLAYED);
  // Into a misaligned one: a block of the planner's, aligned, and the same
  // one run after run (no fresh heap block per run).
  void *first = run(caller + 4);
  EXPECT_NE(first, caller + 4);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % 64, 0u);
  EXPECT_EQ(run(caller + 4), first);
  EXPECT_EQ(planner.stats().heapAllocs, 0u);
  EXPECT_EQ(planner.stats().mode, TFC_PLAN_REPLAYED);
  // A free of it from a thread without the planner is ignored.
  hookFree(first);
  EXPECT_EQ(run(caller + 4), first);
}
