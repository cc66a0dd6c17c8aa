//===- GemmTuning.cpp - Measured blocking of the GEMM kernel --------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Tuning/GemmTuning.h"

#include <cerrno>
#include <cstdlib>

using namespace tfc::tuning;

namespace {

const GemmTuningField kFields[] = {
    {"mr", false, &GemmTuning::mr, nullptr},
    {"nr", false, &GemmTuning::nr, nullptr},
    {"tile-panels", false, &GemmTuning::tilePanels, nullptr},
    {"mc", false, &GemmTuning::mc, nullptr},
    {"panels-per-task", false, &GemmTuning::panelsPerTask, nullptr},
    {"kc", false, &GemmTuning::kc, nullptr},
    {"k-unroll", false, &GemmTuning::kUnroll, nullptr},
    {"prefetch-a", true, nullptr, &GemmTuning::prefetchA},
    {"deep-kc", true, nullptr, &GemmTuning::deepKc},
};
constexpr size_t kNumFields = sizeof kFields / sizeof kFields[0];

/// Counts are bounded far above any sensible blocking, so that a typo
/// (a missing comma) is an error rather than a kernel of 10^9 rows.
constexpr int64_t kMaxCount = 1 << 16;

bool isSet(const GemmTuning &t, const GemmTuningField &f) {
  return f.flag ? t.*f.flagMember >= 0 : t.*f.count > 0;
}

} // namespace

const GemmTuningField *tfc::tuning::gemmTuningFields(size_t &count) {
  count = kNumFields;
  return kFields;
}

int64_t tfc::tuning::getField(const GemmTuning &t, const GemmTuningField &f) {
  return f.flag ? t.*f.flagMember : t.*f.count;
}

void tfc::tuning::setField(GemmTuning &t, const GemmTuningField &f,
                           int64_t value) {
  if (f.flag)
    t.*f.flagMember = static_cast<int>(value);
  else
    t.*f.count = value;
}

bool GemmTuning::empty() const {
  for (const GemmTuningField &f : kFields)
    if (isSet(*this, f))
      return false;
  return true;
}

bool GemmTuning::operator==(const GemmTuning &o) const {
  for (const GemmTuningField &f : kFields)
    if (getField(*this, f) != getField(o, f))
      return false;
  return true;
}

std::string tfc::tuning::formatGemmTuning(const GemmTuning &tuning) {
  std::string out;
  for (const GemmTuningField &f : kFields) {
    if (!isSet(tuning, f))
      continue;
    if (!out.empty())
      out += ',';
    out += f.name;
    out += '=';
    out += std::to_string(getField(tuning, f));
  }
  return out;
}

bool tfc::tuning::parseGemmTuning(std::string_view text, GemmTuning &out,
                                  std::string &error) {
  GemmTuning result;
  if (text.empty() || text == "default") {
    out = result;
    return true;
  }
  bool seen[kNumFields] = {};
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string_view item = text.substr(pos, comma == std::string_view::npos
                                                 ? std::string_view::npos
                                                 : comma - pos);
    pos = comma == std::string_view::npos ? text.size() + 1 : comma + 1;
    size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      error = "'" + std::string(item) + "': expected name=value";
      return false;
    }
    std::string name(item.substr(0, eq)), value(item.substr(eq + 1));
    size_t index = 0;
    while (index < kNumFields && name != kFields[index].name)
      ++index;
    if (index == kNumFields) {
      std::string names;
      for (const GemmTuningField &f : kFields)
        names += std::string(names.empty() ? "" : ", ") + f.name;
      error = "unknown field '" + name + "' (expected one of " + names + ")";
      return false;
    }
    if (seen[index]) {
      error = "'" + name + "' is given twice";
      return false;
    }
    seen[index] = true;
    const GemmTuningField &f = kFields[index];
    char *end = nullptr;
    errno = 0;
    long long v = value.empty() ? -1 : std::strtoll(value.c_str(), &end, 10);
    bool whole = !value.empty() && end && *end == 0 && errno == 0 &&
                 value.find_first_not_of("0123456789") == std::string::npos;
    if (f.flag) {
      if (!whole || v > 1) {
        error = "'" + name + "=" + value + "': expected 0 or 1";
        return false;
      }
    } else if (!whole || v < 1 || v > kMaxCount) {
      error = "'" + name + "=" + value +
              "': expected a whole number from 1 "
              "to " +
              std::to_string(kMaxCount);
      return false;
    }
    setField(result, f, v);
  }
  out = result;
  return true;
}
