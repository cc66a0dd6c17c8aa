// The attention of bench/attention_bench.py: 12 heads of 64 at any length,
// as BERT runs it (a [1, 1, 1, seq] additive padding mask) and as GPT-2
// does (causal).
module attributes {tfc.model = "attention_bench"} {
  func.func @padded(%q: tensor<1x12x?x64xf32> {tfc.name = "q", tfc.dims = [1, 12, "seq", 64]},
                    %k: tensor<1x12x?x64xf32> {tfc.name = "k", tfc.dims = [1, 12, "seq", 64]},
                    %v: tensor<1x12x?x64xf32> {tfc.name = "v", tfc.dims = [1, 12, "seq", 64]},
                    %m: tensor<1x1x1x?xf32> {tfc.name = "mask", tfc.dims = [1, 1, 1, "seq"]})
      -> (tensor<1x12x?x64xf32> {tfc.name = "out"}) {
    %0 = tfc.attention %q, %k, %v mask(%m) {scale = 0.125 : f64} : (tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x1x1x?xf32>) -> tensor<1x12x?x64xf32>
    return %0 : tensor<1x12x?x64xf32>
  }
  func.func @causal(%q: tensor<1x12x?x64xf32> {tfc.name = "q", tfc.dims = [1, 12, "seq", 64]},
                    %k: tensor<1x12x?x64xf32> {tfc.name = "k", tfc.dims = [1, 12, "seq", 64]},
                    %v: tensor<1x12x?x64xf32> {tfc.name = "v", tfc.dims = [1, 12, "seq", 64]})
      -> (tensor<1x12x?x64xf32> {tfc.name = "out"}) {
    %0 = tfc.attention %q, %k, %v {causal, scale = 0.125 : f64} : (tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>) -> tensor<1x12x?x64xf32>
    return %0 : tensor<1x12x?x64xf32>
  }
}
