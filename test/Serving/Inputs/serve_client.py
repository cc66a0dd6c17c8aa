"""Drives a tfc-serve process over loopback with the standard library only
(test/Serving/serve.test): the server is started here on a free port with
the arguments given, checked, then stopped with SIGTERM; prints one line per
check and exits non-zero at the first failure. Usable under the sanitizers
(a leak at exit makes the server's status non-zero)."""
import concurrent.futures as cf
import http.client
import json
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

proc = subprocess.Popen(sys.argv[1:] + ["--port", "0", "--quiet"], stderr=subprocess.PIPE,
                        text=True)
log = [proc.stderr.readline()]
m = re.search(r"http://([\d.]+):(\d+)", log[0])
assert m, log[0] + proc.stderr.read()
host, port = m.group(1), int(m.group(2))
base = f"http://{host}:{port}"
threading.Thread(target=lambda: log.extend(proc.stderr), daemon=True).start()


def call(method, path, body=None):
    data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            raw = r.read()
            return r.status, r.headers, raw
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def metrics():
    _, _, raw = call("GET", "/metrics")
    return {l.rsplit(" ", 1)[0]: float(l.rsplit(" ", 1)[1])
            for l in raw.decode().splitlines() if l and not l.startswith("#")}


try:
    deadline = time.monotonic() + 120
    while call("GET", "/health")[0] != 200:
        assert proc.poll() is None and time.monotonic() < deadline, "".join(log)
        time.sleep(0.05)
    print("health: 200")
    status, _, raw = call("GET", "/v1/models")
    model = json.loads(raw)["data"][0]["id"]
    print(f"models: {status} {model}")

    def complete(ids, n=8):
        status, _, raw = call("POST", "/v1/completions", {
            "model": model, "prompt": ids, "max_tokens": n, "temperature": 0})
        assert status == 200, raw
        r = json.loads(raw)
        return r["choices"][0]["text"], r["usage"]["completion_tokens"], \
            r["choices"][0]["finish_reason"]

    prompts = [[1 + i, 2, 3 + i % 5][: 1 + i % 3] * (1 + i % 4) for i in range(8)]
    solo = [complete(p) for p in prompts]
    print(f"solo: {len(solo)} answers, {sum(s[1] for s in solo)} tokens")
    with cf.ThreadPoolExecutor(8) as pool:
        together = list(pool.map(complete, prompts))
    print(f"together: {'same as solo' if together == solo else 'DIFFERENT'}")

    # A stream read in part, then its connection closed.
    conn = http.client.HTTPConnection(host, port, timeout=60)
    conn.request("POST", "/v1/completions", json.dumps({
        "model": model, "prompt": [1, 2], "max_tokens": 40, "temperature": 0,
        "stream": True, "ignore_eos": True}), {"Content-Type": "application/json"})
    r = conn.getresponse()
    first = r.readline()
    conn.close()
    print(f"stream: {r.status} {r.getheader('Content-Type')} {first[:6]!r}")
    until = time.monotonic() + 30
    while time.monotonic() < until:
        m = metrics()
        if m["tfc_requests_running"] == 0 and m["tfc_requests_waiting"] == 0:
            break
        time.sleep(0.05)
    m = metrics()
    print(f"after the client left: running {m['tfc_requests_running']:.0f}, "
          f"cached {m['tfc_kv_cache_tokens']:.0f}")

    # A whole stream.
    status, headers, raw = call("POST", "/v1/completions", {
        "model": model, "prompt": [4, 5], "max_tokens": 5, "temperature": 0, "stream": True,
        "stream_options": {"include_usage": True}})
    events = [l[6:] for l in raw.decode().split("\n\n") if l.startswith("data: ")]
    usage = json.loads(events[-2])["usage"]
    print(f"stream: {status}, last event {events[-1]}, usage {usage['completion_tokens']}")

    for name, body in [("malformed", b"{"), ("wrong type", {"model": model, "prompt": [1],
                                                          "max_tokens": "x"}),
                       ("unknown field", {"model": model, "prompt": [1], "bogus": 1}),
                       ("past the context", {"model": model, "prompt": [1] * 70}),
                       ("other model", {"model": "other", "prompt": [1]}),
                       ("too large", {"model": model, "prompt": "x" * 5000})]:
        status, _, raw = call("POST", "/v1/completions", body)
        print(f"{name}: {status} {json.loads(raw)['error']['message'][:60]}")
    status, _, raw = call("POST", "/v1/chat/completions", {
        "model": model, "messages": [{"role": "user", "content": "hi"}]})
    print(f"chat: {status} {json.loads(raw)['error']['message'][:60]}")
    status, _, raw = call("GET", "/nowhere")
    print(f"route: {status} {json.loads(raw)['error']['code']}")
finally:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    code = proc.wait(60)
    print(f"exit: {code}")
    if code != 0:
        print("".join(log))
