"""The viewer's one page: the list of debates at ``/``, one debate at ``/debates/<id>``.

Its script is ours and small: it reads the API and the event stream of the same origin and
builds the page with ``textContent`` and ``createElement`` only, so an agent's text is always
text, never markup (no ``innerHTML`` anywhere). The Content-Security-Policy allows exactly this
script and this stylesheet (by their hashes) and connections to this origin; nothing else loads.
"""

from __future__ import annotations

import base64
import hashlib

STYLE = """
:root { --fg: #1d1f23; --muted: #5d6470; --line: #d9dde3; --bg: #fbfbfc; }
body { font: 15px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg);
  margin: 0 auto; max-width: 60rem; padding: 1rem 1.5rem 3rem; }
header { border-bottom: 1px solid var(--line); margin-bottom: 1rem; }
h1 { font-size: 1.3rem; margin: .5rem 0; overflow-wrap: anywhere; }
nav a, table a { color: #1a5fb4; }
.muted, .meta { color: var(--muted); font-size: .9rem; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid var(--line);
  vertical-align: top; }
td.q { overflow-wrap: anywhere; }
.turn { border: 1px solid var(--line); border-left: 5px solid hsl(var(--hue, 210), 55%, 50%);
  border-radius: 6px; background: #fff; padding: .5rem 1rem; margin: .8rem 0; }
.turn h2 { font-size: 1.05rem; margin: .2rem 0; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; font-size: .95rem; }
.text.unbroken { overflow-wrap: normal; word-break: break-all; }
.running .text { color: var(--muted); font-style: italic; }
.failed .text { color: #a51d2d; }
.redacted .text { color: var(--muted); font-style: italic; }
.status { font-weight: 600; }
.ask { border: 2px solid #1a5fb4; border-radius: 6px; background: #fff; padding: .5rem 1rem;
  margin: .8rem 0; }
.ask h2 { font-size: 1.05rem; margin: .2rem 0 .5rem; overflow-wrap: anywhere; }
.ask .row { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin: .4rem 0; }
.ask textarea { width: 100%; min-height: 4rem; font: inherit; }
.ask .note { color: #a51d2d; margin: .2rem 0; overflow-wrap: anywhere; }
"""

SCRIPT = r"""
"use strict";
const main = document.getElementById("main");
const title = document.getElementById("title");
const status = document.getElementById("status");

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

// the most of one text the page shows: the ledger's own limit for an answer; a longer one (a
// ledger edited by hand) is cut, marked. A long unbroken run wraps anywhere, cheaply.
const SHOWN = 100000;

function show(node, text) {
  text = String(text || "");
  const cut = text.length > SHOWN;
  node.classList.toggle("unbroken", /\S{200}/.test(text));
  node.textContent = cut ? text.slice(0, SHOWN) +
    "\n[\u2026 cut here: " + (text.length - SHOWN) + " more characters]" : text;
}

function short(text, n) {
  const line = String(text || "").trim().split("\n")[0];
  return line.length > n ? line.slice(0, n - 1) + "\u2026" : line;
}

async function showList() {
  title.textContent = "Debates";
  const table = el("table");
  const head = el("tr");
  for (const h of ["started", "quaestio", "protocol", "status", "participants", "turns"])
    head.appendChild(el("th", null, h));
  table.appendChild(head);
  const body = el("tbody");
  table.appendChild(body);
  main.appendChild(table);
  async function load() {
    try {
      const r = await fetch("/v1/debates", {cache: "no-store"});
      const got = await r.json();
      const rows = got.debates.map((d) => {
        const tr = el("tr");
        tr.dataset.debate = d.id;
        tr.appendChild(el("td", "meta", d.date));
        const q = el("td", "q");
        const a = el("a", null, short(d.quaestio, 120) || d.id);
        a.href = "/debates/" + encodeURIComponent(d.id);
        q.appendChild(a);
        tr.appendChild(q);
        for (const v of [d.protocol, d.status, d.participants.join(", "), d.turns ?? ""])
          tr.appendChild(el("td", null, v));
        return tr;
      });
      body.replaceChildren(...rows);
      status.textContent = got.debates.length + " debate(s)";
    } catch (e) {
      status.textContent = "the viewer is not answering";
    }
  }
  await load();
  setInterval(load, 2000);
}

// with watch --human: the debate's open question and its controls, answered by a POST that
// carries the page's token; the question goes when the ledger records an answer to it
function humanControls(id, box) {
  const meta = document.querySelector('meta[name="disputatio-human"]');
  if (!meta) return null;
  const token = meta.content;
  const url = "/v1/debates/" + encodeURIComponent(id) + "/human";
  const done = new Set();
  let shownKey = null;
  box.hidden = true;

  function button(label, action, answer, note) {
    const b = el("button", null, label);
    b.dataset.action = action;
    b.onclick = () => send(Object.assign({action: action}, answer()), note);
    return b;
  }

  async function send(answer, note) {
    answer.key = shownKey;
    const buttons = box.querySelectorAll("button");
    for (const b of buttons) b.disabled = true;
    note.textContent = "sending\u2026";
    try {
      const r = await fetch(url, {method: "POST", cache: "no-store",
        referrerPolicy: "same-origin",     // so the browser sends our Origin with the POST
        headers: {"Content-Type": "application/json", "X-Disputatio-Token": token},
        body: JSON.stringify(answer)});
      const got = await r.json();
      if (r.status === 202) {
        note.textContent = "sent; waiting for the debate to record it";
        return;
      }
      note.textContent = "not taken: " + got.error;
    } catch (e) {
      note.textContent = "the viewer is not answering";
    }
    for (const b of buttons) b.disabled = false;
  }

  function render(q) {
    if (!q || done.has(q.key)) {
      box.hidden = true;
      box.replaceChildren();
      shownKey = null;
      return;
    }
    if (q.key === shownKey) return;
    shownKey = q.key;
    box.dataset.key = q.key;
    const note = el("p", "meta");
    const parts = [el("h2", null, "Your turn: " + q.title)];
    // what the question needs said first (a member dropped); older questions carry none
    for (const line of q.notes || []) parts.push(el("p", "note", line));
    if (q.choices.includes("agree")) {
      const who = el("select");
      who.name = "participant";
      q.participants.forEach((p, i) => {
        const o = el("option", null, (i + 1) + " " + p);
        o.value = p;
        who.appendChild(o);
      });
      const strength = el("select");
      strength.name = "strength";
      for (const n of [1, 2, 3]) {
        const o = el("option", null, "strength " + n + " of 3");
        o.value = String(n);
        o.selected = n === 2;
        strength.appendChild(o);
      }
      const row = el("div", "row");
      row.append(el("span", null, "agree with"), who, strength, button("Agree", "agree",
        () => ({participant: who.value, strength: Number(strength.value)}), note));
      parts.push(row);
    }
    if (q.choices.includes("pick")) {
      const row = el("div", "row");
      row.appendChild(el("span", null, "pick"));
      q.options.forEach((o, i) => {
        const b = button((i + 1) + " " + o, "pick", () => ({choice: o}), note);
        b.dataset.choice = o;
        row.appendChild(b);
      });
      parts.push(row);
    }
    if (q.choices.includes("steer")) {
      const text = el("textarea");
      text.name = "steer";
      text.placeholder = "steer everyone's next turn";
      const row = el("div", "row");
      row.appendChild(button("Steer", "steer", () => ({text: text.value}), note));
      parts.push(text, row);
    }
    if (q.choices.includes("skip")) {
      const row = el("div", "row");
      row.appendChild(button("Skip", "skip", () => ({}), note));
      parts.push(row);
    }
    parts.push(note);
    box.replaceChildren(...parts);
    box.hidden = false;
  }

  async function load() {
    try {
      const r = await fetch(url, {cache: "no-store"});
      if (r.ok) render((await r.json()).question);
    } catch (e) { /* the status line says when the viewer is gone */ }
  }
  load();
  setInterval(load, 1000);
  return {acted(key) { done.add(key); if (key === shownKey) render(null); }};
}

function showDebate(id) {
  const cards = new Map();
  const back = el("a", null, "\u2190 all debates");
  back.href = "/";
  document.getElementById("nav").appendChild(back);
  const facts = el("p", "meta");
  main.appendChild(facts);
  const list = el("div");
  main.appendChild(list);
  const asking = el("section", "ask");   // below the turns, as the terminal asks after them
  asking.id = "ask";
  main.appendChild(asking);
  const human = humanControls(id, asking);
  let seen = 0;
  let ended = "";

  function card(d, label, hue) {
    let c = cards.get(d.turn_id);
    if (!c) {
      const node = el("section", "turn");
      node.dataset.turn = d.turn_id;
      node.style.setProperty("--hue", String(hue ?? 210));
      const h = el("h2");
      const meta = el("div", "meta");
      const text = el("div", "text");
      node.append(h, meta, text);
      list.appendChild(node);
      c = {node, h, meta, text, seq: 0};
      cards.set(d.turn_id, c);
    }
    c.h.textContent = (label || d.turn_id) + " \u2014 " + d.role;
    return c;
  }

  function apply(ev) {
    const d = ev.data;
    seen = ev.seq;
    if (ev.type === "debate_started") {
      title.textContent = short(d.quaestio, 200) || id;
      facts.textContent = [ev.ts.slice(0, 19).replace("T", " "), d.protocol,
        (d.participants || []).join(", "),
        d.judge ? "judge " + d.judge : "no judge"].join(" \u00b7 ");
    } else if (ev.type === "turn_started") {
      const c = card(d, ev.title, ev.hue);
      c.seq = ev.seq;
      c.node.className = "turn running";
      c.meta.textContent = d.adapter + " \u00b7 running";
      show(c.text, "working\u2026");
    } else if (ev.type === "turn_completed" || ev.type === "turn_interrupted") {
      const c = card(d, ev.title, ev.hue);
      c.seq = ev.seq;
      const ok = d.ok && ev.type === "turn_completed";
      c.node.className = "turn " + (ok ? "done" : "failed");
      const bits = [d.adapter];
      if (typeof d.duration_s === "number") bits.push(d.duration_s.toFixed(1) + "s");
      bits.push(typeof d.cost_usd === "number" ? "$" + d.cost_usd.toFixed(2) : "cost unknown");
      c.meta.textContent = bits.join(" \u00b7 ");
      show(c.text, ok ? d.text
        : ev.type === "turn_interrupted" ? "did not finish (interrupted)"
        : "failed (" + d.failure + "): " + (d.message || ""));
    } else if (ev.type === "turn_redacted") {
      const c = cards.get(d.turn_id);
      if (c && c.seq === d.target) {
        c.node.className = "turn redacted";
        show(c.text, d.tombstone);
      }
    } else if (ev.type === "human_acted") {
      if (human) human.acted(d.key);
      list.appendChild(el("p", "meta", "the human in the loop: " + d.action +
        (d.participant ? " " + d.participant : "") + (d.text ? ": " + d.text : "")));
    } else if (ev.type === "debate_ended") {
      ended = d.status + (d.reason ? " \u2014 " + d.reason : "");
    } else if (ev.type === "interrupted") {
      ended = "interrupted";
    } else if (["resumed", "answers_given", "finalize_requested"].includes(ev.type)) {
      ended = "";     // a command took the debate up again
    }
    status.textContent = (ended || "running") + " \u00b7 " + seen + " events";
  }

  const source = new EventSource("/v1/debates/" + encodeURIComponent(id) + "/stream");
  source.addEventListener("ledger", (msg) => apply(JSON.parse(msg.data)));
  source.onerror = () => { status.textContent = "reconnecting\u2026 \u00b7 " + seen + " events"; };
}

const m = location.pathname.match(/^\/debates\/([^/]+)$/);
if (m) showDebate(decodeURIComponent(m[1])); else showList();
"""


def _digest(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


_TEMPLATE = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<!--human--><title>disputatio watch</title>
<style>{STYLE}</style>
</head><body>
<header><nav id="nav" class="muted">disputatio watch </nav><h1 id="title"></h1>
<p id="status" class="status muted"></p></header>
<main id="main"></main>
<script>{SCRIPT}</script>
</body></html>
"""



def html(token: str | None) -> str:
    """The page; with ``watch --human`` it carries the run's token, which its script sends back
    with an answer (a meta tag, so the script and its hash stay the same)."""
    meta = f'<meta name="disputatio-human" content="{token}">' if token else ""
    return _TEMPLATE.replace("<!--human-->", meta, 1)


HTML = html(None)   # the page without --human


# only this script and this stylesheet; fetch and EventSource to this origin; nothing else
CSP = (f"default-src 'none'; script-src '{_digest(SCRIPT)}'; style-src '{_digest(STYLE)}'; "
       "connect-src 'self'; img-src 'none'; base-uri 'none'; form-action 'none'; "
       "frame-ancestors 'none'")
