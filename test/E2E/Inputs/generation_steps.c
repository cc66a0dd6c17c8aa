/* The step-wise generation of the C API (tfc_generation_*) against the
 * one-call tfc_session_generate, and its argument checks, from C:
 *
 *   generation_steps model.so weights.safetensors entry
 *
 * Prints a line per check ("OK ..." or "WRONG ..."); exit status 1 on any
 * WRONG or unexpected failure. Run under the sanitizers too (sessions.test
 * is in scripts/test-sanitizers.sh's list). */
#include "tfc/Runtime/tfc.h"

#include <stdio.h>
#include <string.h>

static int failures = 0;

static void check(int ok, const char *what) {
  printf("%s %s\n", ok ? "OK" : "WRONG", what);
  if (!ok) {
    printf("  last error: %s\n", tfc_last_error());
    failures++;
  }
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s model.so weights entry\n", argv[0]);
    return 2;
  }
  tfc_model *m;
  if (tfc_model_load(argv[1], &m) != TFC_OK ||
      tfc_model_load_weights(m, argv[2]) != TFC_OK) {
    fprintf(stderr, "%s\n", tfc_last_error());
    return 1;
  }
  const char *entry = argv[3];
  int64_t prompt[5] = {3, 14, 15, 9, 26};
  tfc_generate_params p;
  tfc_generate_params_init(&p);
  p.max_new_tokens = 12;
  p.temperature = 0.8;
  p.top_k = 20;
  p.seed = 7;

  /* The one-call loop. */
  tfc_session *a;
  if (tfc_session_create(m, entry, 1, 64, &a) != TFC_OK)
    return 1;
  int64_t whole[12];
  size_t n = 0;
  check(tfc_session_generate(a, prompt, 5, &p, NULL, NULL, whole, 12, &n) ==
                TFC_OK &&
            n == 12,
        "tfc_session_generate: 12 tokens");

  /* Step by step on a fresh session: the same tokens, the last with
   * TFC_STOP_LENGTH, then -1 with the same reason. */
  tfc_session *b;
  if (tfc_session_create(m, entry, 1, 64, &b) != TFC_OK)
    return 1;
  tfc_generation *g;
  check(tfc_generation_start(b, prompt, 5, &p, &g) == TFC_OK,
        "tfc_generation_start");
  int same = 1, count = 0;
  tfc_stop_reason why = TFC_STOP_NONE;
  while (why == TFC_STOP_NONE) {
    int64_t token;
    if (tfc_generation_next(g, &token, &why) != TFC_OK) {
      same = 0;
      break;
    }
    same &= count < 12 && token == whole[count];
    count++;
  }
  check(same && count == 12 && why == TFC_STOP_LENGTH &&
            tfc_generation_num_tokens(g) == 12,
        "steps: the same 12 tokens, the last with TFC_STOP_LENGTH");
  int64_t after;
  check(tfc_generation_next(g, &after, &why) == TFC_OK && after == -1 &&
            why == TFC_STOP_LENGTH,
        "a step after the end: token -1, the same reason");
  check(tfc_session_position(b) == 5 + 11,
        "the session holds the prompt and all tokens but the last");
  tfc_generation_free(g);

  /* An end-of-sequence id: the generation stops at its first occurrence. */
  tfc_session_rewind(b, 0);
  int64_t eos = whole[3];
  p.eos_ids = &eos;
  p.num_eos_ids = 1;
  check(tfc_generation_start(b, prompt, 5, &p, &g) == TFC_OK,
        "start with an end-of-sequence id");
  int steps = 0;
  why = TFC_STOP_NONE;
  int64_t last = -1;
  while (why == TFC_STOP_NONE && tfc_generation_next(g, &last, &why) == TFC_OK)
    steps++;
  int first = 0;
  while (whole[first] != eos)
    first++;
  check(why == TFC_STOP_EOS && last == eos && steps == first + 1,
        "stops with TFC_STOP_EOS at the first end-of-sequence id");
  tfc_generation_free(g);
  p.eos_ids = NULL;
  p.num_eos_ids = 0;

  /* A full context: the last token comes with TFC_STOP_CONTEXT. */
  tfc_session *c;
  if (tfc_session_create(m, entry, 1, 8, &c) != TFC_OK)
    return 1;
  check(tfc_generation_start(c, prompt, 5, &p, &g) == TFC_OK,
        "start in a context of 8");
  steps = 0;
  why = TFC_STOP_NONE;
  while (why == TFC_STOP_NONE && tfc_generation_next(g, &last, &why) == TFC_OK)
    steps++;
  check(why == TFC_STOP_CONTEXT && steps == 4,
        "a context of 8 after 5 prompt tokens: 4 tokens, TFC_STOP_CONTEXT");
  tfc_generation_free(g);

  /* Freeing early is cancelling; the session goes on. */
  tfc_session_rewind(b, 0);
  check(tfc_generation_start(b, prompt, 5, &p, &g) == TFC_OK &&
            tfc_generation_next(g, &last, &why) == TFC_OK,
        "one step, then free");
  tfc_generation_free(g);
  tfc_generation_free(NULL);
  check(tfc_session_position(b) == 5, "the session kept the prompt");

  /* Bad arguments: named errors, nothing made. */
  g = (tfc_generation *)&p; /* must be reset to NULL on failure */
  check(tfc_generation_start(NULL, prompt, 5, &p, &g) ==
                TFC_ERR_INVALID_ARGUMENT &&
            g == NULL && strstr(tfc_last_error(), "session"),
        "NULL session");
  check(tfc_generation_start(b, prompt, 5, NULL, &g) ==
                TFC_ERR_INVALID_ARGUMENT &&
            strstr(tfc_last_error(), "params"),
        "NULL params");
  check(tfc_generation_start(b, prompt, 0, &p, &g) == TFC_ERR_INPUT &&
            strstr(tfc_last_error(), "no tokens"),
        "an empty prompt");
  p.max_new_tokens = 0;
  check(tfc_generation_start(b, prompt, 5, &p, &g) ==
                TFC_ERR_INVALID_ARGUMENT &&
            strstr(tfc_last_error(), "max_new_tokens"),
        "max_new_tokens 0");
  p.max_new_tokens = 4;
  p.top_p = 2;
  check(tfc_generation_start(b, prompt, 5, &p, &g) ==
                TFC_ERR_INVALID_ARGUMENT &&
            strstr(tfc_last_error(), "top-p"),
        "top_p 2");
  p.top_p = 1;
  check(tfc_generation_start(b, prompt, 5, &p, NULL) ==
            TFC_ERR_INVALID_ARGUMENT,
        "NULL out");
  check(tfc_generation_next(NULL, &last, &why) == TFC_ERR_INVALID_ARGUMENT &&
            last == -1,
        "next of NULL");
  tfc_session *batch2;
  if (tfc_session_create(m, entry, 2, 16, &batch2) != TFC_OK)
    return 1;
  check(tfc_generation_start(batch2, prompt, 5, &p, &g) ==
                TFC_ERR_INVALID_ARGUMENT &&
            strstr(tfc_last_error(), "batch 1"),
        "a session of batch 2");
  int64_t too_long[20] = {0};
  check(tfc_generation_start(c, too_long, 20, &p, &g) == TFC_ERR_INPUT &&
            strstr(tfc_last_error(), "context"),
        "a prompt past the context");

  /* Chat templates through the C API. */
  tfc_chat_template *t;
  check(
      tfc_chat_template_parse(
          "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
          "{% if add_generation_prompt %}<assistant>{% endif %}{{ eos_token }}",
          "<s>", "</s>", &t) == TFC_OK,
      "parse a template");
  const char *ctx =
      "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}],"
      " \"add_generation_prompt\": true}";
  size_t len = 0;
  char text[128];
  check(tfc_chat_template_render(t, ctx, NULL, 0, &len) == TFC_OK &&
            len == strlen("<user>hi<assistant></s>"),
        "render: the size first");
  check(tfc_chat_template_render(t, ctx, text, 4, &len) ==
            TFC_ERR_INVALID_ARGUMENT,
        "render into too small a buffer");
  check(tfc_chat_template_render(t, ctx, text, sizeof text, &len) == TFC_OK &&
            strcmp(text, "<user>hi<assistant></s>") == 0,
        "render: the text");
  check(tfc_chat_template_render(t, "{not json", text, sizeof text, &len) ==
            TFC_ERR_INPUT,
        "render: bad JSON");
  tfc_chat_template_free(t);
  check(tfc_chat_template_parse("{% for %}", NULL, NULL, &t) == TFC_ERR_INPUT &&
            t == NULL && strstr(tfc_last_error(), "1:"),
        "a template syntax error names line:col");
  check(tfc_chat_template_load("/nonexistent/model", &t) == TFC_ERR_IO,
        "load: a missing checkpoint");
  check(tfc_chat_template_stop_ids(NULL, NULL, NULL, 0, &len) ==
            TFC_ERR_INVALID_ARGUMENT,
        "stop ids: NULL arguments");
  check(tfc_checkpoint_eos_ids(NULL, NULL, NULL, 0, &len) == TFC_OK && len == 0,
        "no checkpoint, no tokenizer: no ids");

  tfc_session_free(a);
  tfc_session_free(b);
  tfc_session_free(c);
  tfc_session_free(batch2);
  tfc_model_free(m);
  printf("%d wrong\n", failures);
  return failures ? 1 : 0;
}
