/*===- CpuLevels.h - The x86-64 levels the compiler and runtime share -----===*\
|*                                                                            *|
|* Part of tfc, a transformer compiler on MLIR.                               *|
|*                                                                            *|
|* The x86-64 psABI micro-architecture levels (x86-64, x86-64-v2, -v3, -v4)   *|
|* with the instruction-set features each implies, as LLVM names them, and    *|
|* the environment variable TFC_HOST_CPU that masks the host down to one of   *|
|* them. The compiler (lib/Target/Host/Emit.cpp: the host it compiles for)    *|
|* and the runtime (lib/Runtime/HostTarget.cpp: what it lets a model run)     *|
|* both read this table, so that a masked host means the same thing to both.  *|
|* No includes, C and C++ alike, in the manner of IREE's cpu_data.h.          *|
|*                                                                            *|
|* TFC_HOST_CPU=x86-64-v3 makes an AVX-512 machine behave as an AVX2 one:     *|
|* tfc-compile compiles for x86-64-v3 where it would compile for the host     *|
|* (the level's features, this machine's caches), and                         *|
|* the runtime refuses code and picks CPU variants as a host without the      *|
|* level's missing features would. It only takes features away: a level the   *|
|* host does not reach leaves the host's own missing features missing. The    *|
|* test command runs the suite so on AVX-512 hosts (docs/testing.md).         *|
|*                                                                            *|
|* Each list is complete (a level's own features and those of the levels      *|
|* below it), sorted, comma-separated, and names every feature of the         *|
|* runtime's CPUID table (HostTarget.cpp) that LLVM's definition of the level *|
|* implies; test/unit/CompilerTest.cpp checks the lists against LLVM's.       *|
\*===----------------------------------------------------------------------===*/

#ifndef TFC_SCHEMAS_CPULEVELS_H
#define TFC_SCHEMAS_CPULEVELS_H

/* The environment variable that masks the host CPU to a level. */
#define TFC_HOST_CPU_ENV "TFC_HOST_CPU"

#define TFC_X86_64_V1_FEATURES "64bit,cmov,cx8,fxsr,mmx,sse,sse2"
#define TFC_X86_64_V2_FEATURES                                                 \
  TFC_X86_64_V1_FEATURES ",cx16,popcnt,sahf,sse3,sse4.1,sse4.2,ssse3"
#define TFC_X86_64_V3_FEATURES                                                 \
  TFC_X86_64_V2_FEATURES ",avx,avx2,bmi,bmi2,f16c,fma,lzcnt,movbe,xsave"
#define TFC_X86_64_V4_FEATURES                                                 \
  TFC_X86_64_V3_FEATURES ",avx512bw,avx512cd,avx512dq,avx512f,avx512vl"

struct tfc_cpu_level {
  const char *name;     /* LLVM's CPU name of the level */
  const char *features; /* every feature it implies, comma-separated */
};

static const struct tfc_cpu_level tfc_cpu_levels[] = {
    {"x86-64", TFC_X86_64_V1_FEATURES},
    {"x86-64-v2", TFC_X86_64_V2_FEATURES},
    {"x86-64-v3", TFC_X86_64_V3_FEATURES},
    {"x86-64-v4", TFC_X86_64_V4_FEATURES},
};

#define TFC_CPU_LEVEL_COUNT                                                    \
  (sizeof(tfc_cpu_levels) / sizeof(tfc_cpu_levels[0]))
#define TFC_CPU_LEVEL_NAMES "x86-64, x86-64-v2, x86-64-v3, x86-64-v4"

/* The level called `name`, or null (also for a null name). */
static inline const struct tfc_cpu_level *tfc_cpu_level_named(const char *name) {
  unsigned i;
  for (i = 0; name && i < TFC_CPU_LEVEL_COUNT; ++i) {
    const char *a = name, *b = tfc_cpu_levels[i].name;
    while (*a && *a == *b)
      ++a, ++b;
    if (*a == *b)
      return &tfc_cpu_levels[i];
  }
  return 0;
}

#endif /* TFC_SCHEMAS_CPULEVELS_H */
