// The row kernels on their own (test/E2E/row-kernels*.test): softmax over
// rows of any length, LayerNorm with a residual over 300 features (a masked
// tail of 12 lanes).
module attributes {tfc.model = "row_kernels"} {
  func.func @softmax(%s: tensor<?x?xf32> {tfc.name = "s", tfc.dims = ["rows", "cols"]})
      -> (tensor<?x?xf32> {tfc.name = "out"}) {
    %0 = tfc.softmax %s {axis = 1 : i64} : tensor<?x?xf32>
    return %0 : tensor<?x?xf32>
  }
  func.func @layer_norm(%x: tensor<?x300xf32> {tfc.name = "x", tfc.dims = ["rows", 300]},
                        %r: tensor<?x300xf32> {tfc.name = "r", tfc.dims = ["rows", 300]})
      -> (tensor<?x300xf32> {tfc.name = "out"}) {
    %g = tfc.weight "gamma" : tensor<300xf32>
    %b = tfc.weight "beta" : tensor<300xf32>
    %0 = tfc.layer_norm %x scale(%g) bias(%b) residual(%r) {epsilon = 1.0e-5 : f64} : (tensor<?x300xf32>, tensor<300xf32>, tensor<300xf32>, tensor<?x300xf32>) -> tensor<?x300xf32>
    return %0 : tensor<?x300xf32>
  }
}
