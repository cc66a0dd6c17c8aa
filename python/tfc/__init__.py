"""tfc: compile transformer checkpoints into native code, and run them.

    import tfc
    model = tfc.Model("all-MiniLM-L6-v2/")          # compiles, then loads
    vectors = model.embed(["Hello world", "Bonjour"])

    chat = tfc.Model("SmolLM2-135M-Instruct-Q4_1.gguf", kv_cache=True)
    for piece in chat.chat([{"role": "user", "content": "Hi!"}],
                           max_new_tokens=32):
        print(piece, end="", flush=True)

Errors from tfc raise ValueError (bad arguments or inputs), OSError
(files), MemoryError, or tfc.Error (everything else, such as a checkpoint
tfc cannot read), each with tfc's message. See docs/python.md.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
import weakref
from dataclasses import dataclass
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _tfc
from ._build_config import TFC_COMPILE as _BUILT_WITH_COMPILER

__all__ = [
    "Error", "CompileError", "compile", "Model", "Session", "Generation",
    "Tokenizer", "set_num_threads", "num_threads", "__version__",
]

__version__ = "0.1.0"

Error = _tfc.Error
Error.__doc__ = "A failure in tfc that is not a bad argument or a file (a RuntimeError)."

PathLike = Union[str, "os.PathLike[str]"]

_DTYPES = {
    "f32": np.float32, "f64": np.float64, "f16": np.float16,
    "i64": np.int64, "i32": np.int32, "bool": np.bool_,
}


class CompileError(Error):
    """tfc-compile refused the input; the message is the compiler's."""


def set_num_threads(n: int) -> None:
    """Threads of tfc's process-wide pool (as TFC_NUM_THREADS)."""
    _tfc.set_num_threads(int(n))


def num_threads() -> int:
    """Threads of tfc's process-wide pool."""
    return _tfc.num_threads()


def _compiler() -> str:
    path = os.environ.get("TFC_COMPILE") or _BUILT_WITH_COMPILER
    if path and os.access(path, os.X_OK):
        return path
    found = shutil.which("tfc-compile")
    if found:
        return found
    raise Error("tfc-compile not found: it was built at %r; set TFC_COMPILE "
                "to its path or put it on PATH" % _BUILT_WITH_COMPILER)


def _option_flags(options: Mapping[str, Any]) -> List[str]:
    flags = []
    for key, value in sorted(options.items()):
        flag = "--" + key.replace("_", "-")
        if value is True:
            flags.append(flag)
        elif value is False or value is None:
            continue
        elif isinstance(value, (list, tuple)):
            flags += [flag + "=" + str(v) for v in value]
        else:
            flags.append(flag + "=" + str(value))
    return flags


def _identity(path: str) -> List[Any]:
    """What a compiled file depends on: each file's path, size and mtime."""
    files = []
    if os.path.isdir(path):
        for root, _, names in sorted(os.walk(path)):
            for name in sorted(names):
                files.append(os.path.join(root, name))
    else:
        files.append(path)
    out = []
    for f in files:
        st = os.stat(f)
        out.append([os.path.abspath(f), st.st_size, st.st_mtime_ns])
    return out


def _host_identity() -> List[str]:
    """What tfc-compile targets by default: the host CPU (its model and
    features, as /proc/cpuinfo lists them) as TFC_HOST_CPU masks it."""
    model = flags = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and not model:
                    model = line.split(":", 1)[1].strip()
                elif line.startswith("flags") and not flags:
                    flags = hashlib.sha256(line.encode()).hexdigest()[:16]
                if model and flags:
                    break
    except OSError:
        pass
    return [model, flags, os.environ.get("TFC_HOST_CPU", "")]


def _tuning_identity() -> List[Any]:
    """The tuning records tfc-compile reads by default (tfc-tune's: they
    change the code compiled for the host): TFC_TUNE_FILE, else the cache's
    tuning.json, by path, size and modification time."""
    env = os.environ.get("TFC_TUNE_FILE", "")
    if env == "none":
        return [env]
    path = env
    if not path:
        cache = os.environ.get("TFC_CACHE_DIR")
        if not cache:
            xdg = os.environ.get("XDG_CACHE_HOME")
            cache = os.path.join(xdg, "tfc") if xdg else os.path.join(
                os.path.expanduser("~"), ".cache", "tfc")
        path = os.path.join(cache, "tuning.json")
    try:
        st = os.stat(path)
        return [env, path, st.st_size, st.st_mtime_ns]
    except OSError:
        return [env, path]


def compile(source: PathLike, output: Optional[PathLike] = None, **options: Any) -> str:
    """Compiles a .tfm description or a checkpoint (a Hugging Face
    directory, a .gguf) into a model library and returns its path.

    Options are tfc-compile's, with underscores: ``kv_cache=True`` is
    ``--kv-cache``, ``quantize="q8_0"`` is ``--quantize=q8_0``,
    ``D=["layers=2"]`` gives ``-D layers=2``. Without ``output`` the library
    goes to a cache (``$TFC_CACHE_DIR`` or ``~/.cache/tfc``, ``compiled/``)
    keyed by the source's files, the options, the compiler, the host CPU and
    its tuning records (tfc-tune), and a later call with the same key reuses it. Raises CompileError with the
    compiler's message when it refuses the input.
    """
    source = os.path.expanduser(os.fspath(source))
    if not os.path.exists(source):
        raise FileNotFoundError(f"{source}: no such file or directory")
    compiler = _compiler()
    flags = []
    for d in options.pop("D", []) or []:
        flags += ["-D", str(d)]
    flags += _option_flags(options)
    if output is None:
        key = json.dumps([_identity(source), flags, _identity(compiler), _host_identity(),
                          _tuning_identity()])
        digest = hashlib.sha256(key.encode()).hexdigest()[:24]
        cache = os.environ.get("TFC_CACHE_DIR") or os.path.join(
            os.path.expanduser("~"), ".cache", "tfc")
        out_dir = os.path.join(cache, "compiled")
        os.makedirs(out_dir, exist_ok=True)
        output = os.path.join(out_dir, digest + ".so")
        if os.path.exists(output):
            return output
    output = os.fspath(output)
    # Written beside the target and renamed: a reader never sees half a file.
    fd, tmp = tempfile.mkstemp(suffix=".so", dir=os.path.dirname(os.path.abspath(output)))
    os.close(fd)
    try:
        proc = subprocess.run([compiler, source, "-o", tmp] + flags,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            message = proc.stderr.strip() or f"tfc-compile exited with {proc.returncode}"
            raise CompileError(message)
        os.replace(tmp, output)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return output


def _is_model_library(path: str) -> bool:
    if not os.path.isfile(path):
        return False
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


@dataclass(frozen=True)
class TensorInfo:
    """An input or output of an entry: name, dtype ("f32", "i64", ...) and
    shape (an int per static dim, the name of a named dynamic dim, or None)."""
    name: str
    dtype: str
    shape: Tuple[Union[int, str, None], ...]
    #: Per dim: the static size or the most a dynamic dim takes (-1: no bound).
    max_shape: Tuple[int, ...] = ()
    state: bool = False
    #: Integer inputs: every value must be below it (-1: unbounded).
    bound: int = -1


@dataclass(frozen=True)
class Entry:
    """An entry point of a model: its inputs and outputs, in order."""
    name: str
    inputs: Tuple[TensorInfo, ...]
    outputs: Tuple[TensorInfo, ...]


class Model:
    """A compiled model, loaded with its weights.

    ``Model(path)`` takes a model library (from tfc-compile or
    :func:`compile`) with ``weights=`` (a .safetensors, .gguf or checkpoint
    directory), or a checkpoint, which is compiled first (``compile_options``
    go to :func:`compile`) and whose weights and tokenizer are then used.
    ``threads`` sets tfc's process-wide thread count.

    Calls may come from several Python threads; runs of one model take
    turns, runs of different models run at once. The GIL is released while
    tfc computes.
    """

    def __init__(self, path: PathLike, weights: Optional[PathLike] = None, *,
                 tokenizer: Optional[Union[PathLike, "Tokenizer"]] = None,
                 threads: Optional[int] = None, **compile_options: Any):
        path = os.path.expanduser(os.fspath(path))
        if threads is not None:
            set_num_threads(threads)
        self.checkpoint: Optional[str] = None
        # What the checkpoint states, read on first use.
        self._eos_ids: Optional[List[int]] = None
        self._chat_stop_ids: Optional[List[int]] = None
        self._st_max_length: Optional[int] = None
        if _is_model_library(path):
            if compile_options:
                raise TypeError("compile options given for a model library: "
                                + ", ".join(sorted(compile_options)))
            self.library = path
        else:
            self.checkpoint = path
            self.library = compile(path, **compile_options)
            if weights is None:
                weights = path
            if tokenizer is None:
                tokenizer = path
        self._model = _tfc.Model(self.library)
        self.weights = os.path.expanduser(os.fspath(weights)) if weights is not None else None
        if self.weights is not None:
            self._model.load_weights(self.weights)
        if isinstance(tokenizer, Tokenizer) or tokenizer is None:
            self._tokenizer = tokenizer
        else:
            self._tokenizer = Tokenizer(os.path.expanduser(os.fspath(tokenizer)))
        self.entries: Dict[str, Entry] = {}
        for e in self._model.entries():
            ins = tuple(TensorInfo(i["name"], i["dtype"], i["shape"], i["max_shape"], i["state"],
                                   i["bound"])
                        for i in e["inputs"])
            outs = tuple(TensorInfo(o["name"], o["dtype"], o["shape"], o["max_shape"])
                         for o in e["outputs"])
            self.entries[e["name"]] = Entry(e["name"], ins, outs)

    def __repr__(self) -> str:
        return f"tfc.Model({self.library!r}, entries={list(self.entries)})"

    @property
    def tokenizer(self) -> "Tokenizer":
        """The checkpoint's tokenizer (ValueError if the model has none)."""
        if self._tokenizer is None:
            raise ValueError("this model has no tokenizer: pass tokenizer= "
                             "(a tokenizer.json, a checkpoint directory or a .gguf)")
        return self._tokenizer

    @property
    def metadata(self) -> Dict[str, Any]:
        """The metadata the compiler wrote (entries, weights, options)."""
        return json.loads(self._model.metadata_json())

    @property
    def cpu_variant(self) -> str:
        """The code variant the runtime chose for this CPU ("avx512", ...)."""
        return self._model.cpu_variant()

    def entry(self, name: Optional[str] = None) -> Entry:
        if name is None:
            if len(self.entries) != 1:
                raise ValueError("the model has several entries (%s): name one"
                                 % ", ".join(self.entries))
            return next(iter(self.entries.values()))
        if name not in self.entries:
            raise ValueError("the model has no entry %r (entries: %s)"
                             % (name, ", ".join(self.entries)))
        return self.entries[name]

    @staticmethod
    def _arrays(infos: Sequence[TensorInfo], given: Mapping[str, Any], what: str) -> List[np.ndarray]:
        names = [i.name for i in infos]
        unknown = sorted(set(given) - set(names))
        if unknown:
            raise TypeError("%s takes no input %s (inputs: %s)"
                            % (what, ", ".join(map(repr, unknown)), ", ".join(names)))
        missing = [n for n in names if n not in given]
        if missing:
            raise TypeError("%s needs input %s" % (what, ", ".join(map(repr, missing))))
        arrays = []
        for info in infos:
            value = given[info.name]
            if hasattr(value, "__dlpack__") and not isinstance(value, np.ndarray):
                value = np.from_dlpack(value)
            dtype = _DTYPES.get(info.dtype)
            # No copy when the array already has the dtype and is C-contiguous.
            arrays.append(np.ascontiguousarray(value, dtype=dtype))
        return arrays

    def run(self, entry: Optional[str] = None, *, out: Optional[Mapping[str, np.ndarray]] = None,
            **inputs: Any) -> Dict[str, np.ndarray]:
        """Runs an entry on NumPy arrays (or anything with ``__dlpack__``,
        such as CPU PyTorch tensors) given by input name, and returns its
        outputs by name. Inputs with the entry's dtype that are C-contiguous
        are read in place; outputs are handed over without a copy, or written
        into the arrays of ``out`` (by output name) when given."""
        e = self.entry(entry)
        arrays = self._arrays([i for i in e.inputs if not i.state], inputs,
                              f"entry {e.name!r}")
        into = None
        if out is not None:
            names = [o.name for o in e.outputs]
            if set(out) != set(names):
                raise TypeError("out must name every output: %s" % ", ".join(names))
            into = [out[n] for n in names]
            for o, arr in zip(e.outputs, into):
                want = _DTYPES.get(o.dtype)
                if (not isinstance(arr, np.ndarray) or not arr.flags.c_contiguous
                        or not arr.flags.writeable or arr.dtype != want):
                    raise ValueError(f"out[{o.name!r}] must be a writable, C-contiguous "
                                     f"{np.dtype(want).name} array (it is written in place)")
        results = self._model.run(e.name, arrays, into)
        return {o.name: r for o, r in zip(e.outputs, results)}

    def __call__(self, entry: Optional[str] = None, **inputs: Any) -> Dict[str, np.ndarray]:
        return self.run(entry, **inputs)

    def session(self, entry: Optional[str] = None, *, context: int = 0, batch: int = 1) -> "Session":
        """A session of a cached entry (compiled with ``kv_cache=True``): the
        key/value caches of ``batch`` sequences of up to ``context`` tokens
        (0: the model's bound on positions, at most 4096)."""
        if entry is None:
            cached = [n for n in self.entries if n.endswith("_cached")]
            if len(cached) != 1:
                raise ValueError("name the session's entry: the model has %s"
                                 % (", ".join(cached) if cached else
                                    "no cached entry (compile with kv_cache=True)"))
            entry = cached[0]
        e = self.entry(entry)
        if not context:
            context = min(self.max_context(e.name), 4096)
        return Session(self, e, context, batch)

    def max_context(self, entry: Optional[str] = None) -> int:
        """The most positions a session of the cached entry may hold (the
        caches' and the token input's bounds), or 2**31 - 1 when the model
        states none."""
        if entry is None:
            cached = [n for n in self.entries if n.endswith("_cached")]
            entry = cached[0] if len(cached) == 1 else None
        e = self.entry(entry)
        # The caches' positions and the tokens' sequence dim bound it.
        bounds = [i.max_shape[2] for i in e.inputs
                  if i.state and len(i.max_shape) == 4 and i.max_shape[2] > 0]
        bounds += [i.max_shape[1] for i in e.inputs
                   if not i.state and i.dtype == "i64" and len(i.max_shape) == 2
                   and i.max_shape[1] > 0]
        return min(bounds) if bounds else 2**31 - 1

    def embed(self, texts: Union[str, Sequence[str]], *, batch_size: int = 32,
              entry: str = "encode") -> np.ndarray:
        """Sentence embeddings: texts tokenised with the model's tokenizer,
        padded per batch and cut to the checkpoint's max_seq_length (as
        sentence-transformers does; else to the model's positions), through
        the ``encode`` entry that tfc-compile makes for sentence-transformers
        checkpoints (pooling, Dense and normalising modules included).
        Returns float32 [len(texts), dim]."""
        single = isinstance(texts, str)
        if single:
            texts = [texts]
        e = self.entry(entry)
        # Texts longer than the model's positions are cut to them, as
        # sentence-transformers cuts to its max_seq_length.
        ids = [i for i in e.inputs if i.name == "input_ids"]
        longest = ids[0].max_shape[1] if ids and len(ids[0].max_shape) == 2 else -1
        st = self._sentence_transformers_max_length()
        if st > 0:
            longest = st if longest <= 0 else min(longest, st)
        rows = []
        for start in range(0, len(texts), batch_size):
            batch = self.tokenizer(list(texts[start:start + batch_size]),
                                   padding=True, return_tensors="np",
                                   truncation=longest > 0,
                                   max_length=longest if longest > 0 else None)
            given = {i.name: batch[i.name] for i in e.inputs if i.name in batch}
            out = self.run(e.name, **given)
            rows.append(next(iter(out.values())))
        result = np.concatenate(rows) if rows else np.zeros((0, 0), np.float32)
        return result[0] if single else result

    def _sentence_transformers_max_length(self) -> int:
        """max_seq_length of a sentence-transformers directory, else -1
        (read once)."""
        if self._st_max_length is None:
            self._st_max_length = -1
            if self.checkpoint and os.path.isdir(self.checkpoint):
                try:
                    with open(os.path.join(self.checkpoint,
                                           "sentence_bert_config.json")) as f:
                        value = json.load(f).get("max_seq_length")
                    if isinstance(value, int) and value > 0:
                        self._st_max_length = value
                except (OSError, ValueError):
                    pass
        return self._st_max_length

    def chat(self, messages: Sequence[Mapping[str, Any]], **generate_options: Any) -> "Generation":
        """Renders a conversation with the checkpoint's chat template and
        generates the assistant's reply as an iterator of text pieces (see
        :meth:`Session.generate`); a fresh session each call."""
        tok = self.tokenizer
        prompt = tok.apply_chat_template(messages, add_generation_prompt=True)
        ids = tok.encode(prompt, add_special_tokens=False)
        given = generate_options.pop("eos_ids", None)
        stop_ids = self.chat_stop_ids() if not given else list(given) + [
            i for i in tok.chat_stop_ids() if i not in given]
        # The caches hold what this reply needs, not the model's whole bound.
        context = generate_options.pop("context", 0) or min(
            self.max_context(), len(ids) + int(generate_options.get("max_new_tokens", 64)))
        session = self.session(context=context)
        return session.generate(ids, eos_ids=stop_ids, **generate_options)

    def eos_ids(self) -> List[int]:
        """The ids that end a generation as the checkpoint states them, else
        the tokenizer's usual end-of-text tokens (read once)."""
        if self._eos_ids is None:
            tok = self._tokenizer._tok if self._tokenizer is not None else None
            self._eos_ids = list(_tfc.checkpoint_eos_ids(
                self.checkpoint or self.weights or "", tok))
        return list(self._eos_ids)

    def chat_stop_ids(self) -> List[int]:
        """The ids that end a chat reply: :meth:`eos_ids` and the chat
        template's end of turn (none when the checkpoint has no template)."""
        if self._chat_stop_ids is None:
            stops = self.eos_ids()
            try:
                stops += [i for i in self.tokenizer.chat_stop_ids() if i not in stops]
            except Error:
                pass  # no chat template
            self._chat_stop_ids = stops
        return list(self._chat_stop_ids)


class Session:
    """The caches of a cached entry and the position reached in them.
    One thread at a time (make one per thread)."""

    def __init__(self, model: Model, entry: Entry, context: int, batch: int):
        self.model = model
        self.entry = entry
        self._session = _tfc.Session(model._model, entry.name, int(batch), int(context))
        self._active: Optional["weakref.ref[Generation]"] = None

    @property
    def position(self) -> int:
        return self._session.position

    @property
    def context(self) -> int:
        return self._session.context

    def rewind(self, position: int = 0) -> None:
        """Forgets the tokens from ``position`` on."""
        self._session.rewind(int(position))

    def run(self, **inputs: Any) -> Dict[str, np.ndarray]:
        """Runs the entry on the next tokens (inputs by name, without the
        caches), advancing the position."""
        names = self._session.input_names
        infos = [i for n in names for i in self.entry.inputs if i.name == n]
        arrays = Model._arrays(infos, inputs, f"entry {self.entry.name!r}")
        results = self._session.run(arrays, len(self.entry.outputs))
        return {o.name: r for o, r in zip(self.entry.outputs, results)}

    def generate(self, prompt: Union[str, Sequence[int]], *, max_new_tokens: int = 64,
                 temperature: float = 0.0, top_k: int = 0, top_p: float = 1.0,
                 min_p: float = 0.0, repetition_penalty: float = 1.0,
                 seed: int = 0, stop: Union[str, Sequence[str], None] = None,
                 eos_ids: Optional[Sequence[int]] = None,
                 add_special_tokens: bool = True) -> "Generation":
        """Generates after ``prompt`` (text, tokenised with the model's
        tokenizer, or token ids) and returns an iterator of text pieces
        (never a partial UTF-8 character). Greedy with ``temperature=0``,
        else sampled (top_k, top_p, min_p, repetition_penalty, seed, in
        transformers' order). Ends at an end-of-sequence id (``eos_ids``,
        default the checkpoint's), at ``max_new_tokens``, at a full context
        or before the first of the ``stop`` strings. Closing the iterator
        (or dropping it) cancels the generation."""
        tok = self.model._tokenizer
        if isinstance(prompt, str):
            ids = self.model.tokenizer.encode(prompt, add_special_tokens=add_special_tokens)
        else:
            ids = [int(i) for i in prompt]
        if eos_ids is None:
            eos_ids = self.model.eos_ids()
        if isinstance(stop, str):
            stop = [stop]
        if stop and tok is None:
            raise ValueError("stop strings need a tokenizer: give the model one")
        if seed < 0:
            raise ValueError(f"seed must be >= 0, not {seed}")
        active = self._active() if self._active is not None else None
        if active is not None and active._gen is not None:
            raise ValueError("the session has a generation under way: finish or close() "
                             "it first (or use another session)")
        gen = _tfc.Generation(self._session, ids, int(max_new_tokens), float(temperature),
                              int(top_k), float(top_p), float(min_p),
                              float(repetition_penalty), int(seed),
                              [int(i) for i in eos_ids])
        result = Generation(self, gen, tok, list(stop or []))
        self._active = weakref.ref(result)
        return result


class Generation(Iterator[str]):
    """The text pieces of a generation, as they are decided. ``tokens``
    holds the ids so far and ``finish_reason`` says why it ended ("stop":
    an end-of-sequence id or a stop string, "length", "context"); ``close()``
    cancels. Without a tokenizer the pieces are the ids as strings."""

    def __init__(self, session: Session, gen: Any, tokenizer: Optional["Tokenizer"],
                 stop: List[str]):
        self._session = session
        self._gen = gen
        self._stream = (_tfc.DecodeStream(tokenizer._tok, True)
                        if tokenizer is not None else None)
        self._stop = stop
        self._held = ""  # text that may be the start of a stop string
        self.tokens: List[int] = []
        self.finish_reason: Optional[str] = None

    def __iter__(self) -> "Generation":
        return self

    def _safe_prefix(self) -> str:
        """Moves out of the held text what cannot start a stop string."""
        keep = 0
        for s in self._stop:
            for n in range(min(len(s) - 1, len(self._held)), 0, -1):
                if self._held.endswith(s[:n]):
                    keep = max(keep, n)
                    break
        out = self._held[:len(self._held) - keep]
        self._held = self._held[len(self._held) - keep:]
        return out

    def __next__(self) -> str:
        while self._gen is not None:
            token, reason = self._gen.next()
            if token >= 0:
                self.tokens.append(token)
            piece = ""
            if self._stream is not None:
                if token >= 0:
                    piece = self._stream.feed(token)
                if reason is not None:
                    piece += self._stream.finish()
            elif token >= 0:
                piece = str(token) + " "
            if reason is not None:
                self.finish_reason = "stop" if reason == "stop" else reason
                self._gen = None
            self._held += piece
            if self._stop:
                cut = min((self._held.find(s) for s in self._stop if s in self._held),
                          default=-1)
                if cut >= 0:
                    self._held = self._held[:cut]
                    self.finish_reason = "stop"
                    self._gen = None
                    break
                if self._gen is not None:
                    out = self._safe_prefix()
                    if out:
                        return out
                    continue
            out, self._held = self._held, ""
            if out:
                return out
        if self._held:
            out, self._held = self._held, ""
            return out
        raise StopIteration

    def text(self) -> str:
        """The rest of the generation as one string."""
        return "".join(self)

    def close(self) -> None:
        """Stops the generation (the session keeps what was run)."""
        self._gen = None
        self._held = ""

    def __enter__(self) -> "Generation":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class Tokenizer:
    """A checkpoint's tokenizer (tokenizer.json of a Hugging Face directory,
    or a .gguf's vocabulary), computing the ids Hugging Face's tokenizers and
    llama.cpp compute. Usable from several threads."""

    def __init__(self, path: PathLike):
        self.path = os.path.expanduser(os.fspath(path))
        self._tok = _tfc.Tokenizer(self.path)
        # As transformers: the file's padding and truncation do not apply
        # unless a call asks for them (its pad ids are kept for padding).
        self._pad = self._tok.pad_ids()
        self._tok.set_padding(0)
        self._tok.set_truncation(0)
        self._template: Any = None
        self._truncated: Dict[int, Any] = {}
        self._template_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"tfc.Tokenizer({self.path!r})"

    @property
    def vocab_size(self) -> int:
        return self._tok.vocab_size

    def encode(self, text: str, add_special_tokens: bool = True) -> List[int]:
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, not {type(text).__name__}")
        return self._tok.encode(text, add_special_tokens)[0]

    def decode(self, ids: Iterable[int], skip_special_tokens: bool = False) -> str:
        return self._tok.decode([int(i) for i in ids], skip_special_tokens)

    def token_to_id(self, token: str) -> Optional[int]:
        return self._tok.token_to_id(token)

    def id_to_token(self, id: int) -> Optional[str]:
        t = self._tok.id_to_token(int(id))
        return None if t is None else t.decode("utf-8", "replace")

    def __call__(self, text: Union[str, Sequence[str]], *, add_special_tokens: bool = True,
                 padding: Union[bool, str] = False, truncation: bool = False,
                 max_length: Optional[int] = None,
                 return_tensors: Optional[str] = None) -> Dict[str, Any]:
        """As transformers' tokenizer call: a dict with ``input_ids``,
        ``token_type_ids`` and ``attention_mask`` (lists, or int64 NumPy
        arrays with ``return_tensors="np"``). ``padding``: False, True or
        "longest" (to the batch's longest), "max_length"; ``truncation``
        cuts to ``max_length`` ids."""
        single = isinstance(text, str)
        texts = [text] if single else list(text)
        for t in texts:
            if not isinstance(t, str):
                raise TypeError(f"text must be str or a list of str, not {type(t).__name__}")
        if padding not in (False, True, "longest", "max_length", "do_not_pad"):
            raise ValueError(f"padding must be True, False, 'longest' or 'max_length', not {padding!r}")
        if return_tensors not in (None, "np"):
            raise ValueError(f"return_tensors must be None or 'np', not {return_tensors!r}")
        if (truncation or padding == "max_length") and max_length is None:
            raise ValueError("truncation and padding='max_length' need max_length")
        encoder = self._truncating(max_length) if truncation else self._tok
        rows = [list(encoder.encode(t, add_special_tokens)) for t in texts]
        if not rows:
            empty: Dict[str, Any] = {}
            for name in ("input_ids", "token_type_ids", "attention_mask"):
                empty[name] = np.zeros((0, 0), np.int64) if return_tensors == "np" else []
            return empty
        if padding in (True, "longest", "max_length"):
            length = max_length if padding == "max_length" else max(len(r[0]) for r in rows)
            pad_id, pad_type, left = self._pad
            padded = []
            for ids, types, mask in rows:
                n = max(0, length - len(ids))
                fill = lambda row, v: ([v] * n + row) if left else (row + [v] * n)
                padded.append([fill(ids, pad_id), fill(types, pad_type), fill(mask, 0)])
            rows = padded
        if return_tensors == "np" and len({len(r[0]) for r in rows}) > 1:
            raise ValueError("sequences of different lengths: pass padding=True "
                             "to make an array")
        out: Dict[str, Any] = {}
        for k, name in enumerate(("input_ids", "token_type_ids", "attention_mask")):
            col = [r[k] for r in rows]
            if return_tensors == "np":
                out[name] = np.asarray(col, dtype=np.int64).reshape(len(col), -1)
            else:
                out[name] = col[0] if single else col
        return out

    def _truncating(self, max_length: int) -> Any:
        """A copy of the tokenizer that truncates to max_length ids (the
        post-processor's special tokens kept, longest first), one per length:
        the shared one is never reconfigured under another thread."""
        if int(max_length) < 1:
            raise ValueError(f"max_length must be >= 1, not {max_length}")
        with self._template_lock:
            tok = self._truncated.get(max_length)
            if tok is None:
                if len(self._truncated) >= 4:  # a few lengths in use at once
                    self._truncated.pop(next(iter(self._truncated)))
                tok = _tfc.Tokenizer(self.path)
                tok.set_padding(0)
                tok.set_truncation(int(max_length))
                self._truncated[max_length] = tok
            return tok

    def _chat_template(self) -> Any:
        with self._template_lock:
            if self._template is None:
                self._template = _tfc.ChatTemplate.load(self.path)
            return self._template

    def apply_chat_template(self, messages: Sequence[Mapping[str, Any]], *,
                            add_generation_prompt: bool = True, tokenize: bool = False,
                            chat_template: Optional[str] = None, **variables: Any) -> Union[str, List[int]]:
        """Renders a conversation with the checkpoint's chat template (or the
        Jinja source ``chat_template``), as transformers does; with
        ``tokenize=True`` the ids of the text (no special tokens added: the
        template writes them)."""
        context = dict(variables)
        context["messages"] = list(messages)
        context["add_generation_prompt"] = bool(add_generation_prompt)
        if chat_template is not None:
            template = _tfc.ChatTemplate.parse(chat_template, None, None)
        else:
            template = self._chat_template()
        try:
            payload = json.dumps(context, ensure_ascii=False)
        except (TypeError, ValueError) as e:
            raise TypeError(f"messages must be JSON-serialisable: {e}") from None
        text = template.render(payload)
        return self.encode(text, add_special_tokens=False) if tokenize else text

    def chat_stop_ids(self) -> List[int]:
        """The ids that end an assistant turn of the chat template."""
        return list(self._chat_template().stop_ids(self._tok))
