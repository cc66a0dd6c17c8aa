//===- ThreadPoolTest.cpp - The runtime's fork-join thread pool -----------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Every index is covered exactly once by contiguous disjoint ranges, for many
// sizes and thread counts; nested and concurrent calls; the environment
// variable. A micro benchmark prints the cost of an empty parallelFor (not
// asserted: timings depend on the machine).
//
//===----------------------------------------------------------------------===//

#include "tfc/Runtime/ThreadPool.h"

#include "gtest/gtest.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

using namespace tfc::rt;

namespace {

struct Coverage {
  std::vector<std::atomic<int>> hits;
  std::mutex mutex;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  std::set<std::thread::id> threads;

  explicit Coverage(int64_t n) : hits(n) {}

  static void record(void *ctx, int64_t begin, int64_t end) {
    auto *c = static_cast<Coverage *>(ctx);
    for (int64_t i = begin; i < end; ++i)
      c->hits[i].fetch_add(1);
    std::lock_guard<std::mutex> lock(c->mutex);
    c->ranges.push_back({begin, end});
    c->threads.insert(std::this_thread::get_id());
  }
};

void expectCoveredOnce(ThreadPool &pool, int64_t n) {
  Coverage c(n);
  pool.parallelFor(n, Coverage::record, &c);
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(c.hits[i].load(), 1) << "index " << i << " of " << n;
  // kChunksPerThread contiguous non-empty chunks per thread at most; one
  // range, run inline, on a single thread.
  int64_t chunks = pool.numThreads() == 1
                       ? 1
                       : std::min<int64_t>(n, int64_t(pool.numThreads()) *
                                                  ThreadPool::kChunksPerThread);
  EXPECT_EQ(c.ranges.size(), static_cast<size_t>(chunks));
  // As equal as can be: sizes differ by at most one.
  int64_t smallest = n, largest = 0;
  for (auto &r : c.ranges) {
    smallest = std::min(smallest, r.second - r.first);
    largest = std::max(largest, r.second - r.first);
  }
  EXPECT_LE(largest - smallest, 1);
  for (auto &r : c.ranges)
    EXPECT_LT(r.first, r.second);
}

TEST(ThreadPool, CoversEveryIndexOnce) {
  for (unsigned threads : {1u, 2u, 3u, 4u, 7u, 16u}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.numThreads(), threads);
    for (int64_t n : {1, 2, 3, 5, 7, 8, 15, 16, 17, 100, 1000, 4097})
      expectCoveredOnce(pool, n);
    if (HasFatalFailure())
      return;
  }
}

TEST(ThreadPool, ManyCallsInARow) {
  ThreadPool pool(4);
  std::atomic<int64_t> sum{0};
  auto add = [](void *ctx, int64_t begin, int64_t end) {
    int64_t s = 0;
    for (int64_t i = begin; i < end; ++i)
      s += i;
    static_cast<std::atomic<int64_t> *>(ctx)->fetch_add(s);
  };
  for (int round = 0; round < 2000; ++round)
    pool.parallelFor(round % 37 + 1, add, &sum);
  int64_t expected = 0;
  for (int round = 0; round < 2000; ++round) {
    int64_t n = round % 37 + 1;
    expected += n * (n - 1) / 2;
  }
  EXPECT_EQ(sum.load(), expected);
}

TEST(ThreadPool, NothingToDo) {
  ThreadPool pool(4);
  int calls = 0;
  auto count = [](void *ctx, int64_t, int64_t) { ++*static_cast<int *>(ctx); };
  pool.parallelFor(0, count, &calls);
  pool.parallelFor(-5, count, &calls);
  EXPECT_EQ(calls, 0);
  pool.parallelFor(1, count, &calls);
  EXPECT_EQ(calls, 1);
}

struct Nested {
  ThreadPool *pool;
  std::atomic<int64_t> inner{0};
  std::atomic<int> wasInside{0};
};

TEST(ThreadPool, NestedCallsRunInline) {
  ThreadPool pool(4);
  Nested ctx;
  ctx.pool = &pool;
  EXPECT_FALSE(ThreadPool::inParallelRegion());
  pool.parallelFor(
      8,
      [](void *p, int64_t begin, int64_t end) {
        auto *c = static_cast<Nested *>(p);
        if (ThreadPool::inParallelRegion())
          c->wasInside.fetch_add(1);
        for (int64_t i = begin; i < end; ++i)
          c->pool->parallelFor(
              10,
              [](void *q, int64_t b, int64_t e) {
                static_cast<Nested *>(q)->inner.fetch_add(e - b);
              },
              c);
        // Resizing from inside is refused, not a deadlock.
        EXPECT_FALSE(c->pool->resize(2));
      },
      &ctx);
  EXPECT_EQ(ctx.inner.load(), 80);
  // Every chunk (8 of 8 indices on 4 threads) ran inside the region.
  EXPECT_EQ(ctx.wasInside.load(),
            std::min<int>(8, 4 * ThreadPool::kChunksPerThread));
  EXPECT_FALSE(ThreadPool::inParallelRegion());
}

TEST(ThreadPool, ConcurrentCallersShareThePool) {
  ThreadPool pool(3);
  std::vector<int> failures(2, 0);
  auto caller = [&](int who) {
    for (int round = 0; round < 300; ++round) {
      int64_t n = 1 + (round * 7 + who) % 50;
      Coverage c(n);
      pool.parallelFor(n, Coverage::record, &c);
      for (int64_t i = 0; i < n; ++i)
        if (c.hits[i].load() != 1)
          ++failures[who];
    }
  };
  std::thread a(caller, 0), b(caller, 1);
  a.join();
  b.join();
  EXPECT_EQ(failures[0], 0);
  EXPECT_EQ(failures[1], 0);
}

/// Waits until `flag` is set (at most 60 s: a guard against a hang, not a
/// timing assertion); whether it was set.
bool awaitFlag(const std::atomic<bool> &flag) {
  auto start = std::chrono::steady_clock::now();
  while (!flag.load()) {
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(60))
      return false;
    std::this_thread::yield();
  }
  return true;
}

TEST(ThreadPool, UsesItsWorkers) {
  ThreadPool pool(4);
  // Four chunks that each wait until all four have begun: every chunk sees
  // the other three only if four threads run them at once. Run one after
  // another, the first would give up waiting having seen itself alone.
  struct Meeting {
    std::atomic<int> arrived{0}, met{0};
    std::mutex mutex;
    std::set<std::thread::id> threads;
  } meeting;
  auto meet = [](void *ctx, int64_t, int64_t) {
    auto *m = static_cast<Meeting *>(ctx);
    {
      std::lock_guard<std::mutex> lock(m->mutex);
      m->threads.insert(std::this_thread::get_id());
    }
    m->arrived.fetch_add(1);
    auto start = std::chrono::steady_clock::now();
    while (m->arrived.load() < 4 &&
           std::chrono::steady_clock::now() - start < std::chrono::seconds(60))
      std::this_thread::yield();
    if (m->arrived.load() == 4)
      m->met.fetch_add(1);
  };
  pool.parallelFor(4, meet, &meeting);
  EXPECT_EQ(meeting.met.load(), 4);
  EXPECT_EQ(meeting.threads.size(), 4u);
}

TEST(ThreadPool, EachThreadOwnsItsShare) {
  // Two threads, four tasks: the caller owns tasks 0 and 1, the worker 2
  // and 3, on every call (first come, first served would give task 1 to the
  // worker). Tasks 1 and 3 each wait until the other has begun, so that
  // neither thread runs out of its own tasks while the other still has one
  // to steal, however late a worker wakes on a loaded machine: the owners
  // are then fixed, and asserted on every call.
  ThreadPool pool(2);
  struct Record {
    std::thread::id ran[4];
    std::atomic<bool> began[4];
    std::atomic<bool> timedOut{false};
  } record;
  auto run = [](void *ctx, int64_t begin, int64_t end) {
    auto *r = static_cast<Record *>(ctx);
    for (int64_t i = begin; i < end; ++i) {
      r->ran[i] = std::this_thread::get_id();
      r->began[i].store(true);
      if ((i == 1 && !awaitFlag(r->began[3])) ||
          (i == 3 && !awaitFlag(r->began[1])))
        r->timedOut = true;
    }
  };
  for (int call = 0; call < 20; ++call) {
    for (std::atomic<bool> &b : record.began)
      b.store(false);
    pool.parallelFor(4, run, &record);
    ASSERT_FALSE(record.timedOut.load()) << "call " << call;
    std::thread::id me = std::this_thread::get_id();
    EXPECT_EQ(record.ran[0], me) << "call " << call;
    EXPECT_EQ(record.ran[1], me) << "call " << call;
    EXPECT_NE(record.ran[2], me) << "call " << call;
    EXPECT_EQ(record.ran[2], record.ran[3]) << "call " << call;
  }
}

TEST(ThreadPool, StatsCountTheRegionsAndTheTimeInTasks) {
  ThreadPool pool(2);
  auto sleepy = [](void *, int64_t begin, int64_t end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2) * (end - begin));
  };
  // Off: nothing is counted.
  pool.parallelFor(4, sleepy, nullptr);
  EXPECT_EQ(pool.stats().regions, 0u);
  pool.setStatsEnabled(true);
  // Counted: calls that ran on the workers; not a single task, not n <= 0.
  pool.parallelFor(1, sleepy, nullptr);
  pool.parallelFor(0, sleepy, nullptr);
  EXPECT_EQ(pool.stats().regions, 0u);
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 3; ++i)
    pool.parallelFor(8, sleepy, nullptr);
  double wallNs = std::chrono::duration<double, std::nano>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  ThreadPool::Stats s = pool.stats();
  EXPECT_EQ(s.regions, 3u);
  // 24 tasks of at least 2 ms ran inside chunks; no thread is busier than
  // its share of the regions' wall time, which is within the loop's.
  EXPECT_GE(s.busyNs, 24u * 2000000u);
  EXPECT_LE(s.busyNs, s.threadNs);
  EXPECT_LE(s.threadNs, 2 * wallNs);
  // Not from inside a chunk (the caller holds the pool): refused, no
  // deadlock, the counts kept.
  struct Inside {
    ThreadPool *pool;
    std::atomic<int> refused{0};
  } inside{&pool};
  pool.parallelFor(
      2,
      [](void *p, int64_t, int64_t) {
        auto *c = static_cast<Inside *>(p);
        if (!c->pool->setStatsEnabled(false))
          c->refused.fetch_add(1);
        (void)c->pool->stats();
      },
      &inside);
  EXPECT_EQ(inside.refused.load(), 2);
  EXPECT_EQ(pool.stats().regions, 4u);
  // Enabling again starts from zero; disabling stops counting.
  EXPECT_TRUE(pool.setStatsEnabled(true));
  EXPECT_EQ(pool.stats().regions, 0u);
  EXPECT_EQ(pool.stats().busyNs, 0u);
  pool.setStatsEnabled(false);
  pool.parallelFor(8, sleepy, nullptr);
  EXPECT_EQ(pool.stats().regions, 0u);
}

TEST(ThreadPool, Resize) {
  ThreadPool pool(2);
  EXPECT_TRUE(pool.resize(5));
  EXPECT_EQ(pool.numThreads(), 5u);
  expectCoveredOnce(pool, 123);
  EXPECT_TRUE(pool.resize(0)); // clamped
  EXPECT_EQ(pool.numThreads(), 1u);
  expectCoveredOnce(pool, 9);
}

TEST(ThreadPool, ThreadCountFromTheEnvironment) {
  EXPECT_EQ(ThreadPool::parseThreadCount("4"), 4u);
  EXPECT_EQ(ThreadPool::parseThreadCount("1024"), 1024u);
  EXPECT_EQ(ThreadPool::parseThreadCount("0"), 0u);
  EXPECT_EQ(ThreadPool::parseThreadCount("-2"), 0u);
  EXPECT_EQ(ThreadPool::parseThreadCount("4x"), 0u);
  EXPECT_EQ(ThreadPool::parseThreadCount(""), 0u);
  EXPECT_EQ(ThreadPool::parseThreadCount("99999999999999999999"), 0u);

  const char *saved = std::getenv("TFC_NUM_THREADS");
  std::string savedValue = saved ? saved : "";
  setenv("TFC_NUM_THREADS", "3", 1);
  std::string warning;
  EXPECT_EQ(ThreadPool::defaultThreads(&warning), 3u);
  EXPECT_EQ(warning, "");
  setenv("TFC_NUM_THREADS", "lots", 1);
  unsigned fallback = ThreadPool::defaultThreads(&warning);
  EXPECT_GE(fallback, 1u);
  EXPECT_NE(warning.find("TFC_NUM_THREADS='lots' is not a positive integer"),
            std::string::npos)
      << warning;
  if (saved)
    setenv("TFC_NUM_THREADS", savedValue.c_str(), 1);
  else
    unsetenv("TFC_NUM_THREADS");
}

TEST(ThreadPool, MicroBenchmark) {
  unsigned threads = std::max(2u, std::thread::hardware_concurrency());
  ThreadPool pool(threads);
  auto nothing = [](void *, int64_t, int64_t) {};
  const int kCalls = 20000;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kCalls; ++i)
    pool.parallelFor(threads, nothing, nullptr);
  double us = std::chrono::duration<double, std::micro>(
                  std::chrono::steady_clock::now() - start)
                  .count();
  std::printf("[ info     ] empty parallelFor over %u threads: %.2f us/call\n",
              threads, us / kCalls);
}

} // namespace
