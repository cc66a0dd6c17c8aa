// tfc-outline-blocks refuses markers that do not pair up.
// RUN: tfc-opt %s -split-input-file --tfc-outline-blocks -verify-diagnostics

func.func @unopened() {
  // expected-error @+1 {{tfc.block_end "a" without its tfc.block_begin}}
  tfc.block_end "a"
  return
}

// -----

func.func @crossed() {
  tfc.block_begin "a"
  // expected-error @+1 {{tfc.block_end "b" closes tfc.block_begin "a"}}
  tfc.block_end "b"
  return
}

// -----

func.func @unclosed() {
  // expected-error @+1 {{tfc.block_begin "a" without its tfc.block_end}}
  tfc.block_begin "a"
  return
}
