//===- CompilerTest.cpp - The compiler library ----------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The pipeline of include/tfc/Compiler/Compiler.h driven without the
// command line: a description to the fused tfc dialect and to a model
// library, and the errors it gives instead.
//
//===----------------------------------------------------------------------===//

#include "tfc/Compiler/Compiler.h"
#include "tfc/Compiler/Targets.h"
#include "tfc/Runtime/ModelMetadata.h"
#include "tfc/Schemas/CpuLevels.h"
#include "tfc/Target/Host/HostTarget.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace tfc::compiler;

namespace {

/// A scratch directory with one description in it, removed at the end.
struct Scratch {
  llvm::SmallString<128> dir;
  Scratch() { llvm::sys::fs::createUniqueDirectory("tfc-compiler-test", dir); }
  ~Scratch() { llvm::sys::fs::remove_directories(dir); }
  std::string file(llvm::StringRef name, llvm::StringRef text = "") {
    llvm::SmallString<128> p(dir);
    llvm::sys::path::append(p, name);
    if (!text.empty()) {
      std::error_code ec;
      llvm::raw_fd_ostream os(p, ec);
      os << text;
    }
    return std::string(p);
  }
};

constexpr const char *kModel = R"(
const d = 16
dim batch, seq
entry forward(x: [batch, seq, d]) {
  weight w: [d, d] = "w"
  y = softmax(linear(x, w))
  return y
}
)";

TEST(CompilerTest, DescriptionToFusedIR) {
  Scratch s;
  CompileOptions options;
  options.defines = {"d=8"};
  Session session(options);
  ASSERT_TRUE(mlir::succeeded(session.load(s.file("m.tfm", kModel))))
      << session.error();
  ASSERT_TRUE(mlir::succeeded(session.lower(Stage::Fused))) << session.error();
  std::string ir;
  llvm::raw_string_ostream os(ir);
  session.module().print(os);
  EXPECT_NE(ir.find("tfc.softmax"), std::string::npos) << ir;
  EXPECT_NE(ir.find("tensor<8x8xf32>"), std::string::npos) << ir;
}

TEST(CompilerTest, DescriptionToLibrary) {
  Scratch s;
  Session session(CompileOptions{});
  std::string lib = s.file("m.so");
  ASSERT_TRUE(mlir::succeeded(session.load(s.file("m.tfm", kModel))));
  ASSERT_TRUE(mlir::succeeded(session.emit(stageForOutput(lib), lib)))
      << session.error();
  uint64_t size = 0;
  ASSERT_FALSE(llvm::sys::fs::file_size(lib, size));
  EXPECT_GT(size, 1000u);
}

TEST(CompilerTest, Errors) {
  Scratch s;
  CompileOptions options;
  EXPECT_EQ(checkOptions(options, Stage::Ptx, false),
            "--emit=ptx needs --target=cuda");
  EXPECT_EQ(checkOptions(options, Stage::Library, /*toStdout=*/true),
            "--emit=lib needs an output file (-o model.so)");
  options.cpuKernels = "sse";
  EXPECT_EQ(checkOptions(options, Stage::Library, false),
            "--cpu-kernels=sse: expected avx512 or avx2");

  // Targets come from the registry (Targets.h).
  CompileOptions other;
  other.target = "tpu";
  EXPECT_EQ(checkOptions(other, Stage::Library, false),
            "unknown target 'tpu' (expected one of cpu, cuda)");
  Session unknown(other);
  ASSERT_TRUE(mlir::succeeded(unknown.load(s.file("u.tfm", kModel))));
  EXPECT_TRUE(mlir::failed(unknown.lower(Stage::Linalg)));
  EXPECT_EQ(unknown.error(),
            "unknown target 'tpu' (expected one of cpu, cuda)");
  other.target = "cuda";
  other.cpuVariants = {"x86-64-v3"};
  EXPECT_NE(checkOptions(other, Stage::Library, false)
                .find("does not combine with --target=cuda"),
            std::string::npos);
  EXPECT_EQ(createTarget("cuda")->name(), "cuda");
  EXPECT_EQ(createTarget("cpu")->name(), "cpu");
  EXPECT_EQ(createTarget("cpus"), nullptr);

  Session missing(CompileOptions{});
  EXPECT_TRUE(mlir::failed(missing.load(s.file("none.tfm"))));
  EXPECT_NE(missing.error().find("cannot open"), std::string::npos);

  CompileOptions bad;
  bad.defines = {"layers"};
  Session define(bad);
  EXPECT_TRUE(mlir::failed(define.load(s.file("m.tfm", kModel))));
  EXPECT_EQ(define.error(), "-D layers: expected name=value, e.g. -D layers=2");

  // An error in the description is reported where it is (file:line:col on
  // stderr), not again in error().
  Session syntax(CompileOptions{});
  EXPECT_TRUE(mlir::failed(syntax.load(s.file("bad.tfm", "entry f(x) {\n"))));
  EXPECT_EQ(syntax.error(), "");
}

} // namespace

// The x86-64 levels that compiler and runtime share (CpuLevels.h, which
// TFC_HOST_CPU masks the host to) say what LLVM's definitions of the levels
// say, for every feature the runtime tests with CPUID: a level naming a
// feature LLVM does not give it would let the runtime run code the masked
// compiler never made, and the reverse would refuse the masked compiler's.
TEST(CompilerTest, CpuLevelsMatchLLVM) {
  std::vector<std::string_view> testable = tfc::rt::testableHostFeatures();
  ASSERT_FALSE(testable.empty());
  for (const tfc_cpu_level &level : tfc_cpu_levels) {
    mlir::tfc::CpuTargetOptions options;
    options.cpu = level.name;
    std::string list = std::string(",") + level.features + ",";
    for (std::string_view f : testable) {
      std::optional<bool> llvmHas = mlir::tfc::cpuHasFeatures(
          options, llvm::StringRef("+" + std::string(f)));
      ASSERT_TRUE(llvmHas.has_value()) << level.name;
      bool listed = list.find("," + std::string(f) + ",") != std::string::npos;
      EXPECT_EQ(*llvmHas, listed)
          << level.name << ": " << f
          << (listed ? " is listed, but LLVM's level lacks it"
                     : " is implied by LLVM's level, but not listed");
    }
  }
}
