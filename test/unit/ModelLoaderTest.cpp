//===- ModelLoaderTest.cpp - Loading, binding and running models ----------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The C API of tfc.h against FakeModel.c (a hand-written model library):
// loading and its errors, introspection, weight binding (good files, missing
// weights, wrong shapes and dtypes, conversions, extra tensors), input
// checks, runs, outputs, the memory plan seen through a model, threads. Also
// the metadata parser and the host target check on their own.
//
//===----------------------------------------------------------------------===//

#include "tfc/Formats/Float16.h"
#include "tfc/Formats/SafeTensors.h"
#include "tfc/Runtime/ModelMetadata.h"
#include "tfc/Runtime/tfc.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

using namespace tfc::rt;

namespace {

::testing::AssertionResult contains(const std::string &text,
                                    const std::string &part) {
  if (text.find(part) != std::string::npos)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "'" << text << "' does not contain '" << part << "'";
}

std::string tempPath(const std::string &name) {
  return ::testing::TempDir() + "tfc-model-test-" + name;
}

/// Writes a weights file; the tensors' data must outlive the call only.
std::string writeWeights(const std::string &name,
                         const std::vector<TensorToWrite> &tensors) {
  std::string path = tempPath(name), error;
  EXPECT_TRUE(writeSafeTensors(path, tensors, {}, error)) << error;
  return path;
}

const float kAlpha[] = {2.0f};
const float kEmb[] = {0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32, 40, 41, 42};

/// alpha = 2, emb[i][k] = 10 i + k, plus an unused tensor.
std::string goodWeights() {
  static const float extra[] = {7};
  return writeWeights("good.safetensors",
                      {{"alpha", DType::F32, {}, kAlpha},
                       {"emb.weight", DType::F32, {5, 3}, kEmb},
                       {"unused.bias", DType::F32, {1}, extra}});
}

tfc_tensor tensor(tfc_dtype dtype, std::vector<int64_t> shape,
                  const void *data) {
  tfc_tensor t = {};
  t.dtype = dtype;
  t.rank = static_cast<int32_t>(shape.size());
  for (size_t k = 0; k < shape.size(); ++k)
    t.shape[k] = shape[k];
  t.data = const_cast<void *>(data);
  return t;
}

class ModelTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(tfc_model_load(TFC_FAKE_MODEL, &model), TFC_OK)
        << tfc_last_error();
  }
  void TearDown() override { tfc_model_free(model); }

  void bindGood() {
    ASSERT_EQ(tfc_model_load_weights(model, goodWeights().c_str()), TFC_OK)
        << tfc_last_error();
  }

  /// Runs `scale` on x of [rows, cols] = 0, 1, 2, ... and checks y.
  void runScale(int64_t rows, int64_t cols, float alpha = 2.0f) {
    std::vector<float> x(rows * cols);
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = static_cast<float>(i);
    tfc_tensor in = tensor(TFC_F32, {rows, cols}, x.data()), out;
    ASSERT_EQ(tfc_run(model, "scale", &in, 1, &out, 1), TFC_OK)
        << tfc_last_error();
    ASSERT_EQ(out.dtype, TFC_F32);
    ASSERT_EQ(out.rank, 2);
    EXPECT_EQ(out.shape[0], rows);
    EXPECT_EQ(out.shape[1], cols);
    auto *y = static_cast<const float *>(out.data);
    for (size_t i = 0; i < x.size(); ++i)
      ASSERT_EQ(y[i], x[i] * alpha + alpha + 1.0f) << "at " << i;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(out.data) % 64, 0u);
    tfc_tensor_release(&out);
    EXPECT_EQ(out.data, nullptr);
  }

  /// The status and message of running `entry` on `inputs`.
  std::pair<tfc_status, std::string> runError(const char *entry,
                                              std::vector<tfc_tensor> inputs,
                                              size_t numOutputs = 1) {
    std::vector<tfc_tensor> outs(numOutputs);
    tfc_status s = tfc_run(model, entry, inputs.data(), inputs.size(),
                           outs.data(), outs.size());
    for (tfc_tensor &o : outs) {
      EXPECT_EQ(o.data, nullptr);
      tfc_tensor_release(&o);
    }
    return {s, tfc_last_error()};
  }

  tfc_model *model = nullptr;
};

//===----------------------------------------------------------------------===//
// Loading and introspection
//===----------------------------------------------------------------------===//

TEST_F(ModelTest, DescribesTheModel) {
  tfc_model_info info;
  ASSERT_EQ(tfc_model_get_info(model, &info), TFC_OK);
  EXPECT_STREQ(info.name, "fake");
  EXPECT_STREQ(info.cpu, "generic");
  // Metadata without target.device is a CPU model.
  EXPECT_STREQ(info.device, "cpu");
  double ms = 0;
  EXPECT_EQ(tfc_model_last_device_ms(model, &ms), TFC_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(tfc_last_error(), "does not run on CUDA"));
  EXPECT_EQ(info.num_entries, 4u);
  EXPECT_EQ(info.num_weights, 2u);
  EXPECT_EQ(info.weight_bytes, 4u + 15 * 4);
  EXPECT_EQ(info.num_constants, 1u);
  EXPECT_EQ(info.constant_bytes, 4u);
  EXPECT_TRUE(contains(tfc_model_metadata_json(model), "\"abi\": 1"));

  EXPECT_EQ(tfc_model_find_entry(model, "embed"), 1);
  EXPECT_EQ(tfc_model_find_entry(model, "nope"), -1);
  EXPECT_STREQ(tfc_model_entry_name(model, 0), "scale");
  EXPECT_EQ(tfc_model_entry_name(model, 4), nullptr);
  EXPECT_EQ(tfc_entry_num_inputs(model, 1), 2u);
  EXPECT_EQ(tfc_entry_num_outputs(model, 1), 2u);

  tfc_tensor_info ids;
  ASSERT_EQ(tfc_entry_input_info(model, 1, 0, &ids), TFC_OK);
  EXPECT_STREQ(ids.name, "ids");
  EXPECT_EQ(ids.dtype, TFC_I64);
  EXPECT_EQ(ids.rank, 2);
  EXPECT_EQ(ids.dims[0], -1);
  EXPECT_STREQ(ids.dim_names[0], "batch");
  EXPECT_EQ(ids.dim_max[0], -1);
  EXPECT_STREQ(ids.dim_names[1], "seq");
  EXPECT_EQ(ids.dim_max[1], 8);
  EXPECT_EQ(ids.bound, 5);

  tfc_tensor_info count;
  ASSERT_EQ(tfc_entry_output_info(model, 1, 1, &count), TFC_OK);
  EXPECT_STREQ(count.name, "kept");
  EXPECT_EQ(count.dims[0], -1);
  EXPECT_EQ(count.dim_names[0], nullptr);
  EXPECT_EQ(count.bound, -1);

  tfc_tensor_info out;
  ASSERT_EQ(tfc_entry_output_info(model, 1, 0, &out), TFC_OK);
  EXPECT_EQ(out.dims[2], 3);
  EXPECT_EQ(out.dim_names[2], nullptr);

  tfc_tensor_info w;
  ASSERT_EQ(tfc_model_weight_info(model, 1, &w), TFC_OK);
  EXPECT_STREQ(w.name, "emb.weight");
  EXPECT_EQ(w.dims[0], 5);

  EXPECT_EQ(tfc_entry_input_info(model, 9, 0, &ids), TFC_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(tfc_last_error(), "entry index 9 is out of range"));
  EXPECT_EQ(tfc_entry_input_info(model, 0, 1, &ids), TFC_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(tfc_last_error(), "input index 1 is out of range"));
  EXPECT_EQ(tfc_model_weight_info(model, 2, &w), TFC_ERR_INVALID_ARGUMENT);
}

TEST(ModelLoader, LoadErrors) {
  tfc_model *m = reinterpret_cast<tfc_model *>(1);
  EXPECT_EQ(tfc_model_load("/nonexistent/model.so", &m), TFC_ERR_IO);
  EXPECT_EQ(m, nullptr);
  EXPECT_TRUE(contains(tfc_last_error(),
                       "/nonexistent/model.so: cannot open: No such file"));

  std::string text = tempPath("not-a-library.so");
  std::ofstream(text) << "hello";
  EXPECT_EQ(tfc_model_load(text.c_str(), &m), TFC_ERR_INVALID_MODEL);
  EXPECT_TRUE(contains(tfc_last_error(), "cannot load the model library: "));
  // dlerror's text is part of the message.
  EXPECT_TRUE(contains(tfc_last_error(), "not-a-library.so"));
  std::remove(text.c_str());

#if defined(__x86_64__)
  // An AArch64 library: named as such, before dlopen.
  std::string arm = tempPath("arm.so");
  {
    std::string header("\x7f"
                       "ELF\x02\x01\x01",
                       7);
    header.resize(64, '\0');
    header[16] = 3;      // ET_DYN
    header[18] = '\xb7'; // EM_AARCH64
    std::ofstream(arm, std::ios::binary) << header;
  }
  EXPECT_EQ(tfc_model_inspect(arm.c_str(), &m), TFC_ERR_UNSUPPORTED_HOST);
  EXPECT_TRUE(contains(tfc_last_error(),
                       "arm.so: the library is for aarch64, but this host is "
                       "x86_64"));
  std::remove(arm.c_str());
#endif

  EXPECT_EQ(tfc_model_load(TFC_RUNTIME_SO, &m), TFC_ERR_INVALID_MODEL);
  EXPECT_TRUE(contains(tfc_last_error(), "not a tfc model: it does not export "
                                         "'tfc_model_metadata'"));

  EXPECT_EQ(tfc_model_load(TFC_FAKE_MODEL_ABI2, &m), TFC_ERR_INVALID_MODEL);
  EXPECT_TRUE(contains(tfc_last_error(),
                       "compiled for runtime ABI version 2, but this "
                       "libtfcrt implements version 1"));

  EXPECT_EQ(tfc_model_load(TFC_FAKE_MODEL_GHOST, &m), TFC_ERR_INVALID_MODEL);
  EXPECT_TRUE(contains(tfc_last_error(),
                       "entry 'ghost' names symbol 'tfc_entry_ghost', which "
                       "the library does not export"));

  EXPECT_EQ(tfc_model_load(nullptr, &m), TFC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(tfc_model_load(TFC_FAKE_MODEL, nullptr), TFC_ERR_INVALID_ARGUMENT);
}

TEST(ModelLoader, InspectOnly) {
  tfc_model *m = nullptr;
  ASSERT_EQ(tfc_model_inspect(TFC_FAKE_MODEL, &m), TFC_OK) << tfc_last_error();
  EXPECT_EQ(tfc_entry_num_inputs(m, 0), 1u);
  EXPECT_EQ(tfc_model_load_weights(m, goodWeights().c_str()),
            TFC_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(tfc_last_error(), "opened with tfc_model_inspect"));
  tfc_tensor out;
  EXPECT_EQ(tfc_run(m, "table", nullptr, 0, &out, 1), TFC_ERR_INVALID_ARGUMENT);
  tfc_model_free(m);
  tfc_model_free(nullptr);
}

TEST(ModelLoader, TwoInstancesOfOneLibrary) {
  tfc_model *a = nullptr, *b = nullptr;
  ASSERT_EQ(tfc_model_load(TFC_FAKE_MODEL, &a), TFC_OK);
  ASSERT_EQ(tfc_model_load(TFC_FAKE_MODEL, &b), TFC_OK);
  static const float alphaB[] = {-1.0f};
  std::string wb =
      writeWeights("b.safetensors", {{"alpha", DType::F32, {}, alphaB},
                                     {"emb.weight", DType::F32, {5, 3}, kEmb}});
  ASSERT_EQ(tfc_model_load_weights(a, goodWeights().c_str()), TFC_OK);
  ASSERT_EQ(tfc_model_load_weights(b, wb.c_str()), TFC_OK);
  tfc_model_free(a); // b's library stays loaded
  float x[] = {1, 2};
  tfc_tensor in = tensor(TFC_F32, {1, 2}, x), out;
  ASSERT_EQ(tfc_run(b, "scale", &in, 1, &out, 1), TFC_OK) << tfc_last_error();
  EXPECT_EQ(static_cast<float *>(out.data)[1], 2 * -1.0f + -1.0f + 1.0f);
  tfc_tensor_release(&out);
  tfc_model_free(b);
}

//===----------------------------------------------------------------------===//
// Weights
//===----------------------------------------------------------------------===//

TEST_F(ModelTest, RunBeforeWeightsIsAnError) {
  float x[] = {1};
  auto [status, message] = runError("scale", {tensor(TFC_F32, {1, 1}, x)});
  EXPECT_EQ(status, TFC_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(message, "the weights are not loaded"));
}

TEST_F(ModelTest, BindsWeightsAndNotesExtraTensors) {
  bindGood();
  EXPECT_TRUE(contains(tfc_model_notes(model),
                       "1 tensor of " + goodWeights() +
                           " not used by the model: 'unused.bias'"));
  tfc_memory_stats stats;
  ASSERT_EQ(tfc_model_memory_stats(model, &stats), TFC_OK);
  // The data section starts 64-byte aligned: the first tensor ("alpha") is
  // used in place, and so is "emb.weight" at offset 4 (aligned to its f32
  // elements, all the kernels' loads assume).
  EXPECT_EQ(stats.weight_bytes_mapped, 64u);
  EXPECT_EQ(stats.weight_bytes_copied, 0u);
  tfc_resident_stats resident = {};
  resident.struct_size = sizeof(resident);
  ASSERT_EQ(tfc_model_resident_stats(model, &resident), TFC_OK);
  EXPECT_EQ(resident.weight_bytes, 64u);
  EXPECT_EQ(resident.released_weight_bytes, 0u);
  EXPECT_EQ(resident.packed_file_bytes, 0u);
  // A caller that knows only the first field gets only that one.
  tfc_resident_stats older = {};
  older.struct_size = sizeof(size_t);
  older.weight_bytes = 12345;
  ASSERT_EQ(tfc_model_resident_stats(model, &older), TFC_OK);
  EXPECT_EQ(older.weight_bytes, 12345u);
  older.struct_size = 0;
  EXPECT_EQ(tfc_model_resident_stats(model, &older),
            TFC_ERR_INVALID_ARGUMENT);
  runScale(2, 3);
}

TEST_F(ModelTest, PackedWeightsRoundTrip) {
  bindGood();
  std::string packed = tempPath("good.tfcw");
  ASSERT_EQ(tfc_model_save_weights(model, packed.c_str()), TFC_OK)
      << tfc_last_error();
  tfc_model *other = nullptr;
  ASSERT_EQ(tfc_model_load(TFC_FAKE_MODEL, &other), TFC_OK);
  ASSERT_EQ(tfc_model_load_weights(other, packed.c_str()), TFC_OK)
      << tfc_last_error();
  tfc_resident_stats stats = {};
  stats.struct_size = sizeof(stats);
  ASSERT_EQ(tfc_model_resident_stats(other, &stats), TFC_OK);
  EXPECT_GT(stats.packed_file_bytes, 0u);
  EXPECT_EQ(stats.weight_bytes, 64u);
  std::swap(model, other);
  runScale(2, 3);
  std::swap(model, other);
  tfc_model_free(other);

  // Another build of the library (here: one byte appended, the same
  // metadata) has another key and refuses it.
  std::string rebuilt = tempPath("rebuilt-model.so");
  {
    std::ifstream in(TFC_FAKE_MODEL, std::ios::binary);
    std::ofstream out(rebuilt, std::ios::binary);
    out << in.rdbuf() << '\n';
  }
  tfc_model *again = nullptr;
  ASSERT_EQ(tfc_model_load(rebuilt.c_str(), &again), TFC_OK)
      << tfc_last_error();
  EXPECT_EQ(tfc_model_load_weights(again, packed.c_str()), TFC_ERR_WEIGHTS);
  EXPECT_TRUE(contains(tfc_last_error(), "was packed for another build"))
      << tfc_last_error();
  tfc_model_free(again);
}

TEST_F(ModelTest, SavingNeedsBoundWeights) {
  std::string packed = tempPath("unbound.tfcw");
  EXPECT_EQ(tfc_model_save_weights(model, packed.c_str()),
            TFC_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(tfc_last_error(), "has no weights bound"));
  EXPECT_EQ(tfc_model_save_weights(model, nullptr), TFC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(tfc_model_save_weights(nullptr, packed.c_str()),
            TFC_ERR_INVALID_ARGUMENT);
}

TEST_F(ModelTest, MissingWeight) {
  std::string path =
      writeWeights("missing.safetensors", {{"alpha", DType::F32, {}, kAlpha}});
  EXPECT_EQ(tfc_model_load_weights(model, path.c_str()), TFC_ERR_WEIGHTS);
  EXPECT_TRUE(contains(tfc_last_error(),
                       path + " does not match model 'fake' (1 problem):\n"
                              "  weight 'emb.weight' (f32 [5, 3]) is "
                              "missing"));
}

TEST_F(ModelTest, WrongShapeAndDtypeAreAllReported) {
  static const int64_t alpha64[] = {2};
  std::string path = writeWeights("wrong.safetensors",
                                  {{"alpha", DType::I64, {}, alpha64},
                                   {"emb.weight", DType::F32, {3, 5}, kEmb}});
  EXPECT_EQ(tfc_model_load_weights(model, path.c_str()), TFC_ERR_WEIGHTS);
  std::string message = tfc_last_error();
  EXPECT_TRUE(contains(message, "(2 problems)"));
  EXPECT_TRUE(contains(message, "weight 'alpha': the file has dtype I64, the "
                                "model expects f32 (no conversion between "
                                "them)"));
  EXPECT_TRUE(contains(message, "weight 'emb.weight': the file has shape "
                                "[3, 5], the model expects [5, 3]"));
  // A scalar given as [1] is a shape error too.
  path = writeWeights("rank.safetensors",
                      {{"alpha", DType::F32, {1}, kAlpha},
                       {"emb.weight", DType::F32, {5, 3}, kEmb}});
  EXPECT_EQ(tfc_model_load_weights(model, path.c_str()), TFC_ERR_WEIGHTS);
  EXPECT_TRUE(contains(tfc_last_error(), "weight 'alpha': the file has shape "
                                         "[1], the model expects []"));
}

TEST_F(ModelTest, MalformedAndMissingFiles) {
  EXPECT_EQ(tfc_model_load_weights(model, "/nonexistent/w.safetensors"),
            TFC_ERR_IO);
  EXPECT_TRUE(contains(tfc_last_error(), "cannot open"));
  std::string path = tempPath("truncated.safetensors");
  std::ofstream(path) << "abc";
  EXPECT_EQ(tfc_model_load_weights(model, path.c_str()), TFC_ERR_WEIGHTS);
  EXPECT_TRUE(contains(tfc_last_error(), "truncated: 3 bytes"));
  EXPECT_EQ(tfc_model_load_weights(model, nullptr), TFC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(tfc_model_load_weights(nullptr, path.c_str()),
            TFC_ERR_INVALID_ARGUMENT);
}

TEST_F(ModelTest, ConvertsHalfPrecisionWeights) {
  uint16_t alpha16[] = {floatToHalf(2.0f)};
  std::vector<uint16_t> emb16;
  for (float v : kEmb)
    emb16.push_back(floatToBFloat16(v));
  std::string path = writeWeights(
      "half.safetensors", {{"alpha", DType::F16, {}, alpha16},
                           {"emb.weight", DType::BF16, {5, 3}, emb16.data()}});
  ASSERT_EQ(tfc_model_load_weights(model, path.c_str()), TFC_OK)
      << tfc_last_error();
  EXPECT_TRUE(contains(tfc_model_notes(model),
                       "2 weights were converted to the model's dtype"));
  tfc_memory_stats stats;
  ASSERT_EQ(tfc_model_memory_stats(model, &stats), TFC_OK);
  EXPECT_EQ(stats.weight_bytes_copied, 64u);
  runScale(2, 2);
  tfc_tensor out;
  ASSERT_EQ(tfc_run(model, "table", nullptr, 0, &out, 1), TFC_OK);
  for (int i = 0; i < 15; ++i)
    EXPECT_EQ(static_cast<float *>(out.data)[i], kEmb[i]);
  tfc_tensor_release(&out);
}

TEST_F(ModelTest, FailedBindingKeepsThePreviousWeights) {
  bindGood();
  std::string bad =
      writeWeights("bad.safetensors", {{"alpha", DType::F32, {}, kAlpha}});
  EXPECT_EQ(tfc_model_load_weights(model, bad.c_str()), TFC_ERR_WEIGHTS);
  runScale(1, 4);
  // Rebinding other weights re-runs init (the constant follows alpha).
  static const float three[] = {3.0f};
  std::string other = writeWeights("other.safetensors",
                                   {{"alpha", DType::F32, {}, three},
                                    {"emb.weight", DType::F32, {5, 3}, kEmb}});
  ASSERT_EQ(tfc_model_load_weights(model, other.c_str()), TFC_OK);
  EXPECT_FALSE(contains(tfc_model_notes(model), "not used"));
  runScale(1, 4, 3.0f);
}

//===----------------------------------------------------------------------===//
// Inputs
//===----------------------------------------------------------------------===//

TEST_F(ModelTest, InputChecks) {
  bindGood();
  float x[64] = {};
  int64_t ids[8] = {0, 1, 2, 3, 4, 0, 1, 2};
  uint8_t mask[8] = {1, 1, 1, 1, 1, 1, 1, 1};

  auto expect = [&](const char *entry, std::vector<tfc_tensor> inputs,
                    tfc_status status, const std::string &message,
                    size_t numOutputs = 1) {
    auto [s, m] = runError(entry, std::move(inputs), numOutputs);
    EXPECT_EQ(s, status) << m;
    EXPECT_TRUE(contains(m, message));
  };
  expect("scale", {}, TFC_ERR_INPUT,
         "entry 'scale' takes 1 input (x), but 0 were given");
  expect("scale", {tensor(TFC_F32, {1, 1}, x)}, TFC_ERR_INPUT,
         "entry 'scale' returns 1 output, but num_outputs is 2", 2);
  expect("scale", {tensor(TFC_F64, {1, 1}, x)}, TFC_ERR_INPUT,
         "input 'x': dtype is f64, but the model expects f32");
  expect("scale", {tensor(TFC_F32, {1, 1, 1}, x)}, TFC_ERR_INPUT,
         "input 'x': rank is 3, but the model expects rank 2 [batch, n]");
  expect("scale", {tensor(TFC_F32, {1, 17}, x)}, TFC_ERR_INPUT,
         "input 'x': dim 1 ('n') is 17, but the model allows at most 16");
  expect("scale", {tensor(TFC_F32, {-1, 2}, x)}, TFC_ERR_INPUT,
         "input 'x': dim 0 ('batch') is -1, a negative size");
  expect("scale", {tensor(TFC_F32, {1, 2}, nullptr)}, TFC_ERR_INPUT,
         "input 'x': data is NULL");
  expect("nope", {}, TFC_ERR_INVALID_ARGUMENT,
         "model 'fake' has no entry 'nope' (entries: scale, embed, table, "
         "bad)");
  expect(nullptr, {}, TFC_ERR_INVALID_ARGUMENT,
         "model 'fake' has 4 entries (scale, embed, table, bad); name the "
         "one to run");

  expect("embed",
         {tensor(TFC_I64, {1, 4}, ids), tensor(TFC_BOOL, {1, 3}, mask)},
         TFC_ERR_INPUT,
         "input 'mask': dim 1 ('seq') is 3, but input 'ids' has 'seq' = 4", 2);
  expect(
      "embed", {tensor(TFC_I64, {2, 4}, ids), tensor(TFC_BOOL, {1, 4}, mask)},
      TFC_ERR_INPUT,
      "input 'mask': dim 0 ('batch') is 1, but input 'ids' has 'batch' = 2", 2);
  expect("embed",
         {tensor(TFC_I64, {1, 9}, ids), tensor(TFC_BOOL, {1, 9}, mask)},
         TFC_ERR_INPUT,
         "input 'ids': dim 1 ('seq') is 9, but the model allows at most 8", 2);
  int64_t outOfRange[6] = {0, 1, 2, 3, 4, 5};
  expect("embed",
         {tensor(TFC_I64, {2, 3}, outOfRange), tensor(TFC_BOOL, {2, 3}, mask)},
         TFC_ERR_INPUT,
         "input 'ids' holds 5 at [1, 2]; expected values in [0, 5)", 2);
  int64_t negative[2] = {0, -7};
  expect("embed",
         {tensor(TFC_I64, {1, 2}, negative), tensor(TFC_BOOL, {1, 2}, mask)},
         TFC_ERR_INPUT,
         "input 'ids' holds -7 at [0, 1]; expected values in [0, 5)", 2);
  uint8_t notBool[2] = {1, 2};
  expect("embed",
         {tensor(TFC_I64, {1, 2}, ids), tensor(TFC_BOOL, {1, 2}, notBool)},
         TFC_ERR_INPUT, "input 'mask' holds 2 at [0, 1]; expected 0 or 1", 2);
  // A shape error of a later input comes before a value error of an earlier.
  expect("embed",
         {tensor(TFC_I64, {2, 3}, outOfRange), tensor(TFC_BOOL, {2, 4}, mask)},
         TFC_ERR_INPUT, "input 'mask': dim 1 ('seq') is 4", 2);
}

TEST_F(ModelTest, ZeroSizedInputsRun) {
  bindGood();
  tfc_tensor in = tensor(TFC_F32, {0, 4}, nullptr), out;
  ASSERT_EQ(tfc_run(model, "scale", &in, 1, &out, 1), TFC_OK)
      << tfc_last_error();
  EXPECT_EQ(out.shape[0], 0);
  EXPECT_EQ(out.shape[1], 4);
  EXPECT_NE(out.data, nullptr);
  tfc_tensor_release(&out);
}

TEST_F(ModelTest, MisalignedInputsAreCopied) {
  bindGood();
  alignas(8) unsigned char bytes[4 * 8 + 1];
  float values[4] = {1, 2, 3, 4};
  std::memcpy(bytes + 1, values, sizeof values);
  tfc_tensor in = tensor(TFC_F32, {2, 2}, bytes + 1), out;
  ASSERT_EQ(tfc_run(model, "scale", &in, 1, &out, 1), TFC_OK)
      << tfc_last_error();
  EXPECT_EQ(static_cast<float *>(out.data)[3], 4 * 2.0f + 3.0f);
  tfc_tensor_release(&out);
}

//===----------------------------------------------------------------------===//
// Runs and outputs
//===----------------------------------------------------------------------===//

TEST_F(ModelTest, EmbedWithStridedOutput) {
  bindGood();
  int64_t ids[6] = {4, 0, 2, 1, 1, 3};
  uint8_t mask[6] = {1, 0, 1, 1, 1, 1};
  tfc_tensor in[2] = {tensor(TFC_I64, {2, 3}, ids),
                      tensor(TFC_BOOL, {2, 3}, mask)};
  tfc_tensor out[2];
  ASSERT_EQ(tfc_run(model, "embed", in, 2, out, 2), TFC_OK) << tfc_last_error();
  ASSERT_EQ(out[0].rank, 3);
  EXPECT_EQ(out[0].shape[2], 3);
  auto *e = static_cast<const float *>(out[0].data);
  for (int i = 0; i < 6; ++i)
    for (int k = 0; k < 3; ++k)
      EXPECT_EQ(e[i * 3 + k], mask[i] ? kEmb[ids[i] * 3 + k] : 0.0f);
  ASSERT_EQ(out[1].dtype, TFC_I64);
  ASSERT_EQ(out[1].rank, 1);
  EXPECT_EQ(out[1].shape[0], 2);
  auto *counts = static_cast<const int64_t *>(out[1].data);
  EXPECT_EQ(counts[0], 2);
  EXPECT_EQ(counts[1], 3);
  tfc_tensor_release(&out[0]);
  tfc_tensor_release(&out[1]);
  tfc_tensor_release(&out[1]); // released twice: ignored
  tfc_tensor_release(nullptr);
}

TEST_F(ModelTest, OutputAliasingAWeightIsCopied) {
  bindGood();
  tfc_tensor a, b;
  ASSERT_EQ(tfc_run(model, "table", nullptr, 0, &a, 1), TFC_OK);
  ASSERT_EQ(tfc_run(model, "table", nullptr, 0, &b, 1), TFC_OK);
  EXPECT_NE(a.data, b.data);
  static_cast<float *>(a.data)[0] = 99; // the caller's copy, not the weight
  tfc_tensor_release(&a);
  EXPECT_EQ(static_cast<float *>(b.data)[0], kEmb[0]);
  EXPECT_EQ(static_cast<float *>(b.data)[14], kEmb[14]);
  tfc_tensor_release(&b);
}

TEST_F(ModelTest, BrokenOutputContractIsAnInternalError) {
  bindGood();
  auto [status, message] = runError("bad", {});
  EXPECT_EQ(status, TFC_ERR_INTERNAL);
  EXPECT_TRUE(contains(message, "entry 'bad' returned output 'z' with size 2 "
                                "where the metadata says 3 in dim 0"));
  tfc_memory_stats stats;
  ASSERT_EQ(tfc_model_memory_stats(model, &stats), TFC_OK);
  EXPECT_EQ(stats.output_allocs, 0u); // freed with the run
}

TEST_F(ModelTest, OutputsOutliveTheModel) {
  bindGood();
  float x[2] = {1, 2};
  tfc_tensor in = tensor(TFC_F32, {1, 2}, x), out;
  ASSERT_EQ(tfc_run(model, "scale", &in, 1, &out, 1), TFC_OK);
  tfc_model_free(model);
  model = nullptr;
  EXPECT_EQ(static_cast<float *>(out.data)[1], 2 * 2.0f + 3.0f);
  tfc_tensor_release(&out);
}

TEST_F(ModelTest, MemoryPlanThroughTheModel) {
  bindGood();
  tfc_memory_stats stats;
  ASSERT_EQ(tfc_model_memory_stats(model, &stats), TFC_OK);
  EXPECT_EQ(stats.mode, TFC_PLAN_NONE);

  runScale(3, 5);
  ASSERT_EQ(tfc_model_memory_stats(model, &stats), TFC_OK);
  EXPECT_EQ(stats.mode, TFC_PLAN_RECORDED);
  EXPECT_EQ(stats.arena_allocs, 0u);
  EXPECT_EQ(stats.output_allocs, 1u);
  // Two temporaries (3*5*4 and 3*5*4 + 64 bytes) live at the same time.
  EXPECT_EQ(stats.planned_bytes, 64u + 128u);
  EXPECT_EQ(stats.arena_bytes, 192u);
  EXPECT_EQ(stats.peak_live_bytes, 192u);

  runScale(3, 5);
  ASSERT_EQ(tfc_model_memory_stats(model, &stats), TFC_OK);
  EXPECT_EQ(stats.mode, TFC_PLAN_REPLAYED);
  EXPECT_EQ(stats.arena_allocs, 2u);
  EXPECT_EQ(stats.output_allocs, 1u);
  // The chunks' scratch buffers and the output come from the heap.
  EXPECT_EQ(stats.heap_allocs, stats.allocs - 2);
  EXPECT_GE(stats.arena_capacity, 192u);

  runScale(4, 5); // a new signature
  ASSERT_EQ(tfc_model_memory_stats(model, &stats), TFC_OK);
  EXPECT_EQ(stats.mode, TFC_PLAN_RECORDED);
  EXPECT_EQ(stats.num_plans, 2u);
  runScale(3, 5); // the first plan is still there
  ASSERT_EQ(tfc_model_memory_stats(model, &stats), TFC_OK);
  EXPECT_EQ(stats.mode, TFC_PLAN_REPLAYED);
}

TEST_F(ModelTest, ThreadCounts) {
  bindGood();
  int initial = tfc_num_threads();
  EXPECT_GE(initial, 1);
  for (int n : {1, 3, 8}) {
    ASSERT_EQ(tfc_set_num_threads(n), TFC_OK);
    EXPECT_EQ(tfc_num_threads(), n);
    runScale(7, 3);
    runScale(16, 16);
  }
  EXPECT_EQ(tfc_set_num_threads(-1), TFC_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(tfc_last_error(), "the thread count -1 is not in"));
  ASSERT_EQ(tfc_set_num_threads(0), TFC_OK);
  EXPECT_GE(tfc_num_threads(), 1);
  ASSERT_EQ(tfc_set_num_threads(initial), TFC_OK);
}

TEST_F(ModelTest, ConcurrentRunsOnOneModel) {
  bindGood();
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        int64_t rows = 1 + (i + t) % 5;
        std::vector<float> x(rows * 3, static_cast<float>(t));
        tfc_tensor in = tensor(TFC_F32, {rows, 3}, x.data()), out;
        if (tfc_run(model, "scale", &in, 1, &out, 1) != TFC_OK) {
          ++failures[t];
          continue;
        }
        for (int64_t k = 0; k < rows * 3; ++k)
          if (static_cast<float *>(out.data)[k] != t * 2.0f + 3.0f)
            ++failures[t];
        tfc_tensor_release(&out);
      }
    });
  for (std::thread &t : threads)
    t.join();
  for (int t = 0; t < 4; ++t)
    EXPECT_EQ(failures[t], 0) << "thread " << t;
}

TEST(CApi, Names) {
  EXPECT_STREQ(tfc_status_name(TFC_ERR_WEIGHTS), "TFC_ERR_WEIGHTS");
  EXPECT_STREQ(tfc_status_name(static_cast<tfc_status>(99)), "?");
  EXPECT_STREQ(tfc_dtype_name(TFC_BF16), "bf16");
  EXPECT_EQ(tfc_dtype_size(TFC_BOOL), 1u);
  EXPECT_EQ(tfc_dtype_size(static_cast<tfc_dtype>(42)), 0u);
  tfc_tensor out = {};
  EXPECT_EQ(tfc_run(nullptr, "x", nullptr, 0, &out, 1),
            TFC_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(tfc_last_error(), "the model is NULL");
}

//===----------------------------------------------------------------------===//
// Metadata and target checks without a library
//===----------------------------------------------------------------------===//

std::string metadataError(const std::string &json) {
  ModelSpec spec;
  std::string error;
  return parseModelMetadata(json, spec, error) ? "" : error;
}

const char *kEntries =
    R"("entries": [{"name": "f", "symbol": "tfc_entry_f", "inputs": [], "outputs": []}])";

std::string withEntries(const std::string &prefix) {
  return "{\"abi\": 1, \"model\": \"m\", \"target\": {\"triple\": "
         "\"x86_64-unknown-linux-gnu\"}, " +
         prefix + kEntries + "}";
}

TEST(ModelMetadata, ParsesAFullDescription) {
  ModelSpec spec;
  std::string error;
  ASSERT_TRUE(parseModelMetadata(
      R"({"abi": 1, "model": "gpt2", "future_key": [1, {"x": null}],
          "target": {"triple": "x86_64-unknown-linux-gnu", "cpu": "sapphirerapids", "features": "+avx512f"},
          "dims": [{"name": "batch"}, {"name": "seq", "max": 1024}],
          "weights": [{"name": "wte.weight", "dtype": "f32", "shape": [50257, 768]}],
          "constants": [{"bytes": 9437184, "align": 64}, {"bytes": 0}],
          "entries": [{"name": "forward", "symbol": "tfc_entry_forward",
            "inputs": [{"name": "input_ids", "dtype": "i64", "shape": ["batch", "seq"], "bound": 50257}],
            "outputs": [{"name": "logits", "dtype": "f32", "shape": ["batch", null, 50257]}]}]})",
      spec, error))
      << error;
  EXPECT_EQ(spec.name, "gpt2");
  EXPECT_EQ(spec.target.cpu, "sapphirerapids");
  ASSERT_EQ(spec.weights.size(), 1u);
  EXPECT_EQ(spec.weights[0].numElements(), 50257u * 768);
  ASSERT_EQ(spec.constants.size(), 2u);
  EXPECT_EQ(spec.constants[1].align, 64u);
  const TensorSpec &ids = spec.entries[0].inputs[0];
  EXPECT_EQ(ids.shape[1].name, "seq");
  EXPECT_EQ(ids.shape[1].max, 1024);
  EXPECT_EQ(ids.bound, 50257);
  EXPECT_EQ(spec.entries[0].outputs[0].shapeString(), "[batch, ?, 50257]");
}

TEST(ModelMetadata, StateAndHostInputs) {
  auto entry = [](const std::string &input) {
    return std::string(R"({"abi": 1, "model": "m", "target": {"triple": "x86_64-unknown-linux-gnu"},
        "dims": [{"name": "batch"}, {"name": "context"}],
        "entries": [{"name": "f", "symbol": "tfc_entry_f", "inputs": [)") +
           input + R"(], "outputs": []}]})";
  };
  ModelSpec spec;
  std::string error;
  ASSERT_TRUE(parseModelMetadata(
      entry(R"({"name": "past", "dtype": "i64", "shape": [], "host": true},
               {"name": "cache.0.k", "dtype": "f32", "shape": ["batch", 2, "context", 8], "state": true})"),
      spec, error))
      << error;
  EXPECT_TRUE(spec.entries[0].inputs[0].host);
  EXPECT_FALSE(spec.entries[0].inputs[0].state);
  EXPECT_TRUE(spec.entries[0].inputs[1].state);
  EXPECT_FALSE(spec.entries[0].inputs[1].host);
  EXPECT_TRUE(contains(
      metadataError(entry(R"({"name": "p", "dtype": "i64", "shape": [], "host": 1})")),
      "\"host\" must be true or false, on inputs only"));
  EXPECT_TRUE(contains(
      metadataError(entry(R"({"name": "p", "dtype": "i64", "shape": [], "state": "yes"})")),
      "\"state\" must be true or false, on inputs only"));
  // A rolling cache of 4 positions.
  ASSERT_TRUE(parseModelMetadata(
      entry(R"({"name": "cache.0.k", "dtype": "f32", "shape": ["batch", 2, 4, 8], "state": true, "window": 4})"),
      spec, error))
      << error;
  EXPECT_EQ(spec.entries[0].inputs[0].window, 4);
  for (const char *bad :
       {R"({"name": "k", "dtype": "f32", "shape": [4], "window": 4})",
        R"({"name": "k", "dtype": "f32", "shape": [4], "state": true, "window": 0})",
        R"({"name": "k", "dtype": "f32", "shape": [4], "state": true, "window": -2})"})
    EXPECT_TRUE(contains(metadataError(entry(bad)),
                         "\"window\" must be a positive integer, on state "
                         "inputs only"))
        << bad;
}

TEST(ModelMetadata, Errors) {
  EXPECT_TRUE(contains(metadataError("{"), "invalid metadata JSON at byte 1"));
  EXPECT_TRUE(contains(metadataError("[]"), "must be an object, not an array"));
  EXPECT_TRUE(contains(metadataError(R"({"abi": 3, "model": 5})"),
                       "compiled for runtime ABI version 3"));
  EXPECT_TRUE(contains(metadataError(R"({"abi": "1"})"),
                       "\"abi\" must be a non-negative integer"));
  EXPECT_TRUE(contains(metadataError(R"({"abi": 1, "model": 5})"),
                       "\"model\" must be a string, not a number"));
  EXPECT_EQ(metadataError(withEntries("")), "");
  EXPECT_TRUE(contains(
      metadataError(withEntries(
          R"("weights": [{"name": "w", "dtype": "f8", "shape": []}], )")),
      "metadata: weight 'w': unknown dtype 'f8'"));
  EXPECT_TRUE(contains(
      metadataError(withEntries(
          R"("weights": [{"name": "w", "dtype": "f32", "shape": [null]}], )")),
      "weight 'w': shape[0]: weights must have static shapes"));
  EXPECT_TRUE(contains(
      metadataError(withEntries(
          R"("weights": [{"name": "w", "dtype": "f32", "shape": [-1]}], )")),
      "weight 'w': shape[0] must be a non-negative integer"));
  EXPECT_TRUE(contains(
      metadataError(withEntries(
          R"("weights": [{"name": "w", "dtype": "f32", "shape": [1,1,1,1,1,1,1,1,1]}], )")),
      "rank 9 is more than the supported 8"));
  EXPECT_TRUE(contains(
      metadataError(withEntries(
          R"("weights": [{"name": "w", "dtype": "f32", "shape": [4294967296, 4294967296]}], )")),
      "the shape is too large"));
  EXPECT_TRUE(contains(
      metadataError(withEntries(
          R"("weights": [{"name": "w", "dtype": "f32", "shape": []}, {"name": "w", "dtype": "f32", "shape": []}], )")),
      "weight 'w': declared twice"));
  EXPECT_TRUE(contains(metadataError(withEntries(
                           R"("constants": [{"bytes": 4, "align": 48}], )")),
                       "constants[0]: \"align\" must be a power of two"));
  EXPECT_TRUE(contains(
      metadataError(withEntries(R"("dims": [{"name": "a"}, {"name": "a"}], )")),
      "dim 'a': declared twice"));
  EXPECT_TRUE(contains(
      metadataError(
          R"({"abi": 1, "model": "m", "target": {"triple": "x"}, "entries": [{"name": "f", "symbol": "s",
              "inputs": [{"name": "x", "dtype": "f32", "shape": ["seq"]}], "outputs": []}]})"),
      "entry 'f': input 'x': shape[0] names 'seq', which is not declared in "
      "\"dims\""));
  EXPECT_TRUE(contains(
      metadataError(
          R"({"abi": 1, "model": "m", "target": {"triple": "x"}, "entries": [{"name": "f", "symbol": "s",
              "inputs": [{"name": "x", "dtype": "f32", "shape": [], "bound": 3}], "outputs": []}]})"),
      "entry 'f': input 'x': \"bound\" is only allowed on integer inputs"));
  EXPECT_TRUE(contains(
      metadataError(
          R"({"abi": 1, "model": "m", "target": {"triple": "x"}, "entries": [{"name": "f", "symbol": "s",
              "inputs": [{"name": "x", "dtype": "f32", "shape": []}], "outputs": [{"name": "x", "dtype": "f32", "shape": []}]}]})"),
      "entry 'f': 'x' is declared twice among inputs and outputs"));
  EXPECT_TRUE(contains(
      metadataError(
          R"({"abi": 1, "model": "m", "target": {"triple": "x"}, "entries": [{"name": "f", "symbol": "s", "inputs": [], "outputs": []},
              {"name": "g", "symbol": "s", "inputs": [], "outputs": []}]})"),
      "entry 'g': symbol 's' is used by another entry"));
  EXPECT_TRUE(contains(
      metadataError(
          R"({"abi": 1, "model": "m", "target": {"triple": "x"}, "entries": []})"),
      "the model has no entries"));
  EXPECT_TRUE(contains(
      metadataError(
          R"({"abi": 1, "model": "m", "model": "n", "target": {"triple": "x"}, "entries": []})"),
      "\"model\" appears twice"));
  EXPECT_TRUE(
      contains(metadataError(R"({"abi": 1, "model": "m", "entries": []})"),
               "metadata: missing \"target\""));
}

TEST(ModelMetadata, QuantizedWeights) {
  ModelSpec spec;
  std::string error;
  ASSERT_TRUE(parseModelMetadata(
      withEntries(R"("weights": [{"name": "w", "dtype": "q4_1", "shape": [3, 64]},
                     {"name": "v", "dtype": "q8_0", "shape": [32]}], )"),
      spec, error))
      << error;
  EXPECT_EQ(spec.weights[0].dtype, TFC_Q4_1);
  EXPECT_EQ(spec.weights[0].byteSize(), 3u * 2 * 20); // 2 blocks per row
  EXPECT_EQ(spec.weights[1].byteSize(), 34u);
  EXPECT_STREQ(tfc_dtype_name(TFC_Q4_0), "q4_0");
  EXPECT_EQ(tfc_dtype_size(TFC_Q8_0), 0u);
  size_t elements = 0, bytes = 0;
  EXPECT_TRUE(tfc_dtype_block(TFC_Q4_0, &elements, &bytes));
  EXPECT_EQ(elements, 32u);
  EXPECT_EQ(bytes, 18u);
  EXPECT_TRUE(tfc_dtype_block(TFC_F16, &elements, &bytes));
  EXPECT_EQ(elements, 1u);
  EXPECT_EQ(bytes, 2u);
  EXPECT_FALSE(tfc_dtype_block(static_cast<tfc_dtype>(42), &elements, &bytes));

  EXPECT_TRUE(contains(
      metadataError(withEntries(
          R"("weights": [{"name": "w", "dtype": "q4_0", "shape": [2, 48]}], )")),
      "weight 'w': a q4_0 weight's last dim must be a multiple of 32"));
  EXPECT_TRUE(contains(
      metadataError(withEntries(
          R"("weights": [{"name": "w", "dtype": "q8_0", "shape": []}], )")),
      "weight 'w': a q8_0 weight's last dim must be a multiple of 32"));
  EXPECT_TRUE(contains(
      metadataError(
          R"({"abi": 1, "model": "m", "target": {"triple": "x"}, "entries": [{"name": "f", "symbol": "s",
              "inputs": [{"name": "x", "dtype": "q8_0", "shape": [32]}], "outputs": []}]})"),
      "entry 'f': input 'x': dtype q8_0 is a weight format; inputs and "
      "outputs cannot have it"));
  EXPECT_TRUE(contains(
      metadataError(withEntries(
          R"("weights": [{"name": "w", "dtype": "iq4_xs", "shape": [32]}], )")),
      "unknown dtype 'iq4_xs' (expected f32, f64, f16, bf16, i64, i32, bool, "
      "or for weights q8_0, q4_0, q4_1, q5_0, q5_1, q2_k, q3_k, q4_k, q5_k or "
      "q6_k)"));
  EXPECT_TRUE(contains(
      metadataError(withEntries(
          R"("weights": [{"name": "w", "dtype": "q5_k", "shape": [32]}], )")),
      "weight 'w': a q5_k weight's last dim must be a multiple of 256"));
}

TEST(ModelMetadata, TargetChecks) {
  auto host = [](std::string_view f) {
    if (f == "avx2" || f == "fma")
      return FeatureSupport::Yes;
    if (f == "avx512f" || f == "avx512bw")
      return FeatureSupport::No;
    return FeatureSupport::Unknown;
  };
  TargetSpec t{"x86_64-unknown-linux-gnu", "sapphirerapids",
               "+avx2,+fma,+avx512f,-avx512bw,+prefer-256-bit,+avx512bw"};
  EXPECT_EQ(checkTarget(t, "x86_64", host),
            "the model was compiled for a CPU ('sapphirerapids') with "
            "avx512f, avx512bw, which this host does not support (recompile "
            "it for this host's CPU)");
  t.features = "+avx2,-avx512f,+prefer-256-bit";
  EXPECT_EQ(checkTarget(t, "x86_64", host), "");
  EXPECT_TRUE(contains(checkTarget(t, "aarch64", host),
                       "compiled for x86_64 (triple "
                       "'x86_64-unknown-linux-gnu'), but this host is "
                       "aarch64"));
  t.triple = "arm64-apple-macosx";
  EXPECT_EQ(checkTarget(t, "aarch64", host), "");
#if defined(__x86_64__)
  EXPECT_EQ(hostArchitecture(), "x86_64");
  EXPECT_EQ(hostHasFeature("sse2"), FeatureSupport::Yes);
  EXPECT_EQ(hostHasFeature("64bit"), FeatureSupport::Yes);
  EXPECT_EQ(hostHasFeature("prefer-256-bit"), FeatureSupport::Unknown);
  // The host check accepts what the host has.
  TargetSpec native{"x86_64-pc-linux-gnu", "", "+sse2,+cx16"};
  EXPECT_EQ(checkHostTarget(native), "");
#endif
}

} // namespace
