//===- DType.cpp - Element loads, stores and sizes by the dtype table -----===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The one place that reads and writes an element of any plain dtype: the
// tools' conversions, the .npy and weight writers and the runtime's binding
// call these, with the dtype's row of DType.h.
//
//===----------------------------------------------------------------------===//

#include "tfc/Formats/DType.h"
#include "tfc/Formats/Float16.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace tfc::rt;

bool tfc::rt::dtypeBytes(DType dtype, uint64_t elements, uint64_t &bytes) {
  const DTypeTraits &t = traitsOf(dtype);
  if (elements % t.blockElements != 0)
    return false;
  uint64_t blocks = elements / t.blockElements;
  if (blocks && t.blockBytes > UINT64_MAX / blocks)
    return false;
  bytes = blocks * t.blockBytes;
  return true;
}

namespace {
template <typename T> T get(const void *base, uint64_t i) {
  T v;
  std::memcpy(&v, static_cast<const uint8_t *>(base) + sizeof(T) * i,
              sizeof(T));
  return v;
}
template <typename T> void put(void *base, uint64_t i, T v) {
  std::memcpy(static_cast<uint8_t *>(base) + sizeof(T) * i, &v, sizeof(T));
}
} // namespace

int64_t tfc::rt::dtypeLoadInt(DType dtype, const void *base, uint64_t i) {
  switch (dtype) {
  case DType::I64:
    return get<int64_t>(base, i);
  case DType::I32:
    return get<int32_t>(base, i);
  case DType::I16:
    return get<int16_t>(base, i);
  case DType::I8:
    return get<int8_t>(base, i);
  case DType::U8:
    return get<uint8_t>(base, i);
  case DType::Bool:
    return get<uint8_t>(base, i) != 0;
  default:
    return static_cast<int64_t>(dtypeLoad(dtype, base, i));
  }
}

double tfc::rt::dtypeLoad(DType dtype, const void *base, uint64_t i) {
  switch (dtype) {
  case DType::F64:
    return get<double>(base, i);
  case DType::F32:
    return get<float>(base, i);
  case DType::F16:
    return halfToFloat(get<uint16_t>(base, i));
  case DType::BF16:
    return bfloat16ToFloat(get<uint16_t>(base, i));
  case DType::I64:
  case DType::I32:
  case DType::I16:
  case DType::I8:
  case DType::U8:
  case DType::Bool:
    return static_cast<double>(dtypeLoadInt(dtype, base, i));
  default: // block formats
    return 0;
  }
}

void tfc::rt::dtypeStoreInt(DType dtype, void *base, uint64_t i, int64_t v) {
  switch (dtype) {
  case DType::I64:
    return put<int64_t>(base, i, v);
  case DType::I32:
    return put<int32_t>(base, i, static_cast<int32_t>(v));
  case DType::I16:
    return put<int16_t>(base, i, static_cast<int16_t>(v));
  case DType::I8:
    return put<int8_t>(base, i, static_cast<int8_t>(v));
  case DType::U8:
    return put<uint8_t>(base, i, static_cast<uint8_t>(v));
  case DType::Bool:
    return put<uint8_t>(base, i, v != 0);
  default:
    return dtypeStore(dtype, base, i, static_cast<double>(v));
  }
}

void tfc::rt::dtypeStore(DType dtype, void *base, uint64_t i, double v) {
  switch (dtype) {
  case DType::F64:
    return put<double>(base, i, v);
  case DType::F32:
    return put<float>(base, i, static_cast<float>(v));
  case DType::F16:
    return put<uint16_t>(base, i, doubleToHalf(v));
  case DType::BF16:
    return put<uint16_t>(base, i, doubleToBFloat16(v));
  case DType::Bool:
    return put<uint8_t>(base, i, v != 0.0);
  case DType::I64:
  case DType::I32:
  case DType::I16:
  case DType::I8:
  case DType::U8: {
    // Truncated toward zero and clamped to the type, so that no conversion
    // is undefined.
    double t = std::isnan(v) ? 0.0 : std::trunc(v);
    int64_t n = t >= 9.2233720368547758e18    ? INT64_MAX
                : t <= -9.2233720368547758e18 ? INT64_MIN
                                              : static_cast<int64_t>(t);
    int bits = 8 * static_cast<int>(traitsOf(dtype).blockBytes);
    if (dtype == DType::U8)
      n = std::clamp<int64_t>(n, 0, 255);
    else if (bits < 64)
      n = std::clamp<int64_t>(n, -(INT64_C(1) << (bits - 1)),
                              (INT64_C(1) << (bits - 1)) - 1);
    return dtypeStoreInt(dtype, base, i, n);
  }
  default: // block formats
    return;
  }
}

