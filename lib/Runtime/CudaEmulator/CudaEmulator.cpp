//===- CudaEmulator.cpp - A CUDA driver that runs kernels on the CPU ------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// libtfc_cuda_emulator.so exports the CUDA driver API entry points libtfcrt
// uses (as a real libcuda.so.1 would), and runs the kernels of a model
// compiled with `tfc-compile --target=cuda --gpu-emulate` on the CPU:
//
//   TFC_CUDA_DRIVER=build/lib/libtfc_cuda_emulator.so tfc-run model.so ...
//
// so that a GPU build's kernels (their tiles, fragment maps, barriers,
// shuffles and tensor-core operations) and the runtime's whole CUDA path are
// checked without a GPU. The image format and the intrinsics it implements:
// include/tfc/Schemas/CudaEmulatorABI.h.
//
// Device memory is host memory. A launch runs its blocks one after the
// other on the calling thread; each GPU thread of a block is a fiber
// (ucontext) that runs until it reaches a barrier or a warp-collective
// operation (shfl.sync, mma.sync). When no fiber can go on, the scheduler
// completes the collective operations whose warps have all arrived and the
// barrier once the whole block has, and resumes the threads. What a GPU
// would leave undefined is reported as a launch failure naming the kernel
// (cuGetErrorString): a warp whose lanes wait at different operations, a
// barrier some threads never reach (deadlock), a collective operation with
// exited lanes.
//
// Streams exist for capture only (launches on them run at once otherwise,
// like those on the default stream): a captured launch copies its
// parameters (their sizes: the image's per-kernel table, also what
// cuFuncGetParamInfo reports), and a graph launch runs its kernels in
// capture order; cuGraphExecUpdate gives an instantiated graph a captured
// one's parameters and grids (the same functions and blocks).
//
// Environment: TFC_CUDA_EMULATOR_CC, the compute capability it reports
// (default 90); TFC_CUDA_EMULATOR_MEMORY, bytes of device memory (default
// 8 GiB); TFC_CUDA_EMULATOR_STATS=1, kernel and graph launch counts
// printed at exit; TFC_CUDA_EMULATOR_REFUSE_UPDATES=1, every
// cuGraphExecUpdate fails (as a driver's may).
//
//===----------------------------------------------------------------------===//

#include "tfc/Schemas/CudaEmulatorABI.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace {

constexpr int kSuccess = 0, kInvalidValue = 1, kOutOfMemory = 2,
              kInvalidImage = 200, kNotFound = 500, kLaunchFailed = 719,
              kGraphExecUpdateFailure = 910;
constexpr int kJitErrorLogBuffer = 5, kJitErrorLogBufferSize = 6;
constexpr unsigned kWarp = 32;
constexpr size_t kStackBytes = 512 * 1024;

thread_local std::string lastError;

int fail(int code, std::string message) {
  lastError = std::move(message);
  return code;
}

//===----------------------------------------------------------------------===//
// Number formats
//===----------------------------------------------------------------------===//

float bitsToFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint32_t floatToBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}

float halfToFloat(uint16_t h) {
  uint32_t sign = (h >> 15) & 1, exponent = (h >> 10) & 0x1f,
           mantissa = h & 0x3ff;
  float magnitude;
  if (exponent == 0)
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);
  else if (exponent == 31)
    magnitude = mantissa ? NAN : INFINITY;
  else
    magnitude = std::ldexp(static_cast<float>(mantissa | 0x400),
                           static_cast<int>(exponent) - 25);
  return sign ? -magnitude : magnitude;
}

float bf16ToFloat(uint16_t h) { return bitsToFloat(uint32_t(h) << 16); }

/// A tf32 operand as the tensor cores read it: the low 13 bits ignored.
float tf32ToFloat(uint32_t bits) { return bitsToFloat(bits & ~0x1fffu); }

/// cvt.rna.tf32.f32: to 10 mantissa bits, ties away from zero.
uint32_t floatToTf32(float f) {
  uint32_t bits = floatToBits(f);
  if (std::isnan(f))
    return 0x7fffffffu;
  if (std::isinf(f))
    return bits;
  return (bits + 0x1000u) & ~0x1fffu;
}

//===----------------------------------------------------------------------===//
// Modules and memory
//===----------------------------------------------------------------------===//

struct Module {
  void *library = nullptr;
  int fd = -1;
};

struct Function {
  tfc_emu_kernel_fn entry;
  std::string name;
  /// Parameter sizes, from the image's table (images made before it had
  /// none: hasParams false).
  std::vector<size_t> params;
  bool hasParams = false;
};

/// A launch as a stream capture records it: the parameters copied.
struct Node {
  Function *function;
  unsigned grid[3], block[3];
  std::vector<std::vector<uint8_t>> params;
};
struct Graph {
  std::vector<Node> nodes;
};
struct Stream {
  /// The graph being captured, or null.
  std::unique_ptr<Graph> capture;
};

struct Event {
  std::chrono::steady_clock::time_point at;
};

struct State {
  std::mutex mutex;
  std::map<uintptr_t, size_t> allocations;
  uint64_t live = 0, limit = 0;
  std::vector<std::unique_ptr<Function>> functions;
  /// TFC_CUDA_EMULATOR_STATS: counts printed at exit.
  bool stats = false;
  /// TFC_CUDA_EMULATOR_REFUSE_UPDATES=1: cuGraphExecUpdate fails as a
  /// driver's does on a change it cannot apply (the runtime's fallback).
  bool refuseUpdates = false;
  uint64_t kernelLaunches = 0, graphLaunches = 0, graphKernels = 0,
           captures = 0, updates = 0;

  State() {
    const char *mem = std::getenv("TFC_CUDA_EMULATOR_MEMORY");
    limit = mem ? std::strtoull(mem, nullptr, 10) : (8ull << 30);
    const char *stat = std::getenv("TFC_CUDA_EMULATOR_STATS");
    stats = stat && *stat && std::string(stat) != "0";
    const char *refuse = std::getenv("TFC_CUDA_EMULATOR_REFUSE_UPDATES");
    refuseUpdates = refuse && *refuse && std::string(refuse) != "0";
  }
  ~State() {
    if (stats)
      std::fprintf(stderr,
                   "tfc CUDA emulator: %llu kernel launches, %llu graph "
                   "launches (%llu kernels), %llu graphs captured, %llu "
                   "updated\n",
                   static_cast<unsigned long long>(kernelLaunches),
                   static_cast<unsigned long long>(graphLaunches),
                   static_cast<unsigned long long>(graphKernels),
                   static_cast<unsigned long long>(captures),
                   static_cast<unsigned long long>(updates));
  }

  /// Whether [addr, addr + size) lies inside one allocation.
  bool valid(uintptr_t addr, size_t size) {
    auto it = allocations.upper_bound(addr);
    if (it == allocations.begin())
      return false;
    --it;
    return addr - it->first + size <= it->second;
  }
};

State &state() {
  static State s;
  return s;
}

//===----------------------------------------------------------------------===//
// Launches
//===----------------------------------------------------------------------===//

enum class Wait { None, Barrier, Warp, Done, Failed };

/// One cp.async: `bytes` at `to`, the first `from` bytes read from `src`,
/// the rest zeros.
struct AsyncCopy {
  char *to;
  const char *src;
  unsigned bytes, from;
};

struct Thread {
  ucontext_t context;
  /// cp.async copies not committed yet, and the committed groups not waited
  /// for, oldest first: they land at cp.async.wait_group.
  std::vector<AsyncCopy> pending;
  std::vector<std::vector<AsyncCopy>> groups;
  char *stack = nullptr;
  unsigned tid[3] = {0, 0, 0};
  unsigned linear = 0;
  Wait wait = Wait::None;
  int op = -1;
  unsigned long long args[TFC_EMU_MAX_ARGS];
  unsigned long long results[TFC_EMU_MAX_RESULTS];
};

struct Launch {
  const Function *function = nullptr;
  void **params = nullptr;
  unsigned grid[3], block[3], ctaid[3];
  std::vector<Thread> threads;
  ucontext_t scheduler;
  std::string error;
};

thread_local Launch *launch = nullptr;
thread_local Thread *current = nullptr;

/// Fiber stacks, kept across launches (pages are touched only when used).
std::vector<char *> &stackPool() {
  static std::vector<char *> pool;
  return pool;
}

char *stackFor(size_t index) {
  std::vector<char *> &pool = stackPool();
  while (pool.size() <= index) {
    void *p = mmap(nullptr, kStackBytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
      return nullptr;
    pool.push_back(static_cast<char *>(p));
  }
  return pool[index];
}

void threadMain() {
  launch->function->entry(launch->params);
  current->wait = Wait::Done;
  // Returning resumes the scheduler (uc_link).
}

/// Suspends the current thread until the scheduler resumes it.
void yieldToScheduler() { swapcontext(&current->context, &launch->scheduler); }

unsigned argU32(const Thread &t, int i) {
  return static_cast<uint32_t>(t.args[i]);
}

/// shfl.sync on the lanes `warp` (all waiting at the same shuffle).
void shuffle(std::vector<Thread *> &warp, int op) {
  bool predicate = op >= TFC_EMU_SHFL_BFLY_I32P;
  int mode =
      (op - (predicate ? TFC_EMU_SHFL_BFLY_I32P : TFC_EMU_SHFL_BFLY_I32)) / 2;
  // bfly, idx, up, down, in the order of the table.
  std::vector<uint32_t> values(kWarp, 0);
  for (Thread *t : warp)
    values[t->linear % kWarp] = argU32(*t, 1);
  for (Thread *t : warp) {
    unsigned lane = t->linear % kWarp;
    unsigned b = argU32(*t, 2) & 0x1f, c = argU32(*t, 3);
    unsigned clamp = c & 0x1f, segmask = (c >> 8) & 0x1f;
    unsigned maxLane = (lane & segmask) | (clamp & ~segmask);
    unsigned minLane = lane & segmask;
    int j;
    bool in;
    switch (mode) {
    case 0:
      j = static_cast<int>(lane ^ b);
      in = j <= static_cast<int>(maxLane);
      break;
    case 1:
      j = static_cast<int>(minLane | (b & ~segmask));
      in = j <= static_cast<int>(maxLane);
      break;
    case 2:
      j = static_cast<int>(lane) - static_cast<int>(b);
      in = j >= static_cast<int>(maxLane);
      break;
    default:
      j = static_cast<int>(lane + b);
      in = j <= static_cast<int>(maxLane);
      break;
    }
    if (!in)
      j = static_cast<int>(lane);
    t->results[0] = values[j];
    if (predicate)
      t->results[1] = in ? 1 : 0;
  }
}

/// mma.sync.aligned.m16n8k{16,8}.row.col with f32 accumulators on `warp`:
/// the fragments of every lane put together as the PTX ISA lays them out
/// ("Matrix Fragments for mma.m16n8k16 / m16n8k8"), multiplied, and each
/// lane given its part of D.
void mma(std::vector<Thread *> &warp, int op) {
  bool tf32 = op == TFC_EMU_MMA_M16N8K8_TF32_F32;
  int k = tf32 ? 8 : 16;
  float a[16][16] = {}, b[16][8] = {}, c[16][8] = {};
  for (Thread *t : warp) {
    unsigned lane = t->linear % kWarp, g = lane >> 2, q = lane & 3;
    for (unsigned i = 0; i < 4; ++i) {
      uint32_t reg = argU32(*t, static_cast<int>(i));
      if (tf32) {
        a[g + 8 * (i & 1)][q + 4 * (i >> 1)] = tf32ToFloat(reg);
        continue;
      }
      for (unsigned h = 0; h < 2; ++h) {
        uint16_t bits = static_cast<uint16_t>(reg >> (16 * h));
        float v = op == TFC_EMU_MMA_M16N8K16_BF16_F32 ? bf16ToFloat(bits)
                                                      : halfToFloat(bits);
        a[g + 8 * (i & 1)][2 * q + h + 8 * (i >> 1)] = v;
      }
    }
    for (unsigned i = 0; i < 2; ++i) {
      uint32_t reg = argU32(*t, 4 + static_cast<int>(i));
      if (tf32) {
        b[q + 4 * i][g] = tf32ToFloat(reg);
        continue;
      }
      for (unsigned h = 0; h < 2; ++h) {
        uint16_t bits = static_cast<uint16_t>(reg >> (16 * h));
        b[2 * q + h + 8 * i][g] = op == TFC_EMU_MMA_M16N8K16_BF16_F32
                                      ? bf16ToFloat(bits)
                                      : halfToFloat(bits);
      }
    }
    for (unsigned i = 0; i < 4; ++i)
      c[g + 8 * (i >> 1)][2 * q + (i & 1)] =
          bitsToFloat(argU32(*t, 6 + static_cast<int>(i)));
  }
  for (Thread *t : warp) {
    unsigned lane = t->linear % kWarp, g = lane >> 2, q = lane & 3;
    for (unsigned i = 0; i < 4; ++i) {
      unsigned row = g + 8 * (i >> 1), col = 2 * q + (i & 1);
      double sum = c[row][col];
      for (int x = 0; x < k; ++x)
        sum += static_cast<double>(a[row][x]) * b[x][col];
      t->results[i] = floatToBits(static_cast<float>(sum));
    }
  }
}

bool isLdmatrix(int op) {
  return op >= TFC_EMU_LDMATRIX_X1 && op <= TFC_EMU_LDMATRIX_X4_TRANS;
}

/// ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].b16 on `warp`: matrix i's
/// 8 rows of 8 16-bit elements start at the addresses lanes 8i..8i+7 give;
/// lane L receives, of each matrix, row L/4 at columns 2(L%4), 2(L%4)+1 (or
/// with .trans the transposed matrix's: column L/4 at rows 2(L%4), +1).
/// A row address not on 16 bytes fails the launch, as on a GPU.
bool ldmatrix(std::vector<Thread *> &warp, int op) {
  bool trans = op >= TFC_EMU_LDMATRIX_X1_TRANS;
  int base = trans ? TFC_EMU_LDMATRIX_X1_TRANS : TFC_EMU_LDMATRIX_X1;
  unsigned count = 1u << (op - base);
  uint16_t m[4][8][8];
  for (Thread *t : warp) {
    unsigned lane = t->linear % kWarp;
    if (lane >= 8 * count)
      continue;
    if (t->args[0] % 16 != 0) {
      launch->error = std::string(tfc_emu_op_names[op]) + ": lane " +
                      std::to_string(lane) +
                      "'s row address is not 16-byte aligned";
      return false;
    }
    const auto *row =
        reinterpret_cast<const uint16_t *>(static_cast<uintptr_t>(t->args[0]));
    std::memcpy(m[lane / 8][lane % 8], row, 16);
  }
  for (Thread *t : warp) {
    unsigned lane = t->linear % kWarp, r = lane / 4, c = 2 * (lane % 4);
    for (unsigned i = 0; i < count; ++i) {
      uint16_t lo = trans ? m[i][c][r] : m[i][r][c];
      uint16_t hi = trans ? m[i][c + 1][r] : m[i][r][c + 1];
      t->results[i] = lo | (uint32_t(hi) << 16);
    }
  }
  return true;
}

/// Completes the collective operation every lane of `warp` waits at.
bool runCollective(std::vector<Thread *> &warp) {
  int op = warp.front()->op;
  for (Thread *t : warp)
    if (t->op != op) {
      launch->error = "the lanes of warp " +
                      std::to_string(warp.front()->linear / kWarp) +
                      " wait at different operations (" + tfc_emu_op_names[op] +
                      " and " + tfc_emu_op_names[t->op] + ")";
      return false;
    }
  if (op >= TFC_EMU_SHFL_BFLY_I32 && op <= TFC_EMU_SHFL_DOWN_F32P) {
    shuffle(warp, op);
  } else if (op == TFC_EMU_MMA_M16N8K16_F16_F32 ||
             op == TFC_EMU_MMA_M16N8K16_BF16_F32 ||
             op == TFC_EMU_MMA_M16N8K8_TF32_F32) {
    if (warp.size() != kWarp) {
      launch->error = std::string(tfc_emu_op_names[op]) + " in a warp of " +
                      std::to_string(warp.size()) +
                      " threads (mma.sync needs all 32)";
      return false;
    }
    mma(warp, op);
  } else if (isLdmatrix(op)) {
    if (warp.size() != kWarp) {
      launch->error = std::string(tfc_emu_op_names[op]) + " in a warp of " +
                      std::to_string(warp.size()) +
                      " threads (ldmatrix needs all 32)";
      return false;
    }
    if (!ldmatrix(warp, op))
      return false;
  } else {
    launch->error = std::string("internal error: ") + tfc_emu_op_names[op] +
                    " is not collective";
    return false;
  }
  for (Thread *t : warp)
    t->wait = Wait::None;
  return true;
}

/// Runs one block to completion; false with launch->error set.
bool runBlock(Launch &l) {
  size_t count = l.threads.size();
  for (size_t i = 0; i < count; ++i) {
    Thread &t = l.threads[i];
    t.wait = Wait::None;
    t.op = -1;
    t.pending.clear();
    t.groups.clear();
    getcontext(&t.context);
    t.context.uc_stack.ss_sp = t.stack;
    t.context.uc_stack.ss_size = kStackBytes;
    t.context.uc_link = &l.scheduler;
    makecontext(&t.context, threadMain, 0);
  }
  for (;;) {
    for (Thread &t : l.threads) {
      if (t.wait != Wait::None)
        continue;
      current = &t;
      swapcontext(&l.scheduler, &t.context);
    }
    current = nullptr;
    for (Thread &t : l.threads)
      if (t.wait == Wait::Failed)
        return false; // l.error says why
    // Everyone is done or waits: complete the warps that have arrived.
    bool done = true, released = false, allAtBarrier = true;
    std::vector<Thread *> lanes;
    for (size_t w = 0; w < count; w += kWarp) {
      lanes.clear();
      bool atWarp = false, atBarrier = false, exited = false;
      for (size_t i = w; i < std::min(count, w + kWarp); ++i) {
        Thread &t = l.threads[i];
        if (t.wait == Wait::Done) {
          exited = true;
          continue;
        }
        done = false;
        lanes.push_back(&t);
        atWarp |= t.wait == Wait::Warp;
        atBarrier |= t.wait == Wait::Barrier;
      }
      if (atWarp && atBarrier) {
        l.error = "in warp " + std::to_string(w / kWarp) +
                  ", some lanes wait at a barrier and others at " +
                  tfc_emu_op_names[lanes.front()->wait == Wait::Warp
                                       ? lanes.front()->op
                                       : lanes.back()->op];
        return false;
      }
      if (atWarp) {
        allAtBarrier = false;
        if (exited) {
          l.error = std::string("warp ") + std::to_string(w / kWarp) +
                    " reaches a collective operation with exited lanes";
          return false;
        }
        if (!runCollective(lanes))
          return false;
        released = true;
      }
    }
    if (done)
      return true;
    if (released)
      continue;
    if (allAtBarrier) {
      for (Thread &t : l.threads)
        if (t.wait == Wait::Barrier)
          t.wait = Wait::None;
      continue;
    }
    l.error = "deadlock";
    return false;
  }
}

void land(const std::vector<AsyncCopy> &copies) {
  for (const AsyncCopy &c : copies) {
    std::memcpy(c.to, c.src, c.from);
    std::memset(c.to + c.from, 0, c.bytes - c.from);
  }
}

/// A thread's cp.async; false (launch->error set) on a misaligned address
/// or a source size past the copy, which a GPU faults on.
bool asyncCopy(Thread &t, int op, const unsigned long long *args) {
  static const unsigned sizes[] = {4, 8, 16, 16};
  bool withSource = op >= TFC_EMU_CP_ASYNC_CA_4_S;
  unsigned bytes = sizes[(
      op - (withSource ? TFC_EMU_CP_ASYNC_CA_4_S : TFC_EMU_CP_ASYNC_CA_4))];
  unsigned from = withSource ? static_cast<uint32_t>(args[2]) : bytes;
  if (args[0] % bytes || args[1] % bytes || from > bytes) {
    launch->error = std::string(tfc_emu_op_names[op]) + " in thread " +
                    std::to_string(t.linear) +
                    (from > bytes ? ": source size past the copy"
                                  : ": address not aligned to the copy");
    return false;
  }
  t.pending.push_back({reinterpret_cast<char *>(args[0]),
                       reinterpret_cast<const char *>(args[1]), bytes, from});
  return true;
}

void handler(int op, const unsigned long long *args,
             unsigned long long *results) {
  Thread &t = *current;
  Launch &l = *launch;
  switch (op) {
  case TFC_EMU_TID_X:
  case TFC_EMU_TID_Y:
  case TFC_EMU_TID_Z:
    results[0] = t.tid[op - TFC_EMU_TID_X];
    return;
  case TFC_EMU_NTID_X:
  case TFC_EMU_NTID_Y:
  case TFC_EMU_NTID_Z:
    results[0] = l.block[op - TFC_EMU_NTID_X];
    return;
  case TFC_EMU_CTAID_X:
  case TFC_EMU_CTAID_Y:
  case TFC_EMU_CTAID_Z:
    results[0] = l.ctaid[op - TFC_EMU_CTAID_X];
    return;
  case TFC_EMU_NCTAID_X:
  case TFC_EMU_NCTAID_Y:
  case TFC_EMU_NCTAID_Z:
    results[0] = l.grid[op - TFC_EMU_NCTAID_X];
    return;
  case TFC_EMU_LANEID:
    results[0] = t.linear % kWarp;
    return;
  case TFC_EMU_WARPSIZE:
    results[0] = kWarp;
    return;
  case TFC_EMU_BARRIER0:
  case TFC_EMU_BARRIER_CTA_ALL:
  case TFC_EMU_BARRIER_CTA_ALL_UNALIGNED:
    t.wait = Wait::Barrier;
    yieldToScheduler();
    return;
  case TFC_EMU_CP_ASYNC_CA_4:
  case TFC_EMU_CP_ASYNC_CA_8:
  case TFC_EMU_CP_ASYNC_CA_16:
  case TFC_EMU_CP_ASYNC_CG_16:
  case TFC_EMU_CP_ASYNC_CA_4_S:
  case TFC_EMU_CP_ASYNC_CA_8_S:
  case TFC_EMU_CP_ASYNC_CA_16_S:
  case TFC_EMU_CP_ASYNC_CG_16_S:
    if (!asyncCopy(t, op, args)) {
      // The launch fails at the next collective point: stop this thread.
      t.wait = Wait::Failed;
      yieldToScheduler();
    }
    return;
  case TFC_EMU_CP_ASYNC_COMMIT_GROUP:
    t.groups.push_back(std::move(t.pending));
    t.pending.clear();
    return;
  case TFC_EMU_CP_ASYNC_WAIT_GROUP:
  case TFC_EMU_CP_ASYNC_WAIT_ALL: {
    size_t keep =
        op == TFC_EMU_CP_ASYNC_WAIT_ALL ? 0 : static_cast<uint32_t>(args[0]);
    if (op == TFC_EMU_CP_ASYNC_WAIT_ALL) {
      t.groups.push_back(std::move(t.pending));
      t.pending.clear();
    }
    while (t.groups.size() > keep) {
      land(t.groups.front());
      t.groups.erase(t.groups.begin());
    }
    return;
  }
  case TFC_EMU_F2TF32_RNA:
    results[0] = floatToTf32(bitsToFloat(static_cast<uint32_t>(args[0])));
    return;
  default:
    break;
  }
  // Warp-collective: deposit the operands, wait for the warp. The slot
  // arrays are the caller's, exactly as long as the operation's operands.
  bool isMma = op == TFC_EMU_MMA_M16N8K16_F16_F32 ||
               op == TFC_EMU_MMA_M16N8K16_BF16_F32 ||
               op == TFC_EMU_MMA_M16N8K8_TF32_F32;
  bool isShuffle = op >= TFC_EMU_SHFL_BFLY_I32 && op <= TFC_EMU_SHFL_DOWN_F32P;
  int argCount = isMma ? 10 : isShuffle ? 4 : 1;
  int resultCount = isMma       ? 4
                    : isShuffle ? (op >= TFC_EMU_SHFL_BFLY_I32P ? 2 : 1)
                                : 1 << ((op - TFC_EMU_LDMATRIX_X1) % 3);
  t.op = op;
  std::memcpy(t.args, args, sizeof(*args) * argCount);
  t.wait = Wait::Warp;
  yieldToScheduler();
  std::memcpy(results, t.results, sizeof(*results) * resultCount);
}

} // namespace

extern "C" {

int cuGetErrorName(int error, const char **out) {
  switch (error) {
  case kSuccess:
    *out = "CUDA_SUCCESS";
    break;
  case kInvalidValue:
    *out = "CUDA_ERROR_INVALID_VALUE";
    break;
  case kOutOfMemory:
    *out = "CUDA_ERROR_OUT_OF_MEMORY";
    break;
  case kInvalidImage:
    *out = "CUDA_ERROR_INVALID_IMAGE";
    break;
  case kNotFound:
    *out = "CUDA_ERROR_NOT_FOUND";
    break;
  case kLaunchFailed:
    *out = "CUDA_ERROR_LAUNCH_FAILED";
    break;
  default:
    *out = "CUDA_ERROR_UNKNOWN";
    break;
  }
  return kSuccess;
}

int cuGetErrorString(int, const char **out) {
  *out = lastError.empty() ? "CUDA emulator error" : lastError.c_str();
  return kSuccess;
}

int cuInit(unsigned) { return kSuccess; }
int cuDeviceGetCount(int *count) {
  *count = 1;
  return kSuccess;
}
int cuDeviceGet(int *device, int ordinal) {
  *device = ordinal;
  return ordinal == 0 ? kSuccess : kInvalidValue;
}
int cuDeviceGetAttribute(int *value, int attribute, int) {
  const char *cc = std::getenv("TFC_CUDA_EMULATOR_CC");
  int capability = cc ? std::atoi(cc) : 90;
  if (attribute == 75) // compute capability major
    *value = capability / 10;
  else if (attribute == 76) // minor
    *value = capability % 10;
  else
    *value = 0;
  return kSuccess;
}
int cuDeviceGetName(char *name, int length, int) {
  std::snprintf(name, static_cast<size_t>(length), "tfc CUDA emulator (CPU)");
  return kSuccess;
}
int cuDevicePrimaryCtxRetain(void **context, int) {
  static int dummy;
  *context = &dummy;
  return kSuccess;
}
int cuCtxSetCurrent(void *) { return kSuccess; }
int cuCtxSynchronize() { return kSuccess; }

int cuModuleLoadDataEx(void **module, const void *image, unsigned count,
                       int *options, void **values) {
  auto reject = [&](const std::string &why) {
    for (unsigned i = 0; i < count; ++i)
      if (options[i] == kJitErrorLogBuffer) {
        size_t size = 0;
        for (unsigned j = 0; j < count; ++j)
          if (options[j] == kJitErrorLogBufferSize)
            size = reinterpret_cast<uintptr_t>(values[j]);
        if (size)
          std::snprintf(static_cast<char *>(values[i]), size, "%s",
                        why.c_str());
      }
    return fail(kInvalidImage, why);
  };
  const char *bytes = static_cast<const char *>(image);
  if (!bytes ||
      std::memcmp(bytes, TFC_EMU_IMAGE_MAGIC, TFC_EMU_IMAGE_MAGIC_BYTES) != 0)
    return reject("the CUDA emulator runs models compiled with "
                  "--gpu-emulate; this image is PTX or cubin");
  uint64_t size = 0;
  for (int i = 0; i < 8; ++i)
    size |= uint64_t(static_cast<unsigned char>(
                bytes[TFC_EMU_IMAGE_MAGIC_BYTES + i]))
            << (8 * i);
  const char *elf = bytes + TFC_EMU_IMAGE_MAGIC_BYTES + 8;
  if (size < 4 || std::memcmp(elf,
                              "\x7f"
                              "ELF",
                              4) != 0)
    return reject("a malformed CUDA emulator image");
  auto m = std::make_unique<Module>();
  m->fd = memfd_create("tfc-emulated-kernels", MFD_CLOEXEC);
  if (m->fd < 0)
    return reject(std::string("memfd_create: ") + std::strerror(errno));
  for (uint64_t done = 0; done < size;) {
    ssize_t n = write(m->fd, elf + done, size - done);
    if (n <= 0) {
      close(m->fd);
      return reject(std::string("writing the kernels: ") +
                    std::strerror(errno));
    }
    done += static_cast<uint64_t>(n);
  }
  std::string path = "/proc/self/fd/" + std::to_string(m->fd);
  m->library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!m->library) {
    const char *why = dlerror();
    close(m->fd);
    return reject(std::string("loading the kernels: ") +
                  (why ? why : "dlopen failed"));
  }
  auto *slot = static_cast<tfc_emu_handler_fn *>(
      dlsym(m->library, TFC_EMU_HANDLER_SYMBOL));
  if (!slot) {
    dlclose(m->library);
    close(m->fd);
    return reject("the kernels lack " TFC_EMU_HANDLER_SYMBOL);
  }
  *slot = handler;
  *module = m.release();
  return kSuccess;
}

int cuModuleUnload(void *module) {
  auto *m = static_cast<Module *>(module);
  if (!m)
    return kInvalidValue;
  dlclose(m->library);
  close(m->fd);
  delete m;
  return kSuccess;
}

int cuModuleGetFunction(void **function, void *module, const char *name) {
  auto *m = static_cast<Module *>(module);
  if (!m || !name)
    return kInvalidValue;
  std::string symbol = std::string(TFC_EMU_KERNEL_PREFIX) + name;
  void *entry = dlsym(m->library, symbol.c_str());
  if (!entry)
    return fail(kNotFound, std::string("no kernel '") + name + "'");
  std::vector<size_t> params;
  std::string table = std::string(TFC_EMU_PARAMS_PREFIX) + name;
  auto *sizes =
      static_cast<const unsigned long long *>(dlsym(m->library, table.c_str()));
  if (sizes)
    params.assign(sizes + 1, sizes + 1 + sizes[0]);
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.functions.push_back(std::make_unique<Function>(
      Function{reinterpret_cast<tfc_emu_kernel_fn>(entry), name,
               std::move(params), sizes != nullptr}));
  *function = s.functions.back().get();
  return kSuccess;
}

static int runKernel(Function *fn, unsigned gx, unsigned gy, unsigned gz,
                     unsigned bx, unsigned by, unsigned bz, void **params);

int cuLaunchKernel(void *function, unsigned gx, unsigned gy, unsigned gz,
                   unsigned bx, unsigned by, unsigned bz, unsigned shared,
                   void *stream, void **params, void **extra) {
  auto *fn = static_cast<Function *>(function);
  uint64_t threads = uint64_t(bx) * by * bz;
  if (!fn || !gx || !gy || !gz || !bx || !by || !bz || threads > 1024 ||
      (!params && fn) || extra)
    return fail(kInvalidValue, "invalid launch configuration");
  if (shared)
    return fail(kInvalidValue, "the CUDA emulator has no dynamic shared "
                               "memory");
  if (auto *st = static_cast<Stream *>(stream); st && st->capture) {
    // Captured, not run: the parameters are copied, as the driver does.
    if (!fn->hasParams)
      return fail(kInvalidValue, "kernel '" + fn->name +
                                     "' has no parameter table to capture");
    Node node{fn, {gx, gy, gz}, {bx, by, bz}, {}};
    for (size_t i = 0; i < fn->params.size(); ++i) {
      const auto *p = static_cast<const uint8_t *>(params[i]);
      node.params.emplace_back(p, p + fn->params[i]);
    }
    st->capture->nodes.push_back(std::move(node));
    return kSuccess;
  }
  {
    State &s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    ++s.kernelLaunches;
  }
  return runKernel(fn, gx, gy, gz, bx, by, bz, params);
}

static int runKernel(Function *fn, unsigned gx, unsigned gy, unsigned gz,
                     unsigned bx, unsigned by, unsigned bz, void **params) {
  uint64_t threads = uint64_t(bx) * by * bz;
  // Shared memory is process-wide: one launch at a time.
  static std::mutex launchMutex;
  std::lock_guard<std::mutex> lock(launchMutex);
  Launch l;
  l.function = fn;
  l.params = params;
  l.grid[0] = gx, l.grid[1] = gy, l.grid[2] = gz;
  l.block[0] = bx, l.block[1] = by, l.block[2] = bz;
  l.threads.resize(threads);
  for (unsigned z = 0, i = 0; z < bz; ++z)
    for (unsigned y = 0; y < by; ++y)
      for (unsigned x = 0; x < bx; ++x, ++i) {
        Thread &t = l.threads[i];
        t.tid[0] = x, t.tid[1] = y, t.tid[2] = z;
        t.linear = i;
        t.stack = stackFor(i);
        if (!t.stack)
          return fail(kOutOfMemory, "no memory for the emulated threads");
      }
  Launch *outer = launch;
  launch = &l;
  bool ok = true;
  for (unsigned z = 0; ok && z < gz; ++z)
    for (unsigned y = 0; ok && y < gy; ++y)
      for (unsigned x = 0; ok && x < gx; ++x) {
        l.ctaid[0] = x, l.ctaid[1] = y, l.ctaid[2] = z;
        ok = runBlock(l);
      }
  launch = outer;
  if (!ok)
    return fail(kLaunchFailed, "kernel '" + fn->name + "' (block " +
                                   std::to_string(l.ctaid[0]) + "," +
                                   std::to_string(l.ctaid[1]) + "," +
                                   std::to_string(l.ctaid[2]) +
                                   "): " + l.error);
  return kSuccess;
}

void tfc_cuda_emulator_stats(unsigned long long out[5]) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  out[0] = s.kernelLaunches;
  out[1] = s.graphLaunches;
  out[2] = s.graphKernels;
  out[3] = s.captures;
  out[4] = s.updates;
}

int cuFuncGetParamInfo(void *function, size_t index, size_t *offset,
                       size_t *size) {
  auto *fn = static_cast<Function *>(function);
  if (fn && !fn->hasParams)
    return kNotFound; // an image without parameter tables
  if (!fn || index >= fn->params.size())
    return kInvalidValue; // past the last parameter: not an error to report
  size_t at = 0;
  for (size_t i = 0;; ++i) {
    size_t align = std::min<size_t>(fn->params[i], 8);
    at = (at + align - 1) / align * align;
    if (i == index)
      break;
    at += fn->params[i];
  }
  *offset = at;
  *size = fn->params[index];
  return kSuccess;
}

int cuStreamCreate(void **stream, unsigned) {
  *stream = new Stream;
  return kSuccess;
}
int cuStreamDestroy_v2(void *stream) {
  delete static_cast<Stream *>(stream);
  return kSuccess;
}
int cuStreamBeginCapture_v2(void *stream, int) {
  auto *st = static_cast<Stream *>(stream);
  if (!st || st->capture)
    return fail(kInvalidValue, "cuStreamBeginCapture: no stream, or "
                               "already capturing");
  st->capture = std::make_unique<Graph>();
  return kSuccess;
}
int cuStreamEndCapture(void *stream, void **graph) {
  auto *st = static_cast<Stream *>(stream);
  if (!st || !st->capture)
    return fail(kInvalidValue, "cuStreamEndCapture: not capturing");
  *graph = st->capture.release();
  return kSuccess;
}
int cuGraphInstantiateWithFlags(void **exec, void *graph, unsigned long long) {
  if (!graph)
    return kInvalidValue;
  *exec = new Graph(*static_cast<Graph *>(graph));
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  ++s.captures;
  return kSuccess;
}
/// As the driver's: an update keeps the graph's topology; each kernel
/// node may take other parameters and grid, not another function or block.
int cuGraphExecUpdate_v2(void *exec, void *graph, void *resultInfo) {
  auto *to = static_cast<Graph *>(exec);
  auto *from = static_cast<Graph *>(graph);
  if (!to || !from)
    return kInvalidValue;
  // CUgraphExecUpdateResultInfo's first field: 0 success, 2 topology
  // changed, 5 parameters changed beyond what an update may change.
  int *result = static_cast<int *>(resultInfo);
  bool same = to->nodes.size() == from->nodes.size();
  for (size_t i = 0; same && i < to->nodes.size(); ++i)
    same = to->nodes[i].function == from->nodes[i].function &&
           std::equal(to->nodes[i].block, to->nodes[i].block + 3,
                      from->nodes[i].block);
  if (!same || state().refuseUpdates) {
    if (result)
      *result = to->nodes.size() == from->nodes.size() ? 5 : 2;
    return fail(kGraphExecUpdateFailure,
                same ? "cuGraphExecUpdate: refused "
                       "(TFC_CUDA_EMULATOR_REFUSE_UPDATES)"
                     : "cuGraphExecUpdate: the graph's kernels or blocks "
                       "differ");
  }
  to->nodes = from->nodes;
  if (result)
    *result = 0;
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  ++s.updates;
  return kSuccess;
}
int cuGraphLaunch(void *exec, void *) {
  auto *g = static_cast<Graph *>(exec);
  if (!g)
    return kInvalidValue;
  {
    State &s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    ++s.graphLaunches;
    s.graphKernels += g->nodes.size();
  }
  for (Node &n : g->nodes) {
    std::vector<void *> params;
    for (std::vector<uint8_t> &p : n.params)
      params.push_back(p.data());
    int result = runKernel(n.function, n.grid[0], n.grid[1], n.grid[2],
                           n.block[0], n.block[1], n.block[2], params.data());
    if (result != kSuccess)
      return result;
  }
  return kSuccess;
}
int cuGraphExecDestroy(void *exec) {
  delete static_cast<Graph *>(exec);
  return kSuccess;
}
int cuGraphDestroy(void *graph) {
  delete static_cast<Graph *>(graph);
  return kSuccess;
}

int cuMemAlloc_v2(uint64_t *ptr, size_t bytes) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (bytes == 0)
    return fail(kInvalidValue, "cuMemAlloc of 0 bytes");
  if (s.live + bytes > s.limit)
    return fail(kOutOfMemory, "out of emulated device memory");
  void *p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (!p)
    return fail(kOutOfMemory, "out of host memory");
  s.allocations[reinterpret_cast<uintptr_t>(p)] = bytes;
  s.live += bytes;
  *ptr = reinterpret_cast<uintptr_t>(p);
  return kSuccess;
}

int cuMemFree_v2(uint64_t ptr) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto it = s.allocations.find(static_cast<uintptr_t>(ptr));
  if (it == s.allocations.end())
    return fail(kInvalidValue, "cuMemFree of an address it did not allocate");
  s.live -= it->second;
  std::free(reinterpret_cast<void *>(it->first));
  s.allocations.erase(it);
  return kSuccess;
}

int cuMemcpyHtoD_v2(uint64_t dst, const void *src, size_t bytes) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.valid(static_cast<uintptr_t>(dst), bytes))
    return fail(kInvalidValue, "cuMemcpyHtoD outside an allocation");
  std::memcpy(reinterpret_cast<void *>(dst), src, bytes);
  return kSuccess;
}

int cuMemcpyDtoH_v2(void *dst, uint64_t src, size_t bytes) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.valid(static_cast<uintptr_t>(src), bytes))
    return fail(kInvalidValue, "cuMemcpyDtoH outside an allocation");
  std::memcpy(dst, reinterpret_cast<const void *>(src), bytes);
  return kSuccess;
}

int cuEventCreate(void **event, unsigned) {
  *event = new Event{std::chrono::steady_clock::now()};
  return kSuccess;
}
int cuEventRecord(void *event, void *) {
  if (!event)
    return kInvalidValue;
  static_cast<Event *>(event)->at = std::chrono::steady_clock::now();
  return kSuccess;
}
int cuEventSynchronize(void *) { return kSuccess; }
int cuEventElapsedTime(float *ms, void *start, void *end) {
  if (!start || !end)
    return kInvalidValue;
  *ms = std::chrono::duration<float, std::milli>(
            static_cast<Event *>(end)->at - static_cast<Event *>(start)->at)
            .count();
  return kSuccess;
}
int cuEventDestroy_v2(void *event) {
  delete static_cast<Event *>(event);
  return kSuccess;
}

} // extern "C"
