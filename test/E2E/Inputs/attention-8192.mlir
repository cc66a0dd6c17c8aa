// One causal attention over 8192 positions (1 batch, 2 heads, d 64).
module attributes {tfc.model = "attention_8192"} {
  func.func @forward(%q: tensor<1x2x?x64xf32> {tfc.name = "q", tfc.dims = [1, 2, "seq", 64]},
                     %k: tensor<1x2x?x64xf32> {tfc.name = "k", tfc.dims = [1, 2, "seq", 64]},
                     %v: tensor<1x2x?x64xf32> {tfc.name = "v", tfc.dims = [1, 2, "seq", 64]})
      -> (tensor<1x2x?x64xf32> {tfc.name = "out"}) {
    %0 = tfc.attention %q, %k, %v {causal} : (tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32>) -> tensor<1x2x?x64xf32>
    return %0 : tensor<1x2x?x64xf32>
  }
}
