// The kernel ops' verifiers.
// RUN: tfc-opt %s -split-input-file -verify-diagnostics

func.func @mixed(%x: tensor<4x8xf32>, %o: memref<4x8xf32>) {
  // expected-error @+1 {{operands must be all tensors (before bufferisation) or all memrefs (after), not a mix}}
  tfc_kernel.softmax %x outs(%o) : (tensor<4x8xf32>, memref<4x8xf32>) -> ()
  return
}

// -----

func.func @no_result(%x: tensor<4x8xf32>, %e: tensor<4x8xf32>) {
  // expected-error @+1 {{expected the number of tensor results (0) to be equal to the number of output tensors (1)}}
  tfc_kernel.softmax %x outs(%e) : (tensor<4x8xf32>, tensor<4x8xf32>) -> ()
  return
}

// -----

func.func @shape(%x: memref<4x8xf32>, %o: memref<4x9xf32>) {
  // expected-error @+1 {{input 'memref<4x8xf32>' and destination 'memref<4x9xf32>' must have one shape of rank >= 1}}
  tfc_kernel.softmax %x outs(%o) : (memref<4x8xf32>, memref<4x9xf32>) -> ()
  return
}

// -----

func.func @element(%x: memref<4x8xf16>, %o: memref<4x8xf32>) {
  // expected-error @+1 {{input 'memref<4x8xf16>' must have the element type of the destination 'memref<4x8xf32>'}}
  tfc_kernel.softmax %x outs(%o) : (memref<4x8xf16>, memref<4x8xf32>) -> ()
  return
}

// -----

func.func @scale_vector(%x: memref<4x8xf32>, %g: memref<4xf32>, %o: memref<4x8xf32>) {
  // expected-error @+1 {{scale must be [8], got 'memref<4xf32>'}}
  tfc_kernel.layer_norm %x scale(%g) outs(%o) {epsilon = 1.0e-5} : (memref<4x8xf32>, memref<4xf32>, memref<4x8xf32>) -> ()
  return
}

// -----

func.func @gqa(%q: memref<1x6x4x8xf32>, %k: memref<1x4x4x8xf32>, %o: memref<1x6x4x8xf32>) {
  // expected-error @+1 {{query heads (6) must be a multiple of key/value heads (4)}}
  tfc_kernel.attention %q, %k, %k outs(%o) {scale = 1.0} : (memref<1x6x4x8xf32>, memref<1x4x4x8xf32>, memref<1x4x4x8xf32>, memref<1x6x4x8xf32>) -> ()
  return
}

// -----

func.func @attention_scale(%q: memref<1x2x4x8xf32>, %o: memref<1x2x4x8xf32>) {
  // expected-error @+1 {{scale must be finite and > 0}}
  tfc_kernel.attention %q, %q, %q outs(%o) {scale = 0.0} : (memref<1x2x4x8xf32>, memref<1x2x4x8xf32>, memref<1x2x4x8xf32>, memref<1x2x4x8xf32>) -> ()
  return
}

// -----

func.func @attention_out(%q: memref<1x2x4x8xf32>, %o: memref<1x2x5x8xf32>) {
  // expected-error @+1 {{destination 'memref<1x2x5x8xf32>' must be [B, H, Tq, Dv]}}
  tfc_kernel.attention %q, %q, %q outs(%o) {scale = 1.0} : (memref<1x2x4x8xf32>, memref<1x2x4x8xf32>, memref<1x2x4x8xf32>, memref<1x2x5x8xf32>) -> ()
  return
}

// -----

func.func @matmul_k(%a: memref<4x8xf32>, %b: memref<9x4xf32>, %c: memref<4x4xf32>) {
  // expected-error @+1 {{sizes disagree: 'memref<4x8xf32>' x 'memref<9x4xf32>' -> 'memref<4x4xf32>'}}
  tfc_kernel.matmul %a, %b outs(%c) : (memref<4x8xf32>, memref<9x4xf32>, memref<4x4xf32>) -> ()
  return
}

// -----

func.func @linear_bias(%x: memref<4x8xf32>, %w: memref<16x8xf32>, %b: memref<8xf32>, %y: memref<4x16xf32>) {
  // expected-error @+1 {{bias must be [N], got 'memref<8xf32>'}}
  tfc_kernel.linear %x, %w, %b outs(%y) : (memref<4x8xf32>, memref<16x8xf32>, memref<8xf32>, memref<4x16xf32>) -> ()
  return
}

// -----

func.func @gemm_f16(%x: memref<4x8xf16>, %w: memref<1x8x32xf32>, %y: memref<4x32xf32>) {
  // expected-error @+1 {{input must have element type 'f32', got 'memref<4x8xf16>'}}
  tfc_cpu.gemm %x, %w outs(%y) : (memref<4x8xf16>, memref<1x8x32xf32>, memref<4x32xf32>) -> ()
  return
}

// -----

func.func @pack_panels(%w: memref<40x8xf32>, %p: memref<1x8x32xf32>) {
  // expected-error @+1 {{result 'memref<1x8x32xf32>' is not the [ceil(N/NR), K, NR] panels of N = 40, K = 8}}
  tfc_cpu.pack %w outs(%p) : (memref<40x8xf32>, memref<1x8x32xf32>) -> ()
  return
}

// -----

// Keys and values may be f16 under an f32 destination (a half-precision KV
// cache), but not the query.
func.func @attention_half_query(%q: memref<1x2x4x8xf16>, %k: memref<1x2x4x8xf16>, %o: memref<1x2x4x8xf32>) {
  // expected-error @+1 {{query 'memref<1x2x4x8xf16>' must have the element type of the destination 'memref<1x2x4x8xf32>'}}
  tfc_kernel.attention %q, %k, %k outs(%o) {scale = 1.0} : (memref<1x2x4x8xf16>, memref<1x2x4x8xf16>, memref<1x2x4x8xf16>, memref<1x2x4x8xf32>) -> ()
  return
}

// -----

func.func @attention_half_value_only(%q: memref<1x2x4x8xf32>, %v: memref<1x2x4x8xf16>, %o: memref<1x2x4x8xf32>) {
  // expected-error @+1 {{value 'memref<1x2x4x8xf16>' must have the element type of the destination 'memref<1x2x4x8xf32>'}}
  tfc_kernel.attention %q, %q, %v outs(%o) {scale = 1.0} : (memref<1x2x4x8xf32>, memref<1x2x4x8xf32>, memref<1x2x4x8xf16>, memref<1x2x4x8xf32>) -> ()
  return
}
