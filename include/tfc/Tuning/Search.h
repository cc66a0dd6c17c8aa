//===- Search.h - Coordinate descent over a discrete space ------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The search of tfc-tune: parameters with a few choices each (a register
// tile, a k block, ...), a point being one choice per parameter. Starting
// from the analytic default, it tries every other choice of one parameter
// with the rest held, moves to the best of them when it beats the point it
// has by more than `minGain`, and goes on with the next parameter; passes
// over all parameters repeat until one changes nothing, the passes run out
// or the time does. Candidates are judged by `compare`, the candidate's
// cost relative to the incumbent's (below 1: better): on a machine whose
// speed drifts, a ratio of two measurements taken side by side is what can
// be trusted, not two absolute times taken minutes apart.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TUNING_SEARCH_H
#define TFC_TUNING_SEARCH_H

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace tfc::tuning {

/// A point: one choice index per parameter.
using Point = std::vector<size_t>;

struct SearchSpace {
  /// The number of choices of each parameter (each at least 1).
  std::vector<size_t> choices;
};

struct SearchOptions {
  /// A candidate replaces the incumbent when its relative cost is below
  /// 1 - minGain (measurement noise must not walk the search around).
  double minGain = 0.01;
  /// Passes over all parameters at most.
  int maxPasses = 3;
  /// Checked before each candidate: true stops the search (the budget).
  std::function<bool()> outOfTime;
};

struct SearchResult {
  Point best;
  /// The cost of `best` relative to the start (product of the accepted
  /// ratios).
  double relativeCost = 1;
  /// Candidates compared; whether the search converged (a pass changed
  /// nothing) rather than running out of passes or time.
  size_t evaluations = 0;
  bool converged = false;
  bool outOfTime = false;
};

/// Coordinate descent from `start` (a valid point). `valid` rules points
/// out without measuring them; `compare(candidate, incumbent)` returns the
/// candidate's cost relative to the incumbent's, or a negative number when
/// the candidate could not be measured (it is skipped).
SearchResult coordinateDescent(
    const SearchSpace &space, Point start,
    const std::function<bool(const Point &)> &valid,
    const std::function<double(const Point &, const Point &)> &compare,
    const SearchOptions &options);

} // namespace tfc::tuning

#endif // TFC_TUNING_SEARCH_H
