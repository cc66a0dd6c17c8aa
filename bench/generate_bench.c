/* Generation speed of a model compiled with --kv-cache, through the C API:
 *
 *   generate_bench model.so weights [threads]
 *
 * Prints, on one line each:
 *   prefill P: the time of one session run over a P-token prompt and the
 *     tokens/s, for P = 128 and 1024 (where the context allows);
 *   decode at position N: the median time of one decode step (one token,
 *     the cache holding N tokens) over 16 steps, for N = 16, 256, 1024, 4096;
 *   bandwidth: a read-only sweep over 1 GiB, and the bound of a decode step:
 *     the bytes of the model's weights (in their stored formats; a decode
 *     step reads each once, a tied embedding table through the LM head)
 *     divided by it;
 * token ids are arbitrary (i mod 1000): speed does not depend on them. */
#define _POSIX_C_SOURCE 200809L
#include "tfc/Runtime/tfc.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static tfc_session *session;

static double run(int64_t n) {
  int64_t *ids = malloc(sizeof(int64_t) * n);
  for (int64_t i = 0; i < n; ++i)
    ids[i] = (tfc_session_position(session) + i) % 1000;
  tfc_tensor in = {TFC_I64, 2, {1, n}, ids, NULL}, out;
  double t0 = now_ms();
  if (tfc_session_run(session, &in, 1, &out, 1) != TFC_OK) {
    fprintf(stderr, "%s\n", tfc_last_error());
    exit(1);
  }
  double t = now_ms() - t0;
  tfc_tensor_release(&out);
  free(ids);
  return t;
}

typedef struct Sweep {
  const double *data;
  size_t n;
  double sum;
} Sweep;

static void *sweep(void *arg) {
  Sweep *s = arg;
  double acc[8] = {0};
  for (size_t i = 0; i + 8 <= s->n; i += 8)
    for (int k = 0; k < 8; ++k)
      acc[k] += s->data[i + k];
  for (int k = 0; k < 8; ++k)
    s->sum += acc[k];
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: generate_bench model.so weights [threads]\n");
    return 1;
  }
  int threads = argc > 3 ? atoi(argv[3]) : 2;
  tfc_set_num_threads(threads);
  tfc_model *model;
  if (tfc_model_load(argv[1], &model) != TFC_OK ||
      tfc_model_load_weights(model, argv[2]) != TFC_OK) {
    fprintf(stderr, "%s\n", tfc_last_error());
    return 1;
  }
  tfc_model_info info;
  tfc_model_get_info(model, &info);
  const char *entry = NULL;
  for (size_t e = 0; e < info.num_entries; ++e) {
    const char *name = tfc_model_entry_name(model, e);
    size_t len = strlen(name);
    if (len > 7 && strcmp(name + len - 7, "_cached") == 0)
      entry = name;
  }
  if (!entry) {
    fprintf(stderr, "no cached entry: compile with --kv-cache\n");
    return 1;
  }
  int64_t context = 4096 + 32;
  while (tfc_session_create(model, entry, 1, context, &session) != TFC_OK) {
    if (context <= 64) {
      fprintf(stderr, "%s\n", tfc_last_error());
      return 1;
    }
    context /= 2; /* within the model's sequence bound */
  }
  /* Prefill. */
  int64_t prompts[] = {128, 1024};
  for (int p = 0; p < 2; ++p) {
    if (prompts[p] + 1 > context)
      continue;
    tfc_session_rewind(session, 0);
    run(prompts[p]); /* records the memory plan */
    tfc_session_rewind(session, 0);
    double best = 1e30;
    for (int r = 0; r < 3; ++r) {
      tfc_session_rewind(session, 0);
      double t = run(prompts[p]);
      best = t < best ? t : best;
    }
    printf("prefill %lld: %.1f ms, %.1f tokens/s\n", (long long)prompts[p],
           best, prompts[p] * 1000.0 / best);
  }
  /* Decode at growing positions. */
  int64_t positions[] = {16, 256, 1024, 4096};
  tfc_session_rewind(session, 0);
  for (int k = 0; k < 4; ++k) {
    int64_t target = positions[k];
    if (target + 17 > context)
      break;
    while (tfc_session_position(session) < target) {
      int64_t chunk = target - tfc_session_position(session);
      run(chunk > 512 ? 512 : chunk);
    }
    double t[16];
    for (int s = 0; s < 16; ++s)
      t[s] = run(1);
    qsort(t, 16, sizeof(double), cmp);
    printf("decode at position %lld: %.2f ms/token, %.1f tokens/s\n",
           (long long)target, t[8], 1000.0 / t[8]);
    tfc_session_rewind(session, target);
  }
  /* Read bandwidth: 1 GiB swept by every thread over its part. */
  size_t n = (size_t)1 << 27;
  double *data = aligned_alloc(64, n * sizeof(double));
  for (size_t i = 0; i < n; ++i)
    data[i] = (double)(i & 7);
  double best = 1e30;
  for (int r = 0; r < 5; ++r) {
    pthread_t ids[64];
    Sweep parts[64];
    double t0 = now_ms();
    for (int i = 0; i < threads; ++i) {
      parts[i] = (Sweep){data + n / threads * i, n / threads, 0};
      pthread_create(&ids[i], NULL, sweep, &parts[i]);
    }
    for (int i = 0; i < threads; ++i)
      pthread_join(ids[i], NULL);
    double t = now_ms() - t0;
    best = t < best ? t : best;
  }
  double gbps = n * sizeof(double) / best / 1e6;
  printf("bandwidth: %.1f GB/s (read-only sweep of 1 GiB, %d threads)\n",
         gbps, threads);
  printf("bound: %.1f tokens/s (%.1f MB of weights per token)\n",
         gbps * 1e3 / (info.weight_bytes / 1e6), info.weight_bytes / 1e6);
  free(data);
  tfc_session_free(session);
  tfc_model_free(model);
  return 0;
}
