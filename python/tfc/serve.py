"""tfc on Ray Serve: replicas of a tfc model behind OpenAI's HTTP routes.

    # one machine, or a Ray cluster (ray start --head / ray start --address=...)
    serve run tfc.serve:build_app model=/path/to/SmolLM2.gguf replicas=2 threads=1 kv_cache=true

or from Python::

    from ray import serve
    import tfc.serve
    serve.run(tfc.serve.app("SmolLM2.gguf", replicas=2, threads=1, kv_cache=True))

Each replica is a Ray actor holding one :class:`tfc.Model` with its own
threads (``threads``, reserved as Ray CPUs); Ray places replicas on any node
of the cluster, routes each request to one of them and restarts a replica
that dies. The routes, with OpenAI's request and response shapes:

* ``POST /v1/chat/completions`` (``messages``, ``max_tokens`` /
  ``max_completion_tokens``, ``temperature``, ``top_p``, ``seed``, ``stop``,
  ``stream`` with server-sent events, ``stream_options.include_usage``);
* ``POST /v1/completions`` (``prompt``, the same sampling fields);
* ``POST /v1/embeddings`` (``input``: a string or a list of them), for
  encoder models;
* ``GET /v1/models``, ``GET /health``.

Errors come back in OpenAI's shape ``{"error": {"message", "type", "param",
"code"}}`` with status 400 (a malformed body, a wrong type, an unknown
field), 404 (another model) or 500. Every response carries the header
``x-tfc-replica`` naming the replica that answered (``NODE/PID``: its Ray node
and process).
The checkpoint (or compiled library) must be readable at the same path on
every node. See docs/serving.md.
"""

import asyncio
import base64
import json
import secrets
import os
import time
import uuid
from typing import Any, Dict, List, Optional

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse
from ray import serve

import tfc

api = FastAPI(title="tfc")


class BadRequest(Exception):
    def __init__(self, message: str, param: Optional[str] = None, status: int = 400,
                 type_: str = "invalid_request_error"):
        super().__init__(message)
        self.message, self.param, self.status, self.type = message, param, status, type_


def _error(e: BadRequest, headers: Dict[str, str]) -> JSONResponse:
    return JSONResponse(status_code=e.status, headers=headers, content={
        "error": {"message": e.message, "type": e.type, "param": e.param, "code": None}})


_SAMPLING = {"max_tokens", "max_completion_tokens", "temperature", "top_p", "seed", "stop",
             "stream", "stream_options", "n", "user", "frequency_penalty", "presence_penalty",
             "logit_bias", "logprobs", "top_logprobs", "response_format", "tools", "tool_choice",
             "parallel_tool_calls", "metadata", "store", "service_tier"}
_FIELDS = {
    "chat": {"model", "messages"} | _SAMPLING,
    "completion": {"model", "prompt", "echo", "suffix", "best_of"} | _SAMPLING,
    "embedding": {"model", "input", "encoding_format", "dimensions", "user"},
}


def _check_type(body: Dict[str, Any], key: str, types: tuple, what: str) -> Any:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) and bool not in types:
        raise BadRequest(f"'{key}' must be {what}, not a boolean", key)
    if not isinstance(value, types):
        raise BadRequest(f"'{key}' must be {what}, not {type(value).__name__}", key)
    return value


class _Replica:
    def __init__(self, model: str, name: Optional[str], threads: int, max_context: int,
                 default_max_tokens: int, compile_options: Dict[str, Any]):
        tfc.set_num_threads(threads)
        self.max_context = max_context
        self.default_max_tokens = default_max_tokens
        self.name = name or os.path.basename(os.path.normpath(model))
        self.model = tfc.Model(model, **compile_options)
        import ray
        # NODE/PID: the Ray node and the process of this replica.
        self.id = f"{ray.get_runtime_context().get_node_id()[:16]}/{os.getpid()}"
        self.generative = any(n.endswith("_cached") for n in self.model.entries)
        self.embedding = "encode" in self.model.entries
        self.created = int(time.time())

    # --- helpers ---------------------------------------------------------------
    def headers(self) -> Dict[str, str]:
        return {"x-tfc-replica": self.id}

    async def body(self, request: Request, kind: str) -> Dict[str, Any]:
        try:
            body = json.loads(await request.body())
        except (ValueError, UnicodeDecodeError) as e:
            raise BadRequest(f"the body is not valid JSON: {e}")
        if not isinstance(body, dict):
            raise BadRequest("the body must be a JSON object")
        unknown = sorted(set(body) - _FIELDS[kind])
        if unknown:
            raise BadRequest(f"unrecognized request argument: {unknown[0]}", unknown[0])
        model = _check_type(body, "model", (str,), "a string")
        if model is None:
            raise BadRequest("'model' is required", "model")
        if model != self.name:
            raise BadRequest(f"the model '{model}' does not exist (this server has '{self.name}')",
                             "model", 404, "not_found_error")
        return body

    def sampling(self, body: Dict[str, Any]) -> Dict[str, Any]:
        n = _check_type(body, "n", (int,), "an integer")
        if n not in (None, 1):
            raise BadRequest("only n = 1 is supported", "n")
        max_tokens = _check_type(body, "max_completion_tokens", (int,), "an integer")
        if max_tokens is None:
            max_tokens = _check_type(body, "max_tokens", (int,), "an integer")
        temperature = _check_type(body, "temperature", (int, float), "a number")
        top_p = _check_type(body, "top_p", (int, float), "a number")
        seed = _check_type(body, "seed", (int,), "an integer")
        stop = body.get("stop")
        if isinstance(stop, str):
            stop = [stop]
        if stop is not None and not (isinstance(stop, list) and len(stop) <= 4 and all(
                isinstance(s, str) and 0 < len(s) <= 256 for s in stop)):
            raise BadRequest("'stop' must be a string or a list of up to 4 non-empty "
                             "strings of at most 256 characters", "stop")
        if max_tokens is not None and max_tokens < 1:
            raise BadRequest("'max_tokens' must be at least 1", "max_tokens")
        if temperature is not None and not 0 <= temperature <= 2:
            raise BadRequest("'temperature' must be in [0, 2]", "temperature")
        if top_p is not None and not 0 < top_p <= 1:
            raise BadRequest("'top_p' must be in (0, 1]", "top_p")
        if seed is not None and seed < 0:
            raise BadRequest("'seed' must be >= 0", "seed")
        if seed is None:  # as OpenAI: without a seed, sampling differs per request
            seed = secrets.randbits(62)
        # OpenAI's default temperature is 1 (tfc-serve's too); 0 is greedy.
        return {"max_new_tokens": max_tokens,
                "temperature": float(1.0 if temperature is None else temperature),
                "top_p": float(top_p if top_p is not None else 1.0), "seed": int(seed),
                "stop": stop or None}

    def generation(self, ids: List[int], options: Dict[str, Any]) -> tfc.Generation:
        if not self.generative:
            raise BadRequest(f"the model '{self.name}' does not generate text (no cached entry)",
                             "model")
        # A session's caches hold its prompt and reply, within the model's
        # bound and the deployment's max_context (what memory allows).
        bound = min(self.model.max_context(), self.max_context)
        if options["max_new_tokens"] is None:
            options["max_new_tokens"] = max(1, min(self.default_max_tokens, bound - len(ids)))
        if len(ids) + options["max_new_tokens"] > bound:
            raise BadRequest(
                f"this server's context is {bound} tokens; the prompt has {len(ids)} and "
                f"max_tokens asks for {options['max_new_tokens']} more", "max_tokens")
        session = self.model.session(context=len(ids) + options["max_new_tokens"])
        return session.generate(ids, eos_ids=self.model.chat_stop_ids(), **options)

    async def respond(self, request: Request, gen: tfc.Generation, prompt_tokens: int,
                      body: Dict[str, Any], kind: str):
        rid = ("chatcmpl-" if kind == "chat" else "cmpl-") + uuid.uuid4().hex
        obj = "chat.completion" if kind == "chat" else "text_completion"
        created = int(time.time())

        def usage() -> Dict[str, int]:
            return {"prompt_tokens": prompt_tokens, "completion_tokens": len(gen.tokens),
                    "total_tokens": prompt_tokens + len(gen.tokens)}

        def reason() -> str:
            return "stop" if gen.finish_reason == "stop" else "length"

        if not body.get("stream"):
            pieces = []
            while True:
                piece = await asyncio.to_thread(next, gen, None)
                if piece is None:
                    break
                pieces.append(piece)
                if await request.is_disconnected():  # nobody to answer: stop
                    gen.close()
                    return JSONResponse(status_code=499, content={})
            text = "".join(pieces)
            choice = ({"index": 0, "message": {"role": "assistant", "content": text},
                       "finish_reason": reason(), "logprobs": None} if kind == "chat" else
                      {"index": 0, "text": text, "finish_reason": reason(), "logprobs": None})
            return JSONResponse(headers=self.headers(), content={
                "id": rid, "object": obj, "created": created, "model": self.name,
                "choices": [choice], "usage": usage()})
        options = body.get("stream_options") or {}
        if not isinstance(options, dict):
            raise BadRequest("'stream_options' must be an object", "stream_options")
        chunk_obj = "chat.completion.chunk" if kind == "chat" else "text_completion"

        def chunk(delta: Optional[str], finish: Optional[str], first: bool = False) -> str:
            if kind == "chat":
                d: Dict[str, Any] = {}
                if first:
                    d["role"] = "assistant"
                if delta is not None:
                    d["content"] = delta
                choice = {"index": 0, "delta": d, "finish_reason": finish, "logprobs": None}
            else:
                choice = {"index": 0, "text": delta or "", "finish_reason": finish, "logprobs": None}
            c = {"id": rid, "object": chunk_obj, "created": created, "model": self.name,
                 "choices": [choice]}
            if options.get("include_usage"):
                c["usage"] = None
            return "data: " + json.dumps(c, ensure_ascii=False) + "\n\n"

        async def events():
            try:
                yield chunk("" if kind == "chat" else None, None, first=True)
                try:
                    while True:
                        piece = await asyncio.to_thread(next, gen, None)
                        if piece is None:
                            break
                        yield chunk(piece, None)
                except Exception as e:  # after the headers: an error event, then the end
                    yield "data: " + json.dumps({"error": {
                        "message": f"internal error: {e}", "type": "server_error",
                        "param": None, "code": None}}) + "\n\n"
                    yield "data: [DONE]\n\n"
                    return
                yield chunk(None, reason())
                if options.get("include_usage"):
                    yield "data: " + json.dumps({"id": rid, "object": chunk_obj, "created": created,
                                                 "model": self.name, "choices": [],
                                                 "usage": usage()}) + "\n\n"
                yield "data: [DONE]\n\n"
            finally:
                gen.close()  # a client that went away cancels its generation

        return StreamingResponse(events(), media_type="text/event-stream", headers=self.headers())

    async def guarded(self, work):
        try:
            return await work()
        except BadRequest as e:
            return _error(e, self.headers())
        except (ValueError, TypeError) as e:
            return _error(BadRequest(str(e)), self.headers())
        except Exception as e:  # a request never takes the replica down
            return _error(BadRequest(f"internal error: {e}", status=500, type_="server_error"),
                          self.headers())


@serve.deployment(name="tfc", max_ongoing_requests=16)
@serve.ingress(api)
class TfcDeployment(_Replica):
    """One replica: a tfc model behind OpenAI's routes (see the module)."""

    @api.get("/health")
    async def health(self):
        return JSONResponse({"status": "ok"}, headers=self.headers())

    @api.get("/v1/models")
    async def models(self):
        return JSONResponse(headers=self.headers(), content={"object": "list", "data": [
            {"id": self.name, "object": "model", "created": self.created, "owned_by": "tfc"}]})

    @api.post("/v1/chat/completions")
    async def chat(self, request: Request):
        async def work():
            body = await self.body(request, "chat")
            messages = body.get("messages")
            if not isinstance(messages, list) or not messages or not all(
                    isinstance(m, dict) and isinstance(m.get("role"), str) for m in messages):
                raise BadRequest("'messages' must be a non-empty list of objects with a 'role'",
                                 "messages")
            for m in messages:  # content parts of text, as OpenAI allows
                if isinstance(m.get("content"), list):
                    m["content"] = "".join(p.get("text", "") for p in m["content"]
                                           if isinstance(p, dict))
            options = self.sampling(body)

            def prepare():  # rendering, tokenising, allocating the caches
                tok = self.model.tokenizer
                prompt = tok.apply_chat_template(messages, add_generation_prompt=True)
                ids = tok.encode(prompt, add_special_tokens=False)
                return ids, self.generation(ids, options)

            ids, gen = await asyncio.to_thread(prepare)
            return await self.respond(request, gen, len(ids), body, "chat")
        return await self.guarded(work)

    @api.post("/v1/completions")
    async def completions(self, request: Request):
        async def work():
            body = await self.body(request, "completion")
            prompt = body.get("prompt")
            if not isinstance(prompt, str):
                raise BadRequest("'prompt' must be a string", "prompt")
            options = self.sampling(body)

            def prepare():
                ids = self.model.tokenizer.encode(prompt)
                return ids, self.generation(ids, options)

            ids, gen = await asyncio.to_thread(prepare)
            return await self.respond(request, gen, len(ids), body, "completion")
        return await self.guarded(work)

    @api.post("/v1/embeddings")
    async def embeddings(self, request: Request):
        async def work():
            body = await self.body(request, "embedding")
            if not self.embedding:
                raise BadRequest(f"the model '{self.name}' makes no embeddings (no encode entry)",
                                 "model")
            texts = body.get("input")
            if isinstance(texts, str):
                texts = [texts]
            if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
                raise BadRequest("'input' must be a string or a non-empty list of strings", "input")
            encoding = body.get("encoding_format") or "float"
            if encoding not in ("float", "base64"):
                raise BadRequest("'encoding_format' must be 'float' or 'base64'", "encoding_format")
            vectors = await asyncio.to_thread(self.model.embed, texts)
            tokens = sum(len(self.model.tokenizer.encode(t)) for t in texts)
            return JSONResponse(headers=self.headers(), content={
                "object": "list", "model": self.name,
                "data": [{"object": "embedding", "index": i,
                          # base64: the float32 values' little-endian bytes.
                          "embedding": v.tolist() if encoding == "float" else
                          base64.b64encode(v.astype("<f4").tobytes()).decode()}
                         for i, v in enumerate(vectors)],
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})
        return await self.guarded(work)


def app(model: str, *, name: Optional[str] = None, replicas: int = 1, threads: int = 1,
        max_context: int = 4096, max_tokens: int = 512, max_ongoing_requests: int = 16,
        **compile_options: Any):
    """The Ray Serve application of ``replicas`` replicas of ``model`` (a
    checkpoint or a compiled library), each with ``threads`` threads.
    ``max_context`` bounds a request's prompt plus reply (each request holds
    KV caches of its size: SmolLM2 in f32 takes 45 KiB a position),
    ``max_tokens`` is the reply's length when a request names none, and
    ``max_ongoing_requests`` the requests a replica takes at once."""
    return TfcDeployment.options(
        num_replicas=int(replicas),
        max_ongoing_requests=int(max_ongoing_requests),
        ray_actor_options={"num_cpus": int(threads)},
    ).bind(model, name, int(threads), int(max_context), int(max_tokens), compile_options)


def build_app(args: Dict[str, str]):
    """For ``serve run tfc.serve:build_app model=PATH [name=] [replicas=]
    [threads=] [max_context=] [max_tokens=] [max_ongoing_requests=]
    [kv_cache=true] [quantize=...]`` (other keys: tfc-compile options)."""
    args = dict(args)
    if "model" not in args:
        raise ValueError("give model=PATH (a checkpoint or a compiled library)")
    model = args.pop("model")
    name = args.pop("name", None)
    sizes = {k: int(args.pop(k)) for k in ("replicas", "threads", "max_context", "max_tokens",
                                           "max_ongoing_requests") if k in args}
    options = {k: (True if v.lower() == "true" else False if v.lower() == "false" else v)
               for k, v in args.items()}
    return app(model, name=name, **sizes, **options)
