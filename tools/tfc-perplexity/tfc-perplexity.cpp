//===- tfc-perplexity.cpp - Perplexity of a model over a text -------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//   tfc-perplexity MODEL.so --weights CHECKPOINT --text-file FILE
//                  [--tokenizer PATH] [--context N] [--chunks N]
//                  [--entry NAME] [--threads N] [--no-cache]
//
// The perplexity of a causal language model over a text, measured as
// llama.cpp's perplexity tool measures it, so the two can be compared on the
// same file: the whole text is tokenised once (with the tokenizer's special
// tokens, e.g. a BOS); the tokens are cut into chunks of the context length
// N (the last partial chunk dropped); each chunk is one run of the model's
// all-positions entry, its first token replaced by BOS when the tokenizer
// adds one; the negative log-likelihood of token j + 1 given the logits at
// position j is summed over the second half of each chunk (j from N/2 to
// N - 2, so every scored token has at least N/2 tokens of context).
// A model compiled for generation (--kv-cache: the entry `<entry>_cached`)
// runs each chunk as one prefill of a session, as llama.cpp's tool does: the
// keys and values are written to the cache and attention reads them back, at
// the cache's type (--kv-cache-type=f16 rounds them as llama.cpp's default
// cache does), so the figure is the one the model generates with.
// Perplexity = exp(mean NLL); the ± is the standard error of that mean
// carried through exp (llama.cpp's estimate).
//
// Uses the C API only (tfc.h), like any program built on tfc.
//
//===----------------------------------------------------------------------===//

#include "tfc/Formats/Npy.h"
#include "tfc/Runtime/tfc.h"

#include "CommandLine.h"

#include <chrono>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

const char *const kUsage =
    R"(usage: tfc-perplexity MODEL.so --weights CHECKPOINT --text-file FILE [options]

The perplexity of a causal language model over a text file, measured as
llama.cpp's perplexity tool does: chunks of the context length, the second
half of each chunk scored. A model compiled with --kv-cache runs each chunk
through its KV cache (a session on `<entry>_cached`), at the cache's type.

options:
  -w, --weights PATH     the weights (.safetensors, a Hugging Face directory,
                         a .gguf or a packed .tfcw)
  -f, --text-file FILE   the text (UTF-8)
      --tokenizer PATH   tokenizer.json, a directory holding one, or a .gguf
                         (default: the weights path)
  -c, --context N        tokens per chunk (default 512)
      --chunks N         score at most N chunks (default: all)
      --entry NAME       the entry that returns logits for every position
                         (default: forward)
      --no-cache         run the entry itself even when the model has its
                         cached form (keys and values never stored)
      --threads N        worker threads (default: TFC_NUM_THREADS or all)
      --nll-out FILE     write each scored token's negative log-likelihood,
                         in order, as a float64 .npy (for comparisons token
                         by token with another implementation)
  -h, --help
)";

[[noreturn]] void fail(const std::string &message) {
  std::fprintf(stderr, "tfc-perplexity: error: %s\n", message.c_str());
  std::exit(1);
}

void check(tfc_status status) {
  if (status != TFC_OK)
    fail(tfc_last_error());
}

std::vector<int64_t> encode(tfc_tokenizer *tokenizer, const std::string &text,
                            bool special) {
  size_t n = 0;
  check(tfc_tokenizer_encode(tokenizer, text.data(), text.size(), special,
                             nullptr, 0, &n));
  std::vector<int64_t> ids(n);
  check(tfc_tokenizer_encode(tokenizer, text.data(), text.size(), special,
                             ids.data(), ids.size(), &n));
  ids.resize(n);
  return ids;
}

} // namespace

int main(int argc, char **argv) {
  std::string model, weights, tokenizerPath, textPath, nllOut,
      entry = "forward";
  int64_t context = 512, maxChunks = -1, threads = 0;
  bool noCache = false;
  tfc::tools::CommandLine cli("tfc-perplexity", kUsage);
  cli.add_option("model", model);
  cli.add_option("-w,--weights", weights);
  cli.add_option("-f,--text-file", textPath);
  cli.add_option("--tokenizer", tokenizerPath);
  cli.add_option("-c,--context", context)
      ->transform(tfc::tools::integerAtLeast(4));
  cli.add_option("--chunks", maxChunks)
      ->transform(tfc::tools::integerAtLeast(1));
  cli.add_option("--entry", entry);
  cli.add_option("--threads", threads)
      ->transform(tfc::tools::integerAtLeast(1));
  cli.add_option("--nll-out", nllOut);
  cli.add_flag("--no-cache", noCache);
  cli.parseOrExit(argc, argv);
  if (model.empty() || weights.empty() || textPath.empty())
    fail("a model, --weights and --text-file are required (see --help)");
  if (tokenizerPath.empty())
    tokenizerPath = weights;
  if (threads)
    tfc_set_num_threads(static_cast<int>(threads));

  std::ifstream in(textPath, std::ios::binary);
  if (!in)
    fail(textPath + ": cannot open: " + std::strerror(errno));
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();

  tfc_tokenizer *tokenizer = nullptr;
  check(tfc_tokenizer_load(tokenizerPath.c_str(), &tokenizer));
  std::vector<int64_t> tokens = encode(tokenizer, text, true);
  // A BOS the tokenizer adds starts every chunk.
  std::vector<int64_t> plain = encode(tokenizer, text, false);
  int64_t bos = tokens.size() == plain.size() + 1 ? tokens.front() : -1;
  tfc_tokenizer_free(tokenizer);

  int64_t chunks = static_cast<int64_t>(tokens.size()) / context;
  if (maxChunks > 0 && chunks > maxChunks)
    chunks = maxChunks;
  if (chunks == 0)
    fail(textPath + ": " + std::to_string(tokens.size()) +
         " tokens, fewer than one chunk of " + std::to_string(context) +
         " (--context)");

  tfc_model *m = nullptr;
  check(tfc_model_load(model.c_str(), &m));
  int64_t e = tfc_model_find_entry(m, entry.c_str());
  if (e < 0)
    fail(model + " has no entry '" + entry + "' (--entry)");
  // The cached form, when the model has one: the same token ids and logits,
  // plus `past` and the caches, which a session supplies.
  std::string cachedEntry = entry + "_cached";
  int64_t cached = noCache ? -1 : tfc_model_find_entry(m, cachedEntry.c_str());
  int64_t run = cached >= 0 ? cached : e;
  const std::string &runName = cached >= 0 ? cachedEntry : entry;
  size_t callerInputs = 0;
  for (size_t i = 0; i < tfc_entry_num_inputs(m, run); ++i) {
    tfc_tensor_info info;
    check(tfc_entry_input_info(m, run, i, &info));
    if (!tfc_entry_input_is_state(m, run, i) &&
        (cached < 0 || std::strcmp(info.name, "past") != 0))
      ++callerInputs;
  }
  if (callerInputs != 1 || tfc_entry_num_outputs(m, run) != 1)
    fail("entry '" + runName +
         "' must take token ids and return logits (one input, one output)");
  tfc_tensor_info inInfo, outInfo;
  check(tfc_entry_input_info(m, e, 0, &inInfo));
  check(tfc_entry_output_info(m, run, 0, &outInfo));
  if (inInfo.rank != 2 || (inInfo.dtype != TFC_I64 && inInfo.dtype != TFC_I32))
    fail("entry '" + entry + "': input '" + inInfo.name +
         "' is not [batch, seq] token ids");
  if (outInfo.rank != 3 || outInfo.dtype != TFC_F32)
    fail("entry '" + runName + "': output '" + outInfo.name +
         "' is not f32 [batch, seq, vocab] logits");
  check(tfc_model_load_weights(m, weights.c_str()));
  tfc_session *session = nullptr;
  if (cached >= 0)
    check(tfc_session_create(m, cachedEntry.c_str(), 1, context, &session));

  std::printf("tfc-perplexity: %zu tokens%s, %lld chunks of %lld, scoring "
              "positions %lld..%lld of each, %s\n",
              tokens.size(), bos >= 0 ? " (BOS at each chunk)" : "",
              static_cast<long long>(chunks), static_cast<long long>(context),
              static_cast<long long>(context / 2),
              static_cast<long long>(context - 2),
              session ? ("through the KV cache (" + cachedEntry + ")").c_str()
                      : ("entry " + entry).c_str());
  double nll = 0, nll2 = 0;
  int64_t count = 0;
  std::vector<double> losses;
  auto start = std::chrono::steady_clock::now();
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t *chunk = tokens.data() + c * context;
    std::vector<int64_t> ids(chunk, chunk + context);
    if (bos >= 0)
      ids[0] = bos;
    std::vector<int32_t> ids32(ids.begin(), ids.end());
    tfc_tensor input = {inInfo.dtype, 2, {1, context}, nullptr, nullptr};
    input.data = inInfo.dtype == TFC_I64 ? static_cast<void *>(ids.data())
                                         : static_cast<void *>(ids32.data());
    tfc_tensor output = {};
    if (session) {
      check(tfc_session_rewind(session, 0));
      check(tfc_session_run(session, &input, 1, &output, 1));
    } else {
      check(tfc_run(m, entry.c_str(), &input, 1, &output, 1));
    }
    if (output.rank != 3 || output.shape[1] != context)
      fail("entry '" + runName + "' returned logits of another shape");
    int64_t vocab = output.shape[2];
    const float *logits = static_cast<const float *>(output.data);
    for (int64_t j = context / 2; j + 1 < context; ++j) {
      const float *row = logits + j * vocab;
      int64_t target = chunk[j + 1];
      if (target < 0 || target >= vocab)
        fail("token id " + std::to_string(target) +
             " is outside the logits' vocabulary of " +
             std::to_string(vocab));
      double max = row[0];
      for (int64_t v = 1; v < vocab; ++v)
        max = std::max<double>(max, row[v]);
      double sum = 0;
      for (int64_t v = 0; v < vocab; ++v)
        sum += std::exp(row[v] - max);
      double loss = std::log(sum) + max - row[target];
      nll += loss;
      nll2 += loss * loss;
      losses.push_back(loss);
      ++count;
    }
    tfc_tensor_release(&output);
    std::printf("[%lld]%.4f%s", static_cast<long long>(c + 1),
                std::exp(nll / count), c + 1 == chunks ? "\n" : ",");
    std::fflush(stdout);
  }
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  double mean = nll / count;
  double variance = nll2 / count - mean * mean;
  double error = count > 1 ? std::sqrt(std::max(variance, 0.0) / (count - 1))
                           : 0.0;
  double ppl = std::exp(mean);
  std::printf("perplexity: %.4f +/- %.4f over %lld scored tokens (%.1f s, "
              "%.0f tokens/s)\n",
              ppl, ppl * error, static_cast<long long>(count), seconds,
              chunks * context / seconds);
  tfc_session_free(session);
  tfc_model_free(m);
  std::string writeError;
  if (!nllOut.empty() &&
      !tfc::rt::writeNpy(nllOut, tfc::rt::DType::F64,
                         {static_cast<int64_t>(losses.size())}, losses.data(),
                         writeError))
    fail(writeError);
  return 0;
}
