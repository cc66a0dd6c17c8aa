//===- tfc-generate.cpp - Text generation with a compiled model ----------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//   tfc-generate MODEL.so --weights CHECKPOINT (--prompt TEXT | --ids 1,2,3)
//                [--max-new-tokens N] [--context N] [--eos ID,...]
//                [--chat [--system TEXT] [--messages FILE]]
//                [--temperature T --top-k K --top-p P --min-p P
//                 --repetition-penalty R --seed S]
//
// Runs the model's cached entry (tfc-compile --kv-cache) in a session: the
// prompt in one run (prefill), then one token per run (decode), each step
// reading and extending the key/value caches. Greedy decoding by default,
// sampling with --temperature (Sampler.h); with --chat the prompt is a user
// message rendered with the checkpoint's chat template (ChatTemplate.h). The
// text is streamed as it is generated (never a partial UTF-8 character)
// with the checkpoint's tokenizer. Reports time to first token and tokens
// per second.
//
//===----------------------------------------------------------------------===//

#include "tfc/Runtime/ChatTemplate.h"
#include "tfc/Runtime/Sampler.h"
#include "tfc/Runtime/Tokenizer.h"
#include "tfc/Runtime/TokenizerSource.h"
#include "tfc/Runtime/tfc.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

const char *const kUsage =
    R"(usage: tfc-generate MODEL.so --weights CHECKPOINT [options]

Generates text with a model compiled by `tfc-compile --kv-cache`.

options:
  -w, --weights PATH       the weights (.safetensors, a Hugging Face
                           directory or a .gguf)
      --tokenizer PATH     tokenizer.json, a directory holding one, or a .gguf
                           (default: the weights path when it has one)
  -p, --prompt TEXT        the prompt, tokenised with the tokenizer
      --ids 1,2,3          the prompt as token ids
  -n, --max-new-tokens N   tokens to generate (default 64)
      --context N          the session's context, prompt included (default:
                           prompt + max new tokens, within the model's bound)
      --eos ID,...         stop at any of these ids (default: those the
                           checkpoint states: tokenizer.ggml.eos_token_id and
                           eot_token_id of a .gguf, eos_token_id of
                           generation_config.json or config.json; else the
                           tokenizer's end-of-text token; with --chat also
                           the template's end of turn)

chat:
      --chat               render the prompt as a user message with the
                           checkpoint's chat template (tokenizer.chat_template
                           of a .gguf, tokenizer_config.json or
                           chat_template.jinja of a directory) and
                           add_generation_prompt; print only the reply
      --system TEXT        a system message before it
      --messages FILE      the conversation so far: a JSON list of
                           {"role", "content"} (or an object of template
                           variables with "messages"); --prompt is appended
      --chat-template FILE a Jinja template to use instead
      --print-prompt       print the prompt as JSON {"text", "ids"} and stop
                           (no model needed)

sampling (default: greedy):
      --temperature T      0: greedy; otherwise sample from softmax(l / T)
      --top-k K            keep the K most probable tokens (0: all)
      --top-p P            keep the most probable tokens until their
                           probability reaches P, in (0, 1] (1: all)
      --min-p P            keep tokens at least P times as probable as the
                           most probable one, in [0, 1) (0: all)
      --repetition-penalty R
                           divide positive logits of tokens seen so far
                           (prompt included) by R, multiply negative ones
                           (1: off; applies to greedy decoding too)
      --seed S             the random seed (default: random, printed)
      --entry NAME         the cached entry (default: the one entry with
                           state inputs)
      --threads N          threads (default: TFC_NUM_THREADS or all)
      --print-ids          print the generated ids on a last line "ids: ..."
      --quiet              no streamed text, only the statistics
  -h, --help               this text
)";

[[noreturn]] void fail(const std::string &m) {
  std::fprintf(stderr, "tfc-generate: error: %s\n", m.c_str());
  std::exit(1);
}

bool parseInt(const std::string &s, int64_t &out) {
  if (s.empty())
    return false;
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno || *end)
    return false;
  out = v;
  return true;
}

std::vector<int64_t> parseIds(const std::string &text, const char *what) {
  std::vector<int64_t> ids;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma - start);
    int64_t v;
    if (!parseInt(item, v) || v < 0)
      fail(std::string(what) + ": '" + item + "' is not a token id");
    ids.push_back(v);
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  return ids;
}

bool hasTokenizer(const std::string &path) {
  FILE *f = std::fopen(path.c_str(), "rb");
  if (f) {
    char magic[4] = {};
    bool gguf =
        std::fread(magic, 1, 4, f) == 4 && !std::memcmp(magic, "GGUF", 4);
    std::fclose(f);
    if (gguf || (path.size() >= 5 && path.substr(path.size() - 5) == ".json"))
      return true;
  }
  FILE *t = std::fopen((path + "/tokenizer.json").c_str(), "rb");
  if (t)
    std::fclose(t);
  return t != nullptr;
}

bool parseDouble(const std::string &s, double &out) {
  if (s.empty())
    return false;
  char *end = nullptr;
  errno = 0;
  out = std::strtod(s.c_str(), &end);
  return !errno && !*end;
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    fail(path + ": cannot open: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

double msSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - t)
      .count();
}

} // namespace

int main(int argc, char **argv) {
  std::string model, weights, tokenizerPath, prompt, idsText, entry, eosText;
  std::string system, messagesPath, templatePath;
  int64_t maxNew = 64, context = 0, threads = 0;
  bool printIds = false, quiet = false, havePrompt = false;
  bool chat = false, haveSystem = false, printPrompt = false;
  tfc::rt::SamplingParams sampling;
  bool haveSeed = false, samplingFlags = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc)
        fail("option '" + a + "' needs a value");
      return argv[++i];
    };
    auto real = [&]() {
      std::string v = next();
      double d;
      if (!parseDouble(v, d))
        fail("option '" + a + "' needs a number, not '" + v + "'");
      samplingFlags = true;
      return d;
    };
    auto integer = [&]() {
      std::string v = next();
      int64_t n;
      if (!parseInt(v, n))
        fail("option '" + a + "' needs an integer, not '" + v + "'");
      samplingFlags = true;
      return n;
    };
    auto number = [&](int64_t min) {
      std::string v = next();
      int64_t n;
      if (!parseInt(v, n) || n < min)
        fail("option '" + a + "' needs an integer >= " + std::to_string(min) +
             ", not '" + v + "'");
      return n;
    };
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "-w" || a == "--weights")
      weights = next();
    else if (a == "--tokenizer")
      tokenizerPath = next();
    else if (a == "-p" || a == "--prompt") {
      prompt = next();
      havePrompt = true;
    } else if (a == "--ids")
      idsText = next();
    else if (a == "-n" || a == "--max-new-tokens")
      maxNew = number(0);
    else if (a == "--context")
      context = number(1);
    else if (a == "--eos")
      eosText = next();
    else if (a == "--entry")
      entry = next();
    else if (a == "--threads")
      threads = number(1);
    else if (a == "--print-ids")
      printIds = true;
    else if (a == "--chat")
      chat = true;
    else if (a == "--system") {
      system = next();
      haveSystem = true;
    } else if (a == "--messages")
      messagesPath = next();
    else if (a == "--chat-template")
      templatePath = next();
    else if (a == "--print-prompt")
      printPrompt = true;
    else if (a == "--temperature")
      sampling.temperature = real();
    else if (a == "--top-k")
      sampling.topK = integer();
    else if (a == "--top-p")
      sampling.topP = real();
    else if (a == "--min-p")
      sampling.minP = real();
    else if (a == "--repetition-penalty")
      sampling.repetitionPenalty = real();
    else if (a == "--seed") {
      std::string v = next();
      char *end = nullptr;
      errno = 0;
      unsigned long long seed = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || v[0] == '-' || *end || errno)
        fail("option '--seed' needs a non-negative integer, not '" + v + "'");
      sampling.seed = seed;
      haveSeed = true;
    } else if (a == "--quiet")
      quiet = true;
    else if (!a.empty() && a[0] == '-')
      fail("unknown option '" + a + "' (see --help)");
    else if (model.empty())
      model = a;
    else
      fail("unexpected argument '" + a + "'");
  }
  if (model.empty() && !printPrompt)
    fail("no model given\n" + std::string(kUsage));
  {
    std::string error;
    if (!tfc::rt::validateSamplingParams(sampling, error))
      fail(error);
  }
  bool sample = sampling.temperature > 0;
  if (samplingFlags && !sample &&
      (sampling.topK != 0 || sampling.topP != 1 || sampling.minP != 0))
    std::fprintf(stderr, "tfc-generate: note: --top-k, --top-p and --min-p "
                         "have no effect at temperature 0 (greedy)\n");
  if (sample && !haveSeed)
    sampling.seed =
        (uint64_t(std::random_device()()) << 32) ^ std::random_device()();
  if (!chat && (haveSystem || !messagesPath.empty() || !templatePath.empty()))
    fail("--system, --messages and --chat-template need --chat");
  if (chat && !idsText.empty())
    fail("--chat renders text: give --prompt or --messages, not --ids");
  if (chat ? (!havePrompt && messagesPath.empty())
           : havePrompt == !idsText.empty())
    fail(chat ? "--chat needs --prompt or --messages"
              : "give the prompt with exactly one of --prompt and --ids");
  if (threads > 0 && tfc_set_num_threads(static_cast<int>(threads)) != TFC_OK)
    fail(tfc_last_error());

  // The tokenizer: needed for --prompt and for printing text.
  std::unique_ptr<tfc::rt::Tokenizer> tokenizer;
  if (tokenizerPath.empty() && !weights.empty() && hasTokenizer(weights))
    tokenizerPath = weights;
  if (!tokenizerPath.empty()) {
    std::string error;
    tokenizer = tfc::rt::openTokenizer(tokenizerPath, error);
    if (!tokenizer)
      fail(error);
  } else if (havePrompt) {
    fail("--prompt needs a tokenizer: give --tokenizer, or --ids");
  }
  if (chat && !tokenizer)
    fail("--chat needs a tokenizer: give --tokenizer");
  std::vector<int64_t> promptIds;
  std::string promptText = prompt;
  std::vector<int64_t> endOfTurn;
  if (chat) {
    // The conversation: --messages, then --system first and --prompt last.
    std::string error;
    std::unique_ptr<tfc::rt::ChatTemplate> tpl;
    if (!templatePath.empty()) {
      tfc::rt::ChatTemplateSource source;
      std::string ignored;
      tfc::rt::readChatTemplate(tokenizerPath, source, ignored);
      tpl = tfc::rt::ChatTemplate::parse(readFile(templatePath), error,
                                         templatePath);
      if (tpl)
        tpl->setSpecialTokens(source.bos, source.eos);
      if (tpl && !source.eos.empty())
        if (auto id = tokenizer->tokenToId(source.eos))
          endOfTurn.push_back(*id);
    } else {
      tfc::rt::ChatTemplateSource source;
      if (!tfc::rt::readChatTemplate(tokenizerPath, source, error))
        fail(error);
      tpl = tfc::rt::ChatTemplate::parse(source.text, error, source.origin);
      if (tpl)
        tpl->setSpecialTokens(source.bos, source.eos);
      if (!source.eos.empty())
        if (auto id = tokenizer->tokenToId(source.eos))
          endOfTurn.push_back(*id);
    }
    if (!tpl)
      fail(error);
    nlohmann::ordered_json ctx = nlohmann::ordered_json::object();
    if (!messagesPath.empty()) {
      nlohmann::ordered_json file;
      try {
        file = nlohmann::ordered_json::parse(readFile(messagesPath));
      } catch (const std::exception &e) {
        fail(messagesPath + ": not valid JSON: " + e.what());
      }
      if (file.is_array())
        ctx["messages"] = file;
      else if (file.is_object() && file.contains("messages") &&
               file["messages"].is_array())
        ctx = file;
      else
        fail(messagesPath + ": expected a list of messages or an object with "
                            "a \"messages\" list");
    } else {
      ctx["messages"] = nlohmann::ordered_json::array();
    }
    auto message = [](const char *role, const std::string &content) {
      nlohmann::ordered_json m = nlohmann::ordered_json::object();
      m["role"] = role;
      m["content"] = content;
      return m;
    };
    if (haveSystem)
      ctx["messages"].insert(ctx["messages"].begin(),
                             message("system", system));
    if (havePrompt)
      ctx["messages"].push_back(message("user", prompt));
    if (!ctx.contains("add_generation_prompt"))
      ctx["add_generation_prompt"] = true;
    if (!tpl->renderJson(ctx.dump(), promptText, error))
      fail(error);
    // The rendered text holds the template's special tokens (<|im_start|>,
    // BOS, ...) as text: the tokenizer matches them as special tokens, and
    // adds none of its own (transformers' apply_chat_template(tokenize=True)
    // encodes with add_special_tokens=False).
    tfc::rt::Encoding enc;
    if (!tokenizer->encode(promptText, /*addSpecialTokens=*/false, enc, error))
      fail(error);
    promptIds = enc.ids;
    // The end of an assistant turn (SmolLM2: <|im_end|>) when the text after
    // an assistant message starts with a special token.
    std::string suffix = tpl->assistantSuffix();
    if (!suffix.empty() &&
        tokenizer->encode(suffix, /*addSpecialTokens=*/false, enc, error) &&
        !enc.ids.empty() && tokenizer->isSpecial(enc.ids[0]))
      endOfTurn.push_back(enc.ids[0]);
  } else if (havePrompt) {
    tfc::rt::Encoding enc;
    std::string error;
    if (!tokenizer->encode(prompt, /*addSpecialTokens=*/true, enc, error))
      fail(error);
    promptIds = enc.ids;
  } else {
    promptIds = parseIds(idsText, "--ids");
  }
  if (printPrompt) {
    nlohmann::ordered_json j;
    if (chat || havePrompt)
      j["text"] = promptText;
    j["ids"] = promptIds;
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  if (promptIds.empty())
    fail("the prompt has no tokens");
  std::vector<int64_t> eos;
  if (!eosText.empty())
    eos = parseIds(eosText, "--eos");
  else {
    // What the checkpoint states (GGUF keys, generation_config.json,
    // config.json), else the tokenizer's usual end-of-text tokens.
    std::string error;
    std::string source = tokenizerPath.empty() ? weights : tokenizerPath;
    if (!source.empty() && !tfc::rt::readEndOfSequenceIds(source, eos, error))
      fail(error);
    if (eos.empty() && source != weights &&
        !tfc::rt::readEndOfSequenceIds(weights, eos, error))
      fail(error);
    if (eos.empty() && tokenizer)
      for (const char *t : {"<|endoftext|>", "<|im_end|>", "</s>",
                            "<|eot_id|>", "<|end_of_text|>"})
        if (auto id = tokenizer->tokenToId(t))
          eos.push_back(*id);
  }
  if (eosText.empty())
    for (int64_t id : endOfTurn)
      if (std::find(eos.begin(), eos.end(), id) == eos.end())
        eos.push_back(id);

  tfc_model *m = nullptr;
  if (tfc_model_load(model.c_str(), &m) != TFC_OK)
    fail(tfc_last_error());
  tfc_model_info info;
  tfc_model_get_info(m, &info);
  if (!weights.empty()) {
    if (tfc_model_load_weights(m, weights.c_str()) != TFC_OK)
      fail(tfc_last_error());
  } else if (info.num_weights > 0) {
    fail("the model has weights: give them with --weights");
  }
  if (entry.empty()) {
    for (size_t e = 0; e < info.num_entries; ++e) {
      std::string name = tfc_model_entry_name(m, e);
      if (name.size() > 7 && name.compare(name.size() - 7, 7, "_cached") == 0) {
        if (!entry.empty())
          fail("the model has several cached entries; choose one with --entry");
        entry = name;
      }
    }
    if (entry.empty())
      fail("model '" + std::string(info.name) +
           "' has no cached entry: compile it with tfc-compile --kv-cache");
  }
  int64_t total = static_cast<int64_t>(promptIds.size()) + maxNew;
  tfc_session *session = nullptr;
  if (tfc_session_create(m, entry.c_str(), 1, context ? context : total,
                         &session) != TFC_OK)
    fail(tfc_last_error());
  if (tfc_session_num_inputs(session) != 1)
    fail("entry '" + entry + "' takes more than the token ids");

  std::unique_ptr<tfc::rt::IncrementalDecoder> stream;
  if (tokenizer && !quiet) {
    stream = std::make_unique<tfc::rt::IncrementalDecoder>(
        *tokenizer, /*skipSpecialTokens=*/true);
    std::string text, error;
    for (int64_t id : promptIds)
      if (!stream->feed(id, text, error))
        fail(error);
    // In chat mode only the reply is printed (the prompt still primes the
    // decoder, so the reply's first characters decode in context).
    if (!chat)
      std::fputs(text.c_str(), stdout);
    std::fflush(stdout);
  }
  tfc::rt::Sampler sampler(sampling);
  // The ids so far, prompt included, for the repetition penalty (as
  // transformers applies it to input_ids).
  std::vector<int64_t> history = promptIds;

  std::vector<int64_t> generated;
  std::vector<int64_t> feed = promptIds;
  auto start = std::chrono::steady_clock::now();
  double prefillMs = 0, decodeMs = 0;
  int64_t decodeSteps = 0;
  for (int64_t step = 0; step < maxNew; ++step) {
    // The prompt must fit (else the session says why); generation stops
    // when the context is full.
    if (step > 0 &&
        tfc_session_position(session) + 1 > tfc_session_context(session)) {
      std::fprintf(stderr,
                   "tfc-generate: note: the context of %lld tokens "
                   "is full\n",
                   static_cast<long long>(tfc_session_context(session)));
      break;
    }
    auto t0 = std::chrono::steady_clock::now();
    tfc_tensor in{TFC_I64,
                  2,
                  {1, static_cast<int64_t>(feed.size())},
                  feed.data(),
                  nullptr};
    tfc_tensor out;
    if (tfc_session_run(session, &in, 1, &out, 1) != TFC_OK)
      fail(tfc_last_error());
    // The last position's logits: greedy (the argmax) or sampled.
    int64_t vocab = out.shape[out.rank - 1];
    const float *row =
        static_cast<const float *>(out.data) + (out.shape[1] - 1) * vocab;
    int64_t next = sampler.sample(row, static_cast<size_t>(vocab), history);
    tfc_tensor_release(&out);
    history.push_back(next);
    double ms = msSince(t0);
    if (step == 0)
      prefillMs = ms;
    else {
      decodeMs += ms;
      ++decodeSteps;
    }
    generated.push_back(next);
    if (stream) {
      std::string text, error;
      if (!stream->feed(next, text, error))
        fail(error);
      std::fputs(text.c_str(), stdout);
      std::fflush(stdout);
    }
    if (std::find(eos.begin(), eos.end(), next) != eos.end())
      break;
    feed.assign(1, next);
  }
  if (stream) {
    std::string text, error;
    if (!stream->finish(text, error))
      fail(error);
    std::fputs(text.c_str(), stdout);
    std::fputs("\n", stdout);
    std::fflush(stdout); // before the statistics on stderr
  }
  double totalMs = msSince(start);
  std::fprintf(stderr,
               "tfc-generate: %zu prompt tokens, %zu generated on %d threads; "
               "time to first token %.1f ms (prefill %.1f tokens/s); decode "
               "%.1f tokens/s over %lld steps; total %.1f ms\n",
               promptIds.size(), generated.size(), tfc_num_threads(), prefillMs,
               promptIds.size() * 1000.0 / std::max(prefillMs, 1e-9),
               decodeSteps ? decodeSteps * 1000.0 / decodeMs : 0.0,
               static_cast<long long>(decodeSteps), totalMs);
  if (sample)
    std::fprintf(stderr,
                 "tfc-generate: sampled with temperature %g, top-k %lld, "
                 "top-p %g, min-p %g, repetition penalty %g, seed %llu\n",
                 sampling.temperature, static_cast<long long>(sampling.topK),
                 sampling.topP, sampling.minP, sampling.repetitionPenalty,
                 static_cast<unsigned long long>(sampling.seed));
  if (printIds) {
    std::printf("ids:");
    for (size_t i = 0; i < generated.size(); ++i)
      std::printf("%s%lld", i ? "," : " ",
                  static_cast<long long>(generated[i]));
    std::printf("\n");
  }
  tfc_session_free(session);
  tfc_model_free(m);
  return 0;
}
