// GEMMs with sizes off every tile of the CPU kernels (Gemm.cpp): row counts
// that leave every remainder of the 6-row (AVX-512) and 4-row (AVX2) tiles
// for the 2-row tiles and the last single row, K deeper than a k block
// (300: three blocks of 100 with a 48 KiB L1 on AVX-512; two of 150 on
// AVX2, one of 300 with a larger L1), N = 80 (a pair of 32-column panels
// and a panel left over, cut at 16 columns; 24-column panels on AVX2), bias
// and GELU in the last block's epilogue, and an activation-by-activation
// matmul (B read in place).
module attributes {tfc.model = "gemm_shapes"} {
  func.func @linear(%x: tensor<?x300xf32> {tfc.name = "x", tfc.dims = ["m", 300]})
      -> (tensor<?x80xf32> {tfc.name = "y"}) {
    %w = tfc.weight "w" : tensor<80x300xf32>
    %b = tfc.weight "b" : tensor<80xf32>
    %0 = tfc.linear %x, %w, %b activation(gelu_erf) : (tensor<?x300xf32>, tensor<80x300xf32>, tensor<80xf32>) -> tensor<?x80xf32>
    return %0 : tensor<?x80xf32>
  }
  func.func @plain(%x: tensor<?x300xf32> {tfc.name = "x", tfc.dims = ["m", 300]})
      -> (tensor<?x80xf32> {tfc.name = "y"}) {
    %w = tfc.weight "w" : tensor<80x300xf32>
    %0 = tfc.linear %x, %w : (tensor<?x300xf32>, tensor<80x300xf32>) -> tensor<?x80xf32>
    return %0 : tensor<?x80xf32>
  }
  func.func @matmul(%a: tensor<?x70xf32> {tfc.name = "a", tfc.dims = ["m", 70]},
                    %b: tensor<70x?xf32> {tfc.name = "b", tfc.dims = [70, "n"]})
      -> (tensor<?x?xf32> {tfc.name = "y"}) {
    %0 = tfc.matmul %a, %b : (tensor<?x70xf32>, tensor<70x?xf32>) -> tensor<?x?xf32>
    return %0 : tensor<?x?xf32>
  }
}
