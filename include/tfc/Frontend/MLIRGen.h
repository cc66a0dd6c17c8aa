//===- MLIRGen.h - From the .tfm syntax tree to the tfc dialect -*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// MLIRGen instantiates the model: it evaluates the hyper-parameters (with
// `-D` overrides), unrolls `for` loops, inlines blocks at each call, checks
// every shape symbolically (see SymbolicShape.h) and emits one `func.func`
// per entry point in the tfc dialect. Every op's location is the .tfm
// position it came from (a call-site location inside a block).
//
//===----------------------------------------------------------------------===//

#ifndef TFC_FRONTEND_MLIRGEN_H
#define TFC_FRONTEND_MLIRGEN_H

#include "tfc/Frontend/AST.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>
#include <utility>
#include <vector>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace tfc {

struct MLIRGenOptions {
  /// `-D name=value` hyper-parameter overrides, in command-line order.
  std::vector<std::pair<std::string, std::string>> defines;
  /// Only generate this entry point (all of them when empty).
  std::string entry;
  /// Refuse to unroll models larger than this many ops.
  unsigned maxOps = 2'000'000;
  /// Also generate, for each entry with causal self-attention, the cached
  /// entry `<entry>_cached` for generation: it takes the tokens at positions
  /// [past, past + seq) and the key/value cache of every layer as state
  /// buffers it updates in place (see docs/abi.md).
  bool kvCache = false;
  /// With kvCache: the cached entry returns, of each output along the
  /// tokens, only the last position (what generation reads): the final norm
  /// and LM head then compute one position of a prompt instead of all.
  bool kvCacheLast = false;
  /// With kvCache: the self-attention key/value caches hold f16 instead of
  /// the model's f32 (half the memory and the bytes a decode step reads;
  /// keys and values are rounded to f16 as they are stored, attention
  /// widens them as it reads them). Caches of other element types, and
  /// cross-attention states, are unchanged.
  bool kvCacheHalf = false;
  /// With kvCache: also <entry>_rows, whose `past` is [batch] (each row at
  /// its own position over the caches: a serving batch). An entry that
  /// cannot have it (absolute positions, sliding windows, cached masks,
  /// cross-attention) is an error.
  bool kvCacheRows = false;
  /// Brackets what each call of a block made with `tfc.block_begin` and
  /// `tfc.block_end` (the calls stay inlined): `tfc-outline-blocks` makes the
  /// calls that compute the same thing (the layers of a model) one function.
  bool markBlocks = false;

  /// Adds one `-D name=value` override; false (nothing added) when `text`
  /// has no '=' or an empty name.
  bool addDefine(llvm::StringRef text);
};

/// Loads the dialects the generated IR uses into `context`.
void loadFrontendDialects(mlir::MLIRContext &context);

/// Generates the module; returns null after reporting errors through
/// `diags`. The module has been verified.
mlir::OwningOpRef<mlir::ModuleOp>
generateModule(const ast::Module &module, mlir::MLIRContext &context,
               DiagnosticEngine &diags, const MLIRGenOptions &options);

} // namespace tfc

#endif // TFC_FRONTEND_MLIRGEN_H
