//===- ModelMetadata.h - The metadata a compiled model exports --*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The parsed form of `tfc_model_metadata` (ModelABI.h, docs/abi.md), its
// checks, and the check that this host can run code for the model's target.
// The loader (tfc_model_load) uses these; they are public so that tools and
// tests can check metadata without a shared library.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_MODELMETADATA_H
#define TFC_RUNTIME_MODELMETADATA_H

#include "tfc/Formats/DType.h"
#include "tfc/Formats/Npy.h"
#include "tfc/Formats/SafeTensors.h"
#include "tfc/Runtime/tfc.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace tfc::rt {

/// The tfc dtype of a stored element type (false for the stored types no
/// model input, output or weight has: i16, i8, u8).
bool dtypeOfStorage(DType storage, tfc_dtype &out);

/// DType.h's element loads and stores for a C API dtype (nothing for a value
/// that is not one).
inline double dtypeLoad(tfc_dtype dtype, const void *base, uint64_t i) {
  const DTypeTraits *t = dtypeTraits(dtype);
  return t ? dtypeLoad(t->type, base, i) : 0;
}
inline void dtypeStore(tfc_dtype dtype, void *base, uint64_t i, double v) {
  if (const DTypeTraits *t = dtypeTraits(dtype))
    dtypeStore(t->type, base, i, v);
}
inline void dtypeStoreInt(tfc_dtype dtype, void *base, uint64_t i,
                          int64_t v) {
  if (const DTypeTraits *t = dtypeTraits(dtype))
    dtypeStoreInt(t->type, base, i, v);
}

/// The bytes of `elements` elements of `dtype`; false when `elements` is not
/// a whole number of blocks or the size overflows.
bool dtypeByteSize(tfc_dtype dtype, uint64_t elements, uint64_t &bytes);

/// One dimension of an input, output or weight.
struct DimSpec {
  /// The static size, or -1 when the dim is dynamic.
  int64_t size = -1;
  /// The name of a named dynamic dim ("" when static or unnamed).
  std::string name;
  /// The inclusive maximum of a named dim (from "dims"), or -1.
  int64_t max = -1;

  bool isStatic() const { return size >= 0; }
};

struct TensorSpec {
  std::string name;
  tfc_dtype dtype = TFC_F32;
  std::vector<DimSpec> shape;
  /// Integer inputs: values must be in [0, bound); -1 if unbounded.
  int64_t bound = -1;
  /// A state input ("state": true): a buffer the entry updates in place,
  /// owned by a session (the key/value caches of a cached entry).
  bool state = false;
  /// A state that is a rolling buffer of this many positions ("window": W,
  /// a windowed attention's cache: position p in row p mod W), 0 if not.
  int64_t window = 0;
  /// An input the entry's host code reads ("host": true, e.g. `past`): a
  /// CUDA model takes it from host memory (never uploaded).
  bool host = false;
  /// A weight only tfc_model_init reads ("init_only": true): once the derived
  /// constants exist the runtime releases it.
  bool initOnly = false;

  /// "[batch, seq, 50257]" ("?" for an unnamed dynamic dim).
  std::string shapeString() const;
  /// The element count of a fully static shape.
  uint64_t numElements() const;
  /// Its bytes in its dtype (a fully static shape; whole blocks for the
  /// quantised dtypes, which the parser checks).
  uint64_t byteSize() const;
};

struct EntrySpec {
  std::string name, symbol;
  std::vector<TensorSpec> inputs, outputs;
};

struct ConstantSpec {
  uint64_t bytes = 0, align = 64;
};

struct NamedDimSpec {
  std::string name;
  int64_t max = -1;
};

struct TargetSpec {
  /// The host code's target.
  std::string triple, cpu, features;
  /// Where the kernels run: "cpu" or "cuda".
  std::string device = "cpu";
};

struct ModelSpec {
  int64_t abi = 0;
  std::string name;
  TargetSpec target;
  std::vector<NamedDimSpec> dims;
  /// Weights have static shapes.
  std::vector<TensorSpec> weights;
  std::vector<ConstantSpec> constants;
  std::vector<EntrySpec> entries;

  /// The entry called `name`, or -1.
  int64_t findEntry(std::string_view name) const;
};

/// Parses and checks metadata JSON: the ABI version first, then every field
/// (types, known dtypes, ranks up to TFC_MAX_RANK, unique names, named dims
/// declared in "dims", bounds only on integer inputs, power-of-two constant
/// alignments, weight sizes without overflow). Unknown keys are ignored. On
/// failure `error` says where: "entry 'forward': input 'ids': ...".
bool parseModelMetadata(std::string_view text, ModelSpec &out,
                        std::string &error);

/// "f32", ... and back.
bool parseDTypeName(std::string_view name, tfc_dtype &out);

/// "[2, 3]".
std::string shapeString(const int64_t *dims, size_t rank);

/// What a host answers about a CPU feature (LLVM spelling, "avx512f").
enum class FeatureSupport { Yes, No, Unknown };

/// Whether code for `target` can run here: "" if so, else a message. The
/// triple's architecture must be the host's; every "+feature" of the
/// target's feature list that the runtime knows how to test must be present
/// (unknown ones, such as tuning flags, are ignored). On Linux, a model using
/// AMX also gets the kernel's permission for tile data.
std::string checkHostTarget(const TargetSpec &target);

/// The same against a given host, for tests.
std::string
checkTarget(const TargetSpec &target, std::string_view hostArch,
            const std::function<FeatureSupport(std::string_view)> &hostHas);

/// This host's architecture as in a triple ("x86_64", "aarch64").
std::string_view hostArchitecture();

/// Whether this host's CPU and OS support a feature; with TFC_HOST_CPU set
/// to an x86-64 level (include/tfc/Schemas/CpuLevels.h), a feature the
/// runtime tests that the level lacks is absent.
FeatureSupport hostHasFeature(std::string_view feature);

/// The features hostHasFeature tests with CPUID (the others are Unknown).
std::vector<std::string_view> testableHostFeatures();

/// The level TFC_HOST_CPU masks the host to ("x86-64-v3"), "" when unset.
std::string_view hostMaskLevel();

/// A message when TFC_HOST_CPU is set to something that is not a level, else
/// "". checkHostTarget returns it, so no model runs on a mistyped mask.
std::string hostMaskError();

} // namespace tfc::rt

#endif // TFC_RUNTIME_MODELMETADATA_H
