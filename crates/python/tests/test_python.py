"""What a Python user expects: one definition of each option (the
command line's defaults), the version, help, stubs, the console script,
and no Rust toolchain needed."""

from __future__ import annotations

import inspect
import os
import pathlib
import shutil
import subprocess
import sys

import perfq
from perfq import _native

from conftest import PERFQ_BIN, ROOT, TESTDATA, cli

# Python keyword -> the command line's option, where the names differ.
RENAMED = {"interval_ms": "interval", "pid": "pid", "symbols": "no-symbols"}


def test_defaults_are_the_command_lines() -> None:
    for name in ["topdown", "report", "diff", "flamegraph", "query", "convert", "export", "html"]:
        cli_defaults = _native.option_defaults(name)
        for p in inspect.signature(getattr(perfq, name)).parameters.values():
            if p.kind is not p.KEYWORD_ONLY or p.name == "strict" or p.default is p.empty:
                continue
            long = RENAMED.get(p.name, p.name.replace("_", "-"))
            if long in cli_defaults:
                assert str(p.default) == cli_defaults[long], (name, p.name)
            else:
                # An option without a default is off unless given.
                assert p.default in (None, False, True), (name, p.name, p.default)


def test_version_help_and_stubs() -> None:
    assert perfq.__version__ == cli("--version", check=True).stdout.split()[-1]
    assert "Top-down" in perfq.topdown.__doc__
    package = pathlib.Path(perfq.__file__).parent
    assert (package / "_native.pyi").is_file() and (package / "py.typed").is_file()


def test_no_rust_toolchain_here() -> None:
    assert shutil.which("cargo") is None and shutil.which("rustc") is None


def test_the_console_script_is_the_command_line() -> None:
    script = pathlib.Path(sys.executable).parent / "perfq"
    assert script.is_file()
    # The README's first command.
    args = ["topdown", str(TESTDATA / "topdown-spr.data")]
    mine = subprocess.run([script, *args], capture_output=True, text=True)
    theirs = cli(*args)
    assert (mine.returncode, mine.stdout) == (0, theirs.stdout)
    help_ = subprocess.run([script, "--help"], capture_output=True, text=True)
    assert help_.stdout == cli("--help").stdout
    bad = subprocess.run([script, "topdown", "/nonexistent.data"], capture_output=True, text=True)
    assert (bad.returncode, bad.stderr) == (1, cli("topdown", "/nonexistent.data").stderr)
