// tfc-expand-table-slots (ExpandTableSlots.cpp): each tfc.table_slot
// becomes a load of the slot's pointer from the table and a row-major
// descriptor of its static shape over it; a table that is not a pointer is
// an error.
// RUN: tfc-opt %s -allow-unregistered-dialect -split-input-file --tfc-expand-table-slots -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @reads
// CHECK-SAME: (%[[T:.*]]: !llvm.ptr)
// CHECK: %[[GEP:.*]] = llvm.getelementptr %[[T]][12] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %[[P:.*]] = llvm.load %[[GEP]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[U:.*]] = llvm.mlir.undef : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
// CHECK-NEXT: %[[D0:.*]] = llvm.insertvalue %[[P]], %[[U]][0]
// CHECK-NEXT: %[[D1:.*]] = llvm.insertvalue %[[P]], %[[D0]][1]
// CHECK: %[[C8:.*]] = llvm.mlir.constant(8 : i64) : i64
// CHECK: llvm.insertvalue %[[C8]], %{{.*}}[3, 1]
// CHECK: %[[M:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)> to memref<4x8xf32>
// CHECK: "test.use"(%[[M]])
// CHECK-NOT: tfc.table_slot
func.func @reads(%table: !llvm.ptr) {
  %w = tfc.table_slot %table[12] : !llvm.ptr -> memref<4x8xf32>
  "test.use"(%w) : (memref<4x8xf32>) -> ()
  return
}

// -----

func.func @not_a_pointer(%table: i64) {
  // expected-error @+1 {{tfc.table_slot: the table is 'i64', expected !llvm.ptr}}
  %w = tfc.table_slot %table[0] : i64 -> memref<4xf32>
  "test.use"(%w) : (memref<4xf32>) -> ()
  return
}
