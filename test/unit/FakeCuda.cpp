//===- FakeCuda.cpp - A stand-in libcuda for the runtime's tests ----------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Exports the CUDA driver API entry points libtfcrt uses, so that the whole
// host side of a CUDA model (driver discovery, PTX selection and loading,
// kernel lookup, weight upload, device memory planning, launches, copies,
// events) runs on machines without a GPU: `TFC_CUDA_DRIVER=<this .so>`.
// Kernels are not executed (launches are counted and their arguments
// checked), so outputs hold whatever device memory held.
//
// "Device" memory is host memory handed out at fake addresses far above any
// real mapping (from 0x7e0000000000): a host dereference of a device pointer
// faults instead of silently working. Copies translate the addresses and
// check they are inside a live allocation.
//
// Knobs (environment): FAKE_CUDA_CC (compute capability, default 90),
// FAKE_CUDA_MEMORY (bytes of device memory, default 8 GiB),
// FAKE_CUDA_REJECT_PTX (any value: module loads fail with a JIT log),
// FAKE_CUDA_STATS (a file: at exit, "launches N live_bytes B" is written).
//
//===----------------------------------------------------------------------===//

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace {

constexpr int kSuccess = 0, kInvalidValue = 1, kOutOfMemory = 2,
              kInvalidImage = 200, kNotFound = 500, kInvalidPtx = 218;
constexpr uint64_t kFakeBase = 0x7e0000000000ull;

struct Allocation {
  std::vector<unsigned char> bytes;
};

struct State {
  std::mutex mutex;
  std::map<uint64_t, Allocation> allocations; // by fake address
  uint64_t next = kFakeBase;
  uint64_t live = 0, limit = 0;
  uint64_t launches = 0;
  std::vector<std::string> modules; // PTX text per module handle - 1

  State() {
    const char *mem = std::getenv("FAKE_CUDA_MEMORY");
    limit = mem ? std::strtoull(mem, nullptr, 10) : (8ull << 30);
  }
  ~State() {
    if (const char *path = std::getenv("FAKE_CUDA_STATS"))
      if (FILE *f = std::fopen(path, "w")) {
        std::fprintf(f, "launches %llu live_bytes %llu\n",
                     static_cast<unsigned long long>(launches),
                     static_cast<unsigned long long>(live));
        std::fclose(f);
      }
  }

  /// The host bytes behind [addr, addr + size), or null.
  unsigned char *translate(uint64_t addr, size_t size) {
    auto it = allocations.upper_bound(addr);
    if (it == allocations.begin())
      return nullptr;
    --it;
    uint64_t offset = addr - it->first;
    if (offset + size > it->second.bytes.size())
      return nullptr;
    return it->second.bytes.data() + offset;
  }
};

State &state() {
  static State s;
  return s;
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
  case kInvalidPtx:
    *out = "CUDA_ERROR_INVALID_PTX";
    break;
  case kNotFound:
    *out = "CUDA_ERROR_NOT_FOUND";
    break;
  default:
    *out = "CUDA_ERROR_UNKNOWN";
    break;
  }
  return kSuccess;
}

int cuGetErrorString(int error, const char **out) {
  *out = error == kOutOfMemory ? "out of memory" : "fake driver error";
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
  const char *cc = std::getenv("FAKE_CUDA_CC");
  int capability = cc ? std::atoi(cc) : 90;
  if (attribute == 75)
    *value = capability / 10;
  else if (attribute == 76)
    *value = capability % 10;
  else
    *value = 0;
  return kSuccess;
}
int cuDeviceGetName(char *name, int length, int) {
  std::snprintf(name, length, "Fake GPU");
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
  const char *ptx = static_cast<const char *>(image);
  bool reject = std::getenv("FAKE_CUDA_REJECT_PTX") != nullptr ||
                !std::strstr(ptx, ".entry");
  if (reject) {
    for (unsigned i = 0; i < count; ++i)
      if (options[i] == 5) // CU_JIT_ERROR_LOG_BUFFER
        std::snprintf(static_cast<char *>(values[i]), 64,
                      "ptxas fatal   : fake rejection of the module");
    return kInvalidPtx;
  }
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.modules.emplace_back(ptx);
  *module = reinterpret_cast<void *>(s.modules.size());
  return kSuccess;
}

int cuModuleUnload(void *) { return kSuccess; }

int cuModuleGetFunction(void **function, void *module, const char *name) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  size_t index = reinterpret_cast<uintptr_t>(module);
  if (index == 0 || index > s.modules.size())
    return kInvalidValue;
  std::string entry = std::string(".entry ") + name + "(";
  if (s.modules[index - 1].find(entry) == std::string::npos)
    return kNotFound;
  *function = reinterpret_cast<void *>(index);
  return kSuccess;
}

int cuLaunchKernel(void *function, unsigned gx, unsigned gy, unsigned gz,
                   unsigned bx, unsigned by, unsigned bz, unsigned, void *,
                   void **params, void **) {
  if (!function || !gx || !gy || !gz || !bx || !by || !bz ||
      bx * by * bz > 1024 || !params)
    return kInvalidValue;
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  ++s.launches;
  return kSuccess;
}

int cuMemAlloc_v2(uint64_t *ptr, size_t bytes) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (bytes == 0)
    return kInvalidValue;
  if (s.live + bytes > s.limit)
    return kOutOfMemory;
  uint64_t addr = s.next;
  s.next += (bytes + 4095) / 4096 * 4096 + 4096; // a guard page between
  s.allocations[addr].bytes.assign(bytes, 0xAB);
  s.live += bytes;
  *ptr = addr;
  return kSuccess;
}

int cuMemFree_v2(uint64_t ptr) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto it = s.allocations.find(ptr);
  if (it == s.allocations.end())
    return kInvalidValue;
  s.live -= it->second.bytes.size();
  s.allocations.erase(it);
  return kSuccess;
}

int cuMemcpyHtoD_v2(uint64_t dst, const void *src, size_t bytes) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  unsigned char *to = s.translate(dst, bytes);
  if (!to)
    return kInvalidValue;
  std::memcpy(to, src, bytes);
  return kSuccess;
}

int cuMemcpyDtoH_v2(void *dst, uint64_t src, size_t bytes) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  unsigned char *from = s.translate(src, bytes);
  if (!from)
    return kInvalidValue;
  std::memcpy(dst, from, bytes);
  return kSuccess;
}

int cuEventCreate(void **event, unsigned) {
  *event = new int(0);
  return kSuccess;
}
int cuEventRecord(void *, void *) { return kSuccess; }
int cuEventSynchronize(void *) { return kSuccess; }
int cuEventElapsedTime(float *ms, void *, void *) {
  *ms = 0.5f;
  return kSuccess;
}
int cuEventDestroy_v2(void *event) {
  delete static_cast<int *>(event);
  return kSuccess;
}

} // extern "C"
