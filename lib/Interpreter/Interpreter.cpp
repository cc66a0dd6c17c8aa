//===- Interpreter.cpp - Reference interpreter for the tfc dialect -------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Each op is evaluated by a plain loop nest over row-major data. Broadcasting
// binary ops walk the output index and map it to each operand with stride 0
// on broadcast axes. Accumulations are in double; results are rounded to
// their element type.
//
//===----------------------------------------------------------------------===//

#include "tfc/Interpreter/Interpreter.h"
#include "tfc/Dialect/Tfc/IR/ShapeRules.h"

#include "tfc/Dialect/Tfc/IR/TfcOps.h"
#include "tfc/Dialect/Tfc/IR/PositionBias.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <limits>
#include <random>

using namespace mlir;
using namespace mlir::tfc;
using namespace mlir::tfc::interp;

//===----------------------------------------------------------------------===//
// Tensor
//===----------------------------------------------------------------------===//

static int64_t product(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

Tensor::Tensor(Type elementType, ArrayRef<int64_t> shape)
    : elementType(elementType), shape(shape), data(product(shape), 0.0) {}

int64_t Tensor::numElements() const { return product(shape); }

/// `v` rounded to what `type` can hold.
static double roundTo(Type type, double v) {
  if (type.isF32())
    return static_cast<double>(static_cast<float>(v));
  if (type.isF64())
    return v;
  if (auto ft = dyn_cast<FloatType>(type)) {
    APFloat f(v);
    bool lost;
    f.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    return f.convertToDouble();
  }
  if (type.isInteger(1))
    return v != 0.0 ? 1.0 : 0.0;
  if (std::isnan(v))
    return 0.0;
  return std::trunc(v);
}

static SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

using Static = shapes::StaticDims;

/// A run-time shape by the op's rule (ShapeRules.h, the one the verifier and
/// the frontend use), or the rule's message as a run-time error.
static FailureOr<SmallVector<int64_t>> ruleShape(Operation *op,
                                                 shapes::Result<int64_t> r) {
  if (!r.ok())
    return op->emitError("at run time: ") << r.error;
  return SmallVector<int64_t>(r.shape.begin(), r.shape.end());
}

/// Strides of `shape` seen from a broadcast `outShape`: 0 on broadcast axes.
static SmallVector<int64_t> broadcastStrides(ArrayRef<int64_t> shape,
                                             ArrayRef<int64_t> outShape) {
  SmallVector<int64_t> own = stridesOf(shape);
  SmallVector<int64_t> out(outShape.size(), 0);
  size_t lead = outShape.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i)
    out[lead + i] = shape[i] == 1 ? 0 : own[i];
  return out;
}

static std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

//===----------------------------------------------------------------------===//
// Evaluator
//===----------------------------------------------------------------------===//

namespace {

/// A runtime value: an `index` scalar or a tensor.
struct RtValue {
  bool isIndex = false;
  int64_t index = 0;
  Tensor tensor;
};

constexpr double kInf = std::numeric_limits<double>::infinity();

class Evaluator {
public:
  explicit Evaluator(const WeightProvider &weights) : weights(weights) {}

  FailureOr<SmallVector<Tensor>> run(func::FuncOp func, ArrayRef<Tensor> args);

private:
  LogicalResult eval(Operation *op);

  const Tensor &tensor(Value v) { return env[v].tensor; }
  int64_t index(Value v) { return env[v].index; }
  void setTensor(Value v, Tensor t) { env[v].tensor = std::move(t); }
  void setIndex(Value v, int64_t i) {
    env[v].isIndex = true;
    env[v].index = i;
  }

  /// Elementwise op over broadcast operands.
  FailureOr<Tensor> mapN(Operation *op, ArrayRef<const Tensor *> ins,
                         Type outType,
                         llvm::function_ref<double(ArrayRef<double>)> fn);

  LogicalResult evalTfc(Operation *op);
  LogicalResult evalGlue(Operation *op);

  const WeightProvider &weights;
  DenseMap<Value, RtValue> env;
};

} // namespace

FailureOr<Tensor>
Evaluator::mapN(Operation *op, ArrayRef<const Tensor *> ins, Type outType,
                llvm::function_ref<double(ArrayRef<double>)> fn) {
  FailureOr<SmallVector<int64_t>> outShape = SmallVector<int64_t>();
  for (const Tensor *t : ins) {
    shapes::Result<int64_t> r = shapes::broadcast<Static>(*outShape, t->shape);
    if (!r.ok()) {
      outShape = failure();
      break;
    }
    outShape->assign(r.shape.begin(), r.shape.end());
  }
  if (failed(outShape)) {
    InFlightDiagnostic diag = op->emitError("operand shapes ");
    for (const Tensor *t : ins)
      diag << shapeStr(t->shape) << " ";
    diag << "do not broadcast at run time";
    return failure();
  }
  Tensor out(outType, *outShape);
  size_t rank = outShape->size();
  SmallVector<SmallVector<int64_t>> strides;
  for (const Tensor *t : ins)
    strides.push_back(broadcastStrides(t->shape, *outShape));
  SmallVector<int64_t> idx(rank, 0), offs(ins.size(), 0);
  SmallVector<double> vals(ins.size());
  for (int64_t n = 0, e = out.numElements(); n < e; ++n) {
    for (size_t k = 0; k < ins.size(); ++k)
      vals[k] = ins[k]->data[offs[k]];
    out.data[n] = roundTo(outType, fn(vals));
    // Advance the multi-index and the operand offsets.
    for (int64_t d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
      if (++idx[d] < (*outShape)[d]) {
        for (size_t k = 0; k < ins.size(); ++k)
          offs[k] += strides[k][d];
        break;
      }
      for (size_t k = 0; k < ins.size(); ++k)
        offs[k] -= strides[k][d] * (idx[d] - 1);
      idx[d] = 0;
    }
  }
  return out;
}

static double gelu(double x, bool tanhForm) {
  if (tanhForm)
    return 0.5 * x *
           (1.0 + std::tanh(std::sqrt(2.0 / M_PI) *
                            (x + 0.044715 * x * x * x)));
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}

static double silu(double x) { return x / (1.0 + std::exp(-x)); }

static double activate(Activation act, double x) {
  switch (act) {
  case Activation::None:
    return x;
  case Activation::Relu:
    return x > 0.0 ? x : 0.0;
  case Activation::GeluErf:
    return gelu(x, false);
  case Activation::GeluTanh:
    return gelu(x, true);
  case Activation::Silu:
    return silu(x);
  }
  return x;
}

/// Splits `shape` around `axis` into (outer, axis size, inner).
static std::tuple<int64_t, int64_t, int64_t> around(ArrayRef<int64_t> shape,
                                                    int64_t axis) {
  return {product(shape.take_front(axis)), shape[axis],
          product(shape.drop_front(axis + 1))};
}

/// Softmax of `row` (n values, stride 1) in place; all -inf gives zeros.
static void softmaxRow(double *row, int64_t n) {
  double m = -kInf;
  for (int64_t i = 0; i < n; ++i)
    m = std::max(m, row[i]);
  if (m == -kInf) {
    std::fill(row, row + n, 0.0);
    return;
  }
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i)
    sum += (row[i] = std::exp(row[i] - m));
  for (int64_t i = 0; i < n; ++i)
    row[i] /= sum;
}

/// x += r (same shape), rounded to x's type: the residual of a fused norm.
static LogicalResult addResidual(Operation *op, Tensor &x, const Tensor &r) {
  if (r.shape != x.shape)
    return op->emitError("residual ")
           << shapeStr(r.shape) << " differs from the input "
           << shapeStr(x.shape) << " at run time";
  for (size_t i = 0; i < x.data.size(); ++i)
    x.data[i] = roundTo(x.elementType, x.data[i] + r.data[i]);
  return success();
}

LogicalResult Evaluator::evalTfc(Operation *op) {
  auto resultType = [&](unsigned i = 0) {
    return cast<RankedTensorType>(op->getResult(i).getType());
  };
  auto finish = [&](FailureOr<Tensor> t) -> LogicalResult {
    if (failed(t))
      return failure();
    setTensor(op->getResult(0), std::move(*t));
    return success();
  };
  auto unary = [&](Value in, llvm::function_ref<double(double)> fn) {
    return finish(mapN(op, {&tensor(in)}, resultType().getElementType(),
                       [&](ArrayRef<double> v) { return fn(v[0]); }));
  };
  auto binary = [&](Value a, Value b,
                    llvm::function_ref<double(double, double)> fn) {
    return finish(mapN(op, {&tensor(a), &tensor(b)},
                       resultType().getElementType(),
                       [&](ArrayRef<double> v) { return fn(v[0], v[1]); }));
  };
  auto reduce = [&](Value in, int64_t axis, bool keepdim,
                    llvm::function_ref<double(const double *, int64_t,
                                              int64_t)> fn) {
    const Tensor &x = tensor(in);
    FailureOr<SmallVector<int64_t>> shape =
        ruleShape(op, shapes::reduce<Static>(x.shape, axis, keepdim));
    if (failed(shape))
      return failure();
    auto [outer, n, inner] = around(x.shape, axis);
    Type et = resultType().getElementType();
    Tensor out(et, *shape);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i)
        out.data[o * inner + i] =
            roundTo(et, fn(&x.data[o * n * inner + i], n, inner));
    return finish(std::move(out));
  };

  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](WeightOp w) -> LogicalResult {
        FailureOr<Tensor> t = weights(w.getName(), resultType());
        if (failed(t))
          return w.emitError("no value for weight '") << w.getName() << "'";
        if (ArrayRef<int64_t>(t->shape) != resultType().getShape())
          return w.emitError("weight '")
                 << w.getName() << "' has shape " << shapeStr(t->shape)
                 << ", expected " << shapeStr(resultType().getShape());
        t->elementType = resultType().getElementType();
        return finish(std::move(*t));
      })
      .Case([&](EmbeddingOp e) -> LogicalResult {
        const Tensor &table = tensor(e.getTable());
        const Tensor &ids = tensor(e.getIds());
        FailureOr<SmallVector<int64_t>> shape =
            ruleShape(e, shapes::embedding<Static>(table.shape, ids.shape));
        if (failed(shape))
          return failure();
        int64_t v = table.shape[0], d = table.shape[1];
        Tensor out(table.elementType, *shape);
        for (int64_t i = 0, n = ids.numElements(); i < n; ++i) {
          double id = ids.data[i];
          if (id < 0 || id >= v)
            return e.emitError("id ")
                   << static_cast<int64_t>(id) << " is outside the table [0, "
                   << v << ")";
          std::copy_n(&table.data[static_cast<int64_t>(id) * d], d,
                      &out.data[i * d]);
        }
        return finish(std::move(out));
      })
      .Case([&](LinearOp l) -> LogicalResult {
        const Tensor &x = tensor(l.getInput());
        const Tensor &w = tensor(l.getWeight());
        const Tensor *b = l.getBias() ? &tensor(l.getBias()) : nullptr;
        std::optional<ArrayRef<int64_t>> bias;
        if (b)
          bias = ArrayRef<int64_t>(b->shape);
        FailureOr<SmallVector<int64_t>> shape =
            ruleShape(l, shapes::linear<Static>(x.shape, w.shape, bias));
        if (failed(shape))
          return failure();
        int64_t k = x.shape.back(), n = w.shape[0];
        int64_t rows = product(ArrayRef<int64_t>(x.shape).drop_back());
        Type et = resultType().getElementType();
        Tensor out(et, *shape);
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t j = 0; j < n; ++j) {
            double acc = 0.0;
            for (int64_t i = 0; i < k; ++i)
              acc += x.data[r * k + i] * w.data[j * k + i];
            if (b)
              acc += b->data[j];
            out.data[r * n + j] = roundTo(et, activate(l.getActivation(), acc));
          }
        return finish(std::move(out));
      })
      .Case([&](MatmulOp m) -> LogicalResult {
        const Tensor &a = tensor(m.getLhs());
        const Tensor &b = tensor(m.getRhs());
        bool ta = m.getTransposeLhs(), tb = m.getTransposeRhs();
        int64_t ra = a.rank();
        FailureOr<SmallVector<int64_t>> shape =
            ruleShape(m, shapes::matmul<Static>(a.shape, b.shape, ta, tb));
        if (failed(shape))
          return failure();
        int64_t M = (*shape)[shape->size() - 2], N = shape->back();
        int64_t K = ta ? a.shape[ra - 2] : a.shape[ra - 1];
        ArrayRef<int64_t> ba = ArrayRef<int64_t>(a.shape).drop_back(2);
        ArrayRef<int64_t> bb = ArrayRef<int64_t>(b.shape).drop_back(2);
        SmallVector<int64_t> batch(ArrayRef<int64_t>(*shape).drop_back(2));
        SmallVector<int64_t> sa = broadcastStrides(ba, batch);
        SmallVector<int64_t> sb = broadcastStrides(bb, batch);
        Type et = resultType().getElementType();
        Tensor out(et, *shape);
        int64_t nb = product(batch);
        SmallVector<int64_t> bs = stridesOf(batch);
        std::vector<double> acc(N);
        for (int64_t bi = 0; bi < nb; ++bi) {
          int64_t offA = 0, offB = 0;
          for (size_t d = 0; d < batch.size(); ++d) {
            int64_t id = (bi / bs[d]) % batch[d];
            offA += id * sa[d];
            offB += id * sb[d];
          }
          offA *= M * K;
          offB *= K * N;
          for (int64_t i = 0; i < M; ++i) {
            std::fill(acc.begin(), acc.end(), 0.0);
            for (int64_t kk = 0; kk < K; ++kk) {
              double av = a.data[offA + (ta ? kk * M + i : i * K + kk)];
              for (int64_t j = 0; j < N; ++j)
                acc[j] +=
                    av * b.data[offB + (tb ? j * K + kk : kk * N + j)];
            }
            for (int64_t j = 0; j < N; ++j)
              out.data[(bi * M + i) * N + j] = roundTo(et, acc[j]);
          }
        }
        return finish(std::move(out));
      })
      .Case([&](LayerNormOp ln) -> LogicalResult {
        Tensor x = tensor(ln.getInput());
        if (ln.getResidual() &&
            failed(addResidual(ln, x, tensor(ln.getResidual()))))
          return failure();
        const Tensor *g = ln.getScale() ? &tensor(ln.getScale()) : nullptr;
        const Tensor *b = ln.getBias() ? &tensor(ln.getBias()) : nullptr;
        double eps = ln.getEpsilon().convertToDouble();
        int64_t d = x.shape.back(), rows = d ? x.numElements() / d : 0;
        Tensor out(x.elementType, x.shape);
        for (int64_t r = 0; r < rows; ++r) {
          const double *row = &x.data[r * d];
          double mean = 0.0, var = 0.0;
          for (int64_t i = 0; i < d; ++i)
            mean += row[i];
          mean /= d;
          for (int64_t i = 0; i < d; ++i)
            var += (row[i] - mean) * (row[i] - mean);
          var /= d;
          double inv = 1.0 / std::sqrt(var + eps);
          for (int64_t i = 0; i < d; ++i) {
            double y = (row[i] - mean) * inv;
            if (g)
              y *= g->data[i];
            if (b)
              y += b->data[i];
            out.data[r * d + i] = roundTo(x.elementType, y);
          }
        }
        return finish(std::move(out));
      })
      .Case([&](RmsNormOp rn) -> LogicalResult {
        Tensor x = tensor(rn.getInput());
        if (rn.getResidual() &&
            failed(addResidual(rn, x, tensor(rn.getResidual()))))
          return failure();
        const Tensor *g = rn.getScale() ? &tensor(rn.getScale()) : nullptr;
        double eps = rn.getEpsilon().convertToDouble();
        int64_t d = x.shape.back(), rows = d ? x.numElements() / d : 0;
        Tensor out(x.elementType, x.shape);
        for (int64_t r = 0; r < rows; ++r) {
          const double *row = &x.data[r * d];
          double ms = 0.0;
          for (int64_t i = 0; i < d; ++i)
            ms += row[i] * row[i];
          double inv = 1.0 / std::sqrt(ms / d + eps);
          for (int64_t i = 0; i < d; ++i)
            out.data[r * d + i] =
                roundTo(x.elementType, row[i] * inv * (g ? g->data[i] : 1.0));
        }
        return finish(std::move(out));
      })
      .Case([&](SoftmaxOp s) -> LogicalResult {
        const Tensor &x = tensor(s.getInput());
        auto [outer, n, inner] = around(x.shape, s.getAxis());
        Tensor out(x.elementType, x.shape);
        std::vector<double> row(n);
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t i = 0; i < inner; ++i) {
            for (int64_t j = 0; j < n; ++j)
              row[j] = x.data[(o * n + j) * inner + i];
            softmaxRow(row.data(), n);
            for (int64_t j = 0; j < n; ++j)
              out.data[(o * n + j) * inner + i] =
                  roundTo(x.elementType, row[j]);
          }
        return finish(std::move(out));
      })
      .Case([&](AttentionOp at) -> LogicalResult {
        const Tensor &q = tensor(at.getQuery());
        const Tensor &k = tensor(at.getKey());
        const Tensor &v = tensor(at.getValue());
        const Tensor *mask = at.getMask() ? &tensor(at.getMask()) : nullptr;
        std::optional<ArrayRef<int64_t>> maskShape;
        if (mask)
          maskShape = ArrayRef<int64_t>(mask->shape);
        if (failed(ruleShape(at, shapes::attention<Static>(
                                     q.shape, k.shape, v.shape, maskShape))))
          return failure();
        int64_t B = q.shape[0], H = q.shape[1], Tq = q.shape[2],
                D = q.shape[3];
        int64_t Hkv = k.shape[1], Tk = k.shape[2], Dv = v.shape[3];
        SmallVector<int64_t> scoresShape = {B, H, Tq, Tk};
        SmallVector<int64_t> ms;
        if (mask)
          ms = broadcastStrides(mask->shape, scoresShape);
        const Tensor *rel =
            at.getRelativeBias() ? &tensor(at.getRelativeBias()) : nullptr;
        int64_t R = at.getRelativeDistance();
        if (rel && (rel->shape.size() != 2 || rel->shape[0] != H ||
                    rel->shape[1] != 2 * R + 1))
          return at.emitError("relative_bias ")
                 << shapeStr(rel->shape) << " does not fit " << H
                 << " heads at run time";
        double alibi = at.getAlibi() ? at.getAlibi()->convertToDouble() : 0.0;
        double softcap =
            at.getSoftcap() ? at.getSoftcap()->convertToDouble() : 0.0;
        double scale = at.getEffectiveScale();
        int64_t group = H / Hkv;
        const Tensor *lengths =
            at.getRowPast() ? &tensor(at.getRowPast()) : nullptr;
        if (lengths && (lengths->shape.size() != 1 || lengths->shape[0] != B))
          return at.emitError("row_past ")
                 << shapeStr(lengths->shape) << " does not fit a batch of " << B
                 << " at run time";
        Type et = resultType().getElementType();
        Tensor out(et, {B, H, Tq, Dv});
        std::vector<double> p(Tk);
        for (int64_t b = 0; b < B; ++b)
          for (int64_t h = 0; h < H; ++h) {
            // Row b's own keys: [0, row_past[b] + Tq), clamped to [0, Tk].
            int64_t keys =
                lengths
                    ? std::clamp<int64_t>(
                          static_cast<int64_t>(lengths->data[b]) + Tq, 0, Tk)
                    : Tk;
            int64_t hk = h / group;
            const double *kb = &k.data[(b * Hkv + hk) * Tk * D];
            const double *vb = &v.data[(b * Hkv + hk) * Tk * Dv];
            for (int64_t i = 0; i < Tq; ++i) {
              const double *qi = &q.data[((b * H + h) * Tq + i) * D];
              for (int64_t j = 0; j < Tk; ++j) {
                if (j >= keys || (at.getCausal() && j > i + (keys - Tq)) ||
                    (at.getWindow() &&
                     j <= i + (keys - Tq) -
                              static_cast<int64_t>(*at.getWindow()))) {
                  p[j] = -kInf;
                  continue;
                }
                double s = 0.0;
                for (int64_t d = 0; d < D; ++d)
                  s += qi[d] * kb[j * D + d];
                s *= scale;
                if (softcap > 0.0)
                  s = softcap * std::tanh(s / softcap);
                if (mask)
                  s += mask->data[b * ms[0] + h * ms[1] + i * ms[2] +
                                  j * ms[3]];
                int64_t r = j - (i + (keys - Tq));
                if (rel)
                  s += rel->data[h * (2 * R + 1) + std::clamp(r, -R, R) + R];
                if (alibi > 0.0)
                  s += alibiSlope(h, H, alibi) * static_cast<double>(r);
                p[j] = s;
              }
              softmaxRow(p.data(), Tk);
              double *oi = &out.data[((b * H + h) * Tq + i) * Dv];
              for (int64_t d = 0; d < Dv; ++d) {
                double acc = 0.0;
                for (int64_t j = 0; j < Tk; ++j)
                  acc += p[j] * vb[j * Dv + d];
                oi[d] = roundTo(et, acc);
              }
            }
          }
        return finish(std::move(out));
      })
      .Case([&](RelativePositionBiasOp rb) -> LogicalResult {
        const Tensor &table = tensor(rb.getTable());
        int64_t buckets = static_cast<int64_t>(rb.getNumBuckets());
        int64_t R = static_cast<int64_t>(rb.getMaxDistance());
        if (table.shape[0] != buckets)
          return rb.emitError("table ")
                 << shapeStr(table.shape) << " has no " << buckets
                 << " buckets at run time";
        int64_t H = table.shape[1];
        Tensor out(resultType().getElementType(), {H, 2 * R + 1});
        for (int64_t c = 0; c <= 2 * R; ++c) {
          int64_t bucket =
              relativeBucket(c - R, buckets, R, rb.getBidirectional());
          for (int64_t h = 0; h < H; ++h)
            out.data[h * (2 * R + 1) + c] = table.data[bucket * H + h];
        }
        return finish(std::move(out));
      })
      .Case([&](GeluOp g) {
        bool t = g.getApproximation() == GeluApproximation::Tanh;
        return unary(g.getInput(), [&](double x) { return gelu(x, t); });
      })
      .Case([&](ReluOp r) {
        return unary(r.getInput(), [](double x) { return x > 0 ? x : 0.0; });
      })
      .Case([&](SiluOp s) { return unary(s.getInput(), silu); })
      .Case([&](ExpOp o) {
        return unary(o.getInput(), [](double x) { return std::exp(x); });
      })
      .Case([&](LogOp o) {
        return unary(o.getInput(), [](double x) { return std::log(x); });
      })
      .Case([&](SqrtOp o) {
        return unary(o.getInput(), [](double x) { return std::sqrt(x); });
      })
      .Case([&](RsqrtOp o) {
        return unary(o.getInput(),
                     [](double x) { return 1.0 / std::sqrt(x); });
      })
      .Case([&](TanhOp o) {
        return unary(o.getInput(), [](double x) { return std::tanh(x); });
      })
      .Case([&](ErfOp o) {
        return unary(o.getInput(), [](double x) { return std::erf(x); });
      })
      .Case([&](NegOp o) {
        return unary(o.getInput(), [](double x) { return -x; });
      })
      .Case([&](AddOp o) {
        return binary(o.getLhs(), o.getRhs(),
                      [](double a, double b) { return a + b; });
      })
      .Case([&](SubOp o) {
        return binary(o.getLhs(), o.getRhs(),
                      [](double a, double b) { return a - b; });
      })
      .Case([&](MulOp o) {
        return binary(o.getLhs(), o.getRhs(),
                      [](double a, double b) { return a * b; });
      })
      .Case([&](DivOp o) {
        return binary(o.getLhs(), o.getRhs(),
                      [](double a, double b) { return a / b; });
      })
      .Case([&](MaxOp o) {
        return binary(o.getLhs(), o.getRhs(), [](double a, double b) {
          return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
        });
      })
      .Case([&](MinOp o) {
        return binary(o.getLhs(), o.getRhs(), [](double a, double b) {
          return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
        });
      })
      .Case([&](PowOp o) {
        return binary(o.getLhs(), o.getRhs(),
                      [](double a, double b) { return std::pow(a, b); });
      })
      .Case([&](WhereOp w) {
        return finish(mapN(op,
                           {&tensor(w.getCondition()), &tensor(w.getOnTrue()),
                            &tensor(w.getOnFalse())},
                           resultType().getElementType(),
                           [](ArrayRef<double> v) {
                             return v[0] != 0.0 ? v[1] : v[2];
                           }));
      })
      .Case([&](CastOp c) {
        return unary(c.getInput(), [](double x) { return x; });
      })
      .Case([&](ReduceSumOp r) {
        return reduce(r.getInput(), r.getAxis(), r.getKeepdim(),
                      [](const double *p, int64_t n, int64_t s) {
                        double acc = 0.0;
                        for (int64_t i = 0; i < n; ++i)
                          acc += p[i * s];
                        return acc;
                      });
      })
      .Case([&](ReduceMeanOp r) {
        return reduce(r.getInput(), r.getAxis(), r.getKeepdim(),
                      [](const double *p, int64_t n, int64_t s) {
                        double acc = 0.0;
                        for (int64_t i = 0; i < n; ++i)
                          acc += p[i * s];
                        return acc / n;
                      });
      })
      .Case([&](ReduceMaxOp r) {
        return reduce(r.getInput(), r.getAxis(), r.getKeepdim(),
                      [](const double *p, int64_t n, int64_t s) {
                        double m = -kInf;
                        for (int64_t i = 0; i < n; ++i)
                          m = std::isnan(p[i * s]) ? NAN : std::max(m, p[i * s]);
                        return m;
                      });
      })
      .Case([&](ArgmaxOp r) {
        return reduce(r.getInput(), r.getAxis(), r.getKeepdim(),
                      [](const double *p, int64_t n, int64_t s) {
                        int64_t best = 0;
                        for (int64_t i = 1; i < n; ++i)
                          if (p[i * s] > p[best * s])
                            best = i;
                        return static_cast<double>(best);
                      });
      })
      .Case([&](TransposeOp t) -> LogicalResult {
        const Tensor &x = tensor(t.getInput());
        ArrayRef<int64_t> perm = t.getPermutation();
        FailureOr<SmallVector<int64_t>> outShape =
            ruleShape(t, shapes::transpose<Static>(x.shape, perm));
        if (failed(outShape))
          return failure();
        ArrayRef<int64_t> shape = *outShape;
        Tensor out(x.elementType, shape);
        SmallVector<int64_t> inStrides = stridesOf(x.shape);
        SmallVector<int64_t> outStrides = stridesOf(shape);
        for (int64_t n = 0, e = out.numElements(); n < e; ++n) {
          int64_t off = 0;
          for (size_t d = 0; d < shape.size(); ++d)
            off += ((n / outStrides[d]) % shape[d]) * inStrides[perm[d]];
          out.data[n] = x.data[off];
        }
        return finish(std::move(out));
      })
      .Case([&](ReshapeOp r) -> LogicalResult {
        const Tensor &x = tensor(r.getInput());
        SmallVector<int64_t> shape;
        unsigned next = 0;
        for (int64_t d : resultType().getShape())
          shape.push_back(ShapedType::isDynamic(d)
                              ? index(r.getDynamicSizes()[next++])
                              : d);
        if (product(shape) != x.numElements())
          return r.emitError("cannot reshape ")
                 << shapeStr(x.shape) << " to " << shapeStr(shape);
        Tensor out = x;
        out.shape = shape;
        return finish(std::move(out));
      })
      .Case([&](SplitHeadsOp s) -> LogicalResult {
        const Tensor &x = tensor(s.getInput());
        FailureOr<SmallVector<int64_t>> shape =
            ruleShape(s, shapes::splitHeads<Static>(x.shape, s.getHeads()));
        if (failed(shape))
          return failure();
        int64_t B = x.shape[0], T = x.shape[1], F = x.shape[2];
        int64_t H = s.getHeads(), D = shape->back();
        Tensor out(x.elementType, *shape);
        for (int64_t b = 0; b < B; ++b)
          for (int64_t t = 0; t < T; ++t)
            for (int64_t h = 0; h < H; ++h)
              std::copy_n(&x.data[(b * T + t) * F + h * D], D,
                          &out.data[((b * H + h) * T + t) * D]);
        return finish(std::move(out));
      })
      .Case([&](MergeHeadsOp m) -> LogicalResult {
        const Tensor &x = tensor(m.getInput());
        FailureOr<SmallVector<int64_t>> shape =
            ruleShape(m, shapes::mergeHeads<Static>(x.shape));
        if (failed(shape))
          return failure();
        int64_t B = x.shape[0], H = x.shape[1], T = x.shape[2],
                D = x.shape[3];
        Tensor out(x.elementType, *shape);
        for (int64_t b = 0; b < B; ++b)
          for (int64_t h = 0; h < H; ++h)
            for (int64_t t = 0; t < T; ++t)
              std::copy_n(&x.data[((b * H + h) * T + t) * D], D,
                          &out.data[(b * T + t) * H * D + h * D]);
        return finish(std::move(out));
      })
      .Case([&](RopeOp r) -> LogicalResult {
        const Tensor &x = tensor(r.getInput());
        int64_t rank = x.rank(), T = x.shape[rank - 2], D = x.shape[rank - 1];
        int64_t R = r.getRotaryDim() ? static_cast<int64_t>(*r.getRotaryDim())
                                     : D;
        if (R > D || R % 2)
          return r.emitError("rotary_dim ")
                 << R << " does not fit the feature size " << D;
        int64_t offset = r.getOffset() ? index(r.getOffset()) : 0;
        const Tensor *rowOffsets =
            r.getRowOffsets() ? &tensor(r.getRowOffsets()) : nullptr;
        if (rowOffsets && (rowOffsets->shape.size() != 1 ||
                           rowOffsets->shape[0] != x.shape[0]))
          return r.emitError("row_offsets ")
                 << shapeStr(rowOffsets->shape) << " does not fit a batch of "
                 << x.shape[0] << " at run time";
        int64_t perBatch = x.shape[0] ? x.numElements() / D / x.shape[0] : 0;
        double base = r.getBase().convertToDouble();
        bool adjacent = r.getMode() == RopeMode::Adjacent;
        Tensor out = x;
        int64_t rows = D ? x.numElements() / D : 0;
        std::optional<ArrayRef<double>> scale = r.getFreqScale();
        if (scale && static_cast<int64_t>(scale->size()) != R / 2)
          return r.emitError("freq_scale does not match rotary_dim");
        for (int64_t row = 0; row < rows; ++row) {
          int64_t first =
              rowOffsets
                  ? static_cast<int64_t>(
                        rowOffsets->data[row / std::max<int64_t>(perBatch, 1)])
                  : offset;
          double pos = static_cast<double>(first + row % T);
          const double *in = &x.data[row * D];
          double *o = &out.data[row * D];
          for (int64_t i = 0; i < R / 2; ++i) {
            double theta =
                pos / std::pow(base, static_cast<double>(2 * i) / R) *
                (scale ? (*scale)[i] : 1.0);
            int64_t a = adjacent ? 2 * i : i;
            int64_t b = adjacent ? 2 * i + 1 : i + R / 2;
            double c = std::cos(theta), s = std::sin(theta);
            o[a] = roundTo(x.elementType, in[a] * c - in[b] * s);
            o[b] = roundTo(x.elementType, in[b] * c + in[a] * s);
          }
        }
        return finish(std::move(out));
      })
      .Case([&](SinusoidalPositionsOp s) -> LogicalResult {
        int64_t T = index(s.getLength());
        int64_t offset = s.getOffset() ? index(s.getOffset()) : 0;
        int64_t D = resultType().getShape()[1];
        double base = s.getBase().convertToDouble();
        Type et = resultType().getElementType();
        Tensor out(et, {T, D});
        bool halves = s.getHalves();
        for (int64_t t = 0; t < T; ++t)
          for (int64_t i = 0; 2 * i < D; ++i) {
            double angle = static_cast<double>(offset + t) /
                           std::pow(base, static_cast<double>(2 * i) / D);
            int64_t sinAt = halves ? i : 2 * i;
            int64_t cosAt = halves ? D / 2 + i : 2 * i + 1;
            out.data[t * D + sinAt] = roundTo(et, std::sin(angle));
            if (cosAt < D)
              out.data[t * D + cosAt] = roundTo(et, std::cos(angle));
          }
        return finish(std::move(out));
      })
      .Case([&](CausalMaskOp c) -> LogicalResult {
        int64_t Tq = index(c.getQueryLength()), Tk = index(c.getKeyLength());
        Tensor out(resultType().getElementType(), {Tq, Tk});
        for (int64_t i = 0; i < Tq; ++i)
          for (int64_t j = 0; j < Tk; ++j)
            out.data[i * Tk + j] = j <= i + (Tk - Tq) ? 0.0 : -kInf;
        return finish(std::move(out));
      })
      .Case([&](PaddingMaskOp p) -> LogicalResult {
        const Tensor &x = tensor(p.getInput());
        Tensor out(resultType().getElementType(),
                   {x.shape[0], 1, 1, x.shape[1]});
        for (int64_t i = 0, n = x.numElements(); i < n; ++i)
          out.data[i] = x.data[i] != 0.0 ? 0.0 : -kInf;
        return finish(std::move(out));
      })
      .Case([&](ArangeOp a) -> LogicalResult {
        int64_t n = index(a.getLength());
        int64_t offset = a.getOffset() ? index(a.getOffset()) : 0;
        Tensor out(resultType().getElementType(), {n});
        for (int64_t i = 0; i < n; ++i)
          out.data[i] = static_cast<double>(offset + i);
        return finish(std::move(out));
      })
      .Case([&](ConcatOp c) -> LogicalResult {
        int64_t axis = c.getAxis();
        const Tensor &first = tensor(c.getInputs().front());
        SmallVector<int64_t> shape(first.shape);
        shape[axis] = 0;
        for (Value v : c.getInputs()) {
          const Tensor &t = tensor(v);
          for (int64_t i = 0; i < first.rank(); ++i)
            if (i != axis && t.shape[i] != first.shape[i])
              return c.emitError("inputs ")
                     << shapeStr(first.shape) << " and " << shapeStr(t.shape)
                     << " differ outside the concatenated axis";
          shape[axis] += t.shape[axis];
        }
        Tensor out(first.elementType, shape);
        auto [outer, n, inner] = around(shape, axis);
        int64_t at = 0;
        for (Value v : c.getInputs()) {
          const Tensor &t = tensor(v);
          int64_t part = t.shape[axis] * inner;
          for (int64_t o = 0; o < outer; ++o)
            std::copy_n(&t.data[o * part], part,
                        &out.data[o * n * inner + at]);
          at += part;
        }
        return finish(std::move(out));
      })
      .Case([&](SliceOp s) -> LogicalResult {
        const Tensor &x = tensor(s.getInput());
        int64_t axis = s.getAxis(), start = s.getStart(), size = s.getSize();
        FailureOr<SmallVector<int64_t>> shape =
            ruleShape(s, shapes::slice<Static>(x.shape, axis, start, size));
        if (failed(shape))
          return failure();
        auto [outer, n, inner] = around(x.shape, axis);
        if (s.getFromEnd())
          start = n - start - size;
        Tensor out(x.elementType, *shape);
        for (int64_t o = 0; o < outer; ++o)
          std::copy_n(&x.data[(o * n + start) * inner], size * inner,
                      &out.data[o * size * inner]);
        return finish(std::move(out));
      })
      .Default([&](Operation *op) {
        return op->emitError("the reference interpreter does not support '")
               << op->getName() << "'";
      });
}

LogicalResult Evaluator::evalGlue(Operation *op) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](arith::ConstantOp c) -> LogicalResult {
        if (auto i = dyn_cast<IntegerAttr>(c.getValue())) {
          setIndex(c, i.getInt());
          return success();
        }
        auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
        if (!dense)
          return c.emitError("the reference interpreter does not support "
                             "this constant");
        auto type = cast<RankedTensorType>(dense.getType());
        Tensor t(type.getElementType(), type.getShape());
        if (isa<FloatType>(type.getElementType())) {
          int64_t i = 0;
          for (APFloat f : dense.getValues<APFloat>())
            t.data[i++] = f.convertToDouble();
        } else {
          int64_t i = 0;
          bool isBool = type.getElementType().isInteger(1);
          for (APInt v : dense.getValues<APInt>())
            t.data[i++] = isBool ? static_cast<double>(v.getBoolValue())
                                 : static_cast<double>(v.getSExtValue());
        }
        setTensor(c, std::move(t));
        return success();
      })
      .Case([&](tensor::DimOp d) -> LogicalResult {
        std::optional<int64_t> i = d.getConstantIndex();
        const Tensor &t = tensor(d.getSource());
        if (!i || *i < 0 || *i >= t.rank())
          return d.emitError("dimension index out of range");
        setIndex(d, t.shape[*i]);
        return success();
      })
      .Case([&](arith::AddIOp o) {
        setIndex(o, index(o.getLhs()) + index(o.getRhs()));
        return success();
      })
      .Case([&](arith::SubIOp o) {
        setIndex(o, index(o.getLhs()) - index(o.getRhs()));
        return success();
      })
      .Case([&](arith::MulIOp o) {
        setIndex(o, index(o.getLhs()) * index(o.getRhs()));
        return success();
      })
      .Case([&](arith::DivSIOp o) -> LogicalResult {
        if (index(o.getRhs()) == 0)
          return o.emitError("division by zero");
        setIndex(o, index(o.getLhs()) / index(o.getRhs()));
        return success();
      })
      .Default([&](Operation *op) { return evalTfc(op); });
}

FailureOr<SmallVector<Tensor>> Evaluator::run(func::FuncOp func,
                                              ArrayRef<Tensor> args) {
  if (func.isExternal())
    return func.emitError("cannot interpret a function without a body");
  Block &body = func.getBody().front();
  if (args.size() != body.getNumArguments())
    return func.emitError("expected ")
           << body.getNumArguments() << " arguments, got " << args.size();
  for (auto [arg, t] : llvm::zip_equal(body.getArguments(), args)) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type)
      return func.emitError("argument #")
             << arg.getArgNumber() << " is not a ranked tensor";
    bool ok = type.getRank() == t.rank();
    for (int64_t i = 0; ok && i < t.rank(); ++i)
      ok = ShapedType::isDynamic(type.getDimSize(i)) ||
           type.getDimSize(i) == t.shape[i];
    if (!ok)
      return func.emitError("argument #")
             << arg.getArgNumber() << " has shape " << shapeStr(t.shape)
             << ", which does not fit " << type;
    env[arg].tensor = t;
    env[arg].tensor.elementType = type.getElementType();
  }
  for (Operation &op : body) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      SmallVector<Tensor> results;
      for (Value v : ret.getOperands())
        results.push_back(tensor(v));
      return results;
    }
    if (op.getNumRegions() != 0)
      return op.emitError("the reference interpreter does not support ops "
                          "with regions");
    if (failed(evalGlue(&op)))
      return failure();
  }
  return func.emitError("function has no return");
}

FailureOr<SmallVector<Tensor>> interp::run(func::FuncOp func,
                                           ArrayRef<Tensor> args,
                                           const WeightProvider &weights) {
  return Evaluator(weights).run(func, args);
}

//===----------------------------------------------------------------------===//
// Random weights and inputs
//===----------------------------------------------------------------------===//

static uint64_t hashName(StringRef name, uint64_t seed) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (char c : name)
    h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

WeightProvider interp::randomWeights(uint64_t seed) {
  return [seed](StringRef name, RankedTensorType type) -> FailureOr<Tensor> {
    Tensor t(type.getElementType(), type.getShape());
    std::mt19937_64 rng(hashName(name, seed));
    // Vectors are biases (named so) or normalisation scales (centred on 1);
    // matrices are scaled by their fan-in to keep activations O(1).
    bool isBias = name.ends_with("bias") || name.ends_with("beta") ||
                  name.ends_with(".b");
    bool isNormScale = type.getRank() == 1 && !isBias;
    int64_t fanIn = type.getRank() >= 2 ? type.getShape().back() : 1;
    double scale = isBias ? 0.1
                          : 1.0 / std::sqrt(static_cast<double>(
                                      std::max<int64_t>(fanIn, 1)));
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    for (double &x : t.data)
      x = roundTo(t.elementType,
                  isNormScale ? 1.0 + 0.1 * dist(rng) : scale * dist(rng));
    return t;
  };
}

FailureOr<SmallVector<Tensor>>
interp::randomInputs(func::FuncOp func, const ShapeChoice &choice,
                     uint64_t seed) {
  static const int64_t kDefaults[] = {2, 5, 7, 3, 6, 4, 9, 8};
  llvm::StringMap<int64_t> sizes = choice.named;
  unsigned nextDefault = 0;
  std::mt19937_64 rng(seed);
  SmallVector<Tensor> inputs;
  for (BlockArgument arg : func.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type)
      return func.emitError("argument #")
             << arg.getArgNumber() << " is not a ranked tensor";
    auto dims = func.getArgAttrOfType<ArrayAttr>(arg.getArgNumber(),
                                                 "tfc.dims");
    SmallVector<int64_t> shape;
    for (int64_t i = 0; i < type.getRank(); ++i) {
      int64_t d = type.getDimSize(i);
      if (!ShapedType::isDynamic(d)) {
        shape.push_back(d);
        continue;
      }
      StringRef name;
      if (dims && i < static_cast<int64_t>(dims.size()))
        if (auto s = dyn_cast<StringAttr>(dims[i]))
          name = s.getValue();
      if (name.empty()) {
        shape.push_back(choice.unnamed);
        continue;
      }
      auto it = sizes.find(name);
      if (it == sizes.end())
        it = sizes.insert({name, kDefaults[nextDefault++ % 8]}).first;
      shape.push_back(it->second);
    }
    Tensor t(type.getElementType(), shape);
    Type et = type.getElementType();
    if (isa<FloatType>(et)) {
      std::uniform_real_distribution<double> dist(-1.0, 1.0);
      for (double &x : t.data)
        x = roundTo(et, dist(rng));
    } else {
      // Ids for an embedding table, else a 1/0 mask.
      int64_t vocab = 0;
      for (Operation *user : arg.getUsers())
        if (auto e = dyn_cast<EmbeddingOp>(user))
          if (e.getIds() == arg)
            vocab = e.getTable().getType().getDimSize(0);
      if (vocab > 0) {
        std::uniform_int_distribution<int64_t> dist(0, vocab - 1);
        for (double &x : t.data)
          x = static_cast<double>(dist(rng));
      } else {
        std::bernoulli_distribution keep(0.75);
        int64_t last = t.rank() ? t.shape.back() : 1;
        for (int64_t i = 0, n = t.numElements(); i < n; ++i)
          t.data[i] = (last == 0 || i % last == 0 || keep(rng)) ? 1.0 : 0.0;
      }
    }
    inputs.push_back(std::move(t));
  }
  return inputs;
}

double interp::maxAbsDifference(const Tensor &a, const Tensor &b) {
  if (a.shape != b.shape)
    return kInf;
  double worst = 0.0;
  for (size_t i = 0; i < a.data.size(); ++i) {
    double x = a.data[i], y = b.data[i];
    if (std::isnan(x) || std::isnan(y))
      return NAN;
    if (std::isinf(x) || std::isinf(y)) {
      if (x != y)
        return kInf;
      continue;
    }
    worst = std::max(worst, std::abs(x - y));
  }
  return worst;
}

double interp::maxAbs(const Tensor &t) {
  double m = 0.0;
  for (double x : t.data)
    if (std::isfinite(x))
      m = std::max(m, std::abs(x));
  return m;
}

interp::ElementwiseAgreement interp::compareElementwise(const Tensor &want,
                                                        const Tensor &got) {
  ElementwiseAgreement a;
  auto fail = [&](std::string problem) {
    a.worst = NAN;
    a.problem = std::move(problem);
    return a;
  };
  if (want.shape != got.shape)
    return fail("the shapes differ");
  if (want.data.empty())
    return fail("no elements");
  auto countNonFinite = [](const Tensor &t) {
    return llvm::count_if(t.data, [](double x) { return !std::isfinite(x); });
  };
  if (int64_t n = countNonFinite(got))
    return fail(std::to_string(n) + " non-finite values (NaN or inf) in the "
                                    "result");
  if (int64_t n = countNonFinite(want))
    return fail(std::to_string(n) + " non-finite values (NaN or inf) in the "
                                    "reference");
  auto isConstant = [](const Tensor &t) {
    return t.data.size() > 1 &&
           llvm::all_of(t.data, [&](double x) { return x == t.data[0]; });
  };
  if (isConstant(want))
    return fail("the reference is constant");
  if (isConstant(got))
    return fail("the result is constant");
  double sumSquares = 0.0;
  for (double x : want.data)
    sumSquares += x * x;
  a.floor = std::sqrt(sumSquares / static_cast<double>(want.data.size()));
  for (size_t i = 0; i < want.data.size(); ++i) {
    double err = std::abs(got.data[i] - want.data[i]);
    double rel = err / std::max(std::abs(want.data[i]), a.floor);
    a.maxAbsError = std::max(a.maxAbsError, err);
    if (a.worstIndex < 0 || rel > a.worst) {
      a.worst = rel;
      a.worstIndex = static_cast<int64_t>(i);
    }
  }
  return a;
}
