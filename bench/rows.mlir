// The row kernels and elementwise code of bench/rows_bench.py, alone: each
// entry one op over rows of any count, at BERT-base's sizes (hidden 768,
// FFN 3072, 12 heads).
module attributes {tfc.model = "rows_bench"} {
  // BERT's residual add and LayerNorm: LN(x + r) · gamma + beta.
  func.func @layer_norm(%x: tensor<?x768xf32> {tfc.name = "x", tfc.dims = ["rows", 768]},
                        %r: tensor<?x768xf32> {tfc.name = "r", tfc.dims = ["rows", 768]},
                        %g: tensor<768xf32> {tfc.name = "gamma", tfc.dims = [768]},
                        %b: tensor<768xf32> {tfc.name = "beta", tfc.dims = [768]})
      -> (tensor<?x768xf32> {tfc.name = "out"}) {
    %0 = tfc.layer_norm %x scale(%g) bias(%b) residual(%r) {epsilon = 1.0e-12 : f64} : (tensor<?x768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<?x768xf32>) -> tensor<?x768xf32>
    return %0 : tensor<?x768xf32>
  }
  // LLaMA's residual add and RMSNorm: x / rms(x + r) · gamma.
  func.func @rms_norm(%x: tensor<?x768xf32> {tfc.name = "x", tfc.dims = ["rows", 768]},
                      %r: tensor<?x768xf32> {tfc.name = "r", tfc.dims = ["rows", 768]},
                      %g: tensor<768xf32> {tfc.name = "gamma", tfc.dims = [768]})
      -> (tensor<?x768xf32> {tfc.name = "out"}) {
    %0 = tfc.rms_norm %x scale(%g) residual(%r) {epsilon = 1.0e-6 : f64} : (tensor<?x768xf32>, tensor<768xf32>, tensor<?x768xf32>) -> tensor<?x768xf32>
    return %0 : tensor<?x768xf32>
  }
  // Attention scores' softmax when attention is not fused: 12 heads of
  // rows x rows.
  func.func @softmax(%s: tensor<12x?x?xf32> {tfc.name = "s", tfc.dims = [12, "rows", "rows"]})
      -> (tensor<12x?x?xf32> {tfc.name = "out"}) {
    %0 = tfc.softmax %s {axis = 2 : i64} : tensor<12x?x?xf32>
    return %0 : tensor<12x?x?xf32>
  }
  // The FFN's activation alone (in the models it is a GEMM epilogue).
  func.func @gelu(%h: tensor<?x3072xf32> {tfc.name = "h", tfc.dims = ["rows", 3072]})
      -> (tensor<?x3072xf32> {tfc.name = "out"}) {
    %0 = tfc.gelu erf %h : tensor<?x3072xf32>
    return %0 : tensor<?x3072xf32>
  }
}
