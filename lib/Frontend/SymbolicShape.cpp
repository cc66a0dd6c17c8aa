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

static bool isOne(const SymDim &d) { return d.isStatic() && d.size == 1; }

ShapeResult shape::broadcast(llvm::ArrayRef<SymDim> a,
                             llvm::ArrayRef<SymDim> b) {
  size_t rank = std::max(a.size(), b.size());
  SymShape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Align from the right.
    const SymDim *x = i < rank - a.size() ? nullptr : &a[i - (rank - a.size())];
    const SymDim *y = i < rank - b.size() ? nullptr : &b[i - (rank - b.size())];
    if (!x || isOne(*x)) {
      out[i] = y ? *y : *x;
    } else if (!y || isOne(*y) || *x == *y) {
      out[i] = *x;
    } else {
      return ShapeResult::fail("shapes " + shapeStr(a) + " and " +
                               shapeStr(b) + " do not broadcast (" + x->str() +
                               " vs " + y->str() + ")");
    }
  }
  return ShapeResult::of(out);
}

ShapeResult shape::matmul(llvm::ArrayRef<SymDim> a, llvm::ArrayRef<SymDim> b,
                          bool transposeA, bool transposeB) {
  if (a.size() < 2 || b.size() < 2)
    return ShapeResult::fail("matmul needs operands of rank >= 2, got " +
                             shapeStr(a) + " and " + shapeStr(b));
  size_t ra = a.size(), rb = b.size();
  SymDim m = transposeA ? a[ra - 1] : a[ra - 2];
  SymDim ka = transposeA ? a[ra - 2] : a[ra - 1];
  SymDim kb = transposeB ? b[rb - 1] : b[rb - 2];
  SymDim n = transposeB ? b[rb - 2] : b[rb - 1];
  if (ka != kb)
    return ShapeResult::fail("matmul contraction sizes differ: " +
                             shapeStr(a) + " @ " + shapeStr(b) + " (" +
                             ka.str() + " vs " + kb.str() + ")");
  ShapeResult batch = broadcast(a.drop_back(2), b.drop_back(2));
  if (!batch.ok())
    return ShapeResult::fail("matmul batch dims of " + shapeStr(a) + " and " +
                             shapeStr(b) + " do not broadcast");
  SymShape out = batch.shape;
  out.push_back(m);
  out.push_back(n);
  return ShapeResult::of(out);
}

ShapeResult shape::linear(llvm::ArrayRef<SymDim> x, llvm::ArrayRef<SymDim> w,
                          const SymShape *bias) {
  if (x.empty())
    return ShapeResult::fail("linear input must have rank >= 1, got []");
  if (w.size() != 2)
    return ShapeResult::fail("linear weight must be [out, in], got " +
                             shapeStr(w));
  if (x.back() != w[1])
    return ShapeResult::fail("linear input " + shapeStr(x) +
                             " does not match weight [out, in] = " +
                             shapeStr(w) + " (" + x.back().str() + " vs " +
                             w[1].str() + ")");
  if (bias && (bias->size() != 1 || (*bias)[0] != w[0]))
    return ShapeResult::fail("linear bias must be [" + w[0].str() + "], got " +
                             shapeStr(*bias));
  SymShape out(x.begin(), x.end());
  out.back() = w[0];
  return ShapeResult::of(out);
}

ShapeResult shape::embedding(llvm::ArrayRef<SymDim> table,
                             llvm::ArrayRef<SymDim> ids) {
  if (table.size() != 2)
    return ShapeResult::fail("embedding table must be [vocab, features], got " +
                             shapeStr(table));
  SymShape out(ids.begin(), ids.end());
  out.push_back(table[1]);
  return ShapeResult::of(out);
}

ShapeResult shape::attention(llvm::ArrayRef<SymDim> q, llvm::ArrayRef<SymDim> k,
                             llvm::ArrayRef<SymDim> v, const SymShape *mask) {
  if (q.size() != 4 || k.size() != 4 || v.size() != 4)
    return ShapeResult::fail(
        "attention needs q [batch, heads, q_len, d_head], k and v [batch, "
        "kv_heads, kv_len, d_head], got " +
        shapeStr(q) + ", " + shapeStr(k) + ", " + shapeStr(v));
  if (q[0] != k[0] || k[0] != v[0])
    return ShapeResult::fail("attention batch sizes differ: q " + shapeStr(q) +
                             ", k " + shapeStr(k) + ", v " + shapeStr(v));
  if (k[1] != v[1] || k[2] != v[2])
    return ShapeResult::fail("attention k " + shapeStr(k) + " and v " +
                             shapeStr(v) + " differ in heads or length");
  if (q[3] != k[3])
    return ShapeResult::fail("attention q " + shapeStr(q) + " and k " +
                             shapeStr(k) + " have different head sizes");
  if ((q[1].isStatic() && q[1].size == 0) ||
      (k[1].isStatic() && k[1].size == 0))
    return ShapeResult::fail("attention head counts must be positive: q " +
                             shapeStr(q) + ", k " + shapeStr(k));
  // Grouped-query attention needs head counts known at compile time; the
  // runtime only checks that a symbolic dim has one size everywhere.
  if (q[1] != k[1] && (!q[1].isStatic() || !k[1].isStatic()))
    return ShapeResult::fail("query heads " + q[1].str() +
                             " and key/value heads " + k[1].str() +
                             " must be the same dim, or both numbers");
  if (q[1].isStatic() && k[1].isStatic() && q[1].size % k[1].size != 0)
    return ShapeResult::fail("query heads " + q[1].str() +
                             " are not a multiple of key/value heads " +
                             k[1].str());
  if (mask) {
    SymShape scores = {q[0], q[1], q[2], k[2]};
    if (mask->size() > 4)
      return ShapeResult::fail("attention mask " + shapeStr(*mask) +
                               " has more dims than the scores " +
                               shapeStr(scores));
    ShapeResult b = broadcast(scores, *mask);
    if (!b.ok() || b.shape != scores)
      return ShapeResult::fail("attention mask " + shapeStr(*mask) +
                               " does not broadcast to the scores " +
                               shapeStr(scores));
  }
  return ShapeResult::of({q[0], q[1], q[2], v[3]});
}

ShapeResult shape::featureVector(llvm::ArrayRef<SymDim> x,
                                 llvm::ArrayRef<SymDim> vec,
                                 llvm::StringRef what) {
  if (x.empty())
    return ShapeResult::fail("cannot normalise a rank-0 tensor");
  if (vec.size() != 1 || vec[0] != x.back())
    return ShapeResult::fail(what.str() + " must be [" + x.back().str() +
                             "] to match the input " + shapeStr(x) + ", got " +
                             shapeStr(vec));
  return ShapeResult::of(SymShape(x.begin(), x.end()));
}

ShapeResult shape::reduce(llvm::ArrayRef<SymDim> x, int64_t axis,
                          bool keepdim) {
  auto a = normalizeAxis(axis, x.size());
  if (!a)
    return ShapeResult::fail("axis " + std::to_string(axis) +
                             " is out of range for " + shapeStr(x));
  SymShape out(x.begin(), x.end());
  if (keepdim)
    out[*a] = SymDim::of(1);
  else
    out.erase(out.begin() + *a);
  return ShapeResult::of(out);
}

ShapeResult shape::transpose(llvm::ArrayRef<SymDim> x,
                             llvm::ArrayRef<int64_t> perm) {
  if (perm.size() != x.size())
    return ShapeResult::fail("permutation has " + std::to_string(perm.size()) +
                             " entries but the input " + shapeStr(x) +
                             " has rank " + std::to_string(x.size()));
  std::vector<bool> seen(x.size());
  SymShape out;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(x.size()) || seen[p])
      return ShapeResult::fail("not a permutation of 0.." +
                               std::to_string(x.size() - 1));
    seen[p] = true;
    out.push_back(x[p]);
  }
  return ShapeResult::of(out);
}

ShapeResult shape::reshape(llvm::ArrayRef<SymDim> x,
                           llvm::ArrayRef<SymDim> to) {
  auto count = [](llvm::ArrayRef<SymDim> s, std::map<std::string, int> &names,
                  int64_t &product) {
    product = 1;
    for (const SymDim &d : s) {
      if (d.isStatic())
        product = (d.size != 0 && product > INT64_MAX / d.size) ? -1
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
  if (x.size() != 3)
    return ShapeResult::fail("split_heads needs [batch, seq, features], got " +
                             shapeStr(x));
  if (heads <= 0)
    return ShapeResult::fail("heads must be positive, got " +
                             std::to_string(heads));
  if (!x[2].isStatic())
    return ShapeResult::fail("the feature size of " + shapeStr(x) +
                             " must be a number to split it into heads");
  if (x[2].size % heads != 0)
    return ShapeResult::fail("features " + x[2].str() +
                             " are not divisible by " + std::to_string(heads) +
                             " heads (" + shapeStr(x) + ")");
  return ShapeResult::of(
      {x[0], SymDim::of(heads), x[1], SymDim::of(x[2].size / heads)});
}

ShapeResult shape::mergeHeads(llvm::ArrayRef<SymDim> x) {
  if (x.size() != 4)
    return ShapeResult::fail("merge_heads needs [batch, heads, seq, d_head], "
                             "got " +
                             shapeStr(x));
  if (!x[1].isStatic() || !x[3].isStatic())
    return ShapeResult::fail("merge_heads needs numeric heads and d_head, got " +
                             shapeStr(x));
  int64_t features;
  if (llvm::MulOverflow(x[1].size, x[3].size, features))
    return ShapeResult::fail("heads × d_head of " + shapeStr(x) +
                             " is too large");
  return ShapeResult::of({x[0], x[2], SymDim::of(features)});
}

ShapeResult shape::slice(llvm::ArrayRef<SymDim> x, int64_t axis, int64_t start,
                         int64_t size) {
  auto a = normalizeAxis(axis, x.size());
  if (!a)
    return ShapeResult::fail("axis " + std::to_string(axis) +
                             " is out of range for " + shapeStr(x));
  // A symbolic axis is checked at run time.
  int64_t extent = x[*a].isStatic() ? x[*a].size : INT64_MAX;
  if (start < 0 || size <= 0 || start > extent || size > extent - start)
    return ShapeResult::fail("slice of size " + std::to_string(size) +
                             " at " + std::to_string(start) +
                             " is out of bounds for axis " +
                             std::to_string(*a) + " of " + shapeStr(x));
  SymShape out(x.begin(), x.end());
  out[*a] = SymDim::of(size);
  return ShapeResult::of(out);
}
