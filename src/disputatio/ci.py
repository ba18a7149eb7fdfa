"""The GitHub Action's steps that are not a shell line: ``python -m disputatio.ci STEP``.

- ``since --pr N``: the head the previous review of this pull request saw, read from the
  hidden marker of its comment (empty when there is none): what ``review --since`` takes.
- ``outputs --verdict FILE``: the step outputs a workflow uses (verdict, blocking count, cost,
  report, SARIF and debate paths), appended to ``$GITHUB_OUTPUT``.
- ``comment --pr N --verdict FILE``: post or update the one comment, found again by its marker.

They read GitHub's own variables (``GITHUB_TOKEN``, ``GITHUB_REPOSITORY``, ``GITHUB_API_URL``,
``GITHUB_OUTPUT``), so any runner — or a test — can run them. The marker records the head only
of a review that passed: after a failure or no verdict it keeps the previous head, so the next
run reviews those commits again (a fix must be seen with the problem it fixes).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from disputatio.github import API, Client, GitHubError
from disputatio.text import one_line

MARKER = "<!-- disputatio-review"
_HEAD = re.compile(r"<!-- disputatio-review head=([0-9a-f]{40,64}) -->")
LIMIT = 60_000                     # GitHub refuses a comment over 65,536 characters
BOT = "github-actions[bot]"        # who posts with the workflow's GITHUB_TOKEN
ICON = {"pass": "✅ pass", "fail": "❌ fail", "none": "⚠️ no verdict"}


def marker(head: str | None) -> str:
    return f"{MARKER} head={head} -->" if head else f"{MARKER} -->"


def reviewed_head(body: str) -> str | None:
    m = _HEAD.search(body)
    return m.group(1) if m else None


def body(v: dict[str, Any], previous: str | None = None, run_url: str | None = None) -> str:
    """The comment: the verdict, why, what was reviewed, the findings, the cost per agent."""
    change = v["change"]
    head = change["head"] if v["verdict"] == "pass" else previous
    lines = [marker(head), f"## disputatio review: {ICON.get(v['verdict'], v['verdict'])}", ""]
    if v.get("warning"):
        lines += [f"> [!WARNING]\n> **{_md(v['warning'], 1000)}**", ""]
    lines += [f"**Why:** {_md(v['reason'], 1000)}", ""]
    what = f"`{change['base'][:12]}..{(change['head'] or 'index')[:12]}`, " \
           f"{len(change['files'])} file(s)"
    if change.get("incremental_from"):
        what += f" — only the commits since `{change['incremental_from'][:12]}`, the head " \
                "the previous review saw"
    lines += [f"**Reviewed:** {what}", ""]
    if change.get("note") and not change.get("incremental_from"):
        lines += [f"_{_md(change['note'])}_", ""]
    shown = [f for f in v["findings"] if f["ruling"] != "rejected"]
    if shown:
        lines += ["| | severity | ruling | where | finding |", "|---|---|---|---|---|"]
        for f in shown:
            where = f"`{_md(f['file'], 200)}:{f['line'] or 1}`" if f.get("file") else "—"
            lines.append(f"| {_md(f['id'], 40)} | {f['severity']} | {f['ruling']} | {where} | "
                         f"{_md(f['point'], 400)} |")
        lines.append("")
    rejected = len(v["findings"]) - len(shown)
    if rejected:
        lines += [f"{rejected} finding(s) raised and rejected by the judge (in verdict.json).", ""]
    if not v["findings"]:
        lines += ["No findings.", ""]
    lines += ["<details><summary>Cost and agents</summary>", "",
              "| agent | seats | CLI | turns | cost | tokens |", "|---|---|---|---|---|---|"]
    for a in v["agents"]:
        cost = f"${a['cost_usd']:.4f}" + ("" if a["cost_complete"] else " (+ unknown)")
        tokens = sum(n for n in a["tokens"].values()) if a["tokens"] else "unknown"
        lines.append(f"| {_md(a['name'], 80)} | {', '.join(a['seats'])} | "
                     f"{_md(a['cli_version'] or a['adapter'], 80)} | {a['turns']} "
                     f"({a['failed']} failed) | {cost} | {tokens} |")
    total = "unknown" if v["cost_usd"] is None else f"${v['cost_usd']:.4f}"
    lines += ["", f"Total: {total}" + ("" if v["cost_complete"] else " (a lower bound)")
              + f" · ledger head `{(v['ledger'].get('head') or '')[:16]}`", "", "</details>"]
    if run_url:
        lines += ["", "The whole debate: the `disputatio-debate` artifact of "
                  f"[this run]({run_url})."]
    text = "\n".join(lines) + "\n"
    return text if len(text) <= LIMIT else text[:LIMIT] + "\n\n_(cut: see verdict.json)_\n"


def _md(text: str, limit: int = 300) -> str:
    """Foreign text in one table cell or line: no breaks, no pipes, no mentions, no HTML."""
    flat = one_line(str(text), limit).replace("|", "\\|").replace("@", "@\u200b")
    return flat.replace("<", "&lt;").replace(">", "&gt;")


def outputs(v: dict[str, Any], out: Path) -> dict[str, str]:
    values = {"verdict": v["verdict"], "blocking": str(v["counts"]["blocking"]),
              "cost": "" if v["cost_usd"] is None else f"{v['cost_usd']:.6f}",
              "report": v["report"], "sarif": v["sarif"], "debate": v["debate"],
              "exit-code": str(v["exit_code"]), "warning": v.get("warning") or "",
              # per agent, a JSON object (fromJSON in a workflow): USD, null when unreported
              "costs": json.dumps({a["name"]: a["cost_usd"] if a["cost_complete"] else None
                                   for a in v["agents"]}, ensure_ascii=False)}
    if v.get("warning"):   # an annotation on the run, where a reader of the check sees it
        print(f"::warning title=disputatio review::{one_line(v['warning'], 1000)}")
    with out.open("a", encoding="utf-8") as f:
        for k, val in values.items():
            f.write(f"{k}={one_line(val, 4000)}\n")
    return values


def _client() -> Client:
    token, repo = os.environ.get("GITHUB_TOKEN", ""), os.environ.get("GITHUB_REPOSITORY", "")
    if not token or not repo:
        raise SystemExit(_error("GITHUB_TOKEN and GITHUB_REPOSITORY must be set", 2))
    return Client(token, repo, os.environ.get("GITHUB_API_URL") or API)


def _error(message: str, code: int) -> int:
    print(f"error: {message}", file=sys.stderr)
    return code


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m disputatio.ci")
    sub = p.add_subparsers(dest="step", required=True)
    s = sub.add_parser("since")
    s.add_argument("--pr", type=int, required=True)
    s.add_argument("--author", default=BOT)
    o = sub.add_parser("outputs")
    o.add_argument("--verdict", type=Path, required=True)
    c = sub.add_parser("comment")
    c.add_argument("--pr", type=int, required=True)
    c.add_argument("--verdict", type=Path, required=True)
    c.add_argument("--mode", choices=("update", "new", "off"), default="update")
    c.add_argument("--author", default=BOT)
    args = p.parse_args(argv)
    try:
        if args.step == "since":
            print(_since(_client(), args.pr, args.author or None))
            return 0
        try:
            v = json.loads(args.verdict.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            return _error(f"{args.verdict}: cannot read the verdict: {exc}", 2)
        if args.step == "outputs":
            out = os.environ.get("GITHUB_OUTPUT")
            if not out:
                return _error("GITHUB_OUTPUT is not set", 2)
            outputs(v, Path(out))
            return 0
        if args.mode == "off":
            return 0
        return _comment(_client(), args, v)
    except GitHubError as exc:
        return _error(f"GitHub: {exc}", 1)


def _since(client: Client, pr: int, author: str | None) -> str:
    """The head the last passing review saw; '' when none, or when the comments cannot be
    read: reviewing the whole change again is only slower, never less safe."""
    try:
        found = client.find(pr, MARKER, author)
    except GitHubError as exc:
        print(f"::warning::disputatio could not read its previous comment ({exc}): reviewing "
              "the whole change", file=sys.stderr)
        return ""
    return (reviewed_head(found.body) or "") if found else ""


def _comment(client: Client, args: argparse.Namespace, v: dict[str, Any]) -> int:
    server = os.environ.get("GITHUB_SERVER_URL", "https://github.com")
    run = os.environ.get("GITHUB_RUN_ID")
    url = f"{server}/{client.repo}/actions/runs/{run}" if run else None
    try:
        old = client.find(args.pr, MARKER, args.author or None)
        text = body(v, reviewed_head(old.body) if old else None, url)
        if old is not None and args.mode == "update":
            client.update(old.id, text)
            print(f"updated comment {old.id}", file=sys.stderr)
        else:
            made = client.create(args.pr, text)
            print(f"created comment {made.id}", file=sys.stderr)
    except GitHubError as exc:
        if exc.status in (403, 404):   # a fork's read-only token: the gate still stands
            print(f"::warning::disputatio could not post its comment: {exc}", file=sys.stderr)
            return 0
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main())
