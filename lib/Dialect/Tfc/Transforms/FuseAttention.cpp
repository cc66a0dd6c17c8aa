//===- FuseAttention.cpp - Recognise scaled dot-product attention --------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Every `tfc.softmax` whose result is the left operand of a matmul (P · V) is
// a candidate; the remark goes on the softmax. Walking back from the softmax
// input the pass accepts, in forward order,
//
//   s = Q · Kᵀ                    matmul, Kᵀ as transpose_rhs, a transpose
//                                 op or any tensor (a swap is inserted)
//   s = s * c | s / c             constant scales (also on Q or K)
//   s = s + mask | where(m, s, f) additive masks; tfc.causal_mask becomes
//                                 the causal flag, a where-fill with a large
//                                 negative constant an additive mask
//   p = softmax(s) over the last axis
//   o = p · V
//
// for scores of rank 2 ([T, D] per head), 3 ([N, T, D]), 4 ([B, H, T, D]) and
// 5 ([B, Hkv, G, T, D] against keys [B, Hkv, 1, T, D]: grouped-query
// attention written with broadcasting). Afterwards the head split
// (reshape + transpose) feeding the op and the merge after it are rewritten
// to tfc.split_heads / tfc.merge_heads.
//
//===----------------------------------------------------------------------===//

#include "FusionUtils.h"

#include "tfc/Dialect/Tfc/IR/TfcDialect.h"
#include "tfc/Dialect/Tfc/IR/TfcOps.h"
#include "tfc/Dialect/Tfc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Format.h"

#include <cmath>

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCFUSEATTENTION
#include "tfc/Dialect/Tfc/Transforms/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;
using namespace mlir::tfc::fusion;

namespace {

/// A mask term of the scores.
struct MaskTerm {
  /// An additive bias...
  Value bias;
  /// ...or a where-fill: `where(condition, s, fill)` (or with the branches
  /// swapped, `fillOnTrue`).
  Value condition;
  double fill = 0.0;
  bool fillOnTrue = false;
};

struct AttentionMatch {
  SoftmaxOp softmax;
  MatmulOp scores, output;
  /// Q and K as the scores matmul reads them (scales stripped).
  Value query, key, value;
  bool transposeQuery = false, keyIsTransposed = true, transposeValue = false;
  /// When the key operand is `transpose(x, perm)`: x and perm, so that K is
  /// rebuilt with one transpose.
  Value keySource;
  SmallVector<int64_t> keyPerm;
  double scale = 1.0;
  bool causal = false;
  SmallVector<MaskTerm> masks;
  /// Ops between the scores matmul and the softmax, erased when dead.
  SmallVector<Operation *> chain;
};

static std::string number(double v) {
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format("%g", v);
  return s;
}

/// If `v = x * c`, `c * x` or `x / c` with a constant splat c that does not
/// broadcast x to a larger shape, returns x and multiplies `scale`.
static std::optional<Value> stripScale(Value v, double &scale) {
  Operation *op = v.getDefiningOp();
  if (!op || !isa<MulOp, DivOp>(op))
    return std::nullopt;
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  std::optional<double> c = getSplatValue(rhs);
  Value x = lhs;
  if (!c && isa<MulOp>(op)) {
    c = getSplatValue(lhs);
    x = rhs;
  }
  if (!c || x.getType() != v.getType() || !std::isfinite(*c) || *c == 0.0)
    return std::nullopt;
  scale *= isa<MulOp>(op) ? *c : 1.0 / *c;
  return x;
}

static Value stripScales(Value v, double &scale) {
  while (std::optional<Value> x = stripScale(v, scale))
    v = *x;
  return v;
}

/// Does `v` lead back to a matmul through the ops the scores chain allows?
static bool reachesMatmul(Value v, int depth = 0) {
  if (depth > 16)
    return false;
  Operation *op = v.getDefiningOp();
  if (!op)
    return false;
  if (isa<MatmulOp>(op))
    return true;
  if (isa<AddOp, MulOp, DivOp, SubOp>(op))
    return reachesMatmul(op->getOperand(0), depth + 1) ||
           reachesMatmul(op->getOperand(1), depth + 1);
  if (auto w = dyn_cast<WhereOp>(op))
    return reachesMatmul(w.getOnTrue(), depth + 1) ||
           reachesMatmul(w.getOnFalse(), depth + 1);
  return false;
}

/// The one use of `v` must be `next`; `what` is plural ("the scores").
static bool checkSingleUse(Value v, Operation *next, StringRef what,
                           std::string &why) {
  std::optional<std::string> other = anotherUse(v, {next}, what + " have");
  if (other)
    why = *other;
  return !other;
}

/// Erases `root` if it is dead, then the producers of its operands that
/// became dead with it.
static void eraseDeadProducers(RewriterBase &rewriter, Operation *root) {
  SmallVector<Operation *> worklist = {root};
  llvm::DenseSet<Operation *> erased;
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (erased.contains(op) || !isOpTriviallyDead(op))
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        worklist.push_back(def);
    erased.insert(op);
    rewriter.eraseOp(op);
  }
}

/// Swaps the last two entries of a permutation of rank `rank` (the identity
/// when `perm` is empty).
static SmallVector<int64_t> swapLastTwo(ArrayRef<int64_t> perm, int64_t rank) {
  SmallVector<int64_t> p(perm);
  if (p.empty())
    for (int64_t i = 0; i < rank; ++i)
      p.push_back(i);
  std::swap(p[rank - 1], p[rank - 2]);
  return p;
}

static std::optional<AttentionMatch> matchAttention(SoftmaxOp softmax,
                                                    std::string &why) {
  // The candidate: softmax(...) · V.
  MatmulOp output;
  for (Operation *user : softmax->getUsers())
    if (auto mm = dyn_cast<MatmulOp>(user))
      if (mm.getLhs() == softmax.getResult())
        output = mm;
  if (!output)
    return std::nullopt;

  AttentionMatch m;
  m.softmax = softmax;
  m.output = output;
  auto scoresType = cast<RankedTensorType>(softmax.getType());
  int64_t rank = scoresType.getRank();
  if (!checkSingleUse(softmax, output, "the attention probabilities", why))
    return std::nullopt;
  if (output.getTransposeLhs()) {
    why = "the probabilities are transposed before the product with V";
    return std::nullopt;
  }
  if (static_cast<int64_t>(softmax.getAxis()) != rank - 1) {
    why = "softmax axis " + std::to_string(softmax.getAxis()) +
          " is not the key axis " + std::to_string(rank - 1);
    return std::nullopt;
  }
  if (rank < 2 || rank > 5) {
    why = "scores of rank " + std::to_string(rank) +
          " (expected [..., q_len, kv_len] of rank 2 to 5)";
    return std::nullopt;
  }

  // Walk back from the softmax input to the scores matmul.
  Value s = softmax.getInput();
  Operation *next = softmax;
  // Walking backwards: a mask seen after a scale was added before it.
  bool sawScale = false;
  auto maskAfterScale = [&] {
    if (sawScale)
      why = "the scores are scaled after the mask is added";
    return sawScale;
  };
  while (true) {
    Operation *op = s.getDefiningOp();
    if (!op) {
      why = "the scores are not computed by a matmul";
      return std::nullopt;
    }
    if (auto mm = dyn_cast<MatmulOp>(op)) {
      if (!checkSingleUse(s, next, "the scores", why))
        return std::nullopt;
      m.scores = mm;
      break;
    }
    if (!reachesMatmul(s)) {
      why = "the scores are not computed by a matmul (found '" +
            op->getName().getStringRef().str() + "' at " +
            describeLoc(op->getLoc()) + ")";
      return std::nullopt;
    }
    if (!checkSingleUse(s, next,
                        isa<MulOp, DivOp>(op) ? "the scaled scores"
                                              : "the masked scores",
                        why))
      return std::nullopt;
    if (op->getNumResults() != 1 || s.getType() != scoresType) {
      why = "the scores change type at " + describeLoc(op->getLoc());
      return std::nullopt;
    }

    if (auto add = dyn_cast<AddOp>(op)) {
      if (maskAfterScale())
        return std::nullopt;
      bool lhsIsScores = reachesMatmul(add.getLhs());
      Value chain = lhsIsScores ? add.getLhs() : add.getRhs();
      Value mask = lhsIsScores ? add.getRhs() : add.getLhs();
      if (chain.getType() != scoresType) {
        why = "the mask " + typeString(mask.getType()) +
              " broadcasts the scores " + typeString(chain.getType()) +
              " to a larger shape";
        return std::nullopt;
      }
      auto maskType = cast<RankedTensorType>(mask.getType());
      if (auto causal = mask.getDefiningOp<CausalMaskOp>();
          causal && maskType.getRank() == 2 &&
          succeeded(verifyCompatibleShape(
              maskType.getShape(), scoresType.getShape().take_back(2)))) {
        m.causal = true;
      } else {
        MaskTerm term;
        term.bias = mask;
        m.masks.push_back(term);
      }
      m.chain.push_back(op);
      next = op;
      s = chain;
      continue;
    }
    if (auto where = dyn_cast<WhereOp>(op)) {
      if (maskAfterScale())
        return std::nullopt;
      bool onTrue = reachesMatmul(where.getOnTrue());
      Value chain = onTrue ? where.getOnTrue() : where.getOnFalse();
      Value fill = onTrue ? where.getOnFalse() : where.getOnTrue();
      std::optional<double> f = getSplatValue(fill);
      if (!f || *f > -1e4) {
        why = "the masked fill value is not a large negative constant "
              "(-inf or <= -1e4)";
        return std::nullopt;
      }
      if (chain.getType() != scoresType) {
        why = "the mask condition " +
              typeString(where.getCondition().getType()) +
              " broadcasts the scores " + typeString(chain.getType()) +
              " to a larger shape";
        return std::nullopt;
      }
      MaskTerm term;
      term.condition = where.getCondition();
      term.fill = *f;
      term.fillOnTrue = !onTrue;
      m.masks.push_back(term);
      m.chain.push_back(op);
      next = op;
      s = chain;
      continue;
    }
    if (isa<MulOp, DivOp>(op)) {
      double scale = 1.0;
      std::optional<Value> x = stripScale(s, scale);
      if (!x) {
        Value other = op->getOperand(1);
        if (reachesMatmul(other) && !reachesMatmul(op->getOperand(0)))
          other = op->getOperand(0);
        why = "the scale is not a constant (" +
              describeLoc(other.getDefiningOp()
                              ? other.getDefiningOp()->getLoc()
                              : other.getLoc()) +
              ")";
        return std::nullopt;
      }
      sawScale = true;
      m.scale *= scale;
      m.chain.push_back(op);
      next = op;
      s = *x;
      continue;
    }
    why = "'" + op->getName().getStringRef().str() + "' at " +
          describeLoc(op->getLoc()) +
          " between the scores and the softmax is not a scale or a mask";
    return std::nullopt;
  }

  // Q, K and V, with constant scales on Q or K folded into the scale.
  m.transposeQuery = m.scores.getTransposeLhs();
  m.query = stripScales(m.scores.getLhs(), m.scale);
  Value rhs = stripScales(m.scores.getRhs(), m.scale);
  if (m.scores.getTransposeRhs()) {
    m.key = rhs;
  } else if (auto t = rhs.getDefiningOp<TransposeOp>()) {
    m.keyIsTransposed = false;
    m.keySource = stripScales(t.getInput(), m.scale);
    m.keyPerm = llvm::to_vector(t.getPermutation());
  } else {
    m.keyIsTransposed = false;
    m.keySource = rhs;
  }
  m.value = output.getRhs();
  m.transposeValue = output.getTransposeRhs();

  // Shapes: every operand of the rank of the scores.
  auto rankOf = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getRank();
  };
  if (rankOf(m.scores.getLhs()) != rank || rankOf(m.scores.getRhs()) != rank ||
      rankOf(m.value) != rank) {
    why = "query, key and value do not all have the rank of the scores (" +
          std::to_string(rank) + "): broadcasting them is not supported";
    return std::nullopt;
  }
  auto dims = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  };
  ArrayRef<int64_t> qs = dims(m.scores.getLhs()), ks = dims(m.scores.getRhs()),
                    vs = dims(m.value);
  if (rank == 4 && !(ShapedType::isDynamic(qs[0]) ||
                     ShapedType::isDynamic(ks[0]) || qs[0] == ks[0]) ) {
    why = "the key batch " + std::to_string(ks[0]) +
          " broadcasts against the query batch " + std::to_string(qs[0]);
    return std::nullopt;
  }
  if (rank == 5) {
    // Grouped-query attention: [B, Hkv, G, T, D] against [B, Hkv, 1, T, D].
    if (ks[2] != 1 || vs[2] != 1) {
      why = "rank-5 scores need keys and values [batch, kv_heads, 1, len, "
            "d] (grouped-query attention)";
      return std::nullopt;
    }
    for (const MaskTerm &t : m.masks) {
      Value v = t.bias ? t.bias : t.condition;
      auto mt = cast<RankedTensorType>(v.getType());
      ArrayRef<int64_t> shape = mt.getShape();
      bool ok = mt.getRank() <= 2 ||
                (mt.getRank() == 5 && shape[1] == 1 && shape[2] == 1);
      if (!ok) {
        why = "the mask " + typeString(mt) +
              " of grouped scores must be [batch, 1, 1, q_len, kv_len] "
              "or [q_len, kv_len]";
        return std::nullopt;
      }
    }
  }
  return m;
}

/// The size of dim `i` of `v` as an index value.
static Value dimValue(OpBuilder &b, Location loc, Value v, int64_t i) {
  auto type = cast<RankedTensorType>(v.getType());
  if (!type.isDynamicDim(i))
    return arith::ConstantIndexOp::create(b, loc, type.getDimSize(i));
  return tensor::DimOp::create(b, loc, v, i);
}

/// Per dim of `v`: its size as an index value where it is dynamic, null
/// where it is static (the `sizes` argument of reshapeTo).
static SmallVector<Value> dynamicDimValues(OpBuilder &b, Location loc,
                                           Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<Value> sizes;
  for (int64_t i = 0; i < type.getRank(); ++i)
    sizes.push_back(type.isDynamicDim(i) ? dimValue(b, loc, v, i) : Value());
  return sizes;
}

/// Reshapes `v` to `shape`, whose dynamic sizes are `sizes[i]` (index values,
/// one per dim; unused for static dims).
static Value reshapeTo(OpBuilder &b, Location loc, Value v,
                       ArrayRef<int64_t> shape, ArrayRef<Value> sizes) {
  auto type = cast<RankedTensorType>(v.getType());
  auto target = RankedTensorType::get(shape, type.getElementType());
  if (target == type)
    return v;
  SmallVector<Value> dyn;
  for (auto [i, d] : llvm::enumerate(shape))
    if (ShapedType::isDynamic(d))
      dyn.push_back(sizes[i]);
  return ReshapeOp::create(b, loc, target, v, dyn);
}

static int64_t mulSizes(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b)
             ? ShapedType::kDynamic
             : a * b;
}

/// Brings an operand of rank `rank` to the 4-D [B, H, T, D] layout of
/// tfc.attention: leading unit dims for rank 2 and 3, dims 1 and 2 merged for
/// rank 5.
static Value to4D(OpBuilder &b, Location loc, Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  ArrayRef<int64_t> s = type.getShape();
  if (type.getRank() == 4)
    return v;
  SmallVector<Value> sizes = dynamicDimValues(b, loc, v);
  switch (type.getRank()) {
  case 2:
    return reshapeTo(b, loc, v, {1, 1, s[0], s[1]},
                     {Value(), Value(), sizes[0], sizes[1]});
  case 3:
    return reshapeTo(b, loc, v, {1, s[0], s[1], s[2]},
                     {Value(), sizes[0], sizes[1], sizes[2]});
  case 5: {
    Value merged;
    int64_t m = mulSizes(s[1], s[2]);
    if (ShapedType::isDynamic(m))
      merged = arith::MulIOp::create(b, loc, dimValue(b, loc, v, 1),
                                     dimValue(b, loc, v, 2));
    return reshapeTo(b, loc, v, {s[0], m, s[3], s[4]},
                     {sizes[0], merged, sizes[3], sizes[4]});
  }
  default:
    return v;
  }
}

/// A mask term as an additive bias that broadcasts to the 4-D scores.
static Value maskBias(OpBuilder &b, Location loc, const MaskTerm &t,
                      Type elementType, int64_t scoresRank) {
  Value bias = t.bias;
  if (!bias) {
    auto scalar = RankedTensorType::get({}, elementType);
    auto zero = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(scalar, b.getFloatAttr(elementType,
                                                              0.0)));
    auto fill = arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(scalar, b.getFloatAttr(elementType, t.fill)));
    bias = t.fillOnTrue ? WhereOp::create(b, loc, t.condition, fill, zero)
                        : WhereOp::create(b, loc, t.condition, zero, fill);
  }
  auto type = cast<RankedTensorType>(bias.getType());
  if (scoresRank == 5 && type.getRank() == 5) {
    // [B, 1, 1, Tq, Tk] -> [B, 1, Tq, Tk].
    ArrayRef<int64_t> s = type.getShape();
    SmallVector<Value> sizes = dynamicDimValues(b, loc, bias);
    return reshapeTo(b, loc, bias, {s[0], 1, s[3], s[4]},
                     {sizes[0], Value(), sizes[3], sizes[4]});
  }
  return bias;
}

static Value transposeIfNeeded(OpBuilder &b, Location loc, Value v,
                               ArrayRef<int64_t> perm) {
  bool identity = true;
  for (auto [i, p] : llvm::enumerate(perm))
    identity &= static_cast<int64_t>(i) == p;
  if (identity)
    return v;
  return TransposeOp::create(b, loc, v, perm);
}

static void rewrite(RewriterBase &rewriter, AttentionMatch &m) {
  MatmulOp out = m.output;
  rewriter.setInsertionPoint(out);
  Location loc = rewriter.getFusedLoc(
      {m.scores.getLoc(), m.softmax.getLoc(), out.getLoc()});
  auto scoresType = cast<RankedTensorType>(m.softmax.getType());
  int64_t rank = scoresType.getRank();
  Type et = scoresType.getElementType();

  Value q = m.query;
  if (m.transposeQuery)
    q = transposeIfNeeded(rewriter, loc, q, swapLastTwo({}, rank));
  Value k = m.key;
  if (!m.keyIsTransposed)
    k = transposeIfNeeded(rewriter, loc, m.keySource,
                          swapLastTwo(m.keyPerm, rank));
  Value v = m.value;
  if (m.transposeValue)
    v = transposeIfNeeded(rewriter, loc, v, swapLastTwo({}, rank));
  q = to4D(rewriter, loc, q);
  k = to4D(rewriter, loc, k);
  v = to4D(rewriter, loc, v);
  Value mask;
  for (const MaskTerm &t : m.masks) {
    Value bias = maskBias(rewriter, loc, t, et, rank);
    mask = mask ? AddOp::create(rewriter, loc, mask, bias).getResult() : bias;
  }
  auto attention =
      AttentionOp::create(rewriter, loc, q, k, v, mask, m.causal,
                          rewriter.getF64FloatAttr(m.scale));

  // Back to the shape of the original product.
  auto outType = cast<RankedTensorType>(out.getType());
  Value result = attention;
  if (rank != 4) {
    SmallVector<Value> sizes;
    for (int64_t i = 0; i < outType.getRank(); ++i) {
      if (!outType.isDynamicDim(i)) {
        sizes.push_back(Value());
        continue;
      }
      // Each dynamic output dim is a dim of Q (its batch dims and q_len) or
      // of V (its head size).
      Value src = i == outType.getRank() - 1 ? m.value : m.query;
      int64_t srcDim = i;
      if (i == outType.getRank() - 1 && m.transposeValue)
        srcDim = rank - 2;
      if (i == outType.getRank() - 2 && m.transposeQuery)
        srcDim = rank - 1;
      sizes.push_back(dimValue(rewriter, loc, src, srcDim));
    }
    result = reshapeTo(rewriter, loc, attention, outType.getShape(), sizes);
  }
  rewriter.replaceOp(out, result);
  // The softmax, the scale/mask chain, the scores and whatever only fed
  // them (transposes and scales of Q and K).
  eraseDeadProducers(rewriter, m.softmax);
}

/// Is dim `i` of `v` provably the same size at run time as dim `j` of
/// `source`? Follows ops that carry a leading dim of one operand over to
/// their result.
static bool sameRuntimeDim(Value source, int64_t j, Value v, int64_t i,
                           int depth = 0) {
  if (v == source && i == j)
    return true;
  Operation *op = v.getDefiningOp();
  if (!op || depth > 64)
    return false;
  auto rankOf = [](Value x) {
    return cast<RankedTensorType>(x.getType()).getRank();
  };
  int64_t rank = rankOf(v);
  // Same-type operands of elementwise ops, norms and activations.
  if (isa<AddOp, SubOp, MulOp, DivOp, MaxOp, MinOp, PowOp, LayerNormOp,
          RmsNormOp, SoftmaxOp, GeluOp, ReluOp, SiluOp, ExpOp, TanhOp, NegOp,
          CastOp, RopeOp>(op)) {
    for (Value operand : op->getOperands())
      if (isa<RankedTensorType>(operand.getType()) &&
          rankOf(operand) == rank &&
          cast<RankedTensorType>(operand.getType()).getShape() ==
              cast<RankedTensorType>(v.getType()).getShape() &&
          sameRuntimeDim(source, j, operand, i, depth + 1))
        return true;
    return false;
  }
  // Linear: every dim but the last is the input's.
  if (auto l = dyn_cast<LinearOp>(op))
    return i < rank - 1 && sameRuntimeDim(source, j, l.getInput(), i,
                                          depth + 1);
  // Matmul with a 2-D right operand: the leading dims are the left's.
  if (auto m = dyn_cast<MatmulOp>(op))
    return rankOf(m.getRhs()) == 2 && !m.getTransposeLhs() && i < rank - 1 &&
           sameRuntimeDim(source, j, m.getLhs(), i, depth + 1);
  // Embedding: the leading dims are the ids'.
  if (auto e = dyn_cast<EmbeddingOp>(op))
    return i < rank - 1 && sameRuntimeDim(source, j, e.getIds(), i,
                                          depth + 1);
  return false;
}

/// transpose(reshape(x [B, T, H·D] -> [B, T, H, D]), [0, 2, 1, 3]) is
/// split_heads(x, H).
static void formSplitHeads(RewriterBase &rewriter, TransposeOp t) {
  auto r = t.getInput().getDefiningOp<ReshapeOp>();
  if (!r || t.getPermutation() != ArrayRef<int64_t>{0, 2, 1, 3})
    return;
  auto in = cast<RankedTensorType>(r.getInput().getType());
  auto mid = cast<RankedTensorType>(r.getType());
  if (in.getRank() != 3 || mid.getRank() != 4 || mid.isDynamicDim(2) ||
      mid.isDynamicDim(3))
    return;
  // The first two dims must be carried over unchanged: equal static sizes,
  // or dynamic sizes provably those of x.
  unsigned n = 0;
  for (int64_t i = 0; i < 2; ++i) {
    if (in.getDimSize(i) != mid.getDimSize(i))
      return;
    if (!in.isDynamicDim(i))
      continue;
    auto dim = r.getDynamicSizes()[n++].getDefiningOp<tensor::DimOp>();
    std::optional<int64_t> idx = dim ? dim.getConstantIndex() : std::nullopt;
    if (!idx || !sameRuntimeDim(dim.getSource(), *idx, r.getInput(), i))
      return;
  }
  if (!in.isDynamicDim(2) &&
      in.getDimSize(2) != mid.getDimSize(2) * mid.getDimSize(3))
    return;
  rewriter.setInsertionPoint(t);
  auto split = SplitHeadsOp::create(rewriter, t.getLoc(), r.getInput(),
                                    mid.getDimSize(2));
  if (split.getType() != t.getType()) {
    rewriter.eraseOp(split);
    return;
  }
  rewriter.replaceOp(t, split);
  eraseIfDead(rewriter, {r});
}

/// reshape(transpose(a [B, H, T, D], [0, 2, 1, 3]) -> [B, T, H·D]) is
/// merge_heads(a).
static void formMergeHeads(RewriterBase &rewriter, ReshapeOp r) {
  auto t = r.getInput().getDefiningOp<TransposeOp>();
  if (!t || t.getPermutation() != ArrayRef<int64_t>{0, 2, 1, 3})
    return;
  auto out = cast<RankedTensorType>(r.getType());
  auto a = cast<RankedTensorType>(t.getInput().getType());
  if (out.getRank() != 3 || a.isDynamicDim(1) || a.isDynamicDim(3))
    return;
  rewriter.setInsertionPoint(r);
  auto merge = MergeHeadsOp::create(rewriter, r.getLoc(), t.getInput());
  if (merge.getType() != r.getType() ||
      !(out.isDynamicDim(0) == a.isDynamicDim(0)) ||
      !(out.isDynamicDim(1) == a.isDynamicDim(2))) {
    rewriter.eraseOp(merge);
    return;
  }
  rewriter.replaceOp(r, merge);
  eraseIfDead(rewriter, {t});
}

struct FuseAttentionPass
    : public tfc::impl::TfcFuseAttentionBase<FuseAttentionPass> {
  using TfcFuseAttentionBase::TfcFuseAttentionBase;

  void runOnOperation() override {
    Reporter reporter(remarks);
    SmallVector<SoftmaxOp> candidates;
    getOperation()->walk([&](SoftmaxOp op) { candidates.push_back(op); });

    IRRewriter rewriter(&getContext());
    bool fusedAny = false;
    for (SoftmaxOp softmax : candidates) {
      std::string why;
      std::optional<AttentionMatch> m = matchAttention(softmax, why);
      if (!m) {
        if (!why.empty())
          reporter.notFused(softmax, why);
        continue;
      }
      std::string what = "tfc.attention (scale " + number(m->scale);
      if (m->causal)
        what += ", causal";
      if (!m->masks.empty())
        what += ", " + std::to_string(m->masks.size()) + " mask" +
                (m->masks.size() > 1 ? "s" : "");
      if (m->scores.getType().getRank() == 5)
        what += ", grouped-query";
      // A bias that varies over both queries and keys (a position bias
      // written out by hand) is read from memory: Tq x Tk per head or batch.
      for (const MaskTerm &t : m->masks) {
        auto bt = t.bias ? dyn_cast<RankedTensorType>(t.bias.getType())
                         : RankedTensorType();
        int64_t r = bt ? bt.getRank() : 0;
        if (r >= 2 && bt.getDimSize(r - 1) != 1 && bt.getDimSize(r - 2) != 1) {
          what += "; a bias over queries and keys, " + typeString(bt) +
                  ", is materialised: if it is a position bias, attention's "
                  "alibi= or relative_bias= compute it tile by tile";
          break;
        }
      }
      reporter.fused(softmax, what + ")");
      rewrite(rewriter, *m);
      fusedAny = true;
    }
    if (!fusedAny)
      return;

    // Head split and merge around the fused ops.
    SmallVector<Operation *> layout;
    getOperation()->walk([&](Operation *op) {
      if (isa<TransposeOp, ReshapeOp>(op))
        layout.push_back(op);
    });
    for (Operation *op : layout) {
      if (auto t = dyn_cast<TransposeOp>(op)) {
        if (llvm::any_of(t->getUsers(),
                         [](Operation *u) { return isa<AttentionOp>(u); }))
          formSplitHeads(rewriter, t);
      }
    }
    getOperation()->walk([&](ReshapeOp r) {
      if (auto t = r.getInput().getDefiningOp<TransposeOp>())
        if (t.getInput().getDefiningOp<AttentionOp>())
          formMergeHeads(rewriter, r);
    });
  }
};

} // namespace
