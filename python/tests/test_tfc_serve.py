"""tfc-serve (tools/tfc-serve), the native OpenAI-compatible server, tested
with the official `openai` client against servers this test starts on
loopback ports: chat and completions (whole and streamed) equal to the
package's own greedy generation, a batch of 16 concurrent clients whose
greedy answers equal their solo answers, stop strings, prefix reuse that
answers exactly as without it, MiniLM embeddings equal to
sentence-transformers', every error row of docs/serving.md (400,
401, 404, 413, 429 with Retry-After, 504), a bounded soak with clients that
leave mid-stream (every request completes or is cancelled, the caches and
the resident memory return to their idle level), and SIGTERM (what runs
finishes, the server exits 0)."""
import base64
import concurrent.futures as cf
import json
import os
import re
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request

import numpy as np
import pytest

openai = pytest.importorskip("openai")

from conftest import INPUTS, MINILM, SMOLLM2, TOOLS, need  # noqa: E402
from test_embeddings import TOL, relative_errors  # noqa: E402

KEY = "test-key"
SMOL = "smollm2"
MESSAGES = [{"role": "user", "content": "What is the capital of France?"}]
# Prompts of mixed lengths for the concurrent clients.
PROMPTS = [
    "The capital of France is",
    "Once upon a time",
    "def fibonacci(n):",
    "The three primary colours are",
    "In 1969, astronauts",
    "A recipe for pancakes: first,",
    "The quick brown fox",
    "Water boils at",
    "The largest planet in the solar system is",
    "To be or not to be,",
    "import numpy as np\n",
    "My favourite book is",
    "The theory of relativity says that",
    "Photosynthesis is the process by which plants use sunlight, water and "
    "carbon dioxide to make",
    "Here is a list of European capitals: Paris, Berlin,",
    "Hello",
]


class Served:
    """A tfc-serve process on a free loopback port."""

    def __init__(self, *args, env=None, wait=True):
        self.proc = subprocess.Popen(
            [os.path.join(TOOLS, "tfc-serve"), *args, "--port", "0", "--quiet"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            env={**os.environ, **(env or {})})
        self.log = []
        line = self.proc.stderr.readline()
        self.log.append(line)
        m = re.search(r"listening on (http://[\d.]+:\d+)", line)
        assert m, f"tfc-serve did not start: {line}{self.proc.stderr.read()}"
        self.base = m.group(1)
        threading.Thread(target=self._drain, daemon=True).start()
        self.health = []
        if wait:
            deadline = time.monotonic() + 600  # a first compile
            while time.monotonic() < deadline:
                status = self.status("/health")
                self.health.append(status)
                if status == 200:
                    break
                assert self.proc.poll() is None, "".join(self.log)
                time.sleep(0.05)
            assert self.health[-1] == 200, "".join(self.log)

    def _drain(self):
        for line in self.proc.stderr:
            self.log.append(line)

    def status(self, path):
        try:
            with urllib.request.urlopen(self.base + path, timeout=10) as r:
                return r.status
        except urllib.error.HTTPError as e:
            return e.code

    def get(self, path):
        with urllib.request.urlopen(self.base + path, timeout=10) as r:
            return r.read().decode()

    def post(self, path, body, headers=None):
        """(status, headers, parsed body) of a raw POST."""
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, headers={
            "Content-Type": "application/json", **(headers or {})})
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                return r.status, r.headers, json.load(r)
        except urllib.error.HTTPError as e:
            return e.code, e.headers, json.load(e)

    def metrics(self):
        out = {}
        for line in self.get("/metrics").splitlines():
            if line and not line.startswith("#"):
                name, value = line.rsplit(" ", 1)
                out[name] = float(value)
        return out

    def rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))

    def client(self, key=KEY):
        return openai.OpenAI(base_url=self.base + "/v1", api_key=key, max_retries=0,
                             timeout=300)

    def terminate(self, timeout=120):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)


@pytest.fixture(scope="module")
def smol():
    s = Served(need(SMOLLM2), "--model-name", SMOL, "--parallel", "16", "--context", "512",
               "--max-body", "65536", "--threads", "2", env={"TFC_API_KEY": KEY})
    yield s
    assert s.terminate() == 0, "".join(s.log)


@pytest.fixture(scope="module")
def minilm_server():
    s = Served(need(MINILM), "--model-name", "minilm", "--threads", "2")
    yield s
    assert s.terminate() == 0, "".join(s.log)


def chat_stream(c, **kw):
    """(text pieces, finish reason, usage) of a streamed chat."""
    pieces, finish, usage = [], None, None
    for chunk in c.chat.completions.create(stream=True, **kw):
        if chunk.usage:
            usage = chunk.usage
        for ch in chunk.choices:
            pieces.append(ch.delta.content or "")
            finish = ch.finish_reason or finish
    return pieces, finish, usage


def test_chat_equals_the_package(smol, smollm2):
    c = smol.client()
    expected = smollm2.chat(MESSAGES, max_new_tokens=20)
    expected_text = expected.text()  # (consumes the generation)
    r = c.chat.completions.create(model=SMOL, messages=MESSAGES, max_tokens=20, temperature=0)
    assert r.choices[0].message.content == expected_text
    assert r.choices[0].finish_reason == ("stop" if expected.finish_reason == "stop" else "length")
    assert r.usage.completion_tokens == len(expected.tokens)
    assert r.usage.prompt_tokens > 10 and r.object == "chat.completion"
    pieces, finish, usage = chat_stream(c, model=SMOL, messages=MESSAGES, max_tokens=20,
                                        temperature=0, stream_options={"include_usage": True})
    assert "".join(pieces) == expected_text
    # Never half a UTF-8 character in an event (the reply has 'É').
    assert not any("\ufffd" in p for p in pieces)
    assert finish == r.choices[0].finish_reason
    assert usage.completion_tokens == r.usage.completion_tokens
    assert [m.id for m in c.models.list().data] == [SMOL]
    # The same seed samples the same reply; max_completion_tokens is max_tokens.
    a = c.chat.completions.create(model=SMOL, messages=MESSAGES, max_completion_tokens=12,
                                  temperature=0.8, seed=7)
    b = c.chat.completions.create(model=SMOL, messages=MESSAGES, max_tokens=12,
                                  temperature=0.8, seed=7)
    assert a.choices[0].message.content == b.choices[0].message.content
    assert a.usage.completion_tokens == 12 or a.choices[0].finish_reason == "stop"


def test_completions_and_stop_strings(smol, smollm2):
    c = smol.client()
    prompt = "The capital of France is"
    expected = smollm2.session().generate(prompt, max_new_tokens=16).text()
    r = c.completions.create(model=SMOL, prompt=prompt, max_tokens=16, temperature=0)
    assert r.choices[0].text == expected and r.object == "text_completion"
    streamed = "".join(ch.choices[0].text for ch in c.completions.create(
        model=SMOL, prompt=prompt, max_tokens=16, temperature=0, stream=True) if ch.choices)
    assert streamed == expected
    # A stop string ends the reply before it, whole or streamed.
    words = expected.split()
    stop = " " + words[len(words) // 2]
    cut = expected[:expected.index(stop)]
    r = c.completions.create(model=SMOL, prompt=prompt, max_tokens=16, temperature=0, stop=[stop])
    assert r.choices[0].text == cut and r.choices[0].finish_reason == "stop"
    streamed = "".join(ch.choices[0].text for ch in c.completions.create(
        model=SMOL, prompt=prompt, max_tokens=16, temperature=0, stop=stop, stream=True)
        if ch.choices)
    assert streamed == cut
    # ignore_eos (an extension, as vLLM's and llama-server's): max_tokens ends it.
    r = c.completions.create(model=SMOL, prompt="Hello", max_tokens=40, temperature=0,
                             extra_body={"ignore_eos": True})
    assert r.usage.completion_tokens == 40 and r.choices[0].finish_reason == "length"


def test_concurrent_clients_answer_as_alone(smol):
    """Batch invariance: 16 clients at once get the tokens each gets alone."""
    c = smol.client()

    def ask(p):
        r = c.completions.create(model=SMOL, prompt=p, max_tokens=24, temperature=0)
        return r.choices[0].text, r.usage.completion_tokens

    solo = [ask(p) for p in PROMPTS]
    before = smol.metrics()
    with cf.ThreadPoolExecutor(len(PROMPTS)) as pool:
        together = list(pool.map(ask, PROMPTS))
    assert together == solo
    after = smol.metrics()
    assert after["tfc_requests_started_total"] - before["tfc_requests_started_total"] == len(PROMPTS)
    assert after["tfc_generation_tokens_total"] - before["tfc_generation_tokens_total"] == \
        sum(n for _, n in solo)
    assert after["tfc_requests_running"] == 0 and after["tfc_kv_cache_tokens"] == 0
    assert after['tfc_time_to_first_token_seconds_count'] >= len(PROMPTS)


def test_a_client_that_leaves_frees_its_slot(smol):
    """A client that gives up on a whole (not streamed) answer: the server
    notices within a second or so and ends the request there."""
    impatient = openai.OpenAI(base_url=smol.base + "/v1", api_key=KEY, max_retries=0,
                              timeout=0.5)
    before = smol.metrics()
    with pytest.raises(openai.APITimeoutError):
        impatient.completions.create(model=SMOL, prompt="Once", max_tokens=480, temperature=0,
                                     extra_body={"ignore_eos": True})
    deadline = time.monotonic() + 30
    while smol.metrics()["tfc_requests_running"] and time.monotonic() < deadline:
        time.sleep(0.05)
    after = smol.metrics()
    assert after["tfc_requests_running"] == 0
    assert after["tfc_requests_disconnected_total"] == before["tfc_requests_disconnected_total"] + 1
    generated = after["tfc_generation_tokens_total"] - before["tfc_generation_tokens_total"]
    assert generated < 480, generated


def test_prefix_reuse_is_exact(smol):
    """A prompt that shares a whole prefill chunk (256 tokens) with what a
    free slot holds starts after it, and answers exactly as from scratch."""
    c = smol.client()
    history = "A chronicle of the town: " + " ".join(
        f"in {1700 + i} the mill was {'rebuilt' if i % 3 else 'sold'}" for i in range(48))

    def ask(prompt):
        return c.completions.create(model=SMOL, prompt=prompt, max_tokens=16,
                                    temperature=0).choices[0].text

    before = smol.metrics()["tfc_prompt_tokens_reused_total"]
    first = ask(history)
    longer = ask(history + " and then")
    again = ask(history)
    reused = smol.metrics()["tfc_prompt_tokens_reused_total"] - before
    assert again == first
    assert reused >= 512, reused  # two requests, a 256-token chunk each
    assert longer  # (its own answer; its prefix came from the slot too)


def test_errors(smol):
    c = smol.client()
    with pytest.raises(openai.AuthenticationError):
        smol.client("wrong").chat.completions.create(model=SMOL, messages=MESSAGES)
    status, _, body = smol.post("/v1/chat/completions", {"model": SMOL, "messages": MESSAGES})
    assert status == 401 and body["error"]["code"] == "invalid_api_key"
    auth = {"Authorization": "Bearer " + KEY}
    with pytest.raises(openai.NotFoundError, match="model_not_found|does not exist"):
        c.chat.completions.create(model="other", messages=MESSAGES)
    with pytest.raises(openai.BadRequestError, match="Unrecognized request argument supplied: bogus"):
        c.chat.completions.create(model=SMOL, messages=MESSAGES, extra_body={"bogus": 1})
    with pytest.raises(openai.BadRequestError, match="'max_tokens' must be an integer"):
        c.chat.completions.create(model=SMOL, messages=MESSAGES, extra_body={"max_tokens": "x"})
    with pytest.raises(openai.BadRequestError, match="'temperature' must be in"):
        c.chat.completions.create(model=SMOL, messages=MESSAGES, temperature=5)
    with pytest.raises(openai.BadRequestError, match="messages"):
        c.chat.completions.create(model=SMOL, messages=[])
    with pytest.raises(openai.BadRequestError, match="context is 512 tokens"):
        c.chat.completions.create(model=SMOL, messages=MESSAGES, max_tokens=100000)
    with pytest.raises(openai.BadRequestError, match="stop"):
        c.chat.completions.create(model=SMOL, messages=MESSAGES, stop=["a", "b", "c", "d", "e"])
    with pytest.raises(openai.BadRequestError, match="frequency_penalty"):
        c.chat.completions.create(model=SMOL, messages=MESSAGES, frequency_penalty=1)
    with pytest.raises(openai.BadRequestError, match="stream_options"):
        c.chat.completions.create(model=SMOL, messages=MESSAGES,
                                  stream_options={"include_usage": True})
    with pytest.raises(openai.BadRequestError, match="no 'encode' entry"):
        c.embeddings.create(model=SMOL, input="x")
    status, _, body = smol.post("/v1/chat/completions", b"{not json", auth)
    assert status == 400 and "invalid JSON" in body["error"]["message"]
    assert body["error"]["type"] == "invalid_request_error"
    status, _, body = smol.post("/v1/chat/completions", b"[1, 2]", auth)
    assert status == 400 and "JSON object" in body["error"]["message"]
    # A prompt past the context.
    status, _, body = smol.post("/v1/completions", {"model": SMOL, "prompt": "word " * 600}, auth)
    assert status == 400 and body["error"]["code"] == "context_length_exceeded"
    # A body past --max-body (64 KiB).
    status, _, body = smol.post("/v1/completions", {"model": SMOL, "prompt": "x" * 100000}, auth)
    assert status == 413 and "limit of 65536 bytes" in body["error"]["message"]
    status, _, body = smol.post("/v1/nothing", {}, auth)
    assert status == 404 and body["error"]["code"] == "unknown_url"
    assert smol.status("/health") == 200
    assert set(smol.health) <= {200, 503}
    # The server is still well.
    r = c.completions.create(model=SMOL, prompt="Hello", max_tokens=2, temperature=0)
    assert r.usage.completion_tokens == 2


def test_queue_full_and_sigterm():
    """One slot and a queue of one: a third request gets 429 with
    Retry-After; a client that leaves frees the slot; SIGTERM lets a running
    stream finish and the server exits 0."""
    s = Served(need(SMOLLM2), "--model-name", SMOL, "--parallel", "1", "--queue", "1",
               "--context", "512", "--threads", "2")
    try:
        c = s.client()
        first = c.completions.create(model=SMOL, prompt="Once upon a time", max_tokens=400,
                                     temperature=0, stream=True, extra_body={"ignore_eos": True})
        next(iter(first))  # it holds the slot
        with cf.ThreadPoolExecutor(1) as pool:
            waiting = pool.submit(lambda: c.completions.create(
                model=SMOL, prompt="Hi", max_tokens=4, temperature=0))
            deadline = time.monotonic() + 30
            while s.metrics()["tfc_requests_waiting"] < 1 and time.monotonic() < deadline:
                time.sleep(0.02)
            status, headers, body = s.post("/v1/completions", {
                "model": SMOL, "prompt": "Hi", "max_tokens": 4})
            assert status == 429 and headers["Retry-After"] == "1", body
            assert "busy" in body["error"]["message"]
            first.close()  # leaves: its slot is freed at the next step
            assert waiting.result().usage.completion_tokens == 4
        # SIGTERM during a stream: the stream ends normally, then the process.
        stream = c.completions.create(model=SMOL, prompt="Once upon a time", max_tokens=60,
                                      temperature=0, stream=True,
                                      extra_body={"ignore_eos": True})
        it = iter(stream)
        next(it)
        s.proc.send_signal(signal.SIGTERM)
        finish = [ch.choices[0].finish_reason for ch in it if ch.choices]
        assert finish[-1] == "length"
        assert s.proc.wait(60) == 0, "".join(s.log)
        assert any("SIGTERM: stopping" in line for line in s.log)
    finally:
        s.terminate()


def test_request_timeout():
    """A request past --timeout gets 504 (whole) or an error event (streamed),
    and its slot is freed."""
    s = Served(need(SMOLLM2), "--model-name", SMOL, "--parallel", "1", "--context", "1024",
               "--timeout", "1", "--threads", "2")
    try:
        c = s.client()
        # 1000 tokens take longer than a second at any speed this model has
        # reached (a row decodes at most ~300 tokens/s on 2 cores).
        with pytest.raises(openai.APIStatusError) as e:
            c.completions.create(model=SMOL, prompt="Once", max_tokens=1000, temperature=0,
                                 extra_body={"ignore_eos": True})
        assert e.value.status_code == 504 and "--timeout" in str(e.value)
        # Streamed: the text so far, then an error event.
        pieces = []
        with pytest.raises(openai.APIError, match="--timeout"):
            for chunk in c.completions.create(model=SMOL, prompt="Once", max_tokens=1000,
                                              temperature=0, stream=True,
                                              extra_body={"ignore_eos": True}):
                pieces += [ch.text for ch in chunk.choices]
        assert len("".join(pieces)) > 0
        r = c.completions.create(model=SMOL, prompt="Hi", max_tokens=2, temperature=0)
        assert r.usage.completion_tokens == 2
        assert s.metrics()["tfc_requests_timed_out_total"] == 2
    finally:
        assert s.terminate() == 0


def test_embeddings_equal_sentence_transformers(minilm_server, minilm):
    c = minilm_server.client()
    sentences = json.load(open(os.path.join(INPUTS, "minilm", "sentences.json"), encoding="utf-8"))
    ref = np.load(os.path.join(INPUTS, "minilm", "sentence_embedding.npy"))
    r = c.embeddings.create(model="minilm", input=sentences)
    got = np.array([d.embedding for d in r.data], np.float32)
    assert got.shape == ref.shape and [d.index for d in r.data] == list(range(len(sentences)))
    assert relative_errors(got, ref).max() <= TOL
    assert r.usage.prompt_tokens > len(sentences)
    # base64: the float32 bytes (the openai client asks for it by default
    # when numpy is there; ask explicitly with a raw request too).
    status, _, body = minilm_server.post("/v1/embeddings", {
        "model": "minilm", "input": sentences[:2], "encoding_format": "base64"})
    assert status == 200
    raw = np.frombuffer(base64.b64decode(body["data"][1]["embedding"]), "<f4")
    assert relative_errors(raw[None], ref[1:2]).max() <= TOL
    # A text past max_seq_length is cut there, as sentence-transformers does
    # (test_embeddings.py checks the package's embed against it).
    long = " ".join(["word"] * 600)
    got = np.array(c.embeddings.create(model="minilm", input=long).data[0].embedding, np.float32)
    np.testing.assert_allclose(got, minilm.embed(long), rtol=0, atol=1e-6)
    with pytest.raises(openai.BadRequestError, match="does not generate"):
        c.chat.completions.create(model="minilm", messages=MESSAGES)
    with pytest.raises(openai.BadRequestError, match="input"):
        c.embeddings.create(model="minilm", input=[])
    with pytest.raises(openai.BadRequestError, match="dimensions"):
        c.embeddings.create(model="minilm", input="x", dimensions=17)


def test_soak_with_clients_that_leave(smol):
    """A bounded load: 64 requests from 8 threads within a deadline, one in
    four streams closed after its first pieces. Every request completes or
    is cancelled, nothing stays in the caches, the server's resident memory
    returns to its level after a first identical load."""
    c = smol.client()
    deadline = time.monotonic() + 300

    def one(i):
        if time.monotonic() > deadline:
            return "late"
        prompt = PROMPTS[i % len(PROMPTS)]
        if i % 4 == 0:
            stream = c.completions.create(model=SMOL, prompt=prompt, max_tokens=64,
                                          temperature=0.7, seed=i, stream=True,
                                          extra_body={"ignore_eos": True})
            for k, _ in enumerate(stream):
                if k == 2:
                    break
            stream.close()
            return "left"
        r = c.completions.create(model=SMOL, prompt=prompt, max_tokens=32, temperature=0.7,
                                 seed=i)
        assert r.choices[0].finish_reason in ("stop", "length")
        return "done"

    def load():
        with cf.ThreadPoolExecutor(8) as pool:
            outcomes = list(pool.map(one, range(64)))
        assert outcomes.count("left") == 16 and outcomes.count("done") == 48, outcomes
        # The rows of the clients that left are freed at the next step.
        until = time.monotonic() + 30
        while time.monotonic() < until:
            m = smol.metrics()
            if m["tfc_requests_running"] == 0 and m["tfc_requests_waiting"] == 0:
                break
            time.sleep(0.05)
        assert m["tfc_requests_running"] == 0 and m["tfc_requests_waiting"] == 0
        assert m["tfc_kv_cache_tokens"] == 0
        return m

    load()
    idle = smol.rss_kib()
    m = load()
    assert m["tfc_requests_disconnected_total"] >= 16
    after = smol.rss_kib()
    assert after <= idle * 1.05 + 8192, f"RSS grew from {idle} KiB to {after} KiB"
    assert smol.proc.poll() is None
