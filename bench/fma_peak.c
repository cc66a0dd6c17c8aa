/* The f32 FMA peak of this machine for one instruction set, on T threads:
 *
 *   fma_peak avx512|avx2 THREADS
 *
 * Each thread runs a loop of independent FMAs on 12 (AVX2: 12 ymm) or 24
 * (AVX-512: 24 zmm) accumulators, enough to cover the FMA latency on every
 * core seen here, for about half a second; the peak is the sum of the
 * threads' FLOP over the wall time. Prints "fma peak ISA: N GFLOP/s on T
 * threads", or that the host lacks the ISA. bench/run.sh divides measured
 * GFLOP/s by it. */
#define _GNU_SOURCE
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const long kIterations = 100000000L / 4;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static volatile float sink;

__attribute__((target("avx2,fma"))) static void *avx2(void *arg) {
  (void)arg;
  __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  __m256 acc[12];
  for (int i = 0; i < 12; ++i)
    acc[i] = _mm256_set1_ps((float)i);
  for (long it = 0; it < kIterations; ++it)
    for (int i = 0; i < 12; ++i)
      acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  float s = 0;
  for (int i = 0; i < 12; ++i) {
    float v[8];
    _mm256_storeu_ps(v, acc[i]);
    s += v[0];
  }
  sink = s;
  return NULL;
}

__attribute__((target("avx512f"))) static void *avx512(void *arg) {
  (void)arg;
  __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  __m512 acc[24];
  for (int i = 0; i < 24; ++i)
    acc[i] = _mm512_set1_ps((float)i);
  for (long it = 0; it < kIterations / 2; ++it)
    for (int i = 0; i < 24; ++i)
      acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  float s = 0;
  for (int i = 0; i < 24; ++i)
    s += _mm512_reduce_add_ps(acc[i]);
  sink = s;
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: fma_peak avx512|avx2 THREADS\n");
    return 2;
  }
  int wide = strcmp(argv[1], "avx512") == 0;
  int threads = atoi(argv[2]);
  __builtin_cpu_init();
  if (wide ? !__builtin_cpu_supports("avx512f")
           : !(__builtin_cpu_supports("avx2") &&
               __builtin_cpu_supports("fma"))) {
    printf("fma peak %s: the host does not have it\n", argv[1]);
    return 0;
  }
  void *(*fn)(void *) = wide ? avx512 : avx2;
  pthread_t tid[64];
  if (threads < 1 || threads > 64)
    threads = 1;
  fn(NULL); /* warm-up: clocks up, code paged in */
  double t0 = now();
  for (int t = 0; t < threads; ++t)
    pthread_create(&tid[t], NULL, fn, NULL);
  for (int t = 0; t < threads; ++t)
    pthread_join(tid[t], NULL);
  double seconds = now() - t0;
  /* Per thread: iterations x accumulators x lanes x 2 FLOP. */
  double flop = wide ? (double)(kIterations / 2) * 24 * 16 * 2
                     : (double)kIterations * 12 * 8 * 2;
  printf("fma peak %s: %.1f GFLOP/s on %d threads\n", argv[1],
         flop * threads / seconds / 1e9, threads);
  return 0;
}
