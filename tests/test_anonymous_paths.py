"""An agent's working directory names no participant: agents quote the path they ran in, and
the judge, reading their answers under neutral labels, must not find a name (by default the
CLI's own) in it."""

from __future__ import annotations

from support import invoke, make_repo, sim, write_config


def test_a_debater_quoting_its_directory_names_nobody_to_the_judge(home, tmp_path):
    repo = make_repo(tmp_path / "calc", {"calc.py": "def add(a, b):\n    return a + b\n"})
    here = {"adapter": "command", "name": "zephyrine",
            "argv": ["sh", "-c", "cat >/dev/null; echo \"I ran the tests in $(pwd)\""]}
    cfg = write_config(home / "d.yaml", [here, sim("skeptic")], rounds=0)
    r = invoke("q", "--config", str(cfg), "--repo", str(repo), "-q", cwd=home)
    assert r.returncode == 0, r.stderr
    debate = next(p for p in (home / ".debate").iterdir() if p.is_dir())
    judged = next((debate / "raw").glob("*-respondeo-1.prompt.md")).read_text()
    assert "I ran the tests in /" in judged and "/calc" in judged
    assert "zephyrine" not in judged
