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

#include "tfc/Formats/Files.h"
#include "tfc/Formats/JsonDocument.h"
#include "tfc/Formats/Npy.h"
#include "tfc/Generation/Generation.h"
#include "tfc/Runtime/tfc.h"
#include "tfc/Sampling/BeamSearch.h"
#include "tfc/Sampling/Sampler.h"
#include "tfc/Text/Jinja/ChatTemplate.h"
#include "tfc/Text/Tokenizer/Tokenizer.h"
#include "tfc/Text/Tokenizer/TokenizerSource.h"

#include "CommandLine.h"
#include "ModelCache.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <vector>

namespace {

/// Prints "tfc-generate: error: m" and exits with status 1.
[[noreturn]] void fail(const std::string &m) {
  std::fprintf(stderr, "tfc-generate: error: %s\n", m.c_str());
  std::exit(1);
}

} // namespace

using namespace tfc::gen;

namespace {

const char *const kUsage =
    R"(usage: tfc-generate MODEL.so --weights CHECKPOINT [options]
       tfc-generate CHECKPOINT [options]

Generates text with a model compiled by `tfc-compile --kv-cache`. A
checkpoint (a Hugging Face directory, a .gguf) is compiled once with
--kv-cache --kv-cache-last into the cache ($TFC_CACHE_DIR/compiled, default
~/.cache/tfc/compiled) and reused, with its weights and tokenizer; the
weights, once bound, are kept packed in $TFC_CACHE_DIR/packed for later runs
(TFC_WEIGHTS_CACHE=0: not).

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
      --stop TEXT          stop when the text contains TEXT (repeatable); the
                           reply ends before it, and text that may begin it
                           is held back while streaming
  -i, --interactive        with --chat: a conversation, one user turn per
                           line of standard input (the session keeps the
                           conversation's keys and values between turns)
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
      --draws N            instead of generating: run the prompt, draw N
                           tokens for its next position from the
                           distribution above (each draw as generation
                           would make it, one seeded stream), print the
                           counts as JSON {"draws", "prompt_ids", "counts":
                           {id: n}} and exit: the sampler end to end, for a test of its
                           frequencies (test/Import/Inputs/check_draws.py)
      --logits-out FILE    with --draws: the raw logits it drew from
                           (.npy, f32 [vocab])

beam search (transformers' num_beams; prints the best hypothesis at the end):
      --beams N            beams (default 1: greedy or sampling, streamed)
      --length-penalty X   hypotheses score sum(log p) / length^X (default 1)
      --early-stopping     stop once N hypotheses have ended

encoder-decoder models (an entry whose cached form reads the output of
another, e.g. tfc-import of a MarianMT checkpoint): the prompt is the
source; the encoder runs once, `<entry>_cross` computes every layer's
cross-attention keys and values once, and the decoder starts from
      --decoder-start ID   the first decoder token (default: the
                           checkpoint's decoder_start_token_id)

      --entry NAME         the cached entry (default: the one entry with
                           state inputs)
      --threads N          threads (default: TFC_NUM_THREADS or all)
      --print-ids          print the generated ids on a last line "ids: ..."
      --quiet              no streamed text, only the statistics
      --stats              also print the resident memory: weights, derived
                           constants, the session's KV cache, the arena and
                           the process's peak
  -h, --help               this text
)";

std::vector<int64_t> parseIds(const std::string &text, const char *what) {
  std::vector<int64_t> ids;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma - start);
    long long v;
    if (!tfc::tools::parseInteger(item, v) || v < 0)
      fail(std::string(what) + ": '" + item + "' is not a token id");
    ids.push_back(v);
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  return ids;
}

std::string readFile(const std::string &path) {
  std::string text, error;
  if (!tfc::rt::readRegularFile(path, text, tfc::rt::kMaxConfigFileBytes,
                                error))
    fail(error);
  return text;
}

/// The longest k < stop.size() such that `text` ends with stop[0, k): the
/// characters that may still become a stop string and are held back.
} // namespace

static int generate(int argc, char **argv) {
  std::string model, weights, tokenizerPath, prompt, idsText, entry, eosText;
  std::string system, messagesPath, templatePath;
  int64_t maxNew = 64, context = 0, threads = 0;
  bool printIds = false, quiet = false, havePrompt = false, stats = false;
  bool chat = false, haveSystem = false, printPrompt = false;
  tfc::rt::SamplingParams sampling;
  bool haveSeed = false, samplingFlags = false, interactive = false;
  tfc::rt::BeamSearchParams beam;
  beam.beams = 1;
  int64_t decoderStart = -1;
  int64_t draws = 0;
  std::string logitsOut;
  // Repeated --prompt or --ids: a batch.
  std::vector<std::string> promptTexts, idsTexts;
  std::vector<std::string> stops;
  using tfc::tools::integerAtLeast;
  tfc::tools::CommandLine cli("tfc-generate", kUsage);
  cli.add_option("model", model);
  cli.add_option("-w,--weights", weights);
  cli.add_option("--tokenizer", tokenizerPath);
  cli.addRepeated("-p,--prompt", promptTexts);
  cli.addRepeated("--ids", idsTexts);
  cli.add_option("-n,--max-new-tokens", maxNew)->transform(integerAtLeast(0));
  cli.add_option("--context", context)->transform(integerAtLeast(1));
  cli.add_option("--eos", eosText);
  cli.addRepeated("--stop", stops)
      ->check(CLI::Validator(
          [](std::string &v) {
            return v.empty() ? std::string("needs a non-empty string")
                             : std::string();
          },
          "TEXT"));
  cli.add_flag("-i,--interactive", interactive);
  cli.add_option("--entry", entry);
  cli.add_option("--threads", threads)->transform(integerAtLeast(1));
  cli.add_flag("--print-ids", printIds);
  cli.add_flag("--chat", chat);
  cli.add_option("--system", system);
  cli.add_option("--messages", messagesPath);
  cli.add_option("--chat-template", templatePath);
  cli.add_flag("--print-prompt", printPrompt);
  cli.add_option("--temperature", sampling.temperature)
      ->check(tfc::tools::aNumber());
  cli.add_option("--top-k", sampling.topK)->transform(tfc::tools::anInteger());
  cli.add_option("--top-p", sampling.topP)->check(tfc::tools::aNumber());
  cli.add_option("--min-p", sampling.minP)->check(tfc::tools::aNumber());
  cli.add_option("--repetition-penalty", sampling.repetitionPenalty)
      ->check(tfc::tools::aNumber());
  cli.add_option("--seed", sampling.seed)
      ->transform(tfc::tools::nonNegativeInteger());
  cli.add_option("--beams", beam.beams)->transform(integerAtLeast(1));
  cli.add_option("--length-penalty", beam.lengthPenalty)
      ->check(tfc::tools::aNumber());
  cli.add_flag("--early-stopping", beam.earlyStopping);
  cli.add_option("--decoder-start", decoderStart)->transform(integerAtLeast(0));
  cli.add_option("--draws", draws)->transform(integerAtLeast(1));
  cli.add_option("--logits-out", logitsOut);
  cli.add_flag("--quiet", quiet);
  cli.add_flag("--stats", stats);
  cli.parseOrExit(argc, argv);
  for (const char *flag : {"--temperature", "--top-k", "--top-p", "--min-p",
                           "--repetition-penalty"})
    samplingFlags |= cli.count(flag) > 0;
  haveSeed = cli.count("--seed") > 0;
  haveSystem = cli.count("--system") > 0;
  havePrompt = !promptTexts.empty();
  if (havePrompt)
    prompt = promptTexts.front();
  if (!idsTexts.empty())
    idsText = idsTexts.front();
  if (model.empty() && !printPrompt)
    fail("no model given\n" + std::string(kUsage));
  // A checkpoint instead of a library: compiled once, with a KV cache, into
  // the cache.
  std::string packedCache;
  if (std::string error; !tfc::tools::resolveModelArgument(
          model, {"--kv-cache", "--kv-cache-last"}, argv[0], quiet, weights,
          error, &packedCache))
    fail(error);
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
  if (interactive && !chat)
    fail("--interactive is a chat: give --chat (and the checkpoint's "
         "template)");
  if (chat ? (!havePrompt && messagesPath.empty() && !interactive)
           : havePrompt == !idsText.empty())
    fail(chat ? "--chat needs --prompt or --messages"
              : "give the prompt with exactly one of --prompt and --ids");
  bool batch = promptTexts.size() + idsTexts.size() > 1;
  if (!logitsOut.empty() && draws == 0)
    fail("--logits-out writes the logits that --draws draws from: give "
         "--draws");
  if (draws > 0 && (batch || interactive || beam.beams > 1))
    fail("--draws draws for one prompt's next token: leave out "
         "--interactive, --beams and further prompts");
  if (batch && (chat || interactive || !stops.empty()))
    fail("several prompts are generated as one batch and printed at the "
         "end: leave out --chat, --interactive and --stop");
  if (beam.beams > 1) {
    if (sample)
      fail("--beams searches deterministically: leave out --temperature "
           "(beam sampling is not supported)");
    if (interactive || !stops.empty())
      fail("--beams prints the best hypothesis when the search ends: it "
           "does not work with --interactive or --stop");
    if (sampling.repetitionPenalty != 1)
      fail("--repetition-penalty does not apply to --beams");
    beam.maxNewTokens = maxNew;
    std::string error;
    if (!tfc::rt::validateBeamSearchParams(beam, error))
      fail(error);
  }
  if (threads > 0 && tfc_set_num_threads(static_cast<int>(threads)) != TFC_OK)
    fail(tfc_last_error());

  // The tokenizer: needed for --prompt and for printing text.
  std::unique_ptr<tfc::rt::Tokenizer> tokenizer;
  if (tokenizerPath.empty() && !weights.empty() &&
      tfc::tools::hasTokenizer(weights))
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
  if (!stops.empty() && !tokenizer)
    fail("--stop needs a tokenizer (to decode the text): give --tokenizer");
  if (!stops.empty() && quiet)
    fail("--stop works on the streamed text: leave out --quiet");
  std::vector<int64_t> promptIds;
  std::vector<std::vector<int64_t>> batchIds;
  std::string promptText = prompt;
  std::vector<int64_t> endOfTurn;
  std::string eosToken; // the chat template's eos_token
  std::unique_ptr<tfc::rt::ChatTemplate> tpl;
  nlohmann::ordered_json ctx = nlohmann::ordered_json::object();
  auto message = [](const char *role, const std::string &content) {
    nlohmann::ordered_json m = nlohmann::ordered_json::object();
    m["role"] = role;
    m["content"] = content;
    return m;
  };
  // The conversation rendered with the template and tokenised: the rendered
  // text holds the template's special tokens (<|im_start|>, BOS, ...) as
  // text; the tokenizer matches them as special tokens and adds none of its
  // own (transformers' apply_chat_template(tokenize=True) encodes with
  // add_special_tokens=False).
  auto renderConversation = [&](std::string &text) {
    std::string error;
    if (!tpl->renderJson(ctx.dump(), text, error))
      fail(error);
    tfc::rt::Encoding enc;
    if (!tokenizer->encode(text, /*addSpecialTokens=*/false, enc, error))
      fail(error);
    return enc.ids;
  };
  if (chat) {
    // The conversation: --messages, then --system first and --prompt last.
    std::string error;
    if (!templatePath.empty()) {
      tfc::rt::ChatTemplateSource source;
      std::string ignored;
      tfc::rt::readChatTemplate(tokenizerPath, source, ignored);
      tpl = tfc::rt::ChatTemplate::parse(readFile(templatePath), error,
                                         templatePath);
      if (tpl)
        tpl->setSpecialTokens(source.bos, source.eos);
      eosToken = source.eos;
    } else {
      tfc::rt::ChatTemplateSource source;
      if (!tfc::rt::readChatTemplate(tokenizerPath, source, error))
        fail(error);
      tpl = tfc::rt::ChatTemplate::parse(source.text, error, source.origin);
      if (tpl)
        tpl->setSpecialTokens(source.bos, source.eos);
      eosToken = source.eos;
    }
    if (!tpl)
      fail(error);
    if (!messagesPath.empty()) {
      nlohmann::ordered_json file;
      std::string jsonError;
      if (!tfc::rt::parseJsonDocument(readFile(messagesPath), messagesPath,
                                      file, jsonError))
        fail(jsonError);
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
    if (haveSystem)
      ctx["messages"].insert(ctx["messages"].begin(),
                             message("system", system));
    if (havePrompt)
      ctx["messages"].push_back(message("user", prompt));
    if (!ctx.contains("add_generation_prompt"))
      ctx["add_generation_prompt"] = true;
    if (!ctx["messages"].empty())
      promptIds = renderConversation(promptText);
    // The end of an assistant turn (SmolLM2: <|im_end|>).
    endOfTurn = tfc::rt::endOfTurnIds(*tpl, eosToken, *tokenizer);
  } else if (havePrompt) {
    for (const std::string &text : promptTexts) {
      tfc::rt::Encoding enc;
      std::string error;
      if (!tokenizer->encode(text, /*addSpecialTokens=*/true, enc, error))
        fail(error);
      batchIds.push_back(enc.ids);
    }
  } else {
    for (const std::string &text : idsTexts)
      batchIds.push_back(parseIds(text, "--ids"));
  }
  if (!batchIds.empty())
    promptIds = batchIds.front();
  for (const std::vector<int64_t> &ids : batchIds)
    if (ids.empty())
      fail("a prompt has no tokens");
  if (printPrompt) {
    nlohmann::ordered_json j;
    if (chat || havePrompt)
      j["text"] = promptText;
    j["ids"] = promptIds;
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  if (promptIds.empty() && !interactive)
    fail("the prompt has no tokens");
  std::vector<int64_t> eos;
  if (!eosText.empty())
    eos = parseIds(eosText, "--eos");
  else {
    // What the checkpoint states (GGUF keys, generation_config.json,
    // config.json), else the tokenizer's usual end-of-text tokens.
    std::string error;
    if (!tfc::rt::defaultEndOfSequenceIds({tokenizerPath, weights},
                                          tokenizer.get(), eos, error))
      fail(error);
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
    std::string error;
    if (!tfc::tools::bindWeightsCached(m, weights, packedCache, quiet, error))
      fail(error);
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
  // The session's context: what the prompt and the new tokens need, or in
  // an interactive chat the model's bound on positions (the caches' third
  // dim), at most 4096 unless --context says otherwise.
  int64_t total = static_cast<int64_t>(promptIds.size()) + maxNew;
  if (interactive && !context) {
    int64_t e = tfc_model_find_entry(m, entry.c_str());
    tfc_tensor_info cache;
    total = 4096;
    if (e >= 0 && tfc_entry_num_inputs(m, static_cast<size_t>(e)) > 1 &&
        tfc_entry_input_info(m, static_cast<size_t>(e), 1, &cache) == TFC_OK &&
        cache.rank == 4 && cache.dim_max[2] > 0)
      total = std::min<int64_t>(cache.dim_max[2], 4096);
  }
  // An encoder-decoder's decoder reads what its encoder wrote: the prompt
  // is the source, and the decoder's prompt is its start token.
  bool encoderDecoder = false;
  {
    int64_t e = tfc_model_find_entry(m, entry.c_str());
    if (e >= 0)
      for (size_t k = 0; k < tfc_entry_num_inputs(m, static_cast<size_t>(e));
           ++k) {
        tfc_tensor_info in;
        if (tfc_entry_input_info(m, static_cast<size_t>(e), k, &in) ==
                TFC_OK &&
            in.dtype != TFC_I64 &&
            !tfc_entry_input_is_state(m, static_cast<size_t>(e), k))
          encoderDecoder = true;
      }
  }
  if (encoderDecoder) {
    if (chat || interactive)
      fail("--chat and --interactive need a decoder-only model; entry '" +
           entry + "' is an encoder-decoder's decoder");
    if (decoderStart < 0) {
      // The checkpoint's decoder_start_token_id (config.json).
      std::string dir = weights;
      std::string configPath = dir + "/config.json", text, jsonError;
      nlohmann::json config;
      if (tfc::rt::readRegularFile(configPath, text,
                                   tfc::rt::kMaxConfigFileBytes, jsonError)) {
        if (!tfc::rt::parseJsonDocument(text, configPath, config, jsonError))
          fail(jsonError);
        if (config.contains("decoder_start_token_id") &&
            config["decoder_start_token_id"].is_number_integer())
          decoderStart = config["decoder_start_token_id"].get<int64_t>();
      }
      if (decoderStart < 0)
        fail("entry '" + entry + "' is an encoder-decoder's decoder: give "
             "its first token with --decoder-start (the checkpoint states "
             "no decoder_start_token_id)");
    }
    promptIds.assign(1, decoderStart);
    total = 1 + maxNew;
  }
  // Several prompts or beams: one row each, printed at the end.
  std::vector<std::vector<int64_t>> prompts =
      encoderDecoder ? std::vector<std::vector<int64_t>>(batchIds.size(),
                                                         promptIds)
                     : batchIds;
  if (batch || beam.beams > 1) {
    size_t width = 0;
    for (const std::vector<int64_t> &p : prompts)
      width = std::max(width, p.size());
    total = static_cast<int64_t>(width) + maxNew;
  }
  int64_t rows = static_cast<int64_t>(std::max<size_t>(prompts.size(), 1)) *
                 beam.beams;
  tfc_session *session = nullptr;
  if (tfc_session_create(m, entry.c_str(), rows, context ? context : total,
                         &session) != TFC_OK)
    fail(tfc_last_error());
  StepInputs inputs(m, session, entry);
  double encodeMs = 0;
  if (encoderDecoder)
    prepareEncoderDecoder(m, session, entry, inputs, batchIds, beam.beams,
                          encodeMs);
  else if (!inputs.needed().empty())
    fail("entry '" + entry + "' takes more than the token ids");
  else {
    // Cross-attention over keys computed from the weights alone (no
    // encoder): `<entry>_cross` takes no input and fills them once.
    std::string cross = entry.size() > 7 ? entry.substr(0, entry.size() - 7) +
                                               "_cross"
                                         : std::string();
    if (!cross.empty() && tfc_model_find_entry(m, cross.c_str()) >= 0 &&
        tfc_session_run_entry(session, cross.c_str(), nullptr, 0, nullptr,
                              0) != TFC_OK)
      fail(tfc_last_error());
  }
  tfc::rt::Sampler sampler(sampling);

  if (batch || beam.beams > 1) {
    beam.eos = eos;
    auto start = std::chrono::steady_clock::now();
    BatchResult r =
        generateBatch(session, inputs, prompts, beam, sampler, eos, maxNew);
    double totalMs = msSince(start) + encodeMs;
    size_t generated = 0, promptTokens = 0;
    for (size_t i = 0; i < prompts.size(); ++i) {
      generated += r.tokens[i].size();
      promptTokens += batchIds[i].size();
      if (tokenizer && !quiet) {
        std::string text, error;
        if (!tokenizer->decode(r.tokens[i], /*skipSpecialTokens=*/true, text,
                               error))
          fail(error);
        if (batch)
          std::printf("[%zu] ", i);
        std::printf("%s\n", text.c_str());
      }
    }
    std::string search =
        beam.beams > 1 ? "beam search, " + std::to_string(beam.beams) +
                             " beams"
                       : std::string(sample ? "sampling" : "greedy");
    std::fprintf(stderr,
                 "tfc-generate: %s; %zu sequence%s in one batch of %lld rows: "
                 "%zu prompt tokens%s, %zu generated; prefill %.1f ms, %.1f "
                 "decode steps/s over %lld steps (%.1f tokens/s); total %.1f "
                 "ms\n",
                 search.c_str(), prompts.size(), prompts.size() == 1 ? "" : "s",
                 static_cast<long long>(rows), promptTokens,
                 encoderDecoder ? " (source)" : "", generated,
                 r.prefillMs + encodeMs,
                 r.decodeSteps ? r.decodeSteps * 1000.0 / r.decodeMs : 0.0,
                 static_cast<long long>(r.decodeSteps),
                 r.decodeSteps ? (generated - prompts.size()) * 1000.0 /
                                     r.decodeMs
                               : 0.0,
                 totalMs);
    if (beam.beams > 1)
      for (size_t i = 0; i < prompts.size(); ++i)
        std::fprintf(stderr, "tfc-generate: sequence %zu: score %.6f\n", i,
                     r.scores[i]);
    if (printIds)
      for (size_t i = 0; i < prompts.size(); ++i) {
        if (batch)
          std::printf("ids[%zu]:", i);
        else
          std::printf("ids:");
        for (size_t k = 0; k < r.tokens[i].size(); ++k)
          std::printf("%s%lld", k ? "," : " ",
                      static_cast<long long>(r.tokens[i][k]));
        std::printf("\n");
      }
    tfc_session_free(session);
    tfc_model_free(m);
    return 0;
  }

  if (draws > 0) {
    // The prompt's next token, drawn `draws` times by the one sampler (its
    // seeded stream advancing as in generation), with the prompt as the
    // repetition penalty's history.
    int64_t vocab = 0;
    const float *logits =
        inputs.run(promptIds, 1, static_cast<int64_t>(promptIds.size()), vocab);
    if (!logitsOut.empty()) {
      std::string error;
      if (!tfc::rt::writeNpy(logitsOut, tfc::rt::DType::F32, {vocab}, logits,
                             error))
        fail(error);
    }
    std::map<int64_t, int64_t> counts;
    for (int64_t i = 0; i < draws; ++i)
      ++counts[sampler.sample(logits, static_cast<size_t>(vocab), promptIds)];
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    out["draws"] = draws;
    out["prompt_ids"] = promptIds;
    out["counts"] = nlohmann::ordered_json::object();
    for (const auto &[id, n] : counts)
      out["counts"][std::to_string(id)] = n;
    std::printf("%s\n", out.dump().c_str());
    tfc_session_free(session);
    tfc_model_free(m);
    return 0;
  }

  std::unique_ptr<tfc::rt::IncrementalDecoder> stream;
  if (tokenizer && !quiet)
    stream = std::make_unique<tfc::rt::IncrementalDecoder>(
        *tokenizer, /*skipSpecialTokens=*/true);
  // The text goes to standard output as it is decided.
  StreamedGeneration gen(session, inputs, sampler, eos, stops, stream.get(),
                         [](std::string_view text) {
                           std::fwrite(text.data(), 1, text.size(), stdout);
                           std::fflush(stdout);
                         });
  auto turn = [&](std::vector<int64_t> ids, bool streamPrompt) {
    if (gen.run(std::move(ids), maxNew, streamPrompt) ==
        FinishReason::ContextFull)
      std::fprintf(stderr,
                   "tfc-generate: note: the context of %lld tokens is full\n",
                   static_cast<long long>(tfc_session_context(session)));
    if (gen.decoder) {
      std::fputs("\n", stdout);
      std::fflush(stdout); // before the statistics on stderr
    }
  };
  auto start = std::chrono::steady_clock::now();
  // In chat mode only the reply is printed (the prompt still primes the
  // decoder, so the reply's first characters decode in context).
  if (!promptIds.empty())
    turn(promptIds, /*streamPrompt=*/!chat && !encoderDecoder);
  if (interactive) {
    // One user turn per line of standard input until its end. Each turn
    // renders the whole conversation and feeds only the tokens the session
    // does not hold yet; where the template renders earlier turns
    // differently than they were generated (e.g. it drops an end-of-turn
    // token), the session rewinds to the common prefix.
    if (!promptIds.empty())
      ctx["messages"].push_back(message("assistant", gen.reply));
    std::string line;
    for (;;) {
      std::fputs("> ", stderr);
      std::fflush(stderr);
      if (!std::getline(std::cin, line))
        break;
      if (line.empty())
        continue;
      ctx["messages"].push_back(message("user", line));
      std::string text;
      std::vector<int64_t> ids = renderConversation(text);
      size_t common = 0;
      while (common < ids.size() && common < gen.fed.size() &&
             ids[common] == gen.fed[common])
        ++common;
      if (common == ids.size() && common > 0)
        --common; // a turn must feed at least one token
      if (common < gen.fed.size()) {
        if (tfc_session_rewind(session, static_cast<int64_t>(common)) !=
            TFC_OK)
          fail(tfc_last_error());
        gen.fed.resize(common);
      }
      if (static_cast<int64_t>(ids.size()) >= tfc_session_context(session))
        fail("the conversation (" + std::to_string(ids.size()) +
             " tokens) no longer fits the context of " +
             std::to_string(tfc_session_context(session)) +
             " tokens (--context)");
      gen.history.assign(ids.begin(), ids.begin() + common);
      if (tokenizer && !quiet) {
        // A fresh decoder, primed with what the session holds.
        stream = std::make_unique<tfc::rt::IncrementalDecoder>(
            *tokenizer, /*skipSpecialTokens=*/true);
        std::string ignored, error;
        for (size_t i = 0; i < common; ++i)
          if (!stream->feed(ids[i], ignored, error))
            fail(error);
        gen.decoder = stream.get();
      }
      turn(std::vector<int64_t>(ids.begin() + common, ids.end()),
           /*streamPrompt=*/false);
      ctx["messages"].push_back(message("assistant", gen.reply));
    }
  }
  double totalMs = msSince(start);
  std::fprintf(stderr,
               "tfc-generate: %zu prompt tokens, %zu generated on %d threads; "
               "time to first token %.1f ms (prefill %.1f tokens/s); decode "
               "%.1f tokens/s over %lld steps; total %.1f ms\n",
               static_cast<size_t>(gen.promptTokens), gen.generated.size(),
               tfc_num_threads(), std::max(gen.firstTokenMs, 0.0),
               gen.promptTokens * 1000.0 / std::max(gen.prefillMs, 1e-9),
               gen.decodeSteps ? gen.decodeSteps * 1000.0 / gen.decodeMs : 0.0,
               static_cast<long long>(gen.decodeSteps), totalMs);
  if (sample)
    std::fprintf(stderr,
                 "tfc-generate: sampled with temperature %g, top-k %lld, "
                 "top-p %g, min-p %g, repetition penalty %g, seed %llu\n",
                 sampling.temperature, static_cast<long long>(sampling.topK),
                 sampling.topP, sampling.minP, sampling.repetitionPenalty,
                 static_cast<unsigned long long>(sampling.seed));
  if (stats) {
    tfc_resident_stats s = {};
    s.struct_size = sizeof(s);
    if (tfc_model_resident_stats(m, &s) != TFC_OK)
      fail(tfc_last_error());
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    auto mib = [](uint64_t b) { return b / 1048576.0; };
    std::fprintf(stderr,
                 "tfc-generate: resident: weights %.1f MiB, derived constants "
                 "%.1f MiB%s, KV cache %.1f MiB, arena %.1f MiB; process peak "
                 "%.1f MiB\n",
                 mib(s.weight_bytes), mib(s.constant_bytes),
                 s.packed_file_bytes ? " (a packed file)" : "",
                 mib(tfc_session_state_bytes(session)), mib(s.arena_bytes),
                 mib(static_cast<uint64_t>(usage.ru_maxrss) * 1024));
  }
  if (printIds) {
    std::printf("ids:");
    for (size_t i = 0; i < gen.generated.size(); ++i)
      std::printf("%s%lld", i ? "," : " ",
                  static_cast<long long>(gen.generated[i]));
    std::printf("\n");
  }
  tfc_session_free(session);
  tfc_model_free(m);
  return 0;
}

int main(int argc, char **argv) {
  try {
    return generate(argc, argv);
  } catch (const tfc::gen::Error &e) {
    fail(e.what());
  }
}
