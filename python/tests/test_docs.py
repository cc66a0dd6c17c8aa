"""The examples of docs/python.md run as written (on the checkpoints of
scripts/setup-test-data.sh, at the paths the examples name)."""
import os
import re

from conftest import MINILM, REPO, SMOLLM2, need


def test_docs_python_examples_run(capsys):
    need(MINILM)
    need(SMOLLM2)
    doc = open(os.path.join(REPO, "docs", "python.md"), encoding="utf-8").read()
    blocks = re.findall(r"```python\n(.*?)```", doc, re.S)
    assert len(blocks) >= 4
    namespace = {}
    if os.environ.get("TFC_CACHE_DIR"):
        # The examples name ~/.cache/tfc; follow the cache where it moved.
        blocks = [b.replace("~/.cache/tfc", os.environ["TFC_CACHE_DIR"]) for b in blocks]
    for block in blocks:
        exec(compile(block, "docs/python.md", "exec"), namespace)
    assert namespace["vectors"].shape == (2, 384)
    assert namespace["out"]["sentence_embedding"].shape == (2, 384)
    assert namespace["gen"].finish_reason in ("stop", "length", "context")
    assert capsys.readouterr().out  # the chat example printed its reply
