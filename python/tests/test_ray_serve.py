"""Scale-out on Ray Serve (python/tfc/serve.py), on a local Ray cluster of
two nodes (ray.cluster_utils.Cluster, loopback only), with the official
`openai` client: two replicas of MiniLM answer embeddings equal to
sentence-transformers', a bounded load is spread over both nodes, a replica
killed during a load is restarted by Ray and no request is lost that was not
in flight on it; SmolLM2 chat (plain and streamed) equals the package's own
greedy answer; errors come back in OpenAI's shape."""
import concurrent.futures as cf
import json
import os
import signal
import socket
import threading
import time

import numpy as np
import pytest

ray = pytest.importorskip("ray")
openai = pytest.importorskip("openai")
from ray import serve  # noqa: E402

import tfc  # noqa: E402
import tfc.serve  # noqa: E402
from conftest import INPUTS, MINILM, SMOLLM2, need  # noqa: E402
from test_embeddings import TOL, relative_errors  # noqa: E402

LOAD = 48          # requests per bounded load
DEADLINE = 240.0   # seconds for a load, restarts included


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def cluster():
    need(MINILM)
    need(SMOLLM2)
    from ray.cluster_utils import Cluster
    # Ray's proxy prefers replicas on its own node; a load balancer in front
    # of every node's proxy spreads requests in a real cluster. Here one
    # proxy takes all requests, so it is told to spread them itself.
    os.environ["RAY_SERVE_PROXY_PREFER_LOCAL_NODE_ROUTING"] = "0"
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 2})
    c.add_node(num_cpus=2)
    ray.init(address=c.address, include_dashboard=False, log_to_driver=False)
    port = free_port()
    serve.start(http_options={"host": "127.0.0.1", "port": port})
    yield f"http://127.0.0.1:{port}"
    serve.shutdown()
    ray.shutdown()
    c.shutdown()


def client(base, prefix):
    return openai.OpenAI(base_url=f"{base}/{prefix}/v1", api_key="unused", max_retries=0,
                         timeout=120)


def embed(c, texts):
    """(embeddings, replica id) of one request."""
    raw = c.embeddings.with_raw_response.create(model="minilm", input=texts)
    return np.array([d.embedding for d in raw.parse().data], np.float32), raw.headers["x-tfc-replica"]


def run_load(c, texts, ref, on_done=None):
    """LOAD requests from 4 threads; per request (start, end, replica or
    the exception)."""
    results = []
    lock = threading.Lock()
    deadline = time.monotonic() + DEADLINE

    def one(i):
        if time.monotonic() > deadline:
            return
        k = i % len(texts)
        start = time.monotonic()
        try:
            vec, replica = embed(c, [texts[k]])
            assert relative_errors(vec, ref[k:k + 1]).max() <= TOL
            outcome = replica
        except Exception as e:  # noqa: BLE001 (recorded, judged below)
            outcome = e
        with lock:
            results.append((start, time.monotonic(), outcome))
            if on_done:
                on_done(len(results))

    with cf.ThreadPoolExecutor(4) as pool:
        list(pool.map(one, range(LOAD)))
    assert len(results) == LOAD, "the load did not finish before its deadline"
    return results


def test_replicas_spread_and_restart(cluster):
    serve.run(tfc.serve.app(MINILM, name="minilm", replicas=2, threads=1,
                            max_ongoing_requests=2),
              name="minilm", route_prefix="/minilm")
    c = client(cluster, "minilm")
    sentences = json.load(open(os.path.join(INPUTS, "minilm", "sentences.json"), encoding="utf-8"))
    ref = np.load(os.path.join(INPUTS, "minilm", "sentence_embedding.npy"))
    # Both replicas answer correctly, one batch each at least.
    vec, _ = embed(c, sentences)
    assert relative_errors(vec, ref).max() <= TOL
    results = run_load(c, sentences, ref)
    errors = [r for r in results if isinstance(r[2], Exception)]
    assert not errors, errors[:3]
    replicas = {r[2] for r in results}
    assert len(replicas) == 2, replicas
    nodes = {r.split("/")[0] for r in replicas}
    assert len(nodes) == 2, f"both replicas on one node: {replicas}"
    # Kill one replica's process during a second load.
    victim = sorted(replicas)[0]
    pid = int(victim.split("/")[1])
    killed = []

    def kill(n):
        if n == 8 and not killed:
            killed.append(time.monotonic())
            os.kill(pid, signal.SIGKILL)

    results = run_load(c, sentences, ref, on_done=kill)
    assert killed
    for start, end, outcome in results:
        if isinstance(outcome, Exception):
            # Only a request in flight on the killed replica may fail: one
            # sent before the kill (50 ms for the threads' clocks); Ray
            # routes those sent after it to the live replica. (Measured: 0
            # or 1 of 48 fail, each sent before the kill.)
            assert start <= killed[0] + 0.05, f"a request sent after the kill failed: {outcome!r}"
    lost = [r for r in results if isinstance(r[2], Exception)]
    print(f"\nkill: {len(lost)} of {LOAD} requests failed, started "
          f"{[round(r[0] - killed[0], 3) for r in lost]} s from the kill")
    assert len(lost) <= 4, f"{len(lost)} requests failed; at most those in flight (4) may"
    # Ray starts a new replica: two answer again, neither the killed one.
    deadline = time.monotonic() + DEADLINE
    seen = set()
    while time.monotonic() < deadline and len(seen) < 2:
        _, replica = embed(c, [sentences[0]])
        seen.add(replica)
        seen.discard(victim)
        time.sleep(0.2)
    assert len(seen) == 2, f"no new replica after the kill: {seen} ({time.monotonic() - deadline + DEADLINE:.1f} s)"
    serve.delete("minilm")


def test_chat_and_errors(cluster):
    serve.run(tfc.serve.app(SMOLLM2, name="smollm2", replicas=1, threads=1, kv_cache=True),
              name="smollm2", route_prefix="/smollm2")
    c = client(cluster, "smollm2")
    messages = [{"role": "user", "content": "What is the capital of France?"}]
    local = tfc.Model(SMOLLM2, kv_cache=True)
    expected = local.chat(messages, max_new_tokens=20)
    expected_text = expected.text()
    r = c.chat.completions.create(model="smollm2", messages=messages, max_tokens=20,
                                  temperature=0)
    assert r.choices[0].message.content == expected_text
    assert r.choices[0].finish_reason == ("stop" if expected.finish_reason == "stop" else "length")
    assert r.usage.completion_tokens == len(expected.tokens)
    stream = c.chat.completions.create(model="smollm2", messages=messages, max_tokens=20,
                                       temperature=0,
                                       stream=True, stream_options={"include_usage": True})
    pieces, usage, finish = [], None, None
    for chunk in stream:
        if chunk.usage:
            usage = chunk.usage
        for ch in chunk.choices:
            pieces.append(ch.delta.content or "")
            finish = ch.finish_reason or finish
    assert "".join(pieces) == expected_text
    assert usage.completion_tokens == len(expected.tokens) and finish == r.choices[0].finish_reason
    done = c.completions.create(model="smollm2", prompt="The capital of France is", max_tokens=8,
                                temperature=0)
    assert done.choices[0].text == local.session().generate(
        "The capital of France is", max_new_tokens=8).text()
    models = c.models.list()
    assert [m.id for m in models.data] == ["smollm2"]
    with pytest.raises(openai.NotFoundError):
        c.chat.completions.create(model="other", messages=messages)
    with pytest.raises(openai.BadRequestError, match="unrecognized request argument: bogus"):
        c.chat.completions.create(model="smollm2", messages=messages, extra_body={"bogus": 1})
    with pytest.raises(openai.BadRequestError, match="'max_tokens' must be an integer"):
        c.chat.completions.create(model="smollm2", messages=messages, extra_body={"max_tokens": "x"})
    with pytest.raises(openai.BadRequestError, match="messages"):
        c.chat.completions.create(model="smollm2", messages=[])
    with pytest.raises(openai.BadRequestError, match="context is 4096 tokens"):
        c.chat.completions.create(model="smollm2", messages=messages, max_tokens=100000)
    with pytest.raises(openai.BadRequestError, match="stop"):
        c.chat.completions.create(model="smollm2", messages=messages, stop=["a", "b", "c", "d", "e"])
    with pytest.raises(openai.BadRequestError, match="no encode entry"):
        c.embeddings.create(model="smollm2", input="x")
    import urllib.request
    import urllib.error
    req = urllib.request.Request(f"{cluster}/smollm2/v1/chat/completions", data=b"{not json",
                                 headers={"Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as bad:
        urllib.request.urlopen(req)
    assert bad.value.code == 400
    assert "not valid JSON" in json.load(bad.value)["error"]["message"]
    serve.delete("smollm2")
