//===- TfcDialect.td - The tfc dialect ---------------------*- tablegen -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_DIALECT_TFC_IR_TFCDIALECT_TD
#define TFC_DIALECT_TFC_IR_TFCDIALECT_TD

include "mlir/IR/OpBase.td"

def Tfc_Dialect : Dialect {
  let name = "tfc";
  let cppNamespace = "::mlir::tfc";
  let summary = "Transformer-level operations on ranked tensors";
  let description = [{
    The `tfc` dialect describes transformer models on builtin ranked tensors
    whose batch and sequence dimensions may be dynamic. It has two layers:

    * composite ops (`tfc.attention`, `tfc.layer_norm`, `tfc.linear`, ...) that
      the frontend emits for library calls and that the fusion passes produce;
    * primitives (`tfc.add`, `tfc.exp`, `tfc.reduce_sum`, `tfc.transpose`, ...)
      with NumPy-style broadcasting, from which a user can write attention or
      LayerNorm by hand and which the fusion passes recognise.

    Constants are `arith.constant` on tensors; broadcasting is implicit in the
    elementwise primitives.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  let hasConstantMaterializer = 1;
  let useDefaultAttributePrinterParser = 1;
  // Checks the dialect's discardable attributes (`tfc.target`).
  let hasOperationAttrVerify = 1;
}

#endif // TFC_DIALECT_TFC_IR_TFCDIALECT_TD
