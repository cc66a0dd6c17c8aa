//===- HostTarget.cpp - What this host's CPU can run ----------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// x86-64 features are read with CPUID and the OS-enabled register state with
// XGETBV (AVX needs the YMM state, AVX-512 the opmask and ZMM states, AMX the
// tile states), so the answer does not depend on the compiler's runtime
// library knowing a feature. On Linux a model using AMX also asks the kernel
// for permission to use tile data (arch_prctl), without which the first tile
// instruction faults. Features the table does not know are "unknown" and not
// held against a model. TFC_HOST_CPU masks the host down to an x86-64 level
// (include/tfc/Schemas/CpuLevels.h): a feature of the table outside the
// level is then absent.
//
//===----------------------------------------------------------------------===//

#include "tfc/Runtime/ModelMetadata.h"
#include "tfc/Schemas/CpuLevels.h"

#include <cstdlib>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

using namespace tfc::rt;

std::string_view tfc::rt::hostArchitecture() {
#if defined(__x86_64__)
  return "x86_64";
#elif defined(__aarch64__)
  return "aarch64";
#elif defined(__riscv) && __riscv_xlen == 64
  return "riscv64";
#else
  return "unknown";
#endif
}

namespace {

/// Whether the comma-separated `list` names `feature`.
bool listNames(std::string_view list, std::string_view feature) {
  while (!list.empty()) {
    size_t comma = list.find(',');
    if (list.substr(0, comma) == feature)
      return true;
    if (comma == std::string_view::npos)
      break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

/// The level TFC_HOST_CPU names (null when unset or empty), or `invalid`
/// set when it names none. Read once: the environment of a running process
/// is not expected to change what its CPU is.
struct HostMask {
  const tfc_cpu_level *level = nullptr;
  std::string invalid;
};

const HostMask &hostMask() {
  static const HostMask mask = [] {
    HostMask m;
    const char *value = std::getenv(TFC_HOST_CPU_ENV);
    if (!value || !*value)
      return m;
    m.level = tfc_cpu_level_named(value);
    if (!m.level)
      m.invalid = value;
    return m;
  }();
  return mask;
}

} // namespace

std::string tfc::rt::hostMaskError() {
  const HostMask &mask = hostMask();
  if (mask.invalid.empty())
    return "";
  return std::string(TFC_HOST_CPU_ENV) + "='" + mask.invalid +
         "' is not an x86-64 level (expected one of " TFC_CPU_LEVEL_NAMES ")";
}

std::string_view tfc::rt::hostMaskLevel() {
  const HostMask &mask = hostMask();
  return mask.level ? mask.level->name : "";
}

#if defined(__x86_64__)

namespace {

enum Reg { EAX, EBX, ECX, EDX };
/// The OS must have enabled these XCR0 state components.
enum State { None, Avx, Avx512, Amx };

struct X86Feature {
  const char *name;
  unsigned leaf, subleaf;
  Reg reg;
  unsigned bit;
  State state;
};

// LLVM's names of the features a backend may use.
const X86Feature kX86Features[] = {
    {"sse", 1, 0, EDX, 25, None},
    {"sse2", 1, 0, EDX, 26, None},
    {"sse3", 1, 0, ECX, 0, None},
    {"pclmul", 1, 0, ECX, 1, None},
    {"ssse3", 1, 0, ECX, 9, None},
    {"fma", 1, 0, ECX, 12, Avx},
    {"cx16", 1, 0, ECX, 13, None},
    {"sse4.1", 1, 0, ECX, 19, None},
    {"sse4.2", 1, 0, ECX, 20, None},
    {"movbe", 1, 0, ECX, 22, None},
    {"popcnt", 1, 0, ECX, 23, None},
    {"aes", 1, 0, ECX, 25, None},
    {"xsave", 1, 0, ECX, 26, None},
    {"avx", 1, 0, ECX, 28, Avx},
    {"f16c", 1, 0, ECX, 29, Avx},
    {"rdrnd", 1, 0, ECX, 30, None},
    {"bmi", 7, 0, EBX, 3, None},
    {"avx2", 7, 0, EBX, 5, Avx},
    {"bmi2", 7, 0, EBX, 8, None},
    {"avx512f", 7, 0, EBX, 16, Avx512},
    {"avx512dq", 7, 0, EBX, 17, Avx512},
    {"rdseed", 7, 0, EBX, 18, None},
    {"adx", 7, 0, EBX, 19, None},
    {"avx512ifma", 7, 0, EBX, 21, Avx512},
    {"avx512cd", 7, 0, EBX, 28, Avx512},
    {"sha", 7, 0, EBX, 29, None},
    {"avx512bw", 7, 0, EBX, 30, Avx512},
    {"avx512vl", 7, 0, EBX, 31, Avx512},
    {"avx512vbmi", 7, 0, ECX, 1, Avx512},
    {"avx512vbmi2", 7, 0, ECX, 6, Avx512},
    {"gfni", 7, 0, ECX, 8, None},
    {"vaes", 7, 0, ECX, 9, Avx},
    {"vpclmulqdq", 7, 0, ECX, 10, Avx},
    {"avx512vnni", 7, 0, ECX, 11, Avx512},
    {"avx512bitalg", 7, 0, ECX, 12, Avx512},
    {"avx512vpopcntdq", 7, 0, ECX, 14, Avx512},
    {"avx512vp2intersect", 7, 0, EDX, 8, Avx512},
    {"amx-bf16", 7, 0, EDX, 22, Amx},
    {"avx512fp16", 7, 0, EDX, 23, Avx512},
    {"amx-tile", 7, 0, EDX, 24, Amx},
    {"amx-int8", 7, 0, EDX, 25, Amx},
    {"avxvnni", 7, 1, EAX, 4, Avx},
    {"avx512bf16", 7, 1, EAX, 5, Avx512},
    {"amx-fp16", 7, 1, EAX, 21, Amx},
    {"avxifma", 7, 1, EAX, 23, Avx},
    {"avxvnniint8", 7, 1, EDX, 4, Avx},
    {"avxneconvert", 7, 1, EDX, 5, Avx},
    {"lzcnt", 0x80000001, 0, ECX, 5, None},
    {"prfchw", 0x80000001, 0, ECX, 8, None},
};

bool cpuid(unsigned leaf, unsigned subleaf, unsigned regs[4]) {
  unsigned maxLeaf = __get_cpuid_max(leaf & 0x80000000u, nullptr);
  if (maxLeaf < leaf)
    return false;
  __cpuid_count(leaf, subleaf, regs[0], regs[1], regs[2], regs[3]);
  return true;
}

/// XCR0, or 0 when the OS does not use XSAVE.
uint64_t xcr0() {
  unsigned regs[4];
  if (!cpuid(1, 0, regs) || !(regs[ECX] & (1u << 27))) // OSXSAVE
    return 0;
  unsigned lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

bool stateEnabled(State state) {
  uint64_t x = xcr0();
  switch (state) {
  case None:
    return true;
  case Avx:
    return (x & 0x6) == 0x6; // SSE, AVX
  case Avx512:
    return (x & 0xE6) == 0xE6; // + opmask, ZMM_Hi256, Hi16_ZMM
  case Amx:
    return (x & 0x60000) == 0x60000; // XTILECFG, XTILEDATA
  }
  return false;
}

} // namespace

std::vector<std::string_view> tfc::rt::testableHostFeatures() {
  std::vector<std::string_view> out;
  for (const X86Feature &f : kX86Features)
    out.push_back(f.name);
  return out;
}

FeatureSupport tfc::rt::hostHasFeature(std::string_view feature) {
  for (const X86Feature &f : kX86Features) {
    if (feature != f.name)
      continue;
    const HostMask &mask = hostMask();
    if (mask.level && !listNames(mask.level->features, feature))
      return FeatureSupport::No;
    unsigned regs[4];
    if (!cpuid(f.leaf, f.subleaf, regs) || !(regs[f.reg] & (1u << f.bit)))
      return FeatureSupport::No;
    return stateEnabled(f.state) ? FeatureSupport::Yes : FeatureSupport::No;
  }
  if (feature == "64bit" || feature == "cmov" || feature == "cx8" ||
      feature == "fxsr" || feature == "mmx")
    return FeatureSupport::Yes; // every x86-64 CPU
  return FeatureSupport::Unknown;
}

#else

std::vector<std::string_view> tfc::rt::testableHostFeatures() { return {}; }

FeatureSupport tfc::rt::hostHasFeature(std::string_view) {
  return FeatureSupport::Unknown;
}

#endif

std::string tfc::rt::checkHostTarget(const TargetSpec &target) {
  std::string masked = hostMaskError();
  if (!masked.empty())
    return masked;
  std::string error = checkTarget(target, hostArchitecture(), hostHasFeature);
  if (!error.empty())
    return error;
#if defined(__linux__) && defined(__x86_64__)
  if (target.features.find("+amx-") != std::string::npos) {
    const long kArchReqXcompPerm = 0x1023, kXFeatureXTileData = 18;
    if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXFeatureXTileData) != 0)
      return "the model uses AMX, but the kernel refused permission to use "
             "AMX tile data";
  }
#endif
  return "";
}
