//===- TfcKernelBase.td - Kernel ops in destination style --*- tablegen -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The base class of every kernel op: the ops of `tfc_kernel` (the kernels
// every target has) and of `tfc_cpu` (the CPU's packed-weight kernels).
// A kernel op is in destination-passing style: its inputs, then one `init`
// destination that the kernel overwrites completely. On tensors it returns
// the new value of `init`; after bufferisation (which the generic model in
// lib/Dialect/TfcKernel/Transforms handles for every kernel op alike) the
// same op works on memrefs and returns nothing. A target's
// `tfc-<target>-lower-kernels` pass then replaces each op on memrefs by its
// loop nest.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_DIALECT_TFCKERNEL_IR_TFCKERNELBASE_TD
#define TFC_DIALECT_TFCKERNEL_IR_TFCKERNELBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// An operand of a kernel: a ranked tensor before bufferisation, a memref
// (any layout) after. The op's verifier checks that all are one or the other.
def Tfc_KernelOperand : AnyTypeOf<[AnyRankedTensor, AnyMemRef]>;

// Marks the kernel ops of every dialect (mlir::tfc::kernel::KernelOp).
def Tfc_KernelOpTrait : NativeOpTrait<"KernelOp"> {
  let cppNamespace = "::mlir::tfc::kernel";
}

class Tfc_KernelOp<Dialect dialect, string mnemonic, list<Trait> traits = []>
    : Op<dialect, mnemonic, !listconcat([
          Tfc_KernelOpTrait, DestinationStyleOpInterface,
          DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
          DeclareOpInterfaceMethods<ConditionallySpeculatable>], traits)> {
  let results = (outs Optional<AnyRankedTensor>:$result);
  code kernelClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return getInitMutable();
    }
    /// The destination's type: a ranked tensor or a memref.
    ::mlir::ShapedType getInitType() {
      return ::llvm::cast<::mlir::ShapedType>(getInit().getType());
    }
  }];
  let extraClassDeclaration = kernelClassDeclaration;
  // Inputs are read, the destination written (memref form); the tensor
  // form has no effects and may be hoisted, merged (CSE) or erased like any
  // pure op: the model ABI computes kernels over weights once, at load.
  let extraClassDefinition = [{
    ::mlir::Speculation::Speculatability $cppClass::getSpeculatability() {
      return ::mlir::tfc::kernel::getKernelSpeculatability(*this);
    }
    void $cppClass::getEffects(
        ::llvm::SmallVectorImpl<::mlir::SideEffects::EffectInstance<
            ::mlir::MemoryEffects::Effect>> &effects) {
      ::mlir::tfc::kernel::getKernelEffects(*this, effects);
    }
  }];
  let hasVerifier = 1;
}

#endif // TFC_DIALECT_TFCKERNEL_IR_TFCKERNELBASE_TD
