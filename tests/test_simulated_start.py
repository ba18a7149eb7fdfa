"""The simulated participant starts cheaply: it reads its prompt with ``str`` methods (no ``re``),
writes its JSON itself (no ``json``) and is imported, so its bytecode is cached. Each must give
what the regular expressions and ``json.dumps`` gave before, on real prompts and on made ones."""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from disputatio import simulated
from disputatio.adapters.base import TurnRequest
from disputatio.adapters.simulated import ADAPTER
from support import invoke, sim, write_config

# what the participant read with regular expressions, kept here as the reference
OLD_WORDS = {  # marker → (pattern, whether the last match counts)
    "(phase: ": (r"\(phase: (\w+)", True),
    "(phase: committee, round ": (r"\(phase: committee, round (\d+)", False),
    "(phase: vote, on synthesis ": (r"\(phase: vote, on synthesis (\d+)", False),
    "fixed order would give the floor to ": (r"fixed order would give the floor to (\w+)", False),
}
HEADINGS = ("The question", "The human's answers", "The points to rule on",
            "Your previous answer could not be read")


def old_word(prompt: str, marker: str) -> str:
    pattern, last = OLD_WORDS[marker]
    if last:
        found = re.findall(pattern, prompt)
        return found[-1] if found else ""
    m = re.search(pattern, prompt)
    return m.group(1) if m else ""


def old_section(prompt: str, heading: str) -> str:
    m = re.search(rf"^## {re.escape(heading)}\n\n(.*?)(?=^## |\Z)", prompt, re.S | re.M)
    body = m.group(1).strip() if m else ""
    return re.sub(r"^> ?", "", body, flags=re.M)


def assert_reads_as_before(prompt: str) -> None:
    for marker, (pattern, last) in OLD_WORDS.items():
        number = r"\d" in pattern
        assert simulated._word(prompt, marker, number=number, last=last) == \
            old_word(prompt, marker), (marker, prompt)
    assert simulated._headed(prompt, "### Proposal — ") == \
        re.findall(r"^### Proposal — (.+)$", prompt, re.M), prompt
    headings = set(HEADINGS) | set(re.findall(r"^## (.+)$", prompt, re.M))
    for heading in headings:
        assert simulated._section(prompt, heading) == old_section(prompt, heading), \
            (heading, prompt)


@pytest.fixture(scope="module")
def debates(tmp_path_factory) -> list[Path]:
    """Debates of every shape the participant answers in: the committee, Wind/Wall/Door with a
    mediator's picks and votes, and disputatio with a jury (one juror asked again after a
    garbled answer) and a judge that asks the human, answered with ``continue``."""
    base = tmp_path_factory.mktemp("debates")
    off = {"DISPUTATIO_FENCE": "off"}
    question = "Should we rewrite it?\n> a quoted line\n\n## not a heading of ours"
    folders = []
    runs = [
        ("committee", ["--demo", "--protocol", "committee"], None, []),
        ("wwd", ["--protocol", "wind-wall-door"],
         {"protocol": {"order": "mediated", "mediator": "c", "max_rounds": 2}}, []),
        ("disputatio", [], {"judge": sim("judge", DISPUTATIO_SIM_STATUS="needs_input"),
                            "jury": [sim("juror", DISPUTATIO_SIM_STATUS="garbled_once")]},
         ["Speed first.\n> quoted\n## a heading in an answer"]),
    ]
    for name, args, lineup, answers in runs:
        work = base / name
        work.mkdir()
        if lineup is not None:
            write_config(work / "c.yaml", [sim("a"), sim("b"), sim("c", DISPUTATIO_SIM_SPEAKS=2)],
                         **lineup)
            args = [*args, "--config", str(work / "c.yaml")]
        ran = invoke("run", question, *args, "-q", cwd=work, env=off)
        for answer in answers:
            ran = invoke("continue", answer, "-q", cwd=work, env=off)
        assert ran.returncode == 0, ran.stderr
        folders.append(next(work.glob(".debate/debate-*")))
    return folders


def test_real_prompts_read_as_the_regular_expressions_read_them(debates):
    prompts = [f.read_bytes().decode("utf-8", errors="replace")
               for d in debates for f in sorted(d.glob("raw/*.stdin"))]
    phases = {old_word(p, "(phase: ") for p in prompts}
    # every phase the participant tells apart, and every section it reads, was seen
    assert {"proposal", "reaction", "respondeo", "redactio", "committee", "wind", "wall",
            "door", "vote", "pick"} <= phases, phases
    for heading in HEADINGS:
        assert any(old_section(p, heading) for p in prompts), heading
    assert any(old_word(p, "fixed order would give the floor to ") for p in prompts)
    assert any(re.search(r"^### Proposal — ", p, re.M) for p in prompts)
    for prompt in prompts:
        assert_reads_as_before(prompt)


PIECES = ["## The question\n\n", "## The human's answers\n\n", "## The question\n", "## ", "\n",
          "\n\n", "> ", ">", ">>", " ", "x", "_", "é", "—", "\r", "\t", "(phase: ", "(phase: (",
          "committee, round ", "vote, on synthesis ", "(phase: committee, round ",
          "(phase: vote, on synthesis ", "fixed order would give the floor to ", "1", "12",
          "٣", "²", "Ⅻ", "wind", "### Proposal — ", "### Proposal —", "Participant B", "\\Z"]


def test_made_prompts_read_as_the_regular_expressions_read_them():
    """Seeded random prompts from the pieces the patterns hinge on: line starts, blank lines,
    quote marks, a marker with no word after it, digits that are not decimal (² Ⅻ), others'
    scripts (٣), a carriage return."""
    rng = random.Random(20261201)
    for _ in range(3000):
        assert_reads_as_before("".join(rng.choices(PIECES, k=rng.randint(0, 24))))


STRINGS = ["", "plain", '"quoted"', "back\\slash", "\\\"", "\x7f", "é", "—", "日本語",
           "\U0001f600", "\U0010ffff", "\ud800", "\udfff", "\udc80x", "a\u2028b",
           "".join(map(chr, range(0x20))), "".join(map(chr, range(0x80))),
           "".join(map(chr, range(0x80, 0x800, 7)))]
VALUES = [*STRINGS, None, True, False, 0, -1, 10**40, 0.0, -0.0, 1.5, 1e300, 5e-324,
          float("inf"), float("-inf"), float("nan"), [], {}, [[]], {"a": {}}, ("t", 1),
          list(STRINGS),
          {s: s for s in STRINGS}, {1: "int", 2.5: "float", False: "bool", None: "none"},
          {"status": "resolved", "questions": [], "findings": [
              {"id": "F1", "raised_by": ["Participant A", "B"], "evidence": [{"note": "n"}],
               "new_ground": False, "weight": 2}]}]


@pytest.mark.parametrize("indent", [None, 2, 0])
def test_its_json_is_the_text_json_dumps_writes(indent):
    for value in VALUES:
        text = simulated.to_json(value, indent=indent)
        assert text == json.dumps(value, indent=indent), value
        assert text.isascii()
        if value == value:   # NaN is equal to nothing, itself included
            assert json.loads(text) == json.loads(json.dumps(value, indent=indent))


def test_any_code_point_reads_back_as_json_dumps_reads_back():
    rng = random.Random(7)
    for _ in range(300):
        text = "".join(chr(rng.choice([rng.randrange(0x80), rng.randrange(0xD800, 0xE000),
                                       rng.randrange(0x110000)])) for _ in range(20))
        assert simulated.to_json(text) == json.dumps(text)
        # a lone high surrogate and a lone low one after it read back as one character, with
        # json's own text as with ours
        assert json.loads(simulated.to_json(text)) == json.loads(json.dumps(text))


def test_what_json_cannot_hold_is_refused_as_json_refuses_it():
    for bad in [{1, 2}, b"bytes", object(), {("a",): 1}]:
        with pytest.raises(TypeError):
            json.dumps(bad)
        with pytest.raises(TypeError):
            simulated.to_json(bad)


def test_its_answers_on_stdout_are_what_json_would_write(debates):
    lines = [line for d in debates for f in sorted(d.glob("raw/*.stdout"))
             for line in f.read_text().splitlines()]
    assert len(lines) > 20
    for line in lines:
        record = json.loads(line)
        assert json.dumps(record) == line
        block = re.search(r"```json\n(.*?)\n```", record["text"], re.S)
        if block:
            assert json.dumps(json.loads(block.group(1)), indent=2) == block.group(1)


def participant(path: Path, persona: str, prompt: str) -> subprocess.CompletedProcess:
    """The participant as the adapter starts it, from the script at ``path``."""
    argv = list(ADAPTER.build(TurnRequest(prompt=prompt, bin=sys.executable,
                                          model=persona)).argv)
    argv[argv.index(simulated.__file__)] = str(path)
    return subprocess.run(argv, input=prompt.encode(), capture_output=True, timeout=30)


def test_it_is_imported_so_its_bytecode_is_cached(tmp_path):
    argv = ADAPTER.build(TurnRequest(prompt="p", bin=sys.executable, model="skeptic")).argv
    # isolated, no site-packages; the script's path and the persona in its process list
    assert argv[1:4] == ("-I", "-S", "-c") and argv[-2:] == (simulated.__file__, "skeptic")
    script = tmp_path / "simulated.py"
    shutil.copy(simulated.__file__, script)
    prompt = "## The question\n\nShould we?\n\n## Your turn\n\nYou are A (phase: proposal)."
    first = participant(script, "skeptic", prompt)
    cached = list((tmp_path / "__pycache__").glob("simulated.*.pyc"))
    assert len(cached) == 1, first.stderr
    again = participant(script, "skeptic", prompt)
    assert first.returncode == again.returncode == 0, first.stderr
    assert first.stdout == again.stdout
    text = json.loads(first.stdout)["text"]
    assert text == simulated.answer(prompt, "skeptic", {})
    assert "No, not now" in text


def test_a_module_beside_it_cannot_stand_in_for_a_standard_one(tmp_path):
    """Its directory is searched last: a ``zlib.py`` there (one in the package would do) is
    never imported in place of the standard module."""
    script = tmp_path / "simulated.py"
    shutil.copy(simulated.__file__, script)
    (tmp_path / "zlib.py").write_text("raise SystemExit('the wrong zlib')\n")
    ran = participant(script, "advocate", "(phase: reaction, round 1 of 1)")
    assert ran.returncode == 0, ran.stderr
    assert "transcript digest" in json.loads(ran.stdout)["text"]
