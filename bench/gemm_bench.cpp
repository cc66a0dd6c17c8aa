//===- gemm_bench.cpp - tfc GEMMs against oneDNN and OpenBLAS -------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//   gemm_bench_tfc   M K N model.so scratch-dir [iterations]
//   gemm_bench_peers M K N scratch-dir [iterations]
//
// One source, two programs (bench/run.sh builds both, -DTFC_BENCH_PEERS for
// the second): tfc is timed in a process that does not load oneDNN or
// OpenBLAS, whose thread pools (OpenMP, OpenBLAS's servers pinning and
// spinning at start-up) otherwise took one of the two cores from tfc's
// threads in some processes and halved its speed at random.
//
// Times y = x · Wᵀ for x [M, K], W [N, K] three ways in one process, all with
// the same thread count (TFC_NUM_THREADS / OMP_NUM_THREADS, set by
// bench/run.sh), on the same W:
//  * the tfc-compiled model (one tfc.linear; through the runtime's C API, so
//    the time includes input checks and the output allocation), its weight
//    packed once when bound;
//  * oneDNN's matmul primitive with its weights reordered once at setup into
//    the layout the primitive asks for (format_tag::any): how inference
//    engines use oneDNN, with no repacking per call;
//  * OpenBLAS's cblas_sgemm (which packs per call; a second peer).
// The tfc program writes W to scratch-dir/w.safetensors, binds it, and
// writes its output and median time to scratch-dir/tfc.bin; the peers
// program uses the same W and checks tfc's output against oneDNN's (max
// |diff| relative to max |y|; the line says MISMATCH above 1e-5). It prints
// one line with the median times, GFLOP/s and the ratios tfc / peer.
//
//===----------------------------------------------------------------------===//

#ifdef TFC_BENCH_PEERS
#include <cblas.h>
#include <oneapi/dnnl/dnnl.hpp>
#else
#include "tfc/Runtime/tfc.h"
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace {

double medianMs(int iterations, const std::function<void()> &fn) {
  fn(); // warm-up
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

#ifndef TFC_BENCH_PEERS
int fail(const char *what) {
  std::fprintf(stderr, "gemm_bench: %s: %s\n", what, tfc_last_error());
  return 1;
}
#endif

#ifndef TFC_BENCH_PEERS
/// A one-tensor .safetensors file: "w", f32 [n, k].
bool writeWeights(const std::string &path, const std::vector<float> &w,
                  long n, long k) {
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
#endif

} // namespace

int main(int argc, char **argv) {
#ifdef TFC_BENCH_PEERS
  const int argScratch = 4, argIters = 5;
#else
  const int argScratch = 5, argIters = 6;
#endif
  if (argc <= argScratch) {
    std::fprintf(stderr, "usage: gemm_bench_tfc M K N model.so scratch-dir "
                         "[iters]\n       gemm_bench_peers M K N scratch-dir "
                         "[iters]\n");
    return 2;
  }
  long m = std::atol(argv[1]), k = std::atol(argv[2]), n = std::atol(argv[3]);
  std::string scratch = argv[argScratch];
  int iterations = argc > argIters ? std::atoi(argv[argIters]) : 50;

  std::vector<float> x(m * k), w(n * k), yTfc(m * n);
  for (long i = 0; i < m * k; ++i)
    x[i] = static_cast<float>((i * 7919) % 1000) / 1000.0f - 0.5f;
  for (long i = 0; i < n * k; ++i)
    w[i] = static_cast<float>((i * 104729) % 1000) / 1000.0f - 0.5f;
  std::string resultPath = scratch + "/tfc.bin";
  double tfcMs = 0;

#ifndef TFC_BENCH_PEERS
  std::string wPath = scratch + "/w.safetensors";
  if (!writeWeights(wPath, w, n, k)) {
    std::fprintf(stderr, "gemm_bench: cannot write %s\n", wPath.c_str());
    return 1;
  }
  tfc_model *model;
  if (tfc_model_load(argv[4], &model) != TFC_OK)
    return fail("load");
  if (tfc_model_load_weights(model, wPath.c_str()) != TFC_OK)
    return fail("weights");
  tfc_tensor in = {};
  in.dtype = TFC_F32;
  in.rank = 2;
  in.shape[0] = m;
  in.shape[1] = k;
  in.data = x.data();
  tfc_tensor out = {};
  if (tfc_run(model, "forward", &in, 1, &out, 1) != TFC_OK)
    return fail("run");
  std::copy_n(static_cast<const float *>(out.data), m * n, yTfc.data());
  tfc_tensor_release(&out);
  // Timed as oneDNN's primitive is: into a buffer the caller keeps
  // (tfc_run_into; steady state computes in place, no allocation).
  size_t intoBytes = (static_cast<size_t>(m * n) * sizeof(float) + 63) / 64 * 64;
  float *yInto = static_cast<float *>(std::aligned_alloc(64, intoBytes));
  tfc_tensor into = {};
  into.dtype = TFC_F32;
  into.rank = 2;
  into.shape[0] = m;
  into.shape[1] = n;
  into.data = yInto;
  bool ok = true;
  tfcMs = medianMs(iterations, [&] {
    if (tfc_run_into(model, "forward", &in, 1, &into, 1) != TFC_OK)
      ok = false;
  });
  for (long i = 0; i < m * n; ++i)
    if (yInto[i] != yTfc[i])
      ok = false;
  std::free(yInto);
  if (!ok)
    return fail("run");
  tfc_model_free(model);
  FILE *f = std::fopen(resultPath.c_str(), "wb");
  if (!f || std::fwrite(&tfcMs, sizeof(double), 1, f) != 1 ||
      std::fwrite(yTfc.data(), sizeof(float), yTfc.size(), f) != yTfc.size() ||
      std::fclose(f) != 0) {
    std::fprintf(stderr, "gemm_bench: cannot write %s\n", resultPath.c_str());
    return 1;
  }
  return 0;
#else
  FILE *f = std::fopen(resultPath.c_str(), "rb");
  if (!f || std::fread(&tfcMs, sizeof(double), 1, f) != 1 ||
      std::fread(yTfc.data(), sizeof(float), yTfc.size(), f) != yTfc.size()) {
    std::fprintf(stderr, "gemm_bench: cannot read %s (run gemm_bench_tfc "
                         "first)\n", resultPath.c_str());
    return 1;
  }
  std::fclose(f);
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
  std::vector<float> yDnnl(m * n);
  memory src(srcMd, eng, x.data()), dst(dstMd, eng, yDnnl.data());
  matmul prim(pd);
  auto runDnnl = [&] {
    prim.execute(s, {{DNNL_ARG_SRC, src},
                     {DNNL_ARG_WEIGHTS, packedW},
                     {DNNL_ARG_DST, dst}});
    s.wait();
  };
  runDnnl();
  double dnnlMs = medianMs(iterations, runDnnl);

  std::vector<float> yBlas(m * n);
  double blasMs = medianMs(iterations, [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f,
                x.data(), k, w.data(), k, 0.0f, yBlas.data(), n);
  });

  double maxDiff = 0, maxRef = 0;
  for (long i = 0; i < m * n; ++i) {
    maxDiff = std::max(maxDiff, double(std::fabs(yTfc[i] - yDnnl[i])));
    maxRef = std::max(maxRef, double(std::fabs(yDnnl[i])));
  }
  double rel = maxDiff / std::max(maxRef, 1e-30);
  double gflop = 2.0 * m * k * n / 1e9;
  std::printf("gemm %ldx%ldx%ld  tfc %7.3f ms %6.1f GFLOP/s | oneDNN matmul "
              "(prepacked) %7.3f ms %6.1f GFLOP/s | OpenBLAS %7.3f ms %6.1f "
              "GFLOP/s | tfc/oneDNN %.2f  tfc/OpenBLAS %.2f (GFLOP/s ratios) "
              "| max diff vs oneDNN %.1e relative%s\n",
              m, k, n, tfcMs, gflop / tfcMs * 1e3, dnnlMs,
              gflop / dnnlMs * 1e3, blasMs, gflop / blasMs * 1e3,
              dnnlMs / tfcMs, blasMs / tfcMs, rel,
              rel > 1e-5 ? " MISMATCH" : "");
  return rel > 1e-5 ? 1 : 0;
#endif
}
