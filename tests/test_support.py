"""The in-process runner the fast tier relies on: it must see what a user's process sees, and
leave the test process as it found it."""

from __future__ import annotations

import os
import re
import tempfile

import pytest

from support import invoke, run_cli


@pytest.mark.process
@pytest.mark.parametrize("args", [["--bogus"], ["--rounds", "-1"], ["--version"],
                                  ["verify", "--rounds", "3"], ["--demo", "-q", "Q?"],
                                  ["verify"]], ids=" ".join)
def test_in_this_process_and_as_its_own_the_cli_answers_alike(home, args):
    """Exit code, stdout and stderr, the working directory and time stamps aside."""
    def seen(r, where) -> tuple[int, str, str]:
        def plain(text: str) -> str:
            text = text.replace(str(where), "<cwd>")
            return re.sub(r"debate-\d{8}T\d{6}Z(-\d+)?", "debate-<ts>", text)
        return r.returncode, plain(r.stdout), plain(r.stderr)

    a, b = home / "a", home / "b"
    a.mkdir()
    b.mkdir()
    assert seen(invoke(*args, cwd=a), a) == seen(run_cli(*args, cwd=b), b)


def test_the_environment_cwd_argv_stdin_and_temp_dir_are_put_back(home, tmp_path):
    import sys

    before = (dict(os.environ), os.getcwd(), sys.argv, sys.stdin, tempfile.tempdir)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    r = invoke("--demo", "-q", "Q?", cwd=elsewhere,
               env={"TMPDIR": str(tmp_path), "NO_COLOR": "1", "XDG_CONFIG_HOME": None})
    assert r.returncode == 0, r.stderr
    assert (elsewhere / ".debate").is_dir() and not (home / ".debate").exists()
    assert (dict(os.environ), os.getcwd(), sys.argv, sys.stdin, tempfile.tempdir) == before


def test_no_test_module_imports_another_or_conftest():
    """What modules share lives in tests/support; a helper taken from another test module (or
    from conftest) ties the two together and runs the other's module-level code."""
    import ast
    from pathlib import Path

    tests = Path(__file__).parent
    found = []
    for path in sorted(tests.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            for name in names:
                last = name.rsplit(".", 1)[-1]
                if last.startswith("test_") or last == "conftest":
                    found.append(f"{path.relative_to(tests)}:{node.lineno}: {name}")
    assert found == []
