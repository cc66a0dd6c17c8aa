//===- GemmTuning.h - Measured blocking of the GEMM kernel ------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The parameters of the CPU GEMM micro-kernel that `tfc-tune` measures on a
// host and `tfc-compile` applies over an instruction set's analytic default
// (lib/Conversion/TfcToCPU/KernelConfig.h, GemmConfig, says what each one
// does). A field left unset keeps the default. The textual form, used by the
// conversion pass's `gemm-tuning` option, `tfc-compile --gemm-tuning` and
// the module attribute `tfc.cpu_gemm_tuning`, lists the set fields in a
// fixed order, so that one tuning always gives the same text and the same
// code:
//
//   mr=4,nr=24,tile-panels=1,mc=64,panels-per-task=6,kc=256,k-unroll=2,
//   prefetch-a=0,deep-kc=0
//
// Plain C++17: the compiler, the tools and the runtime's tools all read it.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TUNING_GEMMTUNING_H
#define TFC_TUNING_GEMMTUNING_H

#include <cstdint>
#include <string>
#include <string_view>

namespace tfc::tuning {

/// Overrides of the GEMM configuration; 0 (-1 for the flags) keeps the
/// instruction set's default.
struct GemmTuning {
  /// Register tile: mr rows x tilePanels panels of nr columns (nr a
  /// multiple of the vector width: the weights are packed in panels of nr).
  int64_t mr = 0, nr = 0, tilePanels = 0;
  /// Rows of A per parallel task (unset with mr set: the default's rows
  /// rounded down to whole tiles of mr) and panels per task.
  int64_t mc = 0, panelsPerTask = 0;
  /// Depth of the k blocks that stay in L1, and the micro-kernel's unroll.
  int64_t kc = 0, kUnroll = 0;
  /// Prefetch of the next row tile's A (1/0), and the L2-deep k block for
  /// tasks of many row tiles (1/0).
  int prefetchA = -1, deepKc = -1;

  bool empty() const;
  bool operator==(const GemmTuning &o) const;
  bool operator!=(const GemmTuning &o) const { return !(*this == o); }
};

/// One field of GemmTuning: its name in the textual form and in tuning
/// records, and whether it is a flag (0/1) or a count.
struct GemmTuningField {
  const char *name;
  bool flag;
  int64_t GemmTuning::*count;
  int GemmTuning::*flagMember;
};
/// Every field, in the order of the textual form.
const GemmTuningField *gemmTuningFields(size_t &count);
/// The field's value in `t` (a count, or a flag as 0/1; unset: 0 for
/// counts and -1 for flags) and setting it.
int64_t getField(const GemmTuning &t, const GemmTuningField &f);
void setField(GemmTuning &t, const GemmTuningField &f, int64_t value);

/// The textual form of the set fields ("" when none is set).
std::string formatGemmTuning(const GemmTuning &tuning);

/// Parses the textual form: comma-separated `name=value`, each field at
/// most once, counts positive integers, flags 0 or 1. On failure returns
/// false with `error` naming the field and what was expected. "" and
/// "default" parse to the empty tuning.
bool parseGemmTuning(std::string_view text, GemmTuning &out,
                     std::string &error);

} // namespace tfc::tuning

#endif // TFC_TUNING_GEMMTUNING_H
