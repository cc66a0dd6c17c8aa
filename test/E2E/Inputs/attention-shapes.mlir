// Attention with sizes off every kernel's tiles, for the CPU's micro-kernels
// (decode: <= 4 query rows; prefill: one chunk for <= 1024 keys, more past):
// grouped-query heads with a window over a causal diagonal shifted by
// tk - tq, a per-key mask, ALiBi, query and key counts that differ, head
// widths (40, 24, 20) that are no multiple of a vector or of a register
// tile's columns (V 40 wide: one tile of 32 and a tail of 8 on AVX-512).
module attributes {tfc.model = "attention_shapes"} {
  func.func @gqa_window(%q: tensor<1x6x?x40xf32> {tfc.name = "q", tfc.dims = [1, 6, "tq", 40]},
                        %k: tensor<1x2x?x40xf32> {tfc.name = "k", tfc.dims = [1, 2, "tk", 40]},
                        %v: tensor<1x2x?x24xf32> {tfc.name = "v", tfc.dims = [1, 2, "tk", 24]})
      -> (tensor<1x6x?x24xf32> {tfc.name = "out"}) {
    %0 = tfc.attention %q, %k, %v {causal, window = 9 : i64, scale = 0.2 : f64} : (tensor<1x6x?x40xf32>, tensor<1x2x?x40xf32>, tensor<1x2x?x24xf32>) -> tensor<1x6x?x24xf32>
    return %0 : tensor<1x6x?x24xf32>
  }
  func.func @masked(%q: tensor<2x3x?x20xf32> {tfc.name = "q", tfc.dims = [2, 3, "tq", 20]},
                    %k: tensor<2x3x?x20xf32> {tfc.name = "k", tfc.dims = [2, 3, "tk", 20]},
                    %v: tensor<2x3x?x20xf32> {tfc.name = "v", tfc.dims = [2, 3, "tk", 20]},
                    %m: tensor<2x1x1x?xf32> {tfc.name = "mask", tfc.dims = [2, 1, 1, "tk"]})
      -> (tensor<2x3x?x20xf32> {tfc.name = "out"}) {
    %0 = tfc.attention %q, %k, %v mask(%m) {scale = 0.5 : f64} : (tensor<2x3x?x20xf32>, tensor<2x3x?x20xf32>, tensor<2x3x?x20xf32>, tensor<2x1x1x?xf32>) -> tensor<2x3x?x20xf32>
    return %0 : tensor<2x3x?x20xf32>
  }
  func.func @alibi_wide(%q: tensor<1x4x?x64xf32> {tfc.name = "q", tfc.dims = [1, 4, "tq", 64]},
                        %k: tensor<1x4x?x64xf32> {tfc.name = "k", tfc.dims = [1, 4, "tk", 64]},
                        %v: tensor<1x4x?x40xf32> {tfc.name = "v", tfc.dims = [1, 4, "tk", 40]})
      -> (tensor<1x4x?x40xf32> {tfc.name = "out"}) {
    %0 = tfc.attention %q, %k, %v {causal, alibi = 8.0 : f64, scale = 0.125 : f64} : (tensor<1x4x?x64xf32>, tensor<1x4x?x64xf32>, tensor<1x4x?x40xf32>) -> tensor<1x4x?x40xf32>
    return %0 : tensor<1x4x?x40xf32>
  }
}
