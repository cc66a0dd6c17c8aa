/*===- Attention.c - Attention of decode steps and of prefills ------------===//
 *
 * Part of tfc, a transformer compiler on MLIR.
 *
 * Two kernels (Attention.cpp picks one at run time by the query rows): a
 * few query rows over many keys (decoding, first) and many query rows
 * (prefill, at the end). Every tfc_kernel.attention on the CPU runs one of
 * them.
 *
 * Decoding attends one new query row (or a few) to every cached key: the
 * work is a matrix-vector product over the keys, bound by reading K and V.
 * Tasks of (batch, head, block of query rows), as the prefill has, would
 * leave one task per head for one row and read each key/value head once per
 * query head of its group. Here (flash-decoding):
 *   - a task is (batch, key/value head, split of the keys): the keys are cut
 *     into splits so that even one sequence has work for every thread;
 *   - a task serves every query head of its key/value head's group (GQA)
 *     and every query row: each K and V row is read once per task;
 *   - per (query head, row) it keeps the running max m, sum l and
 *     unnormalised output o of online softmax over its keys, written to a
 *     partial buffer;
 *   - per tile of keys, up to GROUP_ROWS rows (a GQA group's query heads)
 *     are scored together, VL / R keys for R rows at a time: VL vector
 *     accumulators of q . k over the head dimension, each chunk of K
 *     loaded (and converted) once for the R rows, then one tree of
 *     shuffles and adds (lane_sums) for the VL sums (group_scores); p . V
 *     keeps up to PV_ROWS rows' output chunks in registers over the tile,
 *     each chunk of V loaded once for them (some_rows_times_v). Against a
 *     dot product per (row, key) (a serial sum of its lanes) and o updated
 *     in memory per key, the per-row form of this made a decode step of
 *     SmolLM2-135M (Q4_1) at cache position 4096 much faster (figures:
 *     commit caa111f);
 *   - the next tile's K and V rows are prefetched into L2 as the first
 *     pass of scores reads this tile's;
 *   - tfc_uk_attention_combine merges the splits of one (batch, head):
 *     o = sum_s e^(m_s - M) o_s / sum_s e^(m_s - M) l_s, M = max_s m_s;
 *     a row that saw no key (l = 0) gives zeros, as in the tensor path.
 * Scores are q.k * scale + mask (an additive bias, broadcast by zero
 * strides); with `causal`, row i sees keys j <= i + tk - tq.
 *
 * Keys and values are f32, or f16 (a KV cache kept in half precision,
 * tfc-compile --kv-cache-type=f16: the *_f16 entry points), widened to f32
 * as they are loaded (F16C's vcvtph2ps where the ISA has it, integer code
 * on plain x86-64); scores, softmax and outputs stay f32.
 *
 * Plain C: the loops over the head dimension and over a tile of keys are
 * what the compiler vectorises for the bitcode's instruction set; exp is a
 * polynomial (no libm call, vectorisable).
 *
 *===----------------------------------------------------------------------===*/

#include "tfc/Target/CPU/MicroKernels.h"

#include <stdint.h>
#include <string.h>

#define INLINE static inline __attribute__((always_inline))

/* Keys scored at a time: the scores of a tile for every row stay in L1. */
#define TILE 64
/* Query heads x rows per task at most (the group of a key/value head times
 * the rows); larger groups run in several passes. */
#define MAX_ROWS 16

INLINE float bits_to_float(uint32_t bits) {
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

/* e^x for x <= 0 (scores minus their max), within 2 ulp; x below the
 * smallest normal's log gives 0. */
INLINE float exp_neg(float x) {
  if (x < -87.3f)
    return 0.0f;
  /* n = round(x / ln 2): the 1.5 * 2^23 trick rounds to nearest (no libm;
   * built without -ffast-math). */
  float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = x - n * 0.693359375f + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  return p * bits_to_float((uint32_t)((int32_t)n + 127) << 23);
}

/* One vector register of floats of the bitcode's ISA (clang's vector
 * extension: AVX-512, AVX2, SSE) and the register tiles that fit. */
#if defined(__AVX512F__)
#define VL 16 /* floats per vector register */
#define RT 8  /* rows of the prefill's register tiles (32 registers) */
#elif defined(__AVX2__)
#define VL 8
#define RT 6 /* (16 registers: 12 accumulators, 2 loads, 1 broadcast) */
#else
#define VL 4
#define RT 4
#endif

typedef float vf __attribute__((vector_size(VL * 4)));
typedef int32_t vi __attribute__((vector_size(VL * 4)));

INLINE vf vload(const float *p) {
  vf v;
  memcpy(&v, p, sizeof v);
  return v;
}

INLINE void vstore(float *p, vf v) { memcpy(p, &v, sizeof v); }

INLINE vf splat(float x) {
  vf v;
  for (int t = 0; t < VL; ++t)
    v[t] = x;
  return v;
}

/* Loads of keys and values, f32 or f16 (`half`, a constant after inlining
 * into each entry point, so every loop is specialised for one of them). */
typedef uint16_t half_t;
#if defined(__F16C__)
typedef _Float16 vh __attribute__((vector_size(VL * 2)));
INLINE vf vload_half(const half_t *p) {
  vh h;
  memcpy(&h, p, sizeof h);
  return __builtin_convertvector(h, vf);
}
INLINE float half_to_float(half_t bits) {
  _Float16 h;
  memcpy(&h, &bits, 2);
  return (float)h;
}
#else
typedef uint16_t vu16 __attribute__((vector_size(VL * 2)));
/* IEEE half to float in integer lanes: normal numbers rebias the exponent
 * (+112), subnormals are their mantissa times 2^-24, infinities and NaNs
 * get the all-ones exponent (the libcall plain x86-64 would otherwise
 * make per element is not linked into models). */
INLINE vf vload_half(const half_t *p) {
  vu16 raw;
  memcpy(&raw, p, sizeof raw);
  vi h = __builtin_convertvector(raw, vi);
  vi em = h & 0x7fff, sign = (h & 0x8000) << 16;
  vi sub = em < 0x0400, special = em >= 0x7c00;
  vi normal = (em << 13) + (112 << 23);
  vi tiny = (vi)(__builtin_convertvector(em, vf) * 5.9604644775390625e-8f);
  vi inf_nan = (em << 13) | 0x7f800000;
  return (vf)(sign | (normal & ~sub & ~special) | (tiny & sub) |
              (inf_nan & special));
}
INLINE float half_to_float(half_t bits) {
  uint32_t em = bits & 0x7fffu, sign = (uint32_t)(bits & 0x8000u) << 16;
  float f;
  if (em < 0x0400u) /* zero, subnormal */
    f = (float)em * 5.9604644775390625e-8f;
  else
    f = bits_to_float(em >= 0x7c00u ? (em << 13) | 0x7f800000u
                                    : (em << 13) + (112u << 23));
  uint32_t u;
  memcpy(&u, &f, 4);
  return bits_to_float(u | sign);
}
#endif

/* Element i of keys or values p, as floats. */
INLINE vf kv_vload(const void *p, int64_t i, int half) {
  return half ? vload_half((const half_t *)p + i) : vload((const float *)p + i);
}
INLINE float kv_load(const void *p, int64_t i, int half) {
  return half ? half_to_float(((const half_t *)p)[i]) : ((const float *)p)[i];
}
/* p advanced by i elements. */
INLINE const void *kv_at(const void *p, int64_t i, int half) {
  return half ? (const void *)((const half_t *)p + i)
              : (const void *)((const float *)p + i);
}

/* exp_neg of every lane. Lanes below -87.3 (-inf too) give 0; they are
 * computed from -87.3 (bit operations, so NaN stays NaN), which keeps the
 * float-to-int conversion in range. */
INLINE vf exp_neg_v(vf x) {
  vi below = x < -87.3f; /* all ones where e^x underflows */
  x = (vf)(((vi)x & ~below) | ((vi)splat(-87.3f) & below));
  vf n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  vf r = x - n * 0.693359375f + n * 2.12194440e-4f;
  vf p = splat(1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  vi scale = (__builtin_convertvector(n, vi) + 127) << 23;
  return (vf)((vi)(p * (vf)scale) & ~below);
}

/* Reductions are written over LANES independent partial sums: the compiler
 * may not reorder a float sum itself (no -ffast-math, which would also fold
 * exp_neg's rounding away), but it vectorises a loop over lanes. */
#define LANES 16

INLINE float dot(const float *a, const void *b, int64_t n, int half) {
  float acc[LANES] = {0};
  int64_t i = 0;
  for (; i + LANES <= n; i += LANES)
    for (int t = 0; t < LANES; ++t)
      acc[t] += a[i + t] * kv_load(b, i + t, half);
  for (int t = 0; i + t < n; ++t)
    acc[t] += a[i + t] * kv_load(b, i + t, half);
  float sum = 0;
  for (int t = 0; t < LANES; ++t)
    sum += acc[t];
  return sum;
}

/* Lane sums of VL vectors at once: lane t of the result is the sum of the
 * lanes of p[t]. A tree of VL - 1 steps, each adding the two halves of the
 * runs of lanes that two vectors hold per key (two shuffles and an add),
 * instead of VL serial reductions of one vector each. */
#define COMBINE(a, b, LO, HI)                                                  \
  (__builtin_shufflevector(a, b, LO) + __builtin_shufflevector(a, b, HI))
#if VL == 16
#define R16_LO 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23
#define R16_HI 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31
#define R8_LO 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27
#define R8_HI 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31
#define R4_LO 0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29
#define R4_HI 2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31
#define R2_LO 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30
#define R2_HI 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31
#elif VL == 8
#define R8_LO 0, 1, 2, 3, 8, 9, 10, 11
#define R8_HI 4, 5, 6, 7, 12, 13, 14, 15
#define R4_LO 0, 1, 4, 5, 8, 9, 12, 13
#define R4_HI 2, 3, 6, 7, 10, 11, 14, 15
#define R2_LO 0, 2, 4, 6, 8, 10, 12, 14
#define R2_HI 1, 3, 5, 7, 9, 11, 13, 15
#else
#define R4_LO 0, 1, 4, 5
#define R4_HI 2, 3, 6, 7
#define R2_LO 0, 2, 4, 6
#define R2_HI 1, 3, 5, 7
#endif

INLINE vf lane_sums(vf p[VL]) {
  int count = VL;
#if VL == 16
  for (int i = 0; i < count / 2; ++i)
    p[i] = COMBINE(p[2 * i], p[2 * i + 1], R16_LO, R16_HI);
  count /= 2;
#endif
#if VL >= 8
  for (int i = 0; i < count / 2; ++i)
    p[i] = COMBINE(p[2 * i], p[2 * i + 1], R8_LO, R8_HI);
  count /= 2;
#endif
  for (int i = 0; i < count / 2; ++i)
    p[i] = COMBINE(p[2 * i], p[2 * i + 1], R4_LO, R4_HI);
  count /= 2;
  return COMBINE(p[0], p[1], R2_LO, R2_HI);
}

/* Query rows whose scores (and P.V) one pass computes together, sharing
 * each load (and f16 conversion) of K and V: up to 4 (a GQA group of a
 * decode step; more rows go 4 at a time). */
#define GROUP_ROWS 4

/* One pass of group_scores: the scores of R rows (q[r], R <= GROUP_ROWS, a
 * constant after inlining) over the `count` keys jj.. (count <= VL / R;
 * rows kstride apart): sc[r][jj + t] = (q[r] . K row jj + t) * scale. The
 * pass's VL / R keys x R rows accumulate in VL vectors over the head
 * dimension (each K chunk loaded and converted once for the R rows) and one
 * lane_sums gives all their sums. A pass of fewer keys than VL / R (the
 * end of a tile) reads its last key again in the place of the missing ones
 * and stores only its own. */
INLINE void score_pass(const float *const *q, const int R, const void *k,
                       int64_t kstride, int64_t d, int64_t jj, int count,
                       float scale, float (*sc)[TILE], int half) {
  const int kpg = VL / R; /* keys per pass */
  int64_t row[VL];
  for (int t = 0; t < kpg; ++t)
    row[t] = (jj + (t < count ? t : count - 1)) * kstride;
  vf acc[VL];
  for (int a = 0; a < VL; ++a)
    acc[a] = splat(0);
  for (int64_t c = 0; c < d; c += VL) {
    vf qv[GROUP_ROWS];
    for (int r = 0; r < R; ++r)
      qv[r] = vload(q[r] + c);
    for (int t = 0; t < kpg; ++t) {
      vf kv = kv_vload(k, row[t] + c, half);
      for (int r = 0; r < R; ++r)
        acc[t * R + r] += qv[r] * kv;
    }
  }
  vf sum = lane_sums(acc) * scale;
  for (int t = 0; t < kpg && t < count; ++t)
    for (int r = 0; r < R; ++r)
      sc[r][jj + t] = sum[t * R + r];
}

/* The scores of R rows (q[r], R <= GROUP_ROWS, a constant after inlining)
 * over keys j = t0.. (rows kstride apart): sc[r][0, n) = (q[r] . K row j) *
 * scale, VL / R keys per score_pass; the keys past the last whole pass in
 * one more pass. (With R = 3 on AVX-512, 64 keys are 12 passes of 5 and 4
 * keys left over, which were scored by a dot product per (row, key), each
 * ending in a serial sum of 16 lanes: SmolLM2-135M's decode attention took
 * markedly longer a step that way than with the last pass, which brought it
 * to the VM's read bandwidth; figures: commit ad81199.) With f16 keys and
 * values, while it reads a key it prefetches the same key of the next tile
 * (`ahead` of them: its K row at nextK, its V row at nextV) into L2, so that
 * the next tile's rows arrive while this one computes: without, the f16
 * kernel read DRAM far more slowly than the f32 one (its conversions' stalls
 * not overlapped), and decode steps took longer (figures: commit b889cca).
 * The f32 kernel, at the core's read bandwidth already, lost more to the
 * prefetches' issue slots than it gained. d not a multiple of VL: every
 * score by dot. With R = 1 this is a row's scores VL keys at a time (the
 * f32 kernel's). */
INLINE void group_scores(const float *const *q, const int R, const void *k,
                         int64_t kstride, int64_t d, int64_t n, float scale,
                         float (*sc)[TILE], int half, const void *nextK,
                         const void *nextV, int64_t vstride, int64_t dv,
                         int64_t ahead) {
  const int kpg = VL / R; /* keys per pass */
  int64_t kbytes = d * (half ? 2 : 4), vbytes = dv * (half ? 2 : 4);
  int64_t kstep = kstride * (half ? 2 : 4), vstep = vstride * (half ? 2 : 4);
  if (d % VL != 0) {
    for (int64_t jj = 0; jj < n; ++jj)
      for (int r = 0; r < R; ++r)
        sc[r][jj] = dot(q[r], kv_at(k, jj * kstride, half), d, half) * scale;
    return;
  }
  for (int64_t jj = 0; jj < n; jj += kpg) {
    for (int t = 0; half && t < kpg && jj + t < ahead; ++t) {
      const char *pk = (const char *)nextK + (jj + t) * kstep;
      const char *pv = (const char *)nextV + (jj + t) * vstep;
      for (int64_t b = 0; b < kbytes; b += 64)
        __builtin_prefetch(pk + b, 0, 2);
      for (int64_t b = 0; b < vbytes; b += 64)
        __builtin_prefetch(pv + b, 0, 2);
    }
    if (jj + kpg <= n)
      score_pass(q, R, k, kstride, d, jj, kpg, scale, sc, half);
    else
      score_pass(q, R, k, kstride, d, jj, (int)(n - jj), scale, sc, half);
  }
}

/* PV_VECS vectors of output columns per pass of rows_times_v. */
#define PV_VECS 4

/* Rows of P.V per pass: their accumulators (PV_ROWS x PV_VECS vectors)
 * stay in registers (32 on AVX-512, 16 on AVX2 and SSE). */
#if VL == 16
#define PV_ROWS 4
#else
#define PV_ROWS 2
#endif

/* o[r][c] += sum_jj p[r][jj] v[jj][c] over c < PV_VECS VL for R rows (R <=
 * PV_ROWS, a constant after inlining): each V chunk loaded (and converted)
 * once for the R rows, the R PV_VECS accumulators in registers over the n
 * keys (v rows vstride apart). */
INLINE void some_rows_times_v(float *const *o, const float *const *p,
                              const int R, const void *v, int64_t vstride,
                              int64_t n, int half) {
  vf a[PV_ROWS][PV_VECS];
  for (int r = 0; r < R; ++r)
    for (int i = 0; i < PV_VECS; ++i)
      a[r][i] = vload(o[r] + i * VL);
  for (int64_t jj = 0; jj < n; ++jj) {
    vf vv[PV_VECS];
    for (int i = 0; i < PV_VECS; ++i)
      vv[i] = kv_vload(v, jj * vstride + i * VL, half);
    for (int r = 0; r < R; ++r) {
      vf sr = splat(p[r][jj]);
      for (int i = 0; i < PV_VECS; ++i)
        a[r][i] += sr * vv[i];
    }
  }
  for (int r = 0; r < R; ++r)
    for (int i = 0; i < PV_VECS; ++i)
      vstore(o[r] + i * VL, a[r][i]);
}

/* o[r][c] += sum_jj p[r][jj] v[jj][c] for rows r < rows, columns c < dv,
 * keys jj < n (v rows vstride apart): whole passes of PV_VECS vectors
 * PV_ROWS rows at a time (some_rows_times_v), then the columns left one by
 * one. */
INLINE void rows_times_v(float *const *o, float (*p)[TILE], int64_t rows,
                         const void *v, int64_t vstride, int64_t dv, int64_t n,
                         int half) {
  int64_t c0 = 0;
  for (; c0 + PV_VECS * VL <= dv; c0 += PV_VECS * VL)
    for (int64_t r = 0; r < rows; r += PV_ROWS) {
      float *oc[PV_ROWS];
      const float *pr[PV_ROWS];
      int64_t left = rows - r < PV_ROWS ? rows - r : PV_ROWS;
      for (int64_t i = 0; i < left; ++i) {
        oc[i] = o[r + i] + c0;
        pr[i] = p[r + i];
      }
      const void *vc = kv_at(v, c0, half);
      switch (left) {
#if PV_ROWS == 4
      case 4:
        some_rows_times_v(oc, pr, 4, vc, vstride, n, half);
        break;
      case 3:
        some_rows_times_v(oc, pr, 3, vc, vstride, n, half);
        break;
#endif
      case 2:
        some_rows_times_v(oc, pr, 2, vc, vstride, n, half);
        break;
      default:
        some_rows_times_v(oc, pr, 1, vc, vstride, n, half);
        break;
      }
    }
  for (; c0 < dv; ++c0)
    for (int64_t r = 0; r < rows; ++r) {
      float acc = o[r][c0];
      for (int64_t jj = 0; jj < n; ++jj)
        acc += p[r][jj] * kv_load(v, jj * vstride + c0, half);
      o[r][c0] = acc;
    }
}

/* The shape array (MicroKernels.h, tfc_uk_attention_split). */
typedef struct {
  int64_t batch, heads, kvHeads, tq, tk, d, dv, splits, causal, window,
      relative, relativeRows;
  const int64_t *qs, *ks, *vs, *ms, *os;
} shape_t;

INLINE shape_t read_shape(const int64_t *p) {
  shape_t s = {p[0], p[1],  p[2],  p[3],   p[4],   p[5],   p[6],   p[7],  p[8],
               p[9], p[10], p[11], p + 12, p + 16, p + 20, p + 24, p + 28};
  return s;
}

INLINE int64_t group_of(const shape_t *s) {
  int64_t kv = s->kvHeads > 0 ? s->kvHeads : 1;
  int64_t g = s->heads / kv;
  return g > 0 ? g : 1;
}

/* The key/value head of query head h: h / group (GQA). Head counts that
 * are not a multiple (possible only at run time, in kernel IR written by
 * hand: the dialects' verifiers reject them) send the heads past the last
 * whole group to the last key/value head, as the GPU kernel does, and
 * never read past it. */
INLINE int64_t kv_head_of(const shape_t *s, int64_t h) {
  int64_t kvh = h / group_of(s);
  return kvh < s->kvHeads ? kvh : s->kvHeads - 1;
}

/* The query heads key/value head kvh serves, [*first, *end) (kv_head_of's
 * inverse: the last key/value head also takes the heads past the groups;
 * none when there are fewer query heads). */
INLINE void heads_of(const shape_t *s, int64_t kvh, int64_t *first,
                     int64_t *end) {
  int64_t group = group_of(s);
  *first = kvh * group;
  *end = kvh == s->kvHeads - 1 ? s->heads : *first + group;
  if (*end > s->heads)
    *end = s->heads;
  if (*first > *end)
    *first = *end;
}

/* The query heads one key/value head serves at most: the group, or what
 * the last one takes when the heads are not a multiple. */
INLINE int64_t max_heads_per_kv(const shape_t *s) {
  int64_t first, end;
  heads_of(s, s->kvHeads - 1, &first, &end);
  int64_t group = group_of(s);
  return end - first > group ? end - first : group;
}

/* What one query row needs: its q, mask and relative-bias rows, ALiBi
 * slope, position among the keys and first and last visible key. */
typedef struct {
  const float *q, *mask, *bias;
  float slope;
  int64_t pos, first, limit;
} row_t;

/* The keys batch row b attends to: rowPast[b] + tq (its position after
 * this call's queries, clamped to [0, tk]), or all tk keys without rowPast. */
INLINE int64_t keys_of(const shape_t *s, const int64_t *rowPast, int64_t b) {
  if (!rowPast)
    return s->tk;
  int64_t n = rowPast[b] + s->tq;
  return n < 0 ? 0 : n > s->tk ? s->tk : n;
}

/* The splits of `tk` keys in the decode kernel: the lowering's rule for a
 * call's keys (TFC_UK_ATTENTION_KEYS_PER_SPLIT, at most
 * TFC_UK_ATTENTION_MAX_SPLITS), applied to each row's own keys when they
 * differ, so that a row's partition depends on its keys alone. */
INLINE int64_t splits_for(int64_t tk) {
  int64_t n = (tk + TFC_UK_ATTENTION_KEYS_PER_SPLIT - 1) /
              TFC_UK_ATTENTION_KEYS_PER_SPLIT;
  return n < 1                             ? 1
         : n > TFC_UK_ATTENTION_MAX_SPLITS ? TFC_UK_ATTENTION_MAX_SPLITS
                                           : n;
}

/* `tk` is the row's keys (keys_of): its causal diagonal and window count
 * from them. */
INLINE row_t row_of(const shape_t *s, int64_t tk, const float *q,
                    const float *mask, const float *relBias,
                    const float *slopes, int64_t b, int64_t h, int64_t i) {
  row_t r;
  int64_t shift = tk - s->tq;
  r.q = q + b * s->qs[0] + h * s->qs[1] + i * s->qs[2];
  r.mask = mask ? mask + b * s->ms[0] + h * s->ms[1] + i * s->ms[2] : 0;
  /* the row's head's bias by distance, at distance 0 (heads past the
   * table's rows, possible only at run time, read its last) */
  r.bias = relBias ? relBias +
                         (h < s->relativeRows ? h : s->relativeRows - 1) *
                             (2 * s->relative + 1) +
                         s->relative
                   : 0;
  r.slope = slopes ? slopes[h] : 0;
  r.pos = i + shift;
  r.limit = s->causal ? i + shift : tk - 1; /* last visible key */
  /* first visible key (a window counts back from the diagonal) */
  r.first = s->window > 0 && i + shift - s->window + 1 > 0
                ? i + shift - s->window + 1
                : 0;
  return r;
}

/* tanh x from exp_neg: x - x^3/3 + 2x^5/15 - 17x^7/315 + 62x^9/2835 below
 * |x| = 0.1 (the next term is under 1e-13), else sign(x) (1 - e) / (1 + e)
 * with e = e^(-2|x|) (at most a few ulp of 1 off). NaN stays NaN. */
INLINE float tanh_of(float x) {
  float a = x < 0 ? -x : x;
  if (a < 0.1f) {
    float x2 = x * x;
    return x + x * x2 *
                   (-1.0f / 3 +
                    x2 * (2.0f / 15 + x2 * (-17.0f / 315 + x2 * 62.0f / 2835)));
  }
  float e = exp_neg(-2 * a);
  float t = (1 - e) / (1 + e);
  return x < 0 ? -t : t;
}
INLINE vf tanh_v(vf x) {
  vi neg = x < 0;
  vf a = (vf)((vi)x & ~(vi)splat(-0.0f)); /* |x| */
  vf x2 = x * x;
  vf poly =
      x + x * x2 *
              (-1.0f / 3 +
               x2 * (2.0f / 15 + x2 * (-17.0f / 315 + x2 * 62.0f / 2835)));
  vf e = exp_neg_v(-2 * a);
  vf t = (1 - e) / (1 + e);
  t = (vf)(((vi)t & ~neg) | ((vi)(-t) & neg));
  vi small = a < 0.1f;
  return (vf)(((vi)poly & small) | ((vi)t & ~small));
}

/* Gemma 2's soft-capping of the scores sr[0, n): c tanh(s / c). */
INLINE void softcap_scores(float *sr, int64_t n, float c) {
  float inv = 1.0f / c;
  int64_t jj = 0;
  for (; jj + VL <= n; jj += VL)
    vstore(sr + jj, tanh_v(vload(sr + jj) * inv) * c);
  for (; jj < n; ++jj)
    sr[jj] = tanh_of(sr[jj] * inv) * c;
}

/* Soft-caps the row's scores sr[0, n) of keys t0.. (softcap > 0), adds its
 * mask and position terms and sets those of keys it may not see to -inf. */
INLINE void finish_scores(const shape_t *s, const row_t *r, int has_slopes,
                          float softcap, float *sr, int64_t t0, int64_t n) {
  if (softcap > 0)
    softcap_scores(sr, n, softcap);
  if (r->mask)
    for (int64_t jj = 0; jj < n; ++jj)
      sr[jj] += r->mask[(t0 + jj) * s->ms[3]];
  if (r->bias) /* T5: bias by distance, clamped to [-R, R] */
    for (int64_t jj = 0; jj < n; ++jj) {
      int64_t dist = t0 + jj - r->pos;
      dist = dist < -s->relative ? -s->relative : dist;
      dist = dist > s->relative ? s->relative : dist;
      sr[jj] += r->bias[dist];
    }
  if (has_slopes) /* ALiBi: slope . (j - i) */
    for (int64_t jj = 0; jj < n; ++jj)
      sr[jj] += r->slope * (float)(t0 + jj - r->pos);
  int64_t visible = r->limit - t0 + 1;
  for (int64_t jj = visible < 0 ? 0 : visible; jj < n; ++jj)
    sr[jj] = -__builtin_inff();
  for (int64_t jj = 0; jj < n && t0 + jj < r->first; ++jj)
    sr[jj] = -__builtin_inff();
}

/* The lanes of x where x > m, else m's: one vmaxps (x NaN gives m, so a
 * maximum that starts from -inf ignores NaN, as maxnum does, without
 * maxnum's extra compare and blend per vector). */
INLINE vf vmax(vf x, vf m) {
  vi gt = x > m;
  return (vf)(((vi)x & gt) | ((vi)m & ~gt));
}

/* The maximum of x[0, n) (-inf if n == 0), over four independent running
 * maxima: with one, each vector waited for the previous one's max (a
 * latency-bound chain that was a noticeable share of the AVX2 prefill's
 * time; figures: commit 446b947). */
INLINE float max_of(const float *x, int64_t n) {
  vf m0 = splat(-__builtin_inff()), m1 = m0, m2 = m0, m3 = m0;
  int64_t jj = 0;
  for (; jj + 4 * VL <= n; jj += 4 * VL) {
    m0 = vmax(vload(x + jj), m0);
    m1 = vmax(vload(x + jj + VL), m1);
    m2 = vmax(vload(x + jj + 2 * VL), m2);
    m3 = vmax(vload(x + jj + 3 * VL), m3);
  }
  for (; jj + VL <= n; jj += VL)
    m0 = vmax(vload(x + jj), m0);
  vf mv = vmax(vmax(m0, m1), vmax(m2, m3));
  float m = -__builtin_inff();
  for (int t = 0; t < VL; ++t)
    m = mv[t] > m ? mv[t] : m;
  for (; jj < n; ++jj)
    m = x[jj] > m ? x[jj] : m;
  return m;
}

/* x = e^(x - m) over [0, n); returns their sum. */
INLINE float exp_and_sum(float *x, int64_t n, float m) {
  vf sv = splat(0);
  int64_t jj = 0;
  for (; jj + VL <= n; jj += VL) {
    vf p = exp_neg_v(vload(x + jj) - m);
    vstore(x + jj, p);
    sv += p;
  }
  float sum = 0;
  for (int t = 0; t < VL; ++t)
    sum += sv[t];
  for (; jj < n; ++jj) {
    float p = exp_neg(x[jj] - m);
    x[jj] = p;
    sum += p;
  }
  return sum;
}

/* One step of a row's online softmax over scores sr[0, n) (mask and
 * positions applied): with m' = max(m, max sr), sr becomes e^(sr - m') and
 * l becomes l e^(m - m') + sum e^(sr - m'), m becomes m'; returns the factor
 * e^(m - m') for the row's output so far. A row that has seen no visible
 * key yet (m' = -inf) gets p = 0 and keeps m, l (factor 1). Shared by the
 * decode kernel's key tiles and the prefill kernel's key chunks. */
INLINE float online_softmax_step(float *sr, int64_t n, float *m, float *l) {
  float tmax = max_of(sr, n);
  float mnew = tmax > *m ? tmax : *m;
  if (mnew == -__builtin_inff()) {
    memset(sr, 0, (size_t)n * sizeof(float));
    return 1.0f;
  }
  float alpha = exp_neg(*m - mnew);
  *l = *l * alpha + exp_and_sum(sr, n, mnew);
  *m = mnew;
  return alpha;
}

int64_t tfc_uk_attention_partial_floats(const int64_t *shape) {
  shape_t s = read_shape(shape);
  return s.batch * s.kvHeads * s.splits * max_heads_per_kv(&s) * s.tq *
         (2 + s.dv);
}

/* tfc_uk_attention_split with keys and values of f32 or f16 (`half`). */
INLINE void split(const float *q, const void *k, const void *v,
                  const float *mask, const float *relBias, const float *slopes,
                  const int64_t *rowPast, float *partial, const int64_t *shape,
                  float scale, float softcap, int64_t task, int half) {
  shape_t s = read_shape(shape);
  int64_t split = task % s.splits, rest = task / s.splits;
  int64_t kvh = rest % s.kvHeads, b = rest / s.kvHeads;
  /* With rowPast the row's own keys split by the rule the call's keys
   * follow (splits_for): the grid has the splits of the most keys, a row
   * with fewer leaves the rest empty (the combine skips them). */
  int64_t tk = keys_of(&s, rowPast, b);
  int64_t splits = rowPast ? splits_for(tk) : s.splits;
  if (splits > s.splits)
    splits = s.splits;
  int64_t per = (tk + splits - 1) / splits;
  int64_t j0 = split * per, j1 = j0 + per < tk ? j0 + per : tk;
  if (split >= splits)
    j0 = j1 = tk;
  int64_t hFirst, hEnd;
  heads_of(&s, kvh, &hFirst, &hEnd);
  int64_t rowsAll = (hEnd - hFirst) * s.tq;
  float *out = partial + ((b * s.kvHeads + kvh) * s.splits + split) *
                             max_heads_per_kv(&s) * s.tq * (2 + s.dv);
  const void *kb = kv_at(k, b * s.ks[0] + kvh * s.ks[1], half);
  const void *vb = kv_at(v, b * s.vs[0] + kvh * s.vs[1], half);
  for (int64_t r0 = 0; r0 < rowsAll; r0 += MAX_ROWS) {
    int64_t rows = rowsAll - r0 < MAX_ROWS ? rowsAll - r0 : MAX_ROWS;
    row_t row[MAX_ROWS];
    float *o[MAX_ROWS], m[MAX_ROWS], l[MAX_ROWS];
    int64_t firstAll = tk;
    for (int64_t r = 0; r < rows; ++r) {
      int64_t g = (r0 + r) / s.tq, i = (r0 + r) % s.tq;
      int64_t h = hFirst + g;
      row[r] = row_of(&s, tk, q, mask, relBias, slopes, b, h, i);
      o[r] = out + (r0 + r) * (2 + s.dv) + 2;
      memset(o[r], 0, (size_t)s.dv * sizeof(float));
      m[r] = -__builtin_inff();
      l[r] = 0;
      firstAll = row[r].first < firstAll ? row[r].first : firstAll;
    }
    /* Keys before every row's window are never read. */
    int64_t start = j0 > firstAll ? j0 : firstAll;
    float sc[MAX_ROWS][TILE];
    for (int64_t t0 = start; t0 < j1; t0 += TILE) {
      int64_t n = j1 - t0 < TILE ? j1 - t0 : TILE;
      /* Scores, GROUP_ROWS rows at a time (prefetching the next tile's
       * rows, `ahead` of them, as the first pass reads this one's). */
      int64_t ahead = j1 - (t0 + n) < n ? j1 - (t0 + n) : n;
      const void *kt = kv_at(kb, t0 * s.ks[2], half);
      const void *nextK = kv_at(kb, (t0 + n) * s.ks[2], half);
      const void *nextV = kv_at(vb, (t0 + n) * s.vs[2], half);
      for (int64_t r = 0; r < rows; r += GROUP_ROWS) {
        int64_t left = rows - r < GROUP_ROWS ? rows - r : GROUP_ROWS;
        const float *qr[GROUP_ROWS] = {0};
        for (int64_t i = 0; i < left; ++i)
          qr[i] = row[r + i].q;
        int64_t pre = r == 0 ? ahead : 0;
        /* f32 keys: row by row, VL keys at a time: the loads of VL key
         * rows per chunk keep more of DRAM's lines in flight than VL / R
         * rows would, and f32 scores are bound by those reads (grouped, a
         * decode step of SmolLM2-135M Q4_1 at 4096 took longer; figures:
         * commit b889cca). */
        if (!half) {
          for (int64_t i = 0; i < left; ++i)
            group_scores(qr + i, 1, kt, s.ks[2], s.d, n, scale, sc + r + i, 0,
                         nextK, nextV, s.vs[2], s.dv, 0);
          continue;
        }
        switch (left) {
        case 4:
          group_scores(qr, 4, kt, s.ks[2], s.d, n, scale, sc + r, half, nextK,
                       nextV, s.vs[2], s.dv, pre);
          break;
        case 3:
          group_scores(qr, 3, kt, s.ks[2], s.d, n, scale, sc + r, half, nextK,
                       nextV, s.vs[2], s.dv, pre);
          break;
        case 2:
          group_scores(qr, 2, kt, s.ks[2], s.d, n, scale, sc + r, half, nextK,
                       nextV, s.vs[2], s.dv, pre);
          break;
        default:
          group_scores(qr, 1, kt, s.ks[2], s.d, n, scale, sc + r, half, nextK,
                       nextV, s.vs[2], s.dv, pre);
          break;
        }
      }
      /* Mask, causality, online softmax. */
      for (int64_t r = 0; r < rows; ++r) {
        float *sr = sc[r];
        finish_scores(&s, &row[r], slopes != 0, softcap, sr, t0, n);
        float alpha = online_softmax_step(sr, n, &m[r], &l[r]);
        if (alpha != 1.0f)
          for (int64_t c = 0; c < s.dv; ++c)
            o[r][c] *= alpha;
      }
      /* o += p . V over the tile (in L1 after the first pass). */
      rows_times_v(o, sc, rows, kv_at(vb, t0 * s.vs[2], half), s.vs[2], s.dv, n,
                   half);
    }
    for (int64_t r = 0; r < rows; ++r) {
      o[r][-2] = m[r];
      o[r][-1] = l[r];
    }
  }
}

void tfc_uk_attention_split(const float *q, const float *k, const float *v,
                            const float *mask, const float *relBias,
                            const float *slopes, const int64_t *rowPast,
                            float *partial, const int64_t *shape, float scale,
                            float softcap, int64_t task) {
  split(q, k, v, mask, relBias, slopes, rowPast, partial, shape, scale, softcap,
        task, 0);
}

void tfc_uk_attention_split_f16(const float *q, const uint16_t *k,
                                const uint16_t *v, const float *mask,
                                const float *relBias, const float *slopes,
                                const int64_t *rowPast, float *partial,
                                const int64_t *shape, float scale,
                                float softcap, int64_t task) {
  split(q, k, v, mask, relBias, slopes, rowPast, partial, shape, scale, softcap,
        task, 1);
}

void tfc_uk_attention_combine(const float *partial, float *out,
                              const int64_t *shape, int64_t task) {
  shape_t s = read_shape(shape);
  int64_t h = task % s.heads, b = task / s.heads;
  int64_t kvh = kv_head_of(&s, h);
  /* the head's rows among its key/value head's in each split's slot (its
   * first head is kvh * group: heads_of) */
  int64_t g = h - kvh * group_of(&s), rowsAll = max_heads_per_kv(&s) * s.tq;
  for (int64_t i = 0; i < s.tq; ++i) {
    int64_t row = g * s.tq + i;
    float *dst = out + b * s.os[0] + h * s.os[1] + i * s.os[2];
    float mmax = -__builtin_inff();
    for (int64_t sp = 0; sp < s.splits; ++sp) {
      const float *p = partial + (((b * s.kvHeads + kvh) * s.splits + sp) *
                                      rowsAll +
                                  row) *
                                     (2 + s.dv);
      mmax = p[0] > mmax ? p[0] : mmax;
    }
    memset(dst, 0, (size_t)s.dv * sizeof(float));
    if (mmax == -__builtin_inff())
      continue; /* no key seen: zeros */
    float l = 0;
    for (int64_t sp = 0; sp < s.splits; ++sp) {
      const float *p = partial + (((b * s.kvHeads + kvh) * s.splits + sp) *
                                      rowsAll +
                                  row) *
                                     (2 + s.dv);
      if (p[1] == 0)
        continue;
      float w = exp_neg(p[0] - mmax);
      l += w * p[1];
      for (int64_t c = 0; c < s.dv; ++c)
        dst[c] += w * p[2 + c];
    }
    float inv = l != 0 ? 1.0f / l : 0.0f;
    for (int64_t c = 0; c < s.dv; ++c)
      dst[c] *= inv;
  }
}

/*===- Prefill -------------------------------------------------------------===
 *
 * Many query rows: the scores of a block of query rows over a chunk of up
 * to TFC_UK_ATTENTION_PREFILL_KEYS keys fit in L1, so with one chunk each
 * row gets its exact softmax (no running rescale), and more chunks carry
 * each row's running maximum and sum (the output rescaled when the maximum
 * grows). Past 1024 keys this took far less time than the flash loop nest
 * Attention.cpp then had (figures: commit 3143890). The two products
 * are register-blocked like a GEMM's tile: scores are RT
 * rows x KV vectors of keys accumulated over D steps of one broadcast of q
 * and KV loads of the transposed K; the output is RT rows x KV vectors of
 * V's columns accumulated over the keys, p broadcast from the scores. RT
 * follows the vector registers the bitcode's ISA has (VL, RT above).
 */

#define KV 2 /* vectors of keys, then of V's columns, per register tile */
/* Query rows per task (whole register tiles, 16 to 18); the keys' padding
 * in kt (a multiple of KV * VL on every ISA). */
#define PREFILL_ROWS ((16 + RT - 1) / RT * RT)
#define KEY_PAD 32
/* Keys per chunk: RT rows of its scores fill at most 32 KiB. */
#define CHUNK TFC_UK_ATTENTION_PREFILL_KEYS

/* The register tile both of the prefill's products accumulate:
 * acc[r][c] = sum over t < steps of a[r][t] * b[t * bstride + c * VL]
 * (scores: a the q rows, b kt, f32; P.V: a the rows of p, b V, f32 or
 * f16 as `half` says). */
INLINE void tile_product(const float *const a[RT], const void *b,
                         int64_t bstride, int64_t steps, vf acc[RT][KV],
                         int half) {
  for (int r = 0; r < RT; ++r)
    for (int c = 0; c < KV; ++c)
      acc[r][c] = splat(0);
  for (int64_t t = 0; t < steps; ++t) {
    vf bv[KV];
    for (int c = 0; c < KV; ++c)
      bv[c] = kv_vload(b, t * bstride + c * VL, half);
    for (int r = 0; r < RT; ++r) {
      vf av = splat(a[r][t]);
      for (int c = 0; c < KV; ++c)
        acc[r][c] += av * bv[c];
    }
  }
}

INLINE int64_t padded_keys(const shape_t *s) {
  return (s->tk + KEY_PAD - 1) / KEY_PAD * KEY_PAD;
}

int64_t tfc_uk_attention_kt_floats(const int64_t *shape) {
  shape_t s = read_shape(shape);
  return s.batch * s.kvHeads * s.d * padded_keys(&s);
}

/* kt (f32) from keys of f32 or f16 (`half`). */
INLINE void transpose_k(const void *k, float *kt, const int64_t *shape,
                        int64_t task, int half) {
  shape_t s = read_shape(shape);
  int64_t kvh = task % s.kvHeads, b = task / s.kvHeads;
  int64_t tkp = padded_keys(&s);
  const void *src = kv_at(k, b * s.ks[0] + kvh * s.ks[1], half);
  float *dst = kt + task * s.d * tkp;
  /* In blocks of 16 keys: 16 rows of K read, 16-float runs of kt written. */
  for (int64_t j0 = 0; j0 < tkp; j0 += 16)
    for (int64_t dd = 0; dd < s.d; ++dd)
      for (int64_t j = j0; j < j0 + 16; ++j)
        dst[dd * tkp + j] =
            j < s.tk ? kv_load(src, j * s.ks[2] + dd, half) : 0.0f;
}

void tfc_uk_attention_transpose_k(const float *k, float *kt,
                                  const int64_t *shape, int64_t task) {
  transpose_k(k, kt, shape, task, 0);
}

void tfc_uk_attention_transpose_k_f16(const uint16_t *k, float *kt,
                                      const int64_t *shape, int64_t task) {
  transpose_k(k, kt, shape, task, 1);
}

int64_t tfc_uk_attention_prefill_tasks(const int64_t *shape) {
  shape_t s = read_shape(shape);
  return s.batch * s.heads * ((s.tq + PREFILL_ROWS - 1) / PREFILL_ROWS);
}

/* tfc_uk_attention_prefill with values of f32 or f16 (`half`). */
INLINE void prefill(const float *q, const float *kt, const void *v,
                    const float *mask, const float *relBias,
                    const float *slopes, const int64_t *rowPast, float *out,
                    const int64_t *shape, float scale, float softcap,
                    int64_t task, int half) {
  shape_t s = read_shape(shape);
  int64_t blocks = (s.tq + PREFILL_ROWS - 1) / PREFILL_ROWS;
  int64_t blk = task % blocks, bh = task / blocks;
  int64_t h = bh % s.heads, b = bh / s.heads;
  int64_t kvh = kv_head_of(&s, h);
  int64_t i0 = blk * PREFILL_ROWS;
  int64_t rows = s.tq - i0 < PREFILL_ROWS ? s.tq - i0 : PREFILL_ROWS;
  int64_t tkp = padded_keys(&s), d = s.d, dv = s.dv;
  const float *ktb = kt + (b * s.kvHeads + kvh) * d * tkp;
  const void *vb = kv_at(v, b * s.vs[0] + kvh * s.vs[1], half);

  /* The keys any row of the block sees: [j0, j1), j0 a multiple of KEY_PAD
   * (kt's tiles stay aligned), j1 rounded up to whole tiles within kt. */
  int64_t tk = keys_of(&s, rowPast, b);
  row_t row[PREFILL_ROWS];
  int64_t first = tk, last = -1;
  for (int64_t r = 0; r < rows; ++r) {
    row[r] = row_of(&s, tk, q, mask, relBias, slopes, b, h, i0 + r);
    first = row[r].first < first ? row[r].first : first;
    last = row[r].limit > last ? row[r].limit : last;
  }
  int64_t j0 = first / KEY_PAD * KEY_PAD;
  int64_t j1 = (last + 1 + KV * VL - 1) / (KV * VL) * (KV * VL);
  if (j1 < j0)
    j1 = j0;
  int64_t keys = last + 1 - j0; /* keys past `last` have p = 0 */
  if (keys < 0)
    keys = 0;
  /* The keys in chunks of at most TFC_UK_ATTENTION_PREFILL_KEYS (whole
   * register tiles): one chunk is each row's exact softmax; more carry each
   * row's running maximum m and sum l from chunk to chunk, the output
   * rescaled by e^(m - m') when the maximum grows, and divided by l at the
   * end (flash attention's online softmax, over chunks whose scores stay in
   * L1, so that memory stays linear in the keys). */
  int chunked = j1 - j0 > CHUNK;
  /* The block's rows RT at a time (one register tile's rows): their scores,
   * softmax and P.V, so that the scores on the stack are RT rows of a chunk
   * (32 KiB) whatever the block's rows and keys. Rows past the block repeat
   * its last row; their results are dropped. */
  float sc[RT * CHUNK];
  for (int64_t r0 = 0; r0 < rows; r0 += RT) {
    int64_t rr = rows - r0 < RT ? rows - r0 : RT;
    const float *qr[RT];
    for (int r = 0; r < RT; ++r)
      qr[r] = row[r < rr ? r0 + r : r0 + rr - 1].q;
    const float *pr[RT];
    float *dst[RT];
    float m[RT], l[RT], alpha[RT], inv[RT];
    for (int r = 0; r < RT; ++r) {
      int64_t rc = r < rr ? r : rr - 1;
      dst[r] = out + b * s.os[0] + h * s.os[1] + (i0 + r0 + rc) * s.os[2];
      m[r] = -__builtin_inff();
      l[r] = 0;
    }
    if (j1 <= j0) /* no row sees a key: zeros */
      for (int r = 0; r < rr; ++r)
        memset(dst[r], 0, (size_t)dv * sizeof(float));
    for (int64_t c0 = j0; c0 < j1; c0 += CHUNK) {
      int64_t width = j1 - c0 < CHUNK ? j1 - c0 : CHUNK; /* scores per row */
      /* Scores: RT rows x KV vectors of keys per register tile. */
      for (int64_t j = c0; j < c0 + width; j += KV * VL) {
        vf acc[RT][KV];
        tile_product(qr, ktb + j, tkp, d, acc, 0);
        for (int r = 0; r < rr; ++r)
          for (int c = 0; c < KV; ++c)
            vstore(sc + r * width + (j - c0) + c * VL, acc[r][c] * scale);
      }
      /* Each row's softmax over the chunk (unnormalised). */
      for (int64_t r = 0; r < rr; ++r) {
        float *sr = sc + r * width;
        /* (the padding past the last key: -inf, without reading the mask) */
        int64_t valid = tk - c0 < width ? tk - c0 : width;
        if (valid < 0)
          valid = 0;
        finish_scores(&s, &row[r0 + r], slopes != 0, softcap, sr, c0, valid);
        for (int64_t jj = valid; jj < width; ++jj)
          sr[jj] = -__builtin_inff();
        alpha[r] = online_softmax_step(sr, width, &m[r], &l[r]);
      }
      for (int r = 0; r < rr; ++r)
        inv[r] = l[r] != 0 ? 1.0f / l[r] : 0.0f;
      /* out = p . V: RT rows x KV vectors of V's columns per register tile
       * over the chunk's keys, p broadcast from the scores; stored scaled
       * by 1 / l (one chunk), else as they are (the first of several) or
       * added to the rescaled output of the chunks before. */
      int64_t ck = keys - (c0 - j0) < width ? keys - (c0 - j0) : width;
      if (ck < 0)
        ck = 0;
      int mode = !chunked ? 0 : c0 == j0 ? 1 : 2;
      for (int r = 0; r < RT; ++r)
        pr[r] = sc + (r < rr ? r : rr - 1) * width;
      const void *vc = kv_at(vb, c0 * s.vs[2], half);
      int64_t col = 0;
      for (; col + KV * VL <= dv; col += KV * VL) {
        vf acc[RT][KV];
        tile_product(pr, kv_at(vc, col, half), s.vs[2], ck, acc, half);
        for (int r = 0; r < rr; ++r)
          for (int c = 0; c < KV; ++c) {
            float *o = dst[r] + col + c * VL;
            vstore(o, mode == 0   ? acc[r][c] * inv[r]
                      : mode == 1 ? acc[r][c]
                                  : vload(o) * alpha[r] + acc[r][c]);
          }
      }
      /* V's last columns (dv not a multiple of KV * VL), one at a time. */
      for (; col < dv; ++col)
        for (int r = 0; r < rr; ++r) {
          float acc = 0;
          for (int64_t jj = 0; jj < ck; ++jj)
            acc += pr[r][jj] * kv_load(vc, jj * s.vs[2] + col, half);
          float *o = dst[r] + col;
          *o = mode == 0 ? acc * inv[r] : mode == 1 ? acc : *o * alpha[r] + acc;
        }
    }
    if (chunked) /* the running sums are complete: o / l */
      for (int r = 0; r < rr; ++r)
        for (int64_t col = 0; col < dv; ++col)
          dst[r][col] *= inv[r];
  }
}

void tfc_uk_attention_prefill(const float *q, const float *kt, const float *v,
                              const float *mask, const float *relBias,
                              const float *slopes, const int64_t *rowPast,
                              float *out, const int64_t *shape, float scale,
                              float softcap, int64_t task) {
  prefill(q, kt, v, mask, relBias, slopes, rowPast, out, shape, scale, softcap,
          task, 0);
}

void tfc_uk_attention_prefill_f16(const float *q, const float *kt,
                                  const uint16_t *v, const float *mask,
                                  const float *relBias, const float *slopes,
                                  const int64_t *rowPast, float *out,
                                  const int64_t *shape, float scale,
                                  float softcap, int64_t task) {
  prefill(q, kt, v, mask, relBias, slopes, rowPast, out, shape, scale, softcap,
          task, 1);
}
