#!/usr/bin/env python3
"""A fake reviewing CLI (the ``command`` adapter): the prompt on stdin, the answer on stdout.

A debater reads the file REVIEW_READ in its checkout (what the head says) and reports it, and
whether the text REVIEW_EXPECT is in its prompt. The judge (its prompt says ``phase:
respondeo``) rules as REVIEW_RULING says: ``blocking`` (one upheld blocking finding at
REVIEW_FILE:REVIEW_LINE), ``major``, ``clean`` (no finding), ``rejected`` (a blocking point,
rejected), ``ask`` (questions for the human), ``garbled`` (no readable block); REVIEW_HANG=1:
never answers; REVIEW_EVIDENCE: the output its finding cites as evidence;
REVIEW_FAIL_ONCE=FILE: fail (as a CLI not logged in) while FILE does not exist, creating it.
The synthesizer (``phase: redactio``) writes a short report.
REVIEW_PROMPTS=DIR: each prompt is saved there.
"""

import json
import os
import sys
import time


def main() -> None:
    prompt = sys.stdin.read()
    env = os.environ
    once = env.get("REVIEW_FAIL_ONCE")
    if once and not os.path.exists(once):
        open(once, "w").close()
        sys.exit("not logged in")
    if env.get("REVIEW_PROMPTS"):
        d = env["REVIEW_PROMPTS"]
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, f"{os.getpid()}.md"), "w") as f:
            f.write(prompt)
    phases = [p.split(")")[0].split(",")[0] for p in prompt.split("(phase: ")[1:]]
    phase = phases[-1].strip() if phases else "proposal"
    if phase == "respondeo":
        if env.get("REVIEW_HANG"):
            while True:
                time.sleep(1)
        print(ruling(env.get("REVIEW_RULING", "clean"), env))
    elif phase == "redactio":
        print("# Review report\n\nThe judge's findings stand.")
    else:
        name = env.get("REVIEW_READ", "")
        seen = open(name).read().strip() if name and os.path.exists(name) else "(nothing)"
        expect = env.get("REVIEW_EXPECT", "")
        print(f"I read {name}: {seen!r}. Expected text in my prompt: "
              f"{bool(expect) and expect in prompt}.")


def ruling(kind: str, env) -> str:
    where = {"file": env.get("REVIEW_FILE", "app.py"), "line": int(env.get("REVIEW_LINE", "1"))}
    finding = {"id": "F1", "point": "The change divides by zero when the list is empty.",
               "raised_by": ["Participant A"], "reasons": "Ran it; it fails.",
               "evidence": [{"command": "python -c 'import app'",
                             "output": env.get("REVIEW_EVIDENCE", "ZeroDivisionError")}],
               **where}
    data: dict = {"status": "resolved", "questions": [], "summary": "Reviewed."}
    if kind == "blocking":
        data["findings"] = [{**finding, "ruling": "upheld", "severity": "blocking"}]
    elif kind == "major":
        data["findings"] = [{**finding, "ruling": "upheld", "severity": "major"}]
    elif kind == "rejected":
        data["findings"] = [{**finding, "ruling": "rejected", "severity": "blocking"}]
    elif kind == "ask":
        data.update(status="needs_input", questions=["Is an empty list possible here?"],
                    findings=[])
    elif kind == "garbled":
        return "I think it is fine, mostly."
    else:
        data["findings"] = []
    return f"My ruling.\n\n```json\n{json.dumps(data)}\n```"


if __name__ == "__main__":
    main()
