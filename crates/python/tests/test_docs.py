"""docs/python.md's walk-through runs as written, and its deterministic
output (the generated capture's top-down table and hottest source
lines) is what it shows."""

from __future__ import annotations

import contextlib
import io
import os
import pathlib
import re
import shutil

from conftest import ROOT


def test_the_walk_through_runs(tmp_path: pathlib.Path) -> None:
    page = (ROOT / "docs/python.md").read_text()
    code = re.findall(r"```python\n(.*?)```", page, re.S)
    shown = re.findall(r"```text\n(.*?)```", page, re.S)
    # A copy, as in a checkout: the captures name testdata/td-demo by
    # that relative path.
    shutil.copytree(ROOT / "testdata", tmp_path / "testdata")
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        outputs = []
        scope: dict = {}
        for block in code:
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                exec(compile(block, "docs/python.md", "exec"), scope)
            outputs.append(printed.getvalue())
    finally:
        os.chdir(here)
    assert outputs[0] == shown[0], "the top-down table in docs/python.md is not perfq's"
    # The generated capture's hottest lines, from perfq.samples (the last
    # block shown).
    assert outputs[-1] == shown[-1], "the source lines in docs/python.md are not perfq's"
    assert (tmp_path / "topdown.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
