//===- KernelTuning.cpp - Measured tunings of the GEMM's blocking ---------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// A tuning (include/tfc/Tuning/GemmTuning.h, from tfc-tune's records)
// applied over an instruction set's GemmConfig, and the bounds any
// configuration must keep. (Its own file: the tuning's ::tfc namespace and
// MLIR's mlir::tfc cannot both be reached by a bare `tfc::`.)
//
//===----------------------------------------------------------------------===//

#include "KernelConfig.h"

#include "tfc/Conversion/TfcToCPU/GemmBlocking.h"

#include "tfc/Tuning/GemmTuning.h"

#include <algorithm>
#include <string>

namespace mlir::tfc::cpu {

int64_t vectorRegistersForIsa(StringRef isa) { return isa == "avx2" ? 16 : 32; }

std::string checkGemmConfig(const GemmConfig &c, StringRef isa) {
  auto str = [](int64_t v) { return std::to_string(v); };
  if (c.nr % c.vectorWidth != 0 || c.chunks() < 1 || c.chunks() > 4)
    return "nr=" + str(c.nr) + ": expected a multiple of " +
           str(c.vectorWidth) + " (the f32 lanes of " + isa.str() +
           "'s vectors), at most " + str(4 * c.vectorWidth);
  if (c.mr < 1 || c.mr > 16)
    return "mr=" + str(c.mr) + ": expected 1 to 16 rows";
  if (c.tilePanels < 1 || c.tilePanels > 4)
    return "tile-panels=" + str(c.tilePanels) + ": expected 1 to 4 panels";
  int64_t vectors = c.chunks() * c.tilePanels;
  int64_t registers = c.mr * vectors + vectors + 1;
  if (registers > vectorRegistersForIsa(isa))
    return "a register tile of mr=" + str(c.mr) + " x " + str(vectors) +
           " vectors needs " + str(registers) +
           " vector registers (accumulators, B and a broadcast); " + isa.str() +
           " has " + str(vectorRegistersForIsa(isa));
  if (c.mc < c.mr || c.mc % c.mr != 0 || c.mc > 4096)
    return "mc=" + str(c.mc) + ": expected a multiple of mr=" + str(c.mr) +
           " up to 4096";
  if (c.panelsPerTask < 1 || c.panelsPerTask > 256)
    return "panels-per-task=" + str(c.panelsPerTask) + ": expected 1 to 256";
  if (c.kc < 8 || c.kc > 8192)
    return "kc=" + str(c.kc) + ": expected a k block of 8 to 8192";
  if (c.kUnroll != 1 && c.kUnroll != 2 && c.kUnroll != 4 && c.kUnroll != 8)
    return "k-unroll=" + str(c.kUnroll) + ": expected 1, 2, 4 or 8";
  return "";
}

bool applyGemmTuning(GemmConfig &config, StringRef text, StringRef isa,
                     std::string &error) {
  ::tfc::tuning::GemmTuning t;
  if (!::tfc::tuning::parseGemmTuning(
          std::string_view(text.data(), text.size()), t, error))
    return false;
  GemmConfig c = config;
  auto take = [](int64_t &field, int64_t value) {
    if (value > 0)
      field = value;
  };
  take(c.mr, t.mr);
  take(c.nr, t.nr);
  take(c.tilePanels, t.tilePanels);
  take(c.mc, t.mc);
  take(c.panelsPerTask, t.panelsPerTask);
  take(c.kc, t.kc);
  take(c.kUnroll, t.kUnroll);
  // The default's rows per task in whole tiles of a tuned mr.
  if (t.mc == 0 && c.mc % c.mr != 0)
    c.mc = std::max(c.mr, c.mc / c.mr * c.mr);
  if (t.prefetchA >= 0)
    c.prefetchA = t.prefetchA;
  if (t.deepKc >= 0)
    c.kcFromL2 = t.deepKc;
  error = checkGemmConfig(c, isa);
  if (!error.empty())
    return false;
  config = c;
  return true;
}

std::string canonicalGemmTuning(StringRef text) {
  ::tfc::tuning::GemmTuning t;
  std::string error;
  if (!::tfc::tuning::parseGemmTuning(
          std::string_view(text.data(), text.size()), t, error))
    return text.str();
  return ::tfc::tuning::formatGemmTuning(t);
}

std::string defaultGemmTuningText(StringRef isa, int64_t l1dBytes) {
  const GemmConfig *config = gemmConfigForIsa(isa);
  if (!config)
    return "";
  ::tfc::tuning::GemmTuning t;
  t.mr = config->mr;
  t.nr = config->nr;
  t.tilePanels = config->tilePanels;
  t.mc = config->mc;
  t.panelsPerTask = config->panelsPerTask;
  t.kc = l1dBytes > 0 ? kcForL1d(*config, l1dBytes) : config->kc;
  t.kUnroll = config->kUnroll;
  t.prefetchA = config->prefetchA;
  t.deepKc = config->kcFromL2;
  return ::tfc::tuning::formatGemmTuning(t);
}

int64_t gemmVectorWidth(StringRef isa) {
  const GemmConfig *config = gemmConfigForIsa(isa);
  return config ? config->vectorWidth : 0;
}

std::string checkGemmTuningText(StringRef isa, StringRef tuning) {
  const GemmConfig *config = gemmConfigForIsa(isa);
  if (!config)
    return "unknown CPU kernel instruction set '" + isa.str() + "'";
  GemmConfig c = *config;
  std::string error;
  applyGemmTuning(c, tuning, isa, error);
  return error;
}

} // namespace mlir::tfc::cpu
