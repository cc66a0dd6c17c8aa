"""Fixtures of the tfc Python tests: the real checkpoints that
scripts/setup-test-data.sh puts in the cache ($TFC_CACHE_DIR, default
~/.cache/tfc), the references checked in under test/Import/Inputs, and the
tools of the build the package was built against."""
import os

import pytest

# The user's tuning records (tfc-tune) would change the code the tests
# compile; they run without them unless TFC_TUNE_FILE names a file.
os.environ.setdefault("TFC_TUNE_FILE", "none")

import tfc  # noqa: E402
from tfc._build_config import TFC_COMPILE  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
INPUTS = os.path.join(REPO, "test", "Import", "Inputs")
CACHE = os.environ.get("TFC_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "tfc")
MINILM = os.path.join(CACHE, "models", "minilm")
SMOLLM2 = os.path.join(CACHE, "models", "smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")
TOOLS = os.path.dirname(TFC_COMPILE)


def need(path):
    if not os.path.exists(path):
        pytest.skip(f"{path} is missing: run scripts/setup-test-data.sh")
    return path


@pytest.fixture(scope="session")
def minilm():
    return tfc.Model(need(MINILM))


@pytest.fixture(scope="session")
def smollm2():
    return tfc.Model(need(SMOLLM2), kv_cache=True)


@pytest.fixture(scope="session")
def tiny(tmp_path_factory):
    """A one-layer GPT-2 from examples/ with generated weights: a model that
    runs in microseconds, for the tests that call it thousands of times."""
    d = tmp_path_factory.mktemp("tiny")
    so = tfc.compile(os.path.join(REPO, "examples", "handwritten-attention.tfm"),
                     str(d / "tiny.so"))
    weights = d / "tiny.safetensors"
    import subprocess
    subprocess.run([os.path.join(TOOLS, "tfc-weights"), so, "-o", str(weights)], check=True)
    return tfc.Model(so, weights=str(weights))


def make_inputs(entry, batch, seq, seed=0):
    """Inputs of an entry with dims (batch, seq): ids below their bound,
    masks of ones, floats from a normal distribution."""
    import numpy as np
    rng = np.random.default_rng(seed)
    out = {}
    for info in entry.inputs:
        if info.state:
            continue
        shape = tuple(batch if k == 0 else seq if isinstance(d, str) or d is None else d
                      for k, d in enumerate(info.shape))
        if info.dtype == "i64" and "mask" in info.name:
            out[info.name] = np.ones(shape, np.int64)
        elif info.dtype == "i64":
            out[info.name] = rng.integers(0, info.bound if info.bound > 0 else 100, shape)
        else:
            out[info.name] = rng.standard_normal(shape).astype(np.float32)
    return out
