"""YAML read so that nothing is silently misread: every key's line for error messages, and the
things PyYAML accepts without a word refused — a key given twice (the last one wins) and aliases
that expand without bound (a "billion laughs" file takes minutes and gigabytes to build)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

import yaml

# What aliases may expand to, in values: a real lineup has a few hundred. Anchors and aliases
# within the bound (a shared env block, ``<<:`` merges) work.
MAX_EXPANDED_VALUES = 10_000


class YamlError(Exception):
    """One problem and the 1-based line it is on (None when the parser cannot say)."""

    def __init__(self, line: int | None, message: str):
        super().__init__(message)
        self.line = line


def read(text: str, rename: Callable[[str], str] = lambda k: k,
         verbatim: Iterable[str] = ()) -> tuple[Any, dict[tuple, int]]:
    """The single document's data and the line of every key path. ``rename`` is applied to
    keys (as the caller will, e.g. camelCase spellings) except inside mappings under a key in
    ``verbatim`` (e.g. environment names), so that two spellings of one key count as twice."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        lines = _line_index(node, rename, set(verbatim))
        # after the walk: constructing folds ``<<:`` merges into the mapping nodes
        return (loader.construct_document(node) if node is not None else None), lines
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise YamlError(mark.line + 1 if mark else None, f"invalid YAML: {problem}") from None
    except RecursionError:
        raise YamlError(None, "invalid YAML: nested too deeply") from None
    except ValueError as exc:  # a value YAML recognises but cannot build, e.g. 2024-13-01
        raise YamlError(None, f"invalid YAML: {exc}") from None
    finally:
        loader.dispose()


def line_for(lines: dict[tuple, int], path: tuple) -> int:
    """The line of a key path, else of its nearest enclosing key that is in the file."""
    for cut in range(len(path), -1, -1):
        if path[:cut] in lines:
            return lines[path[:cut]]
    return 1


class _Loader(yaml.SafeLoader):
    """SafeLoader that refuses an alias to the value containing it, and aliases expanding
    beyond MAX_EXPANDED_VALUES, as they are composed: before anything is expanded."""

    def __init__(self, text: str):
        super().__init__(text)
        self._complete: set[int] = set()
        self._sizes: dict[int, int] = {}
        self._expanded = 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            target = self.anchors.get(event.anchor)
            if target is not None:
                line = event.start_mark.line + 1
                if id(target) not in self._complete:
                    raise YamlError(line, f"alias '*{event.anchor}' refers to the value that "
                                    "contains it")
                self._expanded += _size(target, self._sizes)
                if self._expanded > MAX_EXPANDED_VALUES:
                    raise YamlError(line, f"aliases expand to more than {MAX_EXPANDED_VALUES} "
                                    f"values (at '*{event.anchor}'); write the values out")
            return super().compose_node(parent, index)
        node = super().compose_node(parent, index)
        self._complete.add(id(node))
        return node


# Booleans as YAML 1.2 has them: true and false. YAML 1.1 (PyYAML's default) also reads yes,
# no, on and off as booleans, so `strict: yes` or a value `no` would change meaning without a
# word; here they stay words, and a setting that wants a boolean refuses them.
_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
_Loader.add_implicit_resolver("tag:yaml.org,2002:bool",
                              re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))


def _size(node: yaml.Node, memo: dict[int, int]) -> int:
    """How many values a node stands for once every alias in it is expanded."""
    if id(node) not in memo:
        if isinstance(node, yaml.MappingNode):
            children = [n for pair in node.value for n in pair]
        elif isinstance(node, yaml.SequenceNode):
            children = node.value
        else:
            children = []
        memo[id(node)] = 1 + sum(_size(c, memo) for c in children)
    return memo[id(node)]


def _line_index(node: yaml.Node | None, rename: Callable[[str], str],
                verbatim: set[str]) -> dict[tuple, int]:
    out: dict[tuple, int] = {}

    def walk(n: yaml.Node, path: tuple, raw: bool) -> None:
        out[path] = n.start_mark.line + 1
        if isinstance(n, yaml.MappingNode):
            seen: dict[tuple, int] = {}
            for k, v in n.value:
                line = k.start_mark.line + 1
                if not isinstance(k, yaml.ScalarNode):  # a list or map as a key
                    walk(v, path + (None,), False)
                    continue
                key = k.value if raw else rename(k.value)
                if (k.tag, key) in seen:
                    dotted = ".".join(str(p) for p in path + (key,))
                    raise YamlError(line, f"duplicate key '{dotted}' (first on line "
                                    f"{seen[k.tag, key]}); YAML would keep only the last")
                seen[k.tag, key] = line
                walk(v, path + (key,), key in verbatim and not raw)
                out[path + (key,)] = line
        elif isinstance(n, yaml.SequenceNode):
            for i, item in enumerate(n.value):
                walk(item, path + (i,), False)

    if node is not None:
        walk(node, (), False)
    return out
