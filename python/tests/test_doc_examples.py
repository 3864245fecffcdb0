"""The Python examples of README.md and docs/tutorial.md run from a clone:
every ```python block, in a scratch directory holding a copy of the
repository's data/ (the blocks name data/... as a clone's root does).
tests/doc_examples_test.sh runs the shell examples (ctest doc_examples)."""
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = ["README.md", "docs/tutorial.md"]


def python_blocks(doc):
    text = (ROOT / doc).read_text(encoding="utf-8")
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


CASES = [(doc, i, code) for doc in DOCS for i, code in enumerate(python_blocks(doc))]


def test_docs_have_python_examples():
    # A doc that lost its blocks (or a changed fence) would pass silently below.
    for doc in DOCS:
        assert python_blocks(doc), doc + " has no ```python block"


@pytest.mark.parametrize("doc,index,code", CASES, ids=["%s-%d" % (d, i) for d, i, _ in CASES])
def test_doc_python_block(doc, index, code, tmp_path):
    shutil.copytree(ROOT / "data", tmp_path / "data")
    script = tmp_path / "block.py"
    script.write_text(code, encoding="utf-8")
    r = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, "%s, python block %d:\n%s\n%s%s" % (doc, index, code, r.stdout, r.stderr)
