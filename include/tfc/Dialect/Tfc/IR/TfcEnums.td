//===- TfcEnums.td - Enumerations of the tfc dialect -------*- tablegen -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_DIALECT_TFC_IR_TFCENUMS_TD
#define TFC_DIALECT_TFC_IR_TFCENUMS_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "tfc/Dialect/Tfc/IR/TfcDialect.td"

def Tfc_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "how GELU is computed", [
      I32EnumAttrCase<"Erf", 0, "erf">,
      I32EnumAttrCase<"Tanh", 1, "tanh">
    ]> {
  let cppNamespace = "::mlir::tfc";
}

def Tfc_RopeMode : I32EnumAttr<"RopeMode",
    "which dimensions rotary embeddings rotate together", [
      // Pairs (2i, 2i+1): the RoFormer paper, GPT-J.
      I32EnumAttrCase<"Adjacent", 0, "adjacent">,
      // Pairs (i, i + d/2): GPT-NeoX, Hugging Face LLaMA.
      I32EnumAttrCase<"RotateHalf", 1, "rotate_half">
    ]> {
  let cppNamespace = "::mlir::tfc";
}

def Tfc_Activation : I32EnumAttr<"Activation",
    "an activation fused into the epilogue of a producer op", [
      I32EnumAttrCase<"None", 0, "none">,
      I32EnumAttrCase<"Relu", 1, "relu">,
      I32EnumAttrCase<"GeluErf", 2, "gelu_erf">,
      I32EnumAttrCase<"GeluTanh", 3, "gelu_tanh">,
      I32EnumAttrCase<"Silu", 4, "silu">
    ]> {
  let cppNamespace = "::mlir::tfc";
}

def Tfc_TargetKind : I32EnumAttr<"TargetKind",
    "the hardware a module's kernels are built for", [
      I32EnumAttrCase<"Cpu", 0, "cpu">,
      I32EnumAttrCase<"Cuda", 1, "cuda">
    ]> {
  let cppNamespace = "::mlir::tfc";
  let genSpecializedAttr = 0;
}

// The module attribute `tfc.target = #tfc.target<cuda>`: the kernel ops'
// bufferisation emits the loop nests of that target (absent: the CPU).
def Tfc_TargetAttr : EnumAttr<Tfc_Dialect, Tfc_TargetKind, "target"> {
  let assemblyFormat = "`<` $value `>`";
}

#endif // TFC_DIALECT_TFC_IR_TFCENUMS_TD
