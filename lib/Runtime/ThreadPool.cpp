//===- ThreadPool.cpp - The runtime's fork-join thread pool ---------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// A job is published as one 64-bit ticket: a generation (32 bits), the
// number of chunks (16 bits) and the next unclaimed chunk (16 bits). Threads
// claim chunks by compare-and-swap on the ticket, so a thread that read an
// old ticket can never claim a chunk of a newer job, and the job's fields
// (written before the ticket is stored) are visible to whoever claims one.
// The job cannot be replaced while a claimed chunk runs: the caller waits for
// `remaining` to reach zero before it returns.
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
/// of pause instructions: a pause takes 20 ns on an Emerald Rapids and a
/// few on other x86 cores, so the 4000 pauses this was spent 3-80 us, and a
/// worker often slept through the serial work between two parallel loops
/// and was woken late (measured: the second thread started a GEMM 10 us
/// after the first on average). OpenMP runtimes spin for milliseconds.
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
inline uint32_t chunksOf(uint64_t t) { return (t >> 16) & 0xFFFF; }
inline uint32_t nextOf(uint64_t t) { return t & 0xFFFF; }
inline uint64_t ticketOf(uint32_t gen, uint32_t chunks) {
  return (static_cast<uint64_t>(gen) << 32) |
         (static_cast<uint64_t>(chunks) << 16);
}

} // namespace

struct ThreadPool::State {
  unsigned threads = 1;
  /// How long waiting threads spin: kSpinTime, less when the pool has more
  /// threads than the machine.
  std::chrono::microseconds spinTime = kSpinTime;
  std::vector<std::thread> workers;
  /// One job (or resize) at a time.
  std::mutex dispatch;

  // The current job, written under `dispatch` before the ticket is stored.
  Fn fn = nullptr;
  void *ctx = nullptr;
  int64_t n = 0;

  std::atomic<uint64_t> ticket{0};
  std::atomic<int64_t> remaining{0};
  std::atomic<bool> stop{false};
  std::atomic<int> sleepers{0};
  std::mutex sleepMutex;
  std::condition_variable wake;
  std::mutex doneMutex;
  std::condition_variable done;

  void start(unsigned numThreads);
  void stopWorkers();
  void workerLoop(uint32_t seen);
  void runChunks(uint32_t gen);
};

void ThreadPool::State::runChunks(uint32_t gen) {
  uint64_t t = ticket.load(std::memory_order_acquire);
  while (true) {
    if (generationOf(t) != gen || nextOf(t) >= chunksOf(t))
      return;
    if (!ticket.compare_exchange_weak(t, t + 1, std::memory_order_acq_rel,
                                      std::memory_order_acquire))
      continue; // t was reloaded
    int64_t chunks = chunksOf(t), c = nextOf(t);
    int64_t base = n / chunks, rem = n % chunks;
    int64_t begin = c * base + std::min(c, rem);
    int64_t end = begin + base + (c < rem ? 1 : 0);
    {
      DepthGuard guard;
      fn(ctx, begin, end);
    }
    if (remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard<std::mutex> lock(doneMutex);
      done.notify_one();
    }
    t = ticket.load(std::memory_order_acquire);
  }
}

void ThreadPool::State::workerLoop(uint32_t seen) {
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
    runChunks(seen);
  }
}

void ThreadPool::State::start(unsigned numThreads) {
  threads = std::clamp(numThreads, 1u, kMaxThreads);
  spinTime = threads > std::max(1u, std::thread::hardware_concurrency())
                 ? kOversubscribedSpinTime
                 : kSpinTime;
  stop.store(false);
  uint32_t gen = generationOf(ticket.load());
  for (unsigned i = 1; i < threads; ++i)
    workers.emplace_back([this, gen] { workerLoop(gen); });
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
  uint32_t chunks = static_cast<uint32_t>(
      std::min<int64_t>(n, static_cast<int64_t>(s.threads) * kChunksPerThread));
  s.fn = fn;
  s.ctx = ctx;
  s.n = n;
  s.remaining.store(chunks, std::memory_order_relaxed);
  uint32_t gen = generationOf(s.ticket.load()) + 1;
  s.ticket.store(ticketOf(gen, chunks));
  if (s.sleepers.load() > 0) {
    { std::lock_guard<std::mutex> sleepLock(s.sleepMutex); }
    s.wake.notify_all();
  }
  s.runChunks(gen);
  if (spinUntil(s.spinTime,
          [&] { return s.remaining.load(std::memory_order_acquire) == 0; }))
    return;
  std::unique_lock<std::mutex> doneLock(s.doneMutex);
  s.done.wait(doneLock,
              [&] { return s.remaining.load(std::memory_order_acquire) == 0; });
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
