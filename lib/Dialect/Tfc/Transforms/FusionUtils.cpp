//===- FusionUtils.cpp - Matchers and remarks for fusion passes -*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "FusionUtils.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::tfc;

std::string fusion::describeLoc(Location loc) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (auto fileLoc = dyn_cast<FileLineColLoc>(loc)) {
    os << fileLoc.getFilename().getValue() << ":" << fileLoc.getLine() << ":"
       << fileLoc.getColumn();
    return s;
  }
  // Fused and name locations: describe the first file location inside.
  std::string inner;
  loc->walk([&](Location l) {
    if (auto f = dyn_cast<FileLineColLoc>(l)) {
      inner = describeLoc(f);
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (!inner.empty())
    return inner;
  loc.print(os);
  return s;
}

std::string fusion::typeString(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return s;
}

std::optional<double> fusion::getSplatValue(Value value) {
  Attribute attr;
  if (!value || !matchPattern(value, m_Constant(&attr)))
    return std::nullopt;
  auto dense = dyn_cast<DenseFPElementsAttr>(attr);
  if (!dense || !dense.isSplat())
    return std::nullopt;
  // Take the shortest decimal that reads back as the same value in the
  // constant's own precision, so that an f32 1e-12 becomes the double 1e-12
  // (not 9.99999996e-13): it is what the user wrote.
  APFloat splat = dense.getSplatValue<APFloat>();
  double widened = splat.convertToDouble();
  for (int digits = 1; digits <= 17; ++digits) {
    std::string text;
    llvm::raw_string_ostream(text) << llvm::format("%.*g", digits, widened);
    APFloat parsed(splat.getSemantics());
    auto status = parsed.convertFromString(text, APFloat::rmNearestTiesToEven);
    if (!status) {
      llvm::consumeError(status.takeError());
      continue;
    }
    double shortest;
    if (parsed.bitwiseIsEqual(splat) &&
        !StringRef(text).getAsDouble(shortest))
      return shortest;
  }
  return widened;
}

template <typename ReductionOp>
std::optional<fusion::KeepdimReduction>
fusion::matchKeepdimReduction(Value value) {
  if (auto op = value.getDefiningOp<ReductionOp>()) {
    if (!op.getKeepdim())
      return std::nullopt;
    return KeepdimReduction{op.getInput(), static_cast<int64_t>(op.getAxis()),
                            {op}};
  }
  auto reshape = value.getDefiningOp<ReshapeOp>();
  if (!reshape)
    return std::nullopt;
  auto op = reshape.getInput().getDefiningOp<ReductionOp>();
  if (!op || op.getKeepdim())
    return std::nullopt;
  // The reshape must only re-insert the reduced axis as size 1.
  auto inType = cast<RankedTensorType>(op.getInput().getType());
  SmallVector<int64_t> keepdimShape(inType.getShape());
  keepdimShape[op.getAxis()] = 1;
  ArrayRef<int64_t> shape = reshape.getType().getShape();
  if (shape.size() != keepdimShape.size() || shape[op.getAxis()] != 1)
    return std::nullopt;
  for (auto [a, b] : llvm::zip_equal(shape, keepdimShape))
    if (!ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b)
      return std::nullopt;
  return KeepdimReduction{op.getInput(), static_cast<int64_t>(op.getAxis()),
                          {reshape, op}};
}

template std::optional<fusion::KeepdimReduction>
fusion::matchKeepdimReduction<ReduceSumOp>(Value);
template std::optional<fusion::KeepdimReduction>
fusion::matchKeepdimReduction<ReduceMaxOp>(Value);
template std::optional<fusion::KeepdimReduction>
fusion::matchKeepdimReduction<ReduceMeanOp>(Value);

Operation *fusion::findOtherUser(Value value, ArrayRef<Operation *> allowed) {
  for (Operation *user : value.getUsers())
    if (!llvm::is_contained(allowed, user))
      return user;
  return nullptr;
}

std::optional<std::string> fusion::anotherUse(Value value,
                                              ArrayRef<Operation *> allowed,
                                              const llvm::Twine &subject) {
  Operation *other = findOtherUser(value, allowed);
  if (!other)
    return std::nullopt;
  return (subject + " another use at " + describeLoc(other->getLoc())).str();
}

void fusion::eraseIfDead(RewriterBase &rewriter, ArrayRef<Operation *> ops) {
  for (Operation *op : ops)
    if (op && op->use_empty())
      rewriter.eraseOp(op);
}
