//===- ShapeRules.h - The shape rules of the tfc ops ------------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Each op whose result shape follows from its operands has one rule here,
// written once over a *dim domain* and used three times:
//
//   - the dialect's result-type inference and verifiers (infer:: in
//     TfcOps.cpp) over StaticDims: a size or `?` (ShapedType::kDynamic),
//     where `?` agrees with anything and the run time checks it;
//   - the frontend (SymbolicShape.h) over named dims: `batch` agrees only
//     with `batch`, so `[batch, seq] + [batch, src_seq]` is an error in the
//     description although both are `tensor<?x?xf32>` to MLIR;
//   - the interpreter, over StaticDims with every size known (run-time
//     shapes), where a failing rule is a run-time shape error.
//
// A domain D provides
//   using Dim;
//   static bool agree(Dim, Dim);       may the two be the same size?
//   static Dim merge(Dim, Dim);        the more refined of two that agree
//   static std::optional<int64_t> known(Dim);  the size, if it is a number
//   static Dim of(int64_t);
//   static std::optional<Dim> unknown();  the dim of a size the rule cannot
//                                      compute (a symbolic size times or
//                                      divided by a number), or none when
//                                      the domain cannot express it
//   static std::string str(Dim);
//
// Each rule returns the result shape, or a message that shows the shapes
// involved (without the op's name: the caller prefixes it).
//
//===----------------------------------------------------------------------===//

#ifndef TFC_DIALECT_TFC_IR_SHAPERULES_H
#define TFC_DIALECT_TFC_IR_SHAPERULES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MathExtras.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

namespace mlir::tfc::shapes {

/// MLIR's static shapes: a size, or kDynamic (`?`, ShapedType::kDynamic).
struct StaticDims {
  using Dim = int64_t;
  static constexpr int64_t kDynamic = std::numeric_limits<int64_t>::min();

  static bool isDynamic(Dim d) { return d == kDynamic; }
  static bool agree(Dim a, Dim b) {
    return isDynamic(a) || isDynamic(b) || a == b;
  }
  static Dim merge(Dim a, Dim b) { return isDynamic(a) ? b : a; }
  static std::optional<int64_t> known(Dim d) {
    return isDynamic(d) ? std::nullopt : std::optional<int64_t>(d);
  }
  static Dim of(int64_t n) { return n; }
  static std::optional<Dim> unknown() { return kDynamic; }
  static std::string str(Dim d) {
    return isDynamic(d) ? "?" : std::to_string(d);
  }
};

/// A rule's outcome: the shape, or why there is none.
template <typename Dim> struct Result {
  llvm::SmallVector<Dim, 4> shape;
  std::string error;

  bool ok() const { return error.empty(); }
  static Result fail(std::string message) {
    Result r;
    r.error = std::move(message);
    return r;
  }
  static Result of(llvm::ArrayRef<Dim> shape) {
    Result r;
    r.shape.assign(shape.begin(), shape.end());
    return r;
  }
};

/// `[batch, 12, ?, 64]`.
template <typename D> std::string str(llvm::ArrayRef<typename D::Dim> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + D::str(shape[i]);
  return s + "]";
}

template <typename D> bool isOne(typename D::Dim d) {
  return D::known(d) == std::optional<int64_t>(1);
}

/// NumPy broadcasting of two shapes (aligned from the right; a missing or
/// size-1 dim takes the other's).
template <typename D>
Result<typename D::Dim> broadcast(llvm::ArrayRef<typename D::Dim> a,
                                  llvm::ArrayRef<typename D::Dim> b) {
  using Dim = typename D::Dim;
  size_t rank = std::max(a.size(), b.size());
  llvm::SmallVector<Dim, 4> out;
  for (size_t i = 0; i < rank; ++i) {
    const Dim *x = i < rank - a.size() ? nullptr : &a[i - (rank - a.size())];
    const Dim *y = i < rank - b.size() ? nullptr : &b[i - (rank - b.size())];
    if (!x || (y && isOne<D>(*x)))
      out.push_back(*y);
    else if (!y || isOne<D>(*y))
      out.push_back(*x);
    else if (D::agree(*x, *y))
      out.push_back(D::merge(*x, *y));
    else
      return Result<Dim>::fail("shapes " + str<D>(a) + " and " + str<D>(b) +
                               " do not broadcast (" + D::str(*x) + " vs " +
                               D::str(*y) + ")");
  }
  return Result<Dim>::of(out);
}

/// a [..., M, K] · b [..., K, N] (either transposed), batch dims broadcast.
template <typename D>
Result<typename D::Dim> matmul(llvm::ArrayRef<typename D::Dim> a,
                               llvm::ArrayRef<typename D::Dim> b,
                               bool transposeA, bool transposeB) {
  using Dim = typename D::Dim;
  if (a.size() < 2 || b.size() < 2)
    return Result<Dim>::fail("operands must have rank >= 2, got " + str<D>(a) +
                             " and " + str<D>(b));
  size_t ra = a.size(), rb = b.size();
  Dim m = transposeA ? a[ra - 1] : a[ra - 2];
  Dim ka = transposeA ? a[ra - 2] : a[ra - 1];
  Dim kb = transposeB ? b[rb - 1] : b[rb - 2];
  Dim n = transposeB ? b[rb - 2] : b[rb - 1];
  if (!D::agree(ka, kb))
    return Result<Dim>::fail("contraction sizes differ: lhs " + str<D>(a) +
                             (transposeA ? " (transposed)" : "") + " and rhs " +
                             str<D>(b) + (transposeB ? " (transposed)" : "") +
                             " (" + D::str(ka) + " vs " + D::str(kb) + ")");
  Result<Dim> batch = broadcast<D>(a.drop_back(2), b.drop_back(2));
  if (!batch.ok())
    return Result<Dim>::fail("batch dimensions of " + str<D>(a) + " and " +
                             str<D>(b) + " do not broadcast");
  batch.shape.push_back(m);
  batch.shape.push_back(n);
  return batch;
}

/// x [..., K] · w [N, K]ᵀ (+ bias [N]).
template <typename D>
Result<typename D::Dim>
linear(llvm::ArrayRef<typename D::Dim> x, llvm::ArrayRef<typename D::Dim> w,
       std::optional<llvm::ArrayRef<typename D::Dim>> bias) {
  using Dim = typename D::Dim;
  if (x.empty())
    return Result<Dim>::fail("input must have rank >= 1, got []");
  if (w.size() != 2)
    return Result<Dim>::fail(
        "weight must be [out_features, in_features], got " + str<D>(w));
  if (!D::agree(x.back(), w[1]))
    return Result<Dim>::fail(
        "input " + str<D>(x) +
        " does not match the weight [out_features, in_features] = " +
        str<D>(w) + " (" + D::str(x.back()) + " vs " + D::str(w[1]) +
        " input features)");
  Dim n = w[0];
  if (bias) {
    if (bias->size() != 1 || !D::agree((*bias)[0], n))
      return Result<Dim>::fail("bias " + str<D>(*bias) +
                               " must be a vector of the [" + D::str(n) +
                               "] output features");
    n = D::merge(n, (*bias)[0]);
  }
  llvm::SmallVector<Dim, 4> out(x.begin(), x.end());
  out.back() = n;
  return Result<Dim>::of(out);
}

/// table [vocab, features] gathered at ids [...]: [..., features].
template <typename D>
Result<typename D::Dim> embedding(llvm::ArrayRef<typename D::Dim> table,
                                  llvm::ArrayRef<typename D::Dim> ids) {
  using Dim = typename D::Dim;
  if (table.size() != 2)
    return Result<Dim>::fail("table must be [vocab, features], got " +
                             str<D>(table));
  llvm::SmallVector<Dim, 4> out(ids.begin(), ids.end());
  out.push_back(table[1]);
  return Result<Dim>::of(out);
}

/// q [B, H, Tq, D], k [B, Hkv, Tk, D], v [B, Hkv, Tk, Dv] (grouped-query:
/// H a multiple of Hkv), an optional additive mask that broadcasts to the
/// scores [B, H, Tq, Tk]: [B, H, Tq, Dv].
template <typename D>
Result<typename D::Dim>
attention(llvm::ArrayRef<typename D::Dim> q, llvm::ArrayRef<typename D::Dim> k,
          llvm::ArrayRef<typename D::Dim> v,
          std::optional<llvm::ArrayRef<typename D::Dim>> mask) {
  using Dim = typename D::Dim;
  if (q.size() != 4 || k.size() != 4 || v.size() != 4)
    return Result<Dim>::fail(
        "needs query [batch, heads, q_len, d_head], key and value [batch, "
        "kv_heads, kv_len, d_head], got " +
        str<D>(q) + ", " + str<D>(k) + ", " + str<D>(v));
  auto mismatch = [&](llvm::StringRef what) {
    return Result<Dim>::fail(what.str() + ": query " + str<D>(q) + ", key " +
                             str<D>(k) + ", value " + str<D>(v));
  };
  if (!D::agree(q[0], k[0]) || !D::agree(q[0], v[0]) || !D::agree(k[0], v[0]))
    return mismatch("batch sizes differ");
  if (!D::agree(k[1], v[1]))
    return mismatch("key and value head counts differ");
  if (!D::agree(k[2], v[2]))
    return mismatch("key and value lengths differ");
  if (!D::agree(q[3], k[3]))
    return mismatch("query and key head sizes differ");
  Dim heads = q[1], kvHeads = D::merge(k[1], v[1]);
  std::optional<int64_t> h = D::known(heads), hkv = D::known(kvHeads);
  // GQA maps query head i to key/value head i / (heads / kv_heads).
  if (h == std::optional<int64_t>(0) || hkv == std::optional<int64_t>(0))
    return mismatch("head counts must be positive");
  if (!D::agree(heads, kvHeads) && (!h || !hkv))
    return Result<Dim>::fail("query heads " + D::str(heads) +
                             " and key/value heads " + D::str(kvHeads) +
                             " must be the same dim, or both numbers");
  if (h && hkv && *h % *hkv != 0)
    return mismatch("query heads are not a multiple of key/value heads");
  Dim batch = D::merge(D::merge(q[0], k[0]), v[0]);
  if (mask) {
    llvm::SmallVector<Dim, 4> scores = {batch, heads, q[2], k[2]};
    bool fits = mask->size() <= 4;
    for (size_t i = 0; fits && i < mask->size(); ++i) {
      const Dim &m = (*mask)[i], &s = scores[4 - mask->size() + i];
      fits = isOne<D>(m) || D::agree(m, s);
    }
    if (!fits)
      return Result<Dim>::fail(
          "mask " + str<D>(*mask) +
          " does not broadcast to the scores [batch, heads, q_len, kv_len] = " +
          str<D>(scores));
  }
  return Result<Dim>::of({batch, heads, q[2], v[3]});
}

/// A normalisation's scale or bias: a vector of x's last axis.
template <typename D>
Result<typename D::Dim> featureVector(llvm::ArrayRef<typename D::Dim> x,
                                      llvm::ArrayRef<typename D::Dim> vec,
                                      llvm::StringRef what) {
  using Dim = typename D::Dim;
  if (x.empty())
    return Result<Dim>::fail("cannot normalise a rank-0 tensor");
  if (vec.size() != 1 || !D::agree(vec[0], x.back()))
    return Result<Dim>::fail(what.str() +
                             " must be a vector of the last axis' size [" +
                             D::str(x.back()) + "], got " + str<D>(vec));
  return Result<Dim>::of(x);
}

/// Removes axis `axis` (in [0, rank)), or makes it 1 with `keepdim`.
template <typename D>
Result<typename D::Dim> reduce(llvm::ArrayRef<typename D::Dim> x, int64_t axis,
                               bool keepdim) {
  using Dim = typename D::Dim;
  if (axis < 0 || axis >= static_cast<int64_t>(x.size()))
    return Result<Dim>::fail("axis " + std::to_string(axis) +
                             " is out of range for " + str<D>(x));
  llvm::SmallVector<Dim, 4> out(x.begin(), x.end());
  if (keepdim)
    out[axis] = D::of(1);
  else
    out.erase(out.begin() + axis);
  return Result<Dim>::of(out);
}

/// out[i] = x[perm[i]].
template <typename D>
Result<typename D::Dim> transpose(llvm::ArrayRef<typename D::Dim> x,
                                  llvm::ArrayRef<int64_t> perm) {
  using Dim = typename D::Dim;
  int64_t rank = static_cast<int64_t>(x.size());
  if (static_cast<int64_t>(perm.size()) != rank)
    return Result<Dim>::fail("permutation has " + std::to_string(perm.size()) +
                             " entries but the input " + str<D>(x) +
                             " has rank " + std::to_string(rank));
  llvm::SmallVector<bool, 8> seen(rank, false);
  llvm::SmallVector<Dim, 4> out;
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p])
      return Result<Dim>::fail(str<StaticDims>(perm) +
                               " is not a permutation of 0.." +
                               std::to_string(rank - 1));
    seen[p] = true;
    out.push_back(x[p]);
  }
  return Result<Dim>::of(out);
}

/// [B, T, F] -> [B, heads, T, F / heads].
template <typename D>
Result<typename D::Dim> splitHeads(llvm::ArrayRef<typename D::Dim> x,
                                   int64_t heads) {
  using Dim = typename D::Dim;
  if (x.size() != 3)
    return Result<Dim>::fail("needs [batch, seq, features], got " + str<D>(x));
  if (heads <= 0)
    return Result<Dim>::fail("heads must be positive, got " +
                             std::to_string(heads));
  std::optional<Dim> headSize;
  if (std::optional<int64_t> f = D::known(x[2])) {
    if (*f % heads != 0)
      return Result<Dim>::fail(
          "features " + std::to_string(*f) + " are not divisible by " +
          std::to_string(heads) + " heads (" + str<D>(x) + ")");
    headSize = D::of(*f / heads);
  } else if (!(headSize = D::unknown())) {
    return Result<Dim>::fail("the feature size of " + str<D>(x) +
                             " must be a number to split it into heads");
  }
  return Result<Dim>::of({x[0], D::of(heads), x[1], *headSize});
}

/// [B, H, T, Dh] -> [B, T, H * Dh].
template <typename D>
Result<typename D::Dim> mergeHeads(llvm::ArrayRef<typename D::Dim> x) {
  using Dim = typename D::Dim;
  if (x.size() != 4)
    return Result<Dim>::fail("needs [batch, heads, seq, d_head], got " +
                             str<D>(x));
  std::optional<int64_t> h = D::known(x[1]), d = D::known(x[3]);
  std::optional<Dim> features;
  int64_t product;
  if (h && d) {
    if (llvm::MulOverflow(*h, *d, product))
      return Result<Dim>::fail("heads × d_head of " + str<D>(x) +
                               " is too large");
    features = D::of(product);
  } else if (!(features = D::unknown())) {
    return Result<Dim>::fail("needs numeric heads and d_head, got " +
                             str<D>(x));
  }
  return Result<Dim>::of({x[0], x[2], *features});
}

/// `size` elements of axis `axis` (in [0, rank)) from `start`; an axis of
/// unknown size is checked at run time.
template <typename D>
Result<typename D::Dim> slice(llvm::ArrayRef<typename D::Dim> x, int64_t axis,
                              int64_t start, int64_t size) {
  using Dim = typename D::Dim;
  if (axis < 0 || axis >= static_cast<int64_t>(x.size()))
    return Result<Dim>::fail("axis " + std::to_string(axis) +
                             " is out of range for " + str<D>(x));
  std::optional<int64_t> extent = D::known(x[axis]);
  if (start < 0 || size <= 0 ||
      (extent && (start > *extent || size > *extent - start)))
    return Result<Dim>::fail("slice of size " + std::to_string(size) + " at " +
                             std::to_string(start) +
                             " is out of bounds for axis " +
                             std::to_string(axis) + " of " + str<D>(x));
  llvm::SmallVector<Dim, 4> out(x.begin(), x.end());
  out[axis] = D::of(size);
  return Result<Dim>::of(out);
}

} // namespace mlir::tfc::shapes

#endif // TFC_DIALECT_TFC_IR_SHAPERULES_H
