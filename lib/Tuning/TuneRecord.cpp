//===- TuneRecord.cpp - Tuning records per CPU model ----------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Tuning/TuneRecord.h"

#include "tfc/Formats/Files.h"
#include "tfc/Formats/JsonDocument.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace tfc::tuning;
using json = nlohmann::ordered_json;

namespace {

constexpr const char *kFormat = "tfc tuning records";
constexpr int64_t kVersion = 1;

std::string trim(std::string s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  size_t e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

/// "32K", "512K", "32M" (sysfs) in bytes; 0 if unreadable.
int64_t sysfsSize(const std::string &text) {
  char *end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (!end || v <= 0)
    return 0;
  switch (*end) {
  case 'K':
    return v << 10;
  case 'M':
    return v << 20;
  case 'G':
    return v << 30;
  default:
    return v;
  }
}

/// The cache of `level` and `type` ("Data", "Unified") of cpu0 from sysfs.
int64_t sysfsCache(int level, const char *type) {
  for (int i = 0; i < 8; ++i) {
    std::string dir =
        "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::ifstream lv(dir + "level"), ty(dir + "type"), sz(dir + "size");
    std::string l, t, s;
    if (!std::getline(lv, l) || !std::getline(ty, t) || !std::getline(sz, s))
      continue;
    if (std::atoi(l.c_str()) == level && trim(t) == type)
      return sysfsSize(trim(s));
  }
  return 0;
}

int64_t cacheBytes(int name, int level, const char *type) {
  long v = ::sysconf(name);
  return v > 0 ? v : sysfsCache(level, type);
}

std::string kib(int64_t bytes) { return std::to_string(bytes >> 10) + " KiB"; }

/// Reads a tuning file's JSON with the path of each key for its errors.
struct Reader {
  const std::string &what;
  std::string &error;

  bool fail(const std::string &key, const std::string &expected,
            const json &got) {
    std::string kind = got.is_null()      ? "nothing"
                       : got.is_string()  ? "a string"
                       : got.is_boolean() ? "a boolean"
                       : got.is_number()  ? "the number " + got.dump()
                       : got.is_array()   ? "an array"
                                          : "an object";
    error = what + ": " + key + ": expected " + expected + ", got " + kind;
    return false;
  }
  bool string(const json &obj, const std::string &key, const char *name,
              std::string &out) {
    auto it = obj.find(name);
    if (it == obj.end() || !it->is_string())
      return fail(key + "." + name, "a string", it == obj.end() ? json() : *it);
    out = it->get<std::string>();
    return true;
  }
  bool integer(const json &obj, const std::string &key, const char *name,
               int64_t lo, int64_t hi, int64_t &out) {
    auto it = obj.find(name);
    if (it == obj.end() || !it->is_number_integer() ||
        it->get<int64_t>() < lo || it->get<int64_t>() > hi)
      return fail(key + "." + name,
                  "a whole number from " + std::to_string(lo) + " to " +
                      std::to_string(hi),
                  it == obj.end() ? json() : *it);
    out = it->get<int64_t>();
    return true;
  }
  bool number(const json &obj, const std::string &key, const char *name,
              double &out) {
    auto it = obj.find(name);
    if (it == obj.end() || !it->is_number() || it->get<double>() < 0)
      return fail(key + "." + name, "a number of at least 0",
                  it == obj.end() ? json() : *it);
    out = it->get<double>();
    return true;
  }
  bool object(const json &obj, const std::string &key, const char *name,
              const json *&out) {
    auto it = obj.find(name);
    if (it == obj.end() || !it->is_object())
      return fail(key + "." + name, "an object",
                  it == obj.end() ? json() : *it);
    out = &*it;
    return true;
  }

  bool cpu(const json &obj, const std::string &key, CpuIdentity &out) {
    return string(obj, key, "vendor", out.vendor) &&
           string(obj, key, "model_name", out.modelName) &&
           integer(obj, key, "family", 0, 1 << 20, out.family) &&
           integer(obj, key, "model", 0, 1 << 20, out.model) &&
           integer(obj, key, "l1d_bytes", 0, int64_t(1) << 40, out.l1dBytes) &&
           integer(obj, key, "l2_bytes", 0, int64_t(1) << 40, out.l2Bytes) &&
           integer(obj, key, "l3_bytes", 0, int64_t(1) << 40, out.l3Bytes);
  }

  bool gemm(const json &obj, const std::string &key, GemmTuning &out) {
    size_t count = 0;
    const GemmTuningField *fields = gemmTuningFields(count);
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      size_t i = 0;
      while (i < count && it.key() != fields[i].name)
        ++i;
      if (i == count) {
        std::string names;
        for (size_t j = 0; j < count; ++j)
          names += std::string(j ? ", " : "") + fields[j].name;
        error = what + ": " + key + "." + it.key() +
                ": unknown field (expected one of " + names + ")";
        return false;
      }
    }
    // Through the textual form's parser, so that both forms accept the
    // same values.
    std::string text;
    for (size_t i = 0; i < count; ++i) {
      auto it = obj.find(fields[i].name);
      if (it == obj.end())
        continue;
      if (!it->is_number_integer())
        return fail(key + "." + fields[i].name,
                    fields[i].flag ? "0 or 1" : "a whole number", *it);
      text += std::string(text.empty() ? "" : ",") + fields[i].name + "=" +
              std::to_string(it->get<int64_t>());
    }
    std::string why;
    if (!parseGemmTuning(text, out, why)) {
      error = what + ": " + key + ": " + why;
      return false;
    }
    return true;
  }

  bool record(const json &obj, const std::string &key, TuneRecord &out) {
    if (!obj.is_object())
      return fail(key, "an object", obj);
    const json *cpuObj = nullptr, *gemmObj = nullptr;
    if (!object(obj, key, "cpu", cpuObj) ||
        !cpu(*cpuObj, key + ".cpu", out.cpu))
      return false;
    if (!string(obj, key, "isa", out.isa))
      return false;
    if (out.isa != "avx512" && out.isa != "avx2")
      return fail(key + ".isa", "\"avx512\" or \"avx2\"", obj["isa"]);
    if (!object(obj, key, "gemm", gemmObj) ||
        !gemm(*gemmObj, key + ".gemm", out.gemm))
      return false;
    if (!integer(obj, key, "threads", 1, 1 << 16, out.threads))
      return false;
    if (obj.contains("measured") && !string(obj, key, "measured", out.measured))
      return false;
    if (auto it = obj.find("results"); it != obj.end()) {
      if (!it->is_array())
        return fail(key + ".results", "an array", *it);
      for (size_t i = 0; i < it->size(); ++i) {
        const json &r = (*it)[i];
        std::string rk = key + ".results[" + std::to_string(i) + "]";
        if (!r.is_object())
          return fail(rk, "an object", r);
        ShapeResult s;
        std::string shape;
        if (!string(r, rk, "shape", shape))
          return false;
        char tail = 0;
        long long m = 0, k = 0, n = 0;
        if (std::sscanf(shape.c_str(), "%lldx%lldx%lld%c", &m, &k, &n, &tail) !=
                3 ||
            m <= 0 || k <= 0 || n <= 0)
          return fail(rk + ".shape", "MxKxN", r["shape"]);
        s.m = m;
        s.k = k;
        s.n = n;
        if (!number(r, rk, "default_gflops", s.defaultGflops) ||
            !number(r, rk, "tuned_gflops", s.tunedGflops))
          return false;
        out.results.push_back(s);
      }
    }
    return true;
  }
};

} // namespace

bool CpuIdentity::operator==(const CpuIdentity &o) const {
  return vendor == o.vendor && modelName == o.modelName && family == o.family &&
         model == o.model && l1dBytes == o.l1dBytes && l2Bytes == o.l2Bytes &&
         l3Bytes == o.l3Bytes;
}

std::string CpuIdentity::describe() const {
  return modelName + " (" + vendor + " family " + std::to_string(family) +
         " model " + std::to_string(model) + "; L1d " + kib(l1dBytes) +
         ", L2 " + kib(l2Bytes) + ", L3 " + kib(l3Bytes) + ")";
}

CpuIdentity tfc::tuning::hostCpuIdentity() {
  CpuIdentity id;
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty())
      break; // the first processor's block
    size_t colon = line.find(':');
    if (colon == std::string::npos)
      continue;
    std::string key = trim(line.substr(0, colon));
    std::string value = trim(line.substr(colon + 1));
    if (key == "vendor_id")
      id.vendor = value;
    else if (key == "model name")
      id.modelName = value;
    else if (key == "cpu family")
      id.family = std::atoll(value.c_str());
    else if (key == "model")
      id.model = std::atoll(value.c_str());
  }
  id.l1dBytes = cacheBytes(_SC_LEVEL1_DCACHE_SIZE, 1, "Data");
  id.l2Bytes = cacheBytes(_SC_LEVEL2_CACHE_SIZE, 2, "Unified");
  id.l3Bytes = cacheBytes(_SC_LEVEL3_CACHE_SIZE, 3, "Unified");
  return id;
}

bool tfc::tuning::parseTuneFile(std::string_view text, const std::string &what,
                                TuneFile &out, std::string &error) {
  json root;
  if (!::tfc::rt::parseJsonDocument(text, what, root, error))
    return false;
  Reader r{what, error};
  if (!root.is_object())
    return r.fail("the top level", "an object", root);
  std::string format;
  if (!r.string(root, "", "format", format))
    return false;
  if (format != kFormat)
    return r.fail(".format", std::string("\"") + kFormat + "\"",
                  root["format"]);
  int64_t version = 0;
  if (!r.integer(root, "", "version", 1, 1 << 20, version))
    return false;
  if (version != kVersion) {
    error = what + ": .version: " + std::to_string(version) +
            " is not a version this tfc reads (" + std::to_string(kVersion) +
            "); run tfc-tune again";
    return false;
  }
  auto records = root.find("records");
  if (records == root.end() || !records->is_array())
    return r.fail(".records", "an array",
                  records == root.end() ? json() : *records);
  TuneFile file;
  for (size_t i = 0; i < records->size(); ++i) {
    TuneRecord rec;
    if (!r.record((*records)[i], ".records[" + std::to_string(i) + "]", rec))
      return false;
    for (const TuneRecord &earlier : file.records)
      if (earlier.cpu == rec.cpu && earlier.isa == rec.isa) {
        error = what + ": .records[" + std::to_string(i) +
                "]: a second record for " + rec.cpu.describe() + " and " +
                rec.isa;
        return false;
      }
    file.records.push_back(std::move(rec));
  }
  out = std::move(file);
  return true;
}

bool tfc::tuning::readTuneFile(const std::string &path, TuneFile &out,
                               std::string &error) {
  std::string text;
  if (!tfc::rt::readRegularFile(path, text, tfc::rt::kMaxConfigFileBytes,
                                error))
    return false;
  return parseTuneFile(text, path, out, error);
}

std::string tfc::tuning::formatTuneFile(const TuneFile &file) {
  json root;
  root["format"] = kFormat;
  root["version"] = kVersion;
  root["records"] = json::array();
  size_t count = 0;
  const GemmTuningField *fields = gemmTuningFields(count);
  for (const TuneRecord &rec : file.records) {
    json r;
    r["cpu"] = {
        {"vendor", rec.cpu.vendor},      {"model_name", rec.cpu.modelName},
        {"family", rec.cpu.family},      {"model", rec.cpu.model},
        {"l1d_bytes", rec.cpu.l1dBytes}, {"l2_bytes", rec.cpu.l2Bytes},
        {"l3_bytes", rec.cpu.l3Bytes}};
    r["isa"] = rec.isa;
    json gemm = json::object();
    for (size_t i = 0; i < count; ++i) {
      int64_t v = getField(rec.gemm, fields[i]);
      if (fields[i].flag ? v >= 0 : v > 0)
        gemm[fields[i].name] = v;
    }
    r["gemm"] = gemm;
    r["threads"] = rec.threads;
    r["measured"] = rec.measured;
    json results = json::array();
    for (const ShapeResult &s : rec.results) {
      // Two decimals: a record is read by people too.
      auto round2 = [](double v) {
        return double(int64_t(v * 100 + 0.5)) / 100;
      };
      results.push_back(
          {{"shape", std::to_string(s.m) + "x" + std::to_string(s.k) + "x" +
                         std::to_string(s.n)},
           {"default_gflops", round2(s.defaultGflops)},
           {"tuned_gflops", round2(s.tunedGflops)}});
    }
    r["results"] = results;
    root["records"].push_back(r);
  }
  return root.dump(2) + "\n";
}

bool tfc::tuning::writeTuneFile(const std::string &path, const TuneFile &file,
                                std::string &error) {
  for (size_t at = path.find('/', 1); at != std::string::npos;
       at = path.find('/', at + 1)) {
    std::string dir = path.substr(0, at);
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      error = "cannot create " + dir + ": " + std::strerror(errno);
      return false;
    }
  }
  std::string partial = path + ".tmp" + std::to_string(::getpid());
  std::string text = formatTuneFile(file);
  {
    std::ofstream f(partial, std::ios::binary | std::ios::trunc);
    if (!f || !f.write(text.data(), text.size()) || !f.flush()) {
      error = "cannot write " + partial + ": " + std::strerror(errno);
      std::remove(partial.c_str());
      return false;
    }
  }
  if (std::rename(partial.c_str(), path.c_str()) != 0) {
    error = "cannot rename " + partial + " to " + path + ": " +
            std::strerror(errno);
    std::remove(partial.c_str());
    return false;
  }
  return true;
}

const TuneRecord *tfc::tuning::findRecord(const TuneFile &file,
                                          const CpuIdentity &cpu,
                                          std::string_view isa) {
  for (const TuneRecord &rec : file.records)
    if (rec.cpu == cpu && rec.isa == isa)
      return &rec;
  return nullptr;
}

void tfc::tuning::putRecord(TuneFile &file, TuneRecord record) {
  for (TuneRecord &rec : file.records)
    if (rec.cpu == record.cpu && rec.isa == record.isa) {
      rec = std::move(record);
      return;
    }
  file.records.push_back(std::move(record));
}

std::string tfc::tuning::defaultTuneFilePath() {
  return tfc::rt::userCacheDir() + "/tuning.json";
}

std::string tfc::tuning::tuneFileInEffect() {
  if (const char *env = std::getenv("TFC_TUNE_FILE"); env && *env)
    return std::string(env) == "none" ? "" : env;
  return defaultTuneFilePath();
}

bool tfc::tuning::fileExists(const std::string &path) {
  struct stat st;
  return !path.empty() && ::stat(path.c_str(), &st) == 0;
}
