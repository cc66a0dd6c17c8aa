//===- ChatTemplate.h - Hugging Face chat templates -------------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Renders the chat template of a checkpoint: the Jinja2 program that turns a
// conversation (a list of {role, content} messages) into the text an
// instruction-tuned model was trained on, e.g. for SmolLM2
//
//   <|im_start|>user\nWhat is the capital of France?<|im_end|>\n
//   <|im_start|>assistant\n
//
// The renderer implements the subset of Jinja2 that Hugging Face chat
// templates use, with the environment of transformers' apply_chat_template
// (trim_blocks, lstrip_blocks, loop controls, raise_exception, strftime_now,
// a tojson filter that does not escape HTML):
//
//   {{ expr }}, {% if %}/{% elif %}/{% else %}/{% endif %},
//   {% for x in xs [if cond] %} ... [{% else %}] {% endfor %} (with loop.index,
//   index0, revindex, revindex0, first, last, length, previtem, nextitem;
//   `for k, v in d.items()`), {% set x = e %}, {% set ns.attr = e %},
//   {% set x %}...{% endset %}, {% break %}, {% continue %},
//   {% macro f(a, b=default) %}...{% endmacro %} (recursion bounded),
//   {% generation %}...{% endgeneration %}, {# comments #}, whitespace control
//   ({%- -%} {{- -}} {%+), string/number/list/dict literals, + - * / // % **
//   ~, comparisons (chained), and/or/not, in/not in, `a if c else b`,
//   attribute and subscript access (slices too), `is [not] test`
//   (defined, undefined, none, string, number, integer, float, boolean, true,
//   false, mapping, iterable, sequence, odd, even, divisibleby, eq, ne, ...),
//   filters (trim, length/count, tojson, upper, lower, capitalize, title,
//   first, last, default/d, join, string, int, float, list, replace, reverse,
//   items, safe, abs, selectattr, rejectattr, map(attribute=...)), string,
//   dict and list methods (strip, split, startswith, items, get, ...) and the
//   globals raise_exception, range, namespace, strftime_now.
//
// Values behave as in Python/Jinja2: `{{ none }}` prints "None", undefined
// variables print nothing and are false, `+` on a string and a number is an
// error, dicts keep their order, floats print as Python's repr, white space
// is Python's (U+00A0, U+3000, ...) and case mappings are Unicode's (simple
// mappings from utf8proc, with ß -> SS). Not supported, each an error naming
// it: call/filter blocks, include/import/extends, recursive loops, `%`
// string formatting.
//
// Every failure is an error message, never a crash or a hang: template
// errors name line:col and what was expected ("chat template:3:14: expected
// 'endfor' to close the 'for' at 1:1, found the end of the template");
// rendering is bounded (the output, every string and list, the work done and
// the nesting of values), and raise_exception('...') becomes an error with
// its message.
//
// Plain C++17 with no LLVM dependency: this is part of libtfcrt.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TEXT_JINJA_CHATTEMPLATE_H
#define TFC_TEXT_JINJA_CHATTEMPLATE_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tfc::rt {

class Tokenizer;

struct ChatMessage {
  std::string role;
  std::string content;
};

/// The limits a rendering runs under (the defaults suit any real
/// conversation; tests lower them).
struct ChatTemplateLimits {
  /// The most bytes of output, and of any string or list built on the way.
  size_t maxOutput = size_t(16) << 20;
  /// Work units: one per expression and statement evaluated, plus one per
  /// 64 bytes of strings built.
  size_t maxWork = 10'000'000;
};

class ChatTemplate {
public:
  struct Impl;

  /// Parses a template. `name` prefixes error messages ("NAME:LINE:COL: ...").
  /// Returns null and sets `error` on a syntax error.
  static std::unique_ptr<ChatTemplate>
  parse(std::string_view source, std::string &error,
        const std::string &name = "chat template");
  ~ChatTemplate();
  ChatTemplate(const ChatTemplate &) = delete;
  ChatTemplate &operator=(const ChatTemplate &) = delete;

  /// The values of `bos_token` and `eos_token` (default, or "": undefined).
  void setSpecialTokens(std::string bos, std::string eos);
  void setLimits(const ChatTemplateLimits &limits);

  /// Renders `messages` (each a dict with "role" and "content") with
  /// add_generation_prompt, bos_token and eos_token.
  bool render(const std::vector<ChatMessage> &messages,
              bool addGenerationPrompt, std::string &out,
              std::string &error) const;
  /// Renders with the variables of a JSON object: typically "messages" (a
  /// list of dicts, which may carry any keys) and "add_generation_prompt";
  /// bos_token and eos_token are added unless the object has them. Bad JSON
  /// is an error.
  bool renderJson(std::string_view contextJson, std::string &out,
                  std::string &error) const;

  /// The text that follows an assistant message's content in this template,
  /// up to the next message (for SmolLM2 "<|im_end|>\n"): rendered from a
  /// user/assistant exchange with marker contents. Empty when the template
  /// cannot render such an exchange.
  std::string assistantSuffix() const;

  /// The template's source as given.
  const std::string &source() const;

private:
  explicit ChatTemplate(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Where a checkpoint keeps its chat template, and its special tokens.
struct ChatTemplateSource {
  /// The template text.
  std::string text;
  /// bos_token / eos_token as strings (empty when unknown).
  std::string bos, eos;
  /// For messages: "FILE: tokenizer.chat_template", "DIR/tokenizer_config.json:
  /// chat_template", ...
  std::string origin;
};

/// Reads the chat template of a checkpoint:
///  * a .gguf file (by its magic): `tokenizer.chat_template`, with bos/eos
///    from tokenizer.ggml.{bos,eos}_token_id;
///  * a Hugging Face directory, or a tokenizer.json inside one:
///    chat_template.jinja if present (newer transformers save it there), else
///    chat_template.json's "chat_template", else tokenizer_config.json's
///    "chat_template" (a string, or a list of {name, template} where the one
///    named "default" is taken), with its bos_token/eos_token;
///  * any other file: the template itself (a .jinja file).
/// Fails, naming the file and key, when there is no template or a key has
/// the wrong type.
bool readChatTemplate(const std::string &checkpointPath,
                      ChatTemplateSource &out, std::string &error);

/// The ids that end an assistant turn rendered by `tpl`: the id of its
/// `eosToken` (the template's eos_token, may be empty) and, when the text
/// after an assistant message starts with a special token (SmolLM2's
/// "<|im_end|>\n"), that token's id. Generation stops at these besides the
/// checkpoint's end-of-sequence ids.
std::vector<int64_t> endOfTurnIds(const ChatTemplate &tpl,
                                  const std::string &eosToken,
                                  const Tokenizer &tokenizer);

/// readChatTemplate + ChatTemplate::parse + setSpecialTokens.
std::unique_ptr<ChatTemplate>
openChatTemplate(const std::string &checkpointPath, std::string &error);

} // namespace tfc::rt

#endif // TFC_TEXT_JINJA_CHATTEMPLATE_H
