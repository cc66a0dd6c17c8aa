//===- Elaborator.h - MLIRGen's internal state ------------------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Private to lib/Frontend: the compile-time values of the language and the
// class that evaluates a module into the tfc dialect. MLIRGen.cpp holds the
// statements, expressions and blocks; MLIRGenBuiltins.cpp the built-in ops.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_LIB_FRONTEND_ELABORATOR_H
#define TFC_LIB_FRONTEND_ELABORATOR_H

#include "tfc/Frontend/Builtins.h"
#include "tfc/Frontend/MLIRGen.h"
#include "tfc/Frontend/SymbolicShape.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringMap.h"

#include <map>
#include <optional>

namespace tfc::detail {

/// A compile-time value. Errors produce Poison, which every operation passes
/// on silently so that one mistake is reported once.
struct Val {
  enum class Kind { Poison, Int, Float, Bool, Str, DType, Dim, Tensor, List };
  Kind kind = Kind::Poison;
  int64_t i = 0;
  double f = 0;
  bool b = false;
  std::string s;
  mlir::Type elementType;  // DType, Tensor
  SymDim dim;              // Dim (always symbolic)
  mlir::Value value;       // Dim: its index value (may be null); Tensor
  SymShape shape;          // Tensor
  std::vector<Val> list;   // List
  bool isTuple = false;    // List: the results of a block or split()

  static Val poison() { return {}; }
  static Val ofInt(int64_t v) {
    Val r;
    r.kind = Kind::Int;
    r.i = v;
    return r;
  }
  static Val ofFloat(double v) {
    Val r;
    r.kind = Kind::Float;
    r.f = v;
    return r;
  }
  static Val ofBool(bool v) {
    Val r;
    r.kind = Kind::Bool;
    r.b = v;
    return r;
  }
  static Val ofStr(std::string v) {
    Val r;
    r.kind = Kind::Str;
    r.s = std::move(v);
    return r;
  }
  static Val ofTensor(mlir::Value v, SymShape shape) {
    Val r;
    r.kind = Kind::Tensor;
    r.value = v;
    r.elementType = mlir::cast<mlir::ShapedType>(v.getType()).getElementType();
    r.shape = std::move(shape);
    return r;
  }
  bool isPoison() const { return kind == Kind::Poison; }
  bool isNumber() const { return kind == Kind::Int || kind == Kind::Float; }
  double asDouble() const { return kind == Kind::Int ? double(i) : f; }
};

/// "a tensor f32[batch, seq, 768]", "the integer 12", ...
std::string describe(const Val &v);
std::string dtypeName(mlir::Type t);

/// The arguments of one call, bound to a built-in's parameters.
struct BoundArgs {
  const BuiltinSpec *spec = nullptr;
  const ast::CallExpr *call = nullptr;
  std::vector<std::optional<Val>> values;
  std::vector<llvm::SMLoc> locs;
};

class Elaborator {
public:
  Elaborator(const ast::Module &module, mlir::MLIRContext &context,
             DiagnosticEngine &diags, const MLIRGenOptions &options);

  mlir::OwningOpRef<mlir::ModuleOp> run();

  //===--------------------------------------------------------------------===//
  // Used by the built-ins (MLIRGenBuiltins.cpp).
  //===--------------------------------------------------------------------===//

  Val callBuiltin(const BuiltinSpec &spec, const ast::CallExpr &call);
  /// Evaluates a call argument.
  Val evalArg(const ast::Expr &e);

  /// Reports an error and returns Poison.
  Val fail(llvm::SMLoc loc, const llvm::Twine &message);
  mlir::Location loc(llvm::SMLoc l);
  mlir::RankedTensorType tensorType(llvm::ArrayRef<SymDim> shape,
                                    mlir::Type elementType);
  /// A number as a rank-0 constant of `elementType`.
  mlir::Value scalarConstant(double v, mlir::Type elementType, llvm::SMLoc l);
  /// An index value for an integer or a symbolic dim, or null after an error.
  mlir::Value indexValue(const Val &v, llvm::SMLoc l, llvm::StringRef what);
  /// The index value of a symbolic dim in the current entry, or null.
  mlir::Value dimValue(const SymDim &d);
  /// A tensor, or a number converted to a constant of `like`'s element type.
  std::optional<Val> asTensor(const Val &v, mlir::Type like, llvm::SMLoc l,
                              llvm::StringRef what);
  bool countOp(llvm::SMLoc l);

  enum class Elementwise { Add, Sub, Mul, Div, Pow, Max, Min };
  /// A broadcasting elementwise op on two float tensors: checks that their
  /// element types agree and that their shapes broadcast (errors start with
  /// `what`, e.g. "'+'" or "'maximum'"). The caller counts the op.
  Val emitElementwise(Elementwise kind, const Val &a, const Val &b,
                      llvm::SMLoc at, llvm::StringRef what);

  mlir::MLIRContext &context;
  mlir::OpBuilder builder;
  DiagnosticEngine &diags;

  /// While a cached entry (MLIRGenOptions::kvCache) is generated: positions
  /// along `seqDim` start at `past`, and each causal self-attention over
  /// `seqDim` reads and extends a key/value cache held in state arguments.
  struct CacheMode {
    std::string seqDim;
    mlir::Value past; // index
    mlir::Block *block = nullptr;
    struct State {
      mlir::Value arg, updated;
      std::string name;
      SymShape shape;
      /// A rolling buffer of this many positions (0: one row per position).
      int64_t window = 0;
    };
    llvm::SmallVector<State> states;
    /// Cross-attention keys/values (over another dim than `seqDim`, from
    /// inputs that do not change along it): state arguments of the cached
    /// entry, written once per source by `<entry>_cross`, which recomputes
    /// `source` (a value of the cached entry before it was replaced).
    struct Cross {
      mlir::Value arg, source;
      std::string name;
      SymShape shape;
    };
    llvm::SmallVector<Cross> cross;
    /// States the entry reads but does not write (`cache.bias`).
    struct ReadOnly {
      mlir::Value arg;
      std::string name;
      SymShape shape;
    };
    llvm::SmallVector<ReadOnly> readOnlyStates;
    /// Cached replacements of k/v values and of padding masks, by the value
    /// they replace (a tensor used by several attentions is cached once).
    llvm::DenseMap<mlir::Value, Val> replaced;
    /// The scalar `past` argument.
    mlir::Value pastArg;
    /// Whether positions along `seqDim` are absolute (learned or
    /// sinusoidal tables indexed from `past`): left padding would shift
    /// them, so such entries get no padding bias.
    bool absolutePositions = false;
    /// The padding bias of mask-less cached self-attentions (state
    /// `cache.bias`, written by the runtime), once made per window (0: the
    /// columns of every position), and its state argument.
    /// By window and whether every column is read (the rows form's).
    std::map<std::pair<int64_t, bool>, Val> paddingBiases;
    mlir::Value paddingBiasArg;
    /// The first position a windowed attention's keys start at, per window:
    /// past - min(past, window - 1) (the rolling caches keep the rest).
    std::map<int64_t, mlir::Value> windowStarts;
    /// Causal self-attentions cached so far (their layer numbers).
    unsigned cachedAttentions = 0;
    /// Cross-attentions cached so far.
    unsigned crossAttentions = 0;
    /// The description's parameters come first; `past` and states follow.
    unsigned numParams = 0;
    /// Why the entry cannot be cached, if it cannot.
    std::string unsupported;
    /// The <entry>_rows form: `past` is [batch], each row at its own
    /// position over the caches (rows of a serving batch). `rowPast` is
    /// that input (i64 [batch]); the keys are the whole cache, each row's
    /// attention bounded by its own past (tfc.attention's row_past); rope
    /// takes the rows' offsets; each row's new keys and values go to its own
    /// rows of the caches. `past` stays an index 0 for what the form does not
    /// support (it is then dropped: windows, absolute positions, cached
    /// masks, cross-attention).
    bool rows = false;
    mlir::Value rowPast;
    SymDim batchDim;
  };
  /// "line:col" of a location in the description, for messages.
  std::string describeLoc(llvm::SMLoc l);
  std::optional<CacheMode> cache;
  /// In a cached entry, whether an attention over q, k (with their [B, H,
  /// T, D] shapes) is a causal self-attention over the cached sequence.
  bool isCachedSelfAttention(const Val &q, const Val &k, bool causal) const;
  /// Writes k, v [B, Hkv, seq, D] at positions [past, past + seq) of the
  /// next layer's cache and replaces them with the cache's first past + seq
  /// rows. With a window W > 0 the cache is a rolling buffer of W rows
  /// (position p in row p mod W) and k, v are replaced by the keys of
  /// positions [windowStart(W), past + seq): the window - 1 before the new
  /// ones (fewer at the start) and the new ones. False after an error.
  bool appendToCache(Val &k, Val &v, llvm::SMLoc at, int64_t window);
  /// past - min(past, window - 1), once per window.
  mlir::Value windowStart(int64_t window, mlir::Location l);
  /// Whether `v` (a value of the cached entry) is computed from the inputs
  /// without the token sequence, `past` or a state: what a cross-attention
  /// may cache once per source.
  bool independentOfSequence(mlir::Value v);
  /// The name of the dim `v` measures when it is a `tensor.dim` of an entry
  /// argument along a symbolic dim.
  std::optional<std::string> argDimName(mlir::Value v);
  /// Replaces a cross-attention key or value [B, H, T, D] by a state
  /// argument `name` that `<entry>_cross` fills (or by the state that
  /// already replaced the same value). False after an error.
  bool cacheCross(Val &t, const std::string &name, llvm::SMLoc at);
  /// Replaces an integer padding mask [batch, seq] of the new tokens by the
  /// first past + seq columns of a mask state `cache.mask` [batch, context]
  /// into which it is written at `past`.
  Val cacheMask(const Val &mask, llvm::SMLoc at);
  /// A new last argument of the entry being generated.
  mlir::Value appendEntryArgument(mlir::Type type, mlir::Location l);
  /// Columns [start, past + seqLen) of a [batch, context] state (start 0
  /// when null).
  mlir::Value readCachedColumns(mlir::Value state, const SymShape &readShape,
                                mlir::Value batch, mlir::Value seqLen,
                                mlir::Location l, mlir::Value start = {});
  /// The additive padding bias [batch, 1, 1, past + seq] of a mask-less
  /// cached self-attention over q [batch, heads, seq, d]: the first
  /// past + seq columns of a state `cache.bias` [batch, context] that the
  /// entry only reads and the runtime writes (0 for a token, -inf for left
  /// padding; zeroed by the session, so no padding unless asked).
  /// With a window (a rolling cache) the columns of its keys only.
  Val cachePaddingBias(const Val &q, llvm::SMLoc at, int64_t window);
  /// Builds `<entry>_cross` from the sources of the cached entry's cross
  /// states: the inputs they read, the states as results written in place.
  void generateCrossEntry(const ast::FuncDecl &func, CacheMode &mode,
                          mlir::func::FuncOp cachedEntry);
  /// `tfc.dims` of a shape: sizes for static dims, names for symbolic ones.
  mlir::ArrayAttr dimsAttr(const SymShape &shape);

private:
  using Env = llvm::StringMap<Val>;

  struct Frame {
    Env env;
    const ast::FuncDecl *func = nullptr;
    std::optional<std::vector<Val>> returned;
  };

  // Hyper-parameters and declarations.
  bool evaluateConsts();
  std::optional<Val> parseDefine(llvm::StringRef name, llvm::StringRef text,
                                 const Val &original);
  /// With `cached`, the entry's cached form `<name>_cached` (CacheMode).
  /// The entry `func` as written, its cached form (`cached`: <entry>_cached,
  /// a scalar `past`) or its rows form (`cached` and `rows`: <entry>_rows,
  /// `past` per row).
  void generateEntry(const ast::FuncDecl &func, bool cached = false,
                     bool rows = false);

  // Statements and expressions.
  void execBody(const ast::Body &body);
  void execStmt(const ast::Stmt &stmt);
  void assign(const ast::Ident &target, Val v);
  Val eval(const ast::Expr &e);
  Val evalName(const ast::NameExpr &e);
  Val evalUnary(const ast::UnaryExpr &e);
  Val evalBinary(const ast::BinaryExpr &e);
  Val evalTensorBinary(const ast::BinaryExpr &e, const Val &lhs,
                       const Val &rhs);
  Val evalCall(const ast::CallExpr &e);
  Val callBlock(const ast::FuncDecl &block, const ast::CallExpr &call);
  Val weight(const ast::WeightStmt &w);
  std::optional<std::string> interpolate(const ast::StringExpr &key);
  /// Evaluates a declared type's dims: integers or symbolic dims.
  std::optional<SymShape> evalShape(const ast::TypeExpr &type);
  mlir::Type evalDType(const ast::TypeExpr &type);
  /// Checks a value against a parameter's declared type.
  bool checkParam(const ast::Param &param, const Val &v, llvm::SMLoc argLoc,
                  llvm::StringRef blockName);

  const ast::Module &module;
  const MLIRGenOptions &options;
  std::string filename;
  mlir::ModuleOp moduleOp;

  Env consts;
  llvm::StringMap<const ast::DimDecl *> dims;
  llvm::StringMap<const ast::WeightStmt *> globalWeights;
  llvm::StringMap<const ast::FuncDecl *> funcs;

  // Per entry.
  mlir::func::FuncOp currentEntry;
  llvm::StringMap<mlir::Value> dimValues;
  llvm::StringMap<mlir::Value> weightValues;
  mlir::Operation *lastWeight = nullptr;
  std::vector<Frame> frames;
  std::vector<mlir::Location> callers;

public:
  /// The `tfc.block_begin` of the outermost block call being elaborated
  /// (MLIRGenOptions::markBlocks), or null: what every layer shares is
  /// built before it.
  mlir::Operation *outermostBlock = nullptr;

private:
  /// Weight key -> its type and first declaration, across entries.
  llvm::StringMap<std::pair<mlir::RankedTensorType, llvm::SMLoc>> weightTypes;
  /// The storage format of each quantised weight key (q8_0, ...).
  std::map<std::string, std::string> weightQuants;
  unsigned numOps = 0;
  bool tooLarge = false;
};

} // namespace tfc::detail

#endif // TFC_LIB_FRONTEND_ELABORATOR_H
