//===- gemm_bench.cpp - tfc GEMMs against oneDNN and OpenBLAS -------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//   gemm_bench M K N model.so scratch-dir [blocks] [iterations]
//   gemm_bench M K N a.so,b.so[,...] scratch-dir [rounds] [iterations]
//
// Times y = x · Wᵀ for x [M, K], W [N, K] three ways in one process, all with
// the same thread count (TFC_NUM_THREADS / OMP_NUM_THREADS, set by
// bench/run.sh), on the same W:
//  * the tfc-compiled model (one tfc.linear; through the runtime's C API,
//    tfc_run_into a buffer the caller keeps, as oneDNN's primitive writes
//    its destination), its weight packed once when bound;
//  * oneDNN's matmul primitive with its weights reordered once at setup into
//    the layout the primitive asks for (format_tag::any): how inference
//    engines use oneDNN, with no repacking per call;
//  * OpenBLAS's cblas_sgemm (which packs per call; a second peer).
//
// The three take turns in blocks (a warm-up call, then `iterations` timed
// calls; the block's median), `blocks` times: on a VM whose speed drifts
// by 2x within minutes, each ratio tfc / peer is taken of two blocks run
// well under a second apart, and the line reports the median of those per-block
// ratios next to each library's best and median block. Between blocks the
// program sleeps 150 ms, long enough for the previous library's threads to
// stop spinning (tfc's pool spins 1 ms, libgomp's threads 300000 pauses: 6
// ms at 20 ns a pause; OpenBLAS's servers up to 2^28 cycles), so that no
// library's idle threads take a core from the next one's. The order of the
// three goes through all six permutations. The ratios are of GFLOP/s (above
// 1: tfc is faster).
// tfc's output is checked against oneDNN's (max |diff| relative to max |y|;
// the line says MISMATCH above 1e-5, and the exit status is 1).
//
// Given several models (comma-separated: builds of tfc, or one build with
// different flags, compiled from the same GEMM; bench/ab-gemm.sh makes
// them), it compares them instead: the models and oneDNN take turns in
// `rounds` rounds (the order rotating), and each line gives a model's best
// and median GFLOP/s and the median over the rounds of its time relative to
// the first model's in the same round, the measure that a VM's slow phases
// disturb least (two builds of one commit: within 1-3 %).
//
//===----------------------------------------------------------------------===//

#include "tfc/Runtime/tfc.h"

#include <cblas.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

/// Median time of `iterations` calls of `fn` after one warm-up call.
double blockMs(int iterations, const std::function<void()> &fn) {
  fn();
  std::vector<double> times;
  for (int i = 0; i < iterations; ++i) {
    auto start = std::chrono::steady_clock::now();
    fn();
    auto end = std::chrono::steady_clock::now();
    times.push_back(
        std::chrono::duration<double, std::milli>(end - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

double medianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int fail(const char *what) {
  std::fprintf(stderr, "gemm_bench: %s: %s\n", what, tfc_last_error());
  return 1;
}

bool writeWeights(const std::string &path, const std::vector<float> &w, long n,
                  long k) {
  std::string header = "{\"w\":{\"dtype\":\"F32\",\"shape\":[" +
                       std::to_string(n) + "," + std::to_string(k) +
                       "],\"data_offsets\":[0," +
                       std::to_string(w.size() * sizeof(float)) + "]}}";
  while ((8 + header.size()) % 64 != 0)
    header += ' ';
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f)
    return false;
  uint64_t len = header.size();
  bool ok = std::fwrite(&len, 8, 1, f) == 1 &&
            std::fwrite(header.data(), 1, header.size(), f) == header.size() &&
            std::fwrite(w.data(), sizeof(float), w.size(), f) == w.size();
  return std::fclose(f) == 0 && ok;
}

/// Bytes of an [m, n] f32 output rounded up to 64, for aligned_alloc.
size_t outputBytes(long m, long n) {
  return (static_cast<size_t>(m * n) * sizeof(float) + 63) / 64 * 64;
}

/// max |y - ref| relative to max |ref| over `count` elements.
double relativeDiff(const float *y, const float *ref, long count) {
  double maxDiff = 0, maxRef = 0;
  for (long i = 0; i < count; ++i) {
    maxDiff = std::max(maxDiff, double(std::fabs(y[i] - ref[i])));
    maxRef = std::max(maxRef, double(std::fabs(ref[i])));
  }
  return maxDiff / std::max(maxRef, 1e-30);
}

/// One tfc-compiled GEMM: the weight bound once (packed at load), the
/// output into a buffer it keeps, 64-byte aligned as oneDNN's and tfc's own
/// are (an unaligned destination splits every vector store: 30 % slower).
struct TfcGemm {
  tfc_model *model = nullptr;
  tfc_tensor in = {}, out = {};
  float *y = nullptr;
  bool ok = true;

  TfcGemm() = default;
  TfcGemm(const TfcGemm &) = delete;
  TfcGemm &operator=(const TfcGemm &) = delete;
  /// False (tfc_last_error() says why) if the model or weight fails to load.
  bool load(const std::string &path, const std::string &wPath,
            std::vector<float> &x, long m, long k, long n) {
    if (tfc_model_load(path.c_str(), &model) != TFC_OK ||
        tfc_model_load_weights(model, wPath.c_str()) != TFC_OK)
      return false;
    in.dtype = out.dtype = TFC_F32;
    in.rank = out.rank = 2;
    in.shape[0] = out.shape[0] = m;
    in.shape[1] = k;
    out.shape[1] = n;
    in.data = x.data();
    y = static_cast<float *>(std::aligned_alloc(64, outputBytes(m, n)));
    out.data = y;
    return true;
  }
  void run() {
    if (tfc_run_into(model, "forward", &in, 1, &out, 1) != TFC_OK)
      ok = false;
  }
  ~TfcGemm() {
    tfc_model_free(model);
    std::free(y);
  }
};

/// The A/B mode: `gemms` compiled from one GEMM (named by `paths`),
/// compared with each other and with oneDNN's prepacked matmul (`runDnnl`,
/// writing `yDnnl`).
int compareModels(const std::vector<std::string> &paths,
                  std::vector<TfcGemm> &gemms, long m, long k, long n,
                  const std::function<void()> &runDnnl, const float *yDnnl,
                  int rounds, int iterations) {
  std::vector<std::function<void()>> runs;
  for (TfcGemm &gemm : gemms)
    runs.push_back([&gemm] { gemm.run(); });
  runs.push_back(runDnnl);
  size_t count = runs.size();
  std::vector<std::vector<double>> times(count), relative(count);
  for (int r = 0; r < rounds; ++r) {
    for (size_t j = 0; j < count; ++j) {
      size_t which = (j + r) % count;
      times[which].push_back(blockMs(iterations, runs[which]));
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    for (size_t j = 0; j < count; ++j)
      relative[j].push_back(times[j].back() / times[0].back());
  }
  bool mismatch = false;
  double gflop = 2.0 * m * k * n / 1e9;
  std::printf("gemm %ldx%ldx%ld, %d rounds of %d calls each:\n", m, k, n,
              rounds, iterations);
  for (size_t j = 0; j < count; ++j) {
    bool ours = j < gemms.size();
    std::printf("  %-20s GFLOP/s best %.1f median %.1f | time / first's in "
                "the same round: median %.3f",
                ours ? paths[j].c_str() : "oneDNN (prepacked)",
                gflop / *std::min_element(times[j].begin(), times[j].end()) *
                    1e3,
                gflop / medianOf(times[j]) * 1e3, medianOf(relative[j]));
    if (ours) {
      if (!gemms[j].ok)
        return fail("run");
      // Each model's output against oneDNN's, as in the main mode.
      double rel = relativeDiff(gemms[j].y, yDnnl, m * n);
      mismatch |= rel > 1e-5;
      std::printf(" | max diff vs oneDNN %.1e%s", rel,
                  rel > 1e-5 ? " MISMATCH" : "");
    }
    std::printf("\n");
  }
  return mismatch ? 1 : 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: gemm_bench M K N model.so[,model.so...] "
                         "scratch-dir [blocks|rounds] [iterations]\n");
    return 2;
  }
  long m = std::atol(argv[1]), k = std::atol(argv[2]), n = std::atol(argv[3]);
  std::string scratch = argv[5];
  int blocks = argc > 6 ? std::atoi(argv[6]) : 24;
  int iterations = argc > 7 ? std::atoi(argv[7]) : 20;
  if (m <= 0 || k <= 0 || n <= 0 || blocks <= 0 || iterations <= 0) {
    std::fprintf(stderr, "gemm_bench: sizes, blocks and iterations must be "
                         "positive\n");
    return 2;
  }

  std::vector<float> x(m * k), w(n * k);
  for (long i = 0; i < m * k; ++i)
    x[i] = static_cast<float>((i * 7919) % 1000) / 1000.0f - 0.5f;
  for (long i = 0; i < n * k; ++i)
    w[i] = static_cast<float>((i * 104729) % 1000) / 1000.0f - 0.5f;

  std::string wPath = scratch + "/w.safetensors";
  if (!writeWeights(wPath, w, n, k)) {
    std::fprintf(stderr, "gemm_bench: cannot write %s\n", wPath.c_str());
    return 1;
  }
  std::vector<std::string> paths;
  for (std::string rest = argv[4];;) {
    size_t comma = rest.find(',');
    paths.push_back(rest.substr(0, comma));
    if (comma == std::string::npos)
      break;
    rest = rest.substr(comma + 1);
  }
  std::vector<TfcGemm> gemms(paths.size());
  for (size_t i = 0; i < paths.size(); ++i)
    if (!gemms[i].load(paths[i], wPath, x, m, k, n))
      return fail(paths[i].c_str());
  size_t yBytes = outputBytes(m, n);

  // oneDNN: weights [K, N] viewed on W [N, K] (format "ba"), reordered once
  // into the primitive's layout.
  using namespace dnnl;
  using tag = memory::format_tag;
  using dt = memory::data_type;
  engine eng(engine::kind::cpu, 0);
  stream s(eng);
  memory::desc srcMd({m, k}, dt::f32, tag::ab);
  memory::desc dstMd({m, n}, dt::f32, tag::ab);
  memory::desc userWMd({k, n}, dt::f32, tag::ba);
  memory::desc anyWMd({k, n}, dt::f32, tag::any);
  matmul::primitive_desc pd(matmul::desc(srcMd, anyWMd, dstMd), eng);
  memory userW(userWMd, eng, w.data());
  memory packedW(pd.weights_desc(), eng);
  reorder(userW, packedW).execute(s, userW, packedW);
  s.wait();
  float *yDnnl = static_cast<float *>(std::aligned_alloc(64, yBytes));
  memory src(srcMd, eng, x.data()), dst(dstMd, eng, yDnnl);
  matmul prim(pd);
  std::function<void()> runDnnl = [&] {
    prim.execute(s, {{DNNL_ARG_SRC, src},
                     {DNNL_ARG_WEIGHTS, packedW},
                     {DNNL_ARG_DST, dst}});
    s.wait();
  };

  if (gemms.size() > 1) {
    runDnnl();
    int status = compareModels(paths, gemms, m, k, n, runDnnl, yDnnl, blocks,
                               iterations);
    std::free(yDnnl);
    return status;
  }
  TfcGemm &tfc = gemms[0];
  std::function<void()> runTfc = [&tfc] { tfc.run(); };

  float *yBlas = static_cast<float *>(std::aligned_alloc(64, yBytes));
  std::function<void()> runBlas = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f,
                x.data(), k, w.data(), k, 0.0f, yBlas, n);
  };

  // The order goes through all six permutations of the three, and every
  // block is followed by the same sleep (long enough for OpenBLAS's idle
  // servers), so that no library is more often first after the sleep or
  // next to a particular other one.
  using std::chrono::milliseconds;
  static const int kOrders[6][3] = {{0, 1, 2}, {1, 2, 0}, {2, 0, 1},
                                    {0, 2, 1}, {2, 1, 0}, {1, 0, 2}};
  std::vector<double> times[3], rDnnl, rBlas;
  const std::function<void()> *runs[3] = {&runTfc, &runDnnl, &runBlas};
  for (int b = 0; b < blocks; ++b) {
    for (int lib : kOrders[b % 6]) {
      times[lib].push_back(blockMs(iterations, *runs[lib]));
      std::this_thread::sleep_for(milliseconds(150));
    }
    rDnnl.push_back(times[1].back() / times[0].back());
    rBlas.push_back(times[2].back() / times[0].back());
  }
  const std::vector<double> &tTfc = times[0], &tDnnl = times[1],
                            &tBlas = times[2];
  if (!tfc.ok)
    return fail("run");

  double rel = relativeDiff(tfc.y, yDnnl, m * n);
  double gflop = 2.0 * m * k * n / 1e9;
  auto best = [&](const std::vector<double> &t) {
    return gflop / *std::min_element(t.begin(), t.end()) * 1e3;
  };
  auto typical = [&](const std::vector<double> &t) {
    return gflop / medianOf(t) * 1e3;
  };
  std::printf("gemm %ldx%ldx%ld, %d blocks of %d calls: GFLOP/s best/median "
              "block: tfc %.1f/%.1f | oneDNN matmul (prepacked) %.1f/%.1f | "
              "OpenBLAS %.1f/%.1f | median of the blocks' GFLOP/s ratios: "
              "tfc/oneDNN %.2f  tfc/OpenBLAS %.2f | max diff vs oneDNN %.1e "
              "relative%s\n",
              m, k, n, blocks, iterations, best(tTfc), typical(tTfc),
              best(tDnnl), typical(tDnnl), best(tBlas), typical(tBlas),
              medianOf(rDnnl), medianOf(rBlas), rel,
              rel > 1e-5 ? " MISMATCH" : "");
  std::free(yDnnl);
  std::free(yBlas);
  return rel > 1e-5 ? 1 : 0;
}
