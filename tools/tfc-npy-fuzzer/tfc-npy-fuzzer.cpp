//===- tfc-npy-fuzzer.cpp - libFuzzer target of the .npy reader -----------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Arbitrary bytes through parseNpy, what tfc-run and tfc-interpret do with
// an .npy input: magic, version, header length, the header dict (a subset
// of Python literals), dtype, shape, data size. An accepted array must keep
// its promises: exactly the bytes its shape needs, and encodeNpy of it
// reads back as the same array. Errors are the expected outcome for most
// inputs; a crash, a sanitizer report or a broken promise (a trap) is a bug.
//
//   tfc-npy-fuzzer -max_total_time=600 CORPUS_DIR tools/tfc-npy-fuzzer/seeds
//
//===----------------------------------------------------------------------===//

#include "tfc/Formats/Npy.h"

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
  NpyArray array;
  std::string error;
  if (!parseNpy(bytes, array, error, "fuzz.npy")) {
    if (error.empty())
      broken("a rejected array has no message", "");
    return 0;
  }
  uint64_t elements = 1;
  for (int64_t d : array.shape) {
    if (d < 0)
      broken("a negative dim", std::to_string(d));
    elements *= static_cast<uint64_t>(d);
  }
  if (array.numElements() != elements ||
      array.data.size() != elements * dtypeSize(array.type))
    broken("the data does not match the shape", error);

  // Round trip.
  std::string image = encodeNpy(array.type, array.shape, array.data.data());
  NpyArray again;
  if (!parseNpy(image, again, error))
    broken("an encoded array is rejected", error);
  if (again.type != array.type || again.shape != array.shape ||
      again.data != array.data)
    broken("the round trip changed the array", "");
  return 0;
}
