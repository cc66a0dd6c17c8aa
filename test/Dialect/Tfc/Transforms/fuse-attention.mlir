// RUN: tfc-opt %s -split-input-file --tfc-fuse-attention | FileCheck %s
// RUN: tfc-opt %s -split-input-file --tfc-fuse-attention=remarks -verify-diagnostics -o /dev/null
// Numerical equivalence on random inputs (the reference interpreter):
// RUN: tfc-opt %s -split-input-file --tfc-fuse-attention -o %t
// RUN: tfc-interpret --split-input-file %s --compare %t --tolerance 1e-5 | FileCheck %s --implicit-check-not=MISMATCH --check-prefix=NUM
// NUM-COUNT-25: result #{{[0-9]+}}: max abs error

// BERT: Q·Kᵀ through a transpose op, divided by sqrt(d), plus a padding bias.
// CHECK-LABEL: func @bert
// CHECK-SAME: (%[[Q:.*]]: tensor<?x2x?x8xf32>, %[[K:.*]]: tensor<?x2x?x8xf32>, %[[V:.*]]: tensor<?x2x?x8xf32>, %[[M:.*]]: tensor<?x1x1x?xf32>)
// CHECK-NEXT: %[[A:.*]] = tfc.attention %[[Q]], %[[K]], %[[V]] mask(%[[M]]) {scale = 0.3535534{{[0-9]*}} : f64}
// CHECK-NEXT: return %[[A]]
func.func @bert(%q: tensor<?x2x?x8xf32>, %k: tensor<?x2x?x8xf32>, %v: tensor<?x2x?x8xf32>, %mask: tensor<?x1x1x?xf32>) -> tensor<?x2x?x8xf32> {
  %c = arith.constant dense<2.8284271247461903> : tensor<f32>
  %kt = tfc.transpose %k [0, 1, 3, 2] : tensor<?x2x?x8xf32> -> tensor<?x2x8x?xf32>
  %s = tfc.matmul %q, %kt : (tensor<?x2x?x8xf32>, tensor<?x2x8x?xf32>) -> tensor<?x2x?x?xf32>
  %d = tfc.div %s, %c : (tensor<?x2x?x?xf32>, tensor<f32>) -> tensor<?x2x?x?xf32>
  %b = tfc.add %d, %mask : (tensor<?x2x?x?xf32>, tensor<?x1x1x?xf32>) -> tensor<?x2x?x?xf32>
  // expected-remark @+1 {{fused into tfc.attention (scale 0.353553, 1 mask)}}
  %p = tfc.softmax %b {axis = 3} : tensor<?x2x?x?xf32>
  %o = tfc.matmul %p, %v : (tensor<?x2x?x?xf32>, tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32>
  return %o : tensor<?x2x?x8xf32>
}

// -----

// Kᵀ as the transpose_rhs flag, the scale as a multiplication on the left.
// CHECK-LABEL: func @transpose_flag
// CHECK: tfc.attention %arg0, %arg1, %arg2 {scale = 1.250000e-01 : f64}
// CHECK-NOT: tfc.matmul
func.func @transpose_flag(%q: tensor<2x4x6x16xf32>, %k: tensor<2x4x6x16xf32>, %v: tensor<2x4x6x16xf32>) -> tensor<2x4x6x16xf32> {
  %c = arith.constant dense<0.125> : tensor<f32>
  %s = tfc.matmul %q, %k {transpose_rhs} : (tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32>) -> tensor<2x4x6x6xf32>
  %d = tfc.mul %c, %s : (tensor<f32>, tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xf32>
  // expected-remark @+1 {{fused into tfc.attention (scale 0.125)}}
  %p = tfc.softmax %d {axis = 3} : tensor<2x4x6x6xf32>
  %o = tfc.matmul %p, %v : (tensor<2x4x6x6xf32>, tensor<2x4x6x16xf32>) -> tensor<2x4x6x16xf32>
  return %o : tensor<2x4x6x16xf32>
}

// -----

// The scale pre-applied to Q (and none on the scores).
// CHECK-LABEL: func @prescaled_query
// CHECK: tfc.attention %arg0, %arg1, %arg2 {scale = 2.500000e-01 : f64}
func.func @prescaled_query(%q: tensor<1x2x5x16xf32>, %k: tensor<1x2x5x16xf32>, %v: tensor<1x2x5x16xf32>) -> tensor<1x2x5x16xf32> {
  %c = arith.constant dense<0.25> : tensor<f32>
  %qs = tfc.mul %q, %c : (tensor<1x2x5x16xf32>, tensor<f32>) -> tensor<1x2x5x16xf32>
  %s = tfc.matmul %qs, %k {transpose_rhs} : (tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32>) -> tensor<1x2x5x5xf32>
  // expected-remark @+1 {{fused into tfc.attention (scale 0.25)}}
  %p = tfc.softmax %s {axis = 3} : tensor<1x2x5x5xf32>
  %o = tfc.matmul %p, %v : (tensor<1x2x5x5xf32>, tensor<1x2x5x16xf32>) -> tensor<1x2x5x16xf32>
  return %o : tensor<1x2x5x16xf32>
}

// -----

// d^-1/4 on both Q and K (as some exporters write it), K scaled before its
// transpose.
// CHECK-LABEL: func @scaled_query_and_key
// CHECK: tfc.attention %arg0, %arg1, %arg2 {scale = 2.500000e-01 : f64}
func.func @scaled_query_and_key(%q: tensor<1x2x5x16xf32>, %k: tensor<1x2x5x16xf32>, %v: tensor<1x2x5x16xf32>) -> tensor<1x2x5x16xf32> {
  %c = arith.constant dense<2.0> : tensor<f32>
  %qs = tfc.div %q, %c : (tensor<1x2x5x16xf32>, tensor<f32>) -> tensor<1x2x5x16xf32>
  %ks = tfc.div %k, %c : (tensor<1x2x5x16xf32>, tensor<f32>) -> tensor<1x2x5x16xf32>
  %kt = tfc.transpose %ks [0, 1, 3, 2] : tensor<1x2x5x16xf32> -> tensor<1x2x16x5xf32>
  %s = tfc.matmul %qs, %kt : (tensor<1x2x5x16xf32>, tensor<1x2x16x5xf32>) -> tensor<1x2x5x5xf32>
  // expected-remark @+1 {{fused into tfc.attention (scale 0.25)}}
  %p = tfc.softmax %s {axis = 3} : tensor<1x2x5x5xf32>
  %o = tfc.matmul %p, %v : (tensor<1x2x5x5xf32>, tensor<1x2x5x16xf32>) -> tensor<1x2x5x16xf32>
  return %o : tensor<1x2x5x16xf32>
}

// -----

// No scale at all: the op gets scale 1, not its 1/sqrt(d) default.
// CHECK-LABEL: func @unscaled
// CHECK: tfc.attention %arg0, %arg1, %arg2 {scale = 1.000000e+00 : f64}
func.func @unscaled(%q: tensor<1x2x5x16xf32>, %k: tensor<1x2x5x16xf32>, %v: tensor<1x2x5x16xf32>) -> tensor<1x2x5x16xf32> {
  %s = tfc.matmul %q, %k {transpose_rhs} : (tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32>) -> tensor<1x2x5x5xf32>
  // expected-remark @+1 {{fused into tfc.attention (scale 1)}}
  %p = tfc.softmax %s {axis = 3} : tensor<1x2x5x5xf32>
  %o = tfc.matmul %p, %v : (tensor<1x2x5x5xf32>, tensor<1x2x5x16xf32>) -> tensor<1x2x5x16xf32>
  return %o : tensor<1x2x5x16xf32>
}

// -----

// GPT: a causal mask becomes the causal flag; the padding bias stays a mask.
// CHECK-LABEL: func @causal_and_padding
// CHECK-NOT: tfc.causal_mask
// CHECK: tfc.attention %arg0, %arg1, %arg2 mask(%arg3) {causal, scale = 2.500000e-01 : f64}
func.func @causal_and_padding(%q: tensor<?x2x?x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x16xf32>, %pad: tensor<?x1x1x?xf32>) -> tensor<?x2x?x16xf32> {
  %c2 = arith.constant 2 : index
  %c = arith.constant dense<0.25> : tensor<f32>
  %tq = tensor.dim %q, %c2 : tensor<?x2x?x16xf32>
  %tk = tensor.dim %k, %c2 : tensor<?x2x?x16xf32>
  %causal = tfc.causal_mask %tq, %tk : tensor<?x?xf32>
  %s = tfc.matmul %q, %k {transpose_rhs} : (tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x2x?x?xf32>
  %d = tfc.mul %s, %c : (tensor<?x2x?x?xf32>, tensor<f32>) -> tensor<?x2x?x?xf32>
  %m1 = tfc.add %d, %causal : (tensor<?x2x?x?xf32>, tensor<?x?xf32>) -> tensor<?x2x?x?xf32>
  %m2 = tfc.add %pad, %m1 : (tensor<?x1x1x?xf32>, tensor<?x2x?x?xf32>) -> tensor<?x2x?x?xf32>
  // expected-remark @+1 {{fused into tfc.attention (scale 0.25, causal, 1 mask)}}
  %p = tfc.softmax %m2 {axis = 3} : tensor<?x2x?x?xf32>
  %o = tfc.matmul %p, %v : (tensor<?x2x?x?xf32>, tensor<?x2x?x16xf32>) -> tensor<?x2x?x16xf32>
  return %o : tensor<?x2x?x16xf32>
}

// -----

// A where-fill with -inf becomes an additive mask.
// CHECK-LABEL: func @where_fill
// CHECK-DAG: %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<f32>
// CHECK-DAG: %[[F:.*]] = arith.constant dense<0xFF800000> : tensor<f32>
// CHECK: %[[B:.*]] = tfc.where %arg3, %[[Z]], %[[F]] : (tensor<2x1x1x6xi1>, tensor<f32>, tensor<f32>) -> tensor<2x1x1x6xf32>
// CHECK: tfc.attention %arg0, %arg1, %arg2 mask(%[[B]]) {scale = 2.500000e-01 : f64}
func.func @where_fill(%q: tensor<2x2x6x16xf32>, %k: tensor<2x2x6x16xf32>, %v: tensor<2x2x6x16xf32>, %keep: tensor<2x1x1x6xi1>) -> tensor<2x2x6x16xf32> {
  %c = arith.constant dense<4.0> : tensor<f32>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %s = tfc.matmul %q, %k {transpose_rhs} : (tensor<2x2x6x16xf32>, tensor<2x2x6x16xf32>) -> tensor<2x2x6x6xf32>
  %d = tfc.div %s, %c : (tensor<2x2x6x6xf32>, tensor<f32>) -> tensor<2x2x6x6xf32>
  %w = tfc.where %keep, %d, %ninf : (tensor<2x1x1x6xi1>, tensor<2x2x6x6xf32>, tensor<f32>) -> tensor<2x2x6x6xf32>
  // expected-remark @+1 {{fused into tfc.attention (scale 0.25, 1 mask)}}
  %p = tfc.softmax %w {axis = 3} : tensor<2x2x6x6xf32>
  %o = tfc.matmul %p, %v : (tensor<2x2x6x6xf32>, tensor<2x2x6x16xf32>) -> tensor<2x2x6x16xf32>
  return %o : tensor<2x2x6x16xf32>
}

// -----

// The inverted where (true = drop) with a finite large negative fill; the
// condition is computed (here: the upper triangle).
// CHECK-LABEL: func @where_drop
// CHECK: %[[D:.*]] = tfc.cast
// CHECK: %[[B:.*]] = tfc.where %[[D]], %{{.*}}, %{{.*}} : (tensor<6x6xi1>, tensor<f32>, tensor<f32>) -> tensor<6x6xf32>
// CHECK: tfc.attention %arg0, %arg1, %arg2 mask(%[[B]]) {scale = 1.000000e+00 : f64}
func.func @where_drop(%q: tensor<2x2x6x16xf32>, %k: tensor<2x2x6x16xf32>, %v: tensor<2x2x6x16xf32>) -> tensor<2x2x6x16xf32> {
  %c6 = arith.constant 6 : index
  %fill = arith.constant dense<-1.0e9> : tensor<f32>
  %upper = tfc.causal_mask %c6, %c6 : tensor<6x6xf32>
  %drop = tfc.cast %upper : tensor<6x6xf32> to tensor<6x6xi1>
  %s = tfc.matmul %q, %k {transpose_rhs} : (tensor<2x2x6x16xf32>, tensor<2x2x6x16xf32>) -> tensor<2x2x6x6xf32>
  %w = tfc.where %drop, %fill, %s : (tensor<6x6xi1>, tensor<f32>, tensor<2x2x6x6xf32>) -> tensor<2x2x6x6xf32>
  // expected-remark @+1 {{fused into tfc.attention (scale 1, 1 mask)}}
  %p = tfc.softmax %w {axis = 3} : tensor<2x2x6x6xf32>
  %o = tfc.matmul %p, %v : (tensor<2x2x6x6xf32>, tensor<2x2x6x16xf32>) -> tensor<2x2x6x16xf32>
  return %o : tensor<2x2x6x16xf32>
}

// -----

// Cross-attention: 5 queries over 7 keys, values of another width.
// CHECK-LABEL: func @cross
// CHECK: tfc.attention %arg0, %arg1, %arg2 {scale = 2.500000e-01 : f64} : (tensor<2x4x5x16xf32>, tensor<2x4x7x16xf32>, tensor<2x4x7x8xf32>) -> tensor<2x4x5x8xf32>
func.func @cross(%q: tensor<2x4x5x16xf32>, %k: tensor<2x4x7x16xf32>, %v: tensor<2x4x7x8xf32>) -> tensor<2x4x5x8xf32> {
  %c = arith.constant dense<0.25> : tensor<f32>
  %s = tfc.matmul %q, %k {transpose_rhs} : (tensor<2x4x5x16xf32>, tensor<2x4x7x16xf32>) -> tensor<2x4x5x7xf32>
  %d = tfc.mul %s, %c : (tensor<2x4x5x7xf32>, tensor<f32>) -> tensor<2x4x5x7xf32>
  // expected-remark @+1 {{fused into tfc.attention (scale 0.25)}}
  %p = tfc.softmax %d {axis = 3} : tensor<2x4x5x7xf32>
  %o = tfc.matmul %p, %v : (tensor<2x4x5x7xf32>, tensor<2x4x7x8xf32>) -> tensor<2x4x5x8xf32>
  return %o : tensor<2x4x5x8xf32>
}

// -----

// Heads flattened into the batch ([B·H, T, D]), Kᵀ given as a tensor.
// CHECK-LABEL: func @rank3
// CHECK: %[[KT:.*]] = tfc.transpose %arg1 [0, 2, 1] : tensor<8x16x5xf32> -> tensor<8x5x16xf32>
// CHECK: %[[Q:.*]] = tfc.reshape %arg0 : tensor<8x5x16xf32> -> tensor<1x8x5x16xf32>
// CHECK: %[[K:.*]] = tfc.reshape %[[KT]] : tensor<8x5x16xf32> -> tensor<1x8x5x16xf32>
// CHECK: %[[V:.*]] = tfc.reshape %arg2 : tensor<8x5x16xf32> -> tensor<1x8x5x16xf32>
// CHECK: %[[A:.*]] = tfc.attention %[[Q]], %[[K]], %[[V]] {scale = 2.500000e-01 : f64}
// CHECK: tfc.reshape %[[A]] : tensor<1x8x5x16xf32> -> tensor<8x5x16xf32>
func.func @rank3(%q: tensor<8x5x16xf32>, %kt: tensor<8x16x5xf32>, %v: tensor<8x5x16xf32>) -> tensor<8x5x16xf32> {
  %c = arith.constant dense<0.25> : tensor<f32>
  %s = tfc.matmul %q, %kt : (tensor<8x5x16xf32>, tensor<8x16x5xf32>) -> tensor<8x5x5xf32>
  %d = tfc.mul %s, %c : (tensor<8x5x5xf32>, tensor<f32>) -> tensor<8x5x5xf32>
  // expected-remark @+1 {{fused into tfc.attention (scale 0.25)}}
  %p = tfc.softmax %d {axis = 2} : tensor<8x5x5xf32>
  %o = tfc.matmul %p, %v : (tensor<8x5x5xf32>, tensor<8x5x16xf32>) -> tensor<8x5x16xf32>
  return %o : tensor<8x5x16xf32>
}

// -----

// Grouped-query attention written with broadcasting: 2 key/value heads,
// 3 query heads per group, dynamic batch and length.
// CHECK-LABEL: func @grouped
// CHECK: %[[Q:.*]] = tfc.reshape %arg0[{{.*}}] : tensor<?x2x3x?x16xf32> -> tensor<?x6x?x16xf32>
// CHECK: %[[K:.*]] = tfc.reshape %arg1[{{.*}}] : tensor<?x2x1x?x16xf32> -> tensor<?x2x?x16xf32>
// CHECK: %[[V:.*]] = tfc.reshape %arg2[{{.*}}] : tensor<?x2x1x?x16xf32> -> tensor<?x2x?x16xf32>
// CHECK: %[[A:.*]] = tfc.attention %[[Q]], %[[K]], %[[V]] {causal, scale = 2.500000e-01 : f64} : (tensor<?x6x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x6x?x16xf32>
// CHECK: tfc.reshape %[[A]][{{.*}}] : tensor<?x6x?x16xf32> -> tensor<?x2x3x?x16xf32>
func.func @grouped(%q: tensor<?x2x3x?x16xf32>, %k: tensor<?x2x1x?x16xf32>, %v: tensor<?x2x1x?x16xf32>) -> tensor<?x2x3x?x16xf32> {
  %c3 = arith.constant 3 : index
  %c = arith.constant dense<0.25> : tensor<f32>
  %tq = tensor.dim %q, %c3 : tensor<?x2x3x?x16xf32>
  %tk = tensor.dim %k, %c3 : tensor<?x2x1x?x16xf32>
  %causal = tfc.causal_mask %tq, %tk : tensor<?x?xf32>
  %s = tfc.matmul %q, %k {transpose_rhs} : (tensor<?x2x3x?x16xf32>, tensor<?x2x1x?x16xf32>) -> tensor<?x2x3x?x?xf32>
  %d = tfc.mul %s, %c : (tensor<?x2x3x?x?xf32>, tensor<f32>) -> tensor<?x2x3x?x?xf32>
  %m = tfc.add %d, %causal : (tensor<?x2x3x?x?xf32>, tensor<?x?xf32>) -> tensor<?x2x3x?x?xf32>
  // expected-remark @+1 {{fused into tfc.attention (scale 0.25, causal, grouped-query)}}
  %p = tfc.softmax %m {axis = 4} : tensor<?x2x3x?x?xf32>
  %o = tfc.matmul %p, %v : (tensor<?x2x3x?x?xf32>, tensor<?x2x1x?x16xf32>) -> tensor<?x2x3x?x16xf32>
  return %o : tensor<?x2x3x?x16xf32>
}

// -----

// Multi-query attention: one key/value head broadcast over 4 query heads.
// CHECK-LABEL: func @multi_query
// CHECK: tfc.attention %arg0, %arg1, %arg2 {scale = 2.500000e-01 : f64} : (tensor<2x4x5x16xf32>, tensor<2x1x5x16xf32>, tensor<2x1x5x16xf32>) -> tensor<2x4x5x16xf32>
func.func @multi_query(%q: tensor<2x4x5x16xf32>, %k: tensor<2x1x5x16xf32>, %v: tensor<2x1x5x16xf32>) -> tensor<2x4x5x16xf32> {
  %c = arith.constant dense<0.25> : tensor<f32>
  %s = tfc.matmul %q, %k {transpose_rhs} : (tensor<2x4x5x16xf32>, tensor<2x1x5x16xf32>) -> tensor<2x4x5x5xf32>
  %d = tfc.mul %s, %c : (tensor<2x4x5x5xf32>, tensor<f32>) -> tensor<2x4x5x5xf32>
  // expected-remark @+1 {{fused into tfc.attention (scale 0.25)}}
  %p = tfc.softmax %d {axis = 3} : tensor<2x4x5x5xf32>
  %o = tfc.matmul %p, %v : (tensor<2x4x5x5xf32>, tensor<2x1x5x16xf32>) -> tensor<2x4x5x16xf32>
  return %o : tensor<2x4x5x16xf32>
}

// -----

// The head split (reshape + transpose) and merge around the fused op become
// split_heads / merge_heads.
// CHECK-LABEL: func @heads
// CHECK-DAG: %[[Q:.*]] = tfc.split_heads %arg0 {heads = 4 : i64} : tensor<?x?x64xf32> -> tensor<?x4x?x16xf32>
// CHECK-DAG: %[[K:.*]] = tfc.split_heads %arg1 {heads = 4 : i64}
// CHECK-DAG: %[[V:.*]] = tfc.split_heads %arg2 {heads = 4 : i64}
// CHECK: %[[A:.*]] = tfc.attention %[[Q]], %[[K]], %[[V]] {scale = 2.500000e-01 : f64}
// CHECK: %[[O:.*]] = tfc.merge_heads %[[A]] : tensor<?x4x?x16xf32> -> tensor<?x?x64xf32>
// CHECK: return %[[O]]
func.func @heads(%xq: tensor<?x?x64xf32>, %xk: tensor<?x?x64xf32>, %xv: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c = arith.constant dense<0.25> : tensor<f32>
  %b = tensor.dim %xq, %c0 : tensor<?x?x64xf32>
  %t = tensor.dim %xq, %c1 : tensor<?x?x64xf32>
  %bk = tensor.dim %xk, %c0 : tensor<?x?x64xf32>
  %tk = tensor.dim %xk, %c1 : tensor<?x?x64xf32>
  %bv = tensor.dim %xv, %c0 : tensor<?x?x64xf32>
  %tv = tensor.dim %xv, %c1 : tensor<?x?x64xf32>
  %q4 = tfc.reshape %xq[%b, %t] : tensor<?x?x64xf32> -> tensor<?x?x4x16xf32>
  %q = tfc.transpose %q4 [0, 2, 1, 3] : tensor<?x?x4x16xf32> -> tensor<?x4x?x16xf32>
  %k4 = tfc.reshape %xk[%bk, %tk] : tensor<?x?x64xf32> -> tensor<?x?x4x16xf32>
  %kt = tfc.transpose %k4 [0, 2, 3, 1] : tensor<?x?x4x16xf32> -> tensor<?x4x16x?xf32>
  %v4 = tfc.reshape %xv[%bv, %tv] : tensor<?x?x64xf32> -> tensor<?x?x4x16xf32>
  %v = tfc.transpose %v4 [0, 2, 1, 3] : tensor<?x?x4x16xf32> -> tensor<?x4x?x16xf32>
  %s = tfc.matmul %q, %kt : (tensor<?x4x?x16xf32>, tensor<?x4x16x?xf32>) -> tensor<?x4x?x?xf32>
  %d = tfc.mul %s, %c : (tensor<?x4x?x?xf32>, tensor<f32>) -> tensor<?x4x?x?xf32>
  // expected-remark @+1 {{fused into tfc.attention (scale 0.25)}}
  %p = tfc.softmax %d {axis = 3} : tensor<?x4x?x?xf32>
  %o = tfc.matmul %p, %v : (tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
  %ot = tfc.transpose %o [0, 2, 1, 3] : tensor<?x4x?x16xf32> -> tensor<?x?x4x16xf32>
  %r = tfc.reshape %ot[%b, %t] : tensor<?x?x4x16xf32> -> tensor<?x?x64xf32>
  return %r : tensor<?x?x64xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Not fused, with the reason.
//===----------------------------------------------------------------------===//

// The raw scores are also returned.
// CHECK-LABEL: func @scores_other_use
// CHECK-NOT: tfc.attention
func.func @scores_other_use(%q: tensor<1x2x5x16xf32>, %k: tensor<1x2x5x16xf32>, %v: tensor<1x2x5x16xf32>) -> (tensor<1x2x5x16xf32>, tensor<1x2x5x5xf32>) {
  %s = tfc.matmul %q, %k {transpose_rhs} : (tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32>) -> tensor<1x2x5x5xf32>
  // expected-remark @+1 {{not fused: the scores have another use at}}
  %p = tfc.softmax %s {axis = 3} : tensor<1x2x5x5xf32>
  %o = tfc.matmul %p, %v : (tensor<1x2x5x5xf32>, tensor<1x2x5x16xf32>) -> tensor<1x2x5x16xf32>
  return %o, %s : tensor<1x2x5x16xf32>, tensor<1x2x5x5xf32>
}

// -----

// The probabilities are returned too (e.g. output_attentions=True).
// CHECK-LABEL: func @probabilities_other_use
// CHECK-NOT: tfc.attention
func.func @probabilities_other_use(%q: tensor<1x2x5x16xf32>, %k: tensor<1x2x5x16xf32>, %v: tensor<1x2x5x16xf32>) -> (tensor<1x2x5x16xf32>, tensor<1x2x5x5xf32>) {
  %s = tfc.matmul %q, %k {transpose_rhs} : (tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32>) -> tensor<1x2x5x5xf32>
  // expected-remark @+1 {{not fused: the attention probabilities have another use at}}
  %p = tfc.softmax %s {axis = 3} : tensor<1x2x5x5xf32>
  %o = tfc.matmul %p, %v : (tensor<1x2x5x5xf32>, tensor<1x2x5x16xf32>) -> tensor<1x2x5x16xf32>
  return %o, %p : tensor<1x2x5x16xf32>, tensor<1x2x5x5xf32>
}

// -----

// A learned (run-time) temperature.
// CHECK-LABEL: func @scale_not_constant
// CHECK-NOT: tfc.attention
func.func @scale_not_constant(%q: tensor<1x2x5x16xf32>, %k: tensor<1x2x5x16xf32>, %v: tensor<1x2x5x16xf32>, %t: tensor<f32>) -> tensor<1x2x5x16xf32> {
  %s = tfc.matmul %q, %k {transpose_rhs} : (tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32>) -> tensor<1x2x5x5xf32>
  %d = tfc.mul %s, %t : (tensor<1x2x5x5xf32>, tensor<f32>) -> tensor<1x2x5x5xf32>
  // expected-remark @+1 {{not fused: the scale is not a constant}}
  %p = tfc.softmax %d {axis = 3} : tensor<1x2x5x5xf32>
  %o = tfc.matmul %p, %v : (tensor<1x2x5x5xf32>, tensor<1x2x5x16xf32>) -> tensor<1x2x5x16xf32>
  return %o : tensor<1x2x5x16xf32>
}

// -----

// Softmax over the queries instead of the keys.
// CHECK-LABEL: func @wrong_axis
// CHECK-NOT: tfc.attention
func.func @wrong_axis(%q: tensor<1x2x5x16xf32>, %k: tensor<1x2x5x16xf32>, %v: tensor<1x2x5x16xf32>) -> tensor<1x2x5x16xf32> {
  %s = tfc.matmul %q, %k {transpose_rhs} : (tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32>) -> tensor<1x2x5x5xf32>
  // expected-remark @+1 {{not fused: softmax axis 2 is not the key axis 3}}
  %p = tfc.softmax %s {axis = 2} : tensor<1x2x5x5xf32>
  %o = tfc.matmul %p, %v : (tensor<1x2x5x5xf32>, tensor<1x2x5x16xf32>) -> tensor<1x2x5x16xf32>
  return %o : tensor<1x2x5x16xf32>
}

// -----

// A mask with an extra leading axis broadcasts the scores to rank 5.
// CHECK-LABEL: func @mask_wrong_shape
// CHECK-NOT: tfc.attention
func.func @mask_wrong_shape(%q: tensor<1x2x5x16xf32>, %k: tensor<1x2x5x16xf32>, %v: tensor<1x2x5x16xf32>, %m: tensor<3x1x2x5x5xf32>) -> tensor<3x1x2x5x16xf32> {
  %s = tfc.matmul %q, %k {transpose_rhs} : (tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32>) -> tensor<1x2x5x5xf32>
  %b = tfc.add %s, %m : (tensor<1x2x5x5xf32>, tensor<3x1x2x5x5xf32>) -> tensor<3x1x2x5x5xf32>
  // expected-remark @+1 {{not fused: the mask tensor<3x1x2x5x5xf32> broadcasts the scores tensor<1x2x5x5xf32> to a larger shape}}
  %p = tfc.softmax %b {axis = 4} : tensor<3x1x2x5x5xf32>
  %o = tfc.matmul %p, %v : (tensor<3x1x2x5x5xf32>, tensor<1x2x5x16xf32>) -> tensor<3x1x2x5x16xf32>
  return %o : tensor<3x1x2x5x16xf32>
}

// -----

// (s + mask) * c is not s * c + mask for a finite mask.
// CHECK-LABEL: func @scaled_after_mask
// CHECK-NOT: tfc.attention
func.func @scaled_after_mask(%q: tensor<1x2x5x16xf32>, %k: tensor<1x2x5x16xf32>, %v: tensor<1x2x5x16xf32>, %m: tensor<1x1x1x5xf32>) -> tensor<1x2x5x16xf32> {
  %c = arith.constant dense<0.25> : tensor<f32>
  %s = tfc.matmul %q, %k {transpose_rhs} : (tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32>) -> tensor<1x2x5x5xf32>
  %b = tfc.add %s, %m : (tensor<1x2x5x5xf32>, tensor<1x1x1x5xf32>) -> tensor<1x2x5x5xf32>
  %d = tfc.mul %b, %c : (tensor<1x2x5x5xf32>, tensor<f32>) -> tensor<1x2x5x5xf32>
  // expected-remark @+1 {{not fused: the scores are scaled after the mask is added}}
  %p = tfc.softmax %d {axis = 3} : tensor<1x2x5x5xf32>
  %o = tfc.matmul %p, %v : (tensor<1x2x5x5xf32>, tensor<1x2x5x16xf32>) -> tensor<1x2x5x16xf32>
  return %o : tensor<1x2x5x16xf32>
}

// -----

// Filling masked scores with 0 is not masking.
// CHECK-LABEL: func @fill_not_negative
// CHECK-NOT: tfc.attention
func.func @fill_not_negative(%q: tensor<1x2x5x16xf32>, %k: tensor<1x2x5x16xf32>, %v: tensor<1x2x5x16xf32>, %keep: tensor<1x1x1x5xi1>) -> tensor<1x2x5x16xf32> {
  %zero = arith.constant dense<0.0> : tensor<f32>
  %s = tfc.matmul %q, %k {transpose_rhs} : (tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32>) -> tensor<1x2x5x5xf32>
  %w = tfc.where %keep, %s, %zero : (tensor<1x1x1x5xi1>, tensor<1x2x5x5xf32>, tensor<f32>) -> tensor<1x2x5x5xf32>
  // expected-remark @+1 {{not fused: the masked fill value is not a large negative constant (-inf or <= -1e4)}}
  %p = tfc.softmax %w {axis = 3} : tensor<1x2x5x5xf32>
  %o = tfc.matmul %p, %v : (tensor<1x2x5x5xf32>, tensor<1x2x5x16xf32>) -> tensor<1x2x5x16xf32>
  return %o : tensor<1x2x5x16xf32>
}

// -----

// Logit soft-capping (tanh) between the scores and the softmax.
// CHECK-LABEL: func @softcap
// CHECK-NOT: tfc.attention
func.func @softcap(%q: tensor<1x2x5x16xf32>, %k: tensor<1x2x5x16xf32>, %v: tensor<1x2x5x16xf32>) -> tensor<1x2x5x16xf32> {
  %s = tfc.matmul %q, %k {transpose_rhs} : (tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32>) -> tensor<1x2x5x5xf32>
  %t = tfc.tanh %s : tensor<1x2x5x5xf32>
  // expected-remark @+1 {{not fused: the scores are not computed by a matmul (found 'tfc.tanh' at}}
  %p = tfc.softmax %t {axis = 3} : tensor<1x2x5x5xf32>
  %o = tfc.matmul %p, %v : (tensor<1x2x5x5xf32>, tensor<1x2x5x16xf32>) -> tensor<1x2x5x16xf32>
  return %o : tensor<1x2x5x16xf32>
}

// -----

// A masked scores value that is also returned.
// CHECK-LABEL: func @masked_scores_other_use
// CHECK-NOT: tfc.attention
func.func @masked_scores_other_use(%q: tensor<1x2x5x16xf32>, %k: tensor<1x2x5x16xf32>, %v: tensor<1x2x5x16xf32>, %m: tensor<1x1x1x5xf32>) -> (tensor<1x2x5x16xf32>, tensor<1x2x5x5xf32>) {
  %s = tfc.matmul %q, %k {transpose_rhs} : (tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32>) -> tensor<1x2x5x5xf32>
  %b = tfc.add %s, %m : (tensor<1x2x5x5xf32>, tensor<1x1x1x5xf32>) -> tensor<1x2x5x5xf32>
  // expected-remark @+1 {{not fused: the masked scores have another use at}}
  %p = tfc.softmax %b {axis = 3} : tensor<1x2x5x5xf32>
  %o = tfc.matmul %p, %v : (tensor<1x2x5x5xf32>, tensor<1x2x5x16xf32>) -> tensor<1x2x5x16xf32>
  return %o, %b : tensor<1x2x5x16xf32>, tensor<1x2x5x5xf32>
}
