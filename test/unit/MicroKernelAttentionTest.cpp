//===- MicroKernelAttentionTest.cpp - The attention C micro-kernels -------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// lib/Target/CPU/MicroKernels/Attention.c, built natively once per
// instruction set the models' bitcode is built for (test/unit/
// CMakeLists.txt), called the way Attention.cpp calls it (both the decode
// and the prefill kernel on every case, whatever the query rows), against
// softmax(q.k * scale + mask + position terms).v computed in double.
// Cases: GQA with head counts that divide and, as kernel IR with run-time
// head counts may have them, that do not (query head h reads key/value
// head min(h / max(H / Hkv, 1), Hkv - 1)), causal shifted diagonals, a
// window, a broadcast mask, T5's bias by distance (fewer rows than heads),
// ALiBi slopes, rows that see no key, and keys past one prefill chunk;
// keys and values of f32 and of f16 (normal, subnormal and zero halves).
// Every buffer is exactly as large as its shape, so that the sanitizer job
// (scripts/test-sanitizers.sh) sees any read or write out of bounds.
//
//===----------------------------------------------------------------------===//

#include "tfc/Runtime/ModelMetadata.h"
#include "tfc/Target/CPU/MicroKernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <dlfcn.h>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

using ScoringFn = void (*)(const float *, const float *, const float *,
                           const float *, const float *, const float *,
                           const int64_t *, float *, const int64_t *, float,
                           float, int64_t);
using SizeFn = int64_t (*)(const int64_t *);
using CombineFn = void (*)(const float *, float *, const int64_t *, int64_t);
using TransposeFn = void (*)(const float *, float *, const int64_t *, int64_t);
// The *_f16 entry points take k (or v) as IEEE halves (their exact types:
// the sanitizer job checks calls through function pointers).
using ScoringF16Fn = void (*)(const float *, const uint16_t *, const uint16_t *,
                              const float *, const float *, const float *,
                              const int64_t *, float *, const int64_t *, float,
                              float, int64_t);
using PrefillF16Fn = void (*)(const float *, const float *, const uint16_t *,
                              const float *, const float *, const float *,
                              const int64_t *, float *, const int64_t *, float,
                              float, int64_t);
using TransposeF16Fn = void (*)(const uint16_t *, float *, const int64_t *,
                                int64_t);

/// One build of Attention.c, loaded from its shared library.
struct Kernels {
  std::string isa;
  void *handle = nullptr;
  SizeFn partialFloats, ktFloats, prefillTasks;
  ScoringFn split, prefill;
  CombineFn combine;
  TransposeFn transpose;
  ScoringF16Fn splitF16;
  PrefillF16Fn prefillF16;
  TransposeF16Fn transposeF16;
};

/// Whether this CPU runs the build for `isa` (the names of
/// lib/Target/CPU/MicroKernels/CMakeLists.txt), as the runtime sees it: with
/// TFC_HOST_CPU's mask (include/tfc/Schemas/CpuLevels.h), a masked run
/// skips the builds the level lacks.
bool hostRuns(const std::string &isa) {
  auto has = [](std::initializer_list<const char *> features) {
    for (const char *f : features)
      if (tfc::rt::hostHasFeature(f) != tfc::rt::FeatureSupport::Yes)
        return false;
    return true;
  };
  if (isa == "avx2")
    return has({"avx2", "fma", "f16c"});
  if (isa == "avx512vnni")
    return has({"avx512f", "avx512bw", "avx512vl", "avx512vnni"});
  return true;
}

/// The builds the host runs ("isa=path,..." from the build).
std::vector<Kernels> &loadedKernels() {
  static std::vector<Kernels> all = [] {
    std::vector<Kernels> out;
    std::stringstream list(TFC_UK_ATTENTION_LIBS);
    for (std::string item; std::getline(list, item, ',');) {
      size_t eq = item.find('=');
      Kernels k;
      k.isa = item.substr(0, eq);
      if (!hostRuns(k.isa))
        continue;
      std::string path = item.substr(eq + 1);
      k.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!k.handle) {
        ADD_FAILURE() << "cannot load " << path << ": " << dlerror();
        continue;
      }
      auto sym = [&](const char *name) {
        void *p = dlsym(k.handle, name);
        EXPECT_NE(p, nullptr) << name << " missing from " << path;
        return p;
      };
      k.partialFloats = (SizeFn)sym("tfc_uk_attention_partial_floats");
      k.ktFloats = (SizeFn)sym("tfc_uk_attention_kt_floats");
      k.prefillTasks = (SizeFn)sym("tfc_uk_attention_prefill_tasks");
      k.split = (ScoringFn)sym("tfc_uk_attention_split");
      k.prefill = (ScoringFn)sym("tfc_uk_attention_prefill");
      k.combine = (CombineFn)sym("tfc_uk_attention_combine");
      k.transpose = (TransposeFn)sym("tfc_uk_attention_transpose_k");
      k.splitF16 = (ScoringF16Fn)sym("tfc_uk_attention_split_f16");
      k.prefillF16 = (PrefillF16Fn)sym("tfc_uk_attention_prefill_f16");
      k.transposeF16 = (TransposeF16Fn)sym("tfc_uk_attention_transpose_k_f16");
      out.push_back(k);
    }
    return out;
  }();
  return all;
}

/// One attention problem: q [B, H, Tq, D], k [B, Hkv, Tk, D], v [B, Hkv,
/// Tk, Dv], an optional mask [B, 1, Tq, Tk] (broadcast over heads), an
/// optional bias by distance [rows, 2R + 1], optional ALiBi slopes [H].
struct Problem {
  int64_t batch = 1, heads = 1, kvHeads = 1, tq = 1, tk = 1, d = 16, dv = 16;
  bool causal = false;
  int64_t window = 0;
  bool mask = false;
  int64_t relative = 0, relativeRows = 0;
  bool alibi = false;
  float scale = 0.25f;
  /// Gemma 2's soft cap of the scaled scores (0: none).
  float softcap = 0;
  /// Keys and values as IEEE halves (kh, vh; k and v hold their values).
  bool half = false;
  /// Each batch row's position: it sees keys [0, rowPast[b] + tq) (empty:
  /// tk for every row).
  std::vector<int64_t> rowPast;

  std::vector<float> q, k, v, maskData, bias, slopes;
  std::vector<uint16_t> kh, vh;

  /// x rounded to half precision (its bits in *bits).
  static float toHalf(float x, uint16_t *bits) {
    _Float16 h = static_cast<_Float16>(x);
    std::memcpy(bits, &h, 2);
    return static_cast<float>(h);
  }

  void fill(unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    auto random = [&](int64_t n) {
      std::vector<float> x(static_cast<size_t>(n));
      for (float &e : x)
        e = u(rng);
      return x;
    };
    q = random(batch * heads * tq * d);
    k = random(batch * kvHeads * tk * d);
    v = random(batch * kvHeads * tk * dv);
    if (half) {
      // Some subnormal halves (below 2^-14) and zeros too.
      for (size_t i = 0; i < k.size(); i += 11)
        k[i] = i % 2 ? 3e-6f * k[i] : 0.0f;
      for (size_t i = 0; i < v.size(); i += 13)
        v[i] = i % 2 ? -2e-5f * v[i] : 0.0f;
      kh.resize(k.size());
      vh.resize(v.size());
      for (size_t i = 0; i < k.size(); ++i)
        k[i] = toHalf(k[i], &kh[i]);
      for (size_t i = 0; i < v.size(); ++i)
        v[i] = toHalf(v[i], &vh[i]);
    }
    if (mask) {
      // A padding mask: -inf on a few keys per row, small biases elsewhere.
      maskData = random(batch * tq * tk);
      for (size_t i = 0; i < maskData.size(); ++i)
        if (i % 7 == 3)
          maskData[i] = -INFINITY;
    }
    if (relative > 0)
      bias = random(relativeRows * (2 * relative + 1));
    if (alibi)
      for (int64_t h = 0; h < heads; ++h)
        slopes.push_back(std::pow(2.0f, -8.0f * (h + 1) / heads));
  }

  /// The shape array of MicroKernels.h.
  std::vector<int64_t> shape(int64_t splits) const {
    std::vector<int64_t> s = {batch,  heads,  kvHeads,  tq,
                              tk,     d,      dv,       splits,
                              causal, window, relative, relativeRows};
    auto strides = [&](int64_t h, int64_t t, int64_t w) {
      s.insert(s.end(), {h * t * w, t * w, w, 1});
    };
    strides(heads, tq, d);
    strides(kvHeads, tk, d);
    strides(kvHeads, tk, dv);
    if (mask)
      s.insert(s.end(), {tq * tk, 0, tk, 1});
    else
      s.insert(s.end(), {0, 0, 0, 0});
    strides(heads, tq, dv);
    EXPECT_EQ(s.size(), size_t(TFC_UK_ATTENTION_SHAPE));
    return s;
  }

  /// The expected output [B, H, Tq, Dv], in double.
  std::vector<double> reference() const {
    std::vector<double> out(static_cast<size_t>(batch * heads * tq * dv), 0);
    int64_t group = std::max<int64_t>(heads / std::max<int64_t>(kvHeads, 1), 1);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t h = 0; h < heads; ++h) {
        int64_t keys =
            rowPast.empty() ? tk : std::clamp<int64_t>(rowPast[b] + tq, 0, tk);
        int64_t shift = keys - tq;
        int64_t kvh = std::min(h / group, kvHeads - 1);
        for (int64_t i = 0; i < tq; ++i) {
          int64_t pos = i + shift;
          std::vector<double> s(static_cast<size_t>(tk), -INFINITY);
          double m = -INFINITY;
          for (int64_t j = 0; j < tk; ++j) {
            if (j >= keys || (causal && j > pos) ||
                (window > 0 && j <= pos - window))
              continue;
            double x = 0;
            for (int64_t c = 0; c < d; ++c)
              x += double(q[((b * heads + h) * tq + i) * d + c]) *
                   k[((b * kvHeads + kvh) * tk + j) * d + c];
            x *= scale;
            if (softcap > 0)
              x = softcap * std::tanh(x / softcap);
            if (mask)
              x += maskData[(b * tq + i) * tk + j];
            if (relative > 0) {
              int64_t dist = std::clamp<int64_t>(j - pos, -relative, relative);
              x += bias[std::min(h, relativeRows - 1) * (2 * relative + 1) +
                        dist + relative];
            }
            if (alibi)
              x += double(slopes[h]) * double(j - pos);
            s[j] = x;
            m = std::max(m, x);
          }
          if (m == -INFINITY)
            continue; // no key seen: zeros
          double l = 0;
          for (double &x : s)
            l += (x = std::exp(x - m));
          double *o = &out[((b * heads + h) * tq + i) * dv];
          for (int64_t j = 0; j < tk; ++j)
            for (int64_t c = 0; c < dv; ++c)
              o[c] += s[j] / l * v[((b * kvHeads + kvh) * tk + j) * dv + c];
        }
      }
    return out;
  }

  const float *maskOrNull() const { return mask ? maskData.data() : nullptr; }
  const float *biasOrNull() const {
    return relative > 0 ? bias.data() : nullptr;
  }
  const float *slopesOrNull() const { return alibi ? slopes.data() : nullptr; }
  const int64_t *lengthsOrNull() const {
    return rowPast.empty() ? nullptr : rowPast.data();
  }
  int64_t runHeads() const { return kvHeads == 0 ? 0 : heads; }

  /// Attention.cpp's decode path: splits of 256 keys (1 to 32), the split
  /// tasks, then the combine per (batch, head).
  std::vector<float> decode(const Kernels &uk) const {
    int64_t splits = std::clamp<int64_t>((tk + 255) / 256, 1, 32);
    std::vector<int64_t> s = shape(splits);
    std::vector<float> partial(static_cast<size_t>(uk.partialFloats(s.data())));
    std::vector<float> out(static_cast<size_t>(batch * heads * tq * dv), NAN);
    for (int64_t t = 0; t < batch * kvHeads * splits; ++t)
      if (half)
        uk.splitF16(q.data(), kh.data(), vh.data(), maskOrNull(), biasOrNull(),
                    slopesOrNull(), lengthsOrNull(), partial.data(), s.data(),
                    scale, softcap, t);
      else
        uk.split(q.data(), k.data(), v.data(), maskOrNull(), biasOrNull(),
                 slopesOrNull(), lengthsOrNull(), partial.data(), s.data(),
                 scale, softcap, t);
    for (int64_t t = 0; t < batch * runHeads(); ++t)
      uk.combine(partial.data(), out.data(), s.data(), t);
    return out;
  }

  /// Attention.cpp's prefill path: K transposed per (batch, key/value
  /// head), then the prefill tasks.
  std::vector<float> prefill(const Kernels &uk) const {
    std::vector<int64_t> s = shape(1);
    std::vector<float> kt(static_cast<size_t>(uk.ktFloats(s.data())));
    std::vector<float> out(static_cast<size_t>(batch * heads * tq * dv), NAN);
    for (int64_t t = 0; t < batch * kvHeads; ++t)
      if (half)
        uk.transposeF16(kh.data(), kt.data(), s.data(), t);
      else
        uk.transpose(k.data(), kt.data(), s.data(), t);
    int64_t tasks = runHeads() == 0 ? 0 : uk.prefillTasks(s.data());
    for (int64_t t = 0; t < tasks; ++t)
      if (half)
        uk.prefillF16(q.data(), kt.data(), vh.data(), maskOrNull(),
                      biasOrNull(), slopesOrNull(), lengthsOrNull(), out.data(),
                      s.data(), scale, softcap, t);
      else
        uk.prefill(q.data(), kt.data(), v.data(), maskOrNull(), biasOrNull(),
                   slopesOrNull(), lengthsOrNull(), out.data(), s.data(), scale,
                   softcap, t);
    return out;
  }
};

/// Every element within 1e-5 x max(|ref|, rms(ref)) (the E2E tests' bound).
void expectClose(const std::vector<float> &got, const std::vector<double> &ref,
                 const std::string &what) {
  ASSERT_EQ(got.size(), ref.size()) << what;
  double rms = 0;
  for (double r : ref)
    rms += r * r;
  rms = std::sqrt(rms / std::max<size_t>(ref.size(), 1));
  double worst = 0;
  size_t at = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    double err = std::fabs(got[i] - ref[i]) / std::max(std::fabs(ref[i]), rms);
    if (!(err <= worst)) { // NaN counts as the worst
      worst = std::isnan(err) ? INFINITY : err;
      at = i;
    }
  }
  EXPECT_LE(worst, 1e-5) << what << ": element " << at << " is " << got[at]
                         << ", expected " << ref[at];
}

void checkOne(const Problem &base, unsigned seed) {
  Problem p = base;
  p.fill(seed);
  std::vector<double> ref = p.reference();
  ASSERT_FALSE(loadedKernels().empty()) << "no build of Attention.c runs here";
  for (const Kernels &uk : loadedKernels()) {
    std::ostringstream what;
    what << uk.isa << (p.half ? " f16" : "") << " H=" << p.heads
         << " Hkv=" << p.kvHeads << " tq=" << p.tq << " tk=" << p.tk
         << " d=" << p.d << " dv=" << p.dv;
    expectClose(p.decode(uk), ref, "decode " + what.str());
    expectClose(p.prefill(uk), ref, "prefill " + what.str());
  }
}

/// Every case with keys and values of f32 and of f16.
void check(const Problem &base, unsigned seed = 1) {
  checkOne(base, seed);
  Problem half = base;
  half.half = true;
  checkOne(half, seed);
}

TEST(MicroKernelAttention, GroupedQueryHeadsThatDivide) {
  Problem p;
  p.batch = 2, p.heads = 6, p.kvHeads = 2, p.tq = 3, p.tk = 45, p.d = 24,
  p.dv = 20;
  check(p);
  p.tq = 37;
  check(p);
}

// Run-time head counts that are not a multiple of each other (kernel IR
// with dynamic head dims; the verifiers reject static ones): the heads
// past the last whole group read the last key/value head, and nothing is
// read or written out of bounds.
TEST(MicroKernelAttention, HeadCountsThatDoNotDivide) {
  for (auto [h, hkv] :
       {std::pair<int64_t, int64_t>{5, 2}, {7, 3}, {1, 2}, {2, 3}, {3, 1}}) {
    Problem p;
    p.batch = 2, p.heads = h, p.kvHeads = hkv, p.d = 16, p.dv = 24;
    p.causal = true;
    for (int64_t tq : {1, 4, 21}) {
      p.tq = tq, p.tk = tq + 30;
      check(p, static_cast<unsigned>(h * 100 + hkv * 10 + tq));
    }
  }
}

TEST(MicroKernelAttention, NoKeyValueHeadsRunsNoTask) {
  Problem p;
  p.heads = 4, p.kvHeads = 0, p.tq = 3, p.tk = 9;
  p.fill(3);
  for (const Kernels &uk : loadedKernels()) {
    // No task runs: the output keeps what it had (NaN here).
    for (float x : p.decode(uk))
      EXPECT_TRUE(std::isnan(x)) << uk.isa;
    for (float x : p.prefill(uk))
      EXPECT_TRUE(std::isnan(x)) << uk.isa;
  }
}

TEST(MicroKernelAttention, CausalWindowAndRowsWithoutKeys) {
  Problem p;
  p.heads = 4, p.kvHeads = 2, p.d = 40, p.dv = 40;
  p.causal = true, p.window = 9;
  // tq > tk: the first rows see no key (zeros).
  for (auto [tq, tk] :
       {std::pair<int64_t, int64_t>{40, 20}, {45, 45}, {2, 70}, {37, 45}}) {
    p.tq = tq, p.tk = tk;
    check(p);
  }
}

TEST(MicroKernelAttention, MaskBiasByDistanceAndAlibi) {
  Problem p;
  p.batch = 2, p.heads = 3, p.kvHeads = 3, p.tq = 17, p.tk = 33, p.d = 64,
  p.dv = 64;
  p.mask = true;
  check(p);
  p.mask = false;
  p.relative = 5, p.relativeRows = 2; // heads past the table read its last row
  check(p);
  p.relative = 0, p.alibi = true, p.causal = true;
  check(p);
  p.tq = 2;
  check(p);
}

// Head sizes of many vectors (160) and not a multiple of the vector (8200:
// the decode kernel's per-row scores); d != dv, GQA, keys past one tile.
// Rows at their own positions over one cache (rowPast): each row sees its
// first rowPast[b] + tq keys, its causal diagonal and window counted from
// there, and some rows none at all.
TEST(MicroKernelAttention, RowsAtTheirOwnPositions) {
  Problem p;
  p.batch = 4, p.heads = 4, p.kvHeads = 2, p.d = 32, p.dv = 32;
  p.causal = true;
  for (int64_t tq : {1, 3, 20}) {
    p.tq = tq, p.tk = 700;
    p.rowPast = {700 - tq, 0, 300, -tq};
    check(p, static_cast<unsigned>(tq));
  }
  p.tq = 2, p.window = 40, p.rowPast = {511, 0, 698, 39};
  check(p);
  p.window = 0, p.causal = false, p.mask = true, p.rowPast = {3, -2, 697, 698};
  check(p);
}

// What a row computes does not depend on the other rows of the call: with
// rowPast, row b's output is bit for bit what a call of that row alone,
// over exactly its own keys, computes (the decode kernel splits each row's
// keys by its own count). Batch invariance of the serving engine rests on it.
TEST(MicroKernelAttention, RowsAreBatchInvariant) {
  for (bool half : {false, true}) {
    Problem all;
    all.batch = 3, all.heads = 4, all.kvHeads = 2, all.d = 64, all.dv = 64;
    all.causal = true, all.half = half, all.tq = 1, all.tk = 1500;
    all.rowPast = {1499, 256, 699};
    all.fill(7);
    for (const Kernels &uk : loadedKernels()) {
      std::vector<float> together = all.decode(uk);
      for (int64_t b = 0; b < all.batch; ++b) {
        Problem one = all;
        one.batch = 1, one.tk = all.rowPast[b] + all.tq, one.rowPast.clear();
        auto rowsOf = [&](const std::vector<float> &from, int64_t row,
                          int64_t stride, int64_t n) {
          return std::vector<float>(from.begin() + row * stride,
                                    from.begin() + row * stride + n);
        };
        int64_t kd = all.kvHeads * all.tk * all.d;
        int64_t vd = all.kvHeads * all.tk * all.dv;
        int64_t qd = all.heads * all.tq * all.d;
        one.q = rowsOf(all.q, b, qd, qd);
        // Row b's keys: the first rowPast[b] + tq of each key/value head.
        one.k.clear(), one.v.clear(), one.kh.clear(), one.vh.clear();
        for (int64_t h = 0; h < all.kvHeads; ++h) {
          int64_t k0 = b * kd + h * all.tk * all.d;
          int64_t v0 = b * vd + h * all.tk * all.dv;
          one.k.insert(one.k.end(), all.k.begin() + k0,
                       all.k.begin() + k0 + one.tk * all.d);
          one.v.insert(one.v.end(), all.v.begin() + v0,
                       all.v.begin() + v0 + one.tk * all.dv);
          if (half) {
            one.kh.insert(one.kh.end(), all.kh.begin() + k0,
                          all.kh.begin() + k0 + one.tk * all.d);
            one.vh.insert(one.vh.end(), all.vh.begin() + v0,
                          all.vh.begin() + v0 + one.tk * all.dv);
          }
        }
        std::vector<float> alone = one.decode(uk);
        int64_t od = all.heads * all.tq * all.dv;
        EXPECT_EQ(rowsOf(together, b, od, od), alone)
            << uk.isa << (half ? " f16" : "") << " row " << b;
      }
    }
  }
}

// Gemma 2's soft cap: scores c tanh(s / c) before the mask. Scores of
// every size: tiny (tanh's series), around the cap (its exponential form),
// far past it (saturated), negative and positive, with a mask and a window,
// on whole vectors and their tails (tk not a multiple of the lanes).
TEST(MicroKernelAttention, SoftCappedScores) {
  Problem p;
  p.batch = 2, p.heads = 4, p.kvHeads = 2, p.d = 64, p.dv = 32;
  p.mask = true;
  for (auto [scale, cap] : {std::pair<float, float>{0.125f, 50.0f},
                            {4.0f, 5.0f},
                            {1e-4f, 1.0f},
                            {30.0f, 0.5f}}) {
    p.scale = scale, p.softcap = cap;
    p.tq = 13, p.tk = 77;
    check(p, static_cast<unsigned>(cap * 10));
    p.tq = 1, p.tk = 301;
    check(p);
  }
  p.mask = false, p.causal = true, p.window = 7, p.scale = 2.0f,
  p.softcap = 3.0f;
  p.tq = 20, p.tk = 20;
  check(p);
}

TEST(MicroKernelAttention, WideHeads) {
  Problem p;
  p.heads = 4, p.kvHeads = 2, p.d = 160, p.dv = 48, p.causal = true;
  p.tq = 3, p.tk = 300;
  check(p);
  p.d = 8200, p.dv = 16, p.tq = 2, p.tk = 5, p.scale = 0.01f;
  check(p);
}

// Past TFC_UK_ATTENTION_PREFILL_KEYS keys the prefill kernel carries each
// row's running maximum and sum across chunks; past 256 the decode kernel
// splits the keys.
TEST(MicroKernelAttention, KeysPastOneChunk) {
  Problem p;
  p.heads = 4, p.kvHeads = 1, p.d = 20, p.dv = 20;
  p.mask = true;
  p.tq = 20, p.tk = TFC_UK_ATTENTION_PREFILL_KEYS + 6;
  check(p);
  p.mask = false, p.causal = true, p.alibi = true;
  p.tq = 3, p.tk = 2 * TFC_UK_ATTENTION_PREFILL_KEYS + 1;
  check(p);
}

} // namespace
