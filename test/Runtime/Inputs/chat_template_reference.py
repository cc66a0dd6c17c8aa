"""tfc's chat templates against Python jinja2, rendered as transformers does.

    chat_template_reference.py GGUF TMPDIR

transformers' apply_chat_template renders with an ImmutableSandboxedEnvironment
(trim_blocks, lstrip_blocks, the loopcontrols extension), raise_exception and
a tojson filter that does not escape HTML, passing messages,
add_generation_prompt and the tokenizer's special tokens (bos_token,
eos_token). This script does the same with jinja2 and compares, byte for
byte, the text that `tfc-generate --chat --print-prompt` (from PATH) renders:

  * the GGUF's own tokenizer.chat_template (read with the gguf package) on
    conversations: system + user, user only, multi-turn with assistant
    replies, with and without add_generation_prompt;
  * hand-written templates in the style of other model families (Llama 3,
    Qwen2.5 with tools, Mistral, Gemma, Zephyr) and one per construct
    (--chat-template), on the same conversations and contexts with tools.

A template that raises on both sides counts as equal (the messages differ).
Prints one line per case that differs and a summary.
"""
import json
import os
import subprocess
import sys

import gguf
import jinja2
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment


def field_string(reader, key):
    f = reader.fields[key]
    return bytes(f.parts[f.data[0]]).decode("utf-8")


def field_int(reader, key):
    f = reader.fields[key]
    return int(f.parts[f.data[0]][0])


def make_env():
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None,
               sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent,
                          separators=separators, sort_keys=sort_keys)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    return env


SYSTEM_USER = [{"role": "system", "content": "You answer in one sentence."},
               {"role": "user", "content": "Why is the sky blue?"}]
USER = [{"role": "user", "content": "What is the capital of France?"}]
MULTI = [{"role": "user", "content": "Hi there"},
         {"role": "assistant", "content": " Hello! How can I help? "},
         {"role": "user", "content": "2+2?\nAnswer briefly."},
         {"role": "assistant", "content": "4"},
         {"role": "user", "content": "Thanks — and in Japanese? 日本語 😀"}]
SYSTEM_MULTI = [{"role": "system", "content": "Be brief."}] + MULTI
TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city"]}}}]
TOOL_CALLS = USER + [
    {"role": "assistant", "content": "", "tool_calls": [{"type": "function",
     "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
    {"role": "tool", "content": "sunny, 22C"},
    {"role": "tool", "content": "{\"humidity\": 0.4}"}]
CONVERSATIONS = [SYSTEM_USER, USER, MULTI, SYSTEM_MULTI]

LLAMA3 = """{{- bos_token }}
{%- if messages[0]['role'] == 'system' %}
    {%- set system_message = messages[0]['content']|trim %}
    {%- set messages = messages[1:] %}
{%- else %}
    {%- set system_message = "" %}
{%- endif %}
{{- "<|start_header_id|>system<|end_header_id|>\\n\\n" }}
{{- "Cutting Knowledge Date: December 2023\\n" }}
{{- system_message }}
{{- "<|eot_id|>" }}
{%- for message in messages %}
    {{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'+ message['content'] | trim + '<|eot_id|>' }}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}
{%- endif %}
"""
QWEN = """{%- if tools %}
    {{- '<|im_start|>system\\n' }}
    {%- if messages[0]['role'] == 'system' %}
        {{- messages[0]['content'] }}
    {%- else %}
        {{- 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.' }}
    {%- endif %}
    {{- "\\n\\n# Tools\\n\\n<tools>" }}
    {%- for tool in tools %}
        {{- "\\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\\n</tools><|im_end|>\\n" }}
{%- else %}
    {%- if messages[0]['role'] == 'system' %}
        {{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}
    {%- else %}
        {{- '<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\\n' }}
    {%- endif %}
{%- endif %}
{%- for message in messages %}
    {%- if (message.role == "user") or (message.role == "system" and not loop.first) or (message.role == "assistant" and not message.tool_calls) %}
        {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}
    {%- elif message.role == "assistant" %}
        {{- '<|im_start|>' + message.role }}
        {%- if message.content %}
            {{- '\\n' + message.content }}
        {%- endif %}
        {%- for tool_call in message.tool_calls %}
            {%- if tool_call.function is defined %}
                {%- set tool_call = tool_call.function %}
            {%- endif %}
            {{- '\\n<tool_call>\\n{"name": "' }}
            {{- tool_call.name }}
            {{- '", "arguments": ' }}
            {{- tool_call.arguments | tojson }}
            {{- '}\\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>\\n' }}
    {%- elif message.role == "tool" %}
        {%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != "tool") %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\\n<tool_response>\\n' }}
        {{- message.content }}
        {{- '\\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}
            {{- '<|im_end|>\\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\\n' }}
{%- endif %}
"""
MISTRAL = """{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token}}{% else %}{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}{% endfor %}"""
GEMMA = """{{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if (message['role'] == 'assistant') %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim + '<end_of_turn>\\n' }}{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\\n'}}{% endif %}"""
ZEPHYR = """{% for message in messages %}
{% if message['role'] == 'user' %}
{{ '<|user|>\\n' + message['content'] + eos_token }}
{% elif message['role'] == 'system' %}
{{ '<|system|>\\n' + message['content'] + eos_token }}
{% elif message['role'] == 'assistant' %}
{{ '<|assistant|>\\n'  + message['content'] + eos_token }}
{% endif %}
{% if loop.last and add_generation_prompt %}
{{ '<|assistant|>' }}
{% endif %}
{% endfor %}"""
# The type macro of tool-calling templates (Hermes style): recursion.
HERMES_TYPES = """{%- macro json_to_python_type(json_spec) %}
{%- set basic_type_map = {
    "string": "str",
    "number": "float",
    "integer": "int",
    "boolean": "bool"
} %}

{%- if basic_type_map[json_spec.type] is defined %}
    {{- basic_type_map[json_spec.type] }}
{%- elif json_spec.type == "array" %}
    {{- "list[" +  json_to_python_type(json_spec|items) + "]"}}
{%- elif json_spec.type == "object" %}
    {%- if json_spec.additionalProperties is defined %}
        {{- "dict[str, " + json_to_python_type(json_spec.additionalProperties) + ']'}}
    {%- else %}
        {{- "dict" }}
    {%- endif %}
{%- elif json_spec.type is iterable %}
    {{- "Union[" }}
    {%- for t in json_spec.type %}
      {{- json_to_python_type({"type": t}) }}
      {%- if not loop.last %}
        {{- "," }}
    {%- endif %}
    {%- endfor %}
    {{- "]" }}
{%- else %}
    {{- "Any" }}
{%- endif %}
{%- endmacro %}
{%- for tool in tools %}
{%- for name, p in tool.function.parameters.properties.items() %}
{{ name }}: {{ json_to_python_type(p) }}
{%- endfor %}
{%- endfor %}
{{ json_to_python_type({'type': 'object', 'additionalProperties': {'type': 'integer'}}) }} {{ json_to_python_type({'type': ['string', 'number']}) }} {{ json_to_python_type({'type': 5}) }}"""

CONSTRUCTS = [
    "{{ 'a' + 'b' ~ 1 ~ none ~ true }} {{ 7 // 2 }} {{ -7 % 3 }} {{ 7 / 2 }} "
    "{{ 2 ** 10 }} {{ 0.1 + 0.2 }} {{ 1e20 }} {{ 1e-5 }} {{ (1, 2) }} "
    "{{ [1, 'a', none] }} {{ {'k': \"it's\"} }}",
    "{% for m in messages %}{{ loop.index }}/{{ loop.index0 }}/{{ loop.first }}/"
    "{{ loop.last }}/{{ loop.length }}/{{ loop.revindex }}:{{ m.role }}="
    "{{ m['content'] | length }}\n{% endfor %}",
    "{% for m in messages %}\n  {% if m.role == 'user' %}\n    U: {{ m.content | trim }}\n"
    "  {% elif m.role == 'assistant' %}\n    A: {{ m.content|trim }}\n  {% else %}\n"
    "    S\n  {% endif %}\n{% endfor %}\n",
    "  {%- if true -%}  x  {%- endif -%}  y\n  {{- ' z ' -}}\n w\n{#- c -#}\n "
    "{%+ if true %}k{% endif %}\r\n",
    "{% set x = 1 %}{% for i in [1,2,3] %}{{ x }}{% set x = i %}{{ x }}"
    "{% endfor %}{{ x }}{% set ns = namespace(n=0, last=none) %}"
    "{% for m in messages if m.role != 'system' %}{% set ns.n = ns.n + 1 %}"
    "{% set ns.last = m.role %}{% endfor %} {{ ns.n }} {{ ns.last }}",
    "{{ messages[0] | tojson }} {{ messages | tojson(indent=2) }} "
    "{{ tools | tojson }}",
    "{{ x is defined }} {{ y is not defined }} {{ none is none }} "
    "{{ messages[-1].content is string }} {{ 'x' in 'xyz' }} "
    "{{ 'q' not in 'xyz' }} {{ not false and true or false }} "
    "{{ 1 < 2 < 3 }} {{ 'a' if add_generation_prompt else 'b' }}",
    "{{ messages[1:] | length }} {{ 'hello'[1:-1] }} {{ 'hello'[::-1] }} "
    "{{ messages[-1]['content'][:5] }} {{ messages[0].missing }}|",
    "{% for x in range(10) %}{% if x == 2 %}{% continue %}{% endif %}"
    "{% if x > 5 %}{% break %}{% endif %}{{ x }}{% endfor %}"
    "{% for x in [] %}a{% else %}empty{% endfor %}"
    "{% set s %}inner {{ 1 + 1 }}{% endset %}[{{ s }}]",
    "{{ '  x  '.strip() }}|{{ 'a,b,c'.split(',') }}|{{ 'Hello'.startswith('He') }}|"
    "{{ messages | selectattr('role', 'equalto', 'user') | list | length }}|"
    "{{ messages | map(attribute='role') | join(', ') }}|"
    "{{ undefined_thing | default('dflt') }}|{{ 'hello world' | title }}|"
    "{% for k, v in {'b': 1, 'a': 2}.items() %}{{ k }}={{ v }};{% endfor %}",
    "{% if messages[0]['role'] != 'system' %}{{ raise_exception('no system "
    "message') }}{% endif %}ok",
    "{% macro render(m, prefix='- ') %}{{ prefix }}{{ m.role | upper }}: "
    "{{ m.content | trim }}\n{% endmacro %}{% for m in messages %}"
    "{{ render(m) }}{{ render(m, prefix='* ') if loop.last }}{% endfor %}",
    HERMES_TYPES,
    "{{ messages[-1].content | upper }}|{{ messages[-1].content | title }}|"
    "{{ '\u00a0 x \u3000' | trim }}|{{ ' a\u2003b '.split() }}|"
    "{{ 'stra\u00dfe' | upper }}|{{ \"it's a-test (x) [y]\" | title }}|"
    "{{ \"it's a-test\".title() }}|{{ '\u00e9a' | capitalize }}\n"
    "  \u3000{% if true %}x{% endif %}\n{{- ' y' }}",
]
TEMPLATES = [("llama3", LLAMA3), ("qwen2.5", QWEN), ("mistral", MISTRAL),
             ("gemma", GEMMA), ("zephyr", ZEPHYR)] + [
    ("construct %d" % i, t) for i, t in enumerate(CONSTRUCTS)]


def main():
    gguf_path, tmp = sys.argv[1:3]
    reader = gguf.GGUFReader(gguf_path)
    template = field_string(reader, "tokenizer.chat_template")
    tokens = reader.fields["tokenizer.ggml.tokens"]
    def token(key):
        i = field_int(reader, key)
        return bytes(tokens.parts[tokens.data[i]]).decode("utf-8")
    special = {"bos_token": token("tokenizer.ggml.bos_token_id"),
               "eos_token": token("tokenizer.ggml.eos_token_id")}
    env = make_env()

    cases = []  # (name, template or None for the GGUF's, context)
    for i, conv in enumerate(CONVERSATIONS):
        for agp in (True, False):
            cases.append(("gguf template, conversation %d, "
                          "add_generation_prompt=%s" % (i, agp), None,
                          {"messages": conv, "add_generation_prompt": agp}))
    for name, tpl in TEMPLATES:
        for i, conv in enumerate(CONVERSATIONS + [TOOL_CALLS]):
            for agp in (True, False):
                ctx = {"messages": conv, "add_generation_prompt": agp}
                if conv is TOOL_CALLS:
                    ctx["tools"] = TOOLS
                if name.startswith("construct"):
                    ctx["tools"] = TOOLS
                cases.append(("%s, conversation %d, add_generation_prompt=%s"
                              % (name, i, agp), tpl, ctx))

    equal = raised = 0
    for n, (name, tpl, ctx) in enumerate(cases):
        source = template if tpl is None else tpl
        try:
            want = env.from_string(source).render(**ctx, **special)
            want_error = None
        except jinja2.exceptions.TemplateError as e:
            want, want_error = None, str(e)
        ctx_path = os.path.join(tmp, "context-%d.json" % n)
        with open(ctx_path, "w", encoding="utf-8") as f:
            json.dump(ctx, f, ensure_ascii=False)
        cmd = ["tfc-generate", "--weights", gguf_path, "--chat",
               "--messages", ctx_path, "--print-prompt"]
        if tpl is not None:
            tpl_path = os.path.join(tmp, "template-%d.jinja" % n)
            with open(tpl_path, "w", encoding="utf-8", newline="") as f:
                f.write(tpl)
            cmd += ["--chat-template", tpl_path]
        p = subprocess.run(cmd, capture_output=True)
        if p.returncode != 0:
            got, got_error = None, p.stderr.decode("utf-8", "replace").strip()
        else:
            got, got_error = json.loads(p.stdout.decode("utf-8"))["text"], None
        if want_error is not None and got_error is not None:
            equal += 1
            raised += 1
            continue
        if got == want:
            equal += 1
            continue
        print("%s: MISMATCH" % name)
        print("  jinja2: %r" % (want if want_error is None else want_error))
        print("  tfc:    %r" % (got if got_error is None else got_error))
    print("%d cases, %d equal (%d raising on both sides)"
          % (len(cases), equal, raised))
    sys.exit(0 if equal == len(cases) else 1)


if __name__ == "__main__":
    main()
