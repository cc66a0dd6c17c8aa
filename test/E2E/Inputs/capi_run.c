/* A C program that runs any compiled tfc model through the C API only:
 *
 *   capi_run model.so weights.safetensors [seq]
 *
 * For every entry it builds inputs from the metadata (dynamic dims: batch 2,
 * other dims `seq`; integer inputs 1 (a valid id and a "keep" mask value),
 * float inputs 0.5), runs it and prints each output's name and shape.
 * Exit status 1 with tfc_last_error() on any failure. */
#include "tfc/Runtime/tfc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what) {
  fprintf(stderr, "capi_run: %s: %s\n", what, tfc_last_error());
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: capi_run model.so weights.safetensors [seq]\n");
    return 2;
  }
  int64_t seq = argc > 3 ? atoll(argv[3]) : 5;
  tfc_model *model;
  if (tfc_model_load(argv[1], &model) != TFC_OK)
    return fail("load");
  if (tfc_model_load_weights(model, argv[2]) != TFC_OK)
    return fail("weights");
  tfc_model_info info;
  if (tfc_model_get_info(model, &info) != TFC_OK)
    return fail("info");
  for (size_t e = 0; e < info.num_entries; ++e) {
    const char *name = tfc_model_entry_name(model, e);
    size_t nin = tfc_entry_num_inputs(model, e);
    size_t nout = tfc_entry_num_outputs(model, e);
    tfc_tensor *in = calloc(nin, sizeof(tfc_tensor));
    tfc_tensor *out = calloc(nout, sizeof(tfc_tensor));
    for (size_t i = 0; i < nin; ++i) {
      tfc_tensor_info ti;
      if (tfc_entry_input_info(model, e, i, &ti) != TFC_OK)
        return fail("input info");
      in[i].dtype = ti.dtype;
      in[i].rank = ti.rank;
      int64_t n = 1;
      for (int d = 0; d < ti.rank; ++d) {
        int64_t size = ti.dims[d] >= 0 ? ti.dims[d] : (d == 0 ? 2 : seq);
        in[i].shape[d] = size;
        n *= size;
      }
      size_t bytes = (size_t)n * tfc_dtype_size(ti.dtype);
      unsigned char *data = malloc(bytes ? bytes : 1);
      for (int64_t k = 0; k < n; ++k) {
        if (ti.dtype == TFC_I64) {
          int64_t one = 1;
          memcpy(data + 8 * k, &one, 8);
        } else if (ti.dtype == TFC_I32) {
          int32_t one = 1;
          memcpy(data + 4 * k, &one, 4);
        } else if (ti.dtype == TFC_F32) {
          float half = 0.5f;
          memcpy(data + 4 * k, &half, 4);
        } else if (ti.dtype == TFC_BOOL) {
          data[k] = 1;
        } else {
          fprintf(stderr, "capi_run: unsupported input dtype %s\n",
                  tfc_dtype_name(ti.dtype));
          return 1;
        }
      }
      in[i].data = data;
    }
    if (tfc_run(model, name, in, nin, out, nout) != TFC_OK)
      return fail("run");
    for (size_t o = 0; o < nout; ++o) {
      tfc_tensor_info ti;
      tfc_entry_output_info(model, e, o, &ti);
      printf("%s: output %s [", name, ti.name);
      for (int d = 0; d < out[o].rank; ++d)
        printf(d ? ", %lld" : "%lld", (long long)out[o].shape[d]);
      printf("]\n");
      tfc_tensor_release(&out[o]);
    }
    for (size_t i = 0; i < nin; ++i)
      free(in[i].data);
    free(in);
    free(out);
  }
  tfc_model_free(model);
  return 0;
}
