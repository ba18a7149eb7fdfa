"""A scripted model server on 127.0.0.1 that the real agent CLIs can talk to.

Why: no model API is reachable from the test machine, yet disputatio must be proven against the
real claude/codex/gemini/copilot/pi binaries. Each CLI can be pointed at a custom base URL (see
``clis.cli_setup``); this server answers the four wire formats they speak, with replies chosen by
an ordered list of rules, and records every request so tests can assert what the CLI sent.

Wire formats (one SSE body with Content-Length is enough for every CLI; none needs chunking):

* Anthropic Messages      ``POST /v1/messages``                    (claude, pi, copilot)
* OpenAI Responses        ``POST /v1/responses``                   (codex, pi, copilot)
* OpenAI Chat Completions ``POST /v1/chat/completions``            (copilot, pi)
* Gemini                  ``POST /v1beta/models/<m>:streamGenerateContent`` / ``:generateContent``

Side requests that are not a conversation turn (claude's session-title request, gemini's model
router and next-speaker checks, token counting) are answered automatically, never consume a rule,
and are recorded with ``kind`` other than ``"turn"``.

Stdlib only, so it runs in any venv.
"""

from __future__ import annotations

import gzip
import itertools
import json
import os
import re
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

# ---------------------------------------------------------------------------------------------
# Replies and rules


@dataclass(frozen=True)
class Text:
    """Answer with assistant text."""

    text: str


@dataclass(frozen=True)
class ToolCall:
    """Answer with one call of tool ``name`` (in the request's wire format).

    Once the conversation already holds a call of that tool (so the next request carries its
    result), the rule is skipped and matching falls through to later rules or the default.
    """

    name: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Steps:
    """Answer one conversation's requests with ``calls`` in order, one per request: a request
    whose conversation already holds n tool calls gets ``calls[n]``; once all were made, the
    rule is skipped. Why: a model that tries one thing after another, each after seeing the
    last one's result, calling the same tool more than once (a ``ToolCall`` rule is skipped
    once its tool was called)."""

    calls: tuple[ToolCall, ...]


@dataclass(frozen=True)
class Status:
    """Answer with an HTTP error status and an error JSON body in the family's shape."""

    code: int
    message: str = "scripted error"


@dataclass(frozen=True)
class Hang:
    """Never answer; the connection is dropped only when the server stops."""


Reply = Text | ToolCall | Steps | Status | Hang

# Token counts one response reports: (input, output) or (input, output, cached). ``input`` is
# every input token, the cached ones included; each wire format is told it its own way.
Usage = tuple[int, int] | tuple[int, int, int]


def distinct_usage(base: int = 1000) -> Callable[[Request], Usage]:
    """Usage that differs for every request (and from any other ``base``), so a total can only
    match when each request of a turn was counted exactly once."""
    n = itertools.count(1)
    lock = threading.Lock()

    def usage(req: Request) -> Usage:
        with lock:
            k = next(n)
        return base + 37 * k, base // 10 + 11 * k, base // 4 + 5 * k

    return usage


def cacheable(req: Request) -> bytes:
    """What a provider caches of a request, in the order it reads it: tools, system prompt,
    then the conversation (each wire format names them its own way). Fields around them
    (model, stream, metadata such as a session id) are no part of the prefix, and neither are
    markers the model never reads: Anthropic's ``cache_control`` breakpoints, the ids the
    Responses API gives input items."""
    body = req.body if isinstance(req.body, dict) else {}
    keys = {"anthropic": ("tools", "system", "messages"),
            "responses": ("tools", "instructions", "input"),
            "chat": ("tools", "messages"),
            "gemini": ("tools", "systemInstruction", "contents")}.get(req.family, ())
    unread = {"anthropic": {"cache_control"}, "responses": {"id"}}.get(req.family, set())

    def read(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: read(x) for k, x in v.items() if k not in unread}
        return [read(x) for x in v] if isinstance(v, list) else v

    return json.dumps([read(body.get(k)) for k in keys], ensure_ascii=False,
                      separators=(",", ":")).encode()


class PrefixCache:
    """Usage as a provider with an automatic prefix cache reports it (a ``usage`` callable).

    Input tokens are the cacheable bytes of the request over 4 (about a token each for English
    and JSON); the cached ones are the longest prefix this request shares with any earlier
    request for the same model, by the rule OpenAI documents for automatic caching: only a
    prompt of at least 1,024 tokens, and the hit in steps of 128 tokens. Each request records
    the figures, so a test can compare what the CLI reported (and disputatio recorded) with
    what the cache served."""

    TOKEN_BYTES = 4
    MINIMUM = 1024
    STEP = 128

    def __init__(self, output: int = 40) -> None:
        self.output = output
        self.seen: dict[str | None, list[bytes]] = {}
        self._lock = threading.Lock()

    def __call__(self, req: Request) -> Usage:
        text = cacheable(req)
        tokens = len(text) // self.TOKEN_BYTES
        with self._lock:
            earlier = self.seen.setdefault(req.model, [])
            common = max((len(os.path.commonprefix([text, e])) for e in earlier), default=0)
            earlier.append(text)
        hit = common // self.TOKEN_BYTES // self.STEP * self.STEP
        cached = hit if tokens >= self.MINIMUM else 0
        return tokens, self.output, min(cached, tokens)


@dataclass
class Rule:
    """``reply`` for requests whose prompt contains ``match`` (None = any request).

    ``match`` may also be a callable taking the ``Request``. ``in_body=True`` matches the
    substring against the whole raw request body instead of the latest user text.
    ``once=True`` rules are used up by their first answer.
    """

    match: str | Callable[[Request], bool] | None
    reply: Reply
    once: bool = False
    in_body: bool = False
    used: int = 0

    def matches(self, req: Request) -> bool:
        if self.once and self.used:
            return False
        if self.match is None:
            return True
        if callable(self.match):
            return bool(self.match(req))
        haystack = req.raw.decode("utf-8", "replace") if self.in_body else req.prompt
        return self.match in haystack


# ---------------------------------------------------------------------------------------------
# What a request looked like


@dataclass
class Request:
    """One recorded request. ``body`` is the parsed JSON (None when not JSON).

    ``family``: anthropic | responses | chat | gemini | other.
    ``kind``: turn | title | router | next_speaker | count_tokens | websocket | unknown.
    ``prompt``: text of the latest user message (tool results excluded).
    ``tool_results``: texts of tool results carried by the latest message(s), if any.
    ``called_tools``: names of tools the (scripted) model already called in this conversation.
    """

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    raw: bytes
    body: Any
    family: str
    kind: str
    model: str | None
    prompt: str = ""
    tool_results: list[str] = field(default_factory=list)
    called_tools: list[str] = field(default_factory=list)
    reply: Reply | None = None
    status: int | None = None
    usage: tuple[int, int, int] | None = None  # (input, output, cached) the answer reported
    at: float = field(default_factory=time.time)


def _text_of(content: Any) -> str:
    """Text inside any of the content shapes the four APIs use."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(t for t in (_text_of(c) for c in content) if t)
    if isinstance(content, dict):
        kind = content.get("type")
        if kind in ("tool_result", "tool_use", "function_call", "function_call_output"):
            return ""
        if "text" in content and isinstance(content["text"], str):
            return content["text"]
        if "content" in content:
            return _text_of(content["content"])
    return ""


def _dump(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _tool_output_text(value: Any) -> str:
    if isinstance(value, list):
        return "\n".join(_tool_output_text(v) for v in value)
    if isinstance(value, dict) and isinstance(value.get("text"), str):
        return value["text"]
    return _dump(value)


def _inspect_anthropic(req: Request, body: dict) -> None:
    msgs = body.get("messages") or []
    for m in msgs:
        if m.get("role") == "assistant" and isinstance(m.get("content"), list):
            req.called_tools += [b.get("name", "") for b in m["content"]
                                 if isinstance(b, dict) and b.get("type") == "tool_use"]
    for m in reversed(msgs):
        if m.get("role") == "user":
            text = _text_of(m.get("content"))
            if text:
                req.prompt = text
                break
    if msgs and msgs[-1].get("role") == "user" and isinstance(msgs[-1].get("content"), list):
        req.tool_results = [_tool_output_text(b.get("content")) for b in msgs[-1]["content"]
                            if isinstance(b, dict) and b.get("type") == "tool_result"]


def _inspect_responses(req: Request, body: dict) -> None:
    items = body.get("input")
    if isinstance(items, str):
        req.prompt = items
        return
    items = items or []
    last_user = -1
    for i, it in enumerate(items):
        kind = it.get("type", "message")
        if kind in ("function_call", "custom_tool_call", "local_shell_call"):
            req.called_tools.append(it.get("name", "shell"))
        if kind == "message" and it.get("role") == "user":
            text = _text_of(it.get("content"))
            if text:
                req.prompt, last_user = text, i
    req.tool_results = [_tool_output_text(it.get("output")) for it in items[last_user + 1:]
                        if it.get("type") in ("function_call_output", "custom_tool_call_output")]


def _inspect_chat(req: Request, body: dict) -> None:
    msgs = body.get("messages") or []
    for m in msgs:
        for call in m.get("tool_calls") or []:
            req.called_tools.append((call.get("function") or {}).get("name", ""))
    for m in reversed(msgs):
        if m.get("role") == "user":
            text = _text_of(m.get("content"))
            if text:
                req.prompt = text
                break
    tail = list(itertools.takewhile(lambda m: m.get("role") == "tool", reversed(msgs)))
    req.tool_results = [_tool_output_text(m.get("content")) for m in reversed(tail)]


def _inspect_gemini(req: Request, body: dict) -> None:
    contents = body.get("contents") or []
    for c in contents:
        for p in c.get("parts") or []:
            if "functionCall" in p and c.get("role") == "model":
                req.called_tools.append(p["functionCall"].get("name", ""))
    for c in reversed(contents):
        if c.get("role", "user") == "user":
            text = "\n".join(p["text"] for p in c.get("parts") or []
                             if isinstance(p.get("text"), str))
            if text:
                req.prompt = text
                break
    if contents:
        req.tool_results = [_dump(p["functionResponse"].get("response"))
                            for p in contents[-1].get("parts") or [] if "functionResponse" in p]


# ---------------------------------------------------------------------------------------------
# The debate-mode default


def debate_default(req: Request) -> Reply:
    """The default reply: a judge ruling for judge prompts, else a short proposal.

    disputatio's judge prompt (``phase: respondeo``) asks for a fenced ``json`` block: the
    answer is a ruling with one finding upheld (a juror's prompt lists the points to rule on by
    id: each is upheld). A prompt containing ``STATUS:`` asks for a status line, which the answer
    starts with. Anything else gets a deterministic proposal naming the model, plus the excerpt
    of any tool result it just got.
    """
    model = req.model or "unknown-model"
    if "(phase: respondeo" in req.prompt:
        return Text(judge_ruling(req.prompt, model))
    if "STATUS:" in req.prompt:
        return Text(f"STATUS: RESOLVED\nRuling by {model}: the proposals agree; adopt the "
                    "smallest change that keeps the tests green.")
    text = (f"Proposal from {model}: make the smallest change that solves the problem, "
            "and cover it with a test.")
    if req.tool_results:
        text += "\nTool result: " + req.tool_results[-1][:2000]
    return Text(text)


def judge_ruling(prompt: str, model: str, ruling: str = "upheld") -> str:
    """A ruling in disputatio's structure: prose, then the ```json block. For a juror's prompt,
    a vote of ``ruling`` on each point it lists; else one finding, ``ruling``."""
    listed = prompt.split("## The points to rule on", 1)
    if len(listed) > 1:
        ids = re.findall(r'"id": "([^"]+)"', listed[1].split("## Your turn", 1)[0])
        findings: list[dict] = [{"id": i, "ruling": ruling, "severity": "major",
                                 "reasons": f"{model} rules {ruling}"} for i in ids]
    else:
        findings = [{"id": "F1", "point": "the change needs a test", "ruling": ruling,
                     "severity": "major", "raised_by": ["Participant A"],
                     "reasons": f"{model} rules {ruling}",
                     "evidence": [{"file": "calc.py", "line": 1}], "file": "calc.py", "line": 1}]
    data = {"status": "resolved", "findings": findings, "questions": [],
            "summary": f"Ruling by {model}: adopt the smallest change that keeps the tests green."}
    return f"Ruling by {model}.\n\n```json\n{json.dumps(data)}\n```\n"


# ---------------------------------------------------------------------------------------------
# Wire encoders


def _sse(events: Iterable[tuple[str | None, Any]]) -> bytes:
    out = []
    for name, data in events:
        payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        out.append((f"event: {name}\n" if name else "") + f"data: {payload}\n\n")
    return "".join(out).encode()


class _Ids:
    def __init__(self) -> None:
        self._n = itertools.count(1)
        self._lock = threading.Lock()

    def __call__(self, prefix: str) -> str:
        with self._lock:
            return f"{prefix}{next(self._n):04d}"


def _anthropic(reply: Text | ToolCall, model: str, usage: tuple[int, int, int], stream: bool,
               new_id: _Ids) -> tuple[str, bytes]:
    ins, outs, cached = usage
    msg_id = new_id("msg_stub")
    if isinstance(reply, Text):
        block = {"type": "text", "text": reply.text}
        start, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": reply.text}
        stop = "end_turn"
    else:
        tid = new_id("toolu_stub")
        block = {"type": "tool_use", "id": tid, "name": reply.name, "input": reply.args}
        start = {"type": "tool_use", "id": tid, "name": reply.name, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(reply.args)}
        stop = "tool_use"
    # Anthropic counts cache reads apart from input_tokens
    usage_full = {"input_tokens": ins - cached, "output_tokens": outs,
                  "cache_creation_input_tokens": 0, "cache_read_input_tokens": cached}
    if not stream:
        return "application/json", json.dumps({
            "id": msg_id, "type": "message", "role": "assistant", "model": model,
            "content": [block], "stop_reason": stop, "stop_sequence": None, "usage": usage_full,
        }).encode()
    return "text/event-stream", _sse([
        ("message_start", {"type": "message_start", "message": {
            "id": msg_id, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": {**usage_full,
                                                                   "output_tokens": 1}}}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": start}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta",
                           "delta": {"stop_reason": stop, "stop_sequence": None},
                           "usage": {"output_tokens": outs}}),
        ("message_stop", {"type": "message_stop"}),
    ])


def _responses(reply: Text | ToolCall, model: str, usage: tuple[int, int, int], stream: bool,
               new_id: _Ids) -> tuple[str, bytes]:
    ins, outs, cached = usage
    resp_id = new_id("resp_stub")
    usage_obj = {"input_tokens": ins, "input_tokens_details": {"cached_tokens": cached},
                 "output_tokens": outs, "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": ins + outs}
    base = {"id": resp_id, "object": "response", "created_at": int(time.time()), "model": model}
    events: list[tuple[str, dict]] = [("response.created", {
        "type": "response.created",
        "response": {**base, "status": "in_progress", "output": []}})]
    if isinstance(reply, Text):
        item_id = new_id("msg_stub")
        part = {"type": "output_text", "text": reply.text, "annotations": []}
        item = {"id": item_id, "type": "message", "status": "completed", "role": "assistant",
                "content": [part]}
        where = {"item_id": item_id, "output_index": 0, "content_index": 0}
        events += [
            ("response.output_item.added", {"type": "response.output_item.added",
                                            "output_index": 0, "item": {
                                                **item, "status": "in_progress",
                                                "content": []}}),
            ("response.content_part.added", {"type": "response.content_part.added", **where,
                                             "part": {**part, "text": ""}}),
            ("response.output_text.delta", {"type": "response.output_text.delta", **where,
                                            "delta": reply.text}),
            ("response.output_text.done", {"type": "response.output_text.done", **where,
                                           "text": reply.text}),
            ("response.content_part.done", {"type": "response.content_part.done", **where,
                                            "part": part}),
        ]
    else:
        item_id, call_id = new_id("fc_stub"), new_id("call_stub")
        args = json.dumps(reply.args)
        item = {"id": item_id, "type": "function_call", "status": "completed",
                "call_id": call_id, "name": reply.name, "arguments": args}
        where = {"item_id": item_id, "output_index": 0}
        events += [
            ("response.output_item.added", {"type": "response.output_item.added",
                                            "output_index": 0, "item": {
                                                **item, "status": "in_progress",
                                                "arguments": ""}}),
            ("response.function_call_arguments.delta", {
                "type": "response.function_call_arguments.delta", **where, "delta": args}),
            ("response.function_call_arguments.done", {
                "type": "response.function_call_arguments.done", **where, "arguments": args}),
        ]
    events += [
        ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0,
                                       "item": item}),
        ("response.completed", {"type": "response.completed", "response": {
            **base, "status": "completed", "output": [item], "usage": usage_obj}}),
    ]
    for seq, (_, data) in enumerate(events):
        data["sequence_number"] = seq
    if not stream:
        return "application/json", json.dumps(events[-1][1]["response"]).encode()
    return "text/event-stream", _sse(events)


def _chat(reply: Text | ToolCall, model: str, usage: tuple[int, int, int], stream: bool,
          new_id: _Ids) -> tuple[str, bytes]:
    ins, outs, cached = usage
    cid = new_id("chatcmpl-stub")
    usage_obj = {"prompt_tokens": ins, "completion_tokens": outs, "total_tokens": ins + outs,
                 "prompt_tokens_details": {"cached_tokens": cached}}
    base = {"id": cid, "created": int(time.time()), "model": model}
    if isinstance(reply, Text):
        message: dict[str, Any] = {"role": "assistant", "content": reply.text}
        delta: dict[str, Any] = {"content": reply.text}
        finish = "stop"
    else:
        call = {"id": new_id("call_stub"), "type": "function",
                "function": {"name": reply.name, "arguments": json.dumps(reply.args)}}
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        delta = {"tool_calls": [{"index": 0, **call}]}
        finish = "tool_calls"
    if not stream:
        return "application/json", json.dumps({
            **base, "object": "chat.completion", "usage": usage_obj,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}]}).encode()
    chunk = {**base, "object": "chat.completion.chunk"}

    def choice(d: dict, fin: str | None) -> dict:
        return {**chunk, "choices": [{"index": 0, "delta": d, "finish_reason": fin}]}

    return "text/event-stream", _sse([
        (None, choice({"role": "assistant", "content": ""}, None)),
        (None, choice(delta, None)),
        (None, {**choice({}, finish), "usage": usage_obj}),
        (None, "[DONE]"),
    ])


def _gemini(reply: Text | ToolCall, model: str, usage: tuple[int, int, int], stream: bool,
            new_id: _Ids) -> tuple[str, bytes]:
    ins, outs, cached = usage
    part = ({"text": reply.text} if isinstance(reply, Text)
            else {"functionCall": {"name": reply.name, "args": reply.args}})
    payload = {
        "candidates": [{"content": {"parts": [part], "role": "model"},
                        "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": ins, "candidatesTokenCount": outs,
                          "cachedContentTokenCount": cached, "totalTokenCount": ins + outs},
        "modelVersion": model, "responseId": new_id("stub-resp"),
    }
    if not stream:
        return "application/json", json.dumps(payload).encode()
    return "text/event-stream", _sse([(None, payload)])


_ENCODERS = {"anthropic": _anthropic, "responses": _responses, "chat": _chat, "gemini": _gemini}


def _error_body(family: str, code: int, message: str) -> bytes:
    names = {400: ("invalid_request_error", "INVALID_ARGUMENT"),
             401: ("authentication_error", "UNAUTHENTICATED"),
             403: ("permission_error", "PERMISSION_DENIED"),
             404: ("not_found_error", "NOT_FOUND"),
             429: ("rate_limit_error", "RESOURCE_EXHAUSTED"),
             529: ("overloaded_error", "UNAVAILABLE")}
    atype, gstatus = names.get(code, ("api_error", "INTERNAL"))
    if family == "anthropic":
        body: dict = {"type": "error", "error": {"type": atype, "message": message}}
    elif family == "gemini":
        body = {"error": {"code": code, "message": message, "status": gstatus}}
    else:
        body = {"error": {"message": message, "type": atype, "code": str(code), "param": None}}
    return json.dumps(body).encode()


# ---------------------------------------------------------------------------------------------
# The server

_GEMINI_PATH = re.compile(r"^/(?:v1beta|v1|v1alpha)/models/([^/:]+):(\w+)$")


class ScriptedModelServer:
    """A threaded HTTP model server on 127.0.0.1 (free port) answering by ordered rules.

    Usage::

        with ScriptedModelServer([Rule("hello", Text("hi"))]) as srv:
            ...  # point a CLI at srv.url, then inspect srv.requests / srv.turns

    Replies are chosen per conversation-turn request: the first rule that matches wins; a
    ``ToolCall`` rule whose tool the conversation already called is skipped (so a scripted tool
    call is followed by the next rule or the default once the result comes back), and so is a
    ``Steps`` rule whose calls were all made; when nothing
    matches, ``default`` answers (a ``Reply``, or a callable ``Request -> Reply``; by default
    ``debate_default``). Every response carries ``usage`` token counts: a fixed ``Usage``, or a
    callable ``Request -> Usage`` (e.g. ``distinct_usage()``); each request records what it got.
    """

    def __init__(self, rules: Iterable[Rule] = (),
                 default: Reply | Callable[[Request], Reply] | None = None,
                 usage: Usage | Callable[[Request], Usage] = (120, 30)) -> None:
        self.rules: list[Rule] = list(rules)
        self.default = default if default is not None else debate_default
        self.usage = usage
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._ids = _Ids()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting ---------------------------------------------------------------------------

    def add(self, match: str | Callable[[Request], bool] | None, reply: Reply, *,
            once: bool = False, in_body: bool = False) -> Rule:
        """Append a rule (checked after the existing ones) and return it."""
        rule = Rule(match, reply, once=once, in_body=in_body)
        with self._lock:
            self.rules.append(rule)
        return rule

    def script(self, *rules: Rule) -> None:
        """Replace all rules (and forget recorded requests)."""
        with self._lock:
            self.rules = list(rules)
            self.requests.clear()

    @property
    def turns(self) -> list[Request]:
        """Recorded conversation-turn requests (side requests left out)."""
        with self._lock:
            return [r for r in self.requests if r.kind == "turn"]

    # -- lifecycle ---------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>`` with no trailing slash or API prefix."""
        if self._httpd is None:
            raise RuntimeError("server not started")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def start(self) -> ScriptedModelServer:
        handler = type("_Handler", (_Handler,), {"owner": self})
        self._httpd = _QuietServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.1}, daemon=True,
                                        name="scripted-model-server")
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; hung requests are released (their connections just close)."""
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- answering ---------------------------------------------------------------------------

    def _choose(self, req: Request) -> Reply:
        with self._lock:
            for rule in self.rules:
                if not rule.matches(req):
                    continue
                reply = rule.reply
                if isinstance(reply, Steps):
                    if len(req.called_tools) >= len(reply.calls):
                        continue
                    reply = reply.calls[len(req.called_tools)]
                elif isinstance(reply, ToolCall) and reply.name in req.called_tools:
                    continue
                rule.used += 1
                return reply
        return self.default(req) if callable(self.default) else self.default

    def _side_reply(self, req: Request) -> Text | None:
        """Automatic answers for requests that are not a conversation turn."""
        if req.kind == "title":
            return Text(json.dumps({"title": "Scripted session"}))
        if req.kind == "router":
            return Text(json.dumps({"complexity_reasoning": "scripted router answer",
                                    "complexity_score": 1}))
        if req.kind == "next_speaker":
            return Text(json.dumps({"reasoning": "scripted: the model finished its turn",
                                    "next_speaker": "user"}))
        return None


class _QuietServer(ThreadingHTTPServer):
    """Daemon handler threads (a hung request never blocks shutdown); no tracebacks when a
    CLI drops its connection (e.g. while retrying or when it is killed)."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            super().handle_error(request, client_address)


def _classify(method: str, path: str, body: Any, raw: bytes) -> tuple[str, str, str | None]:
    """(family, kind, model) from the route and body."""
    model = body.get("model") if isinstance(body, dict) else None
    if method == "GET":
        return "other", ("websocket" if path.endswith("/responses") else "unknown"), None
    if path.endswith("/messages/count_tokens"):
        return "anthropic", "count_tokens", model
    if path.endswith("/messages"):
        fmt = ((body or {}).get("output_config") or {}).get("format") or {}
        props = (fmt.get("schema") or {}).get("properties") or {}
        kind = "title" if "title" in props and not body.get("tools") else "turn"
        return "anthropic", kind, model
    if path.endswith("/responses"):
        return "responses", "turn", model
    if path.endswith("/chat/completions"):
        return "chat", "turn", model
    m = _GEMINI_PATH.match(path)
    if m:
        model, action = m.group(1), m.group(2)
        if action == "countTokens":
            return "gemini", "count_tokens", model
        if action in ("generateContent", "streamGenerateContent"):
            text = raw.decode("utf-8", "replace")
            if action == "generateContent" and "complexity_score" in text:
                return "gemini", "router", model
            if action == "generateContent" and "next_speaker" in text:
                return "gemini", "next_speaker", model
            return "gemini", "turn", model
    return "other", "unknown", model


_INSPECT = {"anthropic": _inspect_anthropic, "responses": _inspect_responses,
            "chat": _inspect_chat, "gemini": _inspect_gemini}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    owner: ScriptedModelServer  # set on the per-server subclass

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass  # keep pytest output clean; everything is in owner.requests

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            raw = b"".join(chunks)
        else:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        enc = (self.headers.get("Content-Encoding") or "").lower()
        try:
            if enc == "gzip":
                raw = gzip.decompress(raw)
            elif enc == "deflate":
                raw = zlib.decompress(raw)
        except (OSError, zlib.error):
            pass
        return raw

    def _send(self, status: int, ctype: str, payload: bytes, extra: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("Cache-Control", "no-cache")
        self.send_header("request-id", "req_stub")
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        self._handle("GET")

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        self._handle("POST")

    def _handle(self, method: str) -> None:
        owner = self.owner
        parts = urlsplit(self.path)
        raw = self._read_body() if method == "POST" else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        family, kind, model = _classify(method, parts.path, body, raw)
        req = Request(method=method, path=parts.path, query=parse_qs(parts.query),
                      headers={k.lower(): v for k, v in self.headers.items()}, raw=raw,
                      body=body, family=family, kind=kind, model=model)
        if isinstance(body, dict) and family in _INSPECT:
            _INSPECT[family](req, body)
        with owner._lock:
            owner.requests.append(req)

        if kind in ("websocket", "unknown") or family == "other":
            # codex probes GET /v1/responses for a websocket upgrade; a plain 404 makes it fall
            # back to HTTP POST at once
            req.status = 404
            self.close_connection = kind == "websocket"
            self._send(404, "application/json", _error_body("other", 404, "not found (stub)"),
                       {"Connection": "close"} if kind == "websocket" else None)
            return
        if kind == "count_tokens":
            req.status = 200
            key = "input_tokens" if family == "anthropic" else "totalTokens"
            counted = owner.usage[0] if isinstance(owner.usage, tuple) else 120
            self._send(200, "application/json", json.dumps({key: counted}).encode())
            return

        reply = owner._side_reply(req) or owner._choose(req)
        req.reply = reply
        if isinstance(reply, Hang):
            owner._stopping.wait()
            self.close_connection = True
            return
        if isinstance(reply, Status):
            req.status = reply.code
            self._send(reply.code, "application/json",
                       _error_body(family, reply.code, reply.message))
            return
        stream = bool(body.get("stream")) if isinstance(body, dict) else False
        if family == "gemini":
            stream = parts.path.endswith(":streamGenerateContent")
        usage = owner.usage(req) if callable(owner.usage) else owner.usage
        req.usage = (*usage, 0)[:3]
        ctype, payload = _ENCODERS[family](reply, model or "stub-model", req.usage, stream,
                                           owner._ids)
        req.status = 200
        self._send(200, ctype, payload)
