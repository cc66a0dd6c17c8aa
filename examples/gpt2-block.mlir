// One pre-norm GPT-2 decoder block (d_model 768, 12 heads, d_ff 3072) in the
// tfc dialect, for any batch size and sequence length:
//
//   h = x + W_o · attention(LN1(x))     (causal, 12 heads of 64)
//   y = h + W_2 · gelu_tanh(W_1 · LN2(h))
//
// LN1 is written out with primitives, the way an exporter emits it; the
// fusion pipeline recognises it as tfc.layer_norm.
//
// Try: tfc-opt examples/gpt2-block.mlir --tfc-fusion-pipeline=remarks=true
func.func @gpt2_block(
    %x: tensor<?x?x768xf32>,
    %ln1_g: tensor<768xf32>, %ln1_b: tensor<768xf32>,
    %wq: tensor<768x768xf32>, %bq: tensor<768xf32>,
    %wk: tensor<768x768xf32>, %bk: tensor<768xf32>,
    %wv: tensor<768x768xf32>, %bv: tensor<768xf32>,
    %wo: tensor<768x768xf32>, %bo: tensor<768xf32>,
    %ln2_g: tensor<768xf32>, %ln2_b: tensor<768xf32>,
    %w1: tensor<3072x768xf32>, %b1: tensor<3072xf32>,
    %w2: tensor<768x3072xf32>, %b2: tensor<768xf32>) -> tensor<?x?x768xf32> {
  // Attention sub-block.
  %eps = arith.constant dense<1.0e-5> : tensor<f32>
  %mu = tfc.reduce_mean %x {axis = 2, keepdim} : tensor<?x?x768xf32> -> tensor<?x?x1xf32>
  %xc = tfc.sub %x, %mu : (tensor<?x?x768xf32>, tensor<?x?x1xf32>) -> tensor<?x?x768xf32>
  %sq = tfc.mul %xc, %xc : tensor<?x?x768xf32>
  %var = tfc.reduce_mean %sq {axis = 2, keepdim} : tensor<?x?x768xf32> -> tensor<?x?x1xf32>
  %ve = tfc.add %var, %eps : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
  %rstd = tfc.rsqrt %ve : tensor<?x?x1xf32>
  %xn = tfc.mul %xc, %rstd : (tensor<?x?x768xf32>, tensor<?x?x1xf32>) -> tensor<?x?x768xf32>
  %xg = tfc.mul %xn, %ln1_g : (tensor<?x?x768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
  %ln1 = tfc.add %xg, %ln1_b : (tensor<?x?x768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
  %q = tfc.linear %ln1, %wq, %bq
      : (tensor<?x?x768xf32>, tensor<768x768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
  %k = tfc.linear %ln1, %wk, %bk
      : (tensor<?x?x768xf32>, tensor<768x768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
  %v = tfc.linear %ln1, %wv, %bv
      : (tensor<?x?x768xf32>, tensor<768x768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
  %qh = tfc.split_heads %q {heads = 12} : tensor<?x?x768xf32> -> tensor<?x12x?x64xf32>
  %kh = tfc.split_heads %k {heads = 12} : tensor<?x?x768xf32> -> tensor<?x12x?x64xf32>
  %vh = tfc.split_heads %v {heads = 12} : tensor<?x?x768xf32> -> tensor<?x12x?x64xf32>
  %att = tfc.attention %qh, %kh, %vh {causal}
      : (tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>) -> tensor<?x12x?x64xf32>
  %merged = tfc.merge_heads %att : tensor<?x12x?x64xf32> -> tensor<?x?x768xf32>
  %proj = tfc.linear %merged, %wo, %bo
      : (tensor<?x?x768xf32>, tensor<768x768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
  %h = tfc.add %x, %proj : tensor<?x?x768xf32>

  // Feed-forward sub-block. The residual is written with a redundant
  // multiplication by one, which canonicalisation removes.
  %ln2 = tfc.layer_norm %h scale(%ln2_g) bias(%ln2_b)
      : (tensor<?x?x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
  %up = tfc.linear %ln2, %w1, %b1
      : (tensor<?x?x768xf32>, tensor<3072x768xf32>, tensor<3072xf32>) -> tensor<?x?x3072xf32>
  %act = tfc.gelu tanh %up : tensor<?x?x3072xf32>
  %down = tfc.linear %act, %w2, %b2
      : (tensor<?x?x3072xf32>, tensor<768x3072xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %res = tfc.mul %h, %one : (tensor<?x?x768xf32>, tensor<f32>) -> tensor<?x?x768xf32>
  %y = tfc.add %res, %down : tensor<?x?x768xf32>
  return %y : tensor<?x?x768xf32>
}
