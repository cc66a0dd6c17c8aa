// tfc-cpu-lower-kernels (LowerKernels.cpp and the emitters in RowKernels.cpp,
// Gemm.cpp, Attention.cpp) on kernel ops over buffers: each op reads its
// operand buffers and fills its destination with a vectorised loop nest
// (16 f32 lanes, masked at the row tails) under one scf.parallel.
// RUN: tfc-opt %s -split-input-file -verify-diagnostics --tfc-cpu-lower-kernels | FileCheck %s

// Softmax over the last axis: one task per row (the leading dims); max with
// -inf in the masked lanes, exp(x - max) stored and summed, then scaled by
// 1/sum in place.
// CHECK-LABEL: func @softmax
// CHECK-SAME: (%[[X:.*]]: memref<?x4x?xf32>, %[[OUT:.*]]: memref<?x4x?xf32>)
// CHECK: %[[N:.*]] = memref.dim %[[X]], %c2
// CHECK: %[[B0:.*]] = memref.dim %[[X]], %c0
// CHECK: %[[B1:.*]] = memref.dim %[[X]], %c1
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) = (%{{.*}}, %{{.*}}) to (%[[B0]], %[[B1]])
// CHECK-DAG: %[[NEGINF:.*]] = arith.constant dense<0xFF800000> : vector<16xf32>
// The whole chunks of 16 in a loop whose mask is every lane (the masked
// loads and stores fold to plain ones), then the partial chunk once.
// CHECK: %[[REMN:.*]] = arith.remui %[[N]], %c16
// CHECK: %[[WHOLE:.*]] = arith.subi %[[N]], %[[REMN]] : index
// CHECK: %[[LOOP:.*]] = scf.for %[[K:.*]] = %{{.*}} to %[[WHOLE]] step %c16{{.*}} iter_args(%[[ACC:.*]] = %[[NEGINF]]) -> (vector<16xf32>)
// CHECK: %[[ALL:.*]] = arith.constant dense<true> : vector<16xi1>
// CHECK: %[[V:.*]] = vector.maskedload %[[X]][%[[I]], %[[J]], %[[K]]], %[[ALL]], %{{.*}}
// CHECK: %[[GT:.*]] = arith.cmpf ogt, %[[V]], %[[ACC]] : vector<16xf32>
// CHECK: arith.select %[[GT]], %[[V]], %[[ACC]] : vector<16xi1>, vector<16xf32>
// CHECK: %[[TAIL:.*]] = arith.cmpi ult, %[[WHOLE]], %[[N]] : index
// CHECK: scf.if %[[TAIL]] -> (vector<16xf32>)
// CHECK: %[[REM:.*]] = arith.subi %[[N]], %[[WHOLE]] : index
// CHECK: %[[M:.*]] = vector.create_mask %[[REM]] : vector<16xi1>
// CHECK: vector.maskedload %[[X]][%[[I]], %[[J]], %[[WHOLE]]], %[[M]]
// CHECK: } else {
// CHECK: scf.yield %[[LOOP]] : vector<16xf32>
// The row's maximum across the lanes as a tree of halves (maxnum at each
// step); its sum too.
// CHECK: %[[LO:.*]] = vector.extract_strided_slice %{{.*}} {offsets = [0], sizes = [8], strides = [1]} : vector<16xf32> to vector<8xf32>
// CHECK: %[[HI:.*]] = vector.extract_strided_slice %{{.*}} {offsets = [8], sizes = [8], strides = [1]} : vector<16xf32> to vector<8xf32>
// CHECK: arith.maxnumf %[[LO]], %[[HI]] : vector<8xf32>
// CHECK: arith.maxnumf %{{.*}} : vector<4xf32>
// CHECK: arith.maxnumf %{{.*}} : vector<2xf32>
// CHECK: arith.maxnumf %{{.*}} : vector<1xf32>
// CHECK: vector.reduction <maxnumf>, %{{.*}} : vector<1xf32> into f32
// CHECK: scf.for
// CHECK: math.exp %{{.*}} : vector<16xf32>
// CHECK: vector.maskedstore %[[OUT]][%[[I]], %[[J]], %{{.*}}]
// CHECK: arith.addf %{{.*}} : vector<8xf32>
// CHECK: arith.addf %{{.*}} : vector<4xf32>
// CHECK: arith.addf %{{.*}} : vector<2xf32>
// CHECK: arith.addf %{{.*}} : vector<1xf32>
// CHECK: vector.reduction <add>, %{{.*}} : vector<1xf32> into f32
// 1 / sum, 0 for a sum of zero (a fully masked row), NaN for NaN.
// CHECK: %[[LE:.*]] = arith.cmpf ole, %[[SUM:.*]], %{{.*}} : f32
// CHECK: %[[INV:.*]] = arith.divf %{{.*}}, %[[SUM]] : f32
// CHECK: arith.select %[[LE]], %{{.*}}, %[[INV]] : f32
// CHECK: scf.for
// CHECK: vector.maskedload %[[OUT]]
// CHECK: arith.mulf
// CHECK: vector.maskedstore %[[OUT]]
// CHECK: scf.reduce
// CHECK: return
// CHECK-NOT: tfc_kernel.softmax
func.func @softmax(%x: memref<?x4x?xf32>, %out: memref<?x4x?xf32>) {
  tfc_kernel.softmax %x outs(%out) : (memref<?x4x?xf32>, memref<?x4x?xf32>) -> ()
  return
}

// -----

// A slice with unit inner stride is read in place, through its strided
// layout.
// CHECK-LABEL: func @softmax_strided_rows
// CHECK: %[[S:.*]] = memref.subview %{{.*}}[0, 64] [%{{.*}}, 64] [1, 1] : memref<?x128xf32> to memref<?x64xf32, strided<[128, 1], offset: 64>>
// CHECK-NOT: memref.copy
// CHECK: scf.parallel (%[[I:.*]]) =
// CHECK: vector.maskedload %[[S]][%[[I]], %{{.*}}]
func.func @softmax_strided_rows(%x: memref<?x128xf32>, %out: memref<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x128xf32>
  %s = memref.subview %x[0, 64] [%n, 64] [1, 1] : memref<?x128xf32> to memref<?x64xf32, strided<[128, 1], offset: 64>>
  tfc_kernel.softmax %s outs(%out) : (memref<?x64xf32, strided<[128, 1], offset: 64>>, memref<?x64xf32>) -> ()
  return
}

// -----

// LayerNorm with a residual: every read is input + residual; mean, then the
// variance with FMAs (the masked lanes zeroed), then rsqrt(var + eps) and
// (x - mean) * rstd * scale + bias.
// CHECK-LABEL: func @layer_norm_residual
// CHECK-SAME: (%[[X:.*]]: memref<?x?x32xf32>, %[[R:.*]]: memref<?x?x32xf32>, %[[G:.*]]: memref<32xf32>, %[[B:.*]]: memref<32xf32>, %[[OUT:.*]]: memref<?x?x32xf32>)
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) =
// CHECK: scf.for
// CHECK: %[[XV:.*]] = vector.maskedload %[[X]][%[[I]], %[[J]], %{{.*}}]
// CHECK: %[[RV:.*]] = vector.maskedload %[[R]][%[[I]], %[[J]], %{{.*}}]
// CHECK: arith.addf %[[XV]], %[[RV]] : vector<16xf32>
// CHECK: vector.reduction <add>
// CHECK: scf.for
// CHECK: vector.maskedload %[[X]]
// CHECK: vector.maskedload %[[R]]
// CHECK: %[[C:.*]] = arith.subf
// CHECK: %[[CM:.*]] = arith.select %{{.*}}, %[[C]], %{{.*}} : vector<16xi1>, vector<16xf32>
// CHECK: math.fma %[[CM]], %[[CM]], %{{.*}} : vector<16xf32>
// CHECK: vector.reduction <add>
// CHECK: %[[EPS:.*]] = arith.constant 9.99999974E-6 : f32
// CHECK: %[[VE:.*]] = arith.addf %{{.*}}, %[[EPS]] : f32
// CHECK: math.rsqrt %[[VE]] : f32
// CHECK: scf.for
// CHECK: vector.maskedload %[[G]][%{{.*}}]
// CHECK: arith.mulf
// CHECK: vector.maskedload %[[B]][%{{.*}}]
// CHECK: arith.addf
// CHECK: vector.maskedstore %[[OUT]][%[[I]], %[[J]], %{{.*}}]
// CHECK: return
func.func @layer_norm_residual(%x: memref<?x?x32xf32>, %r: memref<?x?x32xf32>, %g: memref<32xf32>, %b: memref<32xf32>, %out: memref<?x?x32xf32>) {
  tfc_kernel.layer_norm %x scale(%g) bias(%b) residual(%r) outs(%out) {epsilon = 1.0e-5} : (memref<?x?x32xf32>, memref<32xf32>, memref<32xf32>, memref<?x?x32xf32>, memref<?x?x32xf32>) -> ()
  return
}

// -----

// RMSNorm: sum of squares with FMAs, rsqrt(mean + eps), x * rstd * scale.
// CHECK-LABEL: func @rms_norm
// CHECK-SAME: (%[[X:.*]]: memref<?x64xf32>, %[[G:.*]]: memref<64xf32>, %[[OUT:.*]]: memref<?x64xf32>)
// CHECK: scf.parallel (%[[I:.*]]) =
// CHECK: %[[V:.*]] = vector.maskedload %[[X]][%[[I]], %{{.*}}]
// CHECK: math.fma %[[V]], %[[V]], %{{.*}} : vector<16xf32>
// CHECK: vector.reduction <add>
// CHECK: arith.constant 9.99999997E-7 : f32
// CHECK: math.rsqrt
// CHECK: scf.for
// CHECK: vector.maskedload %[[G]]
// CHECK: vector.maskedstore %[[OUT]][%[[I]], %{{.*}}]
// CHECK-NOT: arith.subf
// CHECK: return
func.func @rms_norm(%x: memref<?x64xf32>, %g: memref<64xf32>, %out: memref<?x64xf32>) {
  tfc_kernel.rms_norm %x scale(%g) outs(%out) {epsilon = 1.0e-6} : (memref<?x64xf32>, memref<64xf32>, memref<?x64xf32>) -> ()
  return
}

// -----

// Causal attention: calls of the C micro-kernels
// (lib/Target/CPU/MicroKernels/Attention.c) with the sizes and strides in a
// shape array. At most 4 query rows (decoding): flash-decoding in tasks of
// (batch, key/value head, split of the keys), then a combine per (batch,
// head); more rows: the prefill micro-kernel (K transposed once per call,
// then tasks of blocks of query rows; any number of keys, in chunks).
// CHECK-LABEL: func @attention_causal
// CHECK-SAME: (%[[Q:.*]]: memref<?x4x?x16xf32>, %[[K:.*]]: memref<?x4x?x16xf32>, %[[V:.*]]: memref<?x4x?x16xf32>, %[[OUT:.*]]: memref<?x4x?x16xf32>)
// The shape array is a static stack slot of the function, filled once
// before the choice (each path stores its split count in slot 7).
// CHECK-NEXT: %[[SHAPE:.*]] = memref.alloca() : memref<32xi64>
// The sizes both kernels read, once. Run-time head counts are not trusted:
// no task without key/value heads (the micro-kernels map any other counts).
// CHECK-DAG: %[[B:.*]] = memref.dim %[[Q]], %c0
// CHECK-DAG: %[[H:.*]] = memref.dim %[[Q]], %c1
// CHECK-DAG: %[[TQ:.*]] = memref.dim %[[Q]], %c2
// CHECK-DAG: %[[HKV:.*]] = memref.dim %[[K]], %c1
// CHECK-DAG: %[[TK:.*]] = memref.dim %[[K]], %c2
// CHECK: %[[NOKV:.*]] = arith.cmpi eq, %[[HKV]], %c0{{.*}} : index
// CHECK-NEXT: %[[RUNH:.*]] = arith.select %[[NOKV]], %c0{{.*}}, %[[H]] : index
// Sizes first (batch, heads, key/value heads, ...), then causal = 1.
// CHECK: %[[B64:.*]] = arith.index_cast %[[B]] : index to i64
// CHECK: memref.store %[[B64]], %[[SHAPE]][%c0{{.*}}]
// CHECK: %[[CAUSAL:.*]] = arith.constant 1 : i64
// CHECK: memref.store %[[CAUSAL]], %[[SHAPE]][%c8{{.*}}]
// CHECK: arith.constant 2.500000e-01 : f32
// CHECK: %[[FEW:.*]] = arith.cmpi ule, %[[TQ]], %c4{{.*}} : index
// CHECK-NEXT: scf.if %[[FEW]] {
// Splits of 256 keys, at least 1, at most 32.
// CHECK: %[[S0:.*]] = arith.ceildivui %[[TK]], %c256{{.*}} : index
// CHECK: %[[S1:.*]] = arith.maxui %[[S0]], %c1{{.*}} : index
// CHECK: %[[SPLITS:.*]] = arith.minui %[[S1]], %c32{{.*}} : index
// CHECK: %[[SPLITS64:.*]] = arith.index_cast %[[SPLITS]] : index to i64
// CHECK: memref.store %[[SPLITS64]], %[[SHAPE]][%c7{{.*}}]
// CHECK: llvm.call @tfc_uk_attention_partial_floats
// CHECK: %[[BKV:.*]] = arith.muli %[[B]], %[[HKV]] : index
// CHECK: %[[SPLITTASKS:.*]] = arith.muli %[[BKV]], %[[SPLITS]] : index
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[SPLITTASKS]])
// CHECK: llvm.call @tfc_uk_attention_split
// CHECK: %[[BH:.*]] = arith.muli %[[B]], %[[RUNH]] : index
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[BH]])
// CHECK: llvm.call @tfc_uk_attention_combine
// CHECK: } else {
// CHECK: %[[ONE64:.*]] = arith.index_cast %c1{{.*}} : index to i64
// CHECK: memref.store %[[ONE64]], %[[SHAPE]][%c7{{.*}}]
// CHECK: llvm.call @tfc_uk_attention_kt_floats
// CHECK: %[[PBKV:.*]] = arith.muli %[[B]], %[[HKV]] : index
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[PBKV]])
// CHECK: llvm.call @tfc_uk_attention_transpose_k
// CHECK: %[[NT:.*]] = llvm.call @tfc_uk_attention_prefill_tasks
// CHECK: %[[NTI:.*]] = arith.index_cast %[[NT]] : i64 to index
// CHECK: %[[NOH:.*]] = arith.cmpi eq, %[[RUNH]], %c0{{.*}} : index
// CHECK: %[[TASKS:.*]] = arith.select %[[NOH]], %c0{{.*}}, %[[NTI]] : index
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[TASKS]])
// CHECK: llvm.call @tfc_uk_attention_prefill
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @attention_causal(%q: memref<?x4x?x16xf32>, %k: memref<?x4x?x16xf32>, %v: memref<?x4x?x16xf32>, %out: memref<?x4x?x16xf32>) {
  tfc_kernel.attention %q, %k, %v outs(%out) {causal, scale = 0.25} : (memref<?x4x?x16xf32>, memref<?x4x?x16xf32>, memref<?x4x?x16xf32>, memref<?x4x?x16xf32>) -> ()
  return
}

// -----

// Grouped-query attention (8 query heads over 2 key/value heads) with a
// [B, 1, 1, Tk] padding bias, an explicit scale and a value width (24)
// different from the key width (32): the head counts, the widths and the
// mask's strides as [B, H, Tq, Tk] (0 where it broadcasts: heads and query
// rows) go into the shape array; without `causal` its slot 8 is 0.
// CHECK-LABEL: func @attention_gqa_mask
// CHECK-SAME: (%[[Q:.*]]: memref<2x8x?x32xf32>, %[[K:.*]]: memref<2x2x?x32xf32>, %[[V:.*]]: memref<2x2x?x24xf32>, %[[M:.*]]: memref<2x1x1x?xf32>, %[[OUT:.*]]: memref<2x8x?x24xf32>)
// CHECK: %[[NOTCAUSAL:.*]] = arith.constant 0 : i64
// CHECK: memref.store %[[NOTCAUSAL]], %[[SHAPE:.*]][%c8{{.*}}]
// CHECK: %{{.*}}, %{{.*}}, %{{.*}}:4, %[[MS:.*]]:4 = memref.extract_strided_metadata %[[M]]
// CHECK: %[[MS0:.*]] = arith.index_cast %[[MS]]#0 : index to i64
// CHECK: memref.store %[[MS0]], %[[SHAPE]][%c24{{.*}}]
// CHECK: %[[Z1:.*]] = arith.index_cast %c0{{.*}} : index to i64
// CHECK: memref.store %[[Z1]], %[[SHAPE]][%c25{{.*}}]
// CHECK: %[[Z2:.*]] = arith.index_cast %c0{{.*}} : index to i64
// CHECK: memref.store %[[Z2]], %[[SHAPE]][%c26{{.*}}]
// CHECK: %[[MS3:.*]] = arith.index_cast %[[MS]]#3 : index to i64
// CHECK: memref.store %[[MS3]], %[[SHAPE]][%c27{{.*}}]
// CHECK: arith.constant 5.000000e-01 : f32
// CHECK: scf.if
// CHECK: llvm.call @tfc_uk_attention_split
// CHECK: } else {
// CHECK: llvm.call @tfc_uk_attention_prefill
func.func @attention_gqa_mask(%q: memref<2x8x?x32xf32>, %k: memref<2x2x?x32xf32>, %v: memref<2x2x?x24xf32>, %m: memref<2x1x1x?xf32>, %out: memref<2x8x?x24xf32>) {
  tfc_kernel.attention %q, %k, %v mask(%m) outs(%out) {scale = 0.5} : (memref<2x8x?x32xf32>, memref<2x2x?x32xf32>, memref<2x2x?x24xf32>, memref<2x1x1x?xf32>, memref<2x8x?x24xf32>) -> ()
  return
}

// -----

// Keys and values of f16 (a half-precision KV cache) under an f32 query:
// the *_f16 entry points, which widen them as they read them (kt stays f32).
// CHECK-LABEL: func @attention_half_cache
// CHECK: scf.if
// CHECK: llvm.call @tfc_uk_attention_split_f16
// CHECK: llvm.call @tfc_uk_attention_combine
// CHECK: } else {
// CHECK: llvm.call @tfc_uk_attention_transpose_k_f16
// CHECK: llvm.call @tfc_uk_attention_prefill_f16
func.func @attention_half_cache(%q: memref<1x8x?x32xf32>, %k: memref<1x2x?x32xf16>, %v: memref<1x2x?x32xf16>, %out: memref<1x8x?x32xf32>) {
  tfc_kernel.attention %q, %k, %v outs(%out) {causal, scale = 0.125} : (memref<1x8x?x32xf32>, memref<1x2x?x32xf16>, memref<1x2x?x32xf16>, memref<1x8x?x32xf32>) -> ()
  return
}

// -----

// A half-precision query is not: the CPU kernels compute on f32.
func.func @attention_half_query(%q: memref<1x2x4x8xf16>, %k: memref<1x2x4x8xf16>, %o: memref<1x2x4x8xf16>) {
  // expected-error @+1 {{the CPU kernels support f32 (attention also f16 keys and values) only; got 'memref<1x2x4x8xf16>'}}
  tfc_kernel.attention %q, %k, %k outs(%o) {scale = 1.0} : (memref<1x2x4x8xf16>, memref<1x2x4x8xf16>, memref<1x2x4x8xf16>, memref<1x2x4x8xf16>) -> ()
  return
}

// -----

// An output that is a transposed view of [B, T, H, D] (the heads merged in
// place): its strides go into the shape array's last four slots, and the
// micro-kernels write through them.
// CHECK-LABEL: func @attention_strided_output
// CHECK-SAME: %[[OUT:[a-z0-9]+]]: memref<?x4x?x16xf32, strided<[?, 16, 64, 1]>>)
// CHECK-NOT: memref.copy
// CHECK: %{{.*}}, %{{.*}}, %{{.*}}:4, %[[OS:.*]]:4 = memref.extract_strided_metadata %[[OUT]]
// CHECK: %[[S0:.*]] = arith.index_cast %[[OS]]#0 : index to i64
// CHECK: memref.store %[[S0]], %{{.*}}[%c28{{.*}}]
// CHECK: %[[S1:.*]] = arith.index_cast %[[OS]]#1 : index to i64
// CHECK: memref.store %[[S1]], %{{.*}}[%c29{{.*}}]
// CHECK: %[[S2:.*]] = arith.index_cast %[[OS]]#2 : index to i64
// CHECK: memref.store %[[S2]], %{{.*}}[%c30{{.*}}]
// CHECK: %[[S3:.*]] = arith.index_cast %[[OS]]#3 : index to i64
// CHECK: memref.store %[[S3]], %{{.*}}[%c31{{.*}}]
// CHECK: scf.if
// CHECK: llvm.call @tfc_uk_attention_combine
// CHECK: } else {
// CHECK: llvm.call @tfc_uk_attention_prefill
// CHECK-NOT: memref.copy
// CHECK: return
func.func @attention_strided_output(%q: memref<?x4x?x16xf32>, %k: memref<?x4x?x16xf32>, %v: memref<?x4x?x16xf32>, %out: memref<?x4x?x16xf32, strided<[?, 16, 64, 1]>>) {
  tfc_kernel.attention %q, %k, %v outs(%out) {causal, scale = 0.25} : (memref<?x4x?x16xf32>, memref<?x4x?x16xf32>, memref<?x4x?x16xf32>, memref<?x4x?x16xf32, strided<[?, 16, 64, 1]>>) -> ()
  return
}

// -----

// An output whose rows are not contiguous: computed into a fresh buffer,
// then copied.
// CHECK-LABEL: func @attention_column_output
// CHECK-SAME: %[[OUT:[a-z0-9]+]]: memref<2x4x8x16xf32, strided<[512, 128, 1, 8]>>)
// CHECK: %[[TMP:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x4x8x16xf32>
// CHECK: llvm.call @tfc_uk_attention_prefill
// CHECK: memref.copy %[[TMP]], %[[OUT]]
// CHECK-NEXT: return
func.func @attention_column_output(%q: memref<2x4x8x16xf32>, %k: memref<2x4x8x16xf32>, %v: memref<2x4x8x16xf32>, %out: memref<2x4x8x16xf32, strided<[512, 128, 1, 8]>>) {
  tfc_kernel.attention %q, %k, %v outs(%out) {scale = 0.25} : (memref<2x4x8x16xf32>, memref<2x4x8x16xf32>, memref<2x4x8x16xf32>, memref<2x4x8x16xf32, strided<[512, 128, 1, 8]>>) -> ()
  return
}

// -----

// Batched matmul [?, 4, ?, 16] x [1, 4, 16, ?]: the result's sizes come from
// the lhs (batch, M) and the rhs (N); tasks are (batch, head, 96-row block);
// the rhs batch dim of size 1 broadcasts (index 0). The micro-kernel keeps
// a 6 x 64 tile in 24 vector accumulators: four masked loads of B and 24
// FMAs per k.
// CHECK-LABEL: func @matmul_batched
// CHECK-SAME: (%[[A:.*]]: memref<?x4x?x16xf32>, %[[B:.*]]: memref<1x4x16x?xf32>, %[[OUT:.*]]: memref<?x4x?x?xf32>)
// CHECK: %[[M:.*]] = memref.dim %[[OUT]], %c2
// CHECK: %[[N:.*]] = memref.dim %[[OUT]], %c3
// CHECK: %[[KS:.*]] = memref.dim %[[A]], %c3
// CHECK: %[[OB:.*]] = memref.dim %[[OUT]], %c0
// CHECK: %[[OH:.*]] = memref.dim %[[OUT]], %c1
// CHECK: %[[MB:.*]] = arith.ceildivui %[[M]], %c96 : index
// CHECK: scf.parallel (%[[BI:.*]], %[[HI:.*]], %{{.*}}) = (%{{.*}}, %{{.*}}, %{{.*}}) to (%[[OB]], %[[OH]], %[[MB]])
// CHECK: scf.for %[[N0:.*]] = %{{.*}} to %[[N]] step %c64
// CHECK: scf.for %[[M0:.*]] = {{.*}} step %c6
// CHECK: %{{.*}}:24 = scf.for %[[KK:.*]] = %{{.*}} to %[[KS]] step %{{.*}} iter_args
// CHECK-COUNT-4: vector.maskedload %[[B]][%c0{{.*}}, %[[HI]], %[[KK]], %{{.*}}]
// CHECK: memref.load %[[A]][%[[BI]], %[[HI]], %{{.*}}, %[[KK]]]
// CHECK-COUNT-24: math.fma
// CHECK: scf.yield
// CHECK-COUNT-24: vector.maskedstore %[[OUT]][%[[BI]], %[[HI]],
// The remainder rows, one at a time.
// CHECK: scf.for %{{.*}} step %c1
// CHECK: %{{.*}}:4 = scf.for
// CHECK-COUNT-4: math.fma
// CHECK: return
func.func @matmul_batched(%a: memref<?x4x?x16xf32>, %b: memref<1x4x16x?xf32>, %out: memref<?x4x?x?xf32>) {
  tfc_kernel.matmul %a, %b outs(%out) : (memref<?x4x?x16xf32>, memref<1x4x16x?xf32>, memref<?x4x?x?xf32>) -> ()
  return
}

// -----

// The GEMM over packed panels: [?, ?, 64] is viewed as [M, 64]. Rows go in
// blocks of at most 132, as equal as 6-row tiles allow; tasks are (row
// block, group of 4 panels), or, with one block of rows, a register tile's 2
// panels (one panel when decoding: 6 rows or fewer). Each task calls the
// module's one task function of its configuration (tile, activation,
// bias), which takes its operands as dynamically shaped views: two GEMMs
// with the same configuration share it. In it a register tile is 6 rows x 2
// panels of 32 columns (24 accumulators); the panel left over gets a 6 x 32
// tile. B is read with unmasked vector loads from its panels; bias (masked
// at N = 80) and relu are applied in registers before the masked store.
// CHECK-LABEL: func @gemm_bias_relu
// CHECK-SAME: (%[[X:.*]]: memref<?x?x64xf32>, %[[W:.*]]: memref<3x64x32xf32>, %[[B:.*]]: memref<80xf32>, %[[OUT:.*]]: memref<?x?x80xf32>)
// CHECK: %[[A:.*]] = memref.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : memref<?x?x64xf32> into memref<?x64xf32>
// CHECK: %[[C:.*]] = memref.collapse_shape %[[OUT]] {{\[}}[0, 1], [2]] : memref<?x?x80xf32> into memref<?x80xf32>
// CHECK: %[[AV:.*]] = memref.cast %[[A]] : memref<?x64xf32> to memref<?x?xf32, strided<[?, 1], offset: ?>>
// CHECK: %[[WV:.*]] = memref.cast %[[W]] : memref<3x64x32xf32> to memref<?x?x32xf32, strided<[?, 32, 1], offset: ?>>
// CHECK: %[[BV:.*]] = memref.cast %[[B]] : memref<80xf32> to memref<?xf32, strided<[1], offset: ?>>
// CHECK: %[[CV:.*]] = memref.cast %[[C]] : memref<?x80xf32> to memref<?x?xf32, strided<[?, 1], offset: ?>>
// CHECK: %[[M:.*]] = memref.dim %[[A]], %c0
// CHECK: %[[MB:.*]] = arith.ceildivui %[[M]], %c132 : index
// CHECK: %[[MB1:.*]] = arith.maxui %[[MB]], %c1 : index
// CHECK: %[[PER:.*]] = arith.ceildivui %[[M]], %[[MB1]] : index
// CHECK: %[[TILES:.*]] = arith.ceildivui %[[PER]], %c6 : index
// CHECK: %[[ROWS:.*]] = arith.muli %[[TILES]], %c6 : index
// CHECK: %[[ONE:.*]] = arith.cmpi ule, %[[MB]], %c1{{.*}} : index
// CHECK: %[[FEW:.*]] = arith.cmpi ule, %[[M]], %c6 : index
// CHECK: %[[BP:.*]] = arith.select %[[FEW]], %c1, %c2 : index
// CHECK: %[[PPT:.*]] = arith.select %[[ONE]], %[[BP]], %c4{{.*}} : index
// Column groups as equal as whole tiles allow: in units of a tile's two
// panels when a task holds whole tiles, else of a panel.
// CHECK: %[[ODD:.*]] = arith.remui %[[PPT]], %c2{{.*}} : index
// CHECK: %[[WHOLE:.*]] = arith.cmpi eq, %[[ODD]], %c0{{.*}} : index
// CHECK: %[[UNIT:.*]] = arith.select %[[WHOLE]], %c2{{.*}}, %c1 : index
// CHECK: %[[UNITS:.*]] = arith.ceildivui %c3{{.*}}, %[[UNIT]] : index
// CHECK: %[[UPT:.*]] = arith.divui %[[PPT]], %[[UNIT]] : index
// CHECK: %[[PG:.*]] = arith.ceildivui %[[UNITS]], %[[UPT]] : index
// Column groups outermost: each thread a contiguous slice of the weight.
// CHECK: scf.parallel (%[[GI:.*]], %[[BI:.*]]) = (%{{.*}}, %{{.*}}) to (%[[PG]], %[[MB]])
// CHECK: %[[MBEGIN:.*]] = arith.muli %[[BI]], %[[ROWS]] : index
// CHECK: %[[MEND:.*]] = arith.minui %{{.*}}, %[[M]] : index
// Group g: units [g U / G, (g + 1) U / G), in panels at most 3.
// CHECK: %[[GU:.*]] = arith.muli %[[GI]], %[[UNITS]] : index
// CHECK: %[[U0:.*]] = arith.divui %[[GU]], %[[PG]] : index
// CHECK: %[[P0:.*]] = arith.muli %[[U0]], %[[UNIT]] : index
// CHECK: %[[PBEGIN:.*]] = arith.minui %[[P0]], %c3{{.*}} : index
// CHECK: %[[GI1:.*]] = arith.addi %[[GI]], %c1{{.*}} : index
// CHECK: %[[GU1:.*]] = arith.muli %[[GI1]], %[[UNITS]] : index
// CHECK: %[[U1:.*]] = arith.divui %[[GU1]], %[[PG]] : index
// CHECK: %[[P1:.*]] = arith.muli %[[U1]], %[[UNIT]] : index
// CHECK: %[[PEND:.*]] = arith.minui %[[P1]], %c3{{.*}} : index
// The task: N = 80, its rows and panels, K = 64 in one block of 64.
// CHECK: func.call @[[TASK:__tfc_cpu_gemm_6x2x32_v16_relu_bias]](%[[AV]], %[[WV]], %[[BV]], %[[CV]], %c80, %[[MBEGIN]], %[[MEND]], %[[PBEGIN]], %[[PEND]], %c64{{.*}}, %c64{{.*}})
// The second GEMM calls the same function.
// CHECK: func.call @[[TASK]](
// CHECK-NOT: func.func private @__tfc_cpu_gemm_6x2x32_v16_relu_bias(
// CHECK: func.func private @[[TASK]](%[[TA:.*]]: memref<?x?xf32, strided<[?, 1], offset: ?>>, %[[TW:.*]]: memref<?x?x32xf32, strided<[?, 32, 1], offset: ?>>, %[[TB:.*]]: memref<?xf32, strided<[1], offset: ?>>, %[[TC:.*]]: memref<?x?xf32, strided<[?, 1], offset: ?>>, %[[TN:.*]]: index, %[[TM0:.*]]: index, %[[TM1:.*]]: index, %[[TP0:.*]]: index, %[[TP1:.*]]: index, %[[TK:.*]]: index, %[[TKB:.*]]: index)
// CHECK-SAME: llvm.linkage = #llvm.linkage<internal>
// CHECK-SAME: passthrough = ["noinline"]
// The panels as one vector of floats, for the prefetches.
// CHECK: %{{.*}}, %[[OFF:.*]], %{{.*}}:3, %[[STRIDES:.*]]:3 = memref.extract_strided_metadata %[[TW]]
// CHECK: %[[FLAT:.*]] = memref.reinterpret_cast %[[TW]] to offset: [%[[OFF]]], sizes: [%{{.*}}], strides: [1]
// Successive prefetches of a whole tile are 16 floats (a line) apart, 8
// once the task has 8 row tiles (2 panels x 32 / 8 = 8 parts of the
// slices, one per row tile), 4 from 16 row tiles, ...
// CHECK: %[[NTILES:.*]] = arith.divui %{{.*}}, %c6 : index
// CHECK: %[[GE8:.*]] = arith.cmpi uge, %[[NTILES]], %c8
// CHECK: %[[S8:.*]] = arith.select %[[GE8]], %c8{{.*}}, %c16 : index
// CHECK: %[[GE16:.*]] = arith.cmpi uge, %[[NTILES]], %c16
// CHECK: %[[S4:.*]] = arith.select %[[GE16]], %c4, %[[S8]] : index
// CHECK: %[[GE64:.*]] = arith.cmpi uge, %[[NTILES]], %c64
// CHECK: %[[STEP:.*]] = arith.select %[[GE64]], %c1{{.*}}, %{{.*}} : index
// CHECK: %[[PARTS:.*]] = arith.divui %c32{{.*}}, %[[STEP]] : index
// The k blocks: the first and the last known at run time; K = 0 is one
// empty block (C still gets the epilogue).
// CHECK: %[[KUB:.*]] = arith.maxui %[[TK]], %c1
// CHECK: scf.for %[[K0:.*]] = %c0{{.*}} to %[[KUB]] step %[[TKB]]
// CHECK: %[[K1:.*]] = arith.minui %{{.*}}, %[[TK]]
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[K0]], %c0
// CHECK: %[[LAST:.*]] = arith.cmpi eq, %[[K1]], %[[TK]]
// Pairs of panels: four chunks, the masks cut at N.
// CHECK: scf.for %[[P:.*]] = %[[TP0]] to %{{.*}} step %c2
// CHECK: %[[N0:.*]] = arith.muli %[[P]], %c32{{.*}} : index
// CHECK: %[[VALID:.*]] = arith.subi %[[TN]], %[[N0]] : index
// CHECK: %[[R0:.*]] = arith.subi %[[VALID]], %c0{{.*}} : index
// CHECK-NEXT: %[[M0:.*]] = vector.create_mask %[[R0]] : vector<16xi1>
// CHECK-NEXT: %[[COL0:.*]] = arith.addi %[[N0]], %c0{{.*}} : index
// CHECK: %[[R1:.*]] = arith.subi %[[VALID]], %c16{{.*}} : index
// CHECK-NEXT: %[[M1:.*]] = vector.create_mask %[[R1]] : vector<16xi1>
// CHECK-NEXT: %[[COL1:.*]] = arith.addi %[[N0]], %c16{{.*}} : index
// CHECK: %[[P1:.*]] = arith.addi %[[P]], %c1{{.*}} : index
// CHECK: %[[B0:.*]] = vector.maskedload %[[TB]][%[[COL0]]], %[[M0]]
// CHECK: %[[B1:.*]] = vector.maskedload %[[TB]][%[[COL1]]], %[[M1]]
// CHECK: vector.maskedload %[[TB]]
// CHECK: vector.maskedload %[[TB]]
// The row tiles: 6 rows, or 5 where every tile can have 6 or 5 (ceil(R / 6)
// tiles, 6 x tiles - R of them a row short: M = 128 is 18 of 6 and 4 of 5).
// CHECK: %[[NT:.*]] = arith.ceildivui %[[ROWS:.*]], %c6{{.*}} : index
// CHECK-NEXT: %[[NT6:.*]] = arith.muli %[[NT]], %c6{{.*}} : index
// CHECK-NEXT: %[[SHORT:.*]] = arith.subi %[[NT6]], %[[ROWS]] : index
// CHECK-NEXT: %[[FITS:.*]] = arith.cmpi ule, %[[SHORT]], %[[NT]] : index
// CHECK-NEXT: %[[NWHOLE:.*]] = arith.subi %[[NT]], %[[SHORT]] : index
// CHECK-NEXT: %[[WROWS:.*]] = arith.muli %[[NWHOLE]], %c6{{.*}} : index
// CHECK-NEXT: %[[SPLIT:.*]] = arith.addi %[[TM0]], %[[WROWS]] : index
// CHECK-NEXT: %[[END6:.*]] = arith.select %[[FITS]], %[[SPLIT]], %{{.*}} : index
// The accumulators start at zero; C's partial sums are added after the k
// loop.
// CHECK: scf.for %{{.*}} = %[[TM0]] to %[[END6]] step %c6
// Row tile t prefetches part t mod (2 x parts): a panel (at most the last)
// and a part of its window of the block's depth, whose first k row is
// clamped once per tile (not per step) so that the window ends within K.
// CHECK: %[[UNITS2:.*]] = arith.muli %[[PARTS]], %c2{{.*}} : index
// CHECK: %[[U:.*]] = arith.remui %{{.*}}, %[[UNITS2]] : index
// CHECK: %[[PQ:.*]] = arith.divui %[[U]], %[[PARTS]] : index
// CHECK: %[[PQ1:.*]] = arith.addi %{{.*}}, %[[PQ]] : index
// CHECK: %[[PFQ:.*]] = arith.minui %[[PQ1]], %{{.*}} : index
// CHECK: %[[PART:.*]] = arith.remui %[[U]], %[[PARTS]] : index
// CHECK: %[[DEPTH:.*]] = arith.subi %[[K1]], %[[K0]] : index
// CHECK: %[[ROOM:.*]] = arith.subi %{{.*}}, %[[DEPTH]] : index
// CHECK: %[[PFK0:.*]] = arith.minui %{{.*}}, %[[ROOM]] : index
// CHECK: %[[QOFF:.*]] = arith.muli %[[PFQ]], %[[STRIDES]]#0 : index
// CHECK: %[[KOFF:.*]] = arith.muli %[[PFK0]], %c32{{.*}} : index
// CHECK: %[[WOFF:.*]] = arith.addi %[[QOFF]], %[[KOFF]] : index
// CHECK: %[[POFF:.*]] = arith.muli %[[PART]], %[[DEPTH]] : index
// CHECK: %[[POFF1:.*]] = arith.muli %[[POFF]], %[[STEP]] : index
// CHECK: %[[PF0:.*]] = arith.addi %[[WOFF]], %[[POFF1]] : index
// Then the next row tile's six rows of A (at most the block's last row),
// their first 4 lines in the block (64 k, at most the block's end), into
// L2.
// CHECK: %[[AROW:.*]] = arith.addi %{{.*}}, %c6{{.*}} : index
// CHECK-NEXT: arith.minui %[[AROW]], %{{.*}} : index
// CHECK: %[[AK64:.*]] = arith.addi %[[K0]], %c64{{.*}} : index
// CHECK-NEXT: %[[AKEND:.*]] = arith.minui %[[K1]], %[[AK64]] : index
// CHECK: scf.for %[[AK:.*]] = %[[K0]] to %[[AKEND]] step %c16
// CHECK-NEXT: memref.prefetch %[[TA]][%{{.*}}, %[[AK]]], read, locality<2>, data
// CHECK-COUNT-5: memref.prefetch %[[TA]][%{{.*}}, %[[AK]]], read, locality<2>, data
// Each k step of a whole register tile prefetches the slices the task reads
// next into L2, at an index carried through the loop: PF0 first, STEP
// floats further each step.
// The k loop in groups of 4 steps (AVX-512's kUnroll) while the block has
// them and the prefetches move at most a line (16 floats) per group, then
// the steps left one at a time.
// CHECK: %[[KSPAN:.*]] = arith.subi %[[K1]], %[[K0]] : index
// CHECK: %[[KGROUPS:.*]] = arith.divui %[[KSPAN]], %c4{{.*}} : index
// CHECK: %[[KWHOLE:.*]] = arith.muli %[[KGROUPS]], %c4{{.*}} : index
// CHECK: %[[KUNR:.*]] = arith.addi %[[K0]], %[[KWHOLE]] : index
// CHECK: %[[GROUPMOVE:.*]] = arith.muli %[[STEP]], %c4{{.*}} : index
// CHECK: %[[ONELINE:.*]] = arith.cmpi ule, %[[GROUPMOVE]], %c16{{.*}} : index
// CHECK: %[[KMID:.*]] = arith.select %[[ONELINE]], %[[KUNR]], %[[K0]] : index
// CHECK: %[[GROUPS:.*]]:25 = scf.for %[[KK:.*]] = %[[K0]] to %[[KMID]] step %c4{{.*}} iter_args(%{{.*}} = %[[ZERO:[a-z0-9_]+]], {{.*}}, %[[PFAT:.*]] = %[[PF0]])
// Each group of k steps of a whole register tile first prefetches a line of
// the slices the task reads next into L2, at an index carried through the
// loop (PF0 first), then moving 4 x STEP floats.
// CHECK-NEXT: memref.prefetch %[[FLAT]][%[[PFAT]]], read, locality<2>, data
// CHECK: %[[PFMOVE:.*]] = arith.muli %[[STEP]], %c4{{.*}} : index
// CHECK: %[[PFNEXT:.*]] = arith.addi %[[PFAT]], %[[PFMOVE]] : index
// CHECK: vector.load %[[TW]][%[[P]], %[[KK]], %c0{{.*}}] : memref<?x?x32xf32, strided<[?, 32, 1], offset: ?>>, vector<16xf32>
// CHECK: vector.load %[[TW]][%[[P]], %[[KK]], %c16{{.*}}] : memref<?x?x32xf32, strided<[?, 32, 1], offset: ?>>, vector<16xf32>
// CHECK: vector.load %[[TW]][%[[P1]], %[[KK]], %c0{{.*}}] : memref<?x?x32xf32, strided<[?, 32, 1], offset: ?>>, vector<16xf32>
// CHECK: vector.load %[[TW]][%[[P1]], %[[KK]], %c16{{.*}}] : memref<?x?x32xf32, strided<[?, 32, 1], offset: ?>>, vector<16xf32>
// CHECK: memref.load %[[TA]][%{{.*}}, %[[KK]]]
// CHECK-COUNT-4: math.fma
// CHECK: memref.load %[[TA]]
// CHECK-COUNT-4: math.fma
// The group's next steps: k + 1, k + 2, k + 3.
// CHECK: %[[KK1:.*]] = arith.addi %[[KK]], %c1{{.*}} : index
// CHECK: vector.load %[[TW]][%[[P]], %[[KK1]], %c0{{.*}}]
// CHECK: %[[KK3:.*]] = arith.addi %[[KK]], %c3{{.*}} : index
// CHECK: vector.load %[[TW]][%[[P1]], %[[KK3]], %c16{{.*}}]
// CHECK-COUNT-4: math.fma
// CHECK: scf.yield {{.*}}, %[[PFNEXT]] : {{.*}}, index
// CHECK: %[[ACC:.*]]:25 = scf.for %[[KR:.*]] = %[[KMID]] to %[[K1]] step %c1{{.*}} iter_args(%{{.*}} = %[[GROUPS]]#0, {{.*}}, %[[PFAT1:.*]] = %[[GROUPS]]#24)
// CHECK-NEXT: memref.prefetch %[[FLAT]][%[[PFAT1]]], read, locality<2>, data
// CHECK: %[[PFNEXT1:.*]] = arith.addi %[[PFAT1]], %[[STEP]] : index
// CHECK: vector.load %[[TW]][%[[P]], %[[KR]], %c0{{.*}}]
// CHECK-COUNT-24: math.fma
// CHECK: scf.yield {{.*}}, %[[PFNEXT1]] : {{.*}}, index
// Bias and activation only in the last block; other blocks store the
// partial sums.
// The first block does not read C (its accumulators start at zero), the
// others add C's partial sums.
// CHECK: %[[C0:.*]] = scf.if %[[FIRST]] -> (vector<16xf32>) {
// CHECK-NEXT: %[[Z0:.*]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// CHECK-NEXT: scf.yield %[[Z0]] : vector<16xf32>
// CHECK-NEXT: } else {
// CHECK: %[[L0:.*]] = vector.maskedload %[[TC]][%{{.*}}, %[[COL0]]], %[[M0]]
// CHECK-NEXT: scf.yield %[[L0]] : vector<16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[S0:.*]] = arith.addf %[[C0]], %[[ACC]]#0 : vector<16xf32>
// CHECK: scf.if %[[LAST]] {
// CHECK-NEXT: %[[Y:.*]] = arith.addf %[[S0]], %[[B0]] : vector<16xf32>
// CHECK: %[[Z:.*]] = arith.maximumf %[[Y]], %{{.*}} : vector<16xf32>
// CHECK: vector.maskedstore %[[TC]][%{{.*}}, %[[COL0]]], %[[M0]], %[[Z]]
// CHECK: } else {
// CHECK-NEXT: vector.maskedstore %[[TC]][%{{.*}}, %[[COL0]]], %[[M0]], %[[S0]]
// CHECK: %[[S1:.*]] = arith.addf %{{.*}}, %[[ACC]]#1 : vector<16xf32>
// CHECK: scf.if %[[LAST]] {
// CHECK-NEXT: %[[Y1:.*]] = arith.addf %[[S1]], %[[B1]] : vector<16xf32>
// CHECK: %[[Z1:.*]] = arith.maximumf %[[Y1]], %{{.*}} : vector<16xf32>
// CHECK: vector.maskedstore %[[TC]][%{{.*}}, %[[COL1]]], %[[M1]], %[[Z1]]
// The 5-row tiles (20 accumulators) prefetch as the 6-row ones do: the
// slices read next and the next tile's rows of A.
// CHECK: %[[END5:.*]] = arith.select %[[FITS]], %[[TM1]], %[[END6]] : index
// CHECK: scf.for %{{.*}} = %[[END6]] to %[[END5]] step %c5
// CHECK: memref.prefetch %[[TA]]
// CHECK: %{{.*}}:21 = scf.for %{{.*}} step %c4{{.*}} iter_args
// CHECK-NEXT: memref.prefetch %[[FLAT]]
// CHECK-COUNT-20: math.fma
// The rows left over: tiles of 2 rows (8 accumulators, enough to hide the
// FMA latency), then a last single row (4).
// No prefetches there; their k loops are unrolled too.
// CHECK: scf.for %{{.*}} step %c2
// CHECK: %{{.*}}:8 = scf.for %{{.*}} step %c4
// CHECK-NOT: memref.prefetch
// CHECK-COUNT-32: math.fma
// CHECK: %{{.*}}:8 = scf.for %{{.*}} step %c1
// CHECK: scf.for %{{.*}} step %c1
// CHECK: %{{.*}}:4 = scf.for %{{.*}} step %c4
// CHECK: %{{.*}}:4 = scf.for %{{.*}} step %c1
// The panel left over: a 6 x 32 tile, 12 accumulators.
// CHECK: scf.for %{{.*}} step %c1
// CHECK: %{{.*}}:12 = scf.for %{{.*}} step %c4
// CHECK-COUNT-48: math.fma
// CHECK: %{{.*}}:12 = scf.for %{{.*}} step %c1
// CHECK: %{{.*}}:4 = scf.for
// CHECK: %{{.*}}:2 = scf.for
// CHECK: return
func.func @gemm_bias_relu(%x: memref<?x?x64xf32>, %w: memref<3x64x32xf32>, %b: memref<80xf32>, %out: memref<?x?x80xf32>) {
  tfc_cpu.gemm %x, %w, %b outs(%out) activation(relu) : (memref<?x?x64xf32>, memref<3x64x32xf32>, memref<80xf32>, memref<?x?x80xf32>) -> ()
  tfc_cpu.gemm %x, %w, %b outs(%out) activation(relu) : (memref<?x?x64xf32>, memref<3x64x32xf32>, memref<80xf32>, memref<?x?x80xf32>) -> ()
  return
}

// -----

// K = 300 is deeper than a k block (128): three blocks of 100. A GEMM
// without bias or activation stores its tiles directly (no epilogue to
// choose), and gets a task function of its own.
// CHECK-LABEL: func @gemm_k_blocks
// CHECK: scf.parallel
// CHECK: func.call @[[PLAIN:__tfc_cpu_gemm_6x2x32_v16_none]](%{{.*}}, %{{.*}}, %{{.*}}, %c64{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c300{{.*}}, %c100{{.*}})
// CHECK: func.call @[[BIASED:__tfc_cpu_gemm_6x2x32_v16_relu_bias]](%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c64{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c300{{.*}}, %c100{{.*}})
// CHECK: func.func private @[[PLAIN]](
// CHECK-NOT: scf.if %{{[0-9a-z_]+}} {{[{]$}}
// CHECK: func.func private @[[BIASED]](
// CHECK: scf.if %{{[0-9a-z_]+}} {{[{]$}}
func.func @gemm_k_blocks(%x: memref<?x300xf32>, %w: memref<2x300x32xf32>, %b: memref<64xf32>, %out: memref<?x64xf32>) {
  tfc_cpu.gemm %x, %w outs(%out) : (memref<?x300xf32>, memref<2x300x32xf32>, memref<?x64xf32>) -> ()
  tfc_cpu.gemm %x, %w, %b outs(%out) activation(relu) : (memref<?x300xf32>, memref<2x300x32xf32>, memref<64xf32>, memref<?x64xf32>) -> ()
  return
}

// -----

// The k block follows the target's L1 data cache (tfc.cpu_l1d_bytes,
// KernelConfig.h kcForL1d): 32 KiB holds slices of 64 (two panels of 32
// floats x 64 x 4 bytes = 16 KiB, at most two thirds of it), so K = 300 is
// five blocks of 60; 48 KiB gives the 128 above, 96 KiB 256.
// CHECK-LABEL: func @gemm_k_blocks_l1d_32k
// CHECK: func.call @__tfc_cpu_gemm_6x2x32_v16_none(%{{.*}}, %{{.*}}, %{{.*}}, %c64{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c300{{.*}}, %c60{{.*}})
module attributes {tfc.cpu_isa = "avx512", tfc.cpu_l1d_bytes = 32768 : i64} {
  func.func @gemm_k_blocks_l1d_32k(%x: memref<?x300xf32>, %w: memref<2x300x32xf32>, %out: memref<?x64xf32>) {
    tfc_cpu.gemm %x, %w outs(%out) : (memref<?x300xf32>, memref<2x300x32xf32>, memref<?x64xf32>) -> ()
    return
  }
}

// -----

// CHECK-LABEL: func @gemm_k_blocks_l1d_96k
// CHECK: func.call @__tfc_cpu_gemm_6x2x32_v16_none(%{{.*}}, %{{.*}}, %{{.*}}, %c64{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c300{{.*}}, %c150{{.*}})
module attributes {tfc.cpu_l1d_bytes = 98304 : i64} {
  func.func @gemm_k_blocks_l1d_96k(%x: memref<?x300xf32>, %w: memref<2x300x32xf32>, %out: memref<?x64xf32>) {
    tfc_cpu.gemm %x, %w outs(%out) : (memref<?x300xf32>, memref<2x300x32xf32>, memref<?x64xf32>) -> ()
    return
  }
}

// -----

// AVX-512 streams the slices from L2 (GemmConfig::kcFromL2, kcForL2) in
// tasks of at least 16 row tiles (kDeepBlockRowTiles: blocks of 96 rows or
// more, chosen at run time): a 2 MiB L2 (tfc.cpu_l2_bytes) deepens the block
// to 512, where a task's block of A and its tile's slice, (132 rows + 64
// columns) x 512 x 4 bytes = 392 KiB, take at most a quarter of it, so K =
// 1100 is three blocks of 367 there, else the 48 KiB L1's nine of 123. A
// depth of at most two such blocks goes in one (K = 1000: one block of 1000,
// half the L2 at most); 1 MiB gives 256 (K = 1000 four blocks of 250); 512
// KiB would give 128, no deeper than the L1's: no choice left.
// CHECK-LABEL: func @gemm_k_blocks_l2_2m
// CHECK: %[[MANY:.*]] = arith.cmpi uge, %{{.*}}, %c96{{.*}} : index
// CHECK: %[[KB:.*]] = arith.select %[[MANY]], %c367{{.*}}, %c123{{.*}} : index
// CHECK: func.call @__tfc_cpu_gemm_6x2x32_v16_none(%{{.*}}, %{{.*}}, %{{.*}}, %c64{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c1100{{.*}}, %[[KB]])
module attributes {tfc.cpu_isa = "avx512", tfc.cpu_l1d_bytes = 49152 : i64, tfc.cpu_l2_bytes = 2097152 : i64} {
  func.func @gemm_k_blocks_l2_2m(%x: memref<?x1100xf32>, %w: memref<2x1100x32xf32>, %out: memref<?x64xf32>) {
    tfc_cpu.gemm %x, %w outs(%out) : (memref<?x1100xf32>, memref<2x1100x32xf32>, memref<?x64xf32>) -> ()
    return
  }
}

// -----

// CHECK-LABEL: func @gemm_k_blocks_l2_2m_one_block
// CHECK: %[[MANY:.*]] = arith.cmpi uge, %{{.*}}, %c96{{.*}} : index
// CHECK: %[[KB:.*]] = arith.select %[[MANY]], %c1000{{.*}}, %c125{{.*}} : index
// CHECK: func.call @__tfc_cpu_gemm_6x2x32_v16_none(%{{.*}}, %{{.*}}, %{{.*}}, %c64{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c1000{{.*}}, %[[KB]])
module attributes {tfc.cpu_isa = "avx512", tfc.cpu_l1d_bytes = 49152 : i64, tfc.cpu_l2_bytes = 2097152 : i64} {
  func.func @gemm_k_blocks_l2_2m_one_block(%x: memref<?x1000xf32>, %w: memref<2x1000x32xf32>, %out: memref<?x64xf32>) {
    tfc_cpu.gemm %x, %w outs(%out) : (memref<?x1000xf32>, memref<2x1000x32xf32>, memref<?x64xf32>) -> ()
    return
  }
}

// -----

// CHECK-LABEL: func @gemm_k_blocks_l2_1m
// CHECK: %[[MANY:.*]] = arith.cmpi uge, %{{.*}}, %c96{{.*}} : index
// CHECK: %[[KB:.*]] = arith.select %[[MANY]], %c250{{.*}}, %c125{{.*}} : index
// CHECK: func.call @__tfc_cpu_gemm_6x2x32_v16_none(%{{.*}}, %{{.*}}, %{{.*}}, %c64{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c1000{{.*}}, %[[KB]])
module attributes {tfc.cpu_isa = "avx512", tfc.cpu_l1d_bytes = 49152 : i64, tfc.cpu_l2_bytes = 1048576 : i64} {
  func.func @gemm_k_blocks_l2_1m(%x: memref<?x1000xf32>, %w: memref<2x1000x32xf32>, %out: memref<?x64xf32>) {
    tfc_cpu.gemm %x, %w outs(%out) : (memref<?x1000xf32>, memref<2x1000x32xf32>, memref<?x64xf32>) -> ()
    return
  }
}

// -----

// CHECK-LABEL: func @gemm_k_blocks_l2_512k
// CHECK-NOT: arith.select {{.*}}%c125
// CHECK: func.call @__tfc_cpu_gemm_6x2x32_v16_none(%{{.*}}, %{{.*}}, %{{.*}}, %c64{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c1000{{.*}}, %c125{{.*}})
module attributes {tfc.cpu_isa = "avx512", tfc.cpu_l1d_bytes = 49152 : i64, tfc.cpu_l2_bytes = 524288 : i64} {
  func.func @gemm_k_blocks_l2_512k(%x: memref<?x1000xf32>, %w: memref<2x1000x32xf32>, %out: memref<?x64xf32>) {
    tfc_cpu.gemm %x, %w outs(%out) : (memref<?x1000xf32>, memref<2x1000x32xf32>, memref<?x64xf32>) -> ()
    return
  }
}

// -----

// AVX2 keeps its block within L1 whatever the L2 (48 KiB: 256, so K = 300 is
// two blocks of 150).
// CHECK-LABEL: func @gemm_k_blocks_l2_avx2
// CHECK: func.call @__tfc_cpu_gemm_4x1x24_v8_none(%{{.*}}, %{{.*}}, %{{.*}}, %c72{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c300{{.*}}, %c150{{.*}})
module attributes {tfc.cpu_isa = "avx2", tfc.cpu_l1d_bytes = 49152 : i64, tfc.cpu_l2_bytes = 2097152 : i64} {
  func.func @gemm_k_blocks_l2_avx2(%x: memref<?x300xf32>, %w: memref<3x300x24xf32>, %out: memref<?x72xf32>) {
    tfc_cpu.gemm %x, %w outs(%out) : (memref<?x300xf32>, memref<3x300x24xf32>, memref<?x72xf32>) -> ()
    return
  }
}

// -----

// The GEMM needs an identity-layout input to view it as [M, K]: a strided
// slice is copied into a contiguous buffer first.
// CHECK-LABEL: func @gemm_strided_input
// CHECK: %[[S:.*]] = memref.subview
// CHECK: %[[TMP:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x64xf32>
// CHECK: memref.copy %[[S]], %[[TMP]] : memref<?x64xf32, strided<[128, 1], offset: 64>> to memref<?x64xf32>
// CHECK: %[[V:.*]] = memref.cast %[[TMP]] : memref<?x64xf32> to memref<?x?xf32, strided<[?, 1], offset: ?>>
// CHECK-NOT: memref.cast %[[S]]
// CHECK: func.call @__tfc_cpu_gemm_6x2x32_v16_none(%[[V]],
func.func @gemm_strided_input(%x: memref<?x128xf32>, %w: memref<1x64x32xf32>, %out: memref<?x32xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x128xf32>
  %s = memref.subview %x[0, 64] [%n, 64] [1, 1] : memref<?x128xf32> to memref<?x64xf32, strided<[128, 1], offset: 64>>
  tfc_cpu.gemm %s, %w outs(%out) : (memref<?x64xf32, strided<[128, 1], offset: 64>>, memref<1x64x32xf32>, memref<?x32xf32>) -> ()
  return
}

// -----

// The task function needs C's rows contiguous (innermost stride 1); a
// destination whose innermost stride is not 1 is refused, not assumed.
func.func @gemm_strided_out(%x: memref<?x64xf32>, %w: memref<1x64x32xf32>, %out: memref<?x32xf32, strided<[1, ?]>>) {
  // expected-error @+1 {{cannot view 'memref<?x32xf32, strided<[1, ?]>>' as 'memref<?x?xf32, strided<[?, 1], offset: ?>>' for the GEMM kernel (its innermost stride must be 1)}}
  tfc_cpu.gemm %x, %w outs(%out) : (memref<?x64xf32>, memref<1x64x32xf32>, memref<?x32xf32, strided<[1, ?]>>) -> ()
  return
}

// -----

// Packing W [80, 64] into 3 panels of 32 columns: one task per panel, each
// a call of a packing function shared by every pack of the module with the
// same NR and orientation (compiled once, not once per weight); columns past
// N = 80 are zero (the load index is clamped to stay in bounds).
// `transposed` reads the [K, N] source as [k, n].
// CHECK-LABEL: func @pack
// CHECK-SAME: (%[[W:.*]]: memref<80x64xf32>, %[[V:.*]]: memref<64x80xf32>, %[[P0:.*]]: memref<3x64x32xf32>, %[[P1:.*]]: memref<3x64x32xf32>)
// CHECK: %[[WC:.*]] = memref.cast %[[W]] : memref<80x64xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK: %[[PC:.*]] = memref.cast %[[P0]] : memref<3x64x32xf32> to memref<?x?x32xf32, strided<[?, 32, 1], offset: ?>>
// CHECK: scf.parallel (%[[PI:.*]]) = (%{{.*}}) to (%c3{{.*}}) step
// CHECK: func.call @[[PACK:__tfc_cpu_pack_nr32]](%[[WC]], %[[PC]], %[[PI]], %c80{{.*}})
// CHECK: scf.parallel
// CHECK: func.call @[[PACKT:__tfc_cpu_pack_nr32_t]](
// CHECK: return
// CHECK: func.func private @[[PACK]](%[[W2:.*]]: memref<?x?xf32, strided<[?, ?], offset: ?>>, %[[P2:.*]]: memref<?x?x32xf32, strided<[?, 32, 1], offset: ?>>, %[[PI2:.*]]: index, %[[N:.*]]: index)
// CHECK: %[[K:.*]] = memref.dim %[[P2]], %c1
// CHECK: %[[N0:.*]] = arith.muli %[[PI2]], %c32
// CHECK: scf.for %[[KK:.*]] = %{{.*}} to %[[K]]
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %c32
// CHECK: %[[COL:.*]] = arith.addi %[[N0]], %[[J]] : index
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[COL]], %[[N]] : index
// CHECK: %[[SAFE:.*]] = arith.select %[[IN]], %[[COL]], %{{.*}} : index
// CHECK: %[[L:.*]] = memref.load %[[W2]][%[[SAFE]], %[[KK]]]
// CHECK: %[[Z:.*]] = arith.select %[[IN]], %[[L]], %{{.*}} : f32
// CHECK: memref.store %[[Z]], %[[P2]][%[[PI2]], %[[KK]], %[[J]]]
// CHECK: func.func private @[[PACKT]](%[[V2:.*]]: memref<?x?xf32, strided<[?, ?], offset: ?>>,
// CHECK: memref.load %[[V2]][%{{.*}}, %{{.*}}]
func.func @pack(%w: memref<80x64xf32>, %v: memref<64x80xf32>, %p0: memref<3x64x32xf32>, %p1: memref<3x64x32xf32>) {
  tfc_cpu.pack %w outs(%p0) : (memref<80x64xf32>, memref<3x64x32xf32>) -> ()
  tfc_cpu.pack %v outs(%p1) {transposed} : (memref<64x80xf32>, memref<3x64x32xf32>) -> ()
  return
}

// -----

// The kernels are f32 only.
func.func @softmax_f64(%x: memref<?x8xf64>, %out: memref<?x8xf64>) {
  // expected-error @+1 {{the CPU kernels support f32 (attention also f16 keys and values) only; got 'memref<?x8xf64>'}}
  tfc_kernel.softmax %x outs(%out) : (memref<?x8xf64>, memref<?x8xf64>) -> ()
  return
}

// -----

// Kernels are lowered after bufferisation.
func.func @softmax_tensor(%x: tensor<4x8xf32>, %init: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{works on tensors: bufferise the module before lowering its kernels}}
  %0 = tfc_kernel.softmax %x outs(%init) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// The CPU packs the weights of its linears (tfc_cpu.gemm).
func.func @linear(%x: memref<4x8xf32>, %w: memref<16x8xf32>, %out: memref<4x16xf32>) {
  // expected-error @+1 {{has no CPU kernel of its own: convert-tfc-linear-to-cpu-gemm packs its weight for tfc_cpu.gemm}}
  tfc_kernel.linear %x, %w outs(%out) : (memref<4x8xf32>, memref<16x8xf32>, memref<4x16xf32>) -> ()
  return
}

// -----

// A K-quant qgemm with activation_block = 256 (tfc-compile
// --activation-block=256) quantises its input with one scale per 256
// (llama.cpp's Q8_K) before the same GEMM kernel.
// CHECK-LABEL: func.func @qgemm_activation_block_256
// CHECK: llvm.call @tfc_uk_quantize_rows_256(
// CHECK: llvm.call @tfc_uk_qgemm(
func.func @qgemm_activation_block_256(%x: memref<?x256xf32>, %w: memref<2x1x1184xi8>, %o: memref<?x16xf32>) {
  tfc_cpu.qgemm %x, %w format "q4_k" outs(%o) {activation_block = 256 : i64} : (memref<?x256xf32>, memref<2x1x1184xi8>, memref<?x16xf32>) -> ()
  return
}
