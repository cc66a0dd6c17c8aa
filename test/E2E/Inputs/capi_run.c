/* A C program that runs any compiled tfc model through the C API only:
 *
 *   capi_run model.so weights.safetensors [seq [outdir]]
 *
 * For every entry it builds inputs from the metadata (dynamic dims: batch 2,
 * other dims `seq`), runs it and prints each output's name and shape. The
 * inputs differ by element and by input, so that a swapped or misread input
 * changes the outputs: ids (integer inputs bounded above 2) are
 * (7k + 3 + i) mod bound for element k of input i; 0/1 inputs (masks, token
 * types) are 1 at the first position of every row and elsewhere 1 unless
 * (position + row + i) is a multiple of 3; floats are (37k mod 101) / 50 - 1;
 * booleans 1. With `outdir`, every input and output is also written as
 * outdir/ENTRY.in.NAME.npy and outdir/ENTRY.out.NAME.npy (c-api.test runs the
 * same inputs through tfc-run and compares). With CAPI_RUN_HOLD set in the
 * environment it prints "ready" after the runs and keeps the model loaded
 * until its standard input closes.
 * Exit status 1 with tfc_last_error() on any failure. */
#include "tfc/Runtime/tfc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what) {
  fprintf(stderr, "capi_run: %s: %s\n", what, tfc_last_error());
  return 1;
}

/* Writes a row-major tensor as a version 1.0 .npy file; 0 on success. */
static int write_npy(const char *dir, const char *entry, const char *kind,
                     const char *name, const tfc_tensor *t) {
  const char *descr;
  switch (t->dtype) {
  case TFC_F32:
    descr = "<f4";
    break;
  case TFC_I64:
    descr = "<i8";
    break;
  case TFC_I32:
    descr = "<i4";
    break;
  case TFC_BOOL:
    descr = "|b1";
    break;
  default:
    fprintf(stderr, "capi_run: cannot write dtype %s\n",
            tfc_dtype_name(t->dtype));
    return 1;
  }
  char path[4096], header[512];
  snprintf(path, sizeof path, "%s/%s.%s.%s.npy", dir, entry, kind, name);
  int n = snprintf(header, sizeof header,
                   "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  int64_t count = 1;
  for (int d = 0; d < t->rank; ++d) {
    n += snprintf(header + n, sizeof header - n, "%lld,%s",
                  (long long)t->shape[d], d + 1 < t->rank ? " " : "");
    count *= t->shape[d];
  }
  n += snprintf(header + n, sizeof header - n, "), }");
  /* Pad with spaces and a newline so that the data starts at a multiple of
   * 64 bytes (10 bytes of magic, version and length come first). */
  while ((10 + n + 1) % 64)
    header[n++] = ' ';
  header[n++] = '\n';
  FILE *f = fopen(path, "wb");
  if (!f) {
    fprintf(stderr, "capi_run: cannot write %s\n", path);
    return 1;
  }
  /* Magic, version 1.0, header length (little-endian). */
  unsigned char magic[10] = "\x93NUMPY\x01";
  magic[8] = (unsigned char)(n & 0xff);
  magic[9] = (unsigned char)(n >> 8);
  size_t bytes = (size_t)count * tfc_dtype_size(t->dtype);
  int bad = fwrite(magic, 1, 10, f) != 10 ||
            fwrite(header, 1, (size_t)n, f) != (size_t)n ||
            (bytes && fwrite(t->data, 1, bytes, f) != bytes);
  bad |= fclose(f) != 0;
  if (bad)
    fprintf(stderr, "capi_run: cannot write %s\n", path);
  return bad;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr,
            "usage: capi_run model.so weights.safetensors [seq [outdir]]\n");
    return 2;
  }
  int64_t seq = argc > 3 ? atoll(argv[3]) : 5;
  const char *outdir = argc > 4 ? argv[4] : NULL;
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
      int64_t last = ti.rank ? in[i].shape[ti.rank - 1] : 1;
      size_t bytes = (size_t)n * tfc_dtype_size(ti.dtype);
      unsigned char *data = malloc(bytes ? bytes : 1);
      for (int64_t k = 0; k < n; ++k) {
        int64_t pos = last ? k % last : 0, row = last ? k / last : 0;
        int64_t v = ti.bound > 2 ? (7 * k + 3 + (int64_t)i) % ti.bound
                    : pos == 0   ? 1
                                 : (pos + row + (int64_t)i) % 3 != 0;
        if (ti.dtype == TFC_I64) {
          memcpy(data + 8 * k, &v, 8);
        } else if (ti.dtype == TFC_I32) {
          int32_t v32 = (int32_t)v;
          memcpy(data + 4 * k, &v32, 4);
        } else if (ti.dtype == TFC_F32) {
          float f = (float)((37 * k) % 101) / 50.0f - 1.0f;
          memcpy(data + 4 * k, &f, 4);
        } else if (ti.dtype == TFC_BOOL) {
          data[k] = 1;
        } else {
          fprintf(stderr, "capi_run: unsupported input dtype %s\n",
                  tfc_dtype_name(ti.dtype));
          return 1;
        }
      }
      in[i].data = data;
      if (outdir && write_npy(outdir, name, "in", ti.name, &in[i]))
        return 1;
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
      if (outdir && write_npy(outdir, name, "out", ti.name, &out[o]))
        return 1;
      tfc_tensor_release(&out[o]);
    }
    for (size_t i = 0; i < nin; ++i)
      free(in[i].data);
    free(in);
    free(out);
  }
  if (getenv("CAPI_RUN_HOLD")) {
    /* Hold the model (its mappings) until stdin closes: another process
     * (test/Runtime/Inputs/shared_pages.py) inspects this one meanwhile. */
    printf("ready\n");
    fflush(stdout);
    while (getchar() != EOF) {
    }
  }
  tfc_model_free(model);
  return 0;
}
