//===- Passes.td - Passes of the CPU target --------- -*- tablegen -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TARGET_CPU_PASSES_TD
#define TFC_TARGET_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def ApproximateMath : Pass<"tfc-approximate-math", "mlir::ModuleOp"> {
  let summary = "Replaces f32 transcendental math ops by inline polynomials";
  let description = [{
    exp, log, tanh, erf, sin, cos, rsqrt, ... on f32 scalars and vectors
    become vectorisable polynomial approximations, so that kernels never
    call libm per lane: erf tfc's own rational function (RationalErf,
    fitted by scripts/fit-erf.py), the others the math dialect's. Other
    types keep their ops (lowered to LLVM intrinsics or libm later).
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::math::MathDialect",
                           "mlir::vector::VectorDialect"];
}

#endif // TFC_TARGET_CPU_PASSES_TD
