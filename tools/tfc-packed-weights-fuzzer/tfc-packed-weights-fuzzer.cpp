//===- tfc-packed-weights-fuzzer.cpp - libFuzzer target of .tfcw files ----===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Arbitrary bytes through parsePackedWeights, the reader of packed weights
// files (include/tfc/Formats/PackedWeights.h) that binding trusts with
// pointers into the mapping. An accepted file must keep its promises: every
// slot with bytes lies inside the file, 64-byte aligned, past the slot
// table; and reading every byte of every slot stays inside the input (ASan
// checks it). Errors are the expected outcome for most inputs; a crash, a
// sanitizer report or a broken promise (a trap) is a bug.
//
//   tfc-packed-weights-fuzzer -max_total_time=600 CORPUS_DIR \
//       tools/tfc-packed-weights-fuzzer/seeds
//
//===----------------------------------------------------------------------===//

#include "tfc/Formats/PackedWeights.h"

#include <cstdint>
#include <cstdio>
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
  PackedHeader header;
  std::string error;
  if (!parsePackedWeights(bytes, header, error)) {
    if (error.empty())
      broken("a rejected file has no message", "");
    return 0;
  }
  uint64_t tableEnd = kPackedWeightsHeaderBytes + header.slots.size() * 16;
  unsigned sum = 0;
  for (size_t i = 0; i < header.slots.size(); ++i) {
    const PackedSlot &s = header.slots[i];
    if (s.bytes == 0)
      continue;
    if (s.offset % kPackedWeightsAlign != 0 || s.offset < tableEnd ||
        s.offset > size || s.bytes > size - s.offset)
      broken("an accepted slot lies outside the file", std::to_string(i));
    for (uint64_t k = 0; k < s.bytes; ++k)
      sum += data[s.offset + k];
  }
  return static_cast<int>(sum & 0);
}
