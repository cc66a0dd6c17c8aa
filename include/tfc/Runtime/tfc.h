/*===- tfc.h - The C API of libtfcrt ------------------------------*- C -*-===//
 *
 * Part of tfc, a transformer compiler on MLIR.
 *
 * Loading a model compiled by `tfc-compile -o model.so`, binding its weights
 * from a .safetensors file, and running its entry points. Usable from C and
 * C++; link libtfcrt (static or shared). See docs/runtime.md.
 *
 *   tfc_model *m;
 *   if (tfc_model_load("gpt2.so", &m) != TFC_OK ||
 *       tfc_model_load_weights(m, "gpt2.safetensors") != TFC_OK) {
 *     fprintf(stderr, "%s\n", tfc_last_error());
 *     ...
 *   }
 *   int64_t ids[3] = {464, 3290, 318};
 *   tfc_tensor in = {TFC_I64, 2, {1, 3}, ids, NULL};
 *   tfc_tensor out;
 *   if (tfc_run(m, "forward", &in, 1, &out, 1) == TFC_OK) {
 *     ... out.data is float[1][3][50257] ...
 *     tfc_tensor_release(&out);
 *   }
 *   tfc_model_free(m);
 *
 * Errors: every function that can fail returns a tfc_status; on failure
 * tfc_last_error() is a message naming what is wrong (the input, weight or
 * symbol, expected and found). No function aborts on bad input.
 *
 * Threads: a model may be used from several threads; tfc_run calls on the
 * same model are serialised, calls on different models run concurrently.
 * Entry points parallelise through one process-wide thread pool
 * (TFC_NUM_THREADS, tfc_set_num_threads).
 *
 *===----------------------------------------------------------------------===*/

#ifndef TFC_RUNTIME_TFC_H
#define TFC_RUNTIME_TFC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define TFC_API __attribute__((visibility("default")))
#else
#define TFC_API
#endif

/* The largest tensor rank (the same as ModelABI.h's). */
#ifndef TFC_MAX_RANK
#define TFC_MAX_RANK 8
#endif

typedef enum tfc_status {
  TFC_OK = 0,
  /* A null pointer, an index out of range, a call in the wrong state (running
   * before the weights are loaded, running an inspected model). */
  TFC_ERR_INVALID_ARGUMENT = 1,
  /* A file cannot be opened, read or mapped. */
  TFC_ERR_IO = 2,
  /* Not a tfc model: dlopen failed, a symbol is missing, the metadata is
   * malformed or of another ABI version. */
  TFC_ERR_INVALID_MODEL = 3,
  /* The model was compiled for another architecture or for CPU features
   * this host lacks. */
  TFC_ERR_UNSUPPORTED_HOST = 4,
  /* The weights file is malformed or does not match the model. */
  TFC_ERR_WEIGHTS = 5,
  /* The inputs or outputs given to tfc_run do not match the entry. */
  TFC_ERR_INPUT = 6,
  TFC_ERR_OUT_OF_MEMORY = 7,
  /* The model broke its contract (an output of the wrong shape). */
  TFC_ERR_INTERNAL = 8,
  /* A generation stopped by its token callback (tfc_session_generate). */
  TFC_ERR_CANCELLED = 9,
  /* Not a status: makes every int a valid value of the enum. */
  TFC_STATUS_MAX_ENUM = 0x7FFFFFFF
} tfc_status;

/* Element types. Booleans take one byte (0 or 1). */
typedef enum tfc_dtype {
  TFC_F32 = 0,
  TFC_F64 = 1,
  TFC_F16 = 2,
  TFC_BF16 = 3,
  TFC_I64 = 4,
  TFC_I32 = 5,
  TFC_BOOL = 6,
  /* Block-quantised weights, as GGUF defines them (docs/abi.md, "Quantized
   * weights"): blocks of 32 elements (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1: 34 / 18
   * / 20 / 22 / 24 bytes) or super-blocks of 256 (the K-quants Q2_K ... Q6_K:
   * 84 / 110 / 144 / 176 / 210 bytes). Weights only: inputs and outputs never
   * have these dtypes. */
  TFC_Q8_0 = 7,
  TFC_Q4_0 = 8,
  TFC_Q4_1 = 9,
  TFC_Q5_0 = 10,
  TFC_Q5_1 = 11,
  TFC_Q2_K = 12,
  TFC_Q3_K = 13,
  TFC_Q4_K = 14,
  TFC_Q5_K = 15,
  TFC_Q6_K = 16,
  TFC_DTYPE_MAX_ENUM = 0x7FFFFFFF /* not a dtype */
} tfc_dtype;

/* "TFC_OK", "TFC_ERR_IO", ...; "f32", "bf16", "bool", "q4_1", ...; bytes per
 * element (0 for the block-quantised dtypes). Unknown values give "?" and 0. */
TFC_API const char *tfc_status_name(tfc_status status);
TFC_API const char *tfc_dtype_name(tfc_dtype dtype);
TFC_API size_t tfc_dtype_size(tfc_dtype dtype);
/* Elements and bytes of one storage block: (1, tfc_dtype_size) for plain
 * dtypes, (32, 34) for TFC_Q8_0, ... Returns 0 for unknown values. */
TFC_API int tfc_dtype_block(tfc_dtype dtype, size_t *block_elements,
                            size_t *block_bytes);

/* The message of the calling thread's last failure ("" if none). Valid until
 * the thread's next call into the API. */
TFC_API const char *tfc_last_error(void);

/*===-------------------------------------------------------------------===*
 * Models
 *===-------------------------------------------------------------------===*/

typedef struct tfc_model tfc_model;

/* Loads a compiled model: dlopen, metadata checks (ABI version, target
 * architecture and CPU features), runtime hooks. A model without weights is
 * ready to run; otherwise call tfc_model_load_weights next. */
TFC_API tfc_status tfc_model_load(const char *so_path, tfc_model **out);

/* Opens a model for introspection only: the metadata is read and checked but
 * not the host, and the model cannot run. For tools that describe models
 * compiled for other machines. */
TFC_API tfc_status tfc_model_inspect(const char *so_path, tfc_model **out);

/* Binds the weights from a checkpoint (a .safetensors file, a Hugging Face
 * directory or a .gguf) or from a packed weights file (.tfcw, written by
 * tfc_model_save_weights; recognised by its magic). Checkpoints: every weight
 * of the metadata must be present with its shape; float weights are converted
 * between f32, f64, f16 and bf16 (i32 widens to i64) and GGUF blocks
 * dequantised, other dtypes must match. Weights of the model's dtype whose
 * data is aligned to its element size in the file are used in place (the file stays
 * mapped); others are copied. Then the model's derived constants are
 * computed, and the weights only that computation read are released. A packed
 * file is mapped and used as it is: nothing is copied or computed, and
 * processes running the same model share its pages. May be called again to
 * bind other weights. On failure the previous binding (if any) stays. */
TFC_API tfc_status tfc_model_load_weights(tfc_model *model,
                                          const char *safetensors_path);

/* Writes the bound weights in the form the model reads them (the weights its
 * entries use and its derived constants) to `path`, a packed weights file for
 * this build of the model library only; written whole or not at all. CPU
 * models only. docs/runtime.md, "Memory". */
TFC_API tfc_status tfc_model_save_weights(tfc_model *model, const char *path);

/* Notes of the last successful tfc_model_load_weights, such as tensors of the
 * file the model does not use; "" if none. Valid until the next load. */
TFC_API const char *tfc_model_notes(const tfc_model *model);

/* The CPU variant a multi-versioned library runs on this host (tfc-compile
 * --cpu-variants; e.g. "x86_64_v4"), chosen at load: the first of the
 * library's variants whose target the host runs, or the one the environment
 * variable TFC_CPU_VARIANT names. "" for a library with one build. */
TFC_API const char *tfc_model_cpu_variant(const tfc_model *model);

/* Frees a model (null is allowed). Outputs already returned stay valid. */
TFC_API void tfc_model_free(tfc_model *model);

/* Threads of the process-wide pool (the caller of tfc_run included). The
 * default is TFC_NUM_THREADS if set to a positive integer, else the number
 * of hardware threads. n == 0 restores the default. Fails inside an entry
 * point. */
TFC_API tfc_status tfc_set_num_threads(int n);
TFC_API int tfc_num_threads(void);

/*===-------------------------------------------------------------------===*
 * Introspection. Strings stay valid until tfc_model_free.
 *===-------------------------------------------------------------------===*/

typedef struct tfc_model_info {
  const char *name;
  /* The target the model was compiled for: the host code's triple, CPU and
   * features, and where its kernels run ("cpu" or "cuda"). */
  const char *triple, *cpu, *features;
  size_t num_entries;
  size_t num_weights;
  uint64_t weight_bytes; /* in the model's dtypes */
  size_t num_constants;
  uint64_t constant_bytes;
  const char *device;
} tfc_model_info;

TFC_API tfc_status tfc_model_get_info(const tfc_model *model,
                                      tfc_model_info *out);

/* The metadata JSON the model exports as `tfc_model_metadata` (ModelABI.h,
 * docs/abi.md). */
TFC_API const char *tfc_model_metadata_json(const tfc_model *model);

/* An input, output or weight. */
typedef struct tfc_tensor_info {
  const char *name;
  tfc_dtype dtype;
  int32_t rank;
  /* Per dim: the static size, or -1 if dynamic. */
  int64_t dims[TFC_MAX_RANK];
  /* Per dim: the name of a named dynamic dim, else NULL. Inputs and outputs
   * sharing a name have the same size in a run. */
  const char *dim_names[TFC_MAX_RANK];
  /* Per dim: the inclusive maximum of a named dim, or -1. */
  int64_t dim_max[TFC_MAX_RANK];
  /* Integer inputs: every value must be in [0, bound); -1 if unbounded. */
  int64_t bound;
} tfc_tensor_info;

/* The entry called `name`, or -1. */
TFC_API int64_t tfc_model_find_entry(const tfc_model *model, const char *name);
/* NULL if `entry` is out of range. */
TFC_API const char *tfc_model_entry_name(const tfc_model *model, size_t entry);
/* 0 if `entry` is out of range. */
TFC_API size_t tfc_entry_num_inputs(const tfc_model *model, size_t entry);
TFC_API size_t tfc_entry_num_outputs(const tfc_model *model, size_t entry);
TFC_API tfc_status tfc_entry_input_info(const tfc_model *model, size_t entry,
                                        size_t index, tfc_tensor_info *out);
/* 1 if input `index` of `entry` is a state input (a cache a session owns
 * and passes; docs/abi.md), else 0 (also when out of range). */
TFC_API int tfc_entry_input_is_state(const tfc_model *model, size_t entry,
                                     size_t index);
TFC_API tfc_status tfc_entry_output_info(const tfc_model *model, size_t entry,
                                         size_t index, tfc_tensor_info *out);
TFC_API tfc_status tfc_model_weight_info(const tfc_model *model, size_t index,
                                         tfc_tensor_info *out);

/*===-------------------------------------------------------------------===*
 * Running
 *===-------------------------------------------------------------------===*/

/* A dense row-major tensor. */
typedef struct tfc_tensor {
  tfc_dtype dtype;
  int32_t rank;
  int64_t shape[TFC_MAX_RANK];
  /* The elements. Inputs: the caller's, read only, aligned to the element
   * size at least (else they are copied), may be NULL when there are no
   * elements. Outputs: allocated by the runtime, 64-byte aligned. */
  void *data;
  /* Outputs: what tfc_tensor_release frees. Inputs: ignored. */
  void *owner;
} tfc_tensor;

/* Runs entry `entry` (NULL: the model's only entry). `inputs` are in the
 * entry's order (tfc_entry_input_info) and are checked first: count, dtype,
 * rank, static sizes, named dims (equal where they share a name, at most
 * their max), integer bounds, booleans 0/1; a mismatch is TFC_ERR_INPUT with
 * a message naming the input, the dim or the offending element.
 * `outputs` receives num_outputs tensors (it must equal the entry's count);
 * each belongs to the caller until tfc_tensor_release, independently of the
 * model and of later runs. On failure every output is zeroed (data NULL). */
TFC_API tfc_status tfc_run(tfc_model *model, const char *entry,
                           const tfc_tensor *inputs, size_t num_inputs,
                           tfc_tensor *outputs, size_t num_outputs);

/* tfc_run into the caller's buffers: outputs[i] gives the output's dtype,
 * rank and exact shape and `data`, writable and aligned to the element
 * (owner is ignored and stays the caller's), memory that overlaps no input
 * and no other output. A wrong dtype, rank, missing data or an overlap is
 * TFC_ERR_INVALID_ARGUMENT before the run; a shape other than the
 * one the entry produces is TFC_ERR_INPUT after it. Nothing is allocated for
 * the outputs: a run whose input shapes repeat an earlier run's (a replayed
 * memory plan, e.g. every decode step) computes straight into 64-byte
 * aligned buffers (zero copy; tfc_memory_stats counts no heap allocation
 * for them); otherwise the result is copied in. CPU models compute in place;
 * CUDA models download into the buffers. */
TFC_API tfc_status tfc_run_into(tfc_model *model, const char *entry,
                                const tfc_tensor *inputs, size_t num_inputs,
                                tfc_tensor *outputs, size_t num_outputs);

/* Frees an output of tfc_run and zeroes data and owner; a zeroed tensor or
 * NULL is ignored. */
TFC_API void tfc_tensor_release(tfc_tensor *tensor);

/* How the intermediates of the last run were placed (docs/runtime.md). */
typedef enum tfc_plan_mode {
  TFC_PLAN_NONE = 0,      /* no run yet */
  TFC_PLAN_RECORDED = 1,  /* a new shape signature: allocations recorded */
  TFC_PLAN_REPLAYED = 2,  /* served from the signature's arena plan */
  TFC_PLAN_FELL_BACK = 3, /* the run left its plan: the rest went to the heap */
  TFC_PLAN_MAX_ENUM = 0x7FFFFFFF /* not a mode */
} tfc_plan_mode;

typedef struct tfc_memory_stats {
  tfc_plan_mode mode;
  /* The last run: allocations and their bytes; how many the arena served,
   * how many the heap (outputs included), how many outlived the run. */
  uint64_t allocs, alloc_bytes, arena_allocs, heap_allocs, output_allocs;
  /* The plan of the last run's signature (0 if none): the arena size, the
   * sum of the sizes it holds, and the most bytes live at once. */
  uint64_t arena_bytes, planned_bytes, peak_live_bytes;
  /* Plans cached (one per recent shape signature); arena bytes held. */
  uint64_t num_plans, arena_capacity;
  /* Weights used in place from the mapped file, copied or converted. */
  uint64_t weight_bytes_mapped, weight_bytes_copied;
} tfc_memory_stats;

/* For a CUDA model the plan is that of device memory. */
TFC_API tfc_status tfc_model_memory_stats(const tfc_model *model,
                                          tfc_memory_stats *out);

/* What a model holds resident, by kind (docs/runtime.md, "Memory"). The
 * caller sets struct_size to sizeof(tfc_resident_stats); fields past it are
 * not written, so the struct can grow. Bytes are what the model holds; pages
 * of mapped files count once touched. */
typedef struct tfc_resident_stats {
  size_t struct_size;
  /* Weights the entries read (in place from a mapped file or copied). */
  uint64_t weight_bytes;
  /* Derived constants (packed matrices, merged projections). */
  uint64_t constant_bytes;
  /* Weights only tfc_model_init read, released once it ran. */
  uint64_t released_weight_bytes;
  /* The packed weights file bound (0 when a checkpoint was bound). */
  uint64_t packed_file_bytes;
  /* The memory plan's arena (all shape signatures). */
  uint64_t arena_bytes;
} tfc_resident_stats;

TFC_API tfc_status tfc_model_resident_stats(const tfc_model *model,
                                            tfc_resident_stats *out);

/*===-------------------------------------------------------------------===*
 * Sessions: per-sequence state for generation (docs/abi.md)
 *===-------------------------------------------------------------------===*/

/* A session runs a cached entry (tfc-compile --kv-cache makes
 * `<entry>_cached`: its inputs are the entry's inputs, the scalar `past` and
 * state inputs, the key/value cache of every layer) over one batch of
 * sequences: it owns the caches, sized [batch, kv_heads, context,
 * head_size], and the position, the number of tokens of each sequence
 * already in them. Each tfc_session_run appends the tokens it is given at
 * that position and advances it; the caches are written in place (no copy
 * of the cache, no allocation per token). A session is used by one thread
 * at a time; several sessions may share one model. Free sessions before
 * their model. */
typedef struct tfc_session tfc_session;

/* Creates a session on `entry` (a cached entry) for `batch` sequences of at
 * most `context` tokens (prompt and generated). TFC_ERR_INVALID_ARGUMENT if
 * the entry has no state inputs (compile with --kv-cache) or the sizes are
 * not positive or exceed the entry's sequence bound; TFC_ERR_OUT_OF_MEMORY
 * if the caches cannot be allocated. On a CUDA model the caches are device
 * memory: only the caller's inputs and the outputs cross to and from the
 * host each run. */
TFC_API tfc_status tfc_session_create(tfc_model *model, const char *entry,
                                      int64_t batch, int64_t context,
                                      tfc_session **out);

/* The entry's inputs other than `past` and the states, in the entry's order
 * (tfc_session_num_inputs / tfc_session_input_name), e.g. input_ids
 * [batch, seq]: the tokens at positions [position, position + seq). The
 * outputs are as tfc_run's. A run that would pass `context` tokens is
 * TFC_ERR_INPUT and changes nothing. */
TFC_API tfc_status tfc_session_run(tfc_session *session,
                                   const tfc_tensor *inputs, size_t num_inputs,
                                   tfc_tensor *outputs, size_t num_outputs);
/* tfc_session_run_padded (keep NULL: no padding) into the caller's
 * buffers, as tfc_run_into: decode steps, whose shapes repeat, write their
 * logits straight into the caller's buffer. */
TFC_API tfc_status tfc_session_run_into(tfc_session *session,
                                        const tfc_tensor *inputs,
                                        size_t num_inputs,
                                        const int64_t *keep,
                                        tfc_tensor *outputs,
                                        size_t num_outputs);

/* Generation in the runtime: sampling parameters (transformers' logits
 * processors, in its order; Sampler.h) and the end of a generation. Set
 * struct_size to sizeof(tfc_generate_params) (tfc_generate_params_init does,
 * with the defaults: 64 new tokens, greedy); fields past it keep their
 * defaults, so the struct can grow. */
typedef struct tfc_generate_params {
  size_t struct_size;
  /* Tokens to generate at most (>= 1). */
  int64_t max_new_tokens;
  /* 0: greedy. Otherwise > 0, with top_k (0: off), top_p in (0, 1], min_p in
   * [0, 1), repetition_penalty > 0 (1: off) and the seed of the draws. */
  double temperature;
  int64_t top_k;
  double top_p, min_p, repetition_penalty;
  uint64_t seed;
  /* Generation ends after any of these ids (it is kept in the output). */
  const int64_t *eos_ids;
  size_t num_eos_ids;
} tfc_generate_params;

TFC_API void tfc_generate_params_init(tfc_generate_params *params);

/* Called with each generated token as it is decided (streaming); a non-zero
 * return stops the generation: tfc_session_generate then returns
 * TFC_ERR_CANCELLED. */
typedef int (*tfc_token_callback)(void *user, int64_t token);

/* Feeds `prompt` (appended at the session's position) and generates up to
 * params->max_new_tokens tokens into generated[0 .. *num_generated), for a
 * session of batch 1 whose entry takes the token ids (and masks along
 * them). Stops after an EOS id, at max_new_tokens, when the context is full
 * (TFC_OK: fewer tokens), or when on_token (may be NULL) returns non-zero
 * (TFC_ERR_CANCELLED). The session then holds the prompt and the generated
 * tokens but the last (give it first in the next call's prompt to go on).
 * The repetition penalty sees this call's prompt and tokens. Invalid parameters,
 * capacity < max_new_tokens or a prompt that does not fit are
 * TFC_ERR_INVALID_ARGUMENT / TFC_ERR_INPUT before anything runs. */
TFC_API tfc_status tfc_session_generate(tfc_session *session,
                                        const int64_t *prompt,
                                        size_t prompt_len,
                                        const tfc_generate_params *params,
                                        tfc_token_callback on_token,
                                        void *user, int64_t *generated,
                                        size_t capacity,
                                        size_t *num_generated);

/* A generation step by step, for callers that hand each token on as it comes
 * (an iterator, a server streaming to a client): tfc_session_generate is a
 * loop over tfc_generation_next.
 *
 *   tfc_generation *g;
 *   tfc_generation_start(session, prompt, n, &params, &g);
 *   tfc_stop_reason why = TFC_STOP_NONE;
 *   while (why == TFC_STOP_NONE) {
 *     int64_t token;
 *     if (tfc_generation_next(g, &token, &why) != TFC_OK) break;
 *     ... token ...
 *   }
 *   tfc_generation_free(g);
 *
 * Stopping early is freeing the generation. The session must outlive it;
 * other runs of the session between steps change what it continues from. */
typedef struct tfc_generation tfc_generation;

/* Why a generation ended (given with its last token). */
typedef enum tfc_stop_reason {
  TFC_STOP_NONE = 0,    /* not ended: call tfc_generation_next again */
  TFC_STOP_EOS = 1,     /* the token is one of params->eos_ids */
  TFC_STOP_LENGTH = 2,  /* the token is the max_new_tokens-th */
  TFC_STOP_CONTEXT = 3, /* the session's context is full after this token */
  TFC_STOP_REASON_MAX_ENUM = 0x7FFFFFFF /* not a reason */
} tfc_stop_reason;

/* Checks the arguments as tfc_session_generate does (capacity aside) and
 * makes *out; nothing runs yet. params (and its eos_ids) are copied. */
TFC_API tfc_status tfc_generation_start(tfc_session *session,
                                        const int64_t *prompt,
                                        size_t prompt_len,
                                        const tfc_generate_params *params,
                                        tfc_generation **out);

/* Runs one step (the prompt first, then the last token) and decides the next
 * token into *token, with *reason TFC_STOP_NONE or why the generation ends
 * with it. Once ended, further calls give *token = -1 and the same reason. */
TFC_API tfc_status tfc_generation_next(tfc_generation *generation,
                                       int64_t *token, tfc_stop_reason *reason);

/* Tokens generated so far (0 for NULL). */
TFC_API int64_t tfc_generation_num_tokens(const tfc_generation *generation);

TFC_API void tfc_generation_free(tfc_generation *generation);

/* Runs another entry of the model on this session's states: one whose
 * state inputs the session holds and that has no `past`, such as the
 * `<entry>_cross` that --kv-cache makes for encoder-decoder models (it
 * computes every decoder layer's cross-attention keys and values from the
 * encoder's output once per source; the cached entry then reads them each
 * step). States over dims the session does not know (the source length)
 * are sized here from the inputs, and made anew when that size changes.
 * The position does not move. `entry` may also be the session's own entry
 * (then this is tfc_session_run). */
TFC_API tfc_status tfc_session_run_entry(tfc_session *session,
                                         const char *entry,
                                         const tfc_tensor *inputs,
                                         size_t num_inputs,
                                         tfc_tensor *outputs,
                                         size_t num_outputs);

/* Reorders the sequences of the batch: sequence i continues what sequence
 * rows[i] was (every state row is copied; rows[] may repeat an index), as
 * beam search does when it keeps some beams and drops others. num_rows must
 * be the session's batch. */
TFC_API tfc_status tfc_session_reorder(tfc_session *session,
                                       const int64_t *rows, size_t num_rows);

/* tfc_session_run for a batch of sequences of different lengths, padded on
 * the left to one length: keep[b * seq + t] is 1 for a token and 0 for
 * padding (batch x seq, the tokens this run adds). Attention never looks at
 * padding, so each sequence computes what it would alone. Needs an entry
 * with relative positions only (RoPE, or none): such cached entries have the
 * state `cache.bias` (tfc_session_can_pad); entries with learned or
 * sinusoidal positions refuse (padding would shift them). keep NULL: all
 * tokens. */
TFC_API tfc_status tfc_session_run_padded(tfc_session *session,
                                          const tfc_tensor *inputs,
                                          size_t num_inputs,
                                          const int64_t *keep,
                                          tfc_tensor *outputs,
                                          size_t num_outputs);
/* Rows at their own positions, as a server batches requests: runs rows
 * [first, first + num_rows) of the session's batch together, row i continuing
 * at positions[i] (the tokens already in its cache; the caller, a
 * scheduler, keeps each row's). The inputs have num_rows rows (input_ids
 * [num_rows, seq]); the outputs are the caller's buffers, as
 * tfc_session_run_into's. Several rows need the rows form of the entry
 * (tfc-compile --kv-cache --kv-cache-rows makes <entry>_rows where the
 * model allows: not with sliding windows, learned positions, cached masks or
 * cross-attention); one row runs the cached entry itself (a prompt joining,
 * or any row of a model without a rows form: rolling caches included).
 * A row computes what it would alone, whatever the others' positions; the
 * session's own position is neither used nor changed. Each row's tokens
 * must fit: positions[i] + seq <= context (TFC_ERR_INPUT, nothing run). */
TFC_API tfc_status tfc_session_run_rows(tfc_session *session, int64_t first,
                                        int64_t num_rows,
                                        const int64_t *positions,
                                        const tfc_tensor *inputs,
                                        size_t num_inputs, tfc_tensor *outputs,
                                        size_t num_outputs);

/* 1 if tfc_session_run_rows runs several rows of this session together (its
 * model has the rows form of the session's entry), else 0: then it runs one
 * row at a time. */
TFC_API int tfc_session_can_run_rows(const tfc_session *session);

/* 1 if tfc_session_run_padded accepts padding on this session, else 0. */
TFC_API int tfc_session_can_pad(const tfc_session *session);

TFC_API size_t tfc_session_num_inputs(const tfc_session *session);
TFC_API const char *tfc_session_input_name(const tfc_session *session,
                                           size_t index);

/* Tokens in the caches; the capacity given at creation. */
TFC_API int64_t tfc_session_position(const tfc_session *session);
TFC_API int64_t tfc_session_context(const tfc_session *session);

/* Moves the position back to `position` (0 starts a new sequence; a smaller
 * value drops the last tokens, e.g. to regenerate them). Rows past the
 * position are never read, so nothing is cleared. A model with sliding-window
 * attention keeps only the last W positions of its caches (a rolling
 * buffer): there the position can go back to 0 or by one token (more while
 * fewer than W tokens are held); further is TFC_ERR_INVALID_ARGUMENT. */
TFC_API tfc_status tfc_session_rewind(tfc_session *session, int64_t position);

/* Bytes of state (the caches) the session holds. */
TFC_API uint64_t tfc_session_state_bytes(const tfc_session *session);

TFC_API void tfc_session_free(tfc_session *session);

/* Models compiled with --target=cuda: the GPU time of the last run's entry
 * point in milliseconds (CUDA events around its kernels; the copies of
 * inputs and outputs are not included). TFC_ERR_INVALID_ARGUMENT for a CPU
 * model or before the first run. */
TFC_API tfc_status tfc_model_last_device_ms(const tfc_model *model,
                                            double *out);

/*===-------------------------------------------------------------------===*
 * Tokenizers
 *
 * Hugging Face tokenizer.json files (WordPiece, BPE, WordLevel models with
 * their normalizers, pre-tokenizers, post-processors and decoders), with the
 * ids Hugging Face `tokenizers` gives. See docs/runtime.md.
 *
 *   tfc_tokenizer *tok;
 *   if (tfc_tokenizer_load("all-MiniLM-L6-v2/", &tok) != TFC_OK) ...
 *   size_t n;
 *   tfc_tokenizer_encode(tok, text, strlen(text), 1, NULL, 0, &n);
 *   int64_t *ids = malloc(n * sizeof(int64_t));
 *   tfc_tokenizer_encode(tok, text, strlen(text), 1, ids, n, &n);
 *
 * A tokenizer may be used from several threads at once (not while
 * tfc_tokenizer_set_truncation/_padding runs). A malformed or unsupported
 * file is TFC_ERR_INVALID_MODEL with a message naming the file, the JSON key
 * path and what was expected; text that is not UTF-8 and ids outside the
 * vocabulary are TFC_ERR_INPUT.
 *===-------------------------------------------------------------------===*/

typedef struct tfc_tokenizer tfc_tokenizer;

/* Loads a tokenizer.json file, the tokenizer.json of a directory, or the
 * tokenizer.ggml.* metadata of a .gguf file (recognised by its magic). */
TFC_API tfc_status tfc_tokenizer_load(const char *path, tfc_tokenizer **out);

/* Frees a tokenizer (null is allowed). Decode streams made from it must be
 * freed first. */
TFC_API void tfc_tokenizer_free(tfc_tokenizer *tokenizer);

/* Encodes `len` bytes of UTF-8 `text` (NULL with len 0 is the empty text).
 * With add_special_tokens the post-processor's tokens are added ([CLS] ...
 * [SEP], BOS); the file's truncation and padding apply (see
 * tfc_tokenizer_set_truncation and _padding). *n_out receives the number of
 * ids. ids_out may be NULL to ask for the size only; otherwise it receives
 * the ids if cap is enough, and TFC_ERR_INVALID_ARGUMENT (with *n_out set)
 * says that it is not. */
TFC_API tfc_status tfc_tokenizer_encode(const tfc_tokenizer *tokenizer,
                                        const char *text, size_t len,
                                        int add_special_tokens,
                                        int64_t *ids_out, size_t cap,
                                        size_t *n_out);

/* As tfc_tokenizer_encode, and also the type ids (0 for the first sequence,
 * 1 for the second, as the post-processor sets them) and the attention mask
 * (1 for tokens, 0 for padding) in arrays of `cap` elements; each of the
 * three arrays may be NULL. */
TFC_API tfc_status tfc_tokenizer_encode_with_masks(
    const tfc_tokenizer *tokenizer, const char *text, size_t len,
    int add_special_tokens, int64_t *ids_out, int64_t *type_ids_out,
    int64_t *attention_mask_out, size_t cap, size_t *n_out);

/* Decodes `n` ids to UTF-8 text; special tokens are dropped with
 * skip_special_tokens. *len_out receives the length in bytes (without the
 * terminating NUL). text_out may be NULL to ask for the size only;
 * otherwise it needs len + 1 bytes (cap) and receives NUL-terminated text,
 * else TFC_ERR_INVALID_ARGUMENT. An id outside the vocabulary is
 * TFC_ERR_INPUT. */
TFC_API tfc_status tfc_tokenizer_decode(const tfc_tokenizer *tokenizer,
                                        const int64_t *ids, size_t n,
                                        int skip_special_tokens,
                                        char *text_out, size_t cap,
                                        size_t *len_out);

/* The id of a token string (NUL-terminated, as stored in the vocabulary:
 * "##ing", "Ġthe", "<|im_start|>"); TFC_ERR_INVALID_ARGUMENT if absent. */
TFC_API tfc_status tfc_tokenizer_token_to_id(const tfc_tokenizer *tokenizer,
                                             const char *token,
                                             int64_t *id_out);

/* The token string of an id, valid until tfc_tokenizer_free; its length in
 * *len_out (may be NULL). TFC_ERR_INVALID_ARGUMENT for an unknown id. */
TFC_API tfc_status tfc_tokenizer_id_to_token(const tfc_tokenizer *tokenizer,
                                             int64_t id, const char **token_out,
                                             size_t *len_out);

/* One past the largest id (model vocabulary and added tokens); 0 for NULL. */
TFC_API size_t tfc_tokenizer_vocab_size(const tfc_tokenizer *tokenizer);

/* Truncation: at most max_length ids per encoding, special tokens included
 * (the longest-first strategy, from the right); 0 turns it off. Replaces
 * the file's setting. */
TFC_API tfc_status tfc_tokenizer_set_truncation(tfc_tokenizer *tokenizer,
                                                size_t max_length);

/* Padding of each encoding to `length` ids (at most 2^20) with the pad id
 * (the file's, else the id of "[PAD]", "<pad>" or 0); 0 turns it off.
 * Replaces the file's setting. */
TFC_API tfc_status tfc_tokenizer_set_padding(tfc_tokenizer *tokenizer,
                                             size_t length);

/* What padding writes (for callers that pad a batch themselves): the pad
 * id and type id, and whether padding goes on the left (*left = 1), as the
 * tokenizer's padding is set (the file's, or tfc_tokenizer_set_padding's),
 * else the id of "[PAD]" or "<pad>" (else 0), type 0, on the right. Any
 * output may be NULL. */
TFC_API tfc_status tfc_tokenizer_pad_ids(const tfc_tokenizer *tokenizer,
                                         int64_t *pad_id, int64_t *pad_type_id,
                                         int *left);

/* Incremental decoding for streaming generation: feed ids one at a time and
 * get the text that is final, never a partial UTF-8 character (bytes of an
 * incomplete character are held until it completes), with the spacing of
 * tfc_tokenizer_decode. */
typedef struct tfc_decode_stream tfc_decode_stream;

TFC_API tfc_status tfc_decode_stream_create(const tfc_tokenizer *tokenizer,
                                            int skip_special_tokens,
                                            tfc_decode_stream **out);

/* Feeds one id. *text_out receives the new text (possibly "", never NULL on
 * success), NUL-terminated and valid until the next call on the stream; its
 * length in *len_out (may be NULL). */
TFC_API tfc_status tfc_decode_stream_feed(tfc_decode_stream *stream,
                                          int64_t id, const char **text_out,
                                          size_t *len_out);

/* Ends the stream: the text still held (an incomplete character comes out
 * as U+FFFD). The stream can then start again. */
TFC_API tfc_status tfc_decode_stream_finish(tfc_decode_stream *stream,
                                            const char **text_out,
                                            size_t *len_out);

TFC_API void tfc_decode_stream_free(tfc_decode_stream *stream);

/*===- Chat templates and end-of-sequence ids -----------------------------===
 *
 * A checkpoint's chat template (Jinja, as transformers renders it) turns a
 * conversation into the prompt text; tokenise that text without added
 * special tokens (the template writes them). Errors name the file and key
 * or the template's line:col.
 *===-------------------------------------------------------------------===*/

typedef struct tfc_chat_template tfc_chat_template;

/* The template of a checkpoint: `tokenizer.chat_template` of a .gguf, or of
 * a Hugging Face directory chat_template.jinja, chat_template.json or
 * tokenizer_config.json's "chat_template", with its bos/eos tokens; any
 * other file is the template itself. TFC_ERR_INVALID_MODEL when the
 * checkpoint has none or it does not parse. */
TFC_API tfc_status tfc_chat_template_load(const char *checkpoint_path,
                                          tfc_chat_template **out);

/* A template from its source text, with the values of bos_token and
 * eos_token (NULL: undefined). A syntax error is TFC_ERR_INPUT. */
TFC_API tfc_status tfc_chat_template_parse(const char *source,
                                           const char *bos_token,
                                           const char *eos_token,
                                           tfc_chat_template **out);

TFC_API void tfc_chat_template_free(tfc_chat_template *tmpl);

/* Renders with the variables of a JSON object, typically
 * {"messages": [{"role": "user", "content": "..."}, ...],
 *  "add_generation_prompt": true} (bos_token and eos_token are added unless
 * given). *len_out receives the length in bytes; text_out may be NULL to ask
 * for the size only, else it needs len + 1 bytes (cap). Malformed JSON or an
 * error the template raises is TFC_ERR_INPUT. */
TFC_API tfc_status tfc_chat_template_render(const tfc_chat_template *tmpl,
                                            const char *context_json,
                                            char *text_out, size_t cap,
                                            size_t *len_out);

/* The ids that end an assistant turn of this template (its eos_token, and
 * the special token that follows an assistant message, such as SmolLM2's
 * <|im_end|>), for a chat's tfc_generate_params.eos_ids besides
 * tfc_checkpoint_eos_ids. Two-call pattern as tfc_tokenizer_encode. */
TFC_API tfc_status tfc_chat_template_stop_ids(const tfc_chat_template *tmpl,
                                              const tfc_tokenizer *tokenizer,
                                              int64_t *ids_out, size_t cap,
                                              size_t *n_out);

/* The ids that end a generation as a checkpoint states them (GGUF
 * tokenizer.ggml.eos_token_id / eot_token_id; eos_token_id of
 * generation_config.json, else config.json, of a Hugging Face directory),
 * else the tokenizer's usual end-of-text tokens (tokenizer may be NULL),
 * else none. Two-call pattern as tfc_tokenizer_encode. */
TFC_API tfc_status tfc_checkpoint_eos_ids(const char *path,
                                          const tfc_tokenizer *tokenizer,
                                          int64_t *ids_out, size_t cap,
                                          size_t *n_out);

#ifdef __cplusplus
}
#endif

#endif /* TFC_RUNTIME_TFC_H */
