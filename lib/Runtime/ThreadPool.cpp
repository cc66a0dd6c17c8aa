//===- ThreadPool.cpp - The runtime's fork-join thread pool ---------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// A job is published as a generation number (`ticket`) and, per thread, the
// range of chunks it owns: thread i (the caller is thread 0) owns chunks
// [i K, (i + 1) K) of the T K chunks (K = kChunksPerThread, or ceil(n / T)
// when that is less), and chunk c is
// tasks [c n / (T K), (c + 1) n / (T K)), so every thread owns an equal
// share of the tasks, the same share on every call. A thread claims its
// own chunks from the front of its range and, once they are gone, steals
// chunks of the other threads from the back of theirs. A range is one
// 64-bit word (generation, front, back) changed by compare-and-swap, so a
// thread that read an old generation can never claim a chunk of a newer
// job, and the job's fields (written before the ticket is stored) are
// visible to whoever claims one. The job cannot be replaced while a claimed
// chunk runs: each thread subtracts its own chunks from `remaining` once its
// range is empty (and a stolen chunk when it finishes), and the caller
// waits for `remaining` to reach zero before it returns.
//
// Owning the same tasks on every call keeps what a task reads in the
// cache of the core that read it last time, and the tasks of one thread
// contiguous (a GEMM's column groups: each thread streams its own part of
// the weight). Measured faster than first come, first served chunks, on
// 2 threads, for a GEMM alone and for whole models (figures: commit
// 3396080).
//
// Idle workers spin on the ticket for 1 ms, then sleep; the caller wakes
// them only when some are asleep (a Dekker-style handshake on `sleepers`
// with sequentially consistent operations, so no wake-up is lost).
//
//===----------------------------------------------------------------------===//

#include "tfc/Runtime/ThreadPool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

using namespace tfc::rt;

namespace {

thread_local int parallelDepth = 0;

struct DepthGuard {
  DepthGuard() { ++parallelDepth; }
  ~DepthGuard() { --parallelDepth; }
};

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ volatile("yield");
#endif
}

/// How long a waiting thread spins before it sleeps. A time, not a count
/// of pause instructions: a pause takes many times longer on some x86 cores
/// than on others, so the 4000 pauses this was took very different times on
/// different machines, and a worker often slept through the serial work
/// between two parallel loops and was woken late (measured: the second
/// thread started a GEMM well after the first; figures: commit db17eba).
/// OpenMP runtimes spin for milliseconds.
constexpr std::chrono::microseconds kSpinTime{1000};
/// The spin of a pool with more threads than the machine has: a spinning
/// thread there takes the core of one that has work.
constexpr std::chrono::microseconds kOversubscribedSpinTime{20};
/// Pauses between two looks at the clock.
constexpr int kPausesPerCheck = 64;

/// Spins until `done()` or `limit` has passed; returns whether done.
template <typename Done>
bool spinUntil(std::chrono::microseconds limit, Done done) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (true) {
    for (int i = 0; i < kPausesPerCheck; ++i) {
      if (done())
        return true;
      cpuRelax();
    }
    if (std::chrono::steady_clock::now() >= deadline)
      return done();
  }
}

inline uint32_t generationOf(uint64_t t) {
  return static_cast<uint32_t>(t >> 32);
}

/// A thread's range of chunks: generation, front (the owner's next) and
/// back (one past the last unclaimed).
inline uint64_t rangeOf(uint32_t gen, uint32_t front, uint32_t back) {
  return (static_cast<uint64_t>(gen) << 32) |
         (static_cast<uint64_t>(front) << 16) | back;
}
static_assert(ThreadPool::kMaxThreads * ThreadPool::kChunksPerThread <= 0xFFFF,
              "a range's front and back are 16-bit chunk indices");
inline uint32_t frontOf(uint64_t r) { return (r >> 16) & 0xFFFF; }
inline uint32_t backOf(uint64_t r) { return r & 0xFFFF; }

/// Nanoseconds from `start` to now.
uint64_t nanosSince(std::chrono::steady_clock::time_point start) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::steady_clock::now() - start)
          .count());
}

/// A range on a cache line of its own: the owner claims from it while the
/// others poll theirs.
struct alignas(64) Range {
  std::atomic<uint64_t> word{0};
};

} // namespace

struct ThreadPool::State {
  unsigned threads = 1;
  /// How long waiting threads spin: kSpinTime, less when the pool has more
  /// threads than the machine.
  std::chrono::microseconds spinTime = kSpinTime;
  std::vector<std::thread> workers;
  /// One job (or resize) at a time.
  std::mutex dispatch;

  // The current job, written under `dispatch` before the ticket is stored,
  // with what the workers poll: one cache line the caller writes once per
  // job and the workers read.
  alignas(64) Fn fn = nullptr;
  void *ctx = nullptr;
  int64_t n = 0;
  /// Chunks per thread of the current job (the job has threads x this).
  uint32_t chunksPerThread = 0;
  /// The generation of the current job (the upper 32 bits).
  std::atomic<uint64_t> ticket{0};
  /// Stats: whether counting.
  std::atomic<bool> counting{false};
  std::atomic<bool> stop{false};
  std::atomic<int> sleepers{0};

  /// Chunks of the current job not yet reported done, on a line of its own:
  /// each thread subtracts its own chunks once, when its range is empty, and
  /// a stolen chunk as it finishes (a subtraction per chunk moved the line
  /// between the cores once per chunk, which made even an empty job
  /// measurably slower; figures: commit 75b167a).
  alignas(64) std::atomic<int64_t> remaining{0};

  /// Thread i's chunks of the current job.
  alignas(64) std::unique_ptr<Range[]> ranges;
  /// Stats: the counts (ThreadPool::Stats), on a line of their own (busyNs
  /// is added to per chunk while counting).
  alignas(64) std::atomic<uint64_t> regions{0};
  std::atomic<uint64_t> threadNs{0}, busyNs{0};
  alignas(64) std::mutex sleepMutex;
  std::condition_variable wake;
  std::mutex doneMutex;
  std::condition_variable done;

  void start(unsigned numThreads);
  void stopWorkers();
  void workerLoop(unsigned self, uint32_t seen);
  /// Runs chunk c of the current job (runChunks reports it done).
  void runChunk(int64_t c);
  /// Reports `count` chunks of the current job done; wakes the caller
  /// when they were the last.
  void report(int64_t count);
  /// Claims one chunk of range `r` of job `gen`, from the front (the
  /// owner) or the back (a thief); -1 when there is none.
  int64_t claim(unsigned r, uint32_t gen, bool fromFront);
  /// Runs thread `self`'s chunks of job `gen`, then steals the others'.
  void runChunks(unsigned self, uint32_t gen);
};

void ThreadPool::State::runChunk(int64_t c) {
  int64_t chunks = static_cast<int64_t>(threads) * chunksPerThread;
  int64_t begin = c * n / chunks, end = (c + 1) * n / chunks;
  if (begin >= end)
    return;
  DepthGuard guard;
  if (counting.load(std::memory_order_relaxed)) {
    auto start = std::chrono::steady_clock::now();
    fn(ctx, begin, end);
    busyNs.fetch_add(nanosSince(start), std::memory_order_relaxed);
  } else {
    fn(ctx, begin, end);
  }
}

int64_t ThreadPool::State::claim(unsigned r, uint32_t gen, bool fromFront) {
  std::atomic<uint64_t> &word = ranges[r].word;
  uint64_t w = word.load(std::memory_order_acquire);
  while (true) {
    uint32_t front = frontOf(w), back = backOf(w);
    if (generationOf(w) != gen || front >= back)
      return -1;
    uint64_t next = fromFront ? rangeOf(gen, front + 1, back)
                              : rangeOf(gen, front, back - 1);
    if (word.compare_exchange_weak(w, next, std::memory_order_acq_rel,
                                   std::memory_order_acquire))
      return fromFront ? front : back - 1;
  }
}

void ThreadPool::State::report(int64_t count) {
  if (remaining.fetch_sub(count, std::memory_order_acq_rel) == count) {
    std::lock_guard<std::mutex> lock(doneMutex);
    done.notify_one();
  }
}

void ThreadPool::State::runChunks(unsigned self, uint32_t gen) {
  // The thread's own chunks, reported at once when its range is empty (the
  // caller returns when every chunk is reported, so the job stays in place
  // until then); stolen ones, rarer, each as it finishes, so that a thread
  // descheduled while it looks for more holds no finished work back.
  int64_t ran = 0;
  for (int64_t c; (c = claim(self, gen, /*fromFront=*/true)) >= 0; ++ran)
    runChunk(c);
  if (ran)
    report(ran);
  for (unsigned i = 1; i < threads; ++i) {
    unsigned victim = (self + i) % threads;
    for (int64_t c; (c = claim(victim, gen, /*fromFront=*/false)) >= 0;) {
      runChunk(c);
      report(1);
    }
  }
}

void ThreadPool::State::workerLoop(unsigned self, uint32_t seen) {
  auto published = [&] {
    return generationOf(ticket.load(std::memory_order_acquire)) != seen ||
           stop.load(std::memory_order_relaxed);
  };
  while (true) {
    if (!spinUntil(spinTime, published)) {
      std::unique_lock<std::mutex> lock(sleepMutex);
      sleepers.fetch_add(1);
      wake.wait(lock, [&] {
        return generationOf(ticket.load()) != seen || stop.load();
      });
      sleepers.fetch_sub(1);
    }
    if (stop.load())
      return;
    seen = generationOf(ticket.load(std::memory_order_acquire));
    runChunks(self, seen);
  }
}

void ThreadPool::State::start(unsigned numThreads) {
  threads = std::clamp(numThreads, 1u, kMaxThreads);
  spinTime = threads > std::max(1u, std::thread::hardware_concurrency())
                 ? kOversubscribedSpinTime
                 : kSpinTime;
  stop.store(false);
  ranges.reset(new Range[threads]);
  uint32_t gen = generationOf(ticket.load());
  for (unsigned i = 1; i < threads; ++i)
    workers.emplace_back([this, i, gen] { workerLoop(i, gen); });
}

void ThreadPool::State::stopWorkers() {
  stop.store(true);
  { std::lock_guard<std::mutex> lock(sleepMutex); }
  wake.notify_all();
  for (std::thread &w : workers)
    w.join();
  workers.clear();
}

ThreadPool::ThreadPool(unsigned numThreads) : state(new State()) {
  state->start(numThreads);
}

ThreadPool::~ThreadPool() {
  std::lock_guard<std::mutex> lock(state->dispatch);
  state->stopWorkers();
}

unsigned ThreadPool::numThreads() const { return state->threads; }

bool ThreadPool::inParallelRegion() { return parallelDepth > 0; }

void ThreadPool::parallelFor(int64_t n, Fn fn, void *ctx) {
  if (n <= 0)
    return;
  State &s = *state;
  if (parallelDepth > 0 || n == 1 || s.threads == 1) {
    DepthGuard guard;
    fn(ctx, 0, n);
    return;
  }
  std::lock_guard<std::mutex> lock(s.dispatch);
  // kChunksPerThread chunks per thread, fewer when there are fewer tasks
  // than that (some chunks are then empty, none larger than a task).
  uint32_t perThread = static_cast<uint32_t>(
      std::min<int64_t>(kChunksPerThread, (n + s.threads - 1) / s.threads));
  s.fn = fn;
  s.ctx = ctx;
  s.n = n;
  s.chunksPerThread = perThread;
  s.remaining.store(static_cast<int64_t>(s.threads) * perThread,
                    std::memory_order_relaxed);
  uint32_t gen = generationOf(s.ticket.load()) + 1;
  for (unsigned i = 0; i < s.threads; ++i)
    s.ranges[i].word.store(rangeOf(gen, i * perThread, (i + 1) * perThread),
                           std::memory_order_relaxed);
  bool counting = s.counting.load(std::memory_order_relaxed);
  auto start = counting ? std::chrono::steady_clock::now()
                        : std::chrono::steady_clock::time_point();
  s.ticket.store(static_cast<uint64_t>(gen) << 32);
  if (s.sleepers.load() > 0) {
    { std::lock_guard<std::mutex> sleepLock(s.sleepMutex); }
    s.wake.notify_all();
  }
  s.runChunks(0, gen);
  auto allDone = [&] {
    return s.remaining.load(std::memory_order_acquire) == 0;
  };
  if (!spinUntil(s.spinTime, allDone)) {
    std::unique_lock<std::mutex> doneLock(s.doneMutex);
    s.done.wait(doneLock, allDone);
  }
  if (counting) {
    s.regions.fetch_add(1, std::memory_order_relaxed);
    s.threadNs.fetch_add(nanosSince(start) * s.threads,
                         std::memory_order_relaxed);
  }
}

bool ThreadPool::setStatsEnabled(bool enabled) {
  // From inside a chunk the dispatch lock is held by this job's caller.
  if (parallelDepth > 0)
    return false;
  std::lock_guard<std::mutex> lock(state->dispatch);
  state->regions.store(0);
  state->threadNs.store(0);
  state->busyNs.store(0);
  state->counting.store(enabled);
  return true;
}

ThreadPool::Stats ThreadPool::stats() const {
  return {state->regions.load(), state->threadNs.load(), state->busyNs.load()};
}

bool ThreadPool::resize(unsigned numThreads) {
  if (parallelDepth > 0)
    return false;
  std::lock_guard<std::mutex> lock(state->dispatch);
  state->stopWorkers();
  state->start(numThreads);
  return true;
}

unsigned ThreadPool::parseThreadCount(const char *text) {
  if (!text || !*text)
    return 0;
  uint64_t v = 0;
  for (const char *p = text; *p; ++p) {
    if (*p < '0' || *p > '9')
      return 0;
    v = v * 10 + static_cast<uint64_t>(*p - '0');
    if (v > kMaxThreads)
      return 0;
  }
  return static_cast<unsigned>(v);
}

unsigned ThreadPool::defaultThreads(std::string *warning) {
  unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  const char *env = std::getenv("TFC_NUM_THREADS");
  if (!env)
    return std::min(hardware, kMaxThreads);
  if (unsigned n = parseThreadCount(env))
    return n;
  if (warning)
    *warning = "TFC_NUM_THREADS='" + std::string(env) +
               "' is not a positive integer up to " +
               std::to_string(kMaxThreads) + "; using " +
               std::to_string(std::min(hardware, kMaxThreads)) + " threads";
  return std::min(hardware, kMaxThreads);
}

ThreadPool &ThreadPool::global() {
  // Never destroyed: workers must outlive every static destructor that
  // might still run a model.
  static ThreadPool *pool = [] {
    std::string warning;
    unsigned n = defaultThreads(&warning);
    if (!warning.empty())
      std::fprintf(stderr, "tfc: warning: %s\n", warning.c_str());
    return new ThreadPool(n);
  }();
  return *pool;
}
