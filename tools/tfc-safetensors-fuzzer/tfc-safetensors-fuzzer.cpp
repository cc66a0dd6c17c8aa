//===- tfc-safetensors-fuzzer.cpp - libFuzzer target of the safetensors reader
//
// Part of tfc, a transformer compiler on MLIR.
//
// Arbitrary bytes through SafeTensorsFile::fromBytes, the checks every
// weights file gets (header length, JSON, dtypes, shapes, offsets). An
// accepted file must keep its promises: every tensor's bytes lie inside the
// image (all are read, so ASan sees an over-read) and match its shape and
// dtype; encoding the tensors again and reading the result gives the same
// tensors. Errors are the expected outcome for most inputs; a crash, a
// sanitizer report or a broken promise (a trap) is a bug.
//
//   tfc-safetensors-fuzzer -max_total_time=600 CORPUS_DIR \
//       tools/tfc-safetensors-fuzzer/seeds
//
//===----------------------------------------------------------------------===//

#include "tfc/Formats/SafeTensors.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

using namespace tfc::rt;

namespace {

[[noreturn]] void broken(const char *what, const std::string &detail) {
  std::fprintf(stderr, "broken promise: %s: %s\n", what, detail.c_str());
  __builtin_trap();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char *>(data), size);
  std::string error;
  std::unique_ptr<SafeTensorsFile> file =
      SafeTensorsFile::fromBytes(bytes, error);
  if (!file) {
    if (error.empty())
      broken("a rejected file has no message", "");
    return 0;
  }

  uint64_t checksum = 0;
  bool quantized = false;
  std::vector<TensorToWrite> again;
  for (const TensorView &t : file->tensors()) {
    if (file->find(t.name) != &t)
      broken("find() does not return the tensor", t.name);
    uint64_t expected = 0;
    if (!dtypeBytes(t.dtype, t.numElements(), expected) ||
        t.end - t.begin != expected)
      broken("bytes do not match shape and dtype", t.name);
    // Every byte is readable (ASan checks the bounds).
    const auto *p = static_cast<const uint8_t *>(t.data);
    for (uint64_t i = 0; i < expected; ++i)
      checksum += p[i];
    if (isQuantized(t.dtype)) {
      quantized = true;
      std::vector<float> values(t.numElements());
      dequantize(t.dtype, t.data, values.data(), values.size());
    }
    again.push_back({t.name, t.dtype, t.shape, t.data});
  }
  (void)checksum;

  // Round trip: the writer's image reads back as the same tensors (the
  // writer refuses empty names, which the format allows).
  if (quantized || file->find("") != nullptr)
    return 0;
  std::string image;
  if (!encodeSafeTensors(again, file->metadata(), image, error))
    broken("an accepted file cannot be written again", error);
  std::unique_ptr<SafeTensorsFile> copy =
      SafeTensorsFile::fromBytes(image, error);
  if (!copy)
    broken("a written file is rejected", error);
  if (copy->tensors().size() != file->tensors().size() ||
      copy->metadata() != file->metadata())
    broken("the round trip changed the tensor list or metadata", "");
  for (const TensorView &t : file->tensors()) {
    const TensorView *u = copy->find(t.name);
    if (!u || u->dtype != t.dtype || u->shape != t.shape ||
        u->end - u->begin != t.end - t.begin ||
        std::memcmp(u->data, t.data, t.end - t.begin) != 0)
      broken("the round trip changed a tensor", t.name);
  }
  return 0;
}
