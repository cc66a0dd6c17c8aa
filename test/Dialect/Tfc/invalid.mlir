// Every verifier error of the tfc dialect, one per split.
// RUN: tfc-opt %s -split-input-file -verify-diagnostics

func.func @embedding_table_rank(%t: tensor<100xf32>, %ids: tensor<?x?xi64>) {
  // expected-error @+1 {{'tfc.embedding' op table must be [vocab, features], got [100]}}
  %0 = tfc.embedding %t[%ids] : (tensor<100xf32>, tensor<?x?xi64>) -> tensor<?x?x100xf32>
  return
}

// -----

func.func @embedding_ids_type(%t: tensor<100x8xf32>, %ids: tensor<?x?xf32>) {
  // expected-error @+1 {{operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = tfc.embedding %t[%ids] : (tensor<100x8xf32>, tensor<?x?xf32>) -> tensor<?x?x8xf32>
  return
}

// -----

func.func @embedding_result(%t: tensor<100x8xf32>, %ids: tensor<?x?xi64>) {
  // expected-error @+1 {{'tfc.embedding' op result type 'tensor<?x?x16xf32>' does not match the inferred type 'tensor<?x?x8xf32>'}}
  %0 = tfc.embedding %t[%ids] : (tensor<100x8xf32>, tensor<?x?xi64>) -> tensor<?x?x16xf32>
  return
}

// -----

func.func @linear_features(%x: tensor<?x?x768xf32>, %w: tensor<3072x512xf32>) {
  // expected-error @+1 {{'tfc.linear' op input [?, ?, 768] does not match the weight [out_features, in_features] = [3072, 512] (768 vs 512 input features)}}
  %0 = tfc.linear %x, %w : (tensor<?x?x768xf32>, tensor<3072x512xf32>) -> tensor<?x?x3072xf32>
  return
}

// -----

func.func @linear_weight_rank(%x: tensor<?x768xf32>, %w: tensor<768xf32>) {
  // expected-error @+1 {{'tfc.linear' op weight must be [out_features, in_features], got [768]}}
  %0 = tfc.linear %x, %w : (tensor<?x768xf32>, tensor<768xf32>) -> tensor<?x768xf32>
  return
}

// -----

func.func @linear_bias(%x: tensor<?x768xf32>, %w: tensor<3072x768xf32>, %b: tensor<768xf32>) {
  // expected-error @+1 {{bias [768] must be a vector of the [3072] output features}}
  %0 = tfc.linear %x, %w, %b : (tensor<?x768xf32>, tensor<3072x768xf32>, tensor<768xf32>) -> tensor<?x3072xf32>
  return
}

// -----

func.func @linear_element_types(%x: tensor<?x768xf16>, %w: tensor<3072x768xf32>) {
  // expected-error @+1 {{requires the same element type for all operands and results}}
  %0 = tfc.linear %x, %w : (tensor<?x768xf16>, tensor<3072x768xf32>) -> tensor<?x3072xf32>
  return
}

// -----

func.func @linear_unknown_activation(%x: tensor<?x768xf32>, %w: tensor<3072x768xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'activation' [none, relu, gelu_erf, gelu_tanh, silu]}}
  %0 = tfc.linear %x, %w activation(swish) : (tensor<?x768xf32>, tensor<3072x768xf32>) -> tensor<?x3072xf32>
  return
}

// -----

func.func @matmul_rank(%a: tensor<64xf32>, %b: tensor<64x64xf32>) {
  // expected-error @+1 {{operands must have rank >= 2, got [64] and [64, 64]}}
  %0 = tfc.matmul %a, %b : (tensor<64xf32>, tensor<64x64xf32>) -> tensor<64xf32>
  return
}

// -----

func.func @matmul_contraction(%a: tensor<?x12x?x64xf32>, %b: tensor<?x12x32x64xf32>) {
  // expected-error @+1 {{contraction sizes differ: lhs [?, 12, ?, 64] and rhs [?, 12, 32, 64]}}
  %0 = tfc.matmul %a, %b : (tensor<?x12x?x64xf32>, tensor<?x12x32x64xf32>) -> tensor<?x12x?x64xf32>
  return
}

// -----

func.func @matmul_contraction_transposed(%a: tensor<8x64xf32>, %b: tensor<8x64xf32>) {
  // expected-error @+1 {{contraction sizes differ: lhs [8, 64] (transposed) and rhs [8, 64] (transposed)}}
  %0 = tfc.matmul %a, %b {transpose_lhs, transpose_rhs} : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<64x8xf32>
  return
}

// -----

func.func @matmul_batch(%a: tensor<2x8x64xf32>, %b: tensor<3x64x8xf32>) {
  // expected-error @+1 {{batch dimensions of [2, 8, 64] and [3, 64, 8] do not broadcast}}
  %0 = tfc.matmul %a, %b : (tensor<2x8x64xf32>, tensor<3x64x8xf32>) -> tensor<2x8x8xf32>
  return
}

// -----

func.func @layer_norm_scale(%x: tensor<?x?x768xf32>, %g: tensor<512xf32>) {
  // expected-error @+1 {{'tfc.layer_norm' op scale must be a vector of the last axis' size [768], got [512]}}
  %0 = tfc.layer_norm %x scale(%g) : (tensor<?x?x768xf32>, tensor<512xf32>) -> tensor<?x?x768xf32>
  return
}

// -----

func.func @layer_norm_bias_type(%x: tensor<?x?x768xf32>, %b: tensor<768xf16>) {
  // expected-error @+1 {{'tfc.layer_norm' op bias element type 'f16' differs from the input's 'f32'}}
  %0 = tfc.layer_norm %x bias(%b) : (tensor<?x?x768xf32>, tensor<768xf16>) -> tensor<?x?x768xf32>
  return
}

// -----

func.func @layer_norm_epsilon(%x: tensor<?x?x768xf32>) {
  // expected-error @+1 {{'tfc.layer_norm' op epsilon must be finite and >= 0, got -1}}
  %0 = tfc.layer_norm %x {epsilon = -1.0} : (tensor<?x?x768xf32>) -> tensor<?x?x768xf32>
  return
}

// -----

func.func @layer_norm_result(%x: tensor<?x?x768xf32>) {
  // expected-error @+1 {{'tfc.layer_norm' op result type 'tensor<?x768xf32>' differs from the input type 'tensor<?x?x768xf32>'}}
  %0 = tfc.layer_norm %x : (tensor<?x?x768xf32>) -> tensor<?x768xf32>
  return
}

// -----

func.func @layer_norm_rank(%x: tensor<f32>) {
  // expected-error @+1 {{'tfc.layer_norm' op input must have rank >= 1}}
  %0 = tfc.layer_norm %x : (tensor<f32>) -> tensor<f32>
  return
}

// -----

func.func @rms_norm_scale(%x: tensor<?x4096xf32>, %g: tensor<4096x1xf32>) {
  // expected-error @+1 {{'tfc.rms_norm' op scale must be a vector of the last axis' size [4096], got [4096, 1]}}
  %0 = tfc.rms_norm %x scale(%g) : (tensor<?x4096xf32>, tensor<4096x1xf32>) -> tensor<?x4096xf32>
  return
}

// -----

func.func @softmax_axis(%x: tensor<?x?xf32>) {
  // expected-error @+1 {{'tfc.softmax' op axis 2 is out of range for rank 2}}
  %0 = tfc.softmax %x {axis = 2} : tensor<?x?xf32>
  return
}

// -----

func.func @softmax_negative_axis(%x: tensor<?x?xf32>) {
  // expected-error @+1 {{attribute 'axis' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %0 = tfc.softmax %x {axis = -1} : tensor<?x?xf32>
  return
}

// -----

func.func @attention_window_not_causal(%q: tensor<1x4x16x8xf32>) {
  // expected-error @+1 {{'tfc.attention' op a window needs causal attention (it counts keys back from the diagonal)}}
  %0 = tfc.attention %q, %q, %q {window = 4 : i64} : (tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>) -> tensor<1x4x16x8xf32>
  return
}

// -----

func.func @attention_window_positive(%q: tensor<1x4x16x8xf32>) {
  // expected-error @+1 {{'tfc.attention' op window must be in [1, 1073741824], got 0}}
  %0 = tfc.attention %q, %q, %q {causal, window = 0 : i64} : (tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>) -> tensor<1x4x16x8xf32>
  return
}

// -----

func.func @attention_alibi_positive(%q: tensor<1x4x16x8xf32>) {
  // expected-error @+1 {{'tfc.attention' op alibi (the maximum bias) must be finite and > 0, got -1}}
  %0 = tfc.attention %q, %q, %q {causal, alibi = -1.0 : f64} : (tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>) -> tensor<1x4x16x8xf32>
  return
}

// -----

func.func @attention_softcap_positive(%q: tensor<1x4x16x8xf32>) {
  // expected-error @+1 {{'tfc.attention' op softcap must be finite and > 0, got 0}}
  %0 = tfc.attention %q, %q, %q {causal, softcap = 0.0 : f64} : (tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>) -> tensor<1x4x16x8xf32>
  return
}

// -----

func.func @attention_relative_bias_heads(%q: tensor<1x4x16x8xf32>, %b: tensor<3x9xf32>) {
  // expected-error @+1 {{'tfc.attention' op relative_bias must be [heads, 2R + 1] with heads = 4 and a static odd width of at most 1073741825, both static; got [3, 9]}}
  %0 = tfc.attention %q, %q, %q relative_bias(%b) : (tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>, tensor<3x9xf32>) -> tensor<1x4x16x8xf32>
  return
}

// -----

func.func @attention_relative_bias_even(%q: tensor<1x4x16x8xf32>, %b: tensor<4x8xf32>) {
  // expected-error @+1 {{'tfc.attention' op relative_bias must be [heads, 2R + 1] with heads = 4 and a static odd width of at most 1073741825, both static; got [4, 8]}}
  %0 = tfc.attention %q, %q, %q relative_bias(%b) : (tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>, tensor<4x8xf32>) -> tensor<1x4x16x8xf32>
  return
}

// -----

func.func @relative_position_bias_table(%t: tensor<16x4xf32>) {
  // expected-error @+1 {{'tfc.relative_position_bias' op table must be [num_buckets = 32, heads] with static heads, got [16, 4]}}
  %0 = tfc.relative_position_bias %t {num_buckets = 32 : i64, max_distance = 128 : i64, bidirectional} : tensor<16x4xf32> -> tensor<4x257xf32>
  return
}

// -----

func.func @relative_position_bias_result(%t: tensor<32x4xf32>) {
  // expected-error @+1 {{'tfc.relative_position_bias' op result must be [4, 257] of 'f32', got 'tensor<4x255xf32>'}}
  %0 = tfc.relative_position_bias %t {num_buckets = 32 : i64, max_distance = 128 : i64} : tensor<32x4xf32> -> tensor<4x255xf32>
  return
}

// -----

func.func @relative_position_bias_distance(%t: tensor<32x4xf32>) {
  // expected-error @+1 {{'tfc.relative_position_bias' op max_distance 8 must exceed the 8 exact buckets}}
  %0 = tfc.relative_position_bias %t {num_buckets = 32 : i64, max_distance = 8 : i64, bidirectional} : tensor<32x4xf32> -> tensor<4x17xf32>
  return
}

// -----

func.func @attention_rank(%q: tensor<?x?x64xf32>) {
  // expected-error @+1 {{'tfc.attention' op needs query [batch, heads, q_len, d_head], key and value [batch, kv_heads, kv_len, d_head], got [?, ?, 64], [?, ?, 64], [?, ?, 64]}}
  %0 = tfc.attention %q, %q, %q : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @attention_head_size(%q: tensor<1x8x16x64xf32>, %k: tensor<1x8x16x32xf32>) {
  // expected-error @+1 {{'tfc.attention' op query and key head sizes differ: query [1, 8, 16, 64], key [1, 8, 16, 32], value [1, 8, 16, 32]}}
  %0 = tfc.attention %q, %k, %k : (tensor<1x8x16x64xf32>, tensor<1x8x16x32xf32>, tensor<1x8x16x32xf32>) -> tensor<1x8x16x32xf32>
  return
}

// -----

func.func @attention_gqa(%q: tensor<1x12x16x64xf32>, %kv: tensor<1x5x16x64xf32>) {
  // expected-error @+1 {{query heads are not a multiple of key/value heads: query [1, 12, 16, 64], key [1, 5, 16, 64], value [1, 5, 16, 64]}}
  %0 = tfc.attention %q, %kv, %kv : (tensor<1x12x16x64xf32>, tensor<1x5x16x64xf32>, tensor<1x5x16x64xf32>) -> tensor<1x12x16x64xf32>
  return
}

// -----

// A head count of 0 is an error, not a division by zero in the verifier.
func.func @attention_zero_kv_heads(%q: tensor<1x8x16x64xf32>, %kv: tensor<1x0x16x64xf32>) {
  // expected-error @+1 {{'tfc.attention' op head counts must be positive: query [1, 8, 16, 64], key [1, 0, 16, 64], value [1, 0, 16, 64]}}
  %0 = tfc.attention %q, %kv, %kv : (tensor<1x8x16x64xf32>, tensor<1x0x16x64xf32>, tensor<1x0x16x64xf32>) -> tensor<1x8x16x64xf32>
  return
}

// -----

func.func @attention_zero_heads(%q: tensor<1x0x16x64xf32>, %kv: tensor<1x0x16x64xf32>) {
  // expected-error @+1 {{'tfc.attention' op head counts must be positive: query [1, 0, 16, 64], key [1, 0, 16, 64], value [1, 0, 16, 64]}}
  %0 = tfc.attention %q, %kv, %kv : (tensor<1x0x16x64xf32>, tensor<1x0x16x64xf32>, tensor<1x0x16x64xf32>) -> tensor<1x0x16x64xf32>
  return
}

// -----

func.func @attention_zero_kv_heads_dynamic_query(%q: tensor<1x?x16x64xf32>, %kv: tensor<1x0x16x64xf32>) {
  // expected-error @+1 {{head counts must be positive}}
  %0 = tfc.attention %q, %kv, %kv : (tensor<1x?x16x64xf32>, tensor<1x0x16x64xf32>, tensor<1x0x16x64xf32>) -> tensor<1x?x16x64xf32>
  return
}

// -----

func.func @attention_zero_head_size(%q: tensor<1x8x16x0xf32>) {
  // expected-error @+1 {{'tfc.attention' op needs an explicit scale: the head size of query [1, 8, 16, 0] is 0}}
  %0 = tfc.attention %q, %q, %q : (tensor<1x8x16x0xf32>, tensor<1x8x16x0xf32>, tensor<1x8x16x0xf32>) -> tensor<1x8x16x0xf32>
  return
}

// -----

func.func @attention_kv_length(%q: tensor<1x8x16x64xf32>, %k: tensor<1x8x16x64xf32>, %v: tensor<1x8x17x64xf32>) {
  // expected-error @+1 {{key and value lengths differ}}
  %0 = tfc.attention %q, %k, %v : (tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x17x64xf32>) -> tensor<1x8x16x64xf32>
  return
}

// -----

func.func @attention_kv_heads(%q: tensor<1x8x16x64xf32>, %k: tensor<1x8x16x64xf32>, %v: tensor<1x4x16x64xf32>) {
  // expected-error @+1 {{key and value head counts differ}}
  %0 = tfc.attention %q, %k, %v : (tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x4x16x64xf32>) -> tensor<1x8x16x64xf32>
  return
}

// -----

func.func @attention_batch(%q: tensor<2x8x16x64xf32>, %k: tensor<3x8x16x64xf32>) {
  // expected-error @+1 {{batch sizes differ}}
  %0 = tfc.attention %q, %k, %k : (tensor<2x8x16x64xf32>, tensor<3x8x16x64xf32>, tensor<3x8x16x64xf32>) -> tensor<2x8x16x64xf32>
  return
}

// -----

func.func @attention_element_types(%q: tensor<1x8x16x64xf16>, %k: tensor<1x8x16x64xf32>) {
  // expected-error @+1 {{query, key and value element types differ: 'f16', 'f32', 'f32'}}
  %0 = tfc.attention %q, %k, %k : (tensor<1x8x16x64xf16>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>) -> tensor<1x8x16x64xf16>
  return
}

// -----

// Keys and values may be f16 under an f32 query (a half-precision KV cache),
// but both of them.
func.func @attention_half_key_only(%q: tensor<1x8x16x64xf32>, %k: tensor<1x8x16x64xf16>) {
  // expected-error @+1 {{query, key and value element types differ: 'f32', 'f16', 'f32' (key and value may differ from the query only as f16 under an f32 query)}}
  %0 = tfc.attention %q, %k, %q : (tensor<1x8x16x64xf32>, tensor<1x8x16x64xf16>, tensor<1x8x16x64xf32>) -> tensor<1x8x16x64xf32>
  return
}

// -----

func.func @attention_bf16_cache(%q: tensor<1x8x16x64xf32>, %k: tensor<1x8x16x64xbf16>) {
  // expected-error @+1 {{query, key and value element types differ: 'f32', 'bf16', 'bf16'}}
  %0 = tfc.attention %q, %k, %k : (tensor<1x8x16x64xf32>, tensor<1x8x16x64xbf16>, tensor<1x8x16x64xbf16>) -> tensor<1x8x16x64xf32>
  return
}

// -----

func.func @attention_result(%q: tensor<1x8x16x64xf32>) {
  // expected-error @+1 {{'tfc.attention' op result type 'tensor<1x8x16x32xf32>' does not match the inferred type 'tensor<1x8x16x64xf32>'}}
  %0 = tfc.attention %q, %q, %q : (tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>) -> tensor<1x8x16x32xf32>
  return
}

// -----

func.func @attention_scale(%q: tensor<1x8x16x64xf32>) {
  // expected-error @+1 {{'tfc.attention' op scale must be finite and > 0, got -0.5}}
  %0 = tfc.attention %q, %q, %q {scale = -0.5} : (tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>) -> tensor<1x8x16x64xf32>
  return
}

// -----

func.func @attention_dynamic_head_needs_scale(%q: tensor<1x8x16x?xf32>) {
  // expected-error @+1 {{'tfc.attention' op needs an explicit scale: the head size of query [1, 8, 16, ?] is dynamic}}
  %0 = tfc.attention %q, %q, %q : (tensor<1x8x16x?xf32>, tensor<1x8x16x?xf32>, tensor<1x8x16x?xf32>) -> tensor<1x8x16x?xf32>
  return
}

// -----

func.func @attention_mask_shape(%q: tensor<2x8x16x64xf32>, %k: tensor<2x8x32x64xf32>, %m: tensor<2x1x1x16xf32>) {
  // expected-error @+1 {{'tfc.attention' op mask [2, 1, 1, 16] does not broadcast to the scores [batch, heads, q_len, kv_len] = [2, 8, 16, 32]}}
  %0 = tfc.attention %q, %k, %k mask(%m) : (tensor<2x8x16x64xf32>, tensor<2x8x32x64xf32>, tensor<2x8x32x64xf32>, tensor<2x1x1x16xf32>) -> tensor<2x8x16x64xf32>
  return
}

// -----

func.func @attention_mask_rank(%q: tensor<2x8x16x64xf32>, %m: tensor<1x2x1x1x16xf32>) {
  // expected-error @+1 {{'tfc.attention' op mask [1, 2, 1, 1, 16] does not broadcast to the scores}}
  %0 = tfc.attention %q, %q, %q mask(%m) : (tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<1x2x1x1x16xf32>) -> tensor<2x8x16x64xf32>
  return
}

// -----

func.func @attention_mask_type(%q: tensor<2x8x16x64xf32>, %m: tensor<2x1x1x16xf16>) {
  // expected-error @+1 {{'tfc.attention' op mask element type 'f16' differs from the query's 'f32'}}
  %0 = tfc.attention %q, %q, %q mask(%m) : (tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x1x1x16xf16>) -> tensor<2x8x16x64xf32>
  return
}

// -----

func.func @gelu_approximation(%x: tensor<4xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'approximation' [erf, tanh]}}
  %0 = tfc.gelu sigmoid %x : tensor<4xf32>
  return
}

// -----

func.func @rope_rank(%x: tensor<64xf32>) {
  // expected-error @+1 {{'tfc.rope' op input must be [..., seq, features], got [64]}}
  %0 = tfc.rope adjacent %x : tensor<64xf32>
  return
}

// -----

func.func @rope_odd(%x: tensor<?x?x63xf32>) {
  // expected-error @+1 {{'tfc.rope' op feature size 63 must be even}}
  %0 = tfc.rope adjacent %x : tensor<?x?x63xf32>
  return
}

// -----

func.func @rope_rotary_dim_odd(%x: tensor<?x?x64xf32>) {
  // expected-error @+1 {{'tfc.rope' op rotary_dim 15 must be even}}
  %0 = tfc.rope rotate_half %x {rotary_dim = 15} : tensor<?x?x64xf32>
  return
}

// -----

func.func @rope_rotary_dim_large(%x: tensor<?x?x64xf32>) {
  // expected-error @+1 {{'tfc.rope' op rotary_dim 128 exceeds the feature size 64}}
  %0 = tfc.rope rotate_half %x {rotary_dim = 128} : tensor<?x?x64xf32>
  return
}

// -----

func.func @rope_base(%x: tensor<?x?x64xf32>) {
  // expected-error @+1 {{'tfc.rope' op base must be finite and > 1, got 0.5}}
  %0 = tfc.rope rotate_half %x {base = 0.5} : tensor<?x?x64xf32>
  return
}

// -----

func.func @sinusoidal_dynamic_features(%n: index) {
  // expected-error @+1 {{'tfc.sinusoidal_positions' op result must be [seq, features] with a static feature size, got [?, ?]}}
  %0 = tfc.sinusoidal_positions %n : tensor<?x?xf32>
  return
}

// -----

func.func @sinusoidal_base(%n: index) {
  // expected-error @+1 {{'tfc.sinusoidal_positions' op base must be finite and > 1, got 1}}
  %0 = tfc.sinusoidal_positions %n {base = 1.0} : tensor<?x512xf32>
  return
}

// -----

func.func @causal_mask_rank(%n: index) {
  // expected-error @+1 {{'tfc.causal_mask' op result must be [q_len, kv_len], got [1, ?, ?]}}
  %0 = tfc.causal_mask %n, %n : tensor<1x?x?xf32>
  return
}

// -----

func.func @padding_mask_input(%m: tensor<?xi64>) {
  // expected-error @+1 {{'tfc.padding_mask' op input must be [batch, kv_len], got [?]}}
  %0 = tfc.padding_mask %m : tensor<?xi64> -> tensor<?x1x1x?xf32>
  return
}

// -----

func.func @padding_mask_result(%m: tensor<2x16xi64>) {
  // expected-error @+1 {{'tfc.padding_mask' op result must be [batch, 1, 1, kv_len] = [2, 1, 1, 16], got [2, 16]}}
  %0 = tfc.padding_mask %m : tensor<2x16xi64> -> tensor<2x16xf32>
  return
}

// -----

func.func @split_heads_divisible(%x: tensor<?x?x768xf32>) {
  // expected-error @+1 {{'tfc.split_heads' op features 768 are not divisible by 10 heads}}
  %0 = tfc.split_heads %x {heads = 10} : tensor<?x?x768xf32> -> tensor<?x10x?x76xf32>
  return
}

// -----

func.func @split_heads_rank(%x: tensor<?x768xf32>) {
  // expected-error @+1 {{'tfc.split_heads' op needs [batch, seq, features], got [?, 768]}}
  %0 = tfc.split_heads %x {heads = 12} : tensor<?x768xf32> -> tensor<?x12x64xf32>
  return
}

// -----

func.func @split_heads_zero(%x: tensor<?x?x768xf32>) {
  // expected-error @+1 {{attribute 'heads' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = tfc.split_heads %x {heads = 0} : tensor<?x?x768xf32> -> tensor<?x0x?x0xf32>
  return
}

// -----

func.func @merge_heads_rank(%x: tensor<?x12x64xf32>) {
  // expected-error @+1 {{'tfc.merge_heads' op needs [batch, heads, seq, d_head], got [?, 12, 64]}}
  %0 = tfc.merge_heads %x : tensor<?x12x64xf32> -> tensor<?x768xf32>
  return
}

// -----

func.func @merge_heads_result(%x: tensor<?x12x?x64xf32>) {
  // expected-error @+1 {{'tfc.merge_heads' op result type 'tensor<?x?x512xf32>' does not match the inferred type 'tensor<?x?x768xf32>'}}
  %0 = tfc.merge_heads %x : tensor<?x12x?x64xf32> -> tensor<?x?x512xf32>
  return
}

// -----

func.func @binary_broadcast(%a: tensor<?x3x4xf32>, %b: tensor<5xf32>) {
  // expected-error @+1 {{'tfc.add' op operand shapes [?, 3, 4] and [5] do not broadcast}}
  %0 = tfc.add %a, %b : (tensor<?x3x4xf32>, tensor<5xf32>) -> tensor<?x3x4xf32>
  return
}

// -----

func.func @binary_result(%a: tensor<?x3x4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'tfc.mul' op result type 'tensor<?x3x5xf32>' does not match the inferred type 'tensor<?x3x4xf32>'}}
  %0 = tfc.mul %a, %b : (tensor<?x3x4xf32>, tensor<4xf32>) -> tensor<?x3x5xf32>
  return
}

// -----

func.func @binary_element_types(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{'tfc.sub' op requires the same element type for all operands}}
  %0 = tfc.sub %a, %b : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return
}

// -----

func.func @binary_integer(%a: tensor<4xi32>) {
  // expected-error @+1 {{'tfc.div' op operand #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %0 = tfc.div %a, %a : tensor<4xi32>
  return
}

// -----

func.func @binary_type_arity(%a: tensor<4xf32>) {
  // expected-error @+1 {{expected a type `(2 operand types) -> result type`, got '(tensor<4xf32>) -> tensor<4xf32>'}}
  %0 = tfc.max %a, %a : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @unary_type(%a: tensor<4xf32>) {
  // expected-error @+1 {{'tfc.exp' op requires the same type for all operands and results}}
  %0 = "tfc.exp"(%a) : (tensor<4xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @where_condition(%c: tensor<4xf32>, %a: tensor<4xf32>) {
  // expected-error @+1 {{'tfc.where' op operand #0 must be ranked tensor of 1-bit signless integer values}}
  %0 = tfc.where %c, %a, %a : tensor<4xf32>
  return
}

// -----

func.func @where_branches(%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{'tfc.where' op on_true and on_false element types differ: 'f32' vs 'f16'}}
  %0 = tfc.where %c, %a, %b : (tensor<4xi1>, tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return
}

// -----

func.func @where_broadcast(%c: tensor<3xi1>, %a: tensor<4xf32>) {
  // expected-error @+1 {{'tfc.where' op operand shapes [3] and [4] do not broadcast}}
  %0 = tfc.where %c, %a, %a : (tensor<3xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @cast_shape(%a: tensor<4xi64>) {
  // expected-error @+1 {{'tfc.cast' op changes the shape [4] to [5]; a cast only converts the element type}}
  %0 = tfc.cast %a : tensor<4xi64> to tensor<5xf32>
  return
}

// -----

func.func @reduction_axis(%x: tensor<?x768xf32>) {
  // expected-error @+1 {{'tfc.reduce_sum' op axis 2 is out of range for [?, 768]}}
  %0 = tfc.reduce_sum %x {axis = 2} : tensor<?x768xf32> -> tensor<?xf32>
  return
}

// -----

func.func @reduction_keepdim(%x: tensor<?x768xf32>) {
  // expected-error @+1 {{'tfc.reduce_mean' op result type 'tensor<?xf32>' does not match the inferred type 'tensor<?x1xf32>'}}
  %0 = tfc.reduce_mean %x {axis = 1, keepdim} : tensor<?x768xf32> -> tensor<?xf32>
  return
}

// -----

func.func @argmax_result(%x: tensor<?x768xf32>) {
  // expected-error @+1 {{'tfc.argmax' op result #0 must be ranked tensor of 64-bit signless integer values}}
  %0 = tfc.argmax %x {axis = 1} : tensor<?x768xf32> -> tensor<?xi32>
  return
}

// -----

func.func @transpose_not_permutation(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'tfc.transpose' op [0, 0, 1] is not a permutation of 0..2}}
  %0 = tfc.transpose %x [0, 0, 1] : tensor<2x3x4xf32> -> tensor<2x2x3xf32>
  return
}

// -----

func.func @transpose_length(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'tfc.transpose' op permutation has 2 entries but the input [2, 3, 4] has rank 3}}
  %0 = tfc.transpose %x [1, 0] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  return
}

// -----

func.func @transpose_result(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'tfc.transpose' op result type 'tensor<2x3x4xf32>' does not match the inferred type 'tensor<3x2x4xf32>'}}
  %0 = tfc.transpose %x [1, 0, 2] : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  return
}

// -----

func.func @reshape_sizes(%x: tensor<?x768xf32>, %n: index) {
  // expected-error @+1 {{'tfc.reshape' op result type has 2 dynamic sizes but 1 size operands were given}}
  %0 = tfc.reshape %x [%n] : tensor<?x768xf32> -> tensor<?x?x64xf32>
  return
}

// -----

func.func @reshape_elements(%x: tensor<2x768xf32>) {
  // expected-error @+1 {{'tfc.reshape' op cannot reshape [2, 768] (1536 elements) to [2, 12, 32] (768 elements)}}
  %0 = tfc.reshape %x : tensor<2x768xf32> -> tensor<2x12x32xf32>
  return
}

// -----

func.func @reshape_element_type(%x: tensor<2x768xf32>) {
  // expected-error @+1 {{'tfc.reshape' op failed to verify that all of {input, result} have same element type}}
  %0 = tfc.reshape %x : tensor<2x768xf32> -> tensor<2x768xf16>
  return
}

// -----

func.func @weight_dynamic() {
  // expected-error @+1 {{'tfc.weight' op weight 'h.0.w' must have a static shape, got [?, 768]}}
  %0 = tfc.weight "h.0.w" : tensor<?x768xf32>
  return
}

// -----

func.func @weight_quant_format() {
  // expected-error @+1 {{'tfc.weight' op unknown quantised format 'iq4_xs' (expected q8_0, q4_0, q4_1, q5_0, q5_1, q2_k, q3_k, q4_k, q5_k or q6_k)}}
  %0 = tfc.weight "w" {quant = "iq4_xs"} : tensor<8x64xf32>
  return
}

// -----

func.func @weight_quant_superblock() {
  // expected-error @+1 {{'tfc.weight' op a q5_k weight's last dim must be a multiple of 256, got [8, 64]}}
  %0 = tfc.weight "w" {quant = "q5_k"} : tensor<8x64xf32>
  return
}

// -----

func.func @weight_quant_k() {
  // expected-error @+1 {{'tfc.weight' op a q4_1 weight's last dim must be a multiple of 32, got [8, 48]}}
  %0 = tfc.weight "w" {quant = "q4_1"} : tensor<8x48xf32>
  return
}

// -----

func.func @weight_quant_raw() {
  // expected-error @+1 {{'tfc.weight' op the raw form of a q8_0 weight is [..., blocks, 34] i8, got [8, 2, 20]}}
  %0 = tfc.weight "w" {quant = "q8_0"} : tensor<8x2x20xi8>
  return
}

// -----

func.func @weight_quant_dtype() {
  // expected-error @+1 {{'tfc.weight' op a q8_0 weight is f32 (its values) or i8 (its blocks), got 'f16'}}
  %0 = tfc.weight "w" {quant = "q8_0"} : tensor<8x64xf16>
  return
}

// -----

func.func @weight_empty_name() {
  // expected-error @+1 {{'tfc.weight' op name must not be empty}}
  %0 = tfc.weight "" : tensor<768xf32>
  return
}

// -----

func.func @arange_rank(%t: index) {
  // expected-error @+1 {{'tfc.arange' op result must be [length], got [?, 2]}}
  %0 = tfc.arange %t : tensor<?x2xi64>
  return
}

// -----

func.func @slice_bounds(%x: tensor<?x?x2304xf32>) {
  // expected-error @+1 {{'tfc.slice' op slice of size 768 at 2000 is out of bounds for axis 2 of [?, ?, 2304]}}
  %0 = tfc.slice %x {axis = 2, start = 2000, size = 768} : tensor<?x?x2304xf32> -> tensor<?x?x768xf32>
  return
}

// -----

func.func @slice_dynamic_axis(%x: tensor<?x?x2304xf32>) {
  // expected-error @+1 {{'tfc.slice' op result type 'tensor<?x2x2304xf32>' does not match the inferred type 'tensor<?x1x2304xf32>'}}
  %0 = tfc.slice %x {axis = 1, start = 0, size = 1} : tensor<?x?x2304xf32> -> tensor<?x2x2304xf32>
  return
}

// -----

func.func @slice_axis(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'tfc.slice' op axis 2 is out of range for [4, 8]}}
  %0 = tfc.slice %x {axis = 2, start = 0, size = 1} : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @concat_mismatch(%a: tensor<4x8xf32>, %b: tensor<4x6xf32>) {
  // expected-error @+1 {{'tfc.concat' op inputs differ in dim 1 (not the concatenated axis): 'tensor<4x8xf32>' and 'tensor<4x6xf32>'}}
  %0 = tfc.concat %a, %b {axis = 0} : (tensor<4x8xf32>, tensor<4x6xf32>) -> tensor<8x8xf32>
  return
}

// -----

func.func @concat_result(%a: tensor<4x8xf32>, %b: tensor<2x8xf32>) {
  // expected-error @+1 {{'tfc.concat' op result type 'tensor<7x8xf32>' differs from the inferred 'tensor<6x8xf32>'}}
  %0 = tfc.concat %a, %b {axis = 0} : (tensor<4x8xf32>, tensor<2x8xf32>) -> tensor<7x8xf32>
  return
}

// -----

func.func @concat_axis(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{'tfc.concat' op axis 2 is out of range for rank 2}}
  %0 = tfc.concat %a {axis = 2} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @norm_residual(%x: tensor<2x8xf32>, %r: tensor<2x4xf32>) {
  // expected-error @+1 {{'tfc.layer_norm' op residual type 'tensor<2x4xf32>' differs from the input type 'tensor<2x8xf32>'}}
  %0 = tfc.layer_norm %x residual(%r) : (tensor<2x8xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @rope_freq_scale_size(%x: tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32> {
  // expected-error @+1 {{'tfc.rope' op freq_scale has 3 entries, expected one per rotated pair (4)}}
  %0 = tfc.rope rotate_half %x {freq_scale = array<f64: 1.0, 0.5, 0.25>} : tensor<1x2x3x8xf32>
  return %0 : tensor<1x2x3x8xf32>
}

// -----

func.func @rope_freq_scale_value(%x: tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32> {
  // expected-error @+1 {{'tfc.rope' op freq_scale entries must be finite and > 0, got 0}}
  %0 = tfc.rope rotate_half %x {rotary_dim = 4, freq_scale = array<f64: 1.0, 0.0>} : tensor<1x2x3x8xf32>
  return %0 : tensor<1x2x3x8xf32>
}

// -----

// A size the operands determine is never declared `?` (the lowerings build
// results from the operands' sizes): the former XFAIL cases 1-3, 5 and 6 of
// test/Conversion/XFAIL-notes.md.
func.func @less_refined_add(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'tfc.add' op result type 'tensor<?xf32>' is less refined than the inferred type 'tensor<4xf32>' (dim 0); declare the inferred type and tensor.cast it}}
  %0 = tfc.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<?xf32>
  return
}

// -----

func.func @less_refined_slice(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{'tfc.slice' op result type 'tensor<?x2xf32>' is less refined than the inferred type 'tensor<4x2xf32>' (dim 0)}}
  %0 = tfc.slice %a {axis = 1, start = 2, size = 2} : tensor<4x8xf32> -> tensor<?x2xf32>
  return
}

// -----

func.func @less_refined_reduction(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{'tfc.reduce_sum' op result type 'tensor<?x1xf32>' is less refined than the inferred type 'tensor<4x1xf32>' (dim 0)}}
  %0 = tfc.reduce_sum %a {axis = 1, keepdim} : tensor<4x8xf32> -> tensor<?x1xf32>
  return
}

// -----

func.func @less_refined_linear(%x: tensor<?x64xf32>, %w: tensor<40x64xf32>) {
  // expected-error @+1 {{'tfc.linear' op result type 'tensor<?x?xf32>' is less refined than the inferred type 'tensor<?x40xf32>' (dim 1)}}
  %0 = tfc.linear %x, %w : (tensor<?x64xf32>, tensor<40x64xf32>) -> tensor<?x?xf32>
  return
}

// -----

func.func @less_refined_matmul(%a: tensor<4x8x16xf32>, %b: tensor<16x32xf32>) {
  // expected-error @+1 {{'tfc.matmul' op result type 'tensor<?x8x32xf32>' is less refined than the inferred type 'tensor<4x8x32xf32>' (dim 0)}}
  %0 = tfc.matmul %a, %b : (tensor<4x8x16xf32>, tensor<16x32xf32>) -> tensor<?x8x32xf32>
  return
}

// -----

// The target of a module's kernels is a typed attribute on the module.
// expected-error @+1 {{'tfc.target' must be #tfc.target<cpu> or #tfc.target<cuda>, got "cuda"}}
module attributes {tfc.target = "cuda"} {
}
