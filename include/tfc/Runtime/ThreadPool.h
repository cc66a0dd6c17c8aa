//===- ThreadPool.h - The runtime's fork-join thread pool -------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// What a model's `parallel_for` hook runs on: a fixed set of workers created
// once. parallelFor(n, fn, ctx) splits [0, n) into up to kChunksPerThread
// contiguous chunks per thread (the caller's included) and returns when every
// chunk is done. Each thread owns an equal share of [0, n), the same on every
// call (so a task's data stays in the cache of the core that ran it last
// time); a thread done with its own chunks steals the others' from the back,
// so a worker that wakes late or runs slower (a vCPU sharing its core) does
// not hold the others up. Idle workers spin for a millisecond (20 us when there
// are more threads than hardware threads), then sleep on a condition
// variable.
//
// A parallelFor from inside a chunk (nested) runs inline on that thread; two
// threads calling parallelFor on one pool take turns. Neither deadlocks.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_THREADPOOL_H
#define TFC_RUNTIME_THREADPOOL_H

#include <cstdint>
#include <memory>
#include <string>

namespace tfc::rt {

class ThreadPool {
public:
  using Fn = void (*)(void *ctx, int64_t begin, int64_t end);

  /// The most threads a pool runs.
  static constexpr unsigned kMaxThreads = 1024;
  /// A parallelFor of n makes min(kChunksPerThread, ceil(n / threads))
  /// chunks per thread. Chunks are what a thread steals, so they bound how
  /// long the others wait for the last one: with 4, a GEMM of BERT-base's
  /// FFN (48 tasks) was stolen 6 tasks at a time, and on a VM whose vCPUs
  /// ran at unequal speeds the 2 threads sat idle for more of each region
  /// than with 16, and whole models ran slower; 64 was no faster than 16
  /// (figures: commit 0deb35f).
  static constexpr unsigned kChunksPerThread = 16;

  /// A pool of `numThreads` threads in all (the caller is one of them, so
  /// numThreads - 1 workers); clamped to [1, kMaxThreads].
  explicit ThreadPool(unsigned numThreads);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  unsigned numThreads() const;

  /// Calls fn(ctx, begin, end) on disjoint contiguous ranges covering
  /// [0, n), concurrently, and returns when all have returned. n <= 0 does
  /// nothing.
  void parallelFor(int64_t n, Fn fn, void *ctx);

  /// Replaces the workers to run `numThreads` threads in all. Waits for a
  /// parallelFor in progress. False (and nothing changes) when called from
  /// inside a chunk.
  bool resize(unsigned numThreads);

  /// Whether the calling thread is running a chunk of some parallelFor.
  static bool inParallelRegion();

  /// Where the threads' time goes while parallelFors run on more than one
  /// thread, counted while enabled: a thread that finishes its share last
  /// on every call shows up as busyNs well below threadNs (found that way:
  /// GEMM panels on 4 KiB pages, docs/runtime.md).
  struct Stats {
    /// parallelFor calls that ran on the workers too.
    uint64_t regions = 0;
    /// Their wall time (from publishing the job until the caller sees it
    /// done) times the pool's threads, in ns.
    uint64_t threadNs = 0;
    /// The time threads spent running chunks in them, in ns.
    uint64_t busyNs = 0;
  };
  /// Starts (from zero) or stops counting. Off by default: counting reads
  /// the clock twice per chunk. False (and nothing changes) when called
  /// from inside a chunk, like resize.
  bool setStatsEnabled(bool enabled);
  /// The counts so far (read without waiting for a running parallelFor).
  Stats stats() const;

  /// The pool models run on, created on first use with defaultThreads().
  static ThreadPool &global();

  /// TFC_NUM_THREADS if it is a positive integer (at most kMaxThreads), else
  /// the number of hardware threads. A malformed TFC_NUM_THREADS sets
  /// `warning` to a message saying so.
  static unsigned defaultThreads(std::string *warning = nullptr);

  /// The thread count a TFC_NUM_THREADS value asks for, or 0 if malformed.
  static unsigned parseThreadCount(const char *text);

private:
  struct State;
  std::unique_ptr<State> state;
};

} // namespace tfc::rt

#endif // TFC_RUNTIME_THREADPOOL_H
