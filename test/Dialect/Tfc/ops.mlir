// Round-trip of every tfc op through the custom assembly, then through the
// generic form and back.
// RUN: tfc-opt %s | tfc-opt | FileCheck %s
// RUN: tfc-opt %s --mlir-print-op-generic | tfc-opt | FileCheck %s

// CHECK-LABEL: func @composite
func.func @composite(%x: tensor<?x?x768xf32>, %w: tensor<3072x768xf32>,
                     %b: tensor<3072xf32>, %g: tensor<768xf32>,
                     %table: tensor<50257x768xf32>, %ids: tensor<?x?xi64>,
                     %mask: tensor<?x?xi64>, %n: index) {
  // CHECK: tfc.embedding %{{.*}}[%{{.*}}] : (tensor<50257x768xf32>, tensor<?x?xi64>) -> tensor<?x?x768xf32>
  %e = tfc.embedding %table[%ids] : (tensor<50257x768xf32>, tensor<?x?xi64>) -> tensor<?x?x768xf32>
  // CHECK: tfc.linear %{{.*}}, %{{.*}}, %{{.*}} activation(gelu_tanh) : (tensor<?x?x768xf32>, tensor<3072x768xf32>, tensor<3072xf32>) -> tensor<?x?x3072xf32>
  %l0 = tfc.linear %x, %w, %b activation(gelu_tanh) : (tensor<?x?x768xf32>, tensor<3072x768xf32>, tensor<3072xf32>) -> tensor<?x?x3072xf32>
  // CHECK: tfc.linear %{{[^,]*}}, %{{[^,]*}} : (tensor<?x?x768xf32>, tensor<3072x768xf32>) -> tensor<?x?x3072xf32>
  %l1 = tfc.linear %x, %w : (tensor<?x?x768xf32>, tensor<3072x768xf32>) -> tensor<?x?x3072xf32>
  // CHECK: tfc.linear {{.*}} activation(relu)
  %l2 = tfc.linear %x, %w, %b activation(relu) : (tensor<?x?x768xf32>, tensor<3072x768xf32>, tensor<3072xf32>) -> tensor<?x?x3072xf32>
  // CHECK: tfc.linear {{.*}} activation(silu)
  %l3 = tfc.linear %x, %w activation(silu) : (tensor<?x?x768xf32>, tensor<3072x768xf32>) -> tensor<?x?x3072xf32>
  // CHECK: tfc.linear {{.*}} activation(gelu_erf)
  %l4 = tfc.linear %x, %w activation(gelu_erf) : (tensor<?x?x768xf32>, tensor<3072x768xf32>) -> tensor<?x?x3072xf32>
  // CHECK: tfc.layer_norm %{{.*}} scale(%{{.*}}) bias(%{{.*}}) {epsilon = 9.9999999999999998E-13 : f64} : (tensor<?x?x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
  %ln0 = tfc.layer_norm %x scale(%g) bias(%g) {epsilon = 1.0e-12} : (tensor<?x?x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
  // The default epsilon (1e-5) is not printed.
  // CHECK: tfc.layer_norm %{{[^ ]*}} : (tensor<?x?x768xf32>) -> tensor<?x?x768xf32>
  %ln1 = tfc.layer_norm %x : (tensor<?x?x768xf32>) -> tensor<?x?x768xf32>
  // CHECK: tfc.layer_norm %{{[^ ]*}} bias(%{{.*}}) : (tensor<?x?x768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
  %ln2 = tfc.layer_norm %x bias(%g) : (tensor<?x?x768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
  // CHECK: tfc.rms_norm %{{.*}} scale(%{{.*}}) : (tensor<?x?x768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
  %rn0 = tfc.rms_norm %x scale(%g) : (tensor<?x?x768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
  // CHECK: tfc.rms_norm %{{.*}} {epsilon = 1.000000e-05 : f64} : (tensor<?x?x768xf32>) -> tensor<?x?x768xf32>
  %rn1 = tfc.rms_norm %x {epsilon = 1.0e-5} : (tensor<?x?x768xf32>) -> tensor<?x?x768xf32>
  // CHECK: tfc.softmax %{{.*}} {axis = 2 : i64} : tensor<?x?x768xf32>
  %sm = tfc.softmax %x {axis = 2} : tensor<?x?x768xf32>
  // CHECK: tfc.gelu erf %{{.*}} : tensor<?x?x768xf32>
  %ge = tfc.gelu erf %x : tensor<?x?x768xf32>
  // CHECK: tfc.gelu tanh %{{.*}} : tensor<?x?x768xf32>
  %gt = tfc.gelu tanh %x : tensor<?x?x768xf32>
  // CHECK: tfc.relu %{{.*}} : tensor<?x?x768xf32>
  %re = tfc.relu %x : tensor<?x?x768xf32>
  // CHECK: tfc.silu %{{.*}} : tensor<?x?x768xf32>
  %si = tfc.silu %x : tensor<?x?x768xf32>
  // CHECK: tfc.split_heads %{{.*}} {heads = 12 : i64} : tensor<?x?x768xf32> -> tensor<?x12x?x64xf32>
  %h = tfc.split_heads %x {heads = 12} : tensor<?x?x768xf32> -> tensor<?x12x?x64xf32>
  // CHECK: tfc.merge_heads %{{.*}} : tensor<?x12x?x64xf32> -> tensor<?x?x768xf32>
  %m = tfc.merge_heads %h : tensor<?x12x?x64xf32> -> tensor<?x?x768xf32>
  // CHECK: tfc.rope adjacent %{{.*}} : tensor<?x12x?x64xf32>
  %r0 = tfc.rope adjacent %h : tensor<?x12x?x64xf32>
  // CHECK: tfc.rope rotate_half %{{.*}} offset(%{{.*}}) {base = 5.000000e+05 : f64, rotary_dim = 32 : i64} : tensor<?x12x?x64xf32>
  %r1 = tfc.rope rotate_half %h offset(%n) {base = 500000.0, rotary_dim = 32} : tensor<?x12x?x64xf32>
  // CHECK: tfc.sinusoidal_positions %{{.*}} : tensor<?x768xf32>
  %pe0 = tfc.sinusoidal_positions %n : tensor<?x768xf32>
  // CHECK: tfc.sinusoidal_positions %{{.*}} offset(%{{.*}}) : tensor<?x768xf32>
  %pe1 = tfc.sinusoidal_positions %n offset(%n) : tensor<?x768xf32>
  // CHECK: tfc.causal_mask %{{.*}}, %{{.*}} : tensor<?x?xf32>
  %cm = tfc.causal_mask %n, %n : tensor<?x?xf32>
  // CHECK: tfc.padding_mask %{{.*}} : tensor<?x?xi64> -> tensor<?x1x1x?xf32>
  %pm = tfc.padding_mask %mask : tensor<?x?xi64> -> tensor<?x1x1x?xf32>
  return
}

// CHECK-LABEL: func @attention
func.func @attention(%q: tensor<?x32x?x128xf16>, %kv: tensor<?x8x?x128xf16>,
                     %bias: tensor<?x1x1x?xf16>, %q4: tensor<2x8x7x64xf32>,
                     %k4: tensor<2x8x11x64xf32>, %v4: tensor<2x8x11x32xf32>) {
  // Grouped-query attention, f16, causal, default scale.
  // CHECK: tfc.attention %{{.*}}, %{{.*}}, %{{.*}} {causal} : (tensor<?x32x?x128xf16>, tensor<?x8x?x128xf16>, tensor<?x8x?x128xf16>) -> tensor<?x32x?x128xf16>
  %0 = tfc.attention %q, %kv, %kv {causal} : (tensor<?x32x?x128xf16>, tensor<?x8x?x128xf16>, tensor<?x8x?x128xf16>) -> tensor<?x32x?x128xf16>
  // A padding bias and an explicit scale.
  // CHECK: tfc.attention %{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}}) {scale = 1.250000e-01 : f64} : (tensor<?x32x?x128xf16>, tensor<?x8x?x128xf16>, tensor<?x8x?x128xf16>, tensor<?x1x1x?xf16>) -> tensor<?x32x?x128xf16>
  %1 = tfc.attention %q, %kv, %kv mask(%bias) {scale = 0.125} : (tensor<?x32x?x128xf16>, tensor<?x8x?x128xf16>, tensor<?x8x?x128xf16>, tensor<?x1x1x?xf16>) -> tensor<?x32x?x128xf16>
  // Cross-attention: query length 7, key length 11, value width 32.
  // CHECK: tfc.attention {{.*}} : (tensor<2x8x7x64xf32>, tensor<2x8x11x64xf32>, tensor<2x8x11x32xf32>) -> tensor<2x8x7x32xf32>
  %2 = tfc.attention %q4, %k4, %v4 : (tensor<2x8x7x64xf32>, tensor<2x8x11x64xf32>, tensor<2x8x11x32xf32>) -> tensor<2x8x7x32xf32>
  // A declared result may be more refined than the inferred one (never
  // less: invalid.mlir).
  // CHECK: tfc.attention {{.*}} : (tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>, tensor<?x8x?x32xf32>) -> tensor<2x8x7x32xf32>
  %q5 = tensor.cast %q4 : tensor<2x8x7x64xf32> to tensor<?x8x?x64xf32>
  %k5 = tensor.cast %k4 : tensor<2x8x11x64xf32> to tensor<?x8x?x64xf32>
  %v5 = tensor.cast %v4 : tensor<2x8x11x32xf32> to tensor<?x8x?x32xf32>
  %3 = tfc.attention %q5, %k5, %v5 : (tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>, tensor<?x8x?x32xf32>) -> tensor<2x8x7x32xf32>
  // Keys and values of a half-precision KV cache under an f32 query.
  // CHECK: tfc.attention {{.*}} {causal} : (tensor<2x8x7x64xf32>, tensor<2x8x11x64xf16>, tensor<2x8x11x32xf16>) -> tensor<2x8x7x32xf32>
  %k6 = tfc.cast %k4 : tensor<2x8x11x64xf32> to tensor<2x8x11x64xf16>
  %v6 = tfc.cast %v4 : tensor<2x8x11x32xf32> to tensor<2x8x11x32xf16>
  %4 = tfc.attention %q4, %k6, %v6 {causal} : (tensor<2x8x7x64xf32>, tensor<2x8x11x64xf16>, tensor<2x8x11x32xf16>) -> tensor<2x8x7x32xf32>
  return
}

// CHECK-LABEL: func @position_biases
func.func @position_biases(%q: tensor<2x8x7x64xf32>, %table: tensor<32x8xf32>) {
  // T5: a bias by distance from a bucket table, read by the attention.
  // CHECK: %[[B:.*]] = tfc.relative_position_bias %{{.*}} {bidirectional, max_distance = 128 : i64, num_buckets = 32 : i64} : tensor<32x8xf32> -> tensor<8x257xf32>
  // CHECK: tfc.attention %{{.*}}, %{{.*}}, %{{.*}} relative_bias(%[[B]]) {scale = 1.000000e+00 : f64} : (tensor<2x8x7x64xf32>, tensor<2x8x7x64xf32>, tensor<2x8x7x64xf32>, tensor<8x257xf32>) -> tensor<2x8x7x64xf32>
  %b = tfc.relative_position_bias %table {num_buckets = 32 : i64, max_distance = 128 : i64, bidirectional} : tensor<32x8xf32> -> tensor<8x257xf32>
  %0 = tfc.attention %q, %q, %q relative_bias(%b) {scale = 1.0 : f64} : (tensor<2x8x7x64xf32>, tensor<2x8x7x64xf32>, tensor<2x8x7x64xf32>, tensor<8x257xf32>) -> tensor<2x8x7x64xf32>
  // ALiBi with the maximum bias 8.
  // CHECK: tfc.attention %{{.*}}, %{{.*}}, %{{.*}} {alibi = 8.000000e+00 : f64, causal} : (tensor<2x8x7x64xf32>, tensor<2x8x7x64xf32>, tensor<2x8x7x64xf32>) -> tensor<2x8x7x64xf32>
  %1 = tfc.attention %q, %q, %q {causal, alibi = 8.0 : f64} : (tensor<2x8x7x64xf32>, tensor<2x8x7x64xf32>, tensor<2x8x7x64xf32>) -> tensor<2x8x7x64xf32>
  // Gemma 2's soft cap of the scores.
  // CHECK: tfc.attention %{{.*}}, %{{.*}}, %{{.*}} {causal, softcap = 5.000000e+01 : f64} : (tensor<2x8x7x64xf32>, tensor<2x8x7x64xf32>, tensor<2x8x7x64xf32>) -> tensor<2x8x7x64xf32>
  %2 = tfc.attention %q, %q, %q {causal, softcap = 50.0 : f64} : (tensor<2x8x7x64xf32>, tensor<2x8x7x64xf32>, tensor<2x8x7x64xf32>) -> tensor<2x8x7x64xf32>
  return
}

// CHECK-LABEL: func @matmul
func.func @matmul(%a: tensor<?x12x?x64xf32>, %b: tensor<?x12x?x64xf32>,
                  %w: tensor<64x32xf32>) {
  // CHECK: tfc.matmul %{{.*}}, %{{.*}} {transpose_rhs} : (tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>) -> tensor<?x12x?x?xf32>
  %0 = tfc.matmul %a, %b {transpose_rhs} : (tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>) -> tensor<?x12x?x?xf32>
  // Batch dimensions broadcast.
  // CHECK: tfc.matmul %{{.*}}, %{{.*}} : (tensor<?x12x?x64xf32>, tensor<64x32xf32>) -> tensor<?x12x?x32xf32>
  %1 = tfc.matmul %a, %w : (tensor<?x12x?x64xf32>, tensor<64x32xf32>) -> tensor<?x12x?x32xf32>
  // CHECK: tfc.matmul %{{.*}}, %{{.*}} {transpose_lhs} : (tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>) -> tensor<?x12x64x64xf32>
  %2 = tfc.matmul %a, %b {transpose_lhs} : (tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>) -> tensor<?x12x64x64xf32>
  return
}

// CHECK-LABEL: func @elementwise
func.func @elementwise(%x: tensor<?x?x768xf32>, %v: tensor<768xf32>,
                       %s: tensor<f32>, %c: tensor<?x1x1x?xi1>,
                       %sc: tensor<?x12x?x?xf32>) {
  // Same-typed operands print the short form.
  // CHECK: tfc.add %{{.*}}, %{{.*}} : tensor<?x?x768xf32>
  %0 = tfc.add %x, %x : tensor<?x?x768xf32>
  // Broadcasting operands print the functional type.
  // CHECK: tfc.sub %{{.*}}, %{{.*}} : (tensor<?x?x768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
  %1 = tfc.sub %x, %v : (tensor<?x?x768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
  // CHECK: tfc.mul %{{.*}}, %{{.*}} : (tensor<?x?x768xf32>, tensor<f32>) -> tensor<?x?x768xf32>
  %2 = tfc.mul %x, %s : (tensor<?x?x768xf32>, tensor<f32>) -> tensor<?x?x768xf32>
  // CHECK: tfc.div %{{.*}}, %{{.*}} : (tensor<f32>, tensor<?x?x768xf32>) -> tensor<?x?x768xf32>
  %3 = tfc.div %s, %x : (tensor<f32>, tensor<?x?x768xf32>) -> tensor<?x?x768xf32>
  // CHECK: tfc.max %{{.*}}, %{{.*}} : tensor<?x?x768xf32>
  %4 = tfc.max %x, %x : tensor<?x?x768xf32>
  // CHECK: tfc.min %{{.*}}, %{{.*}} : tensor<?x?x768xf32>
  %5 = tfc.min %x, %x : tensor<?x?x768xf32>
  // CHECK: tfc.pow %{{.*}}, %{{.*}} : (tensor<?x?x768xf32>, tensor<f32>) -> tensor<?x?x768xf32>
  %6 = tfc.pow %x, %s : (tensor<?x?x768xf32>, tensor<f32>) -> tensor<?x?x768xf32>
  // CHECK: tfc.exp %{{.*}} : tensor<?x?x768xf32>
  %7 = tfc.exp %x : tensor<?x?x768xf32>
  // CHECK: tfc.log %{{.*}} : tensor<?x?x768xf32>
  %8 = tfc.log %x : tensor<?x?x768xf32>
  // CHECK: tfc.sqrt %{{.*}} : tensor<?x?x768xf32>
  %9 = tfc.sqrt %x : tensor<?x?x768xf32>
  // CHECK: tfc.rsqrt %{{.*}} : tensor<?x?x768xf32>
  %10 = tfc.rsqrt %x : tensor<?x?x768xf32>
  // CHECK: tfc.tanh %{{.*}} : tensor<?x?x768xf32>
  %11 = tfc.tanh %x : tensor<?x?x768xf32>
  // CHECK: tfc.erf %{{.*}} : tensor<?x?x768xf32>
  %12 = tfc.erf %x : tensor<?x?x768xf32>
  // CHECK: tfc.neg %{{.*}} : tensor<?x?x768xf32>
  %13 = tfc.neg %x : tensor<?x?x768xf32>
  // A mask fill.
  // CHECK: tfc.where %{{.*}}, %{{.*}}, %{{.*}} : (tensor<?x1x1x?xi1>, tensor<?x12x?x?xf32>, tensor<f32>) -> tensor<?x12x?x?xf32>
  %14 = tfc.where %c, %sc, %s : (tensor<?x1x1x?xi1>, tensor<?x12x?x?xf32>, tensor<f32>) -> tensor<?x12x?x?xf32>
  // CHECK: tfc.cast %{{.*}} : tensor<?x1x1x?xi1> to tensor<?x1x1x?xf32>
  %15 = tfc.cast %c : tensor<?x1x1x?xi1> to tensor<?x1x1x?xf32>
  return
}

// CHECK-LABEL: func @reductions_and_data_movement
func.func @reductions_and_data_movement(%x: tensor<?x?x768xf32>, %n: index) {
  // CHECK: tfc.reduce_sum %{{.*}} {axis = 2 : i64, keepdim} : tensor<?x?x768xf32> -> tensor<?x?x1xf32>
  %0 = tfc.reduce_sum %x {axis = 2, keepdim} : tensor<?x?x768xf32> -> tensor<?x?x1xf32>
  // CHECK: tfc.reduce_max %{{.*}} {axis = 1 : i64} : tensor<?x?x768xf32> -> tensor<?x768xf32>
  %1 = tfc.reduce_max %x {axis = 1} : tensor<?x?x768xf32> -> tensor<?x768xf32>
  // CHECK: tfc.reduce_mean %{{.*}} {axis = 2 : i64, keepdim} : tensor<?x?x768xf32> -> tensor<?x?x1xf32>
  %2 = tfc.reduce_mean %x {axis = 2, keepdim} : tensor<?x?x768xf32> -> tensor<?x?x1xf32>
  // CHECK: tfc.argmax %{{.*}} {axis = 2 : i64} : tensor<?x?x768xf32> -> tensor<?x?xi64>
  %3 = tfc.argmax %x {axis = 2} : tensor<?x?x768xf32> -> tensor<?x?xi64>
  // CHECK: tfc.transpose %{{.*}} [1, 0, 2] : tensor<?x?x768xf32> -> tensor<?x?x768xf32>
  %4 = tfc.transpose %x [1, 0, 2] : tensor<?x?x768xf32> -> tensor<?x?x768xf32>
  // CHECK: tfc.reshape %{{.*}}[%{{.*}}, %{{.*}}] : tensor<?x?x768xf32> -> tensor<?x?x12x64xf32>
  %5 = tfc.reshape %x [%n, %n] : tensor<?x?x768xf32> -> tensor<?x?x12x64xf32>
  // CHECK: tfc.reshape %{{.*}} : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %c = arith.constant dense<1.0> : tensor<2x3x4xf32>
  %6 = tfc.reshape %c : tensor<2x3x4xf32> -> tensor<6x4xf32>
  return
}

// CHECK-LABEL: func @weights_and_positions
func.func @weights_and_positions(%x: tensor<?x?x2304xf32>, %t: index, %past: index) {
  // CHECK: tfc.weight "wte.weight" : tensor<50257x768xf32>
  %w = tfc.weight "wte.weight" : tensor<50257x768xf32>
  // CHECK: tfc.arange %{{.*}} : tensor<?xi64>
  %0 = tfc.arange %t : tensor<?xi64>
  // CHECK: tfc.arange %{{.*}} offset(%{{.*}}) : tensor<?xi64>
  %1 = tfc.arange %t offset(%past) : tensor<?xi64>
  // CHECK: tfc.slice %{{.*}} {axis = 2 : i64, size = 768 : i64, start = 768 : i64} : tensor<?x?x2304xf32> -> tensor<?x?x768xf32>
  %2 = tfc.slice %x {axis = 2, start = 768, size = 768} : tensor<?x?x2304xf32> -> tensor<?x?x768xf32>
  // CHECK: tfc.slice %{{.*}} {axis = 1 : i64, size = 1 : i64, start = 0 : i64} : tensor<?x?x2304xf32> -> tensor<?x1x2304xf32>
  %3 = tfc.slice %x {axis = 1, start = 0, size = 1} : tensor<?x?x2304xf32> -> tensor<?x1x2304xf32>
  return
}

// CHECK-LABEL: func @concat_and_residual
func.func @concat_and_residual(%a: tensor<768x768xf32>, %b: tensor<256x768xf32>, %x: tensor<?x?x768xf32>, %r: tensor<?x?x768xf32>, %g: tensor<768xf32>) {
  // CHECK: tfc.concat %{{.*}}, %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<768x768xf32>, tensor<256x768xf32>, tensor<256x768xf32>) -> tensor<1280x768xf32>
  %0 = tfc.concat %a, %b, %b {axis = 0} : (tensor<768x768xf32>, tensor<256x768xf32>, tensor<256x768xf32>) -> tensor<1280x768xf32>
  // CHECK: tfc.layer_norm %{{.*}} scale(%{{.*}}) residual(%{{.*}}) :
  %1 = tfc.layer_norm %x scale(%g) residual(%r) : (tensor<?x?x768xf32>, tensor<768xf32>, tensor<?x?x768xf32>) -> tensor<?x?x768xf32>
  // CHECK: tfc.rms_norm %{{.*}} scale(%{{.*}}) residual(%{{.*}}) {epsilon = 1.000000e-05 : f64} :
  %2 = tfc.rms_norm %x scale(%g) residual(%r) {epsilon = 1.0e-5 : f64} : (tensor<?x?x768xf32>, tensor<768xf32>, tensor<?x?x768xf32>) -> tensor<?x?x768xf32>
  return
}
