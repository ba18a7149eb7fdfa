"""disputatio review end to end: a repository with a base branch and a change, fake reviewing
CLIs (tests/fakes/reviewer.py through the command adapter) whose judge rules in findings, and
the exit code, verdict.json (against schemas/verdict-1.schema.json) and findings.sarif (against
the official SARIF 2.1.0 schema) that come out."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from support import FAKES, ROOT, git, invoke, isolate_git, own_python, tree_digest, write
from support.reviewing import (
    CHANGED,
    REVIEWER,
    VERDICT_SCHEMA,
    lineup,
    outputs,
    review,
    review_repo,
)


@pytest.fixture
def repo(tmp_path, monkeypatch):
    return review_repo(tmp_path, monkeypatch)


def untouched(repo: Path) -> dict:
    """The repository's every byte and mtime, .git included, but the ignored .debate folder."""
    return {k: v for k, v in tree_digest(repo).items() if not k.startswith(".debate")}


def saw_head(md: str) -> int:
    """How many debaters read the changed app.py in their checkouts."""
    return sum(1 for line in md.splitlines()
               if "I read app.py:" in line and "def ratio(a, b)" in line)


def test_a_blocking_finding_fails_the_review_with_a_sarif_result_where_it_is(repo):
    lineup(repo.parent / "lineup.yaml", "blocking")
    before = untouched(repo)
    r = review(repo, "--base", "main")
    assert r.returncode == 1, r.stderr
    v, s = outputs(r.stdout)
    assert v["verdict"] == "fail" and v["exit_code"] == 1
    assert v["counts"]["blocking"] == 1 and v["findings"][0]["raised_by"] == ["ada"]
    assert v["change"]["mode"] == "range" and v["change"]["files"] == ["app.py"]
    assert v["change"]["head"] == git(repo, "rev-parse", "HEAD")
    assert v["change"]["base"] == git(repo, "rev-parse", "main")
    assert {a["name"] for a in v["agents"]} == {"ada", "bob", "judge"}
    events = (Path(v["debate"]) / "events.jsonl").read_text().splitlines()
    assert v["ledger"]["head"] == json.loads(events[-1])["hash"]
    [result] = s["runs"][0]["results"]
    place = result["locations"][0]["physicalLocation"]
    assert place["artifactLocation"]["uri"] == "app.py" and place["region"]["startLine"] == 5
    assert result["level"] == "error" and result["ruleId"] == "disputatio/blocking"
    # each debater had the diff in its prompt and the head in its checkout
    md = (Path(v["debate"]) / "debate.md").read_text()
    assert md.count("Expected text in my prompt: True") == 2
    assert saw_head(md) == 2
    # the user's repository: not a byte changed but the ignored .debate folder
    assert untouched(repo) == before


def test_no_finding_passes(repo):
    lineup(repo.parent / "lineup.yaml", "clean")
    r = review(repo, "--base", "main")
    assert r.returncode == 0, r.stderr
    v, s = outputs(r.stdout)
    assert v["verdict"] == "pass" and v["counts"]["findings"] == 0
    assert s["runs"][0]["results"] == []


def test_a_rejected_blocking_point_passes_and_is_no_alert(repo):
    lineup(repo.parent / "lineup.yaml", "rejected")
    r = review(repo, "--base", "main")
    assert r.returncode == 0, r.stderr
    v, s = outputs(r.stdout)
    assert v["counts"]["rejected"] == 1 and s["runs"][0]["results"] == []


def test_fail_on_lowers_the_bar(repo):
    lineup(repo.parent / "lineup.yaml", "major")
    assert review(repo, "--base", "main").returncode == 0
    r = review(repo, "--base", "main", "--fail-on", "major")
    assert r.returncode == 1, r.stderr
    v, s = outputs(r.stdout)
    assert v["fail_on"] == "major" and v["counts"]["failing"] == 1
    assert s["runs"][0]["results"][0]["level"] == "warning"


def test_a_judge_that_never_answers_is_no_verdict_and_fail_open_says_so(repo):
    lineup(repo.parent / "lineup.yaml", REVIEW_HANG=1, judge_timeout=0.005)
    r = review(repo, "--base", "main")
    assert r.returncode == 3, r.stderr
    v, _ = outputs(r.stdout)
    assert v["verdict"] == "none" and v["warning"] is None and "judge" in v["reason"]
    r = review(repo, "--base", "main", "--fail-open", "--format", "json")
    assert r.returncode == 0, r.stderr
    v = json.loads(r.stdout)
    jsonschema.validate(v, VERDICT_SCHEMA)
    assert v["verdict"] == "none" and v["exit_code"] == 0
    assert v["warning"].startswith("NO VERDICT") and "NO VERDICT" in r.stderr
    sarif = json.loads(Path(v["sarif"]).read_text())
    assert sarif["runs"][0]["invocations"][0]["executionSuccessful"] is False


def test_a_judge_that_asks_the_human_is_no_verdict(repo):
    lineup(repo.parent / "lineup.yaml", "ask")
    r = review(repo, "--base", "main", "--format", "json")
    assert r.returncode == 3, r.stderr
    v = json.loads(r.stdout)
    assert "Is an empty list possible here?" in v["reason"]


def test_staged_reviews_the_index_against_head(repo):
    lineup(repo.parent / "lineup.yaml", "clean")
    write(repo, {"app.py": CHANGED + "\nDEBUG = True\n"})
    git(repo, "add", "app.py")
    r = review(repo, "--staged", "--format", "json")
    assert r.returncode == 0, r.stderr
    v = json.loads(r.stdout)
    assert v["change"]["mode"] == "staged" and v["change"]["head"] is None
    assert v["change"]["base"] == git(repo, "rev-parse", "HEAD")
    md = (Path(v["debate"]) / "debate.md").read_text()
    assert "DEBUG = True" in md    # the debaters' checkouts hold the staged change
    assert git(repo, "diff", "--cached", "--name-only") == "app.py"   # the index as it was


def test_branch_reviews_against_the_merge_base(repo):
    lineup(repo.parent / "lineup.yaml", "clean")
    git(repo, "checkout", "-q", "main")
    write(repo, {"README.md": "calc, moved on\n"})
    git(repo, "commit", "-qam", "main moves on")
    git(repo, "checkout", "-q", "feature")
    r = review(repo, "--branch", "--format", "json")
    assert r.returncode == 0, r.stderr
    v = json.loads(r.stdout)
    assert v["change"]["mode"] == "branch" and v["change"]["files"] == ["app.py"]
    assert v["change"]["base"] == git(repo, "merge-base", "main", "feature")


def test_head_other_than_the_checkout_is_what_the_agents_see(repo):
    lineup(repo.parent / "lineup.yaml", "clean")
    git(repo, "checkout", "-q", "main")
    r = review(repo, "--base", "main", "--head", "feature", "--format", "json")
    assert r.returncode == 0, r.stderr
    v = json.loads(r.stdout)
    md = (Path(v["debate"]) / "debate.md").read_text()
    assert saw_head(md) == 2 and git(repo, "branch", "--show-current") == "main"


def test_since_an_ancestor_reviews_only_the_new_commits(repo):
    lineup(repo.parent / "lineup.yaml", "clean")
    first = git(repo, "rev-parse", "HEAD")
    write(repo, {"README.md": "calc v2\n"})
    git(repo, "commit", "-qam", "readme")
    r = review(repo, "--base", "main", "--since", first, "--format", "json")
    assert r.returncode == 0, r.stderr
    v = json.loads(r.stdout)
    assert v["change"]["files"] == ["README.md"] and v["change"]["incremental_from"] == first
    assert "incremental review" in r.stderr
    # a head that is not an ancestor (a force-push): the whole change, said so
    git(repo, "checkout", "-q", "-b", "other", "main")
    write(repo, {"other.py": "x = 1\n"})
    git(repo, "add", "other.py")
    git(repo, "commit", "-qm", "elsewhere")
    elsewhere = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "feature")
    r = review(repo, "--base", "main", "--since", elsewhere, "--format", "json")
    v = json.loads(r.stdout)
    assert v["change"]["files"] == ["README.md", "app.py"] and "not an ancestor" in r.stderr
    # the head itself was reviewed already (a re-run): the whole change again, never a
    # free pass
    r = review(repo, "--base", "main", "--since", "HEAD", "--format", "json")
    v = json.loads(r.stdout)
    assert v["change"]["files"] == ["README.md", "app.py"] and "reviewed before" in r.stderr
    # no change at all: nothing to review, exit 0, nothing made
    r = review(repo, "--base", "HEAD")
    assert r.returncode == 0 and r.stdout == "" and "nothing to review" in r.stderr


@pytest.mark.parametrize("args,says", [
    ((), "say what to review"),
    (("--base", "main", "--staged"), "choose one of"),
    (("--base", "nope"), "--base nope: no such commit"),
    (("--base", "main", "--fail-on", "severe"), "--fail-on must be one of"),
    (("--staged", "--head", "main"), "drop --head"),
    (("--base", "main", "--format", "xml"), "--format must be path or json"),
    (("--base", "main", "--protocol", "nope"), "no protocol named 'nope'"),
])
def test_usage_errors_are_one_line_and_exit_2(repo, args, says):
    lineup(repo.parent / "lineup.yaml")
    r = review(repo, *args)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("error: ") and says in r.stderr and len(r.stderr.splitlines()) == 1
    assert not (repo / ".debate").exists()


def test_a_shallow_clone_says_to_fetch_the_history(repo, tmp_path):
    """CI checks out one commit unless told otherwise: the base is not there, or not joined
    to the head; the one line says what to do."""
    lineup(tmp_path / "lineup.yaml")
    for n, extra in enumerate(([], ["--no-single-branch"])):
        clone = tmp_path / f"clone{n}"
        git(tmp_path, "clone", "-q", "--depth", "1", *extra, "-b", "feature",
            f"file://{repo}", str(clone))
        r = invoke("review", "--base", "origin/main", "--config",
                   str(tmp_path / "lineup.yaml"), cwd=clone)
        assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
        assert ("no such commit" if n == 0 else "no common ancestor") in r.stderr
        assert "a shallow clone" in r.stderr and "fetch-depth: 0" in r.stderr
    git(repo, "checkout", "-q", "--orphan", "lonely")
    git(repo, "commit", "-qm", "unrelated")
    git(repo, "checkout", "-q", "feature")
    r = review(repo, "--base", "lonely")
    assert r.returncode == 2 and "no common ancestor: give the base" in r.stderr


def test_odd_file_names_reach_the_reviewers_as_they_are(repo):
    """A space, an accent, a newline in a path: the diff shows the names as the files have
    them (not git's octal escapes), and each cut says which file's rest to ask for."""
    from disputatio import review as reviewing

    names = ["späce ü.py", "line\nbreak.py"]
    write(repo, {n: "x = 1\n" * 2000 for n in names})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "odd names")
    change = reviewing.resolve(reviewing.ReviewOptions(base="main", repo=repo))
    assert set(names) <= set(change.files)
    assert "diff --git a/späce ü.py b/späce ü.py" in change.diff
    text, was_cut = reviewing.fit(change.diff, 3000, change.base)
    assert was_cut and f"git diff {change.base[:12]} -- späce ü.py" in text
    assert f'git diff {change.base[:12]} -- "line\\nbreak.py"' in text


def test_outside_a_repository_is_a_usage_error(tmp_path, monkeypatch):
    isolate_git(tmp_path, monkeypatch)
    (tmp_path / "plain").mkdir()
    lineup(tmp_path / "lineup.yaml")
    r = invoke("review", "--base", "main", "--config", str(tmp_path / "lineup.yaml"),
               cwd=tmp_path / "plain")
    assert r.returncode == 2 and "not a git repository" in r.stderr


def test_a_debater_that_cannot_answer_is_no_verdict(repo):
    lineup(repo.parent / "lineup.yaml", "blocking")
    cfg = yaml.safe_load((repo.parent / "lineup.yaml").read_text())
    cfg["participants"][1]["argv"] = ["false"]     # a CLI that fails (e.g. not logged in)
    (repo.parent / "lineup.yaml").write_text(yaml.safe_dump(cfg))
    r = review(repo, "--base", "main", "--format", "json")
    assert r.returncode == 3, r.stderr
    v = json.loads(r.stdout)
    assert v["status"] == "aborted" and "proposals" in v["reason"]
    assert any(a["name"] == "bob" and a["failed"] == 1 for a in v["agents"])


@pytest.mark.parametrize("hook", yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text()),
                         ids=lambda h: h["id"])
def test_the_pre_commit_hooks_run_as_written(repo, hook):
    assert hook["stages"] == ["manual"] and hook["pass_filenames"] is False
    lineup(repo.parent / "lineup.yaml", "blocking")
    write(repo, {"app.py": CHANGED + "\nDEBUG = True\n"})
    git(repo, "add", "app.py")
    if "--branch" in hook["entry"]:
        git(repo, "commit", "-qm", "debug")
    program, *args = hook["entry"].split()
    assert program == "disputatio"
    r = invoke(*args, "--config", str(repo.parent / "lineup.yaml"), cwd=repo)
    assert r.returncode == 1 and "blocking" in r.stderr


def test_the_diff_is_cut_fairly_per_file_and_every_cut_says_where_the_rest_is():
    from disputatio.review import fit

    small = "diff --git a/small.py b/small.py\n+x = 1\n"
    big = "diff --git a/big.py b/big.py\n" + "".join(f"+line {n}\n" for n in range(5000))
    text, was_cut = fit(small + big, 2_000, "a" * 40)
    assert was_cut and len(text) <= 2_000 + 100 and text.startswith(small)
    assert "[cut: " in text and "git diff aaaaaaaaaaaa -- big.py" in text
    whole, was_cut = fit(small + small, 2_000, "a" * 40)
    assert whole == small + small and not was_cut


def test_the_quaestio_fits_the_protocols_budget_whatever_the_diff_and_request():
    from disputatio.protocols.base import QUAESTIO_BUDGET
    from disputatio.review import Change, quaestio

    diff = "".join(f"diff --git a/f{n}.py b/f{n}.py\n" + "+x\n" * 3000 for n in range(5))
    c = Change("range", "a" * 40, "b" * 40, diff, [f"f{n}.py" for n in range(5)], Path("."))
    text = quaestio(c, "Look at the locking. " * 1000)
    assert len(text) <= QUAESTIO_BUDGET and text.count("[cut: ") == 6
    assert "the diff below is cut" in text and "Look at the locking." in text


def test_cost_per_agent_and_a_cost_cap_that_stops_the_review_is_no_verdict(repo, tmp_path):
    priced = {"adapter": "claude", "bin": str(own_python(FAKES / "priced.py", tmp_path)),
              "env": {"PRICED_COST": "0.10"}}
    judge = {"adapter": "command", "name": "judge", "argv": REVIEWER,
             "env": {"REVIEW_RULING": "clean"}}
    (repo.parent / "lineup.yaml").write_text(yaml.safe_dump({
        "rounds": 0, "judge": judge,
        "participants": [priced | {"name": "ada"}, priced | {"name": "bob"}]}))
    r = review(repo, "--base", "main", "--format", "json")
    assert r.returncode == 0, r.stderr
    v = json.loads(r.stdout)
    jsonschema.validate(v, VERDICT_SCHEMA)
    ada = next(a for a in v["agents"] if a["name"] == "ada")
    assert ada["cost_usd"] == pytest.approx(0.10) and ada["cli_version"].startswith("2.1.197")
    assert ada["tokens"] and v["cost_usd"] == pytest.approx(0.20)
    r = review(repo, "--base", "main", "--format", "json", "--rounds", "1", "--max-cost", "0.35")
    assert r.returncode == 3, r.stderr
    v = json.loads(r.stdout)
    assert v["verdict"] == "none" and v["status"] == "capped"


def test_a_repository_that_is_not_there_is_a_usage_error(repo):
    lineup(repo.parent / "lineup.yaml")
    r = review(repo, "--base", "main", "--repo", str(repo / "nowhere"))
    assert r.returncode == 2 and "nowhere" in r.stderr and len(r.stderr.splitlines()) == 1
