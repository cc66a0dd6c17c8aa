//===- CudaEmulatorTest.cpp - The CUDA emulator's warp operations ---------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Kernels written directly in the NVVM dialect, compiled for the emulator
// by tfc-emulate-gpu-modules and run by libtfc_cuda_emulator.so through the
// driver API, against what the PTX ISA defines: shfl.sync in its four modes
// with segment widths, mma.sync's fragment layouts (f16, bf16 m16n8k16 and
// tf32 m16n8k8) and ldmatrix with and without .trans, each computed here
// from the ISA's tables; cp.async copies landing only at their wait, zero
// filled past their source size; and the launch failures the emulator
// reports for what a GPU leaves undefined.
//
//===----------------------------------------------------------------------===//

#include "tfc/Schemas/CudaEmulatorABI.h"
#include "tfc/Target/NVPTX/NVPTXTarget.h"
#include "tfc/Target/NVPTX/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

/// The kernels, one gpu.module in the LLVM and NVVM dialects.
constexpr const char *kKernels = R"mlir(
module attributes {gpu.container_module} {
  gpu.module @k [#nvvm.target<chip = "sm_80">] {
    llvm.mlir.global internal @tile() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<256 x i16>

    // out[lane * 4 + i]: 10·lane shuffled four ways.
    llvm.func @shuffles(%out: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
      %lane = nvvm.read.ptx.sreg.tid.x : i32
      %all = llvm.mlir.constant(-1 : i32) : i32
      %c10 = llvm.mlir.constant(10 : i32) : i32
      %v = llvm.mul %lane, %c10 : i32
      %c2 = llvm.mlir.constant(2 : i32) : i32
      %c3 = llvm.mlir.constant(3 : i32) : i32
      %c4 = llvm.mlir.constant(4 : i32) : i32
      %c5 = llvm.mlir.constant(5 : i32) : i32
      %w32 = llvm.mlir.constant(31 : i32) : i32
      %w8 = llvm.mlir.constant(6151 : i32) : i32
      %up32 = llvm.mlir.constant(0 : i32) : i32
      %r0 = nvvm.shfl.sync bfly %all, %v, %c3, %w32 : i32 -> i32
      %r1 = nvvm.shfl.sync idx %all, %v, %c5, %w8 : i32 -> i32
      %r2 = nvvm.shfl.sync down %all, %v, %c2, %w8 : i32 -> i32
      %r3 = nvvm.shfl.sync up %all, %v, %c3, %up32 : i32 -> i32
      %base = llvm.mul %lane, %c4 : i32
      %p0 = llvm.getelementptr %out[%base] : (!llvm.ptr, i32) -> !llvm.ptr, i32
      llvm.store %r0, %p0 : i32, !llvm.ptr
      %p1 = llvm.getelementptr %p0[1] : (!llvm.ptr) -> !llvm.ptr, i32
      llvm.store %r1, %p1 : i32, !llvm.ptr
      %p2 = llvm.getelementptr %p0[2] : (!llvm.ptr) -> !llvm.ptr, i32
      llvm.store %r2, %p2 : i32, !llvm.ptr
      %p3 = llvm.getelementptr %p0[3] : (!llvm.ptr) -> !llvm.ptr, i32
      llvm.store %r3, %p3 : i32, !llvm.ptr
      llvm.return
    }

    // A lane's 10 words in[lane * 10 ..] are its A (4), B (2) and C (4)
    // registers; out[lane * 4 ..] its D.
    llvm.func @mma_f16(%in: !llvm.ptr, %out: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
      %lane = nvvm.read.ptx.sreg.tid.x : i32
      %c10 = llvm.mlir.constant(10 : i32) : i32
      %c4 = llvm.mlir.constant(4 : i32) : i32
      %ib = llvm.mul %lane, %c10 : i32
      %p = llvm.getelementptr %in[%ib] : (!llvm.ptr, i32) -> !llvm.ptr, i32
      %a0 = llvm.load %p : !llvm.ptr -> vector<2xf16>
      %pa1 = llvm.getelementptr %p[1] : (!llvm.ptr) -> !llvm.ptr, i32
      %a1 = llvm.load %pa1 : !llvm.ptr -> vector<2xf16>
      %pa2 = llvm.getelementptr %p[2] : (!llvm.ptr) -> !llvm.ptr, i32
      %a2 = llvm.load %pa2 : !llvm.ptr -> vector<2xf16>
      %pa3 = llvm.getelementptr %p[3] : (!llvm.ptr) -> !llvm.ptr, i32
      %a3 = llvm.load %pa3 : !llvm.ptr -> vector<2xf16>
      %pb0 = llvm.getelementptr %p[4] : (!llvm.ptr) -> !llvm.ptr, i32
      %b0 = llvm.load %pb0 : !llvm.ptr -> vector<2xf16>
      %pb1 = llvm.getelementptr %p[5] : (!llvm.ptr) -> !llvm.ptr, i32
      %b1 = llvm.load %pb1 : !llvm.ptr -> vector<2xf16>
      %pc0 = llvm.getelementptr %p[6] : (!llvm.ptr) -> !llvm.ptr, i32
      %c0v = llvm.load %pc0 : !llvm.ptr -> f32
      %pc1 = llvm.getelementptr %p[7] : (!llvm.ptr) -> !llvm.ptr, i32
      %c1v = llvm.load %pc1 : !llvm.ptr -> f32
      %pc2 = llvm.getelementptr %p[8] : (!llvm.ptr) -> !llvm.ptr, i32
      %c2v = llvm.load %pc2 : !llvm.ptr -> f32
      %pc3 = llvm.getelementptr %p[9] : (!llvm.ptr) -> !llvm.ptr, i32
      %c3v = llvm.load %pc3 : !llvm.ptr -> f32
      %d = nvvm.mma.sync A[%a0, %a1, %a2, %a3] B[%b0, %b1] C[%c0v, %c1v, %c2v, %c3v]
        {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>,
         shape = #nvvm.shape<m = 16, n = 8, k = 16>}
        : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
      %ob = llvm.mul %lane, %c4 : i32
      %q = llvm.getelementptr %out[%ob] : (!llvm.ptr, i32) -> !llvm.ptr, f32
      llvm.store %d, %q : !llvm.struct<(f32, f32, f32, f32)>, !llvm.ptr
      llvm.return
    }

    llvm.func @mma_bf16(%in: !llvm.ptr, %out: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
      %lane = nvvm.read.ptx.sreg.tid.x : i32
      %c10 = llvm.mlir.constant(10 : i32) : i32
      %c4 = llvm.mlir.constant(4 : i32) : i32
      %ib = llvm.mul %lane, %c10 : i32
      %p = llvm.getelementptr %in[%ib] : (!llvm.ptr, i32) -> !llvm.ptr, i32
      %w = llvm.load %p : !llvm.ptr -> !llvm.array<10 x i32>
      %a0 = llvm.extractvalue %w[0] : !llvm.array<10 x i32>
      %a1 = llvm.extractvalue %w[1] : !llvm.array<10 x i32>
      %a2 = llvm.extractvalue %w[2] : !llvm.array<10 x i32>
      %a3 = llvm.extractvalue %w[3] : !llvm.array<10 x i32>
      %b0 = llvm.extractvalue %w[4] : !llvm.array<10 x i32>
      %b1 = llvm.extractvalue %w[5] : !llvm.array<10 x i32>
      %pc = llvm.getelementptr %p[6] : (!llvm.ptr) -> !llvm.ptr, i32
      %c = llvm.load %pc : !llvm.ptr -> !llvm.array<4 x f32>
      %c0v = llvm.extractvalue %c[0] : !llvm.array<4 x f32>
      %c1v = llvm.extractvalue %c[1] : !llvm.array<4 x f32>
      %c2v = llvm.extractvalue %c[2] : !llvm.array<4 x f32>
      %c3v = llvm.extractvalue %c[3] : !llvm.array<4 x f32>
      %d = nvvm.mma.sync A[%a0, %a1, %a2, %a3] B[%b0, %b1] C[%c0v, %c1v, %c2v, %c3v]
        {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>,
         multiplicandAPtxType = #nvvm.mma_type<bf16>,
         multiplicandBPtxType = #nvvm.mma_type<bf16>,
         shape = #nvvm.shape<m = 16, n = 8, k = 16>}
        : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
      %ob = llvm.mul %lane, %c4 : i32
      %q = llvm.getelementptr %out[%ob] : (!llvm.ptr, i32) -> !llvm.ptr, f32
      llvm.store %d, %q : !llvm.struct<(f32, f32, f32, f32)>, !llvm.ptr
      llvm.return
    }

    llvm.func @mma_tf32(%in: !llvm.ptr, %out: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
      %lane = nvvm.read.ptx.sreg.tid.x : i32
      %c10 = llvm.mlir.constant(10 : i32) : i32
      %c4 = llvm.mlir.constant(4 : i32) : i32
      %ib = llvm.mul %lane, %c10 : i32
      %p = llvm.getelementptr %in[%ib] : (!llvm.ptr, i32) -> !llvm.ptr, i32
      %w = llvm.load %p : !llvm.ptr -> !llvm.array<10 x i32>
      %a0 = llvm.extractvalue %w[0] : !llvm.array<10 x i32>
      %a1 = llvm.extractvalue %w[1] : !llvm.array<10 x i32>
      %a2 = llvm.extractvalue %w[2] : !llvm.array<10 x i32>
      %a3 = llvm.extractvalue %w[3] : !llvm.array<10 x i32>
      %b0 = llvm.extractvalue %w[4] : !llvm.array<10 x i32>
      %b1 = llvm.extractvalue %w[5] : !llvm.array<10 x i32>
      %pc = llvm.getelementptr %p[6] : (!llvm.ptr) -> !llvm.ptr, i32
      %c = llvm.load %pc : !llvm.ptr -> !llvm.array<4 x f32>
      %c0v = llvm.extractvalue %c[0] : !llvm.array<4 x f32>
      %c1v = llvm.extractvalue %c[1] : !llvm.array<4 x f32>
      %c2v = llvm.extractvalue %c[2] : !llvm.array<4 x f32>
      %c3v = llvm.extractvalue %c[3] : !llvm.array<4 x f32>
      %d = nvvm.mma.sync A[%a0, %a1, %a2, %a3] B[%b0, %b1] C[%c0v, %c1v, %c2v, %c3v]
        {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>,
         multiplicandAPtxType = #nvvm.mma_type<tf32>,
         multiplicandBPtxType = #nvvm.mma_type<tf32>,
         shape = #nvvm.shape<m = 16, n = 8, k = 8>}
        : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
      %ob = llvm.mul %lane, %c4 : i32
      %q = llvm.getelementptr %out[%ob] : (!llvm.ptr, i32) -> !llvm.ptr, f32
      llvm.store %d, %q : !llvm.struct<(f32, f32, f32, f32)>, !llvm.ptr
      llvm.return
    }

    // in: four 8x8 matrices of 16-bit values, row-major one after the
    // other (32 rows of 8), staged in shared memory; lane L gives row L;
    // out[lane * 8 ..]: the four registers of ldmatrix.x4, then of .trans.
    llvm.func @ldmatrix(%in: !llvm.ptr, %out: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
      %lane = nvvm.read.ptx.sreg.tid.x : i32
      %c8 = llvm.mlir.constant(8 : i32) : i32
      %c4 = llvm.mlir.constant(4 : i32) : i32
      %rowAt = llvm.mul %lane, %c8 : i32
      %src = llvm.getelementptr %in[%rowAt] : (!llvm.ptr, i32) -> !llvm.ptr, i16
      %row = llvm.load %src : !llvm.ptr -> vector<8xi16>
      %tile = llvm.mlir.addressof @tile : !llvm.ptr<3>
      %dst = llvm.getelementptr %tile[%rowAt] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i16
      llvm.store %row, %dst : vector<8xi16>, !llvm.ptr<3>
      nvvm.barrier0
      %m = nvvm.ldmatrix %dst {num = 4 : i32, layout = #nvvm.mma_layout<row>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>, eltType = #nvvm.ld_st_matrix_elt_type<b16>} : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32, i32, i32)>
      %t = nvvm.ldmatrix %dst {num = 4 : i32, layout = #nvvm.mma_layout<col>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>, eltType = #nvvm.ld_st_matrix_elt_type<b16>} : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32, i32, i32)>
      %ob = llvm.mul %lane, %c8 : i32
      %q = llvm.getelementptr %out[%ob] : (!llvm.ptr, i32) -> !llvm.ptr, i32
      llvm.store %m, %q : !llvm.struct<(i32, i32, i32, i32)>, !llvm.ptr
      %q4 = llvm.getelementptr %q[4] : (!llvm.ptr) -> !llvm.ptr, i32
      llvm.store %t, %q4 : !llvm.struct<(i32, i32, i32, i32)>, !llvm.ptr
      llvm.return
    }

    // Lane L copies in[8L..8L+7] (16 bytes) to the tile's row L by
    // cp.async, odd lanes with a source size of 0 (zero fill); out[2L] is
    // the row's first word before the wait (a marker stored before the
    // copy), out[2L + 1] after it.
    llvm.func @async_copy(%in: !llvm.ptr<1>, %out: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
      %lane = nvvm.read.ptx.sreg.tid.x : i32
      %c0 = llvm.mlir.constant(0 : i32) : i32
      %c1 = llvm.mlir.constant(1 : i32) : i32
      %c2 = llvm.mlir.constant(2 : i32) : i32
      %c8 = llvm.mlir.constant(8 : i32) : i32
      %c16 = llvm.mlir.constant(16 : i32) : i32
      %marker = llvm.mlir.constant(-1 : i32) : i32
      %at = llvm.mul %lane, %c8 : i32
      %src = llvm.getelementptr %in[%at] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i16
      %tile = llvm.mlir.addressof @tile : !llvm.ptr<3>
      %dst = llvm.getelementptr %tile[%at] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i16
      llvm.store %marker, %dst : i32, !llvm.ptr<3>
      %odd = llvm.and %lane, %c1 : i32
      %isOdd = llvm.icmp "ne" %odd, %c0 : i32
      %size = llvm.select %isOdd, %c0, %c16 : i1, i32
      nvvm.cp.async.shared.global %dst, %src, 16, cache = cg, %size : !llvm.ptr<3>, !llvm.ptr<1>, i32
      nvvm.cp.async.commit.group
      %before = llvm.load %dst : !llvm.ptr<3> -> i32
      nvvm.cp.async.wait.group 0
      %after = llvm.load %dst : !llvm.ptr<3> -> i32
      %o = llvm.mul %lane, %c2 : i32
      %q = llvm.getelementptr %out[%o] : (!llvm.ptr, i32) -> !llvm.ptr, i32
      llvm.store %before, %q : i32, !llvm.ptr
      %q1 = llvm.getelementptr %q[1] : (!llvm.ptr) -> !llvm.ptr, i32
      llvm.store %after, %q1 : i32, !llvm.ptr
      llvm.return
    }

    // Lanes 0-15 shuffle while 16-31 wait at a barrier.
    llvm.func @divergent(%out: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
      %lane = nvvm.read.ptx.sreg.tid.x : i32
      %c16 = llvm.mlir.constant(16 : i32) : i32
      %all = llvm.mlir.constant(-1 : i32) : i32
      %c1 = llvm.mlir.constant(1 : i32) : i32
      %c31 = llvm.mlir.constant(31 : i32) : i32
      %low = llvm.icmp "ult" %lane, %c16 : i32
      llvm.cond_br %low, ^shuffle, ^barrier
    ^shuffle:
      %r = nvvm.shfl.sync bfly %all, %lane, %c1, %c31 : i32 -> i32
      llvm.store %r, %out : i32, !llvm.ptr
      llvm.return
    ^barrier:
      nvvm.barrier0
      llvm.return
    }

    // Lanes 16-31 return before the others shuffle with all 32.
    llvm.func @exited(%out: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
      %lane = nvvm.read.ptx.sreg.tid.x : i32
      %c16 = llvm.mlir.constant(16 : i32) : i32
      %all = llvm.mlir.constant(-1 : i32) : i32
      %c1 = llvm.mlir.constant(1 : i32) : i32
      %c31 = llvm.mlir.constant(31 : i32) : i32
      %low = llvm.icmp "ult" %lane, %c16 : i32
      llvm.cond_br %low, ^shuffle, ^done
    ^shuffle:
      %r = nvvm.shfl.sync bfly %all, %lane, %c1, %c31 : i32 -> i32
      llvm.store %r, %out : i32, !llvm.ptr
      llvm.return
    ^done:
      llvm.return
    }
  }
}
)mlir";

using LoadFn = int (*)(void **, const void *, unsigned, int *, void **);
using GetFunctionFn = int (*)(void **, void *, const char *);
using LaunchFn = int (*)(void *, unsigned, unsigned, unsigned, unsigned,
                         unsigned, unsigned, unsigned, void *, void **,
                         void **);
using ErrorStringFn = int (*)(int, const char **);

/// The emulator with the kernels above loaded.
class CudaEmulatorTest : public ::testing::Test {
public:
  static void SetUpTestSuite() {
    mlir::DialectRegistry registry;
    mlir::tfc::registerCudaTargetDialects(registry);
    mlir::MLIRContext context(registry);
    context.loadAllAvailableDialects();
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::parseSourceString<mlir::ModuleOp>(kKernels, &context);
    ASSERT_TRUE(module) << "the kernels do not parse";
    mlir::PassManager pm(&context);
    pm.addPass(mlir::tfc::createEmulateGpuModules());
    ASSERT_TRUE(mlir::succeeded(pm.run(*module)));
    for (auto binary : module->getOps<mlir::gpu::BinaryOp>())
      image() = mlir::cast<mlir::gpu::ObjectAttr>(binary.getObjects()[0])
                    .getObject()
                    .getValue()
                    .str();
    ASSERT_FALSE(image().empty());
    library() = dlopen(TFC_CUDA_EMULATOR, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(library(), nullptr) << dlerror();
  }

  void SetUp() override {
    void *lib = library();
    ASSERT_NE(lib, nullptr);
    load = reinterpret_cast<LoadFn>(dlsym(lib, "cuModuleLoadDataEx"));
    getFunction =
        reinterpret_cast<GetFunctionFn>(dlsym(lib, "cuModuleGetFunction"));
    launchKernel = reinterpret_cast<LaunchFn>(dlsym(lib, "cuLaunchKernel"));
    errorString =
        reinterpret_cast<ErrorStringFn>(dlsym(lib, "cuGetErrorString"));
    ASSERT_EQ(load(&module, image().data(), 0, nullptr, nullptr), 0);
  }

  static std::string &image() {
    static std::string bytes;
    return bytes;
  }
  static void *&library() {
    static void *handle = nullptr;
    return handle;
  }

  /// Runs kernel `name` on one warp with pointer arguments; the driver's
  /// status, and its message in `error` on failure.
  int run(const char *name, std::vector<void *> pointers,
          std::string *error = nullptr) {
    void *fn = nullptr;
    EXPECT_EQ(getFunction(&fn, module, name), 0) << name;
    std::vector<void *> params;
    for (void *&p : pointers)
      params.push_back(&p);
    int status =
        launchKernel(fn, 1, 1, 1, 32, 1, 1, 0, nullptr, params.data(), nullptr);
    if (status && error) {
      const char *message = nullptr;
      errorString(status, &message);
      *error = message ? message : "";
    }
    return status;
  }

  void *module = nullptr;
  LoadFn load = nullptr;
  GetFunctionFn getFunction = nullptr;
  LaunchFn launchKernel = nullptr;
  ErrorStringFn errorString = nullptr;
};

TEST_F(CudaEmulatorTest, ShufflesFollowThePtxIsa) {
  std::vector<int32_t> out(32 * 4, -1);
  ASSERT_EQ(run("shuffles", {out.data()}), 0);
  for (int lane = 0; lane < 32; ++lane) {
    int segment = lane & ~7;
    // __shfl_xor_sync(v, 3), __shfl_sync(v, 5, 8), __shfl_down_sync(v, 2,
    // 8) and __shfl_up_sync(v, 3): out-of-range sources keep the lane's own.
    int xorLane = lane ^ 3;
    int idxLane = segment | 5;
    int downLane = (lane % 8) + 2 < 8 ? lane + 2 : lane;
    int upLane = lane >= 3 ? lane - 3 : lane;
    EXPECT_EQ(out[lane * 4 + 0], 10 * xorLane) << "lane " << lane;
    EXPECT_EQ(out[lane * 4 + 1], 10 * idxLane) << "lane " << lane;
    EXPECT_EQ(out[lane * 4 + 2], 10 * downLane) << "lane " << lane;
    EXPECT_EQ(out[lane * 4 + 3], 10 * upLane) << "lane " << lane;
  }
}

uint16_t toHalf(float f) { // exact for the small integers used here
  if (f == 0.0f)
    return 0;
  int exponent;
  float mantissa = std::frexp(std::fabs(f), &exponent); // [0.5, 1)
  uint16_t bits = static_cast<uint16_t>(
      ((exponent + 14) << 10) | (static_cast<int>(mantissa * 2048) & 0x3ff));
  return f < 0 ? (bits | 0x8000) : bits;
}
uint16_t toBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return static_cast<uint16_t>(bits >> 16);
}
uint32_t toBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}

/// D = A·B + C on one warp, the fragments laid out as the PTX ISA's tables
/// define them ("Matrix Fragments for mma.m16n8k16 / mma.m16n8k8").
void checkMma(CudaEmulatorTest &test, const char *kernel, int k,
              int (CudaEmulatorTest::*run)(const char *, std::vector<void *>,
                                           std::string *)) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> small(-4, 4);
  std::vector<float> a(16 * k), b(k * 8), c(16 * 8);
  for (float &x : a)
    x = static_cast<float>(small(rng));
  for (float &x : b)
    x = static_cast<float>(small(rng));
  for (float &x : c)
    x = static_cast<float>(small(rng)) * 0.5f;
  bool tf32 = k == 8, bf16 = std::string(kernel) == "mma_bf16";
  auto pack = [&](float lo, float hi) {
    uint16_t l = bf16 ? toBf16(lo) : toHalf(lo),
             h = bf16 ? toBf16(hi) : toHalf(hi);
    return static_cast<uint32_t>(l) | (static_cast<uint32_t>(h) << 16);
  };
  std::vector<uint32_t> in(32 * 10);
  for (int lane = 0; lane < 32; ++lane) {
    int g = lane / 4, t = lane % 4;
    uint32_t *w = &in[lane * 10];
    for (int i = 0; i < 4; ++i) {
      int row = g + 8 * (i & 1);
      if (tf32)
        w[i] = toBits(a[row * k + t + 4 * (i >> 1)]);
      else
        w[i] = pack(a[row * k + 2 * t + 8 * (i >> 1)],
                    a[row * k + 2 * t + 1 + 8 * (i >> 1)]);
    }
    for (int i = 0; i < 2; ++i) {
      if (tf32)
        w[4 + i] = toBits(b[(t + 4 * i) * 8 + g]);
      else
        w[4 + i] =
            pack(b[(2 * t + 8 * i) * 8 + g], b[(2 * t + 1 + 8 * i) * 8 + g]);
    }
    for (int i = 0; i < 4; ++i)
      w[6 + i] = toBits(c[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)]);
  }
  std::vector<float> out(32 * 4, NAN);
  ASSERT_EQ((test.*run)(kernel, {in.data(), out.data()}, nullptr), 0);
  for (int lane = 0; lane < 32; ++lane) {
    int g = lane / 4, t = lane % 4;
    for (int i = 0; i < 4; ++i) {
      int row = g + 8 * (i >> 1), col = 2 * t + (i & 1);
      float want = c[row * 8 + col];
      for (int x = 0; x < k; ++x)
        want += a[row * k + x] * b[x * 8 + col];
      EXPECT_EQ(out[lane * 4 + i], want)
          << kernel << " lane " << lane << " D[" << row << "][" << col << "]";
    }
  }
}

TEST_F(CudaEmulatorTest, MmaFragmentsFollowThePtxIsa) {
  checkMma(*this, "mma_f16", 16, &CudaEmulatorTest::run);
  checkMma(*this, "mma_bf16", 16, &CudaEmulatorTest::run);
  checkMma(*this, "mma_tf32", 8, &CudaEmulatorTest::run);
}

TEST_F(CudaEmulatorTest, LdmatrixFollowsThePtxIsa) {
  std::vector<uint16_t> in(256);
  for (int i = 0; i < 256; ++i)
    in[i] = static_cast<uint16_t>(1000 + i);
  std::vector<uint32_t> out(32 * 8, 0);
  ASSERT_EQ(run("ldmatrix", {in.data(), out.data()}), 0);
  auto at = [&](int matrix, int row, int col) {
    return static_cast<uint32_t>(in[matrix * 64 + row * 8 + col]);
  };
  for (int lane = 0; lane < 32; ++lane) {
    int r = lane / 4, c = 2 * (lane % 4);
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(out[lane * 8 + i], at(i, r, c) | (at(i, r, c + 1) << 16))
          << "lane " << lane << " matrix " << i;
      EXPECT_EQ(out[lane * 8 + 4 + i], at(i, c, r) | (at(i, c + 1, r) << 16))
          << "lane " << lane << " matrix " << i << " (.trans)";
    }
  }
}

TEST_F(CudaEmulatorTest, AsyncCopiesLandAtTheirWait) {
  std::vector<uint16_t> in(256);
  for (int i = 0; i < 256; ++i)
    in[i] = static_cast<uint16_t>(3000 + i);
  std::vector<uint32_t> out(64, 7);
  ASSERT_EQ(run("async_copy", {in.data(), out.data()}), 0);
  for (int lane = 0; lane < 32; ++lane) {
    EXPECT_EQ(out[2 * lane], 0xffffffffu) << "lane " << lane << " before";
    uint32_t copied = in[8 * lane] | (uint32_t(in[8 * lane + 1]) << 16);
    EXPECT_EQ(out[2 * lane + 1], lane % 2 ? 0u : copied)
        << "lane " << lane << " after";
  }
}

TEST_F(CudaEmulatorTest, UndefinedWarpBehaviourFailsTheLaunch) {
  int32_t sink = 0;
  std::string error;
  EXPECT_EQ(run("divergent", {&sink}, &error), 719);
  EXPECT_NE(error.find("kernel 'divergent'"), std::string::npos) << error;
  EXPECT_NE(error.find("some lanes wait at a barrier and others at "
                       "llvm.nvvm.shfl.sync.bfly.i32"),
            std::string::npos)
      << error;
  EXPECT_EQ(run("exited", {&sink}, &error), 719);
  EXPECT_NE(error.find("collective operation with exited lanes"),
            std::string::npos)
      << error;
}

TEST_F(CudaEmulatorTest, RefusesPtx) {
  char log[256] = {0};
  int options[] = {5, 6};
  void *values[] = {log, reinterpret_cast<void *>(sizeof log)};
  void *ptxModule = nullptr;
  const char *ptx = ".version 8.0\n.target sm_80\n";
  EXPECT_EQ(load(&ptxModule, ptx, 2, options, values), 200);
  EXPECT_NE(std::string(log).find("--gpu-emulate"), std::string::npos) << log;
}

} // namespace
