// --tfc-approximate-math (ApproximateMath.cpp): f32 transcendental math ops,
// scalar or vector, become inline polynomial approximations (FMAs, a floor
// for the range reduction of exp, no math.exp/tanh/erf left); other types
// keep their ops for the LLVM lowering.
// RUN: tfc-opt %s -split-input-file --tfc-approximate-math | FileCheck %s

// CHECK-LABEL: func @vector_f32
// CHECK-SAME: (%[[X:.*]]: vector<16xf32>)
// CHECK-NOT: math.exp
// CHECK-NOT: math.tanh
// CHECK-NOT: math.erf
// CHECK: math.floor %{{.*}} : vector<16xf32>
// CHECK: math.fma %{{.*}} : vector<16xf32>
// CHECK-NOT: math.exp
// CHECK-NOT: math.tanh
// CHECK-NOT: math.erf
// CHECK: return %{{.*}}, %{{.*}}, %{{.*}} : vector<16xf32>, vector<16xf32>, vector<16xf32>
func.func @vector_f32(%x: vector<16xf32>) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>) {
  %0 = math.exp %x : vector<16xf32>
  %1 = math.tanh %x : vector<16xf32>
  %2 = math.erf %x : vector<16xf32>
  return %0, %1, %2 : vector<16xf32>, vector<16xf32>, vector<16xf32>
}

// -----

// f64 keeps math.sin/exp; an f32 scalar sin is expanded.
// CHECK-LABEL: func @scalar_types
// CHECK-SAME: (%[[D:.*]]: f64, %[[F:.*]]: f32)
// CHECK-DAG: %[[S:.*]] = math.sin %[[D]] : f64
// CHECK-DAG: %[[E:.*]] = math.exp %[[D]] : f64
// CHECK-NOT: math.sin %{{.*}} : f32
// CHECK: math.fma %{{.*}} : f32
// CHECK-NOT: math.sin %{{.*}} : f32
// CHECK: return %[[S]], %[[E]], %{{.*}} : f64, f64, f32
func.func @scalar_types(%d: f64, %f: f32) -> (f64, f64, f32) {
  %0 = math.sin %d : f64
  %1 = math.exp %d : f64
  %2 = math.sin %f : f32
  return %0, %1, %2 : f64, f64, f32
}

// -----

// f32 erf is tfc's own rational function (RationalErf): x clamped to
// [-4, 4], x P(x^2) / Q(x^2) with P of degree 7 and Q of degree 4 by
// Horner's rule, one division; no selects between intervals.
// CHECK-LABEL: func @erf_rational
// CHECK-SAME: (%[[X:.*]]: vector<8xf32>)
// CHECK-DAG: %[[LO:.*]] = arith.constant dense<-4.000000e+00> : vector<8xf32>
// CHECK-DAG: %[[HI:.*]] = arith.constant dense<4.000000e+00> : vector<8xf32>
// CHECK: %[[C0:.*]] = arith.maximumf %[[X]], %[[LO]] : vector<8xf32>
// CHECK: %[[C:.*]] = arith.minimumf %[[C0]], %[[HI]] : vector<8xf32>
// CHECK: %[[S:.*]] = arith.mulf %[[C]], %[[C]] : vector<8xf32>
// CHECK-COUNT-7: math.fma %{{.*}}, %[[S]], %{{.*}} : vector<8xf32>
// CHECK: %[[NUM:.*]] = arith.mulf %[[C]], %{{.*}} : vector<8xf32>
// CHECK-COUNT-4: math.fma %{{.*}}, %[[S]], %{{.*}} : vector<8xf32>
// CHECK: %[[R:.*]] = arith.divf %[[NUM]], %{{.*}} : vector<8xf32>
// CHECK-NOT: arith.select
// CHECK: return %[[R]] : vector<8xf32>
func.func @erf_rational(%x: vector<8xf32>) -> vector<8xf32> {
  %0 = math.erf %x : vector<8xf32>
  return %0 : vector<8xf32>
}

// -----

// f64 erf is left to the math dialect's lowering.
// CHECK-LABEL: func @erf_f64
// CHECK: math.erf %{{.*}} : f64
func.func @erf_f64(%x: f64) -> f64 {
  %0 = math.erf %x : f64
  return %0 : f64
}
