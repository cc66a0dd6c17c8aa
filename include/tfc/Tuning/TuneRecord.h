//===- TuneRecord.h - Tuning records per CPU model --------------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// What `tfc-tune` measured on a machine, kept per CPU model and kernel
// instruction set in one JSON file that `tfc-compile` reads when it compiles
// for the host (docs/tuning.md has the format):
//
//   {"format": "tfc tuning records", "version": 1, "records": [
//     {"cpu": {"vendor": "AuthenticAMD", "model_name": "AMD EPYC",
//              "family": 25, "model": 1, "l1d_bytes": 32768,
//              "l2_bytes": 524288, "l3_bytes": 33554432},
//      "isa": "avx2", "gemm": {"mr": 4, "nr": 24, ...},
//      "threads": 2, "measured": "...",
//      "results": [{"shape": "128x768x768", "default_gflops": 60.1,
//                   "tuned_gflops": 66.0}, ...]}]}
//
// A record applies to a host whose identity (vendor, model name, family,
// model and the three cache sizes) is the record's and to kernels of the
// record's instruction set. The file is found through TFC_TUNE_FILE (a
// path, or "none" for no tuning), else in the user's cache
// ($TFC_CACHE_DIR, $XDG_CACHE_HOME/tfc or ~/.cache/tfc, tuning.json).
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TUNING_TUNERECORD_H
#define TFC_TUNING_TUNERECORD_H

#include "tfc/Tuning/GemmTuning.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tfc::tuning {

/// What identifies a CPU model for tuning: lscpu's name, family and model,
/// and the caches per core (L1d, L2) and the L3.
struct CpuIdentity {
  std::string vendor, modelName;
  int64_t family = -1, model = -1;
  int64_t l1dBytes = 0, l2Bytes = 0, l3Bytes = 0;

  bool operator==(const CpuIdentity &o) const;
  bool operator!=(const CpuIdentity &o) const { return !(*this == o); }
  /// "AMD EPYC (AuthenticAMD family 25 model 1; L1d 32 KiB, L2 512 KiB,
  /// L3 32768 KiB)".
  std::string describe() const;
};

/// The identity of the machine this runs on (/proc/cpuinfo, the caches from
/// sysconf, else /sys/devices/system/cpu/cpu0/cache).
CpuIdentity hostCpuIdentity();

/// One shape's measurement at tuning time.
struct ShapeResult {
  int64_t m = 0, k = 0, n = 0;
  double defaultGflops = 0, tunedGflops = 0;
};

struct TuneRecord {
  CpuIdentity cpu;
  /// The kernels' instruction set: avx512 or avx2.
  std::string isa;
  GemmTuning gemm;
  /// The threads it was measured with, and a free-form note (date, tool,
  /// budget).
  int64_t threads = 0;
  std::string measured;
  std::vector<ShapeResult> results;
};

struct TuneFile {
  std::vector<TuneRecord> records;
};

/// Parses a tuning file's text; on failure returns false with `error`
/// naming `what` (the path) and the key (records[1].gemm.mr) or line and
/// column, and what was expected.
bool parseTuneFile(std::string_view text, const std::string &what,
                   TuneFile &out, std::string &error);
/// Reads `path`; a missing file is an error too (the caller decides whether
/// that matters: fileExists).
bool readTuneFile(const std::string &path, TuneFile &out, std::string &error);
/// The file's JSON text (records in their order, fields in a fixed order).
std::string formatTuneFile(const TuneFile &file);
/// Writes `path` whole or not at all (a temporary file renamed into place),
/// creating its directory.
bool writeTuneFile(const std::string &path, const TuneFile &file,
                   std::string &error);

/// The record for `cpu` and `isa`; null if there is none.
const TuneRecord *findRecord(const TuneFile &file, const CpuIdentity &cpu,
                             std::string_view isa);
/// Adds `record`, replacing the one of the same CPU and ISA.
void putRecord(TuneFile &file, TuneRecord record);

/// The tuning file in the user's cache: $TFC_CACHE_DIR/tuning.json, else
/// $XDG_CACHE_HOME/tfc/tuning.json, else ~/.cache/tfc/tuning.json.
std::string defaultTuneFilePath();
/// The tuning file the compiler reads by default: TFC_TUNE_FILE when set
/// ("" if it says "none"), else defaultTuneFilePath().
std::string tuneFileInEffect();
bool fileExists(const std::string &path);

} // namespace tfc::tuning

#endif // TFC_TUNING_TUNERECORD_H
