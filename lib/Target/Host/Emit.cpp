//===- Emit.cpp - LLVM IR, objects and shared libraries -------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The host CPU, LLVM's x86-64 target machine for it, translation of an
// LLVM-dialect module with optimisation, object emission and linking with
// lld: every target's model library goes through here.
//
//===----------------------------------------------------------------------===//

#include "tfc/Target/Host/HostTarget.h"
#include "tfc/Schemas/CpuLevels.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "lld/Common/Driver.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <atomic>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <pthread.h>
#include <unistd.h>

LLD_HAS_DRIVER(elf)

using namespace mlir;

namespace {

std::unique_ptr<llvm::MCSubtargetInfo>
subtargetInfo(const std::string &cpu, const std::string &features);

/// The level TFC_HOST_CPU masks the host to (CpuLevels.h); null when unset
/// or when it names no level (hostCpuMaskError says so).
const tfc_cpu_level *maskedHostLevel() {
  return tfc_cpu_level_named(std::getenv(TFC_HOST_CPU_ENV));
}

} // namespace

std::string tfc::hostCpuMaskError() {
  const char *value = std::getenv(TFC_HOST_CPU_ENV);
  if (!value || !*value || maskedHostLevel())
    return "";
  return std::string(TFC_HOST_CPU_ENV) + "='" + value +
         "' is not an x86-64 level (expected one of " TFC_CPU_LEVEL_NAMES ")";
}

bool tfc::hostCpuMasked() { return maskedHostLevel() != nullptr; }

std::string tfc::hostCpuName() {
  if (const tfc_cpu_level *level = maskedHostLevel())
    return level->name;
  return llvm::sys::getHostCPUName().str();
}

std::string tfc::hostCpuFeatures() {
  // Masked: a feature is on where the host has it and the level implies it
  // (LLVM's definition of the level), and every other one is spelled off, so
  // that the level's name cannot turn back on what the host lacks.
  const tfc_cpu_level *level = maskedHostLevel();
  std::unique_ptr<llvm::MCSubtargetInfo> levelInfo =
      level ? subtargetInfo(level->name, "") : nullptr;
  std::string out;
  for (const auto &[name, enabled] : llvm::sys::getHostCPUFeatures()) {
    bool on = enabled;
    if (level)
      on = on && levelInfo && levelInfo->checkFeatures(("+" + name).str());
    if (!out.empty())
      out += ",";
    out += (on ? "+" : "-") + name.str();
  }
  return out;
}

namespace {

const char *kTriple = "x86_64-unknown-linux-gnu";

/// LLVM's x86-64 target (initialised once), or null with `error` set.
const llvm::Target *x86Target(std::string &error) {
  static bool initialised = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)initialised;
  return llvm::TargetRegistry::lookupTarget(llvm::Triple(kTriple), error);
}

/// LLVM's subtarget tables for `cpu` with `features`, or null (also for a
/// CPU LLVM does not know, which createTargetMachine reports; LLVM would
/// otherwise print a warning for each table made).
std::unique_ptr<llvm::MCSubtargetInfo>
subtargetInfo(const std::string &cpu, const std::string &features) {
  std::string error;
  const llvm::Target *target = x86Target(error);
  if (!target)
    return nullptr;
  llvm::Triple triple(kTriple);
  if (!cpu.empty()) {
    std::unique_ptr<llvm::MCSubtargetInfo> generic(
        target->createMCSubtargetInfo(triple, "", ""));
    if (!generic || !generic->isCPUStringValid(cpu))
      return nullptr;
  }
  return std::unique_ptr<llvm::MCSubtargetInfo>(
      target->createMCSubtargetInfo(triple, cpu, features));
}

/// The instruction-set features a named CPU implies, as LLVM's subtarget
/// tables list them ("+avx2,+fma,..."; tuning flags left out): recorded in
/// the metadata, they let the runtime refuse a model for a CPU the host is
/// not (a clear error instead of SIGILL).
std::string impliedCpuFeatures(const std::string &cpu) {
  std::unique_ptr<llvm::MCSubtargetInfo> sti = subtargetInfo(cpu, "");
  if (!sti)
    return "";
  std::string out;
  for (const llvm::SubtargetFeatureKV &kv : sti->getAllProcessorFeatures()) {
    llvm::StringRef key = kv.Key;
    for (llvm::StringRef tuning :
         {"tuning",    "slow-",  "fast-",  "prefer-",     "false-deps-",
          "idiv",      "lea-",   "branch", "macrofusion", "use-",
          "pad-",      "allow-", "avoid-", "harden-",     "retpoline",
          "lvi-",      "sbb-",   "zu",     "ccmp",        "cf",
          "ndd",       "nf",     "ppx",    "push2pop2",   "egpr",
          "inline-asm"})
      if (key.starts_with(tuning))
        key = "";
    if (key.empty() || !sti->checkFeatures(("+" + key).str()))
      continue;
    if (!out.empty())
      out += ",";
    out += "+" + key.str();
  }
  return out;
}

/// The size in bytes of cpu0's data (or unified) cache of `level` as sysfs
/// describes it; 0 if it does not.
int64_t sysfsCacheBytes(int level) {
  // index0..: level, type (Data, Instruction, Unified) and size ("48K").
  for (int index = 0; index < 8; ++index) {
    std::string dir =
        "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    auto read = [&](const char *name) {
      std::ifstream in(dir + "/" + name);
      std::string value;
      std::getline(in, value);
      return value;
    };
    std::string at = read("level"), type = read("type"), size = read("size");
    if (at.empty())
      break;
    if (at != std::to_string(level) || type == "Instruction" || size.empty())
      continue;
    int64_t value = 0;
    size_t digits = 0;
    while (digits < size.size() && std::isdigit((unsigned char)size[digits]))
      value = value * 10 + (size[digits++] - '0');
    char unit = digits < size.size() ? size[digits] : 'B';
    return unit == 'K' ? value * 1024 : unit == 'M' ? value << 20 : value;
  }
  return 0;
}

/// The host's data (or unified) cache of `level` (1 or 2) per core in bytes:
/// sysconf's, else sysfs's; 0 if neither says.
int64_t hostCacheBytes(int level) {
#if defined(_SC_LEVEL1_DCACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE) // glibc
  long bytes =
      sysconf(level == 1 ? _SC_LEVEL1_DCACHE_SIZE : _SC_LEVEL2_CACHE_SIZE);
  if (bytes > 0)
    return bytes;
#endif
  return sysfsCacheBytes(level);
}

/// `bytes` if set, else the host's (`host`, from `ofHost`), else the CPU
/// table's (`known`), else `fallback`.
int64_t resolveCacheBytes(int64_t bytes, bool host, int64_t (*ofHost)(),
                          int64_t known, int64_t fallback) {
  if (bytes > 0)
    return bytes;
  bytes = host ? ofHost() : 0;
  if (bytes <= 0)
    bytes = known;
  return bytes > 0 ? bytes : fallback;
}

} // namespace

int64_t tfc::hostL1dBytes() { return hostCacheBytes(1); }

int64_t tfc::hostL2Bytes() { return hostCacheBytes(2); }

int64_t tfc::knownL1dBytes(llvm::StringRef cpu) {
  // Per core, from the vendors' optimisation manuals.
  constexpr int64_t k32 = 32 * 1024, k48 = 48 * 1024;
  return llvm::StringSwitch<int64_t>(cpu)
      .Cases({"haswell", "broadwell", "skylake", "skylake-avx512",
              "cascadelake", "cooperlake", "cannonlake"},
             k32)
      .Cases({"icelake-client", "icelake-server", "tigerlake", "rocketlake",
              "alderlake", "raptorlake", "meteorlake", "sapphirerapids",
              "emeraldrapids", "graniterapids", "graniterapids-d"},
             k48)
      .Cases({"znver1", "znver2", "znver3", "znver4"}, k32)
      .Case("znver5", k48)
      .Default(0);
}

int64_t tfc::knownL2Bytes(llvm::StringRef cpu) {
  // Per core (the P-cores' of hybrid parts), from the vendors' manuals.
  constexpr int64_t k256 = 256 * 1024, k512 = 512 * 1024, m1 = 1 << 20,
                    m1_25 = 1280 * 1024, m2 = 2 << 20;
  return llvm::StringSwitch<int64_t>(cpu)
      .Cases({"haswell", "broadwell", "skylake", "cannonlake"}, k256)
      .Cases({"icelake-client", "rocketlake"}, k512)
      .Cases({"skylake-avx512", "cascadelake", "cooperlake"}, m1)
      .Cases({"icelake-server", "tigerlake", "alderlake"}, m1_25)
      .Cases({"raptorlake", "meteorlake", "sapphirerapids", "emeraldrapids",
              "graniterapids", "graniterapids-d"},
             m2)
      .Cases({"znver1", "znver2", "znver3"}, k512)
      .Cases({"znver4", "znver5"}, m1)
      .Default(0);
}

tfc::CpuTargetOptions tfc::resolveCpuTarget(CpuTargetOptions options) {
  // A masked host (TFC_HOST_CPU) keeps this machine's caches (the mask is
  // of instruction sets); a CPU named explicitly never takes the host's.
  bool host = options.cpu.empty() ||
              (!hostCpuMasked() && options.cpu == hostCpuName());
  if (options.cpu.empty()) {
    options.cpu = hostCpuName();
    if (options.features.empty())
      options.features = hostCpuFeatures();
  } else if (options.features.empty()) {
    options.features = impliedCpuFeatures(options.cpu);
  }
  options.l1dBytes =
      resolveCacheBytes(options.l1dBytes, host, hostL1dBytes,
                        knownL1dBytes(options.cpu), kDefaultL1dBytes);
  options.l2Bytes =
      resolveCacheBytes(options.l2Bytes, host, hostL2Bytes,
                        knownL2Bytes(options.cpu), kDefaultL2Bytes);
  return options;
}

std::optional<bool> tfc::cpuHasFeatures(const CpuTargetOptions &options,
                                        llvm::StringRef features) {
  std::unique_ptr<llvm::MCSubtargetInfo> sti = subtargetInfo(
      options.cpu.empty() ? "x86-64" : options.cpu, options.features);
  if (!sti)
    return std::nullopt;
  return sti->checkFeatures(features);
}

namespace {

std::unique_ptr<llvm::TargetMachine>
createTargetMachine(const tfc::CpuTargetOptions &options, std::string &error) {
  llvm::Triple triple(kTriple);
  const llvm::Target *target = x86Target(error);
  if (!target)
    return nullptr;
  llvm::TargetOptions targetOptions;
  // Loops start on a 64-byte boundary (x86's default is 16): the GEMM's k
  // loop is ~120 bytes, and its speed otherwise depended on where code
  // before it happened to end (the AVX2 loop, front-end bound, ran
  // measurably slower over three lines than over two; figures: commit
  // 807613d).
  targetOptions.LoopAlignment = 64;
  auto level = options.optLevel >= 3   ? llvm::CodeGenOptLevel::Aggressive
               : options.optLevel == 0 ? llvm::CodeGenOptLevel::None
                                       : llvm::CodeGenOptLevel::Default;
  {
    std::unique_ptr<llvm::MCSubtargetInfo> sti = subtargetInfo("", "");
    if (!options.cpu.empty() && sti && !sti->isCPUStringValid(options.cpu)) {
      error = "unknown CPU '" + options.cpu + "' (see llc -mcpu=help)";
      return nullptr;
    }
  }
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, options.cpu, options.features, targetOptions, llvm::Reloc::PIC_,
      std::nullopt, level));
  if (!tm)
    error = "cannot create a target machine for CPU '" + options.cpu + "'";
  return tm;
}

/// Compiles every function of `module` (already for `tm`'s triple and data
/// layout) for the target CPU, including the ones the runtime calls back
/// (parallel tasks), and optimises it.
bool optimiseForCpu(llvm::Module &module, llvm::TargetMachine &tm,
                    const tfc::CpuTargetOptions &options, std::string &error) {
  for (llvm::Function &f : module) {
    if (f.isDeclaration())
      continue;
    f.addFnAttr("target-cpu", options.cpu);
    if (!options.features.empty())
      f.addFnAttr("target-features", options.features);
  }
  auto transformer =
      makeOptimizingTransformer(options.optLevel, /*sizeLevel=*/0, &tm);
  if (llvm::Error e = transformer(&module)) {
    error = llvm::toString(std::move(e));
    return false;
  }
  return true;
}

std::unique_ptr<llvm::Module>
translateAndOptimise(ModuleOp module, llvm::LLVMContext &context,
                     llvm::TargetMachine &tm,
                     const tfc::CpuTargetOptions &options,
                     tfc::LinkTargetCodeFn linkTargetCode, std::string &error) {
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  module.getContext()->appendDialectRegistry(registry);
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, context);
  if (!llvmModule) {
    error = "translation to LLVM IR failed";
    return nullptr;
  }
  llvmModule->setTargetTriple(tm.getTargetTriple());
  llvmModule->setDataLayout(tm.createDataLayout());
  if (linkTargetCode && !linkTargetCode(*llvmModule, error))
    return nullptr;
  if (!optimiseForCpu(*llvmModule, tm, options, error))
    return nullptr;
  return llvmModule;
}

/// Translates and optimises `module` for `options`' CPU, then hands the
/// LLVM module and the target machine to `use`.
LogicalResult withOptimisedModule(
    ModuleOp module, const tfc::CpuTargetOptions &options,
    tfc::LinkTargetCodeFn linkTargetCode, std::string &error,
    llvm::function_ref<LogicalResult(llvm::Module &, llvm::TargetMachine &)>
        use) {
  std::unique_ptr<llvm::TargetMachine> tm = createTargetMachine(options, error);
  if (!tm)
    return failure();
  llvm::LLVMContext context;
  auto llvmModule = translateAndOptimise(module, context, *tm, options,
                                         linkTargetCode, error);
  if (!llvmModule)
    return failure();
  return use(*llvmModule, *tm);
}

} // namespace

LogicalResult tfc::emitLLVMIR(ModuleOp module, const CpuTargetOptions &options,
                              std::string &out, std::string &error,
                              LinkTargetCodeFn linkTargetCode) {
  return withOptimisedModule(
      module, options, linkTargetCode, error,
      [&](llvm::Module &llvmModule, llvm::TargetMachine &) {
        llvm::raw_string_ostream os(out);
        llvmModule.print(os, nullptr);
        return success();
      });
}

namespace {

/// Code generation of `module` for `tm` into `object`.
LogicalResult generateObject(llvm::Module &module, llvm::TargetMachine &tm,
                             llvm::SmallVectorImpl<char> &object,
                             std::string &error) {
  llvm::raw_svector_ostream os(object);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr,
                             llvm::CodeGenFileType::ObjectFile)) {
    error = "the target cannot emit object files";
    return failure();
  }
  pm.run(module);
  return success();
}

/// Whether `module` can be cut into parts that are generated apart and
/// linked: no aliases, ifuncs, comdats, appending globals (llvm.used,
/// constructors) or block addresses, which a part could not see whole.
/// tfc's modules have none; a module that does is generated in one piece.
bool isSplittable(llvm::Module &module) {
  if (!module.alias_empty() || !module.ifunc_empty() ||
      !module.getComdatSymbolTable().empty())
    return false;
  for (llvm::GlobalVariable &gv : module.globals())
    if (gv.hasAppendingLinkage())
      return false;
  for (llvm::Function &f : module)
    for (llvm::BasicBlock &block : f)
      if (block.hasAddressTaken())
        return false;
  return true;
}

/// The most parts a module is generated in.
constexpr size_t kMaxCodegenParts = 16;

/// The number of parts `module` is generated in and each defined
/// function's part (`partOf`). The count comes from the module's size
/// alone (one part per `partInstructions`, at most kMaxCodegenParts), not
/// from the threads at hand, so that a library's bytes do not depend on the
/// machine that built it. Functions, largest first, each go to the part
/// with the fewest instructions so far (ties: the lower part).
unsigned partitionFunctions(
    llvm::Module &module, size_t partInstructions,
    llvm::DenseMap<const llvm::GlobalValue *, unsigned> &partOf) {
  struct Sized {
    size_t size, order;
    llvm::Function *f;
  };
  std::vector<Sized> sizes;
  size_t total = 0;
  for (llvm::Function &f : module) {
    if (f.isDeclaration())
      continue;
    sizes.push_back({f.getInstructionCount(), sizes.size(), &f});
    total += sizes.back().size;
  }
  unsigned parts =
      std::min<size_t>({total / std::max<size_t>(partInstructions, 1),
                        kMaxCodegenParts, sizes.size()});
  if (parts <= 1 || !isSplittable(module))
    return 1;
  llvm::sort(sizes, [](const Sized &a, const Sized &b) {
    return a.size != b.size ? a.size > b.size : a.order < b.order;
  });
  std::vector<size_t> load(parts, 0);
  for (auto &[size, order, f] : sizes) {
    unsigned p = std::min_element(load.begin(), load.end()) - load.begin();
    load[p] += size;
    partOf[f] = p;
  }
  return parts;
}

/// Splits `module` into `parts` bitcode images: part p defines the
/// functions `partOf` gives it (part 0 also every global variable) and
/// declares everything else. Local symbols become hidden external ones
/// first, so that a part can call into another; they stay out of the
/// library's exports.
std::vector<llvm::SmallVector<char, 0>> splitToBitcode(
    llvm::Module &module, unsigned parts,
    const llvm::DenseMap<const llvm::GlobalValue *, unsigned> &partOf) {
  unsigned anonymous = 0;
  for (llvm::GlobalValue &gv : module.global_values()) {
    if (gv.isDeclaration())
      continue;
    if (gv.hasLocalLinkage() || gv.hasLinkOnceLinkage()) {
      if (!gv.hasName())
        gv.setName("__tfc_part_local." + llvm::Twine(anonymous++));
      gv.setLinkage(gv.hasLocalLinkage() ? llvm::GlobalValue::ExternalLinkage
                                         : llvm::GlobalValue::WeakODRLinkage);
      gv.setVisibility(llvm::GlobalValue::HiddenVisibility);
      gv.setDSOLocal(true);
    }
  }
  std::vector<llvm::SmallVector<char, 0>> images(parts);
  for (unsigned p = 0; p < parts; ++p) {
    llvm::ValueToValueMapTy map;
    std::unique_ptr<llvm::Module> part =
        llvm::CloneModule(module, map, [&](const llvm::GlobalValue *gv) {
          auto it = partOf.find(gv);
          return it == partOf.end() ? p == 0 : it->second == p;
        });
    if (p != 0)
      part->setModuleInlineAsm("");
    llvm::raw_svector_ostream os(images[p]);
    llvm::WriteBitcodeToFile(*part, os);
  }
  return images;
}

} // namespace

LogicalResult tfc::emitObjects(ModuleOp module, const CpuTargetOptions &options,
                               std::vector<llvm::SmallVector<char, 0>> &objects,
                               std::string &error,
                               LinkTargetCodeFn linkTargetCode) {
  unsigned threads = options.codegenThreads;
  if (threads == 0)
    threads = llvm::hardware_concurrency().compute_thread_count();
  threads = std::max(threads, 1u);
  return withOptimisedModule(
      module, options, linkTargetCode, error,
      [&](llvm::Module &llvmModule, llvm::TargetMachine &tm) {
        llvm::DenseMap<const llvm::GlobalValue *, unsigned> partOf;
        unsigned parts =
            options.codegenThreads == 1
                ? 1
                : partitionFunctions(llvmModule,
                                     options.codegenPartInstructions, partOf);
        if (parts <= 1) {
          objects.emplace_back();
          return generateObject(llvmModule, tm, objects.back(), error);
        }
        std::vector<llvm::SmallVector<char, 0>> images =
            splitToBitcode(llvmModule, parts, partOf);
        // Workers take the parts in order; each has its own target machine
        // and each part its own context: code generation shares neither
        // between threads.
        unsigned workerCount = std::min(threads, parts);
        std::vector<std::unique_ptr<llvm::TargetMachine>> machines;
        for (unsigned w = 0; w < workerCount; ++w) {
          machines.push_back(createTargetMachine(options, error));
          if (!machines.back())
            return failure();
        }
        std::vector<llvm::SmallVector<char, 0>> partObjects(parts);
        std::vector<std::string> errors(parts);
        std::atomic<unsigned> next{0};
        auto work = [&](unsigned w) {
          for (unsigned p; (p = next.fetch_add(1)) < parts;) {
            llvm::LLVMContext context;
            llvm::Expected<std::unique_ptr<llvm::Module>> part =
                llvm::parseBitcodeFile(
                    llvm::MemoryBufferRef(
                        llvm::StringRef(images[p].data(), images[p].size()),
                        "part"),
                    context);
            if (!part) {
              errors[p] = llvm::toString(part.takeError());
              continue;
            }
            (void)generateObject(**part, *machines[w], partObjects[p],
                                 errors[p]);
          }
        };
        // Worker 0 is this thread; a thread the system will not start
        // (pthread_create's error: the library is built without
        // exceptions) leaves its share to the others.
        struct Worker {
          decltype(work) *fn;
          unsigned index;
          pthread_t thread;
        };
        std::vector<Worker> workers(workerCount);
        unsigned started = 1;
        for (; started < workerCount; ++started) {
          workers[started] = {&work, started, {}};
          if (pthread_create(
                  &workers[started].thread, nullptr,
                  [](void *arg) -> void * {
                    auto *self = static_cast<Worker *>(arg);
                    (*self->fn)(self->index);
                    return nullptr;
                  },
                  &workers[started]) != 0)
            break;
        }
        work(0);
        for (unsigned w = 1; w < started; ++w)
          pthread_join(workers[w].thread, nullptr);
        for (unsigned p = 0; p < parts; ++p)
          if (!errors[p].empty()) {
            error = "code generation of part " + std::to_string(p) + ": " +
                    errors[p];
            return failure();
          }
        for (llvm::SmallVector<char, 0> &object : partObjects)
          objects.push_back(std::move(object));
        return success();
      });
}

LogicalResult tfc::emitObject(ModuleOp module, const CpuTargetOptions &options,
                              llvm::SmallVectorImpl<char> &object,
                              std::string &error,
                              LinkTargetCodeFn linkTargetCode) {
  CpuTargetOptions serial = options;
  serial.codegenThreads = 1;
  std::vector<llvm::SmallVector<char, 0>> objects;
  if (failed(emitObjects(module, serial, objects, error, linkTargetCode)))
    return failure();
  object.assign(objects.front().begin(), objects.front().end());
  return success();
}

LogicalResult tfc::emitObject(llvm::Module &module,
                              const CpuTargetOptions &options,
                              llvm::SmallVectorImpl<char> &object,
                              std::string &error) {
  std::unique_ptr<llvm::TargetMachine> tm = createTargetMachine(options, error);
  if (!tm)
    return failure();
  module.setTargetTriple(tm->getTargetTriple());
  module.setDataLayout(tm->createDataLayout());
  if (!optimiseForCpu(module, *tm, options, error))
    return failure();
  return generateObject(module, *tm, object, error);
}

LogicalResult tfc::linkSharedLibrary(llvm::ArrayRef<char> object,
                                     llvm::StringRef outputPath,
                                     std::string &error) {
  return linkSharedLibrary(llvm::ArrayRef<llvm::ArrayRef<char>>{object},
                           outputPath, error);
}

LogicalResult
tfc::linkSharedLibrary(llvm::ArrayRef<llvm::ArrayRef<char>> objects,
                       llvm::StringRef outputPath, std::string &error) {
  std::vector<std::string> objectPaths;
  auto cleanup = [&] {
    for (const std::string &p : objectPaths)
      llvm::sys::fs::remove(p);
  };
  for (llvm::ArrayRef<char> object : objects) {
    llvm::SmallString<128> objectPath;
    int fd;
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
            "tfc-model", "o", fd, objectPath)) {
      error = "cannot create a temporary object file: " + ec.message();
      cleanup();
      return failure();
    }
    objectPaths.push_back(objectPath.str().str());
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os.write(object.data(), object.size());
    os.close();
    if (os.has_error()) {
      error = "cannot write " + objectPaths.back();
      cleanup();
      return failure();
    }
  }
  std::string out = outputPath.str();
  // libm for the f64 math the kernels leave to libm; the C library for
  // aligned_alloc/free when no runtime hooks are attached; libgcc for the
  // f16 conversions of CPUs without F16C (__truncsfhf2, __extendhfsf2:
  // a half-precision KV cache on plain x86-64). --as-needed: each only when
  // used.
  std::vector<const char *> args = {"ld.lld", "-shared", "-o", out.c_str()};
  for (const std::string &p : objectPaths)
    args.push_back(p.c_str());
  for (const char *a : {"-z", "noexecstack", "-L/lib/x86_64-linux-gnu",
                        "-L/usr/lib/x86_64-linux-gnu", "--as-needed",
                        "-l:libm.so.6", "-l:libc.so.6", "-l:libgcc_s.so.1"})
    args.push_back(a);
  std::string diagnostics;
  llvm::raw_string_ostream errs(diagnostics);
  lld::Result r =
      lld::lldMain(args, llvm::nulls(), errs, {{lld::Gnu, &lld::elf::link}});
  cleanup();
  if (r.retCode != 0) {
    error = "linking " + out + " failed: " + diagnostics;
    return failure();
  }
  return success();
}
