//===- tfc-tokenize.cpp - Tokenize and detokenize from the command line ---===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//   tfc-tokenize TOKENIZER --text "..." [--text ...] [--pair "..."]
//   tfc-tokenize TOKENIZER --file F | --jsonl F     (a batch, padded)
//   tfc-tokenize TOKENIZER --ids 1,2,3 [--skip-special] [--stream]
//
// TOKENIZER is a tokenizer.json, a directory holding one, or a .gguf file
// (its tokenizer.ggml.* metadata). Prints ids and tokens (with type ids and
// the attention mask when the tokenizer has a post-processor or padding), or
// with --json one JSON object for scripts and tests. Links libtfcrt only.
// Every error is "tfc-tokenize: error: ..." and exit status 1.
//
//===----------------------------------------------------------------------===//

#include "tfc/Formats/Files.h"
#include "tfc/Text/Tokenizer/Tokenizer.h"
#include "tfc/Text/Tokenizer/TokenizerSource.h"

#include "CommandLine.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

using namespace tfc::rt;
using json = nlohmann::json;

namespace {

const char *const kUsage = R"(usage: tfc-tokenize TOKENIZER [options]

Encodes text to token ids or decodes ids to text with a Hugging Face
tokenizer.json (or a directory holding one) or the tokenizer of a .gguf file.

input (one of):
      --text TEXT         encode TEXT (repeatable: a batch)
      --pair TEXT         with one --text: encode the pair (TEXT second)
      --file FILE         encode each line of FILE (a batch; "-" is stdin)
      --jsonl FILE        encode each line of FILE, a JSON string or an
                          object with a "text" member (keeps newlines)
      --ids 1,2,3         decode these ids

options:
      --no-special        do not add the post-processor's special tokens
      --skip-special      decoding: drop special tokens
      --stream            decoding: also feed the ids one at a time to the
                          incremental decoder and print the pieces
      --no-truncation     ignore the file's truncation
      --no-padding        ignore the file's padding
      --max-length N      truncate encodings to N ids (special included)
      --pad-to N          pad each encoding to N ids
      --pad-longest       pad a batch to its longest encoding
      --roundtrip         encoding: also decode each encoding's ids, with
                          and without special tokens
      --json              print one JSON object
  -h, --help              this text

exit status: 0 on success, 1 on any error.
)";

[[noreturn]] void die(const std::string &message) {
  std::fprintf(stderr, "tfc-tokenize: error: %s\n", message.c_str());
  std::exit(1);
}

std::string readFile(const std::string &path) {
  if (path == "-") {
    std::ostringstream buffer;
    buffer << std::cin.rdbuf();
    return buffer.str();
  }
  std::string text, error;
  if (!tfc::rt::readRegularFile(path, text, uint64_t(1) << 40, error))
    die(error);
  return text;
}

std::vector<std::string> lines(const std::string &text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos)
      end = text.size();
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    out.push_back(std::move(line));
    start = end + 1;
  }
  return out;
}

std::vector<std::string> jsonLines(const std::string &path) {
  std::vector<std::string> out;
  std::vector<std::string> ls = lines(readFile(path));
  for (size_t k = 0; k < ls.size(); ++k) {
    if (ls[k].empty())
      continue;
    json v = json::parse(ls[k], nullptr, false);
    std::string where = path + ":" + std::to_string(k + 1) + ": ";
    if (v.is_discarded())
      die(where + "not a JSON value");
    if (v.is_object() && v.contains("text"))
      v = v["text"];
    if (!v.is_string())
      die(where + "expected a JSON string or {\"text\": string}");
    out.push_back(v.get<std::string>());
  }
  return out;
}

std::vector<int64_t> parseIds(const std::string &text) {
  std::vector<int64_t> ids;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos)
      end = text.size();
    std::string item = text.substr(start, end - start);
    while (!item.empty() && item.front() == ' ')
      item.erase(0, 1);
    while (!item.empty() && item.back() == ' ')
      item.pop_back();
    if (item.empty()) {
      if (text.find_first_not_of(" ") == std::string::npos)
        break; // "--ids ''": no ids
      die("--ids: an empty item in \"" + text + "\"");
    }
    errno = 0;
    char *stop = nullptr;
    long long n = std::strtoll(item.c_str(), &stop, 10);
    if (*stop || errno == ERANGE)
      die("--ids: \"" + item + "\" is not an integer id");
    ids.push_back(n);
    start = end + 1;
  }
  return ids;
}

std::string dump(const json &v) {
  return v.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string listText(const std::vector<int64_t> &v) {
  std::string out = "[";
  for (size_t k = 0; k < v.size(); ++k)
    out += (k ? ", " : "") + std::to_string(v[k]);
  return out + "]";
}

} // namespace

int main(int argc, char **argv) {
  std::string path;
  std::vector<std::string> texts;
  std::optional<std::string> pair, idsText, file, jsonl;
  bool addSpecial = true, skipSpecial = false, stream = false, asJson = false,
       roundtrip = false, noTruncation = false, noPadding = false;
  std::optional<size_t> maxLength, padTo;
  bool padLongest = false;
  std::string pairText, idsValue, fileValue, jsonlValue;
  size_t maxLengthValue = 0, padToValue = 0;
  tfc::tools::CommandLine cli("tfc-tokenize", kUsage);
  cli.add_option("tokenizer", path);
  cli.addRepeated("--text", texts);
  cli.add_option("--pair", pairText);
  cli.add_option("--file", fileValue);
  cli.add_option("--jsonl", jsonlValue);
  cli.add_option("--ids", idsValue);
  cli.add_flag("--no-special", [&](int64_t) { addSpecial = false; });
  cli.add_flag("--skip-special", skipSpecial);
  cli.add_flag("--stream", stream);
  cli.add_flag("--json", asJson);
  cli.add_flag("--roundtrip", roundtrip);
  cli.add_flag("--no-truncation", noTruncation);
  cli.add_flag("--no-padding", noPadding);
  cli.add_option("--max-length", maxLengthValue)
      ->transform(tfc::tools::nonNegativeInteger());
  cli.add_flag("--pad-longest", padLongest);
  cli.add_option("--pad-to", padToValue)
      ->transform(tfc::tools::nonNegativeInteger() &
                  CLI::Range(size_t(0), kMaxPadding));
  cli.parseOrExit(argc, argv);
  if (cli.count("--pair"))
    pair = pairText;
  if (cli.count("--ids"))
    idsText = idsValue;
  if (cli.count("--file"))
    file = fileValue;
  if (cli.count("--jsonl"))
    jsonl = jsonlValue;
  if (cli.count("--max-length"))
    maxLength = maxLengthValue;
  if (cli.count("--pad-to"))
    padTo = padToValue;
  if (path.empty())
    die("no tokenizer given (see --help)");
  int inputs = !texts.empty() + file.has_value() + jsonl.has_value() +
               idsText.has_value();
  if (inputs != 1)
    die("give exactly one of --text, --file, --jsonl and --ids");
  if (pair && texts.size() != 1)
    die("--pair needs exactly one --text");

  std::string error;
  std::unique_ptr<Tokenizer> tok = openTokenizer(path, error);
  if (!tok)
    die(error);

  if (idsText) {
    std::vector<int64_t> ids = parseIds(*idsText);
    std::string text;
    if (!tok->decode(ids, skipSpecial, text, error))
      die(error);
    json out = {{"text", text}};
    std::vector<std::string> pieces;
    if (stream) {
      IncrementalDecoder dec(*tok, skipSpecial);
      for (int64_t id : ids) {
        std::string piece;
        if (!dec.feed(id, piece, error))
          die(error);
        pieces.push_back(piece);
      }
      std::string rest;
      if (!dec.finish(rest, error))
        die(error);
      pieces.push_back(rest);
      out["stream"] = pieces;
    }
    if (asJson) {
      std::printf("%s\n", dump(out).c_str());
    } else {
      std::printf("%s\n", text.c_str());
      if (stream)
        for (const std::string &p : pieces)
          std::printf("piece: %s\n", dump(json(p)).c_str());
    }
    return 0;
  }

  if (noTruncation)
    tok->setTruncation(std::nullopt);
  if (noPadding)
    tok->setPadding(std::nullopt);
  if (maxLength) {
    TruncationParams p = tok->truncation().value_or(TruncationParams());
    p.maxLength = *maxLength;
    tok->setTruncation(p);
  }
  if (padTo || padLongest) {
    PaddingParams p = tok->padding().value_or(PaddingParams());
    if (!tok->padding())
      for (const char *name : {"[PAD]", "<pad>"})
        if (std::optional<int64_t> id = tok->tokenToId(name)) {
          p.padId = *id;
          p.padToken = name;
          break;
        }
    p.strategy = padTo ? PaddingParams::Strategy::Fixed
                       : PaddingParams::Strategy::BatchLongest;
    p.length = padTo.value_or(0);
    tok->setPadding(p);
  }

  if (file)
    texts = lines(readFile(*file));
  else if (jsonl)
    texts = jsonLines(*jsonl);

  std::vector<Encoding> encodings;
  if (pair) {
    encodings.resize(1);
    if (!tok->encodePair(texts[0], *pair, addSpecial, encodings[0], error))
      die(error);
  } else if (!tok->encodeBatch(texts, addSpecial, encodings, error)) {
    die(error);
  }

  bool showMasks = tok->padding() || tok->truncation() ||
                   std::string(tok->modelType()) == "WordPiece" || pair;
  json all = json::array();
  for (size_t k = 0; k < encodings.size(); ++k) {
    const Encoding &e = encodings[k];
    std::vector<std::string> tokens;
    for (int64_t id : e.ids)
      tokens.push_back(tok->idToToken(id).value_or("?"));
    json item = {{"ids", e.ids},
                 {"tokens", tokens},
                 {"type_ids", e.typeIds},
                 {"attention_mask", e.attentionMask},
                 {"special_tokens_mask", e.specialTokensMask}};
    if (roundtrip) {
      std::string withSpecial, withoutSpecial;
      if (!tok->decode(e.ids, false, withSpecial, error) ||
          !tok->decode(e.ids, true, withoutSpecial, error))
        die("input " + std::to_string(k) + ": " + error);
      item["decoded"] = withSpecial;
      item["decoded_skip_special"] = withoutSpecial;
    }
    if (asJson) {
      all.push_back(std::move(item));
      continue;
    }
    std::printf("input %zu: %s\n", k, dump(json(texts[k])).c_str());
    std::printf("  ids:            %s\n", listText(e.ids).c_str());
    std::printf("  tokens:         %s\n", dump(json(tokens)).c_str());
    if (showMasks) {
      std::printf("  type_ids:       %s\n", listText(e.typeIds).c_str());
      std::printf("  attention_mask: %s\n", listText(e.attentionMask).c_str());
    }
    if (roundtrip) {
      std::printf("  decoded:        %s\n", dump(item["decoded"]).c_str());
      std::printf("  decoded (skip): %s\n",
                  dump(item["decoded_skip_special"]).c_str());
    }
  }
  if (asJson) {
    json out = {{"model", tok->modelType()},
                {"vocab_size", tok->vocabSize()},
                {"encodings", std::move(all)}};
    std::printf("%s\n", dump(out).c_str());
  }
  return 0;
}
