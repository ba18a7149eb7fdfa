"""Answers no page of ours may turn into markup: each tries to run script, load something, or
break out of where it is shown. Used by the HTML report's unit tests and its browser tests.

``debate_with`` writes a debate folder (a real hash-chained ledger and its rendered artifacts)
whose participants gave these answers, through the same writers a debate uses.
"""

from __future__ import annotations

from pathlib import Path

MEGABYTE_LINE = "A" * 1_000_000

HOSTILE = {
    "script": "<script>alert('script')</script>",
    "img-onerror": "<img src=x onerror=alert('img')>",
    "svg-onload": "<svg onload=alert('svg')><circle r=4 /></svg>",
    "javascript-link": "[click me](javascript:alert('md-link')) and "
                       "<a href=\"javascript:alert('a')\">or me</a>",
    "data-link": "[data](data:text/html,<script>alert('data')</script>)",
    "iframe": "<iframe src=\"https://example.com/frame\"></iframe>",
    "style-breakout": "</style><script>alert('style')</script><style>",
    "title-breakout": "</title><script>alert('title')</script>",
    "textarea-comment": "<!-- </p> --><textarea></article><script>alert('c')</script>",
    "remote-assets": "<link rel=stylesheet href=https://example.com/x.css>"
                     "<style>body{background:url(https://example.com/bg.png)}</style>"
                     "![pixel](https://example.com/pixel.png)",
    "meta-refresh": "<meta http-equiv=\"refresh\" content=\"0;url=https://example.com/\">",
    "base-form": "<base href=\"https://example.com/\"><form action=https://example.com/f>"
                 "<button>go</button></form>",
    "object-embed": "<object data=https://example.com/o></object><embed src=x.swf>",
    "attribute-quote": "[q](https://example.com/\"onmouseover=\"alert('q')) "
                       "[r](https://example.com/'onfocus='alert(1)')",
    "code-breakout": "`</code><script>alert('code')</script>`\n\n"
                     "```html\n</code></pre><script>alert('fence')</script>\n```",
    "entities": "&lt;script&gt;alert('entity')&lt;/script&gt; &#60;b&#62; &amp;",
    "heading-html": "# <h1 onclick=alert(1)>big</h1>\n- <li><script>alert('li')</script>",
    "controls": "\x1b]0;pwned\x07title\x00nul\x1b[2J\x1b[31mred\x9b31m\x08\x7f",
    "bidi": "access \u202eelbisiv\u202c \u2066isolate\u2069 \u200fmark",
    "megabyte-line": MEGABYTE_LINE,
    "megabyte-stars": "**[`_" + "*a_[" * 250_000,
    "math-vbscript": "<math><mi xlink:href=javascript:alert('math')>m</mi></math> "
                     "[v](vbscript:msgbox('v')) <a href=vbscript:x>a</a>",
    "link-tricks": "[e](javascript&#58;alert('e')) [b](<javascript:alert('b')>) "
                   "<javascript:alert('auto')> <https://example.com/auto> "
                   "[s](https://example.com/`onclick=alert('s')`)",
    # a heading whose closing-hash pattern once backtracked for hours on a run of spaces
    "heading-spaces": "# a" + " " * 99_990 + "b",
}


def debate_with(dest: Path, answers: dict[str, str], quaestio: str = "Which is safer?",
                participants: tuple[str, ...] = ("advocate", "skeptic")) -> Path:
    """A finished debate in ``dest``: each participant's proposal, one answer of ``answers``
    each in a turn of its own, a ruling, and its rendered artifacts."""
    from disputatio import folder, ledger
    from disputatio.events import DebateEnded, DebateStarted, TurnCompleted, TurnStarted

    dest.mkdir(parents=True)
    led = ledger.Ledger(dest / "events.jsonl")
    led.append(DebateStarted.TYPE, DebateStarted(
        quaestio=quaestio, rounds=1, participants=list(participants), judge="judge",
        synthesizer="judge", fence="none", fence_reason="tests").to_data())
    names = list(participants)
    for n, text in enumerate(answers.values()):
        who = names[n % len(names)]
        common = {"turn_id": f"reaction-{n + 1}/{who}", "role": who, "seat": "participant",
                  "phase": "reaction", "round": n + 1, "adapter": "simulated"}
        led.append(TurnStarted.TYPE, TurnStarted(**common).to_data())
        led.append(TurnCompleted.TYPE, TurnCompleted(
            **common, ok=True, text=text, cost_usd=0.01, tokens={"input": 10, "output": 5},
            duration_s=1.5).to_data())
    ruling = {"turn_id": "respondeo-1", "role": "judge", "seat": "judge",
              "phase": "respondeo", "round": 1, "adapter": "simulated"}
    led.append(TurnStarted.TYPE, TurnStarted(**ruling).to_data())
    led.append(TurnCompleted.TYPE, TurnCompleted(
        **ruling, ok=True, text="STATUS: RESOLVED\n\n## Ruling\n\nThe skeptic is right.\n"
        + "\n".join(answers.values())).to_data())
    led.append(DebateEnded.TYPE, DebateEnded(status="resolved", reason="").to_data())
    folder.write(dest, led.events, "resolved", "")
    return dest
