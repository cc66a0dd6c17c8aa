//===- CudaGraphsTest.cpp - CUDA Graphs of the runtime, emulated ----------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// A model compiled for the CUDA emulator (--gpu-emulate) run through the C
// API with inputs that change from run to run: once its launches repeat,
// the runtime captures them as a graph and replays it (CudaState::
// finishRun), and every replay must compute its own inputs' outputs, not
// the last run's (the buffers are the same from run to run).
//
//===----------------------------------------------------------------------===//

#include "tfc/Compiler/Compiler.h"
#include "tfc/Runtime/tfc.h"
#include "tfc/Schemas/CudaEmulatorABI.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <dlfcn.h>
#include <string>
#include <vector>

using namespace tfc;

namespace {

constexpr const char *kModel = R"(dim rows
entry f(a: [rows, 40], c: [40, 72]) {
  y = softmax(a @ c)
  return y
}
)";

std::vector<float> run(tfc_model *m, std::vector<float> &a,
                       std::vector<float> &c, int64_t rows) {
  tfc_tensor in[2] = {{TFC_F32, 2, {rows, 40}, a.data(), nullptr},
                      {TFC_F32, 2, {40, 72}, c.data(), nullptr}};
  tfc_tensor out;
  if (tfc_run(m, "f", in, 2, &out, 1) != TFC_OK) {
    ADD_FAILURE() << tfc_last_error();
    return {};
  }
  const float *p = static_cast<const float *>(out.data);
  std::vector<float> y(p, p + rows * 72);
  tfc_tensor_release(&out);
  return y;
}

TEST(CudaGraphs, ReplaysComputeTheirOwnInputs) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("tfc-graphs", dir));
  std::string source = (dir + "/m.tfm").str(), lib = (dir + "/m.so").str();
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(source, ec);
    ASSERT_FALSE(ec);
    os << kModel;
  }
  compiler::CompileOptions options;
  options.target = "cuda";
  options.gpuEmulate = true;
  compiler::Session session(options);
  ASSERT_TRUE(mlir::succeeded(session.load(source))) << session.error();
  ASSERT_TRUE(mlir::succeeded(session.emit(compiler::stageForOutput(lib), lib)))
      << session.error();

  setenv("TFC_CUDA_DRIVER", TFC_CUDA_EMULATOR, 1);
  unsetenv("TFC_CUDA_GRAPHS");
  tfc_model *m = nullptr;
  ASSERT_EQ(tfc_model_load(lib.c_str(), &m), TFC_OK) << tfc_last_error();
  void *emulator = dlopen(TFC_CUDA_EMULATOR, RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(emulator, nullptr);
  auto stats = reinterpret_cast<void (*)(unsigned long long *)>(
      dlsym(emulator, TFC_EMU_STATS_SYMBOL));
  ASSERT_NE(stats, nullptr);
  unsigned long long before[5], after[5];
  stats(before);

  // Two input sets of 37 rows (the same launches), alternating.
  std::vector<float> a[2], c[2];
  for (int k = 0; k < 2; ++k) {
    for (int i = 0; i < 37 * 40; ++i)
      a[k].push_back(static_cast<float>((i * (k + 3)) % 17) / 8.0f - 1.0f);
    for (int i = 0; i < 40 * 72; ++i)
      c[k].push_back(static_cast<float>((i * (k + 5)) % 13) / 6.0f - 1.0f);
  }
  std::vector<float> first[2];
  for (int r = 0; r < 8; ++r) {
    int k = r % 2;
    std::vector<float> y = run(m, a[k], c[k], 37);
    ASSERT_EQ(y.size(), 37u * 72u);
    if (r < 2)
      first[k] = y;
    else
      ASSERT_EQ(y, first[k]) << "run " << r << " (input set " << k << ")";
  }
  EXPECT_NE(first[0], first[1]);
  stats(after);
  // Runs 1-2 kernel by kernel, 3 captures, 3-8 replay.
  EXPECT_EQ(after[3] - before[3], 1u);
  EXPECT_EQ(after[1] - before[1], 6u);
  // Another shape: its own launches, then its own graph.
  for (int r = 0; r < 3; ++r)
    run(m, a[0], c[0], 20);
  stats(after);
  EXPECT_EQ(after[3] - before[3], 2u);
  // Identical launches replay: nothing was updated.
  EXPECT_EQ(after[4] - before[4], 0u);
  tfc_model_free(m);
  dlclose(emulator);
  llvm::sys::fs::remove_directories(dir);
}

} // namespace
