//===- Search.cpp - Coordinate descent over a discrete space --------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Tuning/Search.h"

#include <set>

using namespace tfc::tuning;

SearchResult tfc::tuning::coordinateDescent(
    const SearchSpace &space, Point start,
    const std::function<bool(const Point &)> &valid,
    const std::function<double(const Point &, const Point &)> &compare,
    const SearchOptions &options) {
  SearchResult result;
  result.best = std::move(start);
  // Pairs already compared (candidate, incumbent): a later pass does not
  // measure them again unless the incumbent moved.
  std::set<std::pair<Point, Point>> compared;
  for (int pass = 0; pass < options.maxPasses; ++pass) {
    bool moved = false;
    for (size_t p = 0; p < space.choices.size(); ++p) {
      Point bestHere;
      double bestRatio = 1 - options.minGain;
      for (size_t c = 0; c < space.choices[p]; ++c) {
        if (c == result.best[p])
          continue;
        Point candidate = result.best;
        candidate[p] = c;
        if (!valid(candidate) ||
            !compared.insert({candidate, result.best}).second)
          continue;
        if (options.outOfTime && options.outOfTime()) {
          result.outOfTime = true;
          break;
        }
        double ratio = compare(candidate, result.best);
        ++result.evaluations;
        if (ratio >= 0 && ratio < bestRatio) {
          bestRatio = ratio;
          bestHere = candidate;
        }
      }
      if (!bestHere.empty()) {
        result.best = bestHere;
        result.relativeCost *= bestRatio;
        moved = true;
      }
      if (result.outOfTime)
        return result;
    }
    if (!moved) {
      result.converged = true;
      return result;
    }
  }
  return result;
}
