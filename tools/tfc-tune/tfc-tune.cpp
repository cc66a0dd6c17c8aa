//===- tfc-tune.cpp - Tune the CPU kernels to the host --------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//   tfc-tune [--budget=S] [--num-threads=N] [--shapes=MxKxN,...] [-o FILE]
//
// Measures the GEMM micro-kernel's blocking on this machine (register tile,
// k block, rows and panels per task, the k loop's unroll, the prefetch of A,
// L2-deep k blocks) and records the winner for this CPU model and
// instruction set in the tuning file that tfc-compile reads
// (include/tfc/Tuning/TuneRecord.h; docs/tuning.md). Each candidate is a
// library of the shapes' GEMMs compiled in process with that blocking and
// timed through the runtime against the best so far, the two taking turns
// (tfc/Tuning/Search.h's coordinate descent from the analytic default),
// within a time budget. At the end the winner and the default are measured
// once more, side by side; a winner that does not beat the default by 1 %
// is not kept (the record then says the default wins).
//
//===----------------------------------------------------------------------===//

#include "tfc/Compiler/Compiler.h"
#include "tfc/Conversion/TfcToCPU/GemmBlocking.h"
#include "tfc/Runtime/tfc.h"
#include "tfc/Target/CPU/CPUTarget.h"
#include "tfc/Target/Host/HostTarget.h"
#include "tfc/Tuning/Search.h"
#include "tfc/Tuning/TuneRecord.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace llvm;
namespace tuning = ::tfc::tuning;

namespace {

cl::OptionCategory options("tfc-tune options");
cl::opt<double> budget("budget",
                       cl::desc("Seconds the search may take (default: "
                                "$TFC_TUNE_BUDGET, else 90); the final "
                                "measurement comes after"),
                       cl::value_desc("s"), cl::init(90), cl::cat(options));
cl::opt<int> threads("num-threads",
                     cl::desc("Threads to measure with (default: the "
                              "runtime's, TFC_NUM_THREADS or every core)"),
                     cl::value_desc("n"), cl::init(0), cl::cat(options));
cl::opt<std::string> shapesOpt(
    "shapes",
    cl::desc("The GEMMs measured, y[M,N] = x[M,K] W[N,K]^T (default: the "
             "projections and MLP of a hidden size of 768 at 128 and 512 "
             "rows, and one of 4 rows)"),
    cl::value_desc("MxKxN,..."),
    cl::init("128x768x768,128x768x3072,128x3072x768,512x768x768,4x768x3072"),
    cl::cat(options));
cl::opt<std::string> isaOpt("isa",
                            cl::desc("The kernels tuned: avx512 or avx2 "
                                     "(default: the host's)"),
                            cl::value_desc("isa"), cl::cat(options));
cl::opt<std::string>
    outputOpt("o",
              cl::desc("The tuning file to add the record to (default: "
                       "$TFC_TUNE_FILE, else ~/.cache/tfc/tuning.json)"),
              cl::value_desc("file"), cl::cat(options));
cl::opt<int> rounds("rounds", cl::desc("Rounds of each comparison (default 5)"),
                    cl::init(5), cl::cat(options));
cl::opt<bool> dryRun("dry-run",
                     cl::desc("Print the record instead of writing it"),
                     cl::cat(options));
cl::opt<std::string> setOpt(
    "set",
    cl::desc("Record this blocking for the host without measuring (e.g. "
             "mr=6,nr=16,kc=128; 'default' records the analytic default)"),
    cl::value_desc("list"), cl::cat(options));
cl::opt<bool>
    showOpt("show",
            cl::desc("Print the record of this host and ISA in the tuning file "
                     "on one line (\"none\" if there is none) and exit"),
            cl::cat(options));
cl::opt<bool> ifMissing(
    "if-missing",
    cl::desc("Tune only if the file has no record for this host and ISA "
             "(what TFC_AUTOTUNE=1 runs before a compile)"),
    cl::cat(options));
cl::opt<bool> quiet("quiet", cl::desc("No progress lines"), cl::cat(options));

struct Shape {
  int64_t m, k, n;
  std::string entry() const {
    return "gemm_" + std::to_string(k) + "x" + std::to_string(n);
  }
  std::string name() const {
    return std::to_string(m) + "x" + std::to_string(k) + "x" +
           std::to_string(n);
  }
  double gflop() const { return 2.0 * m * k * n / 1e9; }
};

/// The parameters searched and their choices; a point's tuning text.
struct Space {
  struct Tile {
    int64_t mr, nr, panels;
  };
  std::vector<Tile> tiles;
  std::vector<int64_t> kcs, tileRows, panelsPerTask, unrolls, flags{0, 1};
  tuning::SearchSpace space;
  tuning::Point start;

  std::string text(const tuning::Point &p) const {
    tuning::GemmTuning t;
    const Tile &tile = tiles[p[0]];
    t.mr = tile.mr;
    t.nr = tile.nr;
    t.tilePanels = tile.panels;
    t.kc = kcs[p[1]];
    t.mc = tileRows[p[2]] * tile.mr;
    t.panelsPerTask = panelsPerTask[p[3]];
    t.kUnroll = unrolls[p[4]];
    t.prefetchA = flags[p[5]];
    t.deepKc = flags[p[6]];
    return tuning::formatGemmTuning(t);
  }
};

size_t indexOf(std::vector<int64_t> &values, int64_t v) {
  if (std::find(values.begin(), values.end(), v) == values.end()) {
    values.push_back(v);
    std::sort(values.begin(), values.end());
  }
  return std::find(values.begin(), values.end(), v) - values.begin();
}

/// The search space around `def` (the ISA's default, every field set):
/// register tiles that fill the ISA's registers with at least 8
/// accumulators (hiding two FMA pipes' latency), k blocks, row tiles and
/// panels per task, unrolls, the two prefetch flags.
bool buildSpace(StringRef isa, const tuning::GemmTuning &def, Space &s) {
  int64_t width = mlir::tfc::cpu::gemmVectorWidth(isa);
  int64_t regs = mlir::tfc::cpu::vectorRegistersForIsa(isa);
  if (width <= 0)
    return false;
  std::set<std::tuple<int64_t, int64_t, int64_t>> seen;
  auto addTile = [&](int64_t mr, int64_t nr, int64_t panels) {
    if (seen.insert({mr, nr, panels}).second)
      s.tiles.push_back({mr, nr, panels});
  };
  addTile(def.mr, def.nr, def.tilePanels);
  for (int64_t chunks = 1; chunks <= 4; ++chunks)
    for (int64_t panels = 1; panels <= 2; ++panels) {
      int64_t vectors = chunks * panels;
      if (vectors < 2 || vectors > 4)
        continue;
      int64_t maxRows = std::min<int64_t>((regs - 1 - vectors) / vectors, 16);
      for (int64_t mr = maxRows; mr >= maxRows - 1 && mr >= 2; --mr)
        if (mr * vectors >= 8)
          addTile(mr, chunks * width, panels);
    }
  s.kcs = {64, 128, 192, 256, 384, 512, 768, 1024};
  s.tileRows = {8, 12, 16, 22, 32};
  s.panelsPerTask = {2, 3, 4, 6, 8, 12};
  s.unrolls = {1, 2, 4};
  s.start = {0,
             indexOf(s.kcs, def.kc),
             indexOf(s.tileRows, std::max<int64_t>(1, def.mc / def.mr)),
             indexOf(s.panelsPerTask, def.panelsPerTask),
             indexOf(s.unrolls, def.kUnroll),
             size_t(def.prefetchA > 0),
             size_t(def.deepKc > 0)};
  s.space.choices = {s.tiles.size(),
                     s.kcs.size(),
                     s.tileRows.size(),
                     s.panelsPerTask.size(),
                     s.unrolls.size(),
                     2,
                     2};
  return true;
}

/// The module of the GEMMs: one entry per (K, N), M dynamic, one weight
/// each (bench/gemm_mlir.sh's GEMM).
std::string gemmModule(const std::vector<Shape> &shapes) {
  std::string out = "module attributes {tfc.model = \"tfc_tune\"} {\n";
  std::set<std::string> done;
  for (const Shape &s : shapes) {
    if (!done.insert(s.entry()).second)
      continue;
    std::string k = std::to_string(s.k), n = std::to_string(s.n);
    out += "  func.func @" + s.entry() + "(%x: tensor<?x" + k +
           "xf32> {tfc.name = \"x\", tfc.dims = [\"m\", " + k +
           "]}) -> (tensor<?x" + n + "xf32> {tfc.name = \"y\"}) {\n" +
           "    %w = tfc.weight \"w_" + k + "x" + n + "\" : tensor<" + n + "x" +
           k + "xf32>\n" + "    %y = tfc.linear %x, %w : (tensor<?x" + k +
           "xf32>, tensor<" + n + "x" + k + "xf32>) -> tensor<?x" + n +
           "xf32>\n" + "    return %y : tensor<?x" + n + "xf32>\n  }\n";
  }
  return out + "}\n";
}

/// The weights of gemmModule, uniform in [-1, 1), as a safetensors file.
bool writeWeights(const std::vector<Shape> &shapes, const std::string &path) {
  std::set<std::string> done;
  std::string header = "{";
  std::vector<std::pair<int64_t, int64_t>> sizes;
  uint64_t offset = 0;
  for (const Shape &s : shapes) {
    std::string name = "w_" + std::to_string(s.k) + "x" + std::to_string(s.n);
    if (!done.insert(name).second)
      continue;
    uint64_t bytes = uint64_t(s.n) * s.k * 4;
    header += std::string(header.size() > 1 ? "," : "") + "\"" + name +
              "\":{\"dtype\":\"F32\",\"shape\":[" + std::to_string(s.n) + "," +
              std::to_string(s.k) + "],\"data_offsets\":[" +
              std::to_string(offset) + "," + std::to_string(offset + bytes) +
              "]}";
    offset += bytes;
    sizes.push_back({s.n, s.k});
  }
  header += "}";
  while ((8 + header.size()) % 64 != 0)
    header += ' ';
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f)
    return false;
  uint64_t len = header.size();
  bool ok = std::fwrite(&len, 8, 1, f) == 1 &&
            std::fwrite(header.data(), 1, header.size(), f) == header.size();
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (auto [n, k] : sizes) {
    std::vector<float> w(size_t(n) * k);
    for (float &v : w)
      v = dist(rng);
    ok = ok && std::fwrite(w.data(), 4, w.size(), f) == w.size();
  }
  return std::fclose(f) == 0 && ok;
}

/// `v` with `digits` decimals.
std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// One candidate's library, loaded with the weights, and its buffers.
struct Candidate {
  tfc_model *model = nullptr;
  std::vector<std::vector<float>> outputs;
  ~Candidate() { tfc_model_free(model); }
};

class Tuner {
public:
  Tuner(std::vector<Shape> shapes, std::string isa, std::string dir)
      : shapes_(std::move(shapes)), isa_(std::move(isa)), dir_(std::move(dir)) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    for (const Shape &s : shapes_) {
      inputs_.emplace_back(size_t(s.m) * s.k);
      for (float &v : inputs_.back())
        v = dist(rng);
    }
  }

  bool prepare(std::string &error) {
    std::string mlir = dir_ + "/gemms.mlir";
    weights_ = dir_ + "/gemms.safetensors";
    std::error_code ec;
    raw_fd_ostream os(mlir, ec);
    if (ec) {
      error = "cannot write " + mlir + ": " + ec.message();
      return false;
    }
    os << gemmModule(shapes_);
    os.close();
    if (!writeWeights(shapes_, weights_)) {
      error = "cannot write " + weights_;
      return false;
    }
    source_ = mlir;
    return true;
  }

  /// The loaded library of `text`, compiled once; null with `error`.
  Candidate *get(const std::string &text, std::string &error) {
    auto it = loaded_.find(text);
    if (it != loaded_.end())
      return it->second.get();
    std::string so = dir_ + "/c" + std::to_string(loaded_.size()) + ".so";
    tfc::compiler::CompileOptions o;
    o.cpuKernels = isa_;
    o.gemmTuning = text;
    o.tuneFile = "none";
    auto started = Clock::now();
    {
      tfc::compiler::Session session(o);
      if (mlir::failed(session.load(source_)) ||
          mlir::failed(session.emit(tfc::compiler::Stage::Library, so))) {
        error = "compiling with " + text + ": " +
                (session.error().empty() ? "see above" : session.error());
        return nullptr;
      }
    }
    compileMs_ += msSince(started);
    ++compiles_;
    auto c = std::make_unique<Candidate>();
    if (tfc_model_load(so.c_str(), &c->model) != TFC_OK ||
        tfc_model_load_weights(c->model, weights_.c_str()) != TFC_OK) {
      error = "loading " + so + ": " + tfc_last_error();
      return nullptr;
    }
    for (const Shape &s : shapes_)
      c->outputs.emplace_back(size_t(s.m) * s.n);
    Candidate *raw = c.get();
    loaded_[text] = std::move(c);
    return raw;
  }

  /// One call of shape `i`.
  bool run(Candidate &c, size_t i) {
    const Shape &s = shapes_[i];
    tfc_tensor in = {}, out = {};
    in.dtype = out.dtype = TFC_F32;
    in.rank = out.rank = 2;
    in.shape[0] = out.shape[0] = s.m;
    in.shape[1] = s.k;
    out.shape[1] = s.n;
    in.data = inputs_[i].data();
    out.data = c.outputs[i].data();
    return tfc_run_into(c.model, s.entry().c_str(), &in, 1, &out, 1) == TFC_OK;
  }

  /// Median ms of a call in a block of `iters_[i]` calls after a warm-up.
  double block(Candidate &c, size_t i) {
    run(c, i);
    std::vector<double> t;
    for (int j = 0; j < iters_[i]; ++j) {
      auto s = Clock::now();
      run(c, i);
      t.push_back(msSince(s));
    }
    return median(t);
  }

  /// Calls per block: about 20 ms of the default's calls.
  void calibrate(Candidate &c) {
    iters_.assign(shapes_.size(), 5);
    for (size_t i = 0; i < shapes_.size(); ++i) {
      double ms = block(c, i);
      iters_[i] = int(std::clamp(20.0 / std::max(ms, 1e-3), 3.0, 200.0));
    }
  }

  /// The candidate's time relative to the incumbent's: per shape the median
  /// over rounds of the ratio of two blocks run side by side (in turns),
  /// then the geometric mean over the shapes. Per shape ratios in `each`.
  double compare(Candidate &cand, Candidate &inc, int roundCount,
                 std::vector<double> *each = nullptr,
                 std::vector<std::pair<double, double>> *times = nullptr) {
    double logSum = 0;
    for (size_t i = 0; i < shapes_.size(); ++i) {
      std::vector<double> ratios, tc, ti;
      for (int r = 0; r < roundCount; ++r) {
        double a, b;
        if (r % 2) {
          a = block(cand, i);
          b = block(inc, i);
        } else {
          b = block(inc, i);
          a = block(cand, i);
        }
        ratios.push_back(a / b);
        tc.push_back(a);
        ti.push_back(b);
      }
      double ratio = median(ratios);
      logSum += std::log(ratio);
      if (each)
        each->push_back(ratio);
      if (times)
        times->push_back({median(tc), median(ti)});
    }
    return std::exp(logSum / shapes_.size());
  }

  bool checkOutputs(Candidate &a, Candidate &b, std::string &error) {
    for (size_t i = 0; i < shapes_.size(); ++i) {
      if (!run(a, i) || !run(b, i)) {
        error = std::string("running: ") + tfc_last_error();
        return false;
      }
      double maxDiff = 0, maxRef = 0;
      for (size_t j = 0; j < a.outputs[i].size(); ++j) {
        maxDiff = std::max(
            maxDiff, double(std::fabs(a.outputs[i][j] - b.outputs[i][j])));
        maxRef = std::max(maxRef, double(std::fabs(b.outputs[i][j])));
      }
      if (maxDiff > 1e-4 * std::max(maxRef, 1.0)) {
        error = shapes_[i].name() + ": outputs differ from the default's by " +
                std::to_string(maxDiff);
        return false;
      }
    }
    return true;
  }

  const std::vector<Shape> &shapes() const { return shapes_; }
  double compileMs() const { return compileMs_; }
  int compiles() const { return compiles_; }

private:
  std::vector<Shape> shapes_;
  std::string isa_, dir_, source_, weights_;
  std::vector<std::vector<float>> inputs_;
  std::vector<int> iters_;
  std::map<std::string, std::unique_ptr<Candidate>> loaded_;
  double compileMs_ = 0;
  int compiles_ = 0;
};

bool parseShapes(StringRef text, std::vector<Shape> &out, std::string &error) {
  SmallVector<StringRef> items;
  text.split(items, ',', -1, false);
  for (StringRef item : items) {
    SmallVector<StringRef> parts;
    item.trim().split(parts, 'x');
    Shape s{0, 0, 0};
    if (parts.size() != 3 || parts[0].getAsInteger(10, s.m) ||
        parts[1].getAsInteger(10, s.k) || parts[2].getAsInteger(10, s.n) ||
        s.m < 1 || s.k < 1 || s.n < 1 || s.m > 65536 || s.k > 65536 ||
        s.n > 65536) {
      error = "--shapes: '" + item.str() +
              "': expected MxKxN, each from 1 to 65536";
      return false;
    }
    out.push_back(s);
  }
  if (out.empty()) {
    error = "--shapes is empty";
    return false;
  }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(options);
  cl::ParseCommandLineOptions(
      argc, argv,
      "tfc-tune: measures the CPU GEMM's blocking on this machine and "
      "records the best for tfc-compile\n");
  auto fail = [](const std::string &message) {
    errs() << "tfc-tune: error: " << message << "\n";
    return 1;
  };
  // Copied: compiling links with lld in process, which resets every
  // cl::opt (tfc-compile.cpp says more).
  // TFC_TUNE_BUDGET: the budget when --budget is not given (TFC_AUTOTUNE's
  // runs take the tuner's defaults).
  double budgetS = budget;
  std::string budgetFrom = "--budget=";
  if (const char *env = std::getenv("TFC_TUNE_BUDGET");
      env && *env && budget.getNumOccurrences() == 0) {
    char *end = nullptr;
    budgetS = std::strtod(env, &end);
    budgetFrom = "TFC_TUNE_BUDGET=";
    if (!end || *end || end == env) {
      errs() << "tfc-tune: error: TFC_TUNE_BUDGET=" << env
             << ": expected seconds from 0 to 86400\n";
      return 1;
    }
  }
  const int roundCount = rounds;
  const bool dry = dryRun, silent = quiet;
  const std::string requestedIsa = isaOpt, shapesText = shapesOpt;
  const std::string setText = setOpt;
  const bool setGiven = setOpt.getNumOccurrences() > 0;
  const bool show = showOpt, onlyIfMissing = ifMissing;
  std::string output = outputOpt;
  const int threadCount = threads;
  if (!(budgetS >= 0) || budgetS > 86400)
    return fail(budgetFrom + std::to_string(budgetS) +
                ": expected seconds from 0 to 86400");
  if (roundCount < 1 || roundCount > 101)
    return fail("--rounds=" + std::to_string(roundCount) +
                ": expected 1 to 101");
  std::vector<Shape> shapes;
  std::string error;
  if (!parseShapes(shapesText, shapes, error))
    return fail(error);
  if (threadCount < 0 ||
      (threadCount > 0 && tfc_set_num_threads(threadCount) != TFC_OK))
    return fail("--num-threads=" + std::to_string(threadCount) + ": " +
                tfc_last_error());
  if (std::string masked = mlir::tfc::hostCpuMaskError(); !masked.empty())
    return fail(masked);
  mlir::tfc::CpuTargetOptions host = mlir::tfc::resolveCpuTarget({});
  std::string isa =
      requestedIsa.empty() ? mlir::tfc::cpuKernelIsa(host) : requestedIsa;
  if (isa != "avx512" && isa != "avx2")
    return fail("--isa=" + isa + ": expected avx512 or avx2");
  if (isa == "avx512" && mlir::tfc::cpuKernelIsa(host) != "avx512")
    return fail("--isa=avx512: this host cannot run the AVX-512 kernels");
  if (output.empty())
    output = tuning::tuneFileInEffect();
  if (output.empty())
    output = tuning::defaultTuneFilePath();
  // The file is read first: a file that does not parse is not overwritten.
  tuning::TuneFile file;
  if (tuning::fileExists(output) && !tuning::readTuneFile(output, file, error))
    return fail(error + " (fix or delete it)");

  tuning::CpuIdentity cpu = tuning::hostCpuIdentity();
  auto record = [&](tuning::TuneRecord rec) {
    tuning::putRecord(file, std::move(rec));
    if (dry) {
      outs() << tuning::formatTuneFile(file);
      return 0;
    }
    if (!tuning::writeTuneFile(output, file, error))
      return fail(error);
    outs() << "recorded for " << cpu.describe() << " in " << output << "\n";
    return 0;
  };
  if (show) {
    const tuning::TuneRecord *rec = tuning::findRecord(file, cpu, isa);
    if (!rec) {
      outs() << "none\n";
      return 0;
    }
    std::string text = tuning::formatGemmTuning(rec->gemm);
    outs() << output << ": " << isa << " GEMM of " << cpu.describe() << ": "
           << (text.empty() ? "the analytic default" : text) << " ("
           << rec->measured << ", " << rec->threads << " threads)\n";
    return 0;
  }
  if (onlyIfMissing && tuning::findRecord(file, cpu, isa))
    return 0;
  if (setGiven) {
    tuning::TuneRecord rec;
    rec.cpu = cpu;
    rec.isa = isa;
    rec.threads = tfc_num_threads();
    rec.measured = "set with tfc-tune --set, not measured";
    if (!tuning::parseGemmTuning(setText, rec.gemm, error))
      return fail("--set=" + setText + ": " + error);
    std::string why = mlir::tfc::cpu::checkGemmTuningText(
        isa, tuning::formatGemmTuning(rec.gemm));
    if (!why.empty())
      return fail("--set=" + setText + " for the " + isa + " kernels: " + why);
    return record(std::move(rec));
  }

  tuning::GemmTuning def;
  std::string defText =
      mlir::tfc::cpu::defaultGemmTuningText(isa, host.l1dBytes);
  if (!tuning::parseGemmTuning(defText, def, error))
    return fail("the default blocking '" + defText + "': " + error);
  Space space;
  if (!buildSpace(isa, def, space))
    return fail("no search space for " + isa);

  SmallString<128> dir;
  if (std::error_code ec = sys::fs::createUniqueDirectory("tfc-tune", dir))
    return fail("cannot create a temporary directory: " + ec.message());
  struct Cleanup {
    std::string dir;
    ~Cleanup() { sys::fs::remove_directories(dir); }
  } cleanup{dir.str().str()};

  auto started = Clock::now();
  auto note = [&](const Twine &what) {
    if (!silent)
      errs() << format("tfc-tune: [%5.1f s] ", msSince(started) / 1e3) << what
             << "\n";
  };
  note("tuning the " + isa + " GEMM for " + cpu.describe() + ", " +
       std::to_string(tfc_num_threads()) + " threads, budget " +
       std::to_string(int(budgetS)) + " s");
  Tuner tuner(shapes, isa, dir.str().str());
  if (!tuner.prepare(error))
    return fail(error);
  std::string startText = space.text(space.start);
  Candidate *base = tuner.get(startText, error);
  if (!base)
    return fail(error);
  tuner.calibrate(*base);
  note("default: " + startText);

  bool failed = false;
  tuning::SearchOptions opts;
  // The budget bounds the search; passes repeat until one changes nothing.
  opts.maxPasses = 8;
  opts.outOfTime = [&] { return msSince(started) / 1e3 > budgetS; };
  auto valid = [&](const tuning::Point &p) {
    return mlir::tfc::cpu::checkGemmTuningText(isa, space.text(p)).empty();
  };
  auto compare = [&](const tuning::Point &cand, const tuning::Point &inc) {
    std::string why;
    Candidate *c = tuner.get(space.text(cand), why);
    Candidate *i = tuner.get(space.text(inc), why);
    if (!c || !i) {
      note("skipped: " + why);
      return -1.0;
    }
    if (!tuner.checkOutputs(*c, *base, why)) {
      note("wrong results, skipped (" + space.text(cand) + "): " + why);
      failed = true;
      return -1.0;
    }
    double r = tuner.compare(*c, *i, roundCount);
    note(fixed(r, 3) + "x the time of the best so far: " + space.text(cand));
    return r;
  };
  tuning::SearchResult result =
      tuning::coordinateDescent(space.space, space.start, valid, compare, opts);
  std::string bestText = space.text(result.best);
  note(Twine(result.evaluations) + " candidates (" + Twine(tuner.compiles()) +
       " compiled, " + fixed(tuner.compileMs() / 1e3, 1) + " s compiling)" +
       (result.converged   ? ", converged"
        : result.outOfTime ? ", out of time"
                           : ", out of passes"));

  // The winner against the default, side by side once more.
  tuning::TuneRecord measured;
  measured.cpu = cpu;
  measured.isa = isa;
  measured.threads = tfc_num_threads();
  Candidate *best = tuner.get(bestText, error);
  if (!best)
    return fail(error);
  std::vector<double> each;
  std::vector<std::pair<double, double>> times;
  double overall =
      tuner.compare(*best, *base, std::max(roundCount, 7), &each, &times);
  bool keep = bestText != startText && overall < 0.99;
  if (keep)
    tuning::parseGemmTuning(bestText, measured.gemm, error);
  for (size_t i = 0; i < shapes.size(); ++i) {
    tuning::ShapeResult r;
    r.m = shapes[i].m;
    r.k = shapes[i].k;
    r.n = shapes[i].n;
    r.tunedGflops = shapes[i].gflop() / (times[i].first / 1e3);
    r.defaultGflops = shapes[i].gflop() / (times[i].second / 1e3);
    if (!keep)
      r.tunedGflops = r.defaultGflops;
    measured.results.push_back(r);
    outs() << format("%-14s default %7.1f GFLOP/s  tuned %7.1f GFLOP/s  "
                     "(time %.3fx)\n",
                     shapes[i].name().c_str(), r.defaultGflops, r.tunedGflops,
                     keep ? each[i] : 1.0);
  }
  std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  measured.measured = std::string(date) + ", tfc-tune, " +
                      std::to_string(int(budgetS)) + " s budget, " +
                      std::to_string(result.evaluations) + " candidates";
  outs() << (keep ? "tuned: " + bestText + " (" + fixed(overall, 3) +
                        "x the default's time over the shapes)"
                  : "the default blocking stays (the best found took " +
                        fixed(overall, 3) + "x its time)")
         << "\n";
  if (failed)
    return fail("a candidate computed wrong results (above); nothing "
                "recorded");
  return record(std::move(measured));
}
