"""The package's contract: errors as exceptions with tfc's message, threads,
the GIL released while tfc computes, no leaks."""
import os
import threading

import numpy as np
import pytest

import tfc
from conftest import MINILM, REPO, make_inputs, need


def test_errors(tmp_path, tiny):
    with pytest.raises(OSError, match="no-such"):
        tfc.Model(str(tmp_path / "no-such.so"), weights="x")
    with pytest.raises(FileNotFoundError):
        tfc.compile(tmp_path / "missing.tfm")
    bad = tmp_path / "bad.tfm"
    bad.write_text("model broken {\n  oops\n}\n")
    with pytest.raises(tfc.CompileError, match=r"bad\.tfm:\d+:\d+"):
        tfc.compile(bad, tmp_path / "bad.so")
    with pytest.raises(ValueError, match="no entry 'nope'"):
        tiny.run("nope")
    entry = tiny.entry()
    good = make_inputs(entry, 1, 4)
    with pytest.raises(TypeError, match="needs input"):
        tiny.run()
    with pytest.raises(TypeError, match="takes no input 'bogus'"):
        tiny.run(bogus=1, **good)
    name = entry.inputs[0].name
    wrong = dict(good)
    wrong[name] = np.zeros((3,), np.int64)
    with pytest.raises(ValueError, match=name):
        tiny.run(**wrong)
    with pytest.raises(tfc.Error):
        tfc.Tokenizer(os.path.join(REPO, "README.md"))
    with pytest.raises(OSError):
        tfc.Tokenizer(str(tmp_path / "none.json"))
    assert issubclass(tfc.Error, RuntimeError)


def test_tiny_run_and_views(tiny):
    e = tiny.entry()
    x = make_inputs(e, 2, 5)
    (y,) = tiny.run(**x).values()
    assert y.shape[:2] == (2, 5) and np.isfinite(y).all()
    # A read-only, non-contiguous view is copied into a contiguous array; the
    # result is the same.
    name = e.inputs[0].name
    wide = np.zeros((2, 10), np.int64)
    wide[:, ::2] = x[name]
    view = wide[:, ::2]
    view.flags.writeable = False
    (y2,) = tiny.run(**dict(x, **{name: view})).values()
    np.testing.assert_array_equal(y, y2)
    # Anything with __dlpack__ (a CPU PyTorch tensor, here a stand-in that
    # only speaks DLPack) is taken through it.
    class OnlyDlpack:
        def __init__(self, a):
            self._a = a

        def __dlpack__(self, **kw):
            return self._a.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self._a.__dlpack_device__()

    (y4,) = tiny.run(**{k: OnlyDlpack(v) for k, v in x.items()}).values()
    np.testing.assert_array_equal(y, y4)
    # Python lists are arrays too.
    (y3,) = tiny.run(**{k: v.tolist() for k, v in x.items()}).values()
    np.testing.assert_array_equal(y, y3)


def test_threads_and_gil(tiny, minilm):
    e = tiny.entry()
    xs = [make_inputs(e, 2, 7, seed=i) for i in range(8)]
    solo = [next(iter(tiny.run(**x).values())).copy() for x in xs]
    results = [None] * len(xs)

    def work(i):
        for _ in range(20):
            results[i] = next(iter(tiny.run(**xs[i]).values())).copy()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(xs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for a, b in zip(results, solo):
        np.testing.assert_array_equal(a, b)
    # The GIL is released during a run: another Python thread advances while
    # one call of tfc is under way (no clock involved).
    ticks = [0]
    done = threading.Event()

    def ticker():
        while not done.is_set():
            ticks[0] += 1

    t = threading.Thread(target=ticker)
    t.start()
    texts = ["a sentence long enough to take a while to embed " * 20] * 16
    before = ticks[0]
    minilm.embed(texts, batch_size=16)
    after = ticks[0]
    done.set()
    t.join()
    assert after > before


def rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])


def test_no_leak(tiny, minilm):
    """10,000 runs and tokenizer calls leave the references and the resident
    memory where they were after a warm-up."""
    import sys
    x = make_inputs(tiny.entry(), 1, 3)
    tok = minilm.tokenizer

    def round_(n):
        for _ in range(n):
            tiny.run(**x)
            tok("Hello world, no leaks here", return_tensors="np")
            tok.decode([101, 7592, 2088, 102])

    round_(1000)
    refs = sys.getrefcount(tiny), [sys.getrefcount(v) for v in x.values()], sys.getrefcount(tok)
    before = rss_kib()
    round_(10000)
    after = rss_kib()
    assert (sys.getrefcount(tiny), [sys.getrefcount(v) for v in x.values()], sys.getrefcount(tok)) == refs
    # Measured: growth under 100 KiB; a leak of one output a call would be
    # 10,000 x (its bytes) = several MiB.
    assert after - before < 2048, f"RSS grew by {after - before} KiB"
