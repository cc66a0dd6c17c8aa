/* The C side of bench/python_overhead.py: the same calls the Python package
 * makes, straight through the C API.
 *
 *   python_overhead_capi encode MODEL.so WEIGHTS REPEATS ID,ID,...
 *     runs entry `encode` on one sequence (input_ids = the ids, attention
 *     mask of ones, token types of zeros: by input name) REPEATS times;
 *   python_overhead_capi decode MODEL.so WEIGHTS REPEATS ID,ID,...
 *     prefills the ids in a session of the cached entry, then REPEATS decode
 *     steps of one token, each rewound to the prompt's end (the same step
 *     every time);
 * and prints the median microseconds of one call. */
#define _POSIX_C_SOURCE 200809L
#include "tfc/Runtime/tfc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int fail(const char *what) {
  fprintf(stderr, "python_overhead_capi: %s: %s\n", what, tfc_last_error());
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: %s encode|decode MODEL.so WEIGHTS REPEATS IDS\n",
            argv[0]);
    return 2;
  }
  const char *mode = argv[1];
  int repeats = atoi(argv[4]);
  int64_t ids[4096];
  int n = 0;
  for (char *p = strtok(argv[5], ","); p && n < 4096; p = strtok(NULL, ","))
    ids[n++] = atoll(p);
  tfc_model *m;
  if (tfc_model_load(argv[2], &m) != TFC_OK)
    return fail("load");
  if (tfc_model_load_weights(m, argv[3]) != TFC_OK)
    return fail("weights");
  double *times = malloc(sizeof(double) * (size_t)repeats);
  if (strcmp(mode, "encode") == 0) {
    int64_t e = tfc_model_find_entry(m, "encode");
    if (e < 0)
      return fail("no entry encode");
    int64_t ones[4096], zeros[4096];
    for (int i = 0; i < n; ++i)
      ones[i] = 1, zeros[i] = 0;
    size_t ni = tfc_entry_num_inputs(m, (size_t)e);
    tfc_tensor in[8];
    for (size_t i = 0; i < ni && i < 8; ++i) {
      tfc_tensor_info info;
      tfc_entry_input_info(m, (size_t)e, i, &info);
      int64_t *data = strcmp(info.name, "input_ids") == 0        ? ids
                      : strcmp(info.name, "attention_mask") == 0 ? ones
                                                                 : zeros;
      tfc_tensor t = {TFC_I64, 2, {1, n}, data, NULL};
      in[i] = t;
    }
    for (int r = 0; r < repeats; ++r) {
      tfc_tensor out;
      double t0 = now_us();
      if (tfc_run(m, "encode", in, ni, &out, 1) != TFC_OK)
        return fail("run");
      tfc_tensor_release(&out);
      times[r] = now_us() - t0;
    }
  } else {
    /* The only cached entry, as the package picks it. */
    tfc_model_info info;
    tfc_model_get_info(m, &info);
    const char *entry = NULL;
    for (size_t i = 0; i < info.num_entries; ++i)
      if (strstr(tfc_model_entry_name(m, i), "_cached"))
        entry = tfc_model_entry_name(m, i);
    tfc_session *s;
    if (!entry || tfc_session_create(m, entry, 1, n + 16, &s) != TFC_OK)
      return fail("session");
    tfc_tensor prompt = {TFC_I64, 2, {1, n}, ids, NULL}, out;
    if (tfc_session_run(s, &prompt, 1, &out, 1) != TFC_OK)
      return fail("prefill");
    tfc_tensor_release(&out);
    int64_t token = ids[n - 1];
    tfc_tensor step = {TFC_I64, 2, {1, 1}, &token, NULL};
    for (int r = 0; r < repeats; ++r) {
      double t0 = now_us();
      if (tfc_session_run(s, &step, 1, &out, 1) != TFC_OK)
        return fail("decode");
      tfc_tensor_release(&out);
      times[r] = now_us() - t0;
      tfc_session_rewind(s, n);
    }
    tfc_session_free(s);
  }
  qsort(times, (size_t)repeats, sizeof(double), cmp);
  printf("%.2f\n", times[repeats / 2]);
  free(times);
  tfc_model_free(m);
  return 0;
}
