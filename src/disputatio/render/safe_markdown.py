"""A small markdown subset to HTML, for text we did not write (agents' answers, the quaestio).

Escape first, transform after: the whole text is HTML-escaped before any markdown is looked
at, so nothing in it can become a tag, an attribute or an entity of ours; the transforms then
only wrap escaped text in a fixed set of elements. What is understood: headings, paragraphs,
code fences, inline code, ``*emphasis*``, ``_emphasis_`` and ``**strong**``, lists, block
quotes, rules, and links whose target is http(s) (anything else, ``javascript:`` included,
stays text).

Every pattern is bounded by a character it cannot cross, so a megabyte on one line costs
linear time, not quadratic. Pure.
"""

from __future__ import annotations

import html
import re

from disputatio.text import cut, sanitize

# the most of one text a page shows: the ledger's own limit for an answer (engine.ANSWER_LIMIT);
# a longer one (a ledger edited by hand) is cut, marked, rather than left to stall the browser
SHOWN = 100_000

# bidi embeddings, overrides and isolates reorder what is shown ("Trojan source"): shown as
# their code points instead
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([\w+-]{0,30})[^`]*$")
_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*)$")
_BULLET = re.compile(r"^( *)[-*+]\s+(.*)$")
_NUMBER = re.compile(r"^( *)\d{1,9}[.)]\s+(.*)$")
_RULE = re.compile(r"^ {0,3}([-*_])(?:\s*\1){2,}\s*$")
_QUOTE = re.compile(r"^ {0,3}&gt; ?(.*)$")   # '>' is already escaped

_CODE = re.compile(r"`([^`\n]+)`")
_STRONG = re.compile(r"\*\*([^*\n]+)\*\*")
_EM = re.compile(r"(?<![\w*])\*([^*\s][^*\n]*)\*(?![\w*])")
_UNDER = re.compile(r"(?<![\w_])_([^_\s][^_\n]*)_(?![\w_])")   # snake_case stays as it is
# a link's target: http(s) only (escaped already, so no quote can end the attribute)
_LINK = re.compile(r"\[([^\[\]\n]{1,2000})\]\((https?://[^\s()\[\]`]{1,2000})\)")

_MAX_DEPTH = 6   # block quotes nested deeper are shown as text
# a run this long without a space is wrapped anywhere by the plain word-break rule: a browser's
# "break where it fits" rule lays out a megabyte-long word in minutes, this one in a second
_UNBROKEN = re.compile(r"\S{400}")


def to_html(text: str, heading_offset: int = 2, limit: int | None = SHOWN) -> str:
    """``text`` as HTML; its headings start ``heading_offset`` levels down, so an answer's
    ``#`` never outranks the page's own; at most ``limit`` characters of it."""
    text = sanitize(text)
    if limit is not None:
        text = cut(text, limit, "in the ledger, events.jsonl")
    safe = html.escape(shown_bidi(text), quote=True)
    return _blocks(safe.split("\n"), heading_offset, 0)


def shown_bidi(text: str) -> str:
    """Bidi controls as their code points: what the text says, in the order it is stored."""
    return _BIDI.sub(_codepoint, text)


def _codepoint(m: re.Match) -> str:
    return f"[U+{ord(m.group()):04X}]"


def _blocks(lines: list[str], offset: int, depth: int) -> str:
    out: list[str] = []
    para: list[str] = []
    i = 0

    def flush() -> None:
        if para:
            out.append(_tag("p", para) + "<br>\n".join(inline(p) for p in para) + "</p>")
            para.clear()

    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            flush()
            mark, lang = fence.group(1), fence.group(2)
            body: list[str] = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith(mark[0] * len(mark)):
                body.append(lines[i])
                i += 1
            cls = f' class="language-{lang}"' if lang else ""
            out.append(f"<pre><code{cls}>" + "\n".join(body) + "</code></pre>")
            i += 1
            continue
        if not line.strip():
            flush()
            i += 1
            continue
        heading = _HEADING.match(line)
        if heading:
            flush()
            level = min(6, len(heading.group(1)) + offset)
            out.append(_tag(f"h{level}", [line]) + f"{inline(_title(heading.group(2)))}</h{level}>")
            i += 1
            continue
        if _RULE.match(line):
            flush()
            out.append("<hr>")
            i += 1
            continue
        if depth < _MAX_DEPTH and _QUOTE.match(line):
            flush()
            quoted = []
            while i < len(lines) and (m := _QUOTE.match(lines[i])):
                quoted.append(m.group(1))
                i += 1
            out.append("<blockquote>" + _blocks(quoted, offset, depth + 1) + "</blockquote>")
            continue
        if _BULLET.match(line) or _NUMBER.match(line):
            flush()
            i = _list(lines, i, out)
            continue
        para.append(line)
        i += 1
    flush()
    return "\n".join(out)


def _title(rest: str) -> str:
    """A heading's text without its closing hashes (``## Plan ##``), which count only after a
    space: ``# Use C#`` keeps its ``#``. Done by hand, as one pattern of lazy text and optional
    spaces and hashes backtracks in cubic time over a long run of spaces."""
    rest = rest.rstrip()
    bare = rest.rstrip("#")
    return bare.rstrip() if bare == "" or bare[-1] in " \t" else rest


def _list(lines: list[str], i: int, out: list[str]) -> int:
    """One flat list (bullets or numbers, whichever starts it); an indented line that starts
    no item continues the item before it. Returns the index after the list."""
    pattern = _BULLET if _BULLET.match(lines[i]) else _NUMBER
    tag = "ul" if pattern is _BULLET else "ol"
    items: list[list[str]] = []
    while i < len(lines):
        m = pattern.match(lines[i])
        if m:
            items.append([m.group(2)])
        elif items and lines[i].startswith((" ", "\t")) and lines[i].strip():
            items[-1].append(lines[i].strip())
        else:
            break
        i += 1
    out.append(f"<{tag}>" + "".join(_tag("li", item) + "<br>\n".join(inline(x) for x in item)
                                    + "</li>" for item in items) + f"</{tag}>")
    return i


def _tag(name: str, lines: list[str]) -> str:
    long = any(_UNBROKEN.search(x) for x in lines)
    return f'<{name} class="unbroken">' if long else f"<{name}>"


def inline(escaped: str) -> str:
    """Inline markup on already-escaped text: code spans first (nothing inside them is
    transformed), then links (their targets untouched), emphasis on the rest."""
    out = []
    for n, part in enumerate(_CODE.split(escaped)):
        if n % 2:
            out.append(f"<code>{part}</code>")
            continue
        pos = 0
        for m in _LINK.finditer(part):
            out.append(_emphasis(part[pos:m.start()]))
            out.append(f'<a href="{m.group(2)}" rel="noopener noreferrer nofollow">'
                       f"{_emphasis(m.group(1))}</a>")
            pos = m.end()
        out.append(_emphasis(part[pos:]))
    return "".join(out)


def _emphasis(escaped: str) -> str:
    escaped = _STRONG.sub(r"<strong>\1</strong>", escaped)
    escaped = _EM.sub(r"<em>\1</em>", escaped)
    return _UNDER.sub(r"<em>\1</em>", escaped)
