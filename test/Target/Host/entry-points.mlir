// --tfc-entry-points (EntryPoints.cpp), after bufferisation: for each
// private @__tfc_impl_E, the C entry point func @tfc_entry_E(table, inputs,
// outputs) loads input descriptor i from inputs[i], calls the
// implementation and stores result descriptor i to outputs[i]. The module
// also gets the NUL-terminated metadata string (from tfc.abi_metadata, which
// is removed), the null-initialised hook table pointer and the allocation
// functions of the memref lowering, which call the hooks when a runtime is
// attached and aligned_alloc/free otherwise.
// RUN: tfc-opt %s -split-input-file -verify-diagnostics --tfc-entry-points | FileCheck %s

// CHECK-LABEL: module {
// CHECK-DAG: llvm.mlir.global external @tfc_model_hooks() {addr_space = 0 : i32} : !llvm.ptr {
// CHECK-DAG: llvm.mlir.global external constant @tfc_model_metadata("{\22abi\22:1}\00")
// CHECK-NOT: tfc.abi_metadata
//
// The implementation is kept as is.
// CHECK: func.func private @__tfc_impl_f(%{{.*}}: !llvm.ptr, %{{.*}}: memref<?x4xf32>, %{{.*}}: memref<f32>) -> (memref<?x4xf32>, memref<4xf32>)
//
// CHECK-LABEL: func.func @tfc_entry_f
// CHECK-SAME: (%[[TABLE:.*]]: !llvm.ptr, %[[INS:.*]]: !llvm.ptr, %[[OUTS:.*]]: !llvm.ptr) {
// CHECK-NEXT: %[[G0:.*]] = llvm.getelementptr %[[INS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %[[D0P:.*]] = llvm.load %[[G0]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[D0:.*]] = llvm.load %[[D0P]] : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
// CHECK-NEXT: %[[A0:.*]] = builtin.unrealized_conversion_cast %[[D0]] : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)> to memref<?x4xf32>
// CHECK-NEXT: %[[G1:.*]] = llvm.getelementptr %[[INS]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %[[D1P:.*]] = llvm.load %[[G1]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[D1:.*]] = llvm.load %[[D1P]] : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64)>
// CHECK-NEXT: %[[A1:.*]] = builtin.unrealized_conversion_cast %[[D1]] : !llvm.struct<(ptr, ptr, i64)> to memref<f32>
// CHECK-NEXT: %[[R:.*]]:2 = call @__tfc_impl_f(%[[TABLE]], %[[A0]], %[[A1]]) : (!llvm.ptr, memref<?x4xf32>, memref<f32>) -> (memref<?x4xf32>, memref<4xf32>)
// CHECK-NEXT: %[[R0:.*]] = builtin.unrealized_conversion_cast %[[R]]#0 : memref<?x4xf32> to !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
// CHECK-NEXT: %[[O0:.*]] = llvm.getelementptr %[[OUTS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %[[O0P:.*]] = llvm.load %[[O0]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: llvm.store %[[R0]], %[[O0P]] : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>, !llvm.ptr
// CHECK-NEXT: %[[R1:.*]] = builtin.unrealized_conversion_cast %[[R]]#1 : memref<4xf32> to !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK-NEXT: %[[O1:.*]] = llvm.getelementptr %[[OUTS]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %[[O1P:.*]] = llvm.load %[[O1]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: llvm.store %[[R1]], %[[O1P]]
// CHECK-NEXT: return
//
// A second entry, without inputs.
// CHECK-LABEL: func.func @tfc_entry_g
// CHECK-SAME: (%[[TABLE:.*]]: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) {
// CHECK-NEXT: call @__tfc_impl_g(%[[TABLE]]) : (!llvm.ptr) -> memref<2xf32>
// CHECK-NOT: func.func @tfc_entry_tfc_model_init
// CHECK-NOT: func.func @tfc_entry_helper
//
// The allocation functions.
// CHECK-DAG: llvm.func @aligned_alloc(i64, i64) -> !llvm.ptr
// CHECK-DAG: llvm.func @free(!llvm.ptr)
// CHECK-LABEL: llvm.func internal @_mlir_memref_to_llvm_alloc(%arg0: i64) -> !llvm.ptr {
// CHECK-NEXT: %[[HA:.*]] = llvm.mlir.addressof @tfc_model_hooks : !llvm.ptr
// CHECK-NEXT: %[[H:.*]] = llvm.load %[[HA]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT: %[[NOHOOKS:.*]] = llvm.icmp "eq" %[[H]], %[[NULL]] : !llvm.ptr
// CHECK-NEXT: llvm.cond_br %[[NOHOOKS]], ^[[LIBC:.*]], ^[[HOOK:.*]]
// CHECK-NEXT: ^[[HOOK]]:
// hooks->alloc (field 0)(size, 64)
// CHECK-NEXT: %[[FP:.*]] = llvm.getelementptr %[[H]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %[[F:.*]] = llvm.load %[[FP]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[C64:.*]] = llvm.mlir.constant(64 : i64) : i64
// CHECK-NEXT: %[[P:.*]] = llvm.call %[[F]](%arg0, %[[C64]]) : !llvm.ptr, (i64, i64) -> !llvm.ptr
// CHECK-NEXT: llvm.return %[[P]] : !llvm.ptr
// CHECK-NEXT: ^[[LIBC]]:
// aligned_alloc(64, size rounded up to a multiple of 64)
// CHECK: %[[AND:.*]] = llvm.and
// CHECK-NEXT: %[[Q:.*]] = llvm.call @aligned_alloc(%{{.*}}, %[[AND]]) : (i64, i64) -> !llvm.ptr
// CHECK-NEXT: llvm.return %[[Q]] : !llvm.ptr
// CHECK-LABEL: llvm.func internal @_mlir_memref_to_llvm_aligned_alloc(%arg0: i64, %arg1: i64) -> !llvm.ptr {
// (alignment, size) -> hooks->alloc(size, alignment)
// CHECK: llvm.getelementptr %{{.*}}[0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: llvm.call %{{.*}}(%arg1, %arg0) : !llvm.ptr, (i64, i64) -> !llvm.ptr
// CHECK: llvm.call @aligned_alloc(%arg0, %{{.*}}) : (i64, i64) -> !llvm.ptr
// CHECK-LABEL: llvm.func internal @_mlir_memref_to_llvm_free(%arg0: !llvm.ptr) {
// hooks->free is field 1.
// CHECK: llvm.getelementptr %{{.*}}[1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: llvm.call %{{.*}}(%arg0) : !llvm.ptr, (!llvm.ptr) -> ()
// CHECK: llvm.call @free(%arg0) : (!llvm.ptr) -> ()
module attributes {tfc.abi_metadata = "{\"abi\":1}"} {
  func.func private @__tfc_impl_f(%table: !llvm.ptr, %x: memref<?x4xf32>, %s: memref<f32>) -> (memref<?x4xf32>, memref<4xf32>) {
    %c0 = arith.constant 0 : index
    %v = memref.alloc() : memref<4xf32>
    return %x, %v : memref<?x4xf32>, memref<4xf32>
  }
  func.func private @__tfc_impl_g(%table: !llvm.ptr) -> memref<2xf32> {
    %v = memref.alloc() : memref<2xf32>
    return %v : memref<2xf32>
  }
  func.func private @helper() {
    return
  }
  func.func @tfc_model_init(%table: !llvm.ptr) {
    return
  }
}

// -----

// Without the metadata attribute the string is an empty JSON object; an
// existing hook table global is reused.
// CHECK-LABEL: module {
// CHECK: llvm.mlir.global external constant @tfc_model_metadata("{}\00")
// CHECK-NOT: @tfc_model_hooks()
// CHECK: llvm.mlir.global external @tfc_model_hooks() {addr_space = 0 : i32} : !llvm.ptr
// CHECK-NOT: @tfc_model_hooks()
module {
  llvm.mlir.global external @tfc_model_hooks() {addr_space = 0 : i32} : !llvm.ptr {
    %0 = llvm.mlir.zero : !llvm.ptr
    llvm.return %0 : !llvm.ptr
  }
  func.func private @__tfc_impl_h(%table: !llvm.ptr, %x: memref<4xf32>) {
    return
  }
}

// -----

// Where init calls the release hook's caller (ModelABI.cpp declares it), it
// is defined here, internal: nothing without a runtime or without the hook
// (slot 4 of the table), else the hook with the same arguments.
// CHECK-LABEL: module {
// CHECK-LABEL: llvm.func internal @tfc_rt_release(%arg0: !llvm.ptr, %arg1: i64) {
// CHECK-NEXT: %[[A:.*]] = llvm.mlir.addressof @tfc_model_hooks : !llvm.ptr
// CHECK-NEXT: %[[H:.*]] = llvm.load %[[A]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[Z:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT: %[[NO:.*]] = llvm.icmp "eq" %[[H]], %[[Z]] : !llvm.ptr
// CHECK-NEXT: llvm.cond_br %[[NO]], ^[[DONE:.*]], ^[[HOOKS:.*]]
// CHECK: %[[G:.*]] = llvm.getelementptr %[[H]][4] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %[[F:.*]] = llvm.load %[[G]] : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.cond_br %{{.*}}, ^[[DONE]], ^[[CALL:.*]]
// CHECK: llvm.call %[[F]](%arg0, %arg1) : !llvm.ptr, (!llvm.ptr, i64) -> ()
// CHECK: llvm.return
module {
  llvm.func @tfc_rt_release(!llvm.ptr, i64)
  func.func private @__tfc_impl_r(%table: !llvm.ptr, %x: memref<4xf32>) {
    return
  }
  func.func @tfc_model_init(%table: !llvm.ptr) {
    %p = llvm.load %table : !llvm.ptr -> !llvm.ptr
    %n = llvm.mlir.constant(16 : i64) : i64
    llvm.call @tfc_rt_release(%p, %n) : (!llvm.ptr, i64) -> ()
    return
  }
}

// -----

// An entry whose tensors were not bufferised cannot get a C wrapper.
module {
  // expected-error @+1 {{entry argument 0 is not a buffer after bufferisation: 'tensor<4xf32>'}}
  func.func private @__tfc_impl_t(%table: !llvm.ptr, %x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}
