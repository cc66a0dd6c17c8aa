/* Rows at their own positions (tfc_session_run_rows), as a serving engine
 * batches requests, through the C API only:
 *
 *   rows_engine model.so weights ENTRY
 *
 * ENTRY is a cached entry whose model also has the rows form (tfc-compile
 * --kv-cache --kv-cache-rows). Four prompts of different lengths each
 * generate kSteps tokens greedily, first alone (a session of batch 1 each,
 * tfc_session_run_into), then together in one session of batch 4: the
 * prompts join at different steps (each prefilled as one row, at position
 * 0 of its own row of the caches), and every step decodes all the rows that
 * have joined as one run, each at its own position (rows that are done keep
 * running, their output unread). Every row must generate its solo tokens;
 * the line of each says whether its logits were also bit for bit the solo
 * ones (batch invariance) or how far they were. Then what the call refuses.
 * Exit status 1 on any failure. */
#include "tfc/Runtime/tfc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kRows = 4, kSteps = 12, kMaxPrompt = 16, kContext = 64 };

static const int kLengths[kRows] = {5, 9, 2, 13};
static const int kJoin[kRows] = {0, 2, 3, 7}; /* the step each row joins at */

static tfc_model *model;
static const char *entry;
static int64_t vocab;
/* The logits that decide each step's token, solo: [row][step][vocab]. */
static float *soloLogits;
static float *solo(int row, int step) {
  return soloLogits + ((size_t)row * kSteps + (size_t)step) * (size_t)vocab;
}
/* Room for the logits of a run of every row or of a whole prompt. */
static float *logits;
static int64_t soloTokens[kRows][kSteps];

static void prompt(int row, int64_t *ids) {
  for (int k = 0; k < kLengths[row]; ++k)
    ids[k] = (row * 13 + k * 7 + 1) % vocab;
}

static int64_t argmax(const float *x) {
  int64_t best = 0;
  for (int64_t v = 1; v < vocab; ++v)
    if (x[v] > x[best])
      best = v;
  return best;
}

static int fail(const char *what) {
  fprintf(stderr, "%s: %s\n", what, tfc_last_error());
  return 1;
}

/* Each prompt alone: the logits of the last position of each run. */
static int runSolo(void) {
  for (int row = 0; row < kRows; ++row) {
    tfc_session *s = NULL;
    if (tfc_session_create(model, entry, 1, kContext, &s) != TFC_OK)
      return fail("solo session");
    int64_t ids[kMaxPrompt];
    prompt(row, ids);
    int64_t n = kLengths[row];
    for (int step = 0; step < kSteps; ++step) {
      tfc_tensor in = {TFC_I64, 2, {1, n}, ids, NULL};
      tfc_tensor out = {TFC_F32, 3, {1, n, vocab}, logits, NULL};
      if (tfc_session_run_into(s, &in, 1, NULL, &out, 1) != TFC_OK) {
        /* --kv-cache-last: one position */
        out.shape[1] = 1;
        if (tfc_session_run_into(s, &in, 1, NULL, &out, 1) != TFC_OK)
          return fail("solo run");
      }
      const float *last = logits + (out.shape[1] - 1) * vocab;
      memcpy(solo(row, step), last, sizeof(float) * vocab);
      soloTokens[row][step] = argmax(last);
      ids[0] = soloTokens[row][step];
      n = 1;
    }
    tfc_session_free(s);
  }
  return 0;
}

static int together(void) {
  tfc_session *s = NULL;
  if (tfc_session_create(model, entry, kRows, kContext, &s) != TFC_OK)
    return fail("engine session");
  int64_t position[kRows] = {0}, last[kRows] = {0};
  int done[kRows] = {0}, same[kRows], bitwise[kRows];
  double worst[kRows] = {0};
  for (int r = 0; r < kRows; ++r)
    same[r] = bitwise[r] = 1;
  int joined = 0;
  for (int step = 0; joined < kRows || step < kJoin[kRows - 1] + kSteps;
       ++step) {
    /* Rows that join now: their prompt, as one row at position 0. */
    while (joined < kRows && kJoin[joined] == step) {
      int row = joined++;
      int64_t ids[kMaxPrompt];
      prompt(row, ids);
      int64_t n = kLengths[row], zero = 0;
      tfc_tensor in = {TFC_I64, 2, {1, n}, ids, NULL};
      tfc_tensor out = {TFC_F32, 3, {1, n, vocab}, logits, NULL};
      if (tfc_session_run_rows(s, row, 1, &zero, &in, 1, &out, 1) != TFC_OK) {
        out.shape[1] = 1;
        if (tfc_session_run_rows(s, row, 1, &zero, &in, 1, &out, 1) != TFC_OK)
          return fail("prefill");
      }
      const float *x = logits + (out.shape[1] - 1) * vocab;
      for (int64_t v = 0; v < vocab; ++v) {
        double d = fabs((double)x[v] - solo(row, 0)[v]);
        worst[row] = d > worst[row] ? d : worst[row];
        bitwise[row] &= x[v] == solo(row, 0)[v];
      }
      last[row] = argmax(x);
      same[row] &= last[row] == soloTokens[row][0];
      position[row] = n;
      done[row] = 1;
    }
    /* One decode step of every row that has joined, each at its own
     * position (rows that joined at this step wait for the next). */
    int active = 0;
    for (int r = 0; r < joined; ++r)
      active += kJoin[r] < step;
    if (active == 0)
      continue;
    int64_t ids[kRows], at[kRows];
    for (int r = 0; r < active; ++r) {
      ids[r] = last[r];
      at[r] = position[r];
    }
    tfc_tensor in = {TFC_I64, 2, {active, 1}, ids, NULL};
    tfc_tensor out = {TFC_F32, 3, {active, 1, vocab}, logits, NULL};
    if (tfc_session_run_rows(s, 0, active, at, &in, 1, &out, 1) != TFC_OK)
      return fail("decode");
    for (int r = 0; r < active; ++r) {
      position[r] += 1;
      if (done[r] >= kSteps)
        continue; /* done: its output is not read */
      const float *x = logits + r * vocab;
      int k = done[r];
      for (int64_t v = 0; v < vocab; ++v) {
        double d = fabs((double)x[v] - solo(r, k)[v]);
        worst[r] = d > worst[r] ? d : worst[r];
        bitwise[r] &= x[v] == solo(r, k)[v];
      }
      last[r] = argmax(x);
      same[r] &= last[r] == soloTokens[r][k];
      done[r] += 1;
    }
  }
  int ok = 1;
  for (int r = 0; r < kRows; ++r) {
    ok &= same[r] && done[r] == kSteps;
    printf("row %d: %d tokens, %s; logits %s (max abs diff %.3g)\n", r, done[r],
           same[r] ? "same as solo" : "DIFFERENT",
           bitwise[r] ? "bit for bit the solo ones" : "not bitwise", worst[r]);
  }

  /* What it refuses, changing nothing. */
  int64_t id = 1, far = kContext, pos2[2] = {0, 0};
  tfc_tensor in = {TFC_I64, 2, {1, 1}, &id, NULL};
  tfc_tensor out = {TFC_F32, 3, {1, 1, vocab}, logits, NULL};
  if (tfc_session_run_rows(s, 0, 1, &far, &in, 1, &out, 1) != TFC_ERR_INPUT)
    ok = 0;
  printf("full: %s\n", tfc_last_error());
  if (tfc_session_run_rows(s, 3, 2, pos2, &in, 1, &out, 1) !=
      TFC_ERR_INVALID_ARGUMENT)
    ok = 0;
  printf("rows: %s\n", tfc_last_error());
  if (tfc_session_run_rows(s, 0, 2, pos2, &in, 1, &out, 1) != TFC_ERR_INPUT)
    ok = 0;
  printf("batch: %s\n", tfc_last_error());
  tfc_session_free(s);
  return ok ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: rows_engine model.so weights ENTRY\n");
    return 2;
  }
  entry = argv[3];
  if (tfc_model_load(argv[1], &model) != TFC_OK)
    return fail(argv[1]);
  if (tfc_model_load_weights(model, argv[2]) != TFC_OK)
    return fail(argv[2]);
  int64_t index = tfc_model_find_entry(model, entry);
  if (index < 0)
    return fail(entry);
  /* The vocabulary: the last dim of the entry's first output. */
  tfc_tensor_info info;
  if (tfc_entry_output_info(model, (size_t)index, 0, &info) != TFC_OK)
    return fail("output");
  vocab = info.dims[info.rank - 1];
  if (vocab <= 0) {
    fprintf(stderr, "no vocabulary in the entry's first output\n");
    return 1;
  }
  soloLogits = malloc(sizeof(float) * kRows * kSteps * (size_t)vocab);
  logits = malloc(sizeof(float) * kRows * kMaxPrompt * (size_t)vocab);
  if (!soloLogits || !logits)
    return 1;
  int status = runSolo() || together();
  free(soloLogits);
  free(logits);
  tfc_model_free(model);
  return status;
}
