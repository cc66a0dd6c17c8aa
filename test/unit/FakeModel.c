/*===- FakeModel.c - A hand-written model library for the runtime's tests -===//
 *
 * Part of tfc, a transformer compiler on MLIR.
 *
 * Exports the ABI of ModelABI.h by hand, as tfc-compile's CPU backend will,
 * so that the loader, weight binding, input checks, memory planner and
 * thread pool can be tested without the compiler. Weights: "alpha" (f32
 * scalar) and "emb.weight" (f32 [5, 3]); one derived constant (alpha + 1,
 * computed by tfc_model_init). Entries:
 *
 *   scale(x: f32 [batch, n]) -> y: f32 [batch, n]
 *       y = x * alpha + (alpha + 1), through two temporaries, a
 *       parallel_for over rows, and a scratch buffer inside each chunk.
 *   embed(ids: i64 [batch, seq] bound 5, mask: bool [batch, seq])
 *       -> out: f32 [batch, seq, 3], kept: i64 [?]
 *       out[b, s] = mask ? emb[ids[b, s]] : 0; kept[b] = sum of mask[b]
 *       (returned as a strided view, which the runtime must copy).
 *   table() -> w: f32 [5, 3]
 *       returns the weight itself (not a hook allocation: copied).
 *   bad() -> z: f32 [3]
 *       returns a [2] tensor: a broken contract the runtime must catch.
 *
 * Built three times: as is, with TFC_FAKE_ABI=2 (another ABI version), and
 * with TFC_FAKE_GHOST (an entry whose symbol is not exported).
 *
 *===----------------------------------------------------------------------===*/

#include "tfc/Schemas/ModelABI.h"

#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

#if defined(__x86_64__)
#define ARCH "x86_64"
#elif defined(__aarch64__)
#define ARCH "aarch64"
#else
#define ARCH "unknown"
#endif

#ifndef TFC_FAKE_ABI
#define TFC_FAKE_ABI "1"
#endif

#ifdef TFC_FAKE_GHOST
#define GHOST_ENTRY                                                            \
  ", {\"name\": \"ghost\", \"symbol\": \"tfc_entry_ghost\", \"inputs\": [], "  \
  "\"outputs\": []}"
#else
#define GHOST_ENTRY ""
#endif

EXPORT const char tfc_model_metadata[] =
    "{\"abi\": " TFC_FAKE_ABI ", \"model\": \"fake\",\n"
    " \"target\": {\"triple\": \"" ARCH "-unknown-linux-gnu\", "
    "\"cpu\": \"generic\", \"features\": \"+prefer-256-bit\"},\n"
    " \"dims\": [{\"name\": \"batch\"}, {\"name\": \"n\", \"max\": 16},"
    " {\"name\": \"seq\", \"max\": 8}],\n"
    " \"weights\": [{\"name\": \"alpha\", \"dtype\": \"f32\", \"shape\": []},"
    " {\"name\": \"emb.weight\", \"dtype\": \"f32\", \"shape\": [5, 3]}],\n"
    " \"constants\": [{\"bytes\": 4, \"align\": 64}],\n"
    " \"entries\": [\n"
    "  {\"name\": \"scale\", \"symbol\": \"tfc_entry_scale\",\n"
    "   \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": "
    "[\"batch\", \"n\"]}],\n"
    "   \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": "
    "[\"batch\", \"n\"]}]},\n"
    "  {\"name\": \"embed\", \"symbol\": \"tfc_entry_embed\",\n"
    "   \"inputs\": [{\"name\": \"ids\", \"dtype\": \"i64\", \"shape\": "
    "[\"batch\", \"seq\"], \"bound\": 5},\n"
    "              {\"name\": \"mask\", \"dtype\": \"bool\", \"shape\": "
    "[\"batch\", \"seq\"]}],\n"
    "   \"outputs\": [{\"name\": \"out\", \"dtype\": \"f32\", \"shape\": "
    "[\"batch\", \"seq\", 3]},\n"
    "               {\"name\": \"kept\", \"dtype\": \"i64\", \"shape\": "
    "[null]}]},\n"
    "  {\"name\": \"table\", \"symbol\": \"tfc_entry_table\", \"inputs\": [],\n"
    "   \"outputs\": [{\"name\": \"w\", \"dtype\": \"f32\", \"shape\": "
    "[5, 3]}]},\n"
    "  {\"name\": \"bad\", \"symbol\": \"tfc_entry_bad\", \"inputs\": [],\n"
    "   \"outputs\": [{\"name\": \"z\", \"dtype\": \"f32\", \"shape\": "
    "[3]}]}" GHOST_ENTRY "]}";

EXPORT const tfc_rt_hooks *tfc_model_hooks;

static void *allocate(int64_t bytes) {
  return tfc_model_hooks ? tfc_model_hooks->alloc(bytes, 64)
                         : malloc((size_t)bytes);
}

static void release(void *p) {
  if (tfc_model_hooks)
    tfc_model_hooks->free(p);
  else
    free(p);
}

static void parallelFor(int64_t n, void (*fn)(void *, int64_t, int64_t),
                        void *ctx) {
  if (tfc_model_hooks)
    tfc_model_hooks->parallel_for(n, fn, ctx);
  else
    fn(ctx, 0, n);
}

static void setDescriptor(tfc_memref *m, void *allocated, void *aligned,
                          int64_t offset, int rank, const int64_t *sizes,
                          const int64_t *strides) {
  m->allocated = allocated;
  m->aligned = aligned;
  m->offset = offset;
  for (int k = 0; k < rank; ++k) {
    tfc_memref_sizes(m)[k] = sizes[k];
    tfc_memref_strides(m, rank)[k] = strides[k];
  }
}

EXPORT void tfc_model_init(void *const *table) {
  const float *alpha = (const float *)table[0];
  float *constant = (float *)table[2];
  constant[0] = alpha[0] + 1.0f;
}

struct ScaleContext {
  const float *x;
  float *out;
  float alpha;
  int64_t n;
};

static void scaleRows(void *p, int64_t begin, int64_t end) {
  struct ScaleContext *c = (struct ScaleContext *)p;
  float *scratch = (float *)allocate(c->n * (int64_t)sizeof(float));
  for (int64_t b = begin; b < end; ++b) {
    for (int64_t i = 0; i < c->n; ++i)
      scratch[i] = c->x[b * c->n + i] * c->alpha;
    memcpy(c->out + b * c->n, scratch, (size_t)c->n * sizeof(float));
  }
  release(scratch);
}

EXPORT void tfc_entry_scale(void *const *table, tfc_memref *const *inputs,
                            tfc_memref *const *outputs) {
  tfc_memref *x = inputs[0];
  int64_t batch = tfc_memref_sizes(x)[0], n = tfc_memref_sizes(x)[1];
  int64_t count = batch * n;
  const float *xd = (const float *)x->aligned + x->offset;
  float alpha = *(const float *)table[0];
  float constant = *(const float *)table[2];
  float *scaled = (float *)allocate(count * (int64_t)sizeof(float));
  float *shifted = (float *)allocate(count * (int64_t)sizeof(float) + 64);
  struct ScaleContext ctx = {xd, scaled, alpha, n};
  parallelFor(batch, scaleRows, &ctx);
  for (int64_t i = 0; i < count; ++i)
    shifted[i] = scaled[i] + constant;
  release(scaled);
  float *y = (float *)allocate(count * (int64_t)sizeof(float));
  memcpy(y, shifted, (size_t)count * sizeof(float));
  release(shifted);
  int64_t sizes[2] = {batch, n}, strides[2] = {n, 1};
  setDescriptor(outputs[0], y, y, 0, 2, sizes, strides);
}

EXPORT void tfc_entry_embed(void *const *table, tfc_memref *const *inputs,
                            tfc_memref *const *outputs) {
  tfc_memref *ids = inputs[0], *mask = inputs[1];
  int64_t batch = tfc_memref_sizes(ids)[0], seq = tfc_memref_sizes(ids)[1];
  const int64_t *id = (const int64_t *)ids->aligned + ids->offset;
  const unsigned char *keep =
      (const unsigned char *)mask->aligned + mask->offset;
  const float *emb = (const float *)table[1];
  float *out = (float *)allocate(batch * seq * 3 * (int64_t)sizeof(float));
  /* count[b] lives at every other element, starting at 1. */
  int64_t *counts = (int64_t *)allocate(2 * batch * (int64_t)sizeof(int64_t) +
                                        (int64_t)sizeof(int64_t));
  for (int64_t b = 0; b < batch; ++b) {
    int64_t kept = 0;
    for (int64_t s = 0; s < seq; ++s) {
      int64_t i = b * seq + s;
      for (int k = 0; k < 3; ++k)
        out[i * 3 + k] = keep[i] ? emb[id[i] * 3 + k] : 0.0f;
      kept += keep[i];
    }
    counts[1 + 2 * b] = kept;
  }
  int64_t outSizes[3] = {batch, seq, 3}, outStrides[3] = {seq * 3, 3, 1};
  setDescriptor(outputs[0], out, out, 0, 3, outSizes, outStrides);
  int64_t countSizes[1] = {batch}, countStrides[1] = {2};
  setDescriptor(outputs[1], counts, counts, 1, 1, countSizes, countStrides);
}

EXPORT void tfc_entry_table(void *const *table, tfc_memref *const *inputs,
                            tfc_memref *const *outputs) {
  (void)inputs;
  int64_t sizes[2] = {5, 3}, strides[2] = {3, 1};
  setDescriptor(outputs[0], table[1], table[1], 0, 2, sizes, strides);
}

EXPORT void tfc_entry_bad(void *const *table, tfc_memref *const *inputs,
                          tfc_memref *const *outputs) {
  (void)table;
  (void)inputs;
  float *z = (float *)allocate(2 * (int64_t)sizeof(float));
  z[0] = z[1] = 1.0f;
  int64_t sizes[1] = {2}, strides[1] = {1};
  setDescriptor(outputs[0], z, z, 0, 1, sizes, strides);
}
