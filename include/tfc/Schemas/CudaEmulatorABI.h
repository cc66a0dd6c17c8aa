/*===- CudaEmulatorABI.h - CUDA kernels compiled for the host CPU ---------===*\
|*                                                                            *|
|* Part of tfc, a transformer compiler on MLIR.                               *|
|*                                                                            *|
|* `tfc-compile --target=cuda --gpu-emulate` compiles a model's kernels for   *|
|* the host CPU instead of to PTX (the pass tfc-emulate-gpu-modules), and     *|
|* libtfc_cuda_emulator.so, a CUDA driver that runs them on the CPU           *|
|* (TFC_CUDA_DRIVER), executes each launch with one fiber per GPU thread.     *|
|* Everything up to the LLVM IR of the kernels is the GPU build's own: tiles, *|
|* fragment maps, barriers, shuffles, tensor-core operations, the runtime's   *|
|* CUDA path. This header is the contract between the two: the image format, *|
|* the symbols, and the table of NVVM intrinsics the emulator implements.     *|
|* No includes, C and C++ alike.                                              *|
|*                                                                            *|
|* The image, passed to cuModuleLoadDataEx in place of PTX: the 8 bytes of    *|
|* TFC_EMU_IMAGE_MAGIC, the size of what follows as a little-endian 64-bit    *|
|* integer, then an x86-64 ELF shared object that exports                     *|
|*   - TFC_EMU_HANDLER_SYMBOL, a tfc_emu_handler_fn the driver sets before    *|
|*     any launch: every NVVM intrinsic call of the kernels goes through it;  *|
|*   - TFC_EMU_KERNEL_PREFIX<kernel>, a tfc_emu_kernel_fn per kernel, which   *|
|*     takes cuLaunchKernel's kernelParams (a pointer per parameter).         *|
|*                                                                            *|
|* An intrinsic call becomes handler(op, args, results): each argument in its *|
|* own 8-byte slot of `args` (its bytes from the slot's start, little-endian: *|
|* an i32 or float in the low 4 bytes, <2 x half> as two 16-bit halves, the   *|
|* first in the low half), each result (each field of a returned struct) in   *|
|* its own slot of `results` the same way.                                    *|
\*===----------------------------------------------------------------------===*/

#ifndef TFC_SCHEMAS_CUDAEMULATORABI_H
#define TFC_SCHEMAS_CUDAEMULATORABI_H

#define TFC_EMU_IMAGE_MAGIC "TFCEMU01"
#define TFC_EMU_IMAGE_MAGIC_BYTES 8
#define TFC_EMU_HANDLER_SYMBOL "__tfc_emu_handler"
#define TFC_EMU_KERNEL_PREFIX "__tfc_emu_kernel_"
/* Per kernel, `const unsigned long long __tfc_emu_params_<name>[]`: the
 * number of parameters, then each one's size in bytes (cuFuncGetParamInfo). */
#define TFC_EMU_PARAMS_PREFIX "__tfc_emu_params_"
/* The emulator's own export: void tfc_cuda_emulator_stats(unsigned long long
 * out[5]), the kernel launches, graph launches, kernels run by graph
 * launches, graphs instantiated and graphs updated (cuGraphExecUpdate) so
 * far (TFC_CUDA_EMULATOR_STATS prints them at exit). */
#define TFC_EMU_STATS_SYMBOL "tfc_cuda_emulator_stats"

/* The most argument and result slots of any operation below. */
#define TFC_EMU_MAX_ARGS 16
#define TFC_EMU_MAX_RESULTS 8

typedef void (*tfc_emu_handler_fn)(int op, const unsigned long long *args,
                                   unsigned long long *results);
typedef void (*tfc_emu_kernel_fn)(void **params);

/* X(ID, intrinsic name): every NVVM intrinsic the emulator implements. The
 * compiler refuses kernels that call any other, naming it. */
#define TFC_EMU_OPS(X)                                                         \
  X(TID_X, "llvm.nvvm.read.ptx.sreg.tid.x")                                    \
  X(TID_Y, "llvm.nvvm.read.ptx.sreg.tid.y")                                    \
  X(TID_Z, "llvm.nvvm.read.ptx.sreg.tid.z")                                    \
  X(NTID_X, "llvm.nvvm.read.ptx.sreg.ntid.x")                                  \
  X(NTID_Y, "llvm.nvvm.read.ptx.sreg.ntid.y")                                  \
  X(NTID_Z, "llvm.nvvm.read.ptx.sreg.ntid.z")                                  \
  X(CTAID_X, "llvm.nvvm.read.ptx.sreg.ctaid.x")                                \
  X(CTAID_Y, "llvm.nvvm.read.ptx.sreg.ctaid.y")                                \
  X(CTAID_Z, "llvm.nvvm.read.ptx.sreg.ctaid.z")                                \
  X(NCTAID_X, "llvm.nvvm.read.ptx.sreg.nctaid.x")                              \
  X(NCTAID_Y, "llvm.nvvm.read.ptx.sreg.nctaid.y")                              \
  X(NCTAID_Z, "llvm.nvvm.read.ptx.sreg.nctaid.z")                              \
  X(LANEID, "llvm.nvvm.read.ptx.sreg.laneid")                                  \
  X(WARPSIZE, "llvm.nvvm.read.ptx.sreg.warpsize")                              \
  /* bar.sync 0 over the whole block */                                        \
  X(BARRIER0, "llvm.nvvm.barrier0")                                            \
  X(BARRIER_CTA_ALL, "llvm.nvvm.barrier.cta.sync.aligned.all")                 \
  X(BARRIER_CTA_ALL_UNALIGNED, "llvm.nvvm.barrier.cta.sync.all")               \
  /* shfl.sync.<mode>.b32 (mask, value, lane/offset, clamp|segmask<<8) */      \
  X(SHFL_BFLY_I32, "llvm.nvvm.shfl.sync.bfly.i32")                             \
  X(SHFL_BFLY_F32, "llvm.nvvm.shfl.sync.bfly.f32")                             \
  X(SHFL_IDX_I32, "llvm.nvvm.shfl.sync.idx.i32")                               \
  X(SHFL_IDX_F32, "llvm.nvvm.shfl.sync.idx.f32")                               \
  X(SHFL_UP_I32, "llvm.nvvm.shfl.sync.up.i32")                                 \
  X(SHFL_UP_F32, "llvm.nvvm.shfl.sync.up.f32")                                 \
  X(SHFL_DOWN_I32, "llvm.nvvm.shfl.sync.down.i32")                             \
  X(SHFL_DOWN_F32, "llvm.nvvm.shfl.sync.down.f32")                             \
  /* ... and the same returning {value, in-range predicate} */                 \
  X(SHFL_BFLY_I32P, "llvm.nvvm.shfl.sync.bfly.i32p")                           \
  X(SHFL_BFLY_F32P, "llvm.nvvm.shfl.sync.bfly.f32p")                           \
  X(SHFL_IDX_I32P, "llvm.nvvm.shfl.sync.idx.i32p")                             \
  X(SHFL_IDX_F32P, "llvm.nvvm.shfl.sync.idx.f32p")                             \
  X(SHFL_UP_I32P, "llvm.nvvm.shfl.sync.up.i32p")                               \
  X(SHFL_UP_F32P, "llvm.nvvm.shfl.sync.up.f32p")                               \
  X(SHFL_DOWN_I32P, "llvm.nvvm.shfl.sync.down.i32p")                           \
  X(SHFL_DOWN_F32P, "llvm.nvvm.shfl.sync.down.f32p")                           \
  /* mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.f32: A 4 regs,           \
   * B 2 regs, C 4 f32 -> D 4 f32 */                                           \
  X(MMA_M16N8K16_F16_F32, "llvm.nvvm.mma.m16n8k16.row.col.f32.f32")            \
  X(MMA_M16N8K16_BF16_F32, "llvm.nvvm.mma.m16n8k16.row.col.bf16")              \
  /* mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 */                     \
  X(MMA_M16N8K8_TF32_F32, "llvm.nvvm.mma.m16n8k8.row.col.tf32")                \
  /* cvt.rna.tf32.f32 */                                                       \
  X(F2TF32_RNA, "llvm.nvvm.f2tf32.rna")                                        \
  /* ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16 (row address)      \
   * -> 1, 2 or 4 i32 */                                                       \
  X(LDMATRIX_X1, "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x1.b16.p3")             \
  X(LDMATRIX_X2, "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x2.b16.p3")             \
  X(LDMATRIX_X4, "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16.p3")             \
  X(LDMATRIX_X1_TRANS, "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x1.trans.b16.p3") \
  X(LDMATRIX_X2_TRANS, "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x2.trans.b16.p3") \
  X(LDMATRIX_X4_TRANS, "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.trans.b16.p3") \
  /* cp.async.{ca,cg}.shared.global [dst], [src], bytes[, src bytes] (the      \
   * rest zero-filled): a thread's copies land at its cp.async.wait_group */   \
  X(CP_ASYNC_CA_4, "llvm.nvvm.cp.async.ca.shared.global.4")                    \
  X(CP_ASYNC_CA_8, "llvm.nvvm.cp.async.ca.shared.global.8")                    \
  X(CP_ASYNC_CA_16, "llvm.nvvm.cp.async.ca.shared.global.16")                  \
  X(CP_ASYNC_CG_16, "llvm.nvvm.cp.async.cg.shared.global.16")                  \
  X(CP_ASYNC_CA_4_S, "llvm.nvvm.cp.async.ca.shared.global.4.s")                \
  X(CP_ASYNC_CA_8_S, "llvm.nvvm.cp.async.ca.shared.global.8.s")                \
  X(CP_ASYNC_CA_16_S, "llvm.nvvm.cp.async.ca.shared.global.16.s")              \
  X(CP_ASYNC_CG_16_S, "llvm.nvvm.cp.async.cg.shared.global.16.s")              \
  X(CP_ASYNC_COMMIT_GROUP, "llvm.nvvm.cp.async.commit.group")                  \
  X(CP_ASYNC_WAIT_GROUP, "llvm.nvvm.cp.async.wait.group")                      \
  X(CP_ASYNC_WAIT_ALL, "llvm.nvvm.cp.async.wait.all")

enum tfc_emu_op {
#define TFC_EMU_OP_ENUM(id, name) TFC_EMU_##id,
  TFC_EMU_OPS(TFC_EMU_OP_ENUM)
#undef TFC_EMU_OP_ENUM
      TFC_EMU_OP_COUNT
};

static const char *const tfc_emu_op_names[] = {
#define TFC_EMU_OP_NAME(id, name) name,
    TFC_EMU_OPS(TFC_EMU_OP_NAME)
#undef TFC_EMU_OP_NAME
};

#endif /* TFC_SCHEMAS_CUDAEMULATORABI_H */
