// Head sizes the GPU attention kernel's static shared tiles cannot hold are
// a compile error at the op, not a failure in ptxas or at run time.
// REQUIRES: libdevice
// RUN: not tfc-compile %s --target=cuda --emit=ptx -o /dev/null 2>&1 | FileCheck %s

module attributes {tfc.target = #tfc.target<cuda>, tfc.model = "attn"} {
  // CHECK: error: the GPU attention kernel needs static head sizes of at most 128
  func.func @wide(%q: tensor<?x2x?x256xf32> {tfc.name = "q", tfc.dims = ["b", 2, "t", 256]})
      -> (tensor<?x2x?x256xf32> {tfc.name = "o"}) {
    %o = tfc.attention %q, %q, %q
        : (tensor<?x2x?x256xf32>, tensor<?x2x?x256xf32>, tensor<?x2x?x256xf32>) -> tensor<?x2x?x256xf32>
    return %o : tensor<?x2x?x256xf32>
  }
}
