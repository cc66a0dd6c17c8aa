//===- SymbolicShape.cpp - Shapes with named dims -------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Frontend/SymbolicShape.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>

using namespace tfc;

std::string SymDim::str() const {
  return isStatic() ? std::to_string(size) : name;
}

std::string tfc::shapeStr(llvm::ArrayRef<SymDim> shape) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(shape, os, [&](const SymDim &d) { os << d.str(); });
  os << "]";
  return s;
}

std::optional<int64_t> shape::normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

namespace {
/// Named dims as a domain of ShapeRules.h: a name agrees only with itself, a
/// number only with itself, and a size computed from a name (a name divided
/// into heads) cannot be written.
struct SymDims {
  using Dim = SymDim;
  static bool agree(const Dim &a, const Dim &b) { return a == b; }
  static Dim merge(const Dim &a, const Dim &) { return a; }
  static std::optional<int64_t> known(const Dim &d) {
    return d.isStatic() ? std::optional<int64_t>(d.size) : std::nullopt;
  }
  static Dim of(int64_t n) { return SymDim::of(n); }
  static std::optional<Dim> unknown() { return std::nullopt; }
  static std::string str(const Dim &d) { return d.str(); }
};

std::optional<llvm::ArrayRef<SymDim>> optional(const SymShape *s) {
  if (!s)
    return std::nullopt;
  return llvm::ArrayRef<SymDim>(*s);
}
} // namespace

namespace rules = mlir::tfc::shapes;

ShapeResult shape::broadcast(llvm::ArrayRef<SymDim> a,
                             llvm::ArrayRef<SymDim> b) {
  return rules::broadcast<SymDims>(a, b);
}

ShapeResult shape::matmul(llvm::ArrayRef<SymDim> a, llvm::ArrayRef<SymDim> b,
                          bool transposeA, bool transposeB) {
  return rules::matmul<SymDims>(a, b, transposeA, transposeB);
}

ShapeResult shape::linear(llvm::ArrayRef<SymDim> x, llvm::ArrayRef<SymDim> w,
                          const SymShape *bias) {
  return rules::linear<SymDims>(x, w, optional(bias));
}

ShapeResult shape::embedding(llvm::ArrayRef<SymDim> table,
                             llvm::ArrayRef<SymDim> ids) {
  return rules::embedding<SymDims>(table, ids);
}

ShapeResult shape::attention(llvm::ArrayRef<SymDim> q, llvm::ArrayRef<SymDim> k,
                             llvm::ArrayRef<SymDim> v, const SymShape *mask) {
  return rules::attention<SymDims>(q, k, v, optional(mask));
}

ShapeResult shape::featureVector(llvm::ArrayRef<SymDim> x,
                                 llvm::ArrayRef<SymDim> vec,
                                 llvm::StringRef what) {
  return rules::featureVector<SymDims>(x, vec, what);
}

ShapeResult shape::reduce(llvm::ArrayRef<SymDim> x, int64_t axis,
                          bool keepdim) {
  std::optional<int64_t> a = normalizeAxis(axis, x.size());
  return rules::reduce<SymDims>(x, a ? *a : axis, keepdim);
}

ShapeResult shape::transpose(llvm::ArrayRef<SymDim> x,
                             llvm::ArrayRef<int64_t> perm) {
  return rules::transpose<SymDims>(x, perm);
}

ShapeResult shape::reshape(llvm::ArrayRef<SymDim> x,
                           llvm::ArrayRef<SymDim> to) {
  auto count = [](llvm::ArrayRef<SymDim> s, std::map<std::string, int> &names,
                  int64_t &product) {
    product = 1;
    for (const SymDim &d : s) {
      if (d.isStatic())
        product = (d.size != 0 && product > INT64_MAX / d.size)
                      ? -1
                      : product * d.size;
      else
        ++names[d.name];
      if (product < 0)
        return;
    }
  };
  std::map<std::string, int> a, b;
  int64_t pa, pb;
  count(x, a, pa);
  count(to, b, pb);
  if (pa < 0 || pb < 0)
    return ShapeResult::fail("cannot reshape " + shapeStr(x) + " to " +
                             shapeStr(to) + ": too many elements");
  if (a == b && pa != pb)
    return ShapeResult::fail("cannot reshape " + shapeStr(x) + " to " +
                             shapeStr(to) + ": the element counts differ");
  if (a != b)
    return ShapeResult::fail("cannot reshape " + shapeStr(x) + " to " +
                             shapeStr(to) +
                             ": the symbolic dims must be the same on both "
                             "sides");
  return ShapeResult::of(SymShape(to.begin(), to.end()));
}

ShapeResult shape::splitHeads(llvm::ArrayRef<SymDim> x, int64_t heads) {
  return rules::splitHeads<SymDims>(x, heads);
}

ShapeResult shape::mergeHeads(llvm::ArrayRef<SymDim> x) {
  return rules::mergeHeads<SymDims>(x);
}

ShapeResult shape::slice(llvm::ArrayRef<SymDim> x, int64_t axis, int64_t start,
                         int64_t size) {
  std::optional<int64_t> a = normalizeAxis(axis, x.size());
  return rules::slice<SymDims>(x, a ? *a : axis, start, size);
}
