// Attention over 8192 positions (1 batch, 2 heads, d 64) with each relative
// position scheme: T5's bias by distance (bidirectional, from a [32, 2]
// table) and ALiBi (causal).
module attributes {tfc.model = "position_bias_8192"} {
  func.func @t5(%q: tensor<1x2x?x64xf32> {tfc.name = "q", tfc.dims = [1, 2, "seq", 64]},
                %k: tensor<1x2x?x64xf32> {tfc.name = "k", tfc.dims = [1, 2, "seq", 64]},
                %v: tensor<1x2x?x64xf32> {tfc.name = "v", tfc.dims = [1, 2, "seq", 64]})
      -> (tensor<1x2x?x64xf32> {tfc.name = "out"}) {
    %table = tfc.weight "relative_attention_bias.weight" : tensor<32x2xf32>
    %bias = tfc.relative_position_bias %table {num_buckets = 32 : i64, max_distance = 128 : i64, bidirectional} : tensor<32x2xf32> -> tensor<2x257xf32>
    %0 = tfc.attention %q, %k, %v relative_bias(%bias) {scale = 1.0 : f64} : (tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32>, tensor<2x257xf32>) -> tensor<1x2x?x64xf32>
    return %0 : tensor<1x2x?x64xf32>
  }
  func.func @alibi(%q: tensor<1x2x?x64xf32> {tfc.name = "q", tfc.dims = [1, 2, "seq", 64]},
                   %k: tensor<1x2x?x64xf32> {tfc.name = "k", tfc.dims = [1, 2, "seq", 64]},
                   %v: tensor<1x2x?x64xf32> {tfc.name = "v", tfc.dims = [1, 2, "seq", 64]})
      -> (tensor<1x2x?x64xf32> {tfc.name = "out"}) {
    %0 = tfc.attention %q, %k, %v {causal, alibi = 8.0 : f64} : (tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32>) -> tensor<1x2x?x64xf32>
    return %0 : tensor<1x2x?x64xf32>
  }
}
