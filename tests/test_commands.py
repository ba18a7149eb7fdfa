"""The commands and their old flag spellings: ``disputatio verify`` and ``disputatio --verify``
must do the same thing, ``disputatio "question"`` must still start a debate, and a quaestio
that is a command's name must stay possible.

Why: scripts written against the flags must not break, and a default command is where a
question and a command name can be confused.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from disputatio import adapters, ledger, protocols
from support import invoke, sim, write_config
from support.box import events as debate_events

JUDGE = {"adapter": "simulated", "name": "judge", "model": "judge"}


def _debate(home: Path, **judge_env) -> Path:
    """A finished two-participant debate in ``home``; its folder."""
    judge = {**JUDGE, "env": judge_env} if judge_env else JUDGE
    cfg = write_config(home / "d.yaml", [sim("a"), sim("b")], judge=judge, rounds=0)
    r = invoke("q", "--config", str(cfg), "-q", cwd=home)
    return Path(r.stdout.strip()).parent


def _needs_input(home: Path) -> None:
    _debate(home, DISPUTATIO_SIM_STATUS="needs_input")


def _resolved(home: Path) -> None:
    _debate(home)


def _judge_failed(home: Path) -> None:
    _debate(home, DISPUTATIO_SIM_FAIL_ONCE=str(home / "judge-failed-once"))


def _nothing(home: Path) -> None:
    return None


# command: (what exists before, the old spelling, the command, exit code, file on stdout)
CASES = {
    "run": (_nothing, ["--demo", "-q", "Q?"], ["run", "--demo", "-q", "Q?"], 0,
            "final-report.md"),
    "continue": (_needs_input, ["--continue", "Speed matters.", "-q"],
                 ["continue", "Speed matters.", "-q"], 0, "final-report.md"),
    "finalize": (_resolved, ["--finalize", "-q"], ["finalize", "-q"], 0, "final-report.md"),
    "resume": (_judge_failed, ["--resume", "-q"], ["resume", "-q"], 0, "final-report.md"),
    "verify": (_resolved, ["--verify"], ["verify"], 0, None),
    "doctor": (_nothing, ["--doctor", "--demo"], ["doctor", "--demo"], 0, None),
    "continue-refused": (_resolved, ["--continue", "more"], ["continue", "more"], 2, None),
    "finalize-refused": (_needs_input, ["--finalize"], ["finalize"], 2, None),
}


def _result(home: Path, args: list[str]) -> tuple:
    """What a user sees and what the ledger gained, with the parts that differ between two
    runs (the folder, the time stamps, the durations) replaced by placeholders."""
    before = len(debate_events(home))
    r = invoke(*args, cwd=home)

    def plain(text: str) -> str:
        text = text.replace(str(home), "<home>")
        text = re.sub(r"debate-\d{8}T\d{6}Z(-\d+)?", "debate-<ts>", text)
        return re.sub(r"\d+\.\d+s\b", "<t>s", text)

    # turns of one step run in parallel: their events may come in any order
    added = sorted((e.type, e.data.get("turn_id") or "") for e in debate_events(home)[before:])
    return r.returncode, plain(r.stdout), plain(r.stderr), added


@pytest.mark.parametrize("case", list(CASES))
def test_a_command_and_its_old_flag_do_the_same(home, case):
    prepare, old, new, code, primary = CASES[case]
    results = []
    for name, spelling in (("flag", old), ("command", new)):
        where = home / name
        where.mkdir()
        prepare(where)
        results.append(_result(where, spelling))
    assert results[0] == results[1]
    got_code, stdout, stderr, added = results[1]
    assert got_code == code, stderr
    if primary:
        assert stdout.endswith(f"/{primary}\n") and stdout.count("\n") == 1, stdout
    else:
        assert stdout == ""
    if code == 2:
        assert stderr.startswith("error: ") and stderr.count("\n") == 1 and added == []
    if case == "resume":   # only the judge's failed turn ran again, then the report
        assert [t for kind, t in added if kind == "turn_started"] == ["redactio-1", "respondeo-1"]
    if case == "doctor":
        assert "all 4 CLIs healthy" in stderr and stderr.count("✓ ") == 4


def test_init_and_its_old_flag_do_the_same(home, tmp_path, monkeypatch):
    """No CLI anywhere: both spellings say so per CLI and write nothing."""
    from disputatio import doctor

    monkeypatch.setattr(doctor, "USUAL_DIRS", ())
    empty = tmp_path / "no-clis"
    empty.mkdir()
    outs = []
    for args in (["--init"], ["init"]):
        r = invoke(*args, cwd=home, env={"PATH": str(empty)})
        outs.append((r.returncode, r.stdout, r.stderr))
    assert outs[0] == outs[1]
    code, stdout, stderr = outs[1]
    assert (code, stdout) == (1, "")
    proven = [a.name for a in adapters.agents(tested=True)]
    assert [line.split(":")[0] for line in stderr.splitlines()[:-1]] == [f"✗ {n}" for n in proven]
    assert stderr.count("not found on PATH or in the usual install dirs") == len(proven)
    assert stderr.splitlines()[-1].startswith("error: found 0 working CLI(s)")
    assert not list((tmp_path / "xdg").rglob("config.yaml"))


def test_protocols_lists_each_protocol_on_one_line(home):
    r = invoke("protocols", cwd=home)
    assert (r.returncode, r.stderr) == (0, "")
    lines = r.stdout.splitlines()
    assert [line.split()[0] for line in lines] == list(protocols.KNOWN)
    assert all(len(line.split(None, 1)) == 2 for line in lines), lines


def test_protocol_is_recorded_and_an_unknown_one_refused(home):
    r = invoke("run", "--demo", "-q", "--protocol", "disputatio", "Q?", cwd=home)
    assert r.returncode == 0, r.stderr
    assert ledger.load(Path(r.stdout.strip()).parent / "events.jsonl")[0].data["protocol"] == \
        "disputatio"
    for args in (["run", "--demo", "--protocol", "nope"], ["--demo", "--protocol", "nope"]):
        r = invoke(*args, cwd=home)
        assert (r.returncode, r.stdout) == (2, "")
        assert r.stderr == ("error: no protocol named 'nope'; the protocols are disputatio, "
                            "committee, wind-wall-door (see disputatio protocols)\n")
    r = invoke("--verify", "--protocol", "disputatio", cwd=home)
    assert (r.returncode, r.stderr) == (2, "error: --protocol cannot be used with --verify\n")


def test_a_quaestio_that_is_a_command_name(home, tmp_path):
    """``run verify`` and ``-- verify`` debate the word; a bare ``verify`` is the command."""
    user = tmp_path / "xdg" / "disputatio" / "config.yaml"
    user.parent.mkdir(parents=True)
    write_config(user, [sim("a"), sim("b")], rounds=0)
    for args in (["run", "verify", "-q"], ["--", "verify"]):
        r = invoke(*args, cwd=home)
        assert r.returncode == 0, (args, r.stderr)
        events = ledger.load(Path(r.stdout.strip()).parent / "events.jsonl")
        assert events[0].data["quaestio"] == "verify", args
    debates = sorted((home / ".debate").glob("debate-*"))
    r = invoke("verify", cwd=home)
    assert (r.returncode, r.stdout) == (0, "") and r.stderr.startswith("ok ")
    assert sorted((home / ".debate").glob("debate-*")) == debates


def test_completion_scripts_and_completions(home):
    r = invoke("--show-completion", "bash", cwd=home)
    assert r.returncode == 0 and "complete " in r.stdout and "_DISPUTATIO_COMPLETE" in r.stdout

    def complete(words: str) -> list[str]:
        env = {"_DISPUTATIO_COMPLETE": "complete_bash", "COMP_WORDS": words,
               "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1))}
        out = invoke(cwd=home, env=env)
        assert out.returncode == 0, out.stderr
        return out.stdout.split()

    assert complete("disputatio ver") == ["verify"]
    assert "protocols" in complete("disputatio ")
    assert complete("disputatio --demo --ro") == ["--rounds"]       # run's, by default
    assert "--allowed-signers" in complete("disputatio verify --")
    assert "--rounds" not in complete("disputatio verify --")


@pytest.mark.parametrize("args, said", [
    (["verify", "--rounds", "3"], "error: No such option: --rounds (see disputatio verify "
                                  "--help)"),
    (["init", "--demo"], "error: No such option: --demo"),
    (["continue"], "error: Missing argument"),
    (["continue", "  "], "error: --continue needs the answers to the judge's questions"),
    (["protocols", "extra"], "error: Got unexpected extra argument"),
    (["doctor", "--demo", "--config", "x.yaml"], "error: --demo brings its own lineup"),
    (["resume", "--fence", "maybe"], "error: --fence must be auto, require or off, not 'maybe'"),
    (["--bogus"], "error: No such option: --bogus"),
    (["run", "--rounds", "-1"], "error: Invalid value for '--rounds'"),
])
def test_usage_errors_are_one_line_exit_2(home, monkeypatch, capsys, args, said):
    from disputatio import cli

    monkeypatch.setattr(sys, "argv", ["disputatio", *args])
    with pytest.raises(SystemExit) as exited:
        cli.main()
    out, err = capsys.readouterr()
    assert (exited.value.code, out) == (2, "")
    assert err.startswith(said) and err.count("\n") == 1, err
    assert not (home / ".debate").exists()
