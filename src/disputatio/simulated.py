"""A simulated participant: a real subprocess that reads its prompt on stdin and answers with
deterministic, clearly labelled text shaped like a real agent's answer. No model is called.

It powers ``--demo`` and the tests. Behaviour knobs come from the environment, so a config's
``env:`` can script it: ``DISPUTATIO_SIM_LATENCY`` (seconds to wait before answering),
``DISPUTATIO_SIM_STATUS`` (``needs_input``: ask the human until answers arrive; ``garbled``:
no findings block, ever; ``garbled_once``: one only when asked again), ``DISPUTATIO_SIM_RULING``
/ ``DISPUTATIO_SIM_SEVERITY`` and ``DISPUTATIO_SIM_NEW_GROUND`` (a judge's findings: see
``_ruling``),
``DISPUTATIO_SIM_SPEAKS`` (the committee rounds it speaks in before it passes),
``DISPUTATIO_SIM_WWD`` and ``DISPUTATIO_SIM_VOTE`` (Wind/Wall/Door: see ``_wind_wall_door``),
``DISPUTATIO_SIM_FAIL`` (exit 1 with an error), ``DISPUTATIO_SIM_FAIL_ONCE`` (fail only while this
file does not exist yet, creating it), ``DISPUTATIO_SIM_OUTPUT_MB`` (write that much
filler to stdout first), ``DISPUTATIO_SIM_HANG`` (never answer), ``DISPUTATIO_SIM_TOUCH``
(append to this file in the working directory, as an agent running tests would).
"""

from __future__ import annotations

import codecs
import os
import sys
import time
import zlib

LABEL = "_(simulated participant — no model was called)_"


def answer(prompt: str, persona: str, env: dict[str, str]) -> str:
    phase = _word(prompt, "(phase: ", last=True) or "proposal"   # said last, under "Your turn"
    question = _section(prompt, "The question") or "the question"
    digest = f"{zlib.crc32(prompt.encode()):08x}"   # zlib: cheaper to import than hashlib
    if phase == "respondeo":
        return _ruling(prompt, question, env)
    if phase == "redactio":
        return (f"# Final report\n\n{LABEL}\n\nThe debate on *{_short(question)}* is settled as "
                "the judge ruled: proceed incrementally, behind measurable checks.\n\n"
                "## Decision\n\nAdopt the incremental plan the judge endorsed.\n\n"
                "## Actions\n\n1. Write down the acceptance criteria and the benchmark.\n"
                "2. Make the smallest change that tests the riskiest assumption.\n"
                "3. Review the result against the criteria before going further.\n\n"
                "## Evidence\n\nNone gathered: simulated participants run no commands.\n\n"
                "## Risks and open questions\n\n- Every claim here is simulated.\n")
    stance = {
        "advocate": "Yes, with a plan: the gains justify the cost if we move step by step.",
        "skeptic": "No, not now: the cost and risk are certain, the gains are not measured.",
        "pragmatist": "Only where it pays: measure first, then change the hottest path only.",
    }.get(persona, f"A position from {persona}: weigh cost against measured benefit.")
    if phase == "committee":
        return _member(prompt, persona, stance, env)
    if phase in ("wind", "wall", "door", "vote", "refine", "pick"):
        return _wind_wall_door(phase, prompt, persona, env)
    if phase == "reaction":
        return (f"## Reaction from {persona}\n\n{LABEL}\n\n- I keep my position: {stance}\n"
                "- I agree with the others that evidence should decide; none of us ran a test, "
                "so these points stay opinions.\n\n**Still contested:** whether the benefit "
                f"outweighs the cost. (transcript digest {digest})\n")
    return (f"## Proposal from {persona}\n\n{LABEL}\n\n**Position.** {stance}\n\n"
            f"**Reasons.**\n- The question was: {_short(question)}\n"
            "- A change of this size should be justified by a measurement, not a preference.\n\n"
            "**Risks.**\n- Unverified: no command was run and no file was read.\n")


def _member(prompt: str, persona: str, stance: str, env: dict[str, str]) -> str:
    """A committee member: speaks for a round or two (``DISPUTATIO_SIM_SPEAKS`` rounds; the
    skeptic two, the others one), then passes, as a member with nothing new to add should."""
    rnd = int(_word(prompt, "(phase: committee, round ", number=True) or 1)
    speaks = int(env.get("DISPUTATIO_SIM_SPEAKS") or (2 if persona == "skeptic" else 1))
    if rnd > speaks:
        return "<PASS/>"
    if rnd == 1:
        return (f"{LABEL}\n\n**Position.** {stance}\n\n"
                "- A change of this size should be justified by a measurement.\n")
    return (f"{LABEL}\n\n- I keep my position: {stance}\n"
            "- None of us ran a test, so these points stay opinions.\n")


def _wind_wall_door(phase: str, prompt: str, persona: str, env: dict[str, str]) -> str:
    """A Wind/Wall/Door role within its contract, a vote (the skeptic rejects the first
    synthesis, unless ``DISPUTATIO_SIM_VOTE`` says approve or reject) or a mediator's pick of
    the fixed order's next role. ``DISPUTATIO_SIM_WWD``: ``break`` (answers that break every
    contract), ``hold`` (Door never calls the vote), ``garbled`` (a pick naming no role)."""
    mode = env.get("DISPUTATIO_SIM_WWD", "")
    if mode == "break" and phase in ("wind", "wall", "door", "refine"):
        return f"Some thoughts from {persona}.\n\n{LABEL}\n"
    if phase == "pick":
        fixed = _word(prompt, "fixed order would give the floor to ")
        return "Hard to say; all of them have a point." if mode == "garbled" or not fixed \
            else fixed.upper()
    if phase == "vote":
        k = _word(prompt, "(phase: vote, on synthesis ", number=True)
        vote = env.get("DISPUTATIO_SIM_VOTE") or (
            "reject" if persona == "skeptic" and k == "1" else "approve")
        return (f"{vote.upper()}\n\n{LABEL}\n\n" + ("It does justice to the debate."
                if vote == "approve" else "Door must say how the benchmark gates step 2."))
    if phase == "wind":
        return (f"## What if…\n\n{LABEL}\n\n1. What if we change only the hottest path?\n"
                "2. What if we rewrite everything behind a feature flag?\n\nWhich of these "
                "can we measure before we commit to it?\n")
    if phase == "wall":
        return (f"VERDICT: option 1 holds; option 2 does not, its cost is certain.\n\n{LABEL}"
                "\n\n## Evidence\n\n- None gathered: simulated participants run no "
                "commands.\n")
    refined = "\n\nRefined: the benchmark now gates step 2." if phase == "refine" else ""
    call = "" if mode == "hold" else "\n\nCALL THE VOTE\n"
    return (f"Therefore…\n\n{LABEL}\n\n1. Agree on a benchmark first.\n2. Change the hottest "
            f"path only, behind the benchmark.\n3. Review before going further.{refined}{call}")


def _ruling(prompt: str, question: str, env: dict[str, str]) -> str:
    """A judge's (or a juror's) answer: prose, then the fenced ``json`` block asked for.
    ``DISPUTATIO_SIM_STATUS``: ``needs_input`` (asks until answers arrive), ``garbled`` (never a
    block), ``garbled_once`` (a block only when asked again); ``DISPUTATIO_SIM_RULING`` and
    ``DISPUTATIO_SIM_SEVERITY``: the ruling and severity of every point it rules on;
    ``DISPUTATIO_SIM_NEW_GROUND``: the human's answers open new ground (until the debaters have
    argued them)."""
    mode = env.get("DISPUTATIO_SIM_STATUS", "")
    again = bool(_section(prompt, "Your previous answer could not be read"))
    if mode == "garbled" or mode == "garbled_once" and not again:
        return f"STATUS: RESOLVED\n\nI think everyone made good points.\n\n{LABEL}\n"
    answers = _section(prompt, "The human's answers")
    ruling = env.get("DISPUTATIO_SIM_RULING", "")
    severity = env.get("DISPUTATIO_SIM_SEVERITY", "")
    data: dict = {"status": "resolved", "questions": [],
                  "summary": f"Proceed incrementally on {_short(question)}, gated by a "
                             "benchmark agreed in advance."}
    if mode == "needs_input" and not answers:
        data.update(status="needs_input", questions=[
            "What matters more here: delivery speed or long-term performance?",
            "Is there a deadline the change must meet?"])
    fixed = _section(prompt, "The points to rule on")
    if fixed:   # a juror: a vote on every point it was given
        import json  # only a juror reads JSON, so only a juror pays for importing it (and re)

        points = json.loads(fixed) if fixed.startswith("[") else []
        data["findings"] = [{"id": p["id"], "ruling": ruling or "upheld",
                             "severity": severity or "major",
                             "reasons": f"Simulated juror's reasons on {p['id']}."}
                            for p in points]
    else:
        labels = _headed(prompt, "### Proposal — ") or ["Participant A"]
        data["findings"] = [
            {"id": "F1", "point": "A change of this size needs a measurement before it is made.",
             "raised_by": labels, "ruling": ruling or "upheld", "severity": severity or "major",
             "reasons": "Every participant says evidence should decide; none gathered any.",
             "evidence": [{"note": "no participant ran a command or cited a file"}]},
            {"id": "F2", "point": "The gains are certain enough to start at once.",
             "raised_by": labels[:1], "ruling": ruling or "rejected",
             "severity": "minor", "reasons": "Asserted, not measured."}]
        data["agreements"] = ["Evidence should decide; no participant gathered any."]
        if "`new_ground`" in prompt:
            data["new_ground"] = bool(env.get("DISPUTATIO_SIM_NEW_GROUND")) and \
                "have argued the answers already" not in prompt
    heard = f"The human's answers were taken into account: {_short(answers)}\n\n" \
        if answers else ""
    return (f"{LABEL}\n\nMeasure first, then proceed incrementally; neither side backed its "
            f"claim with a test.\n\n{heard}```json\n{to_json(data, indent=2)}\n```\n")


def _section(prompt: str, heading: str) -> str:
    """A section of the prompt as the prompt's own structure has it (column 0): from its
    ``## heading`` and a blank line to the next ``## `` at column 0, stripped, unquoted (a
    leading ``>`` and one space off every line)."""
    start = "## " + heading + "\n\n"
    if prompt.startswith(start):
        begin = len(start)
    else:
        at = prompt.find("\n" + start)
        if at < 0:
            return ""
        begin = at + 1 + len(start)
    if prompt.startswith("## ", begin):
        return ""
    end = prompt.find("\n## ", begin)
    body = prompt[begin:end + 1 if end >= 0 else len(prompt)].strip()
    return "\n".join(line[2:] if line.startswith("> ") else line[1:] if line.startswith(">")
                     else line for line in body.split("\n"))


def _headed(text: str, head: str) -> list[str]:
    """What follows ``head`` on every line that starts with it and goes on."""
    return [line[len(head):] for line in text.split("\n")
            if line.startswith(head) and len(line) > len(head)]


def _word(text: str, marker: str, *, number: bool = False, last: bool = False) -> str:
    """The word (``number``: the decimal digits) right after the first (``last``: the last)
    ``marker`` that has one: what ``re`` finds with ``marker(\\w+)``, without importing ``re``,
    which alone would cost a third of the participant's start."""
    at = text.rfind(marker) if last else text.find(marker)
    while at >= 0:
        end = begin = at + len(marker)
        while end < len(text) and (text[end].isdecimal() if number
                                   else text[end].isalnum() or text[end] == "_"):
            end += 1
        if end > begin:
            return text[begin:end]
        at = text.rfind(marker, 0, at + len(marker) - 1) if last else text.find(marker, at + 1)
    return ""


def _short(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# JSON written here rather than by the json module, whose import (it imports re) would be the
# largest part of the participant's start after the interpreter's own
_ESCAPES: dict[int, str] = {i: f"\\u{i:04x}" for i in (*range(0x20), 0x7F)}
_ESCAPES.update({ord('"'): '\\"', ord("\\"): "\\\\", ord("\b"): "\\b", ord("\f"): "\\f",
                 ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t"})


def _json_unicode(err: UnicodeError) -> tuple[str, int]:
    """What ASCII cannot hold, as JSON's ``\\uXXXX`` (a surrogate pair above U+FFFF)."""
    assert isinstance(err, UnicodeEncodeError)
    out = []
    for ch in err.object[err.start:err.end]:
        n = ord(ch)
        if n > 0xFFFF:
            n -= 0x10000
            out.append(f"\\u{0xD800 | n >> 10:04x}\\u{0xDC00 | n & 0x3FF:04x}")
        else:
            out.append(f"\\u{n:04x}")
    return "".join(out), err.end


codecs.register_error("disputatio.json", _json_unicode)


def to_json(value: object, indent: int | None = None, depth: int = 0) -> str:
    """``json.dumps(value, indent=indent)``, the same text, for what the answers hold: dicts,
    lists, tuples, strings, numbers, booleans and None."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        escaped = value.translate(_ESCAPES).encode("ascii", "disputatio.json").decode("ascii")
        return f'"{escaped}"'
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        if value != value:
            return "NaN"
        if value in (float("inf"), float("-inf")):
            return "Infinity" if value > 0 else "-Infinity"
        return float.__repr__(value)
    if isinstance(value, dict):
        items = [to_json(_key(k)) + ": " + to_json(v, indent, depth + 1) for k, v in value.items()]
        ends = "{}"
    elif isinstance(value, list | tuple):
        items = [to_json(v, indent, depth + 1) for v in value]
        ends = "[]"
    else:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
    if not items:
        return ends
    if indent is None:
        return ends[0] + ", ".join(items) + ends[1]
    inner = "\n" + " " * (indent * (depth + 1))
    return ends[0] + inner + ("," + inner).join(items) + "\n" + " " * (indent * depth) + ends[1]


def _key(key: object) -> str:
    """A dict key as JSON writes it: a string, or a scalar's own JSON text."""
    if isinstance(key, str):
        return key
    if key is None or isinstance(key, int | float):
        return to_json(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def main() -> int:
    persona = sys.argv[1] if len(sys.argv) > 1 else "participant"
    env = dict(os.environ)
    prompt = sys.stdin.buffer.read().decode("utf-8", errors="replace")
    if env.get("DISPUTATIO_SIM_HANG"):
        while True:
            time.sleep(3600)
    latency = float(env.get("DISPUTATIO_SIM_LATENCY", "0") or 0)
    if latency:
        time.sleep(latency)
    touch = env.get("DISPUTATIO_SIM_TOUCH")
    if touch:  # dirty the working directory, as an agent running tests would
        with open(touch, "a") as fh:
            fh.write("scratch\n")
    once = env.get("DISPUTATIO_SIM_FAIL_ONCE")
    if once and not os.path.exists(once):  # fail the first time only: a transient error
        open(once, "w").close()
        sys.stderr.write("simulated transient failure\n")
        return 1
    if env.get("DISPUTATIO_SIM_FAIL"):
        sys.stderr.write("simulated failure: the participant was told to fail\n")
        return 1
    filler_mb = float(env.get("DISPUTATIO_SIM_OUTPUT_MB", "0") or 0)
    if filler_mb:
        chunk = ("x" * 1023 + "\n").encode()
        for _ in range(int(filler_mb * 1024)):
            sys.stdout.buffer.write(chunk)
    text = answer(prompt, persona, env)
    record = {"type": "result", "text": text, "cost_usd": 0.0,
              "tokens": {"input": len(prompt) // 4, "output": len(text) // 4}}
    sys.stdout.write(to_json(record) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
