//===- SymbolicShape.h - Shapes with named dims -----------------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The frontend checks shapes with symbolic dims: a size is either a number or
// a name declared with `dim` (`batch`, `seq`, `src_seq`). Two different names
// never match, and a name never matches a number other than 1 in a broadcast,
// so `[batch, seq, 768] + [1024, 768]` is an error although both are
// `tensor<?x?x768xf32>` to MLIR. Every rule returns the result shape or a
// message that prints the shapes involved with their names. The rules are
// the dialect's (tfc/Dialect/Tfc/IR/ShapeRules.h, written once over a dim
// domain); this file gives them the domain of named dims. Only reshape's
// check (the same names on both sides) is the frontend's own.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_FRONTEND_SYMBOLICSHAPE_H
#define TFC_FRONTEND_SYMBOLICSHAPE_H

#include "tfc/Dialect/Tfc/IR/ShapeRules.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tfc {

/// One size: a number, or a symbolic dim's name.
struct SymDim {
  int64_t size = 0; // meaningful when `name` is empty
  std::string name; // the `dim` name, or empty for a static size

  static SymDim of(int64_t n) { return {n, {}}; }
  static SymDim named(llvm::StringRef n) { return {0, n.str()}; }
  bool isStatic() const { return name.empty(); }
  bool operator==(const SymDim &o) const {
    return name == o.name && (!isStatic() || size == o.size);
  }
  bool operator!=(const SymDim &o) const { return !(*this == o); }
  std::string str() const;
};

using SymShape = llvm::SmallVector<SymDim, 4>;

/// `[batch, seq, 768]`.
std::string shapeStr(llvm::ArrayRef<SymDim> shape);

/// A shape rule's outcome: the shape, or why there is none (ShapeRules.h's
/// result over named dims).
using ShapeResult = mlir::tfc::shapes::Result<SymDim>;

namespace shape {
/// Turns a possibly negative axis into [0, rank), or fails.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);

ShapeResult broadcast(llvm::ArrayRef<SymDim> a, llvm::ArrayRef<SymDim> b);
ShapeResult matmul(llvm::ArrayRef<SymDim> a, llvm::ArrayRef<SymDim> b,
                   bool transposeA, bool transposeB);
/// x [..., K] · w [N, K]ᵀ (+ bias [N]).
ShapeResult linear(llvm::ArrayRef<SymDim> x, llvm::ArrayRef<SymDim> w,
                   const SymShape *bias);
ShapeResult embedding(llvm::ArrayRef<SymDim> table, llvm::ArrayRef<SymDim> ids);
/// q [B, H, Tq, D], k [B, Hkv, Tk, D], v [B, Hkv, Tk, Dv], optional additive
/// mask broadcastable to [B, H, Tq, Tk].
ShapeResult attention(llvm::ArrayRef<SymDim> q, llvm::ArrayRef<SymDim> k,
                      llvm::ArrayRef<SymDim> v, const SymShape *mask);
/// A normalisation's scale/bias vector must be [features] of x's last axis.
ShapeResult featureVector(llvm::ArrayRef<SymDim> x, llvm::ArrayRef<SymDim> vec,
                          llvm::StringRef what);
ShapeResult reduce(llvm::ArrayRef<SymDim> x, int64_t axis, bool keepdim);
ShapeResult transpose(llvm::ArrayRef<SymDim> x, llvm::ArrayRef<int64_t> perm);
/// Checks that the element counts agree when that can be decided: the same
/// multiset of names on both sides and equal products of the numbers.
ShapeResult reshape(llvm::ArrayRef<SymDim> x, llvm::ArrayRef<SymDim> to);
ShapeResult splitHeads(llvm::ArrayRef<SymDim> x, int64_t heads);
ShapeResult mergeHeads(llvm::ArrayRef<SymDim> x);
ShapeResult slice(llvm::ArrayRef<SymDim> x, int64_t axis, int64_t start,
                  int64_t size);
} // namespace shape

} // namespace tfc

#endif // TFC_FRONTEND_SYMBOLICSHAPE_H
