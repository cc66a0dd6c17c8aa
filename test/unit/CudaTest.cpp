//===- CudaTest.cpp - The runtime's CUDA driver layer ---------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The error paths of the CUDA layer: no driver (forced with
// TFC_CUDA_DRIVER, so the test means the same on every machine), PTX the
// driver rejects (the JIT log must be in the message) and an allocation
// the device cannot satisfy. The last two need a GPU and skip without one.
// gtest_discover_tests runs each test in its own process, so the driver
// singleton starts fresh in each.
//
//===----------------------------------------------------------------------===//

#include "tfc/Runtime/Cuda.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <dlfcn.h>

using namespace tfc::rt::cuda;

namespace {

bool haveRealDriver() {
  if (const char *forced = std::getenv("TFC_CUDA_DRIVER"); forced && *forced)
    return false;
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h)
    return false;
  dlclose(h);
  std::string error;
  return Driver::get(error) != nullptr;
}

TEST(CudaTest, NoDriverIsAClearErrorAndIsRemembered) {
  ASSERT_EQ(setenv("TFC_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1), 0);
  std::string error;
  EXPECT_EQ(Driver::get(error), nullptr);
  EXPECT_NE(error.find("no CUDA driver found: cannot load "
                       "/nonexistent/libcuda.so.1"),
            std::string::npos)
      << error;
  std::string again;
  EXPECT_EQ(Driver::get(again), nullptr);
  EXPECT_EQ(again, error);
  unsetenv("TFC_CUDA_DRIVER");
}

TEST(CudaTest, SelectsTheNewestArchTheDeviceRuns) {
  std::vector<std::string> archs = {"sm_80", "sm_90"};
  EXPECT_EQ(selectArch(archs, 90), 1);  // H100
  EXPECT_EQ(selectArch(archs, 89), 0);  // Ada runs sm_80 code
  EXPECT_EQ(selectArch(archs, 120), 1); // newer GPUs JIT the newest PTX
  EXPECT_EQ(selectArch(archs, 75), -1); // Turing runs neither
  EXPECT_EQ(selectArch({"sm_90", "sm_80"}, 86), 1);
  EXPECT_EQ(selectArch({"bogus", ""}, 90), -1);
}

TEST(CudaTest, ArchSpecificAndFamilyCodeRunsWhereItMay) {
  std::vector<std::string> archs = {"sm_80", "sm_90", "sm_90a"};
  EXPECT_EQ(selectArch(archs, 90), 2);  // H100: Hopper's own features
  EXPECT_EQ(selectArch(archs, 100), 1); // Blackwell cannot run sm_90a
  EXPECT_EQ(selectArch(archs, 89), 0);
  EXPECT_EQ(selectArch({"sm_90a", "sm_90"}, 90), 0);
  EXPECT_EQ(selectArch({"sm_90a"}, 100), -1);
  EXPECT_EQ(selectArch({"sm_90a"}, 89), -1);
  // sm_100f runs on 10.x from 10.0 on, not on 12.0.
  EXPECT_EQ(selectArch({"sm_90", "sm_100f"}, 103), 1);
  EXPECT_EQ(selectArch({"sm_90", "sm_100f"}, 120), 0);
  EXPECT_EQ(selectArch({"sm_100", "sm_100f", "sm_100a"}, 100), 2);
  EXPECT_EQ(selectArch({"sm_100", "sm_100f", "sm_100a"}, 103), 1);
  EXPECT_EQ(selectArch({"sm_90b", "sm_", "sm_x90", "sm_90af"}, 90), -1);
}

TEST(CudaTest, BadPtxReportsTheJitLog) {
  if (!haveRealDriver())
    GTEST_SKIP() << "no CUDA driver on this machine";
  std::string error;
  Driver *driver = Driver::get(error);
  CUmodule module = nullptr;
  const char *ptx = ".version 8.0\n.target sm_80\n.address_size 64\n"
                    ".visible .entry k() { this is not ptx; }\n";
  EXPECT_FALSE(driver->loadModule(ptx, module, error));
  EXPECT_NE(error.find("cuModuleLoadDataEx failed"), std::string::npos)
      << error;
  EXPECT_NE(error.find("JIT log"), std::string::npos) << error;
}

TEST(CudaTest, OutOfMemoryIsAnError) {
  if (!haveRealDriver())
    GTEST_SKIP() << "no CUDA driver on this machine";
  std::string error;
  Driver *driver = Driver::get(error);
  CUdeviceptr ptr = 0;
  EXPECT_FALSE(driver->allocate(size_t(1) << 60, ptr, error));
  EXPECT_EQ(ptr, 0u);
  EXPECT_NE(error.find("cuMemAlloc failed"), std::string::npos) << error;
}

} // namespace
