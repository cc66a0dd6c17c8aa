// Half-precision kernels of the CUDA backend, for test/E2E/GPU/half.test:
// flash attention on f16 (causal, grouped-query) and a tensor-core linear on
// bf16 with a fused bias and GELU.
module attributes {tfc.model = "half"} {
  func.func @attention(%q: tensor<?x8x?x64xf16> {tfc.name = "q", tfc.dims = ["batch", 8, "seq", 64]},
                       %k: tensor<?x2x?x64xf16> {tfc.name = "k", tfc.dims = ["batch", 2, "seq", 64]},
                       %v: tensor<?x2x?x64xf16> {tfc.name = "v", tfc.dims = ["batch", 2, "seq", 64]})
      -> (tensor<?x8x?x64xf16> {tfc.name = "o"}) {
    %o = tfc.attention %q, %k, %v {causal}
        : (tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16>) -> tensor<?x8x?x64xf16>
    return %o : tensor<?x8x?x64xf16>
  }
  func.func @proj(%x: tensor<?x?x256xf16> {tfc.name = "x", tfc.dims = ["batch", "seq", 256]})
      -> (tensor<?x?x384xf32> {tfc.name = "y"}) {
    // f32 in the file; the bf16 copies are derived constants made at load.
    %w32 = tfc.weight "proj.weight" : tensor<384x256xf32>
    %b32 = tfc.weight "proj.bias" : tensor<384xf32>
    %w = tfc.cast %w32 : tensor<384x256xf32> to tensor<384x256xbf16>
    %b = tfc.cast %b32 : tensor<384xf32> to tensor<384xbf16>
    %xb = tfc.cast %x : tensor<?x?x256xf16> to tensor<?x?x256xbf16>
    %h = tfc.linear %xb, %w, %b activation(gelu_tanh)
        : (tensor<?x?x256xbf16>, tensor<384x256xbf16>, tensor<384xbf16>) -> tensor<?x?x384xbf16>
    %y = tfc.cast %h : tensor<?x?x384xbf16> to tensor<?x?x384xf32>
    return %y : tensor<?x?x384xf32>
  }
}
