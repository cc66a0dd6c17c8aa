// Index-driven ops (Generators.cpp): each is one all-parallel linalg.generic
// computing its value from linalg.index (and, for embedding and rope,
// tensor.extract of an operand). Embedding records on a function argument
// holding ids the bound `tfc.id_bound` = the table's row count, which the
// runtime checks; the gather itself clamps ids into the table.
// RUN: tfc-opt %s -split-input-file --convert-tfc-to-linalg -verify-diagnostics | FileCheck %s

// CHECK-DAG: #[[$IDS:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[$OUT:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func @embedding
// CHECK-SAME: (%[[T:.*]]: tensor<100x8xf32>, %[[IDS:.*]]: tensor<?x?xi64> {tfc.id_bound = 100 : i64})
// CHECK-DAG: %[[LAST:.*]] = arith.constant 99 : index
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[E:.*]] = tensor.empty(%{{.*}}, %{{.*}}) : tensor<?x?x8xf32>
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[$IDS]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[IDS]] : tensor<?x?xi64>) outs(%[[E]] : tensor<?x?x8xf32>)
// CHECK-NEXT: ^bb0(%[[ID:.*]]: i64, %{{.*}}: f32):
// CHECK-NEXT: %[[I:.*]] = arith.index_cast %[[ID]] : i64 to index
// CHECK-NEXT: %[[LO:.*]] = arith.maxsi %[[I]], %[[C0]] : index
// CHECK-NEXT: %[[ROW:.*]] = arith.minsi %[[LO]], %[[LAST]] : index
// CHECK-NEXT: %[[COL:.*]] = linalg.index 2 : index
// CHECK-NEXT: %[[V:.*]] = tensor.extract %[[T]][%[[ROW]], %[[COL]]] : tensor<100x8xf32>
// CHECK-NEXT: linalg.yield %[[V]] : f32
// CHECK: return %[[R]]
func.func @embedding(%t: tensor<100x8xf32>, %ids: tensor<?x?xi64>) -> tensor<?x?x8xf32> {
  %0 = tfc.embedding %t[%ids] : (tensor<100x8xf32>, tensor<?x?xi64>) -> tensor<?x?x8xf32>
  return %0 : tensor<?x?x8xf32>
}

// -----

// The same ids index two tables: the bound is the smaller row count. Ids
// that are not a function argument get no bound.
// CHECK-LABEL: func @embedding_two_tables
// CHECK-SAME: (%{{.*}}: tensor<100x8xf32>, %{{.*}}: tensor<50x8xf32>, %{{.*}}: tensor<?xi32> {tfc.id_bound = 50 : i64}, %{{[^:]*}}: tensor<?xi64>)
// CHECK-DAG: arith.constant 99 : index
// CHECK-DAG: arith.constant 49 : index
// CHECK-COUNT-3: tensor.extract
// CHECK-NOT: tfc.embedding
func.func @embedding_two_tables(%t: tensor<100x8xf32>, %u: tensor<50x8xf32>, %ids: tensor<?xi32>, %n: tensor<?xi64>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  %0 = tfc.embedding %t[%ids] : (tensor<100x8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
  %1 = tfc.embedding %u[%ids] : (tensor<50x8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
  %c0 = arith.constant 0 : index
  %len = tensor.dim %n, %c0 : tensor<?xi64>
  %pos = tfc.arange %len : tensor<?xi64>
  %2 = tfc.embedding %t[%pos] : (tensor<100x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  return %0, %1, %2 : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// CHECK-DAG: #[[$ID1:map[0-9]*]] = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func @arange_offset
// CHECK-SAME: (%[[N:.*]]: index, %[[P:.*]]: index)
// CHECK: %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?xi64>
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[$ID1]]], iterator_types = ["parallel"]} outs(%[[E]] : tensor<?xi64>)
// CHECK-NEXT: ^bb0(%{{.*}}: i64):
// CHECK-NEXT: %[[I:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[J:.*]] = arith.addi %[[I]], %[[P]] : index
// CHECK-NEXT: %[[V:.*]] = arith.index_cast %[[J]] : index to i64
// CHECK-NEXT: linalg.yield %[[V]] : i64
// CHECK: return %[[R]]
func.func @arange_offset(%n: index, %p: index) -> tensor<?xi64> {
  %0 = tfc.arange %n offset(%p) : tensor<?xi64>
  return %0 : tensor<?xi64>
}

// -----

// Key j is visible from query i when j <= i + (Tk - Tq), computed as
// j + Tq <= i + Tk: 0 when visible, -inf otherwise.
// CHECK-LABEL: func @causal_mask
// CHECK-SAME: (%[[TQ:.*]]: index, %[[TK:.*]]: index)
// CHECK-DAG: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[E:.*]] = tensor.empty(%[[TQ]], %[[TK]]) : tensor<?x?xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} outs(%[[E]] : tensor<?x?xf32>)
// CHECK-NEXT: ^bb0(%{{.*}}: f32):
// CHECK-NEXT: %[[I:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[J:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[L:.*]] = arith.addi %[[J]], %[[TQ]] : index
// CHECK-NEXT: %[[R:.*]] = arith.addi %[[I]], %[[TK]] : index
// CHECK-NEXT: %[[KEEP:.*]] = arith.cmpi sle, %[[L]], %[[R]] : index
// CHECK-NEXT: %[[V:.*]] = arith.select %[[KEEP]], %[[ZERO]], %[[NEGINF]] : f32
// CHECK-NEXT: linalg.yield %[[V]] : f32
func.func @causal_mask(%tq: index, %tk: index) -> tensor<?x?xf32> {
  %0 = tfc.causal_mask %tq, %tk : tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// [B, T] keep flags (non-zero = keep) -> a [B, 1, 1, T] additive bias. An
// integer mask read from an argument must hold 0 or 1: the runtime checks
// the bound (the metadata's "bound": 2).
// CHECK-LABEL: func @padding_mask
// CHECK-SAME: (%[[M:.*]]: tensor<?x?xi64> {tfc.id_bound = 2 : i64})
// CHECK-DAG: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[IZERO:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[B:.*]] = tensor.dim %[[M]], %c0
// CHECK-DAG: %[[T:.*]] = tensor.dim %[[M]], %c1
// CHECK: %[[E:.*]] = tensor.empty(%[[B]], %[[T]]) : tensor<?x?xf32>
// CHECK: %[[F:.*]] = linalg.generic {{.*}} ins(%[[M]] : tensor<?x?xi64>) outs(%[[E]] : tensor<?x?xf32>)
// CHECK-NEXT: ^bb0(%[[K:.*]]: i64, %{{.*}}: f32):
// CHECK-NEXT: %[[NZ:.*]] = arith.cmpi ne, %[[K]], %[[IZERO]] : i64
// CHECK-NEXT: %[[V:.*]] = arith.select %[[NZ]], %[[ZERO]], %[[NEGINF]] : f32
// CHECK-NEXT: linalg.yield %[[V]] : f32
// CHECK: %[[R:.*]] = tensor.expand_shape %[[F]] {{\[}}[0, 1, 2], [3]] output_shape [%[[B]], 1, 1, %[[T]]] : tensor<?x?xf32> into tensor<?x1x1x?xf32>
// CHECK: return %[[R]]
func.func @padding_mask(%m: tensor<?x?xi64>) -> tensor<?x1x1x?xf32> {
  %0 = tfc.padding_mask %m : tensor<?x?xi64> -> tensor<?x1x1x?xf32>
  return %0 : tensor<?x1x1x?xf32>
}

// -----

// PE[t, d] = sin (d even) or cos (d odd) of t * base^(-2 floor(d/2) / width).
// The inverse frequencies 10000^(-2i / 16) are a constant f64 table; the
// angle is computed in f64 and reduced modulo 2 pi before the f32 sin/cos.
// CHECK-LABEL: func @sinusoidal_positions
// CHECK-SAME: (%[[N:.*]]: index)
// CHECK-DAG: %[[TWOPI:.*]] = arith.constant 6.2831853071795862 : f64
// CHECK-DAG: %[[FREQS:.*]] = arith.constant dense<[1.000000e+00, 0.31622776601683789, 0.099999999999999978, {{.*}}, 3.1622776601683783E-4]> : tensor<8xf64>
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?x16xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} outs(%[[E]] : tensor<?x16xf32>)
// CHECK-NEXT: ^bb0(%{{.*}}: f32):
// CHECK-NEXT: %[[T:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[D:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[PAIR:.*]] = arith.divui %[[D]], %[[C2]] : index
// CHECK-NEXT: %[[ODD:.*]] = arith.remui %[[D]], %[[C2]] : index
// CHECK-NEXT: %[[ISODD:.*]] = arith.cmpi ne, %[[ODD]], %{{.*}} : index
// CHECK: %[[FREQ:.*]] = tensor.extract %[[FREQS]][%[[PAIR]]] : tensor<8xf64>
// CHECK-NOT: math.exp
// CHECK: %[[ANGLE:.*]] = arith.mulf %{{.*}}, %[[FREQ]] : f64
// CHECK-NEXT: %[[TURNS:.*]] = arith.divf %[[ANGLE]], %[[TWOPI]] : f64
// CHECK-NEXT: %[[FL:.*]] = math.floor %[[TURNS]] : f64
// CHECK: %[[A32:.*]] = arith.truncf %{{.*}} : f64 to f32
// CHECK-NEXT: %[[SIN:.*]] = math.sin %[[A32]] : f32
// CHECK-NEXT: %[[COS:.*]] = math.cos %[[A32]] : f32
// CHECK-NEXT: %[[V:.*]] = arith.select %[[ISODD]], %[[COS]], %[[SIN]] : f32
// CHECK-NEXT: linalg.yield %[[V]] : f32
func.func @sinusoidal_positions(%n: index) -> tensor<?x16xf32> {
  %0 = tfc.sinusoidal_positions %n : tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// -----

// f64 tables take sin/cos of the unreduced angle; the offset shifts t.
// CHECK-LABEL: func @sinusoidal_positions_f64_offset
// CHECK-SAME: (%{{.*}}: index, %[[OFF:.*]]: index)
// CHECK: linalg.generic
// CHECK: %[[T:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[TO:.*]] = arith.addi %[[T]], %[[OFF]] : index
// CHECK-NOT: math.floor
// CHECK-NOT: arith.truncf
// CHECK: math.sin %{{.*}} : f64
// CHECK-NEXT: math.cos %{{.*}} : f64
func.func @sinusoidal_positions_f64_offset(%n: index, %o: index) -> tensor<?x16xf64> {
  %0 = tfc.sinusoidal_positions %n offset(%o) : tensor<?x16xf64>
  return %0 : tensor<?x16xf64>
}

// -----

// `halves` (Marian): feature d < 8 is the sine of frequency d, d >= 8 the
// cosine of frequency d - 8.
// CHECK-LABEL: func @sinusoidal_positions_halves
// CHECK-DAG: %[[HALF:.*]] = arith.constant 8 : index
// CHECK: linalg.generic
// CHECK: %[[D:.*]] = linalg.index 1 : index
// CHECK: %[[PAIR:.*]] = arith.remui %[[D]], %[[HALF]] : index
// CHECK-NEXT: %[[SECOND:.*]] = arith.cmpi uge, %[[D]], %[[HALF]] : index
// CHECK: %[[SIN:.*]] = math.sin
// CHECK-NEXT: %[[COS:.*]] = math.cos
// CHECK-NEXT: arith.select %[[SECOND]], %[[COS]], %[[SIN]] : f32
func.func @sinusoidal_positions_halves(%n: index) -> tensor<?x16xf32> {
  %0 = tfc.sinusoidal_positions halves %n : tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// -----

// Rotary embedding, adjacent pairs (2i, 2i+1): cos θ and sin θ of every
// (position, pair) first, in one generic of two [T, 4] results (θ = t times
// the inverse frequency 10000^(-2i / 8), a constant table, in f64, reduced
// to [0, 2π) before the f32 sin and cos); then the rotation: the partner of
// d is d+1 for even d, d-1 for odd d; the first of a pair gets
// x cos - x' sin, the second x cos + x' sin, reading the tables at (t, pair).
// CHECK-DAG: #[[$ID2:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ID4:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func @rope_adjacent
// CHECK-SAME: (%[[X:.*]]: tensor<?x2x?x8xf32>)
// CHECK-DAG: %[[FREQS:.*]] = arith.constant dense<[1.000000e+00, 0.099999999999999978, 0.009999999999999995, 9.9999999999999937E-4]> : tensor<4xf64>
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[TWOPI:.*]] = arith.constant 6.2831853071795862 : f64
// CHECK: %[[T:.*]] = tensor.dim %[[X]], %[[C2]]
// CHECK: %[[CI:.*]] = tensor.empty(%[[T]]) : tensor<?x4xf32>
// CHECK: %[[SI:.*]] = tensor.empty(%[[T]]) : tensor<?x4xf32>
// CHECK: %[[TABLES:.*]]:2 = linalg.generic {indexing_maps = [#[[$ID2]], #[[$ID2]]], iterator_types = ["parallel", "parallel"]} outs(%[[CI]], %[[SI]] : tensor<?x4xf32>, tensor<?x4xf32>)
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: %[[TT:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[PI:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[F:.*]] = tensor.extract %[[FREQS]][%[[PI]]] : tensor<4xf64>
// CHECK-NEXT: %[[TI:.*]] = arith.index_cast %[[TT]] : index to i64
// CHECK-NEXT: %[[TF:.*]] = arith.sitofp %[[TI]] : i64 to f64
// CHECK-NEXT: %[[ANGLE:.*]] = arith.mulf %[[TF]], %[[F]] : f64
// CHECK-NEXT: %[[TURNS:.*]] = arith.divf %[[ANGLE]], %[[TWOPI]] : f64
// CHECK-NEXT: %[[FL:.*]] = math.floor %[[TURNS]] : f64
// CHECK-NEXT: %[[WHOLE:.*]] = arith.mulf %[[FL]], %[[TWOPI]] : f64
// CHECK-NEXT: %[[RED:.*]] = arith.subf %[[ANGLE]], %[[WHOLE]] : f64
// CHECK-NEXT: %[[A32:.*]] = arith.truncf %[[RED]] : f64 to f32
// CHECK-NEXT: %[[SIN:.*]] = math.sin %[[A32]] : f32
// CHECK-NEXT: %[[COS:.*]] = math.cos %[[A32]] : f32
// CHECK-NEXT: linalg.yield %[[COS]], %[[SIN]] : f32, f32
// CHECK: linalg.generic {indexing_maps = [#[[$ID4]], #[[$ID4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[X]] : tensor<?x2x?x8xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[I0:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[I1:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[I2:.*]] = linalg.index 2 : index
// CHECK-NEXT: %[[D:.*]] = linalg.index 3 : index
// CHECK-NEXT: %[[INROT:.*]] = arith.cmpi ult, %[[D]], %[[C8]] : index
// CHECK-NEXT: %[[PAIR:.*]] = arith.divui %[[D]], %[[C2]] : index
// CHECK-NEXT: %[[REM:.*]] = arith.remui %[[D]], %[[C2]] : index
// CHECK-NEXT: %[[SECOND:.*]] = arith.cmpi ne, %[[REM]], %{{.*}} : index
// CHECK-NEXT: %[[DM1:.*]] = arith.subi %[[D]], %[[C1]] : index
// CHECK-NEXT: %[[DP1:.*]] = arith.addi %[[D]], %[[C1]] : index
// CHECK-NEXT: %[[P:.*]] = arith.select %[[SECOND]], %[[DM1]], %[[DP1]] : index
// CHECK-NEXT: %[[PS:.*]] = arith.select %[[INROT]], %[[P]], %[[D]] : index
// CHECK-NEXT: %[[XP:.*]] = tensor.extract %[[X]][%[[I0]], %[[I1]], %[[I2]], %[[PS]]] : tensor<?x2x?x8xf32>
// CHECK-NEXT: %[[ROW:.*]] = arith.select %[[INROT]], %[[PAIR]], %{{.*}} : index
// CHECK-NEXT: %[[C:.*]] = tensor.extract %[[TABLES]]#0[%[[I2]], %[[ROW]]] : tensor<?x4xf32>
// CHECK-NEXT: %[[S:.*]] = tensor.extract %[[TABLES]]#1[%[[I2]], %[[ROW]]] : tensor<?x4xf32>
// CHECK-NEXT: %[[XC:.*]] = arith.mulf %[[IN]], %[[C]] : f32
// CHECK-NEXT: %[[XS:.*]] = arith.mulf %[[XP]], %[[S]] : f32
// CHECK-NEXT: %[[ADD:.*]] = arith.addf %[[XC]], %[[XS]] : f32
// CHECK-NEXT: %[[SUB:.*]] = arith.subf %[[XC]], %[[XS]] : f32
// CHECK-NEXT: %[[ROT:.*]] = arith.select %[[SECOND]], %[[ADD]], %[[SUB]] : f32
// CHECK-NEXT: %[[V:.*]] = arith.select %[[INROT]], %[[ROT]], %[[IN]] : f32
// CHECK-NEXT: linalg.yield %[[V]] : f32
func.func @rope_adjacent(%x: tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32> {
  %0 = tfc.rope adjacent %x : tensor<?x2x?x8xf32>
  return %0 : tensor<?x2x?x8xf32>
}

// -----

// rotate_half over the first rotary_dim = 4 features: pairs (i, i + 2); the
// last 4 features pass through (reading the tables at pair 0). The offset
// shifts the tables' positions; 500000^(-2i / 4) for i < 2.
// CHECK-LABEL: func @rope_rotate_half
// CHECK-SAME: (%[[X:.*]]: tensor<?x2x?x8xf32>, %[[OFF:.*]]: index)
// CHECK-DAG: %[[FREQS:.*]] = arith.constant dense<[1.000000e+00, 0.0014142135623730955]> : tensor<2xf64>
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[TABLES:.*]]:2 = linalg.generic
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: %[[TT:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[PI:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[TO:.*]] = arith.addi %[[TT]], %[[OFF]] : index
// CHECK-NEXT: %[[F:.*]] = tensor.extract %[[FREQS]][%[[PI]]] : tensor<2xf64>
// CHECK-NEXT: %[[TI:.*]] = arith.index_cast %[[TO]] : index to i64
// CHECK-NEXT: %[[TF:.*]] = arith.sitofp %[[TI]] : i64 to f64
// CHECK-NEXT: arith.mulf %[[TF]], %[[F]] : f64
// CHECK: -> (tensor<?x2xf32>, tensor<?x2xf32>)
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[T:.*]] = linalg.index 2 : index
// CHECK-NEXT: %[[D:.*]] = linalg.index 3 : index
// CHECK-NEXT: %[[INROT:.*]] = arith.cmpi ult, %[[D]], %[[C4]] : index
// CHECK-NEXT: %[[SECOND:.*]] = arith.cmpi uge, %[[D]], %[[C2]] : index
// CHECK-NEXT: %[[DM:.*]] = arith.subi %[[D]], %[[C2]] : index
// CHECK-NEXT: %[[PAIR:.*]] = arith.select %[[SECOND]], %[[DM]], %[[D]] : index
// CHECK-NEXT: %[[DP:.*]] = arith.addi %[[D]], %[[C2]] : index
// CHECK-NEXT: %[[P:.*]] = arith.select %[[SECOND]], %[[PAIR]], %[[DP]] : index
// CHECK-NEXT: %[[PS:.*]] = arith.select %[[INROT]], %[[P]], %[[D]] : index
// CHECK-NEXT: tensor.extract %[[X]][%{{.*}}, %{{.*}}, %[[T]], %[[PS]]]
// CHECK-NEXT: %[[ROW:.*]] = arith.select %[[INROT]], %[[PAIR]], %c0 : index
// CHECK-NEXT: tensor.extract %[[TABLES]]#0[%[[T]], %[[ROW]]] : tensor<?x2xf32>
// CHECK-NEXT: tensor.extract %[[TABLES]]#1[%[[T]], %[[ROW]]] : tensor<?x2xf32>
// CHECK: arith.select %[[SECOND]]
// CHECK-NEXT: arith.select %[[INROT]]
func.func @rope_rotate_half(%x: tensor<?x2x?x8xf32>, %p: index) -> tensor<?x2x?x8xf32> {
  %0 = tfc.rope rotate_half %x offset(%p) {base = 500000.0, rotary_dim = 4} : tensor<?x2x?x8xf32>
  return %0 : tensor<?x2x?x8xf32>
}

// -----

// Without rotary_dim, rope needs a static head size: no pattern applies and
// the pass reports the op.
func.func @rope_dynamic_head_size(%x: tensor<?x2x?x?xf32>) -> tensor<?x2x?x?xf32> {
  // expected-error @+1 {{no lowering for 'tfc.rope' with these operand types}}
  %0 = tfc.rope adjacent %x : tensor<?x2x?x?xf32>
  return %0 : tensor<?x2x?x?xf32>
}

// -----

// freq_scale (RoPE context scaling): the inverse frequency of pair i is
// multiplied by entry i, in the constant table (0.125 x 1, 0.5 x 0.01) that
// the cos/sin tables are computed from; the rotation reads those at pair 0
// outside the rotary part.
// CHECK-LABEL: func.func @rope_scaled
// CHECK-DAG: %[[TABLE:.*]] = arith.constant dense<[1.250000e-01, 0.0049999999999999975]> : tensor<2xf64>
// CHECK: linalg.generic
// CHECK: %[[PAIR:.*]] = linalg.index 1 : index
// CHECK: %[[S:.*]] = tensor.extract %[[TABLE]][%[[PAIR]]] : tensor<2xf64>
// CHECK: arith.mulf %{{.*}}, %[[S]] : f64
// CHECK: linalg.generic
// CHECK: %[[INROT:.*]] = arith.cmpi ult, %{{.*}}, %c4
// CHECK: %[[ROW:.*]] = arith.select %[[INROT]], %{{.*}}, %c0 : index
// CHECK: tensor.extract %{{.*}}#0[%{{.*}}, %[[ROW]]] : tensor<?x2xf32>
func.func @rope_scaled(%x: tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32> {
  %0 = tfc.rope rotate_half %x {rotary_dim = 4, freq_scale = array<f64: 0.125, 0.5>} : tensor<?x2x?x8xf32>
  return %0 : tensor<?x2x?x8xf32>
}
