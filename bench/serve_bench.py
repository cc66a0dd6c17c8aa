"""The client of bench/run-serve.sh: C concurrent streaming clients, each
sending its share of the requests one after the other to an OpenAI-style
/v1/completions (stdlib http.client, so that the client costs both servers
the same little CPU): fixed prompts of mixed lengths, N new tokens each
(ignore_eos, as both tfc-serve and llama-server take it), greedy, each
prompt made unique from its first token. Prints one
JSON line: aggregate generated tokens/s over the wall time, time to first
token (the first event with text) median and p99, the per-request decode
rate (tokens after the first over the time from the first to the last). Tokens
are counted from each answer's usage (stream_options.include_usage).

    python3 serve_bench.py URL MODEL CLIENTS REQUESTS_PER_CLIENT NEW_TOKENS
"""
import http.client
import json
import statistics
import sys
import threading
import time
from urllib.parse import urlparse

PROMPTS = [
    "The capital of France is",
    "Write a short story about a robot who learns to paint. The robot lives in a small "
    "town by the sea, and every morning it watches the fishermen leave the harbour.",
    "Explain, step by step and with an example for each step, how a compiler turns source "
    "code into machine code: lexing, parsing, building an abstract syntax tree, checking "
    "types, lowering to an intermediate representation, optimising it, allocating "
    "registers and finally emitting instructions for the target processor.",
    "List the planets of the solar system in order from the sun, and for each one give "
    "its diameter, its number of moons, the length of its day and of its year, what its "
    "atmosphere is made of, and one fact about it that most people do not know. Then say "
    "which planet you would visit first if you could travel anywhere, and why, in a few "
    "sentences that a ten-year-old would understand and enjoy reading aloud in class.",
]


def one(host, port, model, prompt, new_tokens):
    conn = http.client.HTTPConnection(host, port, timeout=600)
    body = json.dumps({"model": model, "prompt": prompt, "max_tokens": new_tokens,
                       "temperature": 0, "stream": True, "ignore_eos": True,
                       "stream_options": {"include_usage": True}})
    start = time.perf_counter()
    conn.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
    r = conn.getresponse()
    if r.status != 200:
        raise RuntimeError(f"HTTP {r.status}: {r.read()[:200]!r}")
    first = last = None
    tokens = new_tokens  # unless the server's usage says otherwise
    while True:
        line = r.readline()
        if not line:
            break
        if not line.startswith(b"data: "):
            continue
        data = line[6:].strip()
        if data == b"[DONE]":
            break
        event = json.loads(data)
        if event.get("usage"):
            tokens = event["usage"]["completion_tokens"]
        choices = event.get("choices") or []
        if choices and choices[0].get("text"):
            now = time.perf_counter()
            first = first or now
            last = now
    conn.close()
    return start, first, last, tokens


def main():
    url, model, clients, per_client, new_tokens = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:6])
    u = urlparse(url)
    results, lock = [], threading.Lock()
    nonce = time.time_ns() % 1000003  # another run's prompts differ too

    def client(c):
        for k in range(per_client):
            # Unique from its first token: no server can reuse another
            # request's prompt (llama-server keeps each slot's last prompt
            # and reuses the common prefix; tfc-serve has no prefix cache).
            prompt = f"Request {nonce}.{c}.{k}: " + PROMPTS[(c + k) % len(PROMPTS)]
            out = one(u.hostname, u.port, model, prompt, new_tokens)
            with lock:
                results.append(out)

    t0 = time.perf_counter()
    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    ttft = sorted(f - s for s, f, _, _ in results)
    decode = [(n - 1) / (l - f) for _, f, l, n in results if l > f]
    generated = sum(n for *_, n in results)
    p99 = ttft[min(len(ttft) - 1, int(round(0.99 * (len(ttft) - 1))))]
    print(json.dumps({
        "clients": clients, "requests": len(results), "new_tokens": new_tokens,
        "generated": generated, "tokens_per_s": generated / wall,
        "ttft_median_ms": statistics.median(ttft) * 1e3, "ttft_p99_ms": p99 * 1e3,
        "decode_per_request_tokens_per_s": statistics.median(decode), "wall_s": wall}))


if __name__ == "__main__":
    main()
