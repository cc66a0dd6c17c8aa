//===- MicroKernels.cpp - Linking the C micro-kernels into a model --------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The bitcode of lib/Target/CPU/MicroKernels (one build per instruction set,
// embedded by cmake/EmbedFile.cmake) is parsed on demand and linked with
// LinkOnlyNeeded, so a model gets exactly the kernels it calls. They become
// internal: a model library exports only its ABI (docs/abi.md), and two
// variants of a multi-versioned library each keep their own copy.
//
//===----------------------------------------------------------------------===//

#include "LinkMicroKernels.h"

#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/Module.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <vector>

namespace {
#include "Attention.avx2.inc"
#include "Attention.avx512vnni.inc"
#include "Attention.generic.inc"
#include "QuantGemm.avx2.inc"
#include "QuantGemm.avx512vnni.inc"
#include "QuantGemm.generic.inc"

struct Bitcode {
  llvm::StringRef isa, source;
  llvm::ArrayRef<unsigned char> bytes;
};

/// One entry per source file and instruction set.
const Bitcode kBitcode[] = {
    {"generic", "QuantGemm.c", kBitcode_QuantGemm_generic},
    {"avx2", "QuantGemm.c", kBitcode_QuantGemm_avx2},
    {"avx512vnni", "QuantGemm.c", kBitcode_QuantGemm_avx512vnni},
    {"generic", "Attention.c", kBitcode_Attention_generic},
    {"avx2", "Attention.c", kBitcode_Attention_avx2},
    {"avx512vnni", "Attention.c", kBitcode_Attention_avx512vnni},
};

constexpr llvm::StringLiteral kPrefix = "tfc_uk_";
} // namespace

bool mlir::tfc::linkMicroKernels(llvm::Module &module, llvm::StringRef isa,
                                 std::string &error) {
  std::vector<std::string> called;
  for (llvm::Function &f : module)
    if (f.isDeclaration() && f.getName().starts_with(kPrefix))
      called.push_back(f.getName().str());
  if (called.empty())
    return true;
  bool known = false;
  for (const Bitcode &bitcode : kBitcode) {
    if (bitcode.isa != isa)
      continue;
    known = true;
    std::string name = (bitcode.source + "." + isa + ".bc").str();
    llvm::MemoryBufferRef buffer(
        llvm::StringRef(reinterpret_cast<const char *>(bitcode.bytes.data()),
                        bitcode.bytes.size()),
        name);
    llvm::Expected<std::unique_ptr<llvm::Module>> kernels =
        llvm::parseBitcodeFile(buffer, module.getContext());
    if (!kernels) {
      error = "cannot read the micro-kernels' bitcode (" +
              bitcode.source.str() +
              "): " + llvm::toString(kernels.takeError());
      return false;
    }
    (*kernels)->setTargetTriple(module.getTargetTriple());
    (*kernels)->setDataLayout(module.getDataLayout());
    if (llvm::Linker::linkModules(module, std::move(*kernels),
                                  llvm::Linker::Flags::LinkOnlyNeeded)) {
      error = "cannot link the micro-kernels of " + bitcode.source.str() +
              " into the model";
      return false;
    }
  }
  if (!known) {
    error = "no micro-kernels for instruction set '" + isa.str() + "'";
    return false;
  }
  for (const std::string &name : called) {
    llvm::Function *f = module.getFunction(name);
    if (!f || f->isDeclaration()) {
      error = "the model calls '" + name +
              "', which no micro-kernel defines";
      return false;
    }
  }
  // Every kernel linked in (also those the called ones call) stays inside
  // the model.
  for (llvm::Function &f : module)
    if (!f.isDeclaration() && f.getName().starts_with(kPrefix))
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
  return true;
}
