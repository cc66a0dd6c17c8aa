//===- TuningTest.cpp - Tuning records, the GEMM tuning, the search -------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Tuning/GemmTuning.h"
#include "tfc/Tuning/Search.h"
#include "tfc/Tuning/TuneRecord.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>

using namespace tfc::tuning;

namespace {

TEST(GemmTuningTest, FormatsSetFieldsInFixedOrder) {
  GemmTuning t;
  EXPECT_TRUE(t.empty());
  EXPECT_EQ(formatGemmTuning(t), "");
  t.kc = 128;
  t.mr = 6;
  t.prefetchA = 0;
  EXPECT_FALSE(t.empty());
  EXPECT_EQ(formatGemmTuning(t), "mr=6,kc=128,prefetch-a=0");
}

TEST(GemmTuningTest, ParsesWhatItFormats) {
  GemmTuning t;
  std::string error;
  ASSERT_TRUE(parseGemmTuning("deep-kc=1,kc=256,mr=4,nr=24,tile-panels=1,"
                              "mc=64,panels-per-task=6,k-unroll=2,"
                              "prefetch-a=0",
                              t, error))
      << error;
  EXPECT_EQ(t.mr, 4);
  EXPECT_EQ(t.nr, 24);
  EXPECT_EQ(t.mc, 64);
  EXPECT_EQ(t.kUnroll, 2);
  EXPECT_EQ(t.prefetchA, 0);
  EXPECT_EQ(t.deepKc, 1);
  EXPECT_EQ(formatGemmTuning(t), "mr=4,nr=24,tile-panels=1,mc=64,"
                                 "panels-per-task=6,kc=256,k-unroll=2,"
                                 "prefetch-a=0,deep-kc=1");
  GemmTuning again;
  ASSERT_TRUE(parseGemmTuning(formatGemmTuning(t), again, error));
  EXPECT_EQ(again, t);
  ASSERT_TRUE(parseGemmTuning("default", again, error));
  EXPECT_TRUE(again.empty());
}

TEST(GemmTuningTest, NamesWhatIsWrong) {
  struct Case {
    const char *text, *message;
  } cases[] = {
      {"mr", "'mr': expected name=value"},
      {"mr=4,", "'': expected name=value"},
      {"rows=4", "unknown field 'rows' (expected one of mr, nr,"},
      {"mr=4,mr=6", "'mr' is given twice"},
      {"mr=0", "'mr=0': expected a whole number from 1 to 65536"},
      {"mr=-3", "'mr=-3': expected a whole number"},
      {"kc=12x", "'kc=12x': expected a whole number"},
      {"kc=99999999999999999999", "expected a whole number"},
      {"kc=", "'kc=': expected a whole number"},
      {"prefetch-a=2", "'prefetch-a=2': expected 0 or 1"},
  };
  for (const Case &c : cases) {
    GemmTuning t;
    t.mr = 99;
    std::string error;
    EXPECT_FALSE(parseGemmTuning(c.text, t, error)) << c.text;
    EXPECT_NE(error.find(c.message), std::string::npos)
        << c.text << ": " << error;
    EXPECT_EQ(t.mr, 99) << "a failed parse must leave the output alone";
  }
}

// The search on costs whose optimum is known.
TEST(SearchTest, FindsTheOptimumOfASeparableCost) {
  SearchSpace space{{6, 5, 4, 3}};
  const Point target{4, 1, 3, 0};
  auto cost = [&](const Point &p) {
    double c = 1;
    for (size_t i = 0; i < p.size(); ++i)
      c += std::pow(double(p[i]) - double(target[i]), 2);
    return c;
  };
  size_t calls = 0;
  auto compare = [&](const Point &a, const Point &b) {
    ++calls;
    return cost(a) / cost(b);
  };
  SearchResult r = coordinateDescent(
      space, {0, 4, 0, 2}, [](const Point &) { return true; }, compare, {});
  EXPECT_EQ(r.best, target);
  EXPECT_TRUE(r.converged);
  EXPECT_FALSE(r.outOfTime);
  EXPECT_EQ(r.evaluations, calls);
  EXPECT_NEAR(r.relativeCost, cost(target) / cost({0, 4, 0, 2}), 1e-12);
}

TEST(SearchTest, FollowsACoupledCostAroundInvalidPoints) {
  // A coupled cost on a grid: the optimum at (7, 7) is reached only through
  // several moves along each axis in turn ((0, 0) -> (5, 0) -> (5, 6) ->
  // (7, 6) -> (7, 7)); points with x + y == 9 are invalid and never
  // measured.
  SearchSpace space{{10, 10}};
  auto cost = [](const Point &p) {
    double x = double(p[0]), y = double(p[1]);
    return 1 + (x - 7) * (x - 7) + (y - 7) * (y - 7) + 0.5 * (x - y) * (x - y);
  };
  auto valid = [](const Point &p) { return p[0] + p[1] != 9; };
  bool sawInvalid = false;
  auto compare = [&](const Point &a, const Point &b) {
    sawInvalid |= !valid(a);
    return cost(a) / cost(b);
  };
  SearchOptions o;
  o.maxPasses = 50;
  SearchResult r = coordinateDescent(space, {0, 0}, valid, compare, o);
  EXPECT_EQ(r.best, (Point{7, 7}));
  EXPECT_TRUE(r.converged);
  EXPECT_FALSE(sawInvalid);
}

TEST(SearchTest, IgnoresGainsBelowTheThresholdAndUnmeasurablePoints) {
  SearchSpace space{{3}};
  // Choice 1 is 0.5 % better (noise), choice 2 cannot be measured.
  auto compare = [](const Point &a, const Point &) {
    return a[0] == 1 ? 0.995 : -1.0;
  };
  SearchResult r = coordinateDescent(
      space, {0}, [](const Point &) { return true; }, compare, {});
  EXPECT_EQ(r.best, Point{0});
  EXPECT_TRUE(r.converged);
}

TEST(SearchTest, StopsWhenOutOfTime) {
  SearchSpace space{{8, 8}};
  size_t calls = 0;
  SearchOptions o;
  o.outOfTime = [&] { return calls >= 3; };
  SearchResult r = coordinateDescent(
      space, {0, 0}, [](const Point &) { return true; },
      [&](const Point &a, const Point &) {
        ++calls;
        return 1.0 / (1 + a[0] + a[1]);
      },
      o);
  EXPECT_EQ(calls, 3u);
  EXPECT_TRUE(r.outOfTime);
  EXPECT_FALSE(r.converged);
}

const char *kGoodFile = R"json({
  "format": "tfc tuning records", "version": 1,
  "records": [
    {"cpu": {"vendor": "AuthenticAMD", "model_name": "AMD EPYC", "family": 25,
             "model": 1, "l1d_bytes": 32768, "l2_bytes": 524288,
             "l3_bytes": 33554432},
     "isa": "avx2", "gemm": {"mr": 6, "nr": 16, "kc": 128, "prefetch-a": 1},
     "threads": 2, "measured": "2026-12-02",
     "results": [{"shape": "128x768x768", "default_gflops": 60.5,
                  "tuned_gflops": 66.25}]},
    {"cpu": {"vendor": "GenuineIntel", "model_name": "Intel(R) Xeon(R)",
             "family": 6, "model": 207, "l1d_bytes": 49152,
             "l2_bytes": 2097152, "l3_bytes": 0},
     "isa": "avx512", "gemm": {}, "threads": 2}
  ]})json";

TEST(TuneRecordTest, ReadsFindsAndWritesRecords) {
  TuneFile file;
  std::string error;
  ASSERT_TRUE(parseTuneFile(kGoodFile, "t.json", file, error)) << error;
  ASSERT_EQ(file.records.size(), 2u);
  const TuneRecord &amd = file.records[0];
  EXPECT_EQ(amd.cpu.modelName, "AMD EPYC");
  EXPECT_EQ(amd.cpu.l2Bytes, 524288);
  EXPECT_EQ(formatGemmTuning(amd.gemm), "mr=6,nr=16,kc=128,prefetch-a=1");
  ASSERT_EQ(amd.results.size(), 1u);
  EXPECT_EQ(amd.results[0].k, 768);
  EXPECT_DOUBLE_EQ(amd.results[0].tunedGflops, 66.25);
  EXPECT_TRUE(file.records[1].gemm.empty());

  EXPECT_EQ(findRecord(file, amd.cpu, "avx2"), &file.records[0]);
  EXPECT_EQ(findRecord(file, amd.cpu, "avx512"), nullptr);
  CpuIdentity other = amd.cpu;
  other.l2Bytes = 1 << 20; // another cache size is another CPU
  EXPECT_EQ(findRecord(file, other, "avx2"), nullptr);

  TuneRecord replaced = amd;
  replaced.gemm = GemmTuning();
  replaced.gemm.kc = 64;
  putRecord(file, replaced);
  ASSERT_EQ(file.records.size(), 2u);
  EXPECT_EQ(file.records[0].gemm.kc, 64);
  other.modelName = "another";
  replaced.cpu = other;
  putRecord(file, replaced);
  EXPECT_EQ(file.records.size(), 3u);

  // What is written reads back the same, and writes the same text.
  std::string text = formatTuneFile(file);
  TuneFile again;
  ASSERT_TRUE(parseTuneFile(text, "again", again, error)) << error;
  EXPECT_EQ(formatTuneFile(again), text);
  ASSERT_EQ(again.records.size(), 3u);
  EXPECT_EQ(again.records[2].cpu, other);

  char dir[] = "/tmp/tfc-tuning-test-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  std::string path = std::string(dir) + "/sub/tuning.json";
  ASSERT_TRUE(writeTuneFile(path, again, error)) << error;
  TuneFile read;
  ASSERT_TRUE(readTuneFile(path, read, error)) << error;
  EXPECT_EQ(formatTuneFile(read), text);
  std::remove(path.c_str());
  ::rmdir((std::string(dir) + "/sub").c_str());
  ::rmdir(dir);
  EXPECT_FALSE(readTuneFile(path, read, error));
  EXPECT_NE(error.find("cannot open"), std::string::npos) << error;
}

TEST(TuneRecordTest, BadFilesAreNamedErrors) {
  std::string record =
      R"({"cpu": {"vendor": "V", "model_name": "M", "family": 1, "model": 2,
          "l1d_bytes": 1, "l2_bytes": 2, "l3_bytes": 3}, "isa": "avx2",
          "gemm": GEMM, "threads": 2 RESULTS})";
  auto file = [&](std::string gemm, std::string results = "") {
    std::string r = record;
    r.replace(r.find("GEMM"), 4, gemm);
    r.replace(r.find("RESULTS"), 7, results);
    return R"({"format": "tfc tuning records", "version": 1, "records": [)" +
           r + "]}";
  };
  struct Case {
    std::string text, message;
  } cases[] = {
      {"{\"format\": ", "t.json: invalid JSON: "},
      {"[]", "t.json: the top level: expected an object, got an array"},
      {R"({"format": "x", "version": 1, "records": []})",
       "t.json: .format: expected \"tfc tuning records\", got a string"},
      {R"({"format": "tfc tuning records", "version": 7, "records": []})",
       "t.json: .version: 7 is not a version this tfc reads (1)"},
      {R"({"format": "tfc tuning records", "version": 1})",
       "t.json: .records: expected an array, got nothing"},
      {R"({"format": "tfc tuning records", "version": 1, "records": [3]})",
       "t.json: .records[0]: expected an object, got the number 3"},
      {file("{\"rows\": 4}"),
       "t.json: .records[0].gemm.rows: unknown field (expected one of mr,"},
      {file("{\"mr\": 0}"),
       "t.json: .records[0].gemm: 'mr=0': expected a whole number from 1"},
      {file("{\"mr\": \"4\"}"),
       "t.json: .records[0].gemm.mr: expected a whole number, got a string"},
      {file("{\"prefetch-a\": 3}"),
       "t.json: .records[0].gemm: 'prefetch-a=3': expected 0 or 1"},
      {file("{}", ", \"results\": [{\"shape\": \"128x768\", "
                  "\"default_gflops\": 1, \"tuned_gflops\": 2}]"),
       "t.json: .records[0].results[0].shape: expected MxKxN, got a string"},
      {file("{}", ", \"results\": [{\"shape\": \"1x2x3\", "
                  "\"default_gflops\": -1, \"tuned_gflops\": 2}]"),
       ".records[0].results[0].default_gflops: expected a number of at "
       "least 0, got the number -1"},
  };
  for (const Case &c : cases) {
    TuneFile out;
    out.records.resize(5);
    std::string error;
    EXPECT_FALSE(parseTuneFile(c.text, "t.json", out, error)) << c.text;
    EXPECT_NE(error.find(c.message), std::string::npos)
        << c.text << "\n  gave: " << error << "\n  want: " << c.message;
    EXPECT_EQ(out.records.size(), 5u) << "a failed parse leaves the output";
  }
  // The record's ISA, threads and a duplicate.
  std::string noIsa = file("{}");
  noIsa.replace(noIsa.find("\"avx2\""), 6, "\"sse\"");
  TuneFile out;
  std::string error;
  EXPECT_FALSE(parseTuneFile(noIsa, "t.json", out, error));
  EXPECT_NE(error.find(".records[0].isa: expected \"avx512\" or \"avx2\""),
            std::string::npos)
      << error;
  std::string twice = file("{}");
  size_t open = twice.find('[') + 1, close = twice.rfind(']');
  std::string one = twice.substr(open, close - open);
  twice.insert(close, "," + one);
  EXPECT_FALSE(parseTuneFile(twice, "t.json", out, error));
  EXPECT_NE(error.find(".records[1]: a second record for M (V family 1 "
                       "model 2"),
            std::string::npos)
      << error;
}

TEST(TuneRecordTest, TheFileInEffectFollowsTheEnvironment) {
  const char *saved = std::getenv("TFC_TUNE_FILE");
  std::string keep = saved ? saved : "";
  ::setenv("TFC_TUNE_FILE", "none", 1);
  EXPECT_EQ(tuneFileInEffect(), "");
  ::setenv("TFC_TUNE_FILE", "/x/t.json", 1);
  EXPECT_EQ(tuneFileInEffect(), "/x/t.json");
  ::unsetenv("TFC_TUNE_FILE");
  const char *cache = std::getenv("TFC_CACHE_DIR");
  std::string keepCache = cache ? cache : "";
  ::setenv("TFC_CACHE_DIR", "/c", 1);
  EXPECT_EQ(tuneFileInEffect(), "/c/tuning.json");
  if (cache)
    ::setenv("TFC_CACHE_DIR", keepCache.c_str(), 1);
  else
    ::unsetenv("TFC_CACHE_DIR");
  if (saved)
    ::setenv("TFC_TUNE_FILE", keep.c_str(), 1);
}

TEST(TuneRecordTest, TheHostHasAnIdentity) {
  CpuIdentity id = hostCpuIdentity();
  EXPECT_FALSE(id.modelName.empty());
  EXPECT_GE(id.family, 0);
  EXPECT_GT(id.l1dBytes, 0);
  EXPECT_EQ(id, hostCpuIdentity());
}

} // namespace
