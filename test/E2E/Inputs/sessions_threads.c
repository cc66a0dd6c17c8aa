/* Sessions from several threads on one model, through the C API only:
 *
 *   sessions_threads model.so weights threads steps
 *
 * Each of `threads` sessions greedily generates `steps` tokens from its own
 * prompt (prefill, then one token per run), first alone, one session after
 * the other, then all at once from `threads` threads sharing the model. Every
 * concurrent run must give exactly the solo run's tokens. Also checked:
 * running a full session is TFC_ERR_INPUT and leaves it usable, and rewind.
 * Prints one line per thread; exit status 1 on any failure.
 *
 *   sessions_threads model.so weights split
 *
 * checks that the cached entry computes what the whole-sequence entry
 * `forward` computes: 8 tokens given as 5 then 3 (the second run at past 5,
 * reading the cache) give the logits of positions 5..7 of one forward run
 * over all 8, within `tolerance` x max(1, max |logit|) (default 1e-5; an
 * argument after `split` sets it); prints the session's state bytes.
 *
 *   sessions_threads model.so weights ENTRY padded [tolerance]
 *
 * left-padded batches against solo runs (padded below; default 1e-4).
 *
 *   sessions_threads model.so weights ENTRY rewind-window
 *
 * rewinds a sliding-window model's session (rewind_window below). */
#include "tfc/Runtime/tfc.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kMaxThreads = 8, kMaxSteps = 64, kPrompt = 5 };

static tfc_model *model;
static int steps;
static const char *entry;

typedef struct Job {
  int index;
  int64_t tokens[kMaxSteps];
  int ok;
} Job;

static int64_t argmax_last(const tfc_tensor *t) {
  int64_t vocab = t->shape[t->rank - 1];
  const float *row = (const float *)t->data + (t->shape[1] - 1) * vocab;
  int64_t best = 0;
  for (int64_t v = 1; v < vocab; ++v)
    if (row[v] > row[best])
      best = v;
  return best;
}

static void *generate(void *arg) {
  Job *job = (Job *)arg;
  job->ok = 0;
  tfc_session *s = NULL;
  if (tfc_session_create(model, entry, 1, kPrompt + steps, &s) != TFC_OK) {
    fprintf(stderr, "thread %d: %s\n", job->index, tfc_last_error());
    return NULL;
  }
  int64_t feed[kPrompt];
  for (int k = 0; k < kPrompt; ++k)
    feed[k] = (job->index * 13 + k * 7 + 1) % 50;
  int64_t n = kPrompt;
  for (int step = 0; step < steps; ++step) {
    tfc_tensor in = {TFC_I64, 2, {1, n}, feed, NULL};
    tfc_tensor out;
    if (tfc_session_run(s, &in, 1, &out, 1) != TFC_OK) {
      fprintf(stderr, "thread %d step %d: %s\n", job->index, step,
              tfc_last_error());
      tfc_session_free(s);
      return NULL;
    }
    job->tokens[step] = argmax_last(&out);
    tfc_tensor_release(&out);
    feed[0] = job->tokens[step];
    n = 1;
  }
  /* The context is full now: one more token is refused, and changes
   * nothing. */
  tfc_tensor in = {TFC_I64, 2, {1, 1}, feed, NULL};
  tfc_tensor out;
  if (tfc_session_position(s) != kPrompt + steps - 1) {
    fprintf(stderr, "thread %d: position %lld\n", job->index,
            (long long)tfc_session_position(s));
    tfc_session_free(s);
    return NULL;
  }
  if (tfc_session_run(s, &in, 1, &out, 1) != TFC_OK) {
    fprintf(stderr, "thread %d: the last token does not fit: %s\n",
            job->index, tfc_last_error());
    tfc_session_free(s);
    return NULL;
  }
  tfc_tensor_release(&out);
  if (tfc_session_run(s, &in, 1, &out, 1) != TFC_ERR_INPUT ||
      strstr(tfc_last_error(), "context is full") == NULL) {
    fprintf(stderr, "thread %d: a full session was not refused\n", job->index);
    tfc_session_free(s);
    return NULL;
  }
  if (tfc_session_rewind(s, 0) != TFC_OK || tfc_session_position(s) != 0) {
    fprintf(stderr, "thread %d: rewind failed\n", job->index);
    tfc_session_free(s);
    return NULL;
  }
  tfc_session_free(s);
  job->ok = 1;
  return NULL;
}

static int split(const char *cached, double tolerance) {
  int64_t ids[8] = {3, 14, 15, 9, 26, 5, 35, 8};
  tfc_tensor in = {TFC_I64, 2, {1, 8}, ids, NULL}, whole;
  if (tfc_run(model, "forward", &in, 1, &whole, 1) != TFC_OK) {
    fprintf(stderr, "%s\n", tfc_last_error());
    return 1;
  }
  tfc_session *s = NULL;
  tfc_tensor first, second;
  tfc_tensor a = {TFC_I64, 2, {1, 5}, ids, NULL};
  tfc_tensor b = {TFC_I64, 2, {1, 3}, ids + 5, NULL};
  if (tfc_session_create(model, cached, 1, 8, &s) != TFC_OK ||
      tfc_session_run(s, &a, 1, &first, 1) != TFC_OK ||
      tfc_session_run(s, &b, 1, &second, 1) != TFC_OK) {
    fprintf(stderr, "%s\n", tfc_last_error());
    return 1;
  }
  int64_t vocab = whole.shape[2];
  const float *w = (const float *)whole.data, *f = (const float *)first.data,
              *g = (const float *)second.data;
  double err = 0, scale = 0;
  for (int64_t k = 0; k < 5 * vocab; ++k) {
    double d = f[k] - w[k];
    err = d < 0 ? (-d > err ? -d : err) : (d > err ? d : err);
  }
  for (int64_t k = 0; k < 3 * vocab; ++k) {
    double d = g[k] - w[5 * vocab + k];
    err = d < 0 ? (-d > err ? -d : err) : (d > err ? d : err);
    double m = w[5 * vocab + k] < 0 ? -w[5 * vocab + k] : w[5 * vocab + k];
    scale = m > scale ? m : scale;
  }
  int ok = err <= tolerance * (scale > 1 ? scale : 1);
  printf("session states: %llu bytes\n",
         (unsigned long long)tfc_session_state_bytes(s));
  printf("cached logits vs forward: max abs error %.3g (scale %.3g) %s\n", err,
         scale, ok ? "OK" : "MISMATCH");
  tfc_tensor_release(&whole);
  tfc_tensor_release(&first);
  tfc_tensor_release(&second);
  tfc_session_free(s);
  return ok ? 0 : 1;
}

static double max_diff(const float *a, const float *b, int64_t n) {
  double err = 0;
  for (int64_t k = 0; k < n; ++k) {
    double d = a[k] > b[k] ? a[k] - b[k] : b[k] - a[k];
    err = d > err ? d : err;
  }
  return err;
}

/* Two prompts of different lengths in one session, the shorter padded on
 * the left (tfc_session_run_padded), then one more token each after
 * swapping the rows (tfc_session_reorder): every row's logits match the
 * same prompt run alone. Also what it refuses. */
static int padded(const char *cached, double tolerance) {
  int64_t a[5] = {3, 14, 15, 9, 26}, b[3] = {5, 35, 8}, more[2] = {7, 11};
  float solo[2][2][64]; /* [prompt][step][vocab <= 64] */
  int64_t vocab = 0;
  for (int p = 0; p < 2; ++p) {
    tfc_session *s = NULL;
    tfc_tensor in = {TFC_I64, 2, {1, p ? 3 : 5}, p ? b : a, NULL}, out;
    tfc_tensor next = {TFC_I64, 2, {1, 1}, &more[p], NULL};
    if (tfc_session_create(model, cached, 1, 8, &s) != TFC_OK)
      goto error;
    for (int step = 0; step < 2; ++step) {
      if (tfc_session_run(s, step ? &next : &in, 1, &out, 1) != TFC_OK)
        goto error;
      vocab = out.shape[2];
      if (vocab > 64)
        return 1;
      memcpy(solo[p][step],
             (const float *)out.data + (out.shape[1] - 1) * vocab,
             sizeof(float) * vocab);
      tfc_tensor_release(&out);
    }
    tfc_session_free(s);
  }
  {
    tfc_session *s = NULL;
    /* Row 0: a; row 1: b padded on the left to 5. */
    int64_t ids[10] = {3, 14, 15, 9, 26, 0, 0, 5, 35, 8};
    int64_t keep[10] = {1, 1, 1, 1, 1, 0, 0, 1, 1, 1};
    tfc_tensor in = {TFC_I64, 2, {2, 5}, ids, NULL}, out;
    if (tfc_session_create(model, cached, 2, 8, &s) != TFC_OK)
      goto error;
    int can_pad = tfc_session_can_pad(s);
    printf("can pad: %d\n", can_pad);
    if (!can_pad) {
      tfc_session_free(s);
      return 1;
    }
    int64_t bad[10] = {1, 1, 1, 1, 1, 0, 2, 1, 1, 1};
    if (tfc_session_run_padded(s, &in, 1, bad, &out, 1) == TFC_OK)
      return 1;
    printf("bad keep: %s\n", tfc_last_error());
    if (tfc_session_run_padded(s, &in, 1, keep, &out, 1) != TFC_OK)
      goto error;
    const float *l = (const float *)out.data;
    double e0 = max_diff(l + 4 * vocab, solo[0][0], vocab);
    double e1 = max_diff(l + 9 * vocab, solo[1][0], vocab);
    tfc_tensor_release(&out);
    /* Swap the rows, then one token each. */
    int64_t swap[2] = {1, 0}, bad_rows[2] = {0, 2};
    if (tfc_session_reorder(s, bad_rows, 2) == TFC_OK)
      return 1;
    printf("bad reorder: %s\n", tfc_last_error());
    if (tfc_session_reorder(s, swap, 2) != TFC_OK)
      goto error;
    int64_t next[2] = {more[1], more[0]};
    tfc_tensor step = {TFC_I64, 2, {2, 1}, next, NULL};
    if (tfc_session_run(s, &step, 1, &out, 1) != TFC_OK)
      goto error;
    l = (const float *)out.data;
    double e2 = max_diff(l, solo[1][1], vocab);
    double e3 = max_diff(l + vocab, solo[0][1], vocab);
    tfc_tensor_release(&out);
    tfc_session_free(s);
    double err = e0 > e1 ? e0 : e1;
    err = e2 > err ? e2 : err;
    err = e3 > err ? e3 : err;
    int ok = err <= tolerance;
    printf("padded batch vs solo: max abs error %.3g %s\n", err,
           ok ? "OK" : "MISMATCH");
    return ok ? 0 : 1;
  }
error:
  fprintf(stderr, "%s\n", tfc_last_error());
  return 1;
}

/* An encoder-decoder's cached decoder (inputs: target ids, target mask,
 * encoder output [batch, src, d], source mask) and its `_cross` entry: what
 * a session refuses before and around filling the cross-attention caches,
 * then a step that works. Prints each error. */
static int cross(const char *cached, const char *crossEntry, int64_t d) {
  tfc_session *s = NULL;
  if (tfc_session_create(model, cached, 1, 8, &s) != TFC_OK)
    goto error;
  float memory[4 * 64] = {0};
  int64_t tgt[1] = {3}, one[1] = {1}, src_mask[4] = {1, 1, 1, 1},
          src_mask5[5] = {1, 1, 1, 1, 1};
  tfc_tensor mem = {TFC_F32, 3, {1, 4, d}, memory, NULL};
  tfc_tensor in[4] = {{TFC_I64, 2, {1, 1}, tgt, NULL},
                      {TFC_I64, 2, {1, 1}, one, NULL},
                      mem,
                      {TFC_I64, 2, {1, 4}, src_mask, NULL}};
  tfc_tensor out;
  if (tfc_session_run(s, in, 4, &out, 1) == TFC_OK)
    return 1;
  printf("before cross: %s\n", tfc_last_error());
  if (tfc_session_run_entry(s, crossEntry, NULL, 0, NULL, 0) == TFC_OK)
    return 1;
  printf("no inputs: %s\n", tfc_last_error());
  if (tfc_session_run_entry(s, "encode", &mem, 1, NULL, 0) == TFC_OK)
    return 1;
  printf("stateless: %s\n", tfc_last_error());
  if (tfc_session_run_entry(s, "nope", &mem, 1, NULL, 0) == TFC_OK)
    return 1;
  printf("unknown: %s\n", tfc_last_error());
  if (tfc_session_run_entry(s, crossEntry, &mem, 1, NULL, 0) != TFC_OK)
    goto error;
  printf("cross states: %llu bytes\n",
         (unsigned long long)tfc_session_state_bytes(s));
  /* A source of another length than the cross caches were made for. */
  in[3] = (tfc_tensor){TFC_I64, 2, {1, 5}, src_mask5, NULL};
  in[2].shape[1] = 5;
  if (tfc_session_run(s, in, 4, &out, 1) == TFC_OK)
    return 1;
  printf("other source length: %s\n", tfc_last_error());
  in[3] = (tfc_tensor){TFC_I64, 2, {1, 4}, src_mask, NULL};
  in[2].shape[1] = 4;
  if (tfc_session_run(s, in, 4, &out, 1) != TFC_OK)
    goto error;
  printf("step: logits [%lld, %lld, %lld], position %lld\n",
         (long long)out.shape[0], (long long)out.shape[1],
         (long long)out.shape[2], (long long)tfc_session_position(s));
  tfc_tensor_release(&out);
  tfc_session_free(s);
  return 0;
error:
  fprintf(stderr, "%s\n", tfc_last_error());
  return 1;
}

/* Outputs into the caller's buffers (tfc_run_into, tfc_session_run_into):
 * the same logits as tfc_run; once a shape repeats (a replayed plan) the
 * entry computes straight into the buffer: no heap allocation, nothing
 * adopted; and what is refused. */
static int into(const char *cached, int64_t vocab) {
  int64_t ids[4] = {3, 14, 15, 9};
  tfc_tensor in = {TFC_I64, 2, {1, 4}, ids, NULL}, ref;
  if (tfc_run(model, "forward", &in, 1, &ref, 1) != TFC_OK)
    goto error;
  float *buf = aligned_alloc(64, 4 * 64 * sizeof(float));
  if (vocab > 64 || !buf)
    return 1;
  for (int round = 0; round < 2; ++round) {
    tfc_tensor out = {TFC_F32, 3, {1, 4, vocab}, buf, NULL};
    memset(buf, 0, 4 * 64 * sizeof(float));
    if (tfc_run_into(model, "forward", &in, 1, &out, 1) != TFC_OK)
      goto error;
    tfc_memory_stats st;
    tfc_model_memory_stats(model, &st);
    double err = max_diff(buf, (const float *)ref.data, 4 * vocab);
    printf("run_into %s: max abs error %.3g, heap allocations %llu, "
           "adopted %llu, owner %s\n",
           st.mode == TFC_PLAN_REPLAYED ? "replayed" : "recorded", err,
           (unsigned long long)st.heap_allocs,
           (unsigned long long)st.output_allocs, out.owner ? "set" : "NULL");
  }
  /* A buffer too little aligned for the kernels: computed in a block the
   * model keeps across runs and copied in, no heap allocation per run. */
  for (int round = 0; round < 2; ++round) {
    tfc_tensor out = {TFC_F32, 3, {1, 4, vocab}, buf + 1, NULL};
    memset(buf, 0, 4 * 64 * sizeof(float));
    if (tfc_run_into(model, "forward", &in, 1, &out, 1) != TFC_OK)
      goto error;
    tfc_memory_stats st;
    tfc_model_memory_stats(model, &st);
    printf("run_into misaligned: max abs error %.3g, heap allocations %llu, "
           "before it %g\n",
           max_diff(buf + 1, (const float *)ref.data, 4 * vocab),
           (unsigned long long)st.heap_allocs, buf[0]);
  }
  tfc_tensor bad = {TFC_I64, 3, {1, 4, vocab}, buf, NULL};
  if (tfc_run_into(model, "forward", &in, 1, &bad, 1) == TFC_OK)
    return 1;
  printf("wrong dtype: %s\n", tfc_last_error());
  tfc_tensor small = {TFC_F32, 3, {1, 3, vocab}, buf, NULL};
  if (tfc_run_into(model, "forward", &in, 1, &small, 1) == TFC_OK)
    return 1;
  printf("wrong shape: %s\n", tfc_last_error());
  /* An output buffer over the input's memory: refused before the run. */
  int64_t *shared_ids = (int64_t *)(buf + 100);
  memcpy(shared_ids, ids, sizeof ids);
  tfc_tensor over_in = {TFC_I64, 2, {1, 4}, shared_ids, NULL};
  tfc_tensor over = {TFC_F32, 3, {1, 4, vocab}, buf, NULL};
  if (tfc_run_into(model, "forward", &over_in, 1, &over, 1) == TFC_OK)
    return 1;
  printf("overlap: %s\n", tfc_last_error());
  /* A session: decode steps into one buffer. */
  tfc_session *s = NULL;
  if (tfc_session_create(model, cached, 1, 8, &s) != TFC_OK)
    goto error;
  for (int step = 0; step < 4; ++step) {
    tfc_tensor one = {TFC_I64, 2, {1, 1}, &ids[step], NULL};
    tfc_tensor out = {TFC_F32, 3, {1, 1, vocab}, buf, NULL};
    if (tfc_session_run_into(s, &one, 1, NULL, &out, 1) != TFC_OK)
      goto error;
  }
  tfc_memory_stats st;
  tfc_model_memory_stats(model, &st);
  double err = max_diff(buf, (const float *)ref.data + 3 * vocab, vocab);
  printf("session_run_into: step 4 vs forward: max abs error %.3g %s, heap "
         "allocations %llu\n",
         err, err <= 1e-4 ? "OK" : "MISMATCH",
         (unsigned long long)st.heap_allocs);
  tfc_session_free(s);
  tfc_tensor_release(&ref);
  free(buf);
  return 0;
error:
  fprintf(stderr, "%s\n", tfc_last_error());
  return 1;
}

/* tfc_session_generate: the tokens of a loop over tfc_session_run; a
 * callback that cancels; parameters it refuses; a session used from a
 * second thread while a generation runs. */
typedef struct Cancel {
  int count, stop_after;
} Cancel;
static int stop_after(void *user, int64_t token) {
  (void)token;
  Cancel *c = (Cancel *)user;
  return ++c->count >= c->stop_after;
}

static pthread_mutex_t busy_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t busy_cond = PTHREAD_COND_INITIALIZER;
static int busy_phase; /* 0: start; 1: generation in its callback; 2: tried */
static tfc_status intruder_status;
static char intruder_error[512];

static int hold_first_token(void *user, int64_t token) {
  (void)user;
  (void)token;
  pthread_mutex_lock(&busy_mutex);
  if (busy_phase == 0) {
    busy_phase = 1;
    pthread_cond_broadcast(&busy_cond);
    while (busy_phase != 2)
      pthread_cond_wait(&busy_cond, &busy_mutex);
  }
  pthread_mutex_unlock(&busy_mutex);
  return 0;
}

static void *intruder(void *arg) {
  tfc_session *s = (tfc_session *)arg;
  pthread_mutex_lock(&busy_mutex);
  while (busy_phase != 1)
    pthread_cond_wait(&busy_cond, &busy_mutex);
  pthread_mutex_unlock(&busy_mutex);
  int64_t id = 1;
  tfc_tensor in = {TFC_I64, 2, {1, 1}, &id, NULL}, out;
  intruder_status = tfc_session_run(s, &in, 1, &out, 1);
  snprintf(intruder_error, sizeof intruder_error, "%s", tfc_last_error());
  pthread_mutex_lock(&busy_mutex);
  busy_phase = 2;
  pthread_cond_broadcast(&busy_cond);
  pthread_mutex_unlock(&busy_mutex);
  return NULL;
}

static int generate_api(const char *cached) {
  int64_t prompt[kPrompt] = {3, 14, 15, 9, 26};
  enum { kNew = 8 };
  /* The reference: a loop over tfc_session_run, greedy. */
  int64_t want[kNew];
  tfc_session *s = NULL;
  if (tfc_session_create(model, cached, 1, 32, &s) != TFC_OK)
    goto error;
  {
    int64_t feed[kPrompt];
    memcpy(feed, prompt, sizeof prompt);
    int64_t n = kPrompt;
    for (int k = 0; k < kNew; ++k) {
      tfc_tensor in = {TFC_I64, 2, {1, n}, feed, NULL}, out;
      if (tfc_session_run(s, &in, 1, &out, 1) != TFC_OK)
        goto error;
      want[k] = feed[0] = argmax_last(&out);
      n = 1;
      tfc_tensor_release(&out);
    }
  }
  tfc_session_rewind(s, 0);
  tfc_generate_params p;
  tfc_generate_params_init(&p);
  p.max_new_tokens = kNew;
  int64_t got[kNew];
  size_t count = 0;
  if (tfc_session_generate(s, prompt, kPrompt, &p, NULL, NULL, got, kNew,
                           &count) != TFC_OK)
    goto error;
  printf("generate: %zu tokens, %s the tfc_session_run loop, position %lld\n",
         count,
         count == kNew && memcmp(got, want, sizeof want) == 0 ? "same as"
                                                               : "DIFFERENT FROM",
         (long long)tfc_session_position(s));
  /* Cancelled after 3 tokens. */
  tfc_session_rewind(s, 0);
  Cancel c = {0, 3};
  tfc_status st = tfc_session_generate(s, prompt, kPrompt, &p, stop_after, &c,
                                       got, kNew, &count);
  printf("cancel: %s: %s; %zu tokens, position %lld\n", tfc_status_name(st),
         tfc_last_error(), count, (long long)tfc_session_position(s));
  /* Parameters it refuses. */
  tfc_generate_params bad = p;
  bad.temperature = -1;
  st = tfc_session_generate(s, prompt, kPrompt, &bad, NULL, NULL, got, kNew,
                            &count);
  printf("bad temperature: %s: %s\n", tfc_status_name(st), tfc_last_error());
  bad = p;
  bad.struct_size = 0;
  st = tfc_session_generate(s, prompt, kPrompt, &bad, NULL, NULL, got, kNew,
                            &count);
  printf("no struct_size: %s\n", tfc_last_error());
  st = tfc_session_generate(s, prompt, kPrompt, &p, NULL, NULL, got, 2,
                            &count);
  printf("small buffer: %s\n", tfc_last_error());
  /* A second thread while the generation waits in its callback. */
  tfc_session_rewind(s, 0);
  pthread_t t;
  pthread_create(&t, NULL, intruder, s);
  st = tfc_session_generate(s, prompt, kPrompt, &p, hold_first_token, NULL,
                            got, kNew, &count);
  pthread_join(t, NULL);
  printf("second thread: %s: %s\n", tfc_status_name(intruder_status),
         intruder_error);
  printf("the generation meanwhile: %s, %zu tokens, %s\n",
         tfc_status_name(st), count,
         count == kNew && memcmp(got, want, sizeof want) == 0 ? "same"
                                                              : "DIFFERENT");
  tfc_session_free(s);
  return 0;
error:
  fprintf(stderr, "%s\n", tfc_last_error());
  return 1;
}

/* A sliding-window model (a rolling cache of W positions): after 10 tokens
 * the session can go back by one token (the step then equals the original
 * one) or to 0, not by two. */
static int rewind_window(const char *cached) {
  int64_t ids[10] = {5, 17, 42, 8, 77, 3, 60, 11, 9, 33};
  tfc_session *s = NULL;
  tfc_tensor first, again;
  if (tfc_session_create(model, cached, 1, 16, &s) != TFC_OK)
    goto error;
  tfc_tensor in = {TFC_I64, 2, {1, 10}, ids, NULL};
  if (tfc_session_run(s, &in, 1, &first, 1) != TFC_OK)
    goto error;
  tfc_status st = tfc_session_rewind(s, 8);
  printf("rewind by 2: %s: %s\n", tfc_status_name(st), tfc_last_error());
  if (tfc_session_rewind(s, 9) != TFC_OK)
    goto error;
  tfc_tensor last = {TFC_I64, 2, {1, 1}, ids + 9, NULL};
  if (tfc_session_run(s, &last, 1, &again, 1) != TFC_OK)
    goto error;
  int64_t vocab = first.shape[2];
  const float *a = (const float *)first.data + 9 * vocab;
  const float *b = (const float *)again.data;
  float err = 0;
  for (int64_t v = 0; v < vocab; ++v) {
    float d = a[v] > b[v] ? a[v] - b[v] : b[v] - a[v];
    err = d > err ? d : err;
  }
  printf("rewind by 1: the step again, max abs difference %.1e %s\n", err,
         err < 1e-4f ? "(same)" : "DIFFERENT");
  printf("rewind to 0: %s\n", tfc_status_name(tfc_session_rewind(s, 0)));
  tfc_tensor_release(&first);
  tfc_tensor_release(&again);
  tfc_session_free(s);
  return err < 1e-4f ? 0 : 1;
error:
  fprintf(stderr, "rewind-window: %s\n", tfc_last_error());
  return 1;
}

int main(int argc, char **argv) {
  /* Unbuffered: what was printed survives a sanitizer's exit. */
  setvbuf(stdout, NULL, _IONBF, 0);
  if (argc == 5 && strcmp(argv[4], "rewind-window") == 0) {
    if (tfc_model_load(argv[1], &model) != TFC_OK ||
        tfc_model_load_weights(model, argv[2]) != TFC_OK) {
      fprintf(stderr, "%s\n", tfc_last_error());
      return 1;
    }
    int status = rewind_window(argv[3]);
    tfc_model_free(model);
    return status;
  }
  if (argc == 5 && strcmp(argv[4], "generate") == 0) {
    if (tfc_model_load(argv[1], &model) != TFC_OK ||
        tfc_model_load_weights(model, argv[2]) != TFC_OK) {
      fprintf(stderr, "%s\n", tfc_last_error());
      return 1;
    }
    int status = generate_api(argv[3]);
    tfc_model_free(model);
    return status;
  }
  if (argc == 6 && strcmp(argv[4], "into") == 0) {
    if (tfc_model_load(argv[1], &model) != TFC_OK ||
        tfc_model_load_weights(model, argv[2]) != TFC_OK) {
      fprintf(stderr, "%s\n", tfc_last_error());
      return 1;
    }
    int status = into(argv[3], atoi(argv[5]));
    tfc_model_free(model);
    return status;
  }
  if (argc == 7 && strcmp(argv[4], "cross") == 0) {
    if (tfc_model_load(argv[1], &model) != TFC_OK ||
        tfc_model_load_weights(model, argv[2]) != TFC_OK) {
      fprintf(stderr, "%s\n", tfc_last_error());
      return 1;
    }
    int status = cross(argv[3], argv[5], atoi(argv[6]));
    tfc_model_free(model);
    return status;
  }
  if ((argc == 5 || argc == 6) && strcmp(argv[4], "padded") == 0) {
    if (tfc_model_load(argv[1], &model) != TFC_OK ||
        tfc_model_load_weights(model, argv[2]) != TFC_OK) {
      fprintf(stderr, "%s\n", tfc_last_error());
      return 1;
    }
    int status = padded(argv[3], argc == 6 ? atof(argv[5]) : 1e-4);
    tfc_model_free(model);
    return status;
  }
  if ((argc == 5 || argc == 6) && strcmp(argv[4], "split") == 0) {
    if (tfc_model_load(argv[1], &model) != TFC_OK ||
        tfc_model_load_weights(model, argv[2]) != TFC_OK) {
      fprintf(stderr, "%s\n", tfc_last_error());
      return 1;
    }
    int status = split(argv[3], argc == 6 ? atof(argv[5]) : 1e-5);
    tfc_model_free(model);
    return status;
  }
  if (argc != 6) {
    fprintf(stderr, "usage: sessions_threads model.so weights entry threads steps\n");
    return 1;
  }
  entry = argv[3];
  int threads = atoi(argv[4]);
  steps = atoi(argv[5]);
  if (threads < 1 || threads > kMaxThreads || steps < 1 || steps > kMaxSteps)
    return 1;
  if (tfc_model_load(argv[1], &model) != TFC_OK ||
      tfc_model_load_weights(model, argv[2]) != TFC_OK) {
    fprintf(stderr, "%s\n", tfc_last_error());
    return 1;
  }
  Job solo[kMaxThreads], together[kMaxThreads];
  for (int t = 0; t < threads; ++t) {
    solo[t].index = together[t].index = t;
    generate(&solo[t]);
    if (!solo[t].ok)
      return 1;
  }
  pthread_t ids[kMaxThreads];
  for (int t = 0; t < threads; ++t)
    pthread_create(&ids[t], NULL, generate, &together[t]);
  for (int t = 0; t < threads; ++t)
    pthread_join(ids[t], NULL);
  int failures = 0;
  for (int t = 0; t < threads; ++t) {
    int same = together[t].ok &&
               memcmp(solo[t].tokens, together[t].tokens,
                      sizeof(int64_t) * steps) == 0;
    printf("session %d: %d tokens, %s solo:", t, steps,
           same ? "same as" : "DIFFERENT FROM");
    for (int k = 0; k < steps && k < 8; ++k)
      printf(" %lld", (long long)together[t].tokens[k]);
    printf("\n");
    failures += !same;
  }
  tfc_model_free(model);
  return failures ? 1 : 0;
}
