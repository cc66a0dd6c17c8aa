//===- ChatTemplateTest.cpp - Jinja chat templates
//-------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// ChatTemplate on hand-written templates, one construct at a time, with the
// output jinja2 3.1.6 gives in transformers' environment (trim_blocks,
// lstrip_blocks; checked with test/Runtime/Inputs/chat_template_reference.py's
// renderer); every error with its line:col; the limits; where templates come
// from (tokenizer_config.json in its forms, chat_template.jinja, a GGUF).
//
//===----------------------------------------------------------------------===//

#include "tfc/Text/Jinja/ChatTemplate.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using namespace tfc::rt;

namespace {

/// The rendering of `tpl` with the JSON context, or "ERROR: message".
std::string render(const std::string &tpl, const std::string &context = "{}") {
  std::string error, out;
  std::unique_ptr<ChatTemplate> t = ChatTemplate::parse(tpl, error);
  if (!t)
    return "ERROR: " + error;
  if (!t->renderJson(context, out, error))
    return "ERROR: " + error;
  return out;
}

const char *const kMessages =
    R"({"messages": [{"role": "system", "content": "Be brief."},
                     {"role": "user", "content": "Hi there"},
                     {"role": "assistant", "content": " Hello! "},
                     {"role": "user", "content": "2+2?"}]})";

// The template of SmolLM2-135M-Instruct's GGUF (tokenizer.chat_template).
const char *const kSmolLM2 =
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != "
    "'system' %}{{ '<|im_start|>system\nYou are a helpful AI assistant named "
    "SmolLM, trained by Hugging Face<|im_end|>\n' }}{% endif "
    "%}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + "
    "'<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ "
    "'<|im_start|>assistant\n' }}{% endif %}";

TEST(ChatTemplate, ExpressionsAndValues) {
  EXPECT_EQ(render("{{ 'a' + 'b' ~ 1 ~ none ~ true }}"), "ab1NoneTrue");
  EXPECT_EQ(render("{{ \"q'\" }} {{ 'tab\\tx' }} {{ 'a' 'b' }}"),
            "q' tab\tx ab");
  EXPECT_EQ(render("{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} "
                   "{{ 7 / 2 }} {{ 2 ** 10 }} {{ 1.5 + 1 }} {{ 0.1 + 0.2 }} "
                   "{{ 1e20 }} {{ 1e-5 }} {{ 3.0 }} {{ -2 ** 2 }}"),
            "3 -4 1 2 3.5 1024 2.5 0.30000000000000004 1e+20 1e-05 3.0 4");
  EXPECT_EQ(render("{{ (1, 2) }} {{ (1,) }} {{ [1, 'a', none] }} "
                   "{{ {'k': 'v', 'n': [true]} }} {{ ['it\\'s'] }}"),
            "(1, 2) (1,) [1, 'a', None] {'k': 'v', 'n': [True]} [\"it's\"]");
  EXPECT_EQ(render("{{ 'a' if x else 'b' }}|{{ 'c' if not x }}|{{ 'd' if x }}",
                   R"({"x": 0})"),
            "b|c|");
  EXPECT_EQ(render("{{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ 'a' < 'b' }} "
                   "{{ [1, 2] == [1, 2] }} {{ 1 == 1.0 }} {{ true == 1 }} "
                   "{{ 'a' != 'a' }}"),
            "True False True True True True False");
  EXPECT_EQ(
      render("{{ 'x' in 'xyz' }} {{ 'q' not in 'xyz' }} {{ 1 in [1, 2] }} "
             "{{ 'a' in {'a': 1} }} {{ not false and true or false }} "
             "{{ 0 or 'y' }} {{ 1 and 'z' }}"),
      "True True True True True y z");
}

TEST(ChatTemplate, AttributesSubscriptsAndSlices) {
  EXPECT_EQ(render("{{ messages[1]['role'] }} {{ messages[1].content }} "
                   "{{ messages[-1].content }} {{ messages | length }}",
                   kMessages),
            "user Hi there 2+2? 4");
  EXPECT_EQ(
      render("{{ [1, 2, 3][1:] }} {{ 'hello'[1:-1] }} {{ 'hello'[::-1] }} "
             "{{ messages[1:] | length }} {{ '日本語'[1] }} {{ x.0 }}",
             R"({"messages": [1, 2, 3], "x": ["first"]})"),
      "[2, 3] ell olleh 2 本 first");
  // Missing keys and attributes are undefined: empty, false, not defined.
  EXPECT_EQ(render("[{{ d.missing }}][{{ d['missing'] }}][{{ [1][5] }}]"
                   "{{ d.missing is defined }}",
                   R"({"d": {"a": 1}})"),
            "[][][]False");
}

TEST(ChatTemplate, IfAndFor) {
  EXPECT_EQ(render("{% if x == 1 %}one{% elif x == 2 %}two{% else %}many"
                   "{% endif %}",
                   R"({"x": 2})"),
            "two");
  EXPECT_EQ(render("{% for m in messages %}{{ loop.index }}/{{ loop.index0 }}/"
                   "{{ loop.first }}/{{ loop.last }}/{{ loop.length }}/"
                   "{{ loop.revindex }}:{{ m.role }};{% endfor %}",
                   kMessages),
            "1/0/True/False/4/4:system;2/1/False/False/4/3:user;"
            "3/2/False/False/4/2:assistant;4/3/False/True/4/1:user;");
  EXPECT_EQ(render("{% for x in [] %}a{% else %}empty{% endfor %} "
                   "{% for x in [1, 2, 3, 4] if x is even %}{{ x }}"
                   "{{ loop.length }}{% endfor %}"),
            "empty 2242");
  EXPECT_EQ(render("{% for x in range(10) %}{% if x == 2 %}{% continue %}"
                   "{% endif %}{% if x > 5 %}{% break %}{% endif %}{{ x }}"
                   "{% endfor %}"),
            "01345");
  EXPECT_EQ(render("{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}"
                   "{% for k in d %}{{ k }}{% endfor %} {{ d.get('a') }} "
                   "{{ d.get('z', 5) }} {% for kv in d.items() %}{{ kv }}"
                   "{% endfor %}",
                   R"({"d": {"b": 1, "a": 2}})"),
            "b=1;a=2;ba 2 5 ('b', 1)('a', 2)");
  EXPECT_EQ(render("{% for m in messages %}{{ loop.previtem is defined }}"
                   "{{ loop.nextitem is defined }}{{ loop.cycle('x', 'y') }} "
                   "{% endfor %}",
                   kMessages),
            "FalseTruex TrueTruey TrueTruex TrueFalsey ");
}

TEST(ChatTemplate, SetScopesAndNamespaces) {
  // A set inside a loop lasts one iteration; namespaces carry state out.
  EXPECT_EQ(render("{% set x = 1 %}{% for i in [1, 2, 3] %}{{ x }}"
                   "{% set x = i %}{{ x }}{% endfor %}{{ x }}"),
            "1112131");
  EXPECT_EQ(render("{% set ns = namespace(found=false, n=0) %}"
                   "{% for m in messages %}{% if m.role == 'user' %}"
                   "{% set ns.found = true %}{% set ns.n = ns.n + 1 %}"
                   "{% endif %}{% endfor %}{{ ns.found }} {{ ns.n }}",
                   kMessages),
            "True 2");
  EXPECT_EQ(render("{% set s %}inner {{ 1 + 1 }}{% endset %}[{{ s }}]"),
            "[inner 2]");
  EXPECT_EQ(render("{% if true %}{% set y = 'kept' %}{% endif %}{{ y }}"),
            "kept");
}

TEST(ChatTemplate, WhitespaceControl) {
  // {%- -%} {{- -}} strip all white space, newlines included.
  EXPECT_EQ(
      render("  {%- if true -%}  x  {%- endif -%}  y\n  {{- ' z ' -}}\n w"),
      "xy z w");
  // trim_blocks drops the newline after a block tag, lstrip_blocks the
  // indentation before one; `{%+` keeps it; {{ }} are untouched.
  EXPECT_EQ(render("{% for m in messages %}\n  {% if m.role == 'user' %}\n"
                   "    U: {{ m.content | trim }}\n  {% endif %}\n"
                   "{% endfor %}\n",
                   kMessages),
            "    U: Hi there\n    U: 2+2?\n");
  EXPECT_EQ(render("  {%+ if true %}y{% endif %}"), "  y");
  EXPECT_EQ(render("x  {% if true %}y{% endif %}"), "x  y");
  EXPECT_EQ(render("{{ 'a' }}\n  {% if true %}y{% endif %}"), "a\ny");
  EXPECT_EQ(render("{# comment #}\n  {# indented #}\nx"), "x");
  // Newlines are normalised; one trailing newline is dropped.
  EXPECT_EQ(render("a\r\nb\r\n"), "a\nb");
  EXPECT_EQ(render("a\n\n"), "a\n");
}

TEST(ChatTemplate, FiltersTestsAndMethods) {
  EXPECT_EQ(render("{{ messages | length }} {{ 'héllo' | length }} "
                   "{{ ' x ' | trim }}| {{ undefined_thing | default('d') }} "
                   "{{ [3, 1] | first }} {{ [3, 1] | last }} "
                   "{{ [1, 2] | join('-') }} {{ 'ab' | upper }} "
                   "{{ 'hello world' | title }} {{ 3 | string + 'x' }} "
                   "{{ '12' | int + 1 }} {{ -1 | abs }} {{ 'abc' | reverse }}",
                   kMessages),
            "4 5 x| d 3 1 1-2 AB Hello World 3x 13 1 cba");
  EXPECT_EQ(render("{{ messages[0] | tojson }} {{ {'a': [1, 2.5, none, true, "
                   "'x\"y\\n'], 'b': {}} | tojson }} {{ 'é' | tojson }}",
                   kMessages),
            R"({"role": "system", "content": "Be brief."} )"
            R"({"a": [1, 2.5, null, true, "x\"y\n"], "b": {}} "é")");
  EXPECT_EQ(render("{{ {'a': [1, {'b': 2}], 'c': []} | tojson(indent=2) }}"),
            "{\n  \"a\": [\n    1,\n    {\n      \"b\": 2\n    }\n  ],\n"
            "  \"c\": []\n}");
  EXPECT_EQ(render("{{ x is defined }} {{ y is not defined }} {{ x is none }} "
                   "{{ 1 is not none }} {{ 'a' is string }} {{ 3 is odd }} "
                   "{{ {} is mapping }} {{ 6 is divisibleby 3 }}",
                   R"({"x": null})"),
            "True True True True True True True True");
  EXPECT_EQ(render("{{ messages | selectattr('role', 'equalto', 'user') | list "
                   "| length }} {{ messages | map(attribute='role') | "
                   "join(',') }}",
                   kMessages),
            "2 system,user,assistant,user");
  EXPECT_EQ(render("{{ '  x  '.strip() }}|{{ 'a,b'.split(',') }}|"
                   "{{ 'Hello'.startswith('He') }}|"
                   "{{ 'Hello'.endswith(('x', 'lo')) }}|{{ 'a b'.split() }}|"
                   "{{ 'xx'.replace('x', 'y') }}|{{ '-'.join(['a', 'b']) }}"),
            "x|['a', 'b']|True|True|['a', 'b']|yy|a-b");
}

TEST(ChatTemplate, Macros) {
  EXPECT_EQ(render("{% macro f(a, b='x') %}[{{ a }}{{ b }}]{% endmacro %}"
                   "{{ f(1) }}{{ f(2, 'y') }}{{ f(b='z', a=3) }}{{ f() }}"),
            "[1x][2y][3z][x]");
  // A macro sees the template's variables and its parameters, not the
  // caller's loop variables; it can call itself.
  EXPECT_EQ(render("{% set g = 'G' %}{% macro m() %}{{ g }}{{ x }}"
                   "{{ i is defined }}{% endmacro %}{% for i in [1] %}{{ m() }}"
                   "{% endfor %}",
                   R"({"x": "X"})"),
            "GXFalse");
  EXPECT_EQ(render("{% macro t(s) %}{% if s is string %}{{ s }}{% else %}"
                   "[{% for x in s %}{{ t(x) }}{% if not loop.last %},"
                   "{% endif %}{% endfor %}]{% endif %}{% endmacro %}"
                   "{{ t(['a', ['b', 'c']]) }}"),
            "[a,[b,c]]");
  EXPECT_EQ(render("{% macro f(a) %}{{ a }}{% endmacro %}{{ f(1, 2) }}"),
            "ERROR: chat template:1:41: macro 'f' takes 1 argument, not 2");
  EXPECT_EQ(render("{% macro f(a) %}{{ a }}{% endmacro %}{{ f(b=1) }}"),
            "ERROR: chat template:1:41: macro 'f' has no parameter 'b'");
  EXPECT_EQ(render("{% macro f(a) %}{{ f(a) }}{% endmacro %}{{ f(1) }}"),
            "ERROR: chat template:1:20: macros called more than 50 deep");
}

TEST(ChatTemplate, UnicodeWhiteSpaceAndCase) {
  // Python's str.isspace() white space (also jinja2's \s), and case
  // mappings beyond ASCII.
  EXPECT_EQ(render("{{ '\u00a0 x \u3000' | trim }}|{{ ' a\u2003b '.split() }}|"
                   "{{ '\u00a0'.isspace() }}|{{ '\u00c9COLE \u00e9t\u00e9' | "
                   "lower }}|{{ 'stra\u00dfe' | upper }}|"
                   "{{ \"it's a-test (x) [y]\" | title }}|"
                   "{{ \"it's a-test\".title() }}|{{ '\u00e9a' | capitalize }}|"
                   "{{ 'xyx'.strip('x') }}"),
            "x|['a', 'b']|True|\u00e9cole \u00e9t\u00e9|STRASSE|"
            "It's A-Test (X) [Y]|It'S A-Test|\u00c9a|y");
  EXPECT_EQ(render("a \u00a0\n  \u3000{% if true %}x{% endif %}\n{{- ' y' }}"),
            "a \u00a0\nx y");
}

TEST(ChatTemplate, MessagesAndSpecialTokens) {
  std::string error, out;
  auto t = ChatTemplate::parse(kSmolLM2, error);
  ASSERT_TRUE(t) << error;
  ASSERT_TRUE(
      t->render({{"user", "What is the capital of France?"}}, true, out, error))
      << error;
  EXPECT_EQ(out, "<|im_start|>system\nYou are a helpful AI assistant named "
                 "SmolLM, trained by Hugging Face<|im_end|>\n<|im_start|>user\n"
                 "What is the capital of France?<|im_end|>\n"
                 "<|im_start|>assistant\n");
  ASSERT_TRUE(t->render({{"system", "S"}, {"user", "U"}, {"assistant", "A"}},
                        false, out, error));
  EXPECT_EQ(out, "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU"
                 "<|im_end|>\n<|im_start|>assistant\nA<|im_end|>\n");
  EXPECT_EQ(t->assistantSuffix(), "<|im_end|>\n");

  auto b = ChatTemplate::parse("{{ bos_token }}{% for m in messages %}"
                               "{{ m.content }}{{ eos_token }}{% endfor %}",
                               error);
  ASSERT_TRUE(b);
  ASSERT_TRUE(b->render({{"user", "x"}}, false, out, error));
  EXPECT_EQ(out, "x");
  b->setSpecialTokens("<s>", "</s>");
  ASSERT_TRUE(b->render({{"user", "x"}}, false, out, error));
  EXPECT_EQ(out, "<s>x</s>");
  // The context's own values win.
  ASSERT_TRUE(
      b->renderJson(R"({"messages": [], "bos_token": "B"})", out, error));
  EXPECT_EQ(out, "B");
  EXPECT_FALSE(b->renderJson("[1]", out, error));
  EXPECT_EQ(error, "the chat context must be a JSON object");
  EXPECT_FALSE(b->renderJson("{", out, error));
}

TEST(ChatTemplate, SyntaxErrorsNameLineAndColumn) {
  EXPECT_EQ(render("ab\n{% if x %}\nc"),
            "ERROR: chat template:3:2: expected 'elif', 'else' or 'endif' to "
            "close the 'if' at 2:4, found the end of the template");
  EXPECT_EQ(render("{% for x in y %}{% endif %}"),
            "ERROR: chat template:1:20: unexpected 'endif', expected 'endfor' "
            "or 'else' to close the 'for' at 1:4");
  EXPECT_EQ(render("{% endfor %}"),
            "ERROR: chat template:1:4: unexpected 'endfor': no open block");
  EXPECT_EQ(render("{{ x + }}"),
            "ERROR: chat template:1:8: expected an expression, found '}}'");
  EXPECT_EQ(render("{{ 'abc }}"),
            "ERROR: chat template:1:4: unterminated string: expected '");
  EXPECT_EQ(render("{{ x "), "ERROR: chat template:1:1: unterminated '{{': "
                             "expected '}}'");
  EXPECT_EQ(render("{# x"),
            "ERROR: chat template:1:1: unterminated comment: expected '#}'");
  EXPECT_EQ(render("{{ (1 ] }}"),
            "ERROR: chat template:1:7: unexpected ']', expected ')'");
  EXPECT_EQ(render("{% foo %}"),
            "ERROR: chat template:1:4: unknown tag 'foo' (expected if, for, "
            "set, break, continue or generation)");
  EXPECT_EQ(render("{% call f() %}{% endcall %}"),
            "ERROR: chat template:1:4: the 'call' tag is not supported");
  EXPECT_EQ(render("{% macro f(a='x', b) %}{% endmacro %}"),
            "ERROR: chat template:1:19: a parameter without a default after "
            "one with a default");
  EXPECT_EQ(render("{% break %}"),
            "ERROR: chat template:1:4: 'break' outside a loop");
  EXPECT_EQ(render("{{ 1 is defined is defined }}"),
            "ERROR: chat template:1:17: tests cannot be chained with 'is'");
  EXPECT_EQ(
      render("{% set x %}"),
      "ERROR: chat template:1:12: expected 'endset' to close the 'set' at "
      "1:4, found the end of the template");
  EXPECT_EQ(render("{{ 99999999999999999999 }}"),
            "ERROR: chat template:1:4: the integer 99999999999999999999 does "
            "not fit in 64 bits");
  EXPECT_EQ(render("x\n  {{ a.b(1, c=2, 3) }}"),
            "ERROR: chat template:2:18: a positional argument after keyword "
            "arguments");
  EXPECT_EQ(render("{{ ~ }}"),
            "ERROR: chat template:1:4: expected an expression, found '~'");
  EXPECT_EQ(render("{{ a $ b }}"),
            "ERROR: chat template:1:6: unexpected character '$'");
}

TEST(ChatTemplate, RenderErrorsNameLineAndColumn) {
  EXPECT_EQ(render("{% if messages[0]['role'] == 'system' %}\n"
                   "  {{ raise_exception('System role not supported') }}\n"
                   "{% endif %}",
                   kMessages),
            "ERROR: chat template:2:6: the template raised an exception: "
            "System role not supported");
  EXPECT_EQ(render("{{ x | nosuchfilter }}", R"({"x": 1})"),
            "ERROR: chat template:1:8: unknown filter 'nosuchfilter'");
  EXPECT_EQ(render("{{ 1 + 'a' }}"),
            "ERROR: chat template:1:6: unsupported operand types for +: 'int' "
            "and 'str'");
  EXPECT_EQ(render("{{ x.y }}"), "ERROR: chat template:1:5: 'x' is undefined");
  EXPECT_EQ(render("{{ x + 1 }}"),
            "ERROR: chat template:1:6: 'x' is undefined");
  EXPECT_EQ(render("{{ 1 // 0 }}"),
            "ERROR: chat template:1:6: integer division or modulo by zero");
  EXPECT_EQ(render("{{ 'a'.nope() }}"),
            "ERROR: chat template:1:7: 'str object' has no method 'nope'");
  EXPECT_EQ(render("{{ 1 < 'a' }}"),
            "ERROR: chat template:1:4: '<' is not supported between 'int' and "
            "'str'");
  EXPECT_EQ(render("{% for a, b in [[1, 2, 3]] %}{% endfor %}"),
            "ERROR: chat template:1:4: cannot unpack 3 values into 2 loop "
            "variables");
  EXPECT_EQ(render("{% set x = 1 %}{% set x.y = 2 %}"),
            "ERROR: chat template:1:19: cannot assign attribute 'y' of 'x', "
            "which is not a namespace");
  EXPECT_EQ(render("{{ 9223372036854775807 + 1 }}"),
            "ERROR: chat template:1:24: integer overflow");
  EXPECT_EQ(render("{{ {'a': 1} | tojson }}{{ x | tojson }}"),
            "ERROR: chat template:1:31: tojson: Object of type Undefined is "
            "not JSON serializable");
}

TEST(ChatTemplate, LimitsStopRunawayTemplates) {
  // Work, output, string and list sizes, value and expression nesting: each
  // an error, quickly, never a hang or a crash.
  // (A lower work limit than the default 10 million steps, which takes about
  // a second, more under sanitizers.)
  EXPECT_EQ(ChatTemplateLimits().maxWork, 10'000'000u);
  {
    std::string error, out;
    auto t = ChatTemplate::parse("{% for i in range(100000) %}"
                                 "{% for j in range(100000) %}{% endfor %}"
                                 "{% endfor %}",
                                 error);
    ASSERT_TRUE(t);
    ChatTemplateLimits limits;
    limits.maxWork = 1'000'000;
    t->setLimits(limits);
    EXPECT_FALSE(t->renderJson("{}", out, error));
    EXPECT_EQ(error, "chat template:1:32: the template did more than 1000000 "
                     "steps of work (a loop that does not end?)");
  }
  EXPECT_EQ(render("{{ range(1000000) | length }}"),
            "ERROR: chat template:1:4: range() of more than 131072 items");
  EXPECT_EQ(render("{{ 'x' * 100000000000 }}"),
            "ERROR: chat template:1:8: a value of more than 16777216 bytes");
  EXPECT_EQ(render("{% set ns = namespace(s='ab') %}{% for i in range(40) %}"
                   "{% set ns.s = ns.s ~ ns.s %}{% endfor %}"),
            "ERROR: chat template:1:76: a value of more than 16777216 bytes");
  EXPECT_EQ(render("{% set ns = namespace(l=[]) %}{% for i in range(1000) %}"
                   "{% set ns.l = [ns.l] %}{% endfor %}"),
            "ERROR: chat template:1:71: values nested more than 200 deep");
  EXPECT_EQ(render("{% set ns = namespace(a=1) %}{% set ns.b = ns %}"),
            "ERROR: chat template:1:33: a namespace cannot hold a namespace");
  EXPECT_EQ(render("{{ " + std::string(300, '(') + "1" + std::string(300, ')') +
                   " }}"),
            "ERROR: chat template:1:204: brackets nested more than 200 deep");
  EXPECT_EQ(render("{{ " + std::string(100, '(') + "1" + std::string(100, ')') +
                   " }}"),
            "ERROR: chat template:1:70: nested more than 200 deep");
  std::string nots;
  for (int i = 0; i < 300; ++i)
    nots += "not ";
  EXPECT_EQ(render("{{ " + nots + "1 }}"),
            "ERROR: chat template:1:796: nested more than 200 deep");
  std::string ifs;
  for (int i = 0; i < 300; ++i)
    ifs += "{% if 1 %}";
  EXPECT_EQ(render(ifs).substr(0, 50),
            "ERROR: chat template:1:1977: nested more than 200 ");
  std::string sum = "1";
  for (int i = 0; i < 5000; ++i)
    sum += "+1";
  EXPECT_EQ(render("{{ " + sum + " }}"),
            "ERROR: chat template:1:1003: the expression nests more than 500 "
            "deep");
  // Macro recursion through tall expressions stops at the evaluator's depth
  // limit, well before the stack (also under sanitizers).
  std::string tall = "f(a)";
  for (int i = 0; i < 495; ++i)
    tall += "+1";
  EXPECT_EQ(
      render("{% macro f(a) %}{{ " + tall + " }}{% endmacro %}{{ f(1) }}"),
      "ERROR: chat template:1:812: the template recursed more than 600 "
      "levels deep (macros calling each other?)");
  std::string error, out;
  auto t = ChatTemplate::parse("{% for i in range(100) %}{{ i }}{% endfor %}",
                               error);
  ASSERT_TRUE(t);
  ChatTemplateLimits limits;
  limits.maxOutput = 20;
  t->setLimits(limits);
  EXPECT_FALSE(t->renderJson("{}", out, error));
  EXPECT_EQ(error, "chat template:1:26: the output exceeds 20 bytes");
  EXPECT_EQ(out, "");
}

/// A file under a fresh temporary directory.
struct TempDir {
  TempDir() {
    char tmpl[] = "/tmp/tfc-chat-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
  std::string write(const std::string &name, const std::string &text) {
    std::string p = path + "/" + name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  std::string path;
};

std::string readTemplate(const std::string &path, ChatTemplateSource &src) {
  std::string error;
  if (!readChatTemplate(path, src, error))
    return "ERROR: " + error;
  return src.text;
}

TEST(ChatTemplateSource, TokenizerConfigForms) {
  TempDir d;
  d.write("tokenizer.json", "{}");
  d.write("tokenizer_config.json",
          R"({"chat_template": "{{ bos_token }}T", "bos_token": "<s>",
              "eos_token": {"__type": "AddedToken", "content": "</s>"}})");
  ChatTemplateSource src;
  EXPECT_EQ(readTemplate(d.path, src), "{{ bos_token }}T");
  EXPECT_EQ(src.bos, "<s>");
  EXPECT_EQ(src.eos, "</s>");
  EXPECT_EQ(src.origin, d.path + "/tokenizer_config.json: chat_template");
  // Through the tokenizer.json next to it, and opened and rendered.
  EXPECT_EQ(readTemplate(d.path + "/tokenizer.json", src), "{{ bos_token }}T");
  std::string error, out;
  auto t = openChatTemplate(d.path, error);
  ASSERT_TRUE(t) << error;
  ASSERT_TRUE(t->render({}, true, out, error));
  EXPECT_EQ(out, "<s>T");

  d.write("tokenizer_config.json",
          R"({"chat_template": [{"name": "tool_use", "template": "A"},
                                {"name": "default", "template": "B"}]})");
  EXPECT_EQ(readTemplate(d.path, src), "B");
  d.write("tokenizer_config.json",
          R"({"chat_template": [{"name": "tool_use", "template": "A"}]})");
  EXPECT_EQ(readTemplate(d.path, src),
            "ERROR: " + d.path +
                "/tokenizer_config.json: chat_template: no template named "
                "\"default\" (the list has: tool_use)");
  d.write("tokenizer_config.json", R"({"chat_template": 3})");
  EXPECT_EQ(readTemplate(d.path, src),
            "ERROR: " + d.path +
                "/tokenizer_config.json: chat_template: expected a string or a "
                "list of {name, template}, found an integer");
  d.write("tokenizer_config.json", R"({"chat_template": [{"name": 1}]})");
  EXPECT_EQ(readTemplate(d.path, src),
            "ERROR: " + d.path +
                "/tokenizer_config.json: chat_template[0]: expected "
                "{\"name\": string, \"template\": string}");
  d.write("tokenizer_config.json", R"({"bos_token": 1})");
  EXPECT_EQ(readTemplate(d.path, src),
            "ERROR: " + d.path +
                "/tokenizer_config.json: bos_token: expected a string or "
                "{\"content\": string}, found an integer");
  d.write("tokenizer_config.json", R"({"model_max_length": 8})");
  EXPECT_EQ(readTemplate(d.path, src),
            "ERROR: " + d.path +
                "/tokenizer_config.json: no \"chat_template\" key: the "
                "checkpoint has no chat template");
  // chat_template.jinja comes first, as in transformers.
  d.write("chat_template.jinja", "J");
  EXPECT_EQ(readTemplate(d.path, src), "J");
  // A template file of its own.
  EXPECT_EQ(readTemplate(d.path + "/chat_template.jinja", src), "J");
  TempDir empty;
  EXPECT_EQ(readTemplate(empty.path, src),
            "ERROR: " + empty.path +
                ": no chat template (no tokenizer_config.json, "
                "chat_template.jinja or chat_template.json)");
  // A bad template names where it came from.
  d.write("chat_template.jinja", "\n{% if %}");
  EXPECT_FALSE(openChatTemplate(d.path, error));
  EXPECT_EQ(error, d.path + "/chat_template.jinja:2:7: expected an "
                            "expression, found '%}'");
}

/// A GGUF v3 file with string and u32 metadata and no tensors.
std::string gguf(const std::vector<std::pair<std::string, std::string>> &strs,
                 const std::vector<std::pair<std::string, uint32_t>> &ints,
                 const std::vector<std::string> &tokens) {
  std::string b = "GGUF";
  auto u32 = [&](uint32_t v) { b.append(reinterpret_cast<char *>(&v), 4); };
  auto u64 = [&](uint64_t v) { b.append(reinterpret_cast<char *>(&v), 8); };
  auto str = [&](const std::string &s) {
    u64(s.size());
    b += s;
  };
  u32(3);
  u64(0);
  u64(strs.size() + ints.size() + (tokens.empty() ? 0 : 1));
  for (const auto &kv : strs) {
    str(kv.first);
    u32(8);
    str(kv.second);
  }
  for (const auto &kv : ints) {
    str(kv.first);
    u32(4);
    u32(kv.second);
  }
  if (!tokens.empty()) {
    str("tokenizer.ggml.tokens");
    u32(9);
    u32(8);
    u64(tokens.size());
    for (const auto &t : tokens)
      str(t);
  }
  return b;
}

TEST(ChatTemplateSource, Gguf) {
  TempDir d;
  std::string p =
      d.write("m.gguf", gguf({{"tokenizer.chat_template", "{{ eos_token }}!"}},
                             {{"tokenizer.ggml.bos_token_id", 0},
                              {"tokenizer.ggml.eos_token_id", 1}},
                             {"<s>", "</s>", "a"}));
  ChatTemplateSource src;
  EXPECT_EQ(readTemplate(p, src), "{{ eos_token }}!");
  EXPECT_EQ(src.bos, "<s>");
  EXPECT_EQ(src.eos, "</s>");
  EXPECT_EQ(src.origin, p + ": tokenizer.chat_template");
  std::string error, out;
  auto t = openChatTemplate(p, error);
  ASSERT_TRUE(t) << error;
  ASSERT_TRUE(t->render({}, false, out, error));
  EXPECT_EQ(out, "</s>!");

  std::string none = d.write("n.gguf", gguf({}, {}, {"a"}));
  EXPECT_EQ(readTemplate(none, src),
            "ERROR: " + none +
                ": the file has no chat template (no tokenizer.chat_template "
                "key)");
  std::string wrong =
      d.write("w.gguf", gguf({}, {{"tokenizer.chat_template", 1}}, {}));
  EXPECT_EQ(readTemplate(wrong, src).substr(0, 7), "ERROR: ");
  EXPECT_EQ(readTemplate(d.path + "/missing.gguf", src),
            "ERROR: " + d.path +
                "/missing.gguf: cannot open: No such file or "
                "directory");
}

} // namespace
