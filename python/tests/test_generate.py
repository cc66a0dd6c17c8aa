"""SmolLM2-135M-Instruct (Q4_1 .gguf) through the package: chat, sampling,
stop strings and cancellation, against tfc-generate on the same library."""
import os
import subprocess

import pytest

from conftest import SMOLLM2, TOOLS

QUESTION = "What is the capital of France?"


def tfc_generate_ids(model, *args):
    out = subprocess.run([os.path.join(TOOLS, "tfc-generate"), model.library,
                          "--weights", SMOLLM2, "--print-ids", "--quiet"] + list(args),
                         capture_output=True, text=True, check=True).stdout
    line = [l for l in out.splitlines() if l.startswith("ids: ")][0]
    return [int(i) for i in line[5:].split(",")]


def test_greedy_chat_equals_tfc_generate(smollm2):
    gen = smollm2.chat([{"role": "user", "content": QUESTION}], max_new_tokens=20)
    text = gen.text()
    ref = tfc_generate_ids(smollm2, "--chat", "--prompt", QUESTION, "-n", "20")
    assert gen.tokens == ref
    assert text == smollm2.tokenizer.decode(ref, skip_special_tokens=True)
    assert gen.finish_reason in ("stop", "length")
    assert gen.finish_reason == ("stop" if ref[-1] in smollm2.tokenizer.chat_stop_ids() else "length")


def test_chat_template_and_prompt_ids(smollm2):
    tok = smollm2.tokenizer
    text = tok.apply_chat_template([{"role": "user", "content": QUESTION}])
    assert text.endswith("<|im_start|>assistant\n")
    # The ids of transformers' apply_chat_template(tokenize=True) (chat.test).
    assert tok.apply_chat_template([{"role": "user", "content": QUESTION}], tokenize=True)[:3] == [1, 9690, 198]
    with pytest.raises(TypeError):
        tok.apply_chat_template([{"role": "user", "content": object()}])


def test_sampling(smollm2):
    prompt = "Once upon a time"
    opts = dict(max_new_tokens=16, temperature=0.9, top_k=40, top_p=0.95)
    a = smollm2.session().generate(prompt, seed=1, **opts)
    a.text()
    b = smollm2.session().generate(prompt, seed=1, **opts)
    b.text()
    c = smollm2.session().generate(prompt, seed=2, **opts)
    c.text()
    greedy = smollm2.session().generate(prompt, max_new_tokens=16)
    greedy.text()
    assert a.tokens == b.tokens
    assert a.tokens != c.tokens
    assert a.tokens != greedy.tokens
    ref = tfc_generate_ids(smollm2, "--prompt", prompt, "-n", "16", "--temperature", "0.9",
                           "--top-k", "40", "--top-p", "0.95", "--seed", "1")
    assert a.tokens == ref


def test_stop_strings_length_and_cancel(smollm2):
    s = smollm2.session()
    full = s.generate("The capital of France is", max_new_tokens=12)
    text = full.text()
    assert full.finish_reason == "length" and len(full.tokens) == 12
    word = text.split()[1]
    cut = smollm2.session().generate("The capital of France is", max_new_tokens=12, stop=word)
    got = cut.text()
    assert got == text[:text.index(word)]
    assert cut.finish_reason == "stop"
    # Closing the iterator stops it; the session keeps what ran.
    s2 = smollm2.session()
    g = s2.generate("The capital of France is", max_new_tokens=50)
    next(g)
    g.close()
    assert list(g) == []
    assert s2.position == len(smollm2.tokenizer.encode("The capital of France is"))


def test_generation_errors(smollm2):
    s = smollm2.session()
    with pytest.raises(ValueError, match="max_new_tokens"):
        s.generate("x", max_new_tokens=0)
    with pytest.raises(ValueError, match="top-p"):
        s.generate("x", temperature=1.0, top_p=1.5)
    with pytest.raises(ValueError, match="no tokens"):
        s.generate([])
    with pytest.raises(ValueError, match="context"):
        smollm2.session(context=8).generate(list(range(1, 20)))
    # One generation at a time on a session.
    s2 = smollm2.session()
    g = s2.generate("Hello", max_new_tokens=4)
    next(g)
    with pytest.raises(ValueError, match="under way"):
        s2.generate("Again", max_new_tokens=4)
    g.close()
    # The model's bound: the token input's sequence dim.
    assert 0 < smollm2.max_context() < 2**31 - 1
