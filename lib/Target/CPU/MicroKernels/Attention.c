/*===- Attention.c - Attention for a few query rows over many keys ---------===//
 *
 * Part of tfc, a transformer compiler on MLIR.
 *
 * Decoding attends one new query row (or a few) to every cached key: the
 * work is a matrix-vector product over the keys, bound by reading K and V.
 * The flash-attention kernel of the tensor path (Attention.cpp) parallelises
 * over (batch, head, block of query rows), which for one row leaves one task
 * per head and reads each key/value head once per query head of its group.
 * Here (flash-decoding):
 *   - a task is (batch, key/value head, split of the keys): the keys are cut
 *     into splits so that even one sequence has work for every thread;
 *   - a task serves every query head of its key/value head's group (GQA)
 *     and every query row: each K and V row is read once per task;
 *   - per (query head, row) it keeps the running max m, sum l and
 *     unnormalised output o of online softmax over its keys, written to a
 *     partial buffer;
 *   - tfc_uk_attention_combine merges the splits of one (batch, head):
 *     o = sum_s e^(m_s - M) o_s / sum_s e^(m_s - M) l_s, M = max_s m_s;
 *     a row that saw no key (l = 0) gives zeros, as in the tensor path.
 * Scores are q.k * scale + mask (an additive bias, broadcast by zero
 * strides); with `causal`, row i sees keys j <= i + tk - tq.
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

/* Reductions are written over LANES independent partial sums: the compiler
 * may not reorder a float sum itself (no -ffast-math, which would also fold
 * exp_neg's rounding away), but it vectorises a loop over lanes. */
#define LANES 16

INLINE float dot(const float *a, const float *b, int64_t n) {
  float acc[LANES] = {0};
  int64_t i = 0;
  for (; i + LANES <= n; i += LANES)
    for (int t = 0; t < LANES; ++t)
      acc[t] += a[i + t] * b[i + t];
  for (int t = 0; i + t < n; ++t)
    acc[t] += a[i + t] * b[i + t];
  float sum = 0;
  for (int t = 0; t < LANES; ++t)
    sum += acc[t];
  return sum;
}

/* The shape array (MicroKernels.h, tfc_uk_attention_split). */
typedef struct {
  int64_t batch, heads, kvHeads, tq, tk, d, dv, splits, causal, window,
      relative, relativeRows;
  const int64_t *qs, *ks, *vs, *ms;
} shape_t;

INLINE shape_t read_shape(const int64_t *p) {
  shape_t s = {p[0], p[1],  p[2],  p[3],   p[4],   p[5],   p[6],   p[7],
               p[8], p[9],  p[10], p[11],  p + 12, p + 16, p + 20, p + 24};
  return s;
}

INLINE int64_t group_of(const shape_t *s) {
  int64_t kv = s->kvHeads > 0 ? s->kvHeads : 1;
  int64_t g = s->heads / kv;
  return g > 0 ? g : 1;
}

int64_t tfc_uk_attention_partial_floats(const int64_t *shape) {
  shape_t s = read_shape(shape);
  return s.batch * s.kvHeads * s.splits * group_of(&s) * s.tq * (2 + s.dv);
}

void tfc_uk_attention_split(const float *q, const float *k, const float *v,
                            const float *mask, const float *relBias,
                            const float *slopes, float *partial,
                            const int64_t *shape, float scale, int64_t task) {
  shape_t s = read_shape(shape);
  int64_t group = group_of(&s);
  int64_t split = task % s.splits, rest = task / s.splits;
  int64_t kvh = rest % s.kvHeads, b = rest / s.kvHeads;
  int64_t per = (s.tk + s.splits - 1) / s.splits;
  int64_t j0 = split * per, j1 = j0 + per < s.tk ? j0 + per : s.tk;
  int64_t rowsAll = group * s.tq, shift = s.tk - s.tq;
  float *out = partial + ((b * s.kvHeads + kvh) * s.splits + split) * rowsAll *
                             (2 + s.dv);
  const float *kb = k + b * s.ks[0] + kvh * s.ks[1];
  const float *vb = v + b * s.vs[0] + kvh * s.vs[1];
  for (int64_t r0 = 0; r0 < rowsAll; r0 += MAX_ROWS) {
    int64_t rows = rowsAll - r0 < MAX_ROWS ? rowsAll - r0 : MAX_ROWS;
    const float *qr[MAX_ROWS];
    const float *mr[MAX_ROWS];
    const float *br[MAX_ROWS]; /* the row's head's bias by distance, at 0 */
    float slope[MAX_ROWS];
    int64_t pos[MAX_ROWS]; /* the query's position among the keys */
    float *o[MAX_ROWS], m[MAX_ROWS], l[MAX_ROWS];
    int64_t limit[MAX_ROWS], first[MAX_ROWS];
    int64_t firstAll = s.tk;
    for (int64_t r = 0; r < rows; ++r) {
      int64_t g = (r0 + r) / s.tq, i = (r0 + r) % s.tq;
      int64_t h = kvh * group + g;
      if (h >= s.heads) /* heads not a multiple of kvHeads: clamp */
        h = s.heads - 1;
      qr[r] = q + b * s.qs[0] + h * s.qs[1] + i * s.qs[2];
      mr[r] = mask ? mask + b * s.ms[0] + h * s.ms[1] + i * s.ms[2] : 0;
      /* (heads past the table's rows, possible only at run time, read its
       * last) */
      br[r] = relBias ? relBias +
                            (h < s.relativeRows ? h : s.relativeRows - 1) *
                                (2 * s.relative + 1) +
                            s.relative
                      : 0;
      slope[r] = slopes ? slopes[h] : 0;
      pos[r] = i + shift;
      o[r] = out + (r0 + r) * (2 + s.dv) + 2;
      memset(o[r], 0, (size_t)s.dv * sizeof(float));
      m[r] = -__builtin_inff();
      l[r] = 0;
      limit[r] = s.causal ? i + shift : s.tk - 1; /* last visible key */
      /* first visible key (a window counts back from the diagonal) */
      first[r] = s.window > 0 && i + shift - s.window + 1 > 0
                     ? i + shift - s.window + 1
                     : 0;
      firstAll = first[r] < firstAll ? first[r] : firstAll;
    }
    /* Keys before every row's window are never read. */
    int64_t start = j0 > firstAll ? j0 : firstAll;
    float sc[MAX_ROWS][TILE];
    for (int64_t t0 = start; t0 < j1; t0 += TILE) {
      int64_t n = j1 - t0 < TILE ? j1 - t0 : TILE;
      /* Scores. */
      for (int64_t jj = 0; jj < n; ++jj) {
        const float *kr = kb + (t0 + jj) * s.ks[2];
        for (int64_t r = 0; r < rows; ++r)
          sc[r][jj] = dot(qr[r], kr, s.d) * scale;
      }
      /* Mask, causality, online softmax. */
      for (int64_t r = 0; r < rows; ++r) {
        float *sr = sc[r];
        if (mr[r])
          for (int64_t jj = 0; jj < n; ++jj)
            sr[jj] += mr[r][(t0 + jj) * s.ms[3]];
        if (br[r]) /* T5: bias by distance, clamped to [-R, R] */
          for (int64_t jj = 0; jj < n; ++jj) {
            int64_t dist = t0 + jj - pos[r];
            dist = dist < -s.relative ? -s.relative : dist;
            dist = dist > s.relative ? s.relative : dist;
            sr[jj] += br[r][dist];
          }
        if (slopes) /* ALiBi: slope . (j - i) */
          for (int64_t jj = 0; jj < n; ++jj)
            sr[jj] += slope[r] * (float)(t0 + jj - pos[r]);
        int64_t visible = limit[r] - t0 + 1;
        for (int64_t jj = visible < 0 ? 0 : visible; jj < n; ++jj)
          sr[jj] = -__builtin_inff();
        for (int64_t jj = 0; jj < n && t0 + jj < first[r]; ++jj)
          sr[jj] = -__builtin_inff();
        float lmax[LANES];
        for (int t = 0; t < LANES; ++t)
          lmax[t] = -__builtin_inff();
        for (int64_t jj = 0; jj < n; ++jj)
          lmax[jj % LANES] =
              sr[jj] > lmax[jj % LANES] ? sr[jj] : lmax[jj % LANES];
        float tmax = -__builtin_inff();
        for (int t = 0; t < LANES; ++t)
          tmax = lmax[t] > tmax ? lmax[t] : tmax;
        float mnew = tmax > m[r] ? tmax : m[r];
        if (mnew == -__builtin_inff()) { /* nothing seen yet */
          for (int64_t jj = 0; jj < n; ++jj)
            sr[jj] = 0;
          continue;
        }
        float alpha = exp_neg(m[r] - mnew);
        float lsum[LANES] = {0};
        for (int64_t jj = 0; jj < n; ++jj) {
          float p = exp_neg(sr[jj] - mnew);
          sr[jj] = p;
          lsum[jj % LANES] += p;
        }
        float sum = 0;
        for (int t = 0; t < LANES; ++t)
          sum += lsum[t];
        l[r] = l[r] * alpha + sum;
        m[r] = mnew;
        if (alpha != 1.0f)
          for (int64_t c = 0; c < s.dv; ++c)
            o[r][c] *= alpha;
      }
      /* o += p . V over the tile, each V row read once. */
      for (int64_t jj = 0; jj < n; ++jj) {
        const float *vr = vb + (t0 + jj) * s.vs[2];
        for (int64_t r = 0; r < rows; ++r) {
          float p = sc[r][jj];
          if (p == 0)
            continue;
          for (int64_t c = 0; c < s.dv; ++c)
            o[r][c] += p * vr[c];
        }
      }
    }
    for (int64_t r = 0; r < rows; ++r) {
      o[r][-2] = m[r];
      o[r][-1] = l[r];
    }
  }
}

void tfc_uk_attention_combine(const float *partial, float *out,
                              const int64_t *shape, int64_t task) {
  shape_t s = read_shape(shape);
  int64_t group = group_of(&s);
  int64_t h = task % s.heads, b = task / s.heads;
  int64_t kvh = h / group < s.kvHeads ? h / group : s.kvHeads - 1;
  int64_t g = h - kvh * group, rowsAll = group * s.tq;
  if (g >= group)
    g = group - 1;
  for (int64_t i = 0; i < s.tq; ++i) {
    int64_t row = g * s.tq + i;
    float *dst = out + ((b * s.heads + h) * s.tq + i) * s.dv;
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
