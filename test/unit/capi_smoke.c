/*===- capi_smoke.c - The C API from a C program --------------------------===//
 *
 * Part of tfc, a transformer compiler on MLIR.
 *
 * Compiled as C and linked against the shared libtfcrt.so only: loads the
 * fake model (argv[1]), writes a weights file by hand (argv[2]), runs two
 * entries and an invalid call, and releases everything. Exits 0 on success,
 * 1 with a message otherwise.
 *
 *===----------------------------------------------------------------------===*/

#include "tfc/Runtime/tfc.h"

#include <stdio.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "capi_smoke: %s:%d: check failed: %s (%s)\n", __FILE__,  \
              __LINE__, #cond, tfc_last_error());                              \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

/* alpha = 0.5 (f32 scalar), emb.weight[i][k] = i + k / 10 (f32 [5, 3]). */
static int writeWeights(const char *path) {
  const char *header =
      "{\"alpha\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4]},"
      "\"emb.weight\":{\"dtype\":\"F32\",\"shape\":[5,3],"
      "\"data_offsets\":[4,64]}}";
  unsigned long long n = strlen(header);
  unsigned char length[8];
  float data[16];
  FILE *f = fopen(path, "wb");
  int i, k;
  if (!f)
    return 0;
  for (i = 0; i < 8; ++i)
    length[i] = (unsigned char)((n >> (8 * i)) & 0xFF);
  data[0] = 0.5f;
  for (i = 0; i < 5; ++i)
    for (k = 0; k < 3; ++k)
      data[1 + i * 3 + k] = (float)i + (float)k / 10.0f;
  fwrite(length, 1, 8, f);
  fwrite(header, 1, n, f);
  fwrite(data, sizeof(float), 16, f);
  return fclose(f) == 0;
}

int main(int argc, char **argv) {
  tfc_model *model = NULL;
  tfc_model_info info;
  float x[6] = {1, 2, 3, 4, 5, 6};
  int64_t ids[4] = {4, 0, 1, 2};
  unsigned char mask[4] = {1, 1, 0, 1};
  tfc_tensor in, embedIn[2], out, embedOut[2];
  int i;

  if (argc != 3) {
    fprintf(stderr, "usage: capi_smoke model.so weights.safetensors\n");
    return 1;
  }
  if (!writeWeights(argv[2])) {
    fprintf(stderr, "capi_smoke: cannot write %s\n", argv[2]);
    return 1;
  }
  if (tfc_model_load(argv[1], &model) != TFC_OK) {
    fprintf(stderr, "capi_smoke: %s\n", tfc_last_error());
    return 1;
  }
  CHECK(tfc_model_get_info(model, &info) == TFC_OK);
  CHECK(strcmp(info.name, "fake") == 0);
  CHECK(info.num_entries == 4);
  CHECK(tfc_model_load_weights(model, argv[2]) == TFC_OK);

  memset(&in, 0, sizeof in);
  in.dtype = TFC_F32;
  in.rank = 2;
  in.shape[0] = 2;
  in.shape[1] = 3;
  in.data = x;
  CHECK(tfc_run(model, "scale", &in, 1, &out, 1) == TFC_OK);
  if (out.data) {
    CHECK(out.rank == 2 && out.shape[0] == 2 && out.shape[1] == 3);
    for (i = 0; i < 6; ++i)
      CHECK(((float *)out.data)[i] == x[i] * 0.5f + 1.5f);
  }
  tfc_tensor_release(&out);
  CHECK(out.data == NULL);

  memset(embedIn, 0, sizeof embedIn);
  embedIn[0].dtype = TFC_I64;
  embedIn[1].dtype = TFC_BOOL;
  for (i = 0; i < 2; ++i) {
    embedIn[i].rank = 2;
    embedIn[i].shape[0] = 1;
    embedIn[i].shape[1] = 4;
  }
  embedIn[0].data = ids;
  embedIn[1].data = mask;
  CHECK(tfc_run(model, "embed", embedIn, 2, embedOut, 2) == TFC_OK);
  if (embedOut[0].data && embedOut[1].data) {
    const float *e = (const float *)embedOut[0].data;
    CHECK(e[0] == 4.0f && e[2] == 4.0f + 0.2f);
    CHECK(e[6] == 0.0f); /* masked */
    CHECK(((const int64_t *)embedOut[1].data)[0] == 3);
  }
  tfc_tensor_release(&embedOut[0]);
  tfc_tensor_release(&embedOut[1]);

  /* A bad input is an error with a message, not a crash. */
  ids[1] = 9;
  CHECK(tfc_run(model, "embed", embedIn, 2, embedOut, 2) == TFC_ERR_INPUT);
  CHECK(strstr(tfc_last_error(), "input 'ids' holds 9 at [0, 1]") != NULL);
  CHECK(embedOut[0].data == NULL);

  tfc_model_free(model);
  if (failures)
    return 1;
  printf("capi_smoke: ok\n");
  return 0;
}
