// --tfc-model-abi (ModelABI.cpp): every distinct tfc.weight becomes a
// slot of the runtime's table (tfc.table_slot, a memref of the slot's
// buffer, then bufferization.to_tensor restrict); what depends
// on weights only moves into func @tfc_model_init, which writes it into a
// derived-constant slot after the weights (bufferization.materialize_in_
// destination), and the entry reads that slot instead. Each public function E
// becomes the private @__tfc_impl_E with the table as a leading !llvm.ptr,
// and the metadata JSON (sorted keys) is the module attribute tfc.abi_metadata.
// RUN: tfc-opt %s -split-input-file -verify-diagnostics --tfc-model-abi | FileCheck %s
// RUN: tfc-opt %s -split-input-file -verify-diagnostics --tfc-model-abi="cpu=znver4 features=+avx512f,+fma" | FileCheck %s --check-prefix=TARGET

// Two weights (slots 0 and 1) and a packed weight (constant slot 2).
// CHECK-LABEL: module attributes
// CHECK-SAME: tfc.abi_metadata = "{\22abi\22:1,
// CHECK-SAME: \22constants\22:[{\22align\22:64,\22bytes\22:16384}],
// CHECK-SAME: \22dims\22:[{\22max\22:128,\22name\22:\22seq\22}],
// CHECK-SAME: \22entries\22:[{\22inputs\22:[{\22bound\22:100,\22dtype\22:\22i64\22,\22name\22:\22ids\22,\22shape\22:[\22seq\22]},{\22dtype\22:\22f32\22,\22name\22:\22x\22,\22shape\22:[\22seq\22,64]}],
// CHECK-SAME: \22name\22:\22forward\22,\22outputs\22:[{\22dtype\22:\22f32\22,\22name\22:\22y\22,\22shape\22:[null,40]}],\22symbol\22:\22tfc_entry_forward\22}],
// CHECK-SAME: \22model\22:\22tiny\22,
// CHECK-SAME: \22target\22:{\22cpu\22:\22\22,\22device\22:\22cpu\22,\22features\22:\22\22,\22triple\22:\22x86_64-unknown-linux-gnu\22},
// The packed weight is read by init only (init_only); the bias by the entry.
// CHECK-SAME: \22weights\22:[{\22dtype\22:\22f32\22,\22init_only\22:true,\22name\22:\22proj.weight\22,\22shape\22:[40,64]},{\22dtype\22:\22f32\22,\22name\22:\22proj.bias\22,\22shape\22:[40]}]}"
// The release hook's caller, declared (EntryPoints.cpp defines it).
// CHECK: llvm.func @tfc_rt_release(!llvm.ptr, i64)
// TARGET: \22target\22:{\22cpu\22:\22znver4\22,\22device\22:\22cpu\22,\22features\22:\22+avx512f,+fma\22,\22triple\22:\22x86_64-unknown-linux-gnu\22}
//
// The entry: renamed, private, the table first; argument attributes gone.
// CHECK-LABEL: func.func private @__tfc_impl_forward
// CHECK-SAME: (%[[T:.*]]: !llvm.ptr, %{{.*}}: tensor<?xi64>, %[[X:.*]]: tensor<?x64xf32>) -> tensor<?x40xf32> {
// The bias: slot 1, a [40] buffer.
// CHECK: %[[BM:.*]] = tfc.table_slot %[[T]][1] : !llvm.ptr -> memref<40xf32>
// CHECK-NEXT: %[[BIAS:.*]] = bufferization.to_tensor %[[BM]] restrict : memref<40xf32> to tensor<40xf32>
// The packed weight: constant slot 2, [2, 64, 32].
// CHECK: %[[PM:.*]] = tfc.table_slot %[[T]][2] : !llvm.ptr -> memref<2x64x32xf32>
// CHECK-NEXT: %[[PACKED:.*]] = bufferization.to_tensor %[[PM]] restrict : memref<2x64x32xf32> to tensor<2x64x32xf32>
// CHECK: %[[Y:.*]] = tfc_cpu.gemm %[[X]], %[[PACKED]], %[[BIAS]]
// CHECK-NEXT: return %[[Y]]
// CHECK-NOT: tfc_cpu.pack
// CHECK-NOT: tfc.weight
//
// The initialiser: reads weight slot 0 and packs it straight into slot 2
// (its fresh destination replaced by the slot, so the store below copies
// the slot onto itself and folds away: no temporary), then hands the
// weight's 10,240 bytes to the release hook (EntryPoints.cpp defines
// @tfc_rt_release; the runtime drops their pages if they are mapped).
// CHECK-LABEL: func.func @tfc_model_init
// CHECK-SAME: (%[[IT:.*]]: !llvm.ptr) attributes {passthrough = ["noinline", "optnone"]} {
// CHECK: %[[WM:.*]] = tfc.table_slot %[[IT]][0] : !llvm.ptr -> memref<40x64xf32>
// CHECK-NEXT: %[[W:.*]] = bufferization.to_tensor %[[WM]] restrict : memref<40x64xf32> to tensor<40x64xf32>
// CHECK: %[[DST:.*]] = tfc.table_slot %[[IT]][2] : !llvm.ptr -> memref<2x64x32xf32>
// CHECK-NEXT: %[[OUT:.*]] = bufferization.to_tensor %[[DST]] restrict writable : memref<2x64x32xf32> to tensor<2x64x32xf32>
// CHECK-NEXT: %[[P:.*]] = tfc_cpu.pack %[[W]] outs(%[[OUT]]) : (tensor<40x64xf32>, tensor<2x64x32xf32>) -> tensor<2x64x32xf32>
// CHECK-NEXT: bufferization.materialize_in_destination %[[P]] in restrict writable %[[DST]] : (tensor<2x64x32xf32>, memref<2x64x32xf32>) -> ()
// CHECK-NEXT: %[[G0:.*]] = llvm.getelementptr %[[IT]][0]
// CHECK-NEXT: %[[P0:.*]] = llvm.load %[[G0]]
// CHECK-NEXT: %[[N:.*]] = llvm.mlir.constant(10240 : i64) : i64
// CHECK-NEXT: llvm.call @tfc_rt_release(%[[P0]], %[[N]]) : (!llvm.ptr, i64) -> ()
// CHECK-NEXT: return
// CHECK-NOT: func.func @forward
module attributes {tfc.model = "tiny", tfc.dim_bounds = {seq = 128 : i64}} {
  func.func @forward(%ids: tensor<?xi64> {tfc.name = "ids", tfc.dims = ["seq"], tfc.id_bound = 100 : i64},
                     %x: tensor<?x64xf32> {tfc.name = "x", tfc.dims = ["seq", 64]})
      -> (tensor<?x40xf32> {tfc.name = "y"}) {
    %w = tfc.weight "proj.weight" : tensor<40x64xf32>
    %pe = tensor.empty() : tensor<2x64x32xf32>
    %p = tfc_cpu.pack %w outs(%pe) : (tensor<40x64xf32>, tensor<2x64x32xf32>) -> tensor<2x64x32xf32>
    %b = tfc.weight "proj.bias" : tensor<40xf32>
    %c0 = arith.constant 0 : index
    %n = tensor.dim %x, %c0 : tensor<?x64xf32>
    %ye = tensor.empty(%n) : tensor<?x40xf32>
    %y = tfc_cpu.gemm %x, %p, %b outs(%ye) : (tensor<?x64xf32>, tensor<2x64x32xf32>, tensor<40xf32>, tensor<?x40xf32>) -> tensor<?x40xf32>
    return %y : tensor<?x40xf32>
  }
}

// -----

// Tied weights (one name, two ops) share slot 0. A chain of weight-only ops
// (linalg.transpose, then a pack) is hoisted as a whole and only its
// result read by the entry gets a slot (1); a weight transpose that is
// returned gets its own slot (2). Unnamed inputs and outputs get default
// names and null dims.
// CHECK-LABEL: module attributes
// CHECK-SAME: \22constants\22:[{\22align\22:64,\22bytes\22:16384},{\22align\22:64,\22bytes\22:10240}]
// CHECK-SAME: \22inputs\22:[{\22dtype\22:\22f32\22,\22name\22:\22input0\22,\22shape\22:[null,64]}]
// CHECK-SAME: \22outputs\22:[{\22dtype\22:\22f32\22,\22name\22:\22output0\22,\22shape\22:[null,40]},{\22dtype\22:\22f32\22,\22name\22:\22output1\22,\22shape\22:[40,64]}]
// CHECK-SAME: \22model\22:\22model\22
// CHECK-SAME: \22weights\22:[{\22dtype\22:\22f32\22,\22init_only\22:true,\22name\22:\22w\22,\22shape\22:[64,40]}]}"
// CHECK-LABEL: func.func private @__tfc_impl_tied
// CHECK-SAME: (%[[T:.*]]: !llvm.ptr, %[[X:.*]]: tensor<?x64xf32>) -> (tensor<?x40xf32>, tensor<40x64xf32>)
// CHECK-NOT: linalg.transpose
// CHECK-NOT: tfc_cpu.pack
// CHECK: tfc.table_slot %[[T]][1]
// CHECK: %[[P:.*]] = bufferization.to_tensor %{{.*}} restrict : memref<2x64x32xf32> to tensor<2x64x32xf32>
// CHECK: %[[Y:.*]] = tfc_cpu.gemm %[[X]], %[[P]]
// CHECK: tfc.table_slot %[[T]][2]
// CHECK: %[[WT:.*]] = bufferization.to_tensor %{{.*}} restrict : memref<40x64xf32> to tensor<40x64xf32>
// CHECK-NEXT: return %[[Y]], %[[WT]]
// CHECK-LABEL: func.func @tfc_model_init
// CHECK: %[[W:.*]] = bufferization.to_tensor %{{.*}} restrict : memref<64x40xf32> to tensor<64x40xf32>
// CHECK-NOT: tfc.table_slot
// Each constant is stored right after it is computed (its temporary dies
// before the next one is computed).
// CHECK: %[[T1:.*]] = linalg.transpose ins(%[[W]] : tensor<64x40xf32>)
// CHECK: %[[P:.*]] = tfc_cpu.pack %[[T1]]
// CHECK: bufferization.materialize_in_destination %[[P]] in restrict writable %{{.*}} : (tensor<2x64x32xf32>, memref<2x64x32xf32>) -> ()
// CHECK: %[[T2:.*]] = linalg.transpose ins(%[[W]] : tensor<64x40xf32>)
// CHECK: bufferization.materialize_in_destination %[[T2]] in restrict writable %{{.*}} : (tensor<40x64xf32>, memref<40x64xf32>) -> ()
func.func @tied(%x: tensor<?x64xf32>) -> (tensor<?x40xf32>, tensor<40x64xf32>) {
  %w = tfc.weight "w" : tensor<64x40xf32>
  %w2 = tfc.weight "w" : tensor<64x40xf32>
  %e = tensor.empty() : tensor<40x64xf32>
  %t = linalg.transpose ins(%w : tensor<64x40xf32>) outs(%e : tensor<40x64xf32>) permutation = [1, 0]
  %pe = tensor.empty() : tensor<2x64x32xf32>
  %p = tfc_cpu.pack %t outs(%pe) : (tensor<40x64xf32>, tensor<2x64x32xf32>) -> tensor<2x64x32xf32>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x64xf32>
  %ye = tensor.empty(%n) : tensor<?x40xf32>
  %y = tfc_cpu.gemm %x, %p outs(%ye) : (tensor<?x64xf32>, tensor<2x64x32xf32>, tensor<?x40xf32>) -> tensor<?x40xf32>
  %e2 = tensor.empty() : tensor<40x64xf32>
  %t2 = linalg.transpose ins(%w2 : tensor<64x40xf32>) outs(%e2 : tensor<40x64xf32>) permutation = [1, 0]
  return %y, %t2 : tensor<?x40xf32>, tensor<40x64xf32>
}

// -----

// Computations that read an entry input stay in the entry; private
// functions are not entries.
// CHECK-LABEL: module attributes
// CHECK-SAME: \22constants\22:[]
// CHECK-SAME: \22entries\22:[{{.*}}\22name\22:\22public_one\22{{.*}}]
// CHECK-NOT: \22name\22:\22helper\22
// CHECK-LABEL: func.func private @helper
// CHECK-LABEL: func.func private @__tfc_impl_public_one
// CHECK-SAME: (%[[T:.*]]: !llvm.ptr, %[[X:.*]]: tensor<8xf32>)
// CHECK: %[[W:.*]] = bufferization.to_tensor %{{.*}} restrict : memref<8xf32> to tensor<8xf32>
// CHECK: linalg.generic {{.*}} ins(%[[X]], %[[W]] : tensor<8xf32>, tensor<8xf32>)
// CHECK: func.func @tfc_model_init
// CHECK-NEXT: return
func.func private @helper(%x: tensor<8xf32>) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}
func.func @public_one(%x: tensor<8xf32>) -> tensor<8xf32> {
  %w = tfc.weight "scale" : tensor<8xf32>
  %e = tensor.empty() : tensor<8xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x, %w : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

func.func @mismatched_weight(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = tfc.weight "w" : tensor<4xf32>
  // expected-error @+1 {{weight 'w' is used as 'tensor<8xf32>' and as 'tensor<4xf32>'}}
  %v = tfc.weight "w" : tensor<8xf32>
  return %x : tensor<4xf32>
}

// -----

// Inputs and outputs are found by name: two with one name are an error, not
// a library every load refuses (an unnamed one is named by its position).
// expected-error @+1 {{entry 'same_name': output 0 and input 0 are both named 'x' (tfc.name); an entry's inputs and outputs need distinct names}}
func.func @same_name(%x: tensor<4xf32> {tfc.name = "x"}) -> (tensor<4xf32> {tfc.name = "x"}) {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{entry 'default_names': input 1 and input 0 are both named 'input1' (tfc.name)}}
func.func @default_names(%x: tensor<4xf32> {tfc.name = "input1"}, %y: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{the module has no entry point (a public function)}}
module {
  func.func private @f() {
    return
  }
}

// -----

// State arguments (tfc.state, the key/value caches of a cached entry) are
// buffers the entry updates in place: the argument becomes a memref read
// through a writable to_tensor, the result tied to it (tfc.state_for) is
// materialised into it instead of being returned, and the metadata marks
// the input "state": true and lists no output for it.
// CHECK: \22name\22:\22cache\22,\22shape\22:[\22batch\22,2],\22state\22:true}],\22name\22:\22step\22,\22outputs\22:[{\22dtype\22:\22f32\22,\22name\22:\22y\22,\22shape\22:[null,4]}]
// CHECK-LABEL: func.func private @__tfc_impl_step
// CHECK-SAME: (%[[T:.*]]: !llvm.ptr, %[[IDS:.*]]: tensor<?x4xf32>, %[[C:.*]]: memref<?x2xf32>) -> tensor<?x4xf32>
// CHECK: %[[CT:.*]] = bufferization.to_tensor %[[C]] restrict writable : memref<?x2xf32> to tensor<?x2xf32>
// CHECK: %[[U:.*]] = tensor.insert_slice %{{.*}} into %[[CT]]
// CHECK: bufferization.materialize_in_destination %[[U]] in restrict writable %[[C]] : (tensor<?x2xf32>, memref<?x2xf32>) -> ()
// CHECK: return %{{.*}} : tensor<?x4xf32>
module attributes {tfc.model = "stateful"} {
  func.func @step(%x: tensor<?x4xf32> {tfc.name = "x", tfc.dims = ["batch", 4]},
                  %c: tensor<?x2xf32> {tfc.name = "cache", tfc.dims = ["batch", 2], tfc.state})
      -> (tensor<?x4xf32> {tfc.name = "y"}, tensor<?x2xf32> {tfc.name = "cache", tfc.state_for = 1 : i64}) {
    %s = tensor.extract_slice %x[0, 0] [1, 2] [1, 1] : tensor<?x4xf32> to tensor<1x2xf32>
    %u = tensor.insert_slice %s into %c[0, 0] [1, 2] [1, 1] : tensor<1x2xf32> into tensor<?x2xf32>
    return %x, %u : tensor<?x4xf32>, tensor<?x2xf32>
  }
}

// -----

// The same derived constant in two entries (e.g. `forward` and its cached
// form packing the same matrix) is computed once, into one slot both read;
// a different computation on the same weight gets its own.
// CHECK: \22constants\22:[{\22align\22:64,\22bytes\22:16384},{\22align\22:64,\22bytes\22:10240}]
// CHECK-LABEL: func.func private @__tfc_impl_a
// CHECK: tfc.table_slot %{{.*}}[1]
// CHECK: tfc_cpu.gemm
// CHECK-LABEL: func.func private @__tfc_impl_b
// CHECK: tfc.table_slot %{{.*}}[1]
// CHECK: tfc_cpu.gemm
// CHECK: tfc.table_slot %{{.*}}[2]
// CHECK-LABEL: func.func @tfc_model_init
// CHECK-COUNT-1: tfc_cpu.pack %{{.*}} outs(%{{.*}}) : (tensor<40x64xf32>, tensor<2x64x32xf32>) -> tensor<2x64x32xf32>
// CHECK: tfc.transpose
// CHECK-NOT: tfc_cpu.pack
module attributes {tfc.model = "shared"} {
  func.func @a(%x: tensor<?x64xf32> {tfc.name = "x", tfc.dims = ["n", 64]}) -> (tensor<?x40xf32> {tfc.name = "y"}) {
    %w = tfc.weight "w" : tensor<40x64xf32>
    %pe = tensor.empty() : tensor<2x64x32xf32>
    %p = tfc_cpu.pack %w outs(%pe) : (tensor<40x64xf32>, tensor<2x64x32xf32>) -> tensor<2x64x32xf32>
    %c0 = arith.constant 0 : index
    %n = tensor.dim %x, %c0 : tensor<?x64xf32>
    %ye = tensor.empty(%n) : tensor<?x40xf32>
    %y = tfc_cpu.gemm %x, %p outs(%ye) : (tensor<?x64xf32>, tensor<2x64x32xf32>, tensor<?x40xf32>) -> tensor<?x40xf32>
    return %y : tensor<?x40xf32>
  }
  func.func @b(%x: tensor<?x64xf32> {tfc.name = "x", tfc.dims = ["n", 64]}) -> (tensor<?x40xf32> {tfc.name = "y"}, tensor<64x40xf32> {tfc.name = "t"}) {
    %w = tfc.weight "w" : tensor<40x64xf32>
    %pe = tensor.empty() : tensor<2x64x32xf32>
    %p = tfc_cpu.pack %w outs(%pe) : (tensor<40x64xf32>, tensor<2x64x32xf32>) -> tensor<2x64x32xf32>
    %c0 = arith.constant 0 : index
    %n = tensor.dim %x, %c0 : tensor<?x64xf32>
    %ye = tensor.empty(%n) : tensor<?x40xf32>
    %y = tfc_cpu.gemm %x, %p outs(%ye) : (tensor<?x64xf32>, tensor<2x64x32xf32>, tensor<?x40xf32>) -> tensor<?x40xf32>
    %t = tfc.transpose %w [1, 0] : tensor<40x64xf32> -> tensor<64x40xf32>
    return %y, %t : tensor<?x40xf32>, tensor<64x40xf32>
  }
}
