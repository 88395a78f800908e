"""fuzzgpu.files.toml_key_lines: the line on which each key of a TOML file is defined, whatever its
form (bare or quoted, dotted, a table header, an inline table), so that every error about a key
names file:line.  Hand-written forms, then a property over documents written in random forms with
the line of each key known while writing."""

from __future__ import annotations

import json
import tomllib
from typing import Any

from hypothesis import given, settings, strategies as st

from fuzzgpu.files import toml_key_lines, toml_where

FORMS = [
    ("[stress]\nspin = 3\n", {("stress",): 1, ("stress", "spin"): 2}),
    ('"stress" = 3\n', {("stress",): 1}),
    ("a = 1\nstress = { a = 1, 'b c' = { d = 2 } }\n",
     {("a",): 1, ("stress",): 2, ("stress", "a"): 2, ("stress", "b c"): 2, ("stress", "b c", "d"): 2}),
    ("stress . spin = 3\n", {("stress",): 1, ("stress", "spin"): 1}),
    ('[ "stress" . \'x.y\' ]  # c = 1\nk = 1\n', {("stress",): 1, ("stress", "x.y"): 1, ("stress", "x.y", "k"): 2}),
    ('s = """\n[stress]\nspin = 1\n"""\n[stress]\nspin = 2\n', {("s",): 1, ("stress",): 5, ("stress", "spin"): 6}),
    ("s = '''\n[x]\n'''''\nt = 1\n", {("s",): 1, ("t",): 4}),
    ('s = "a\\"b = [c"\nt = 1\n', {("s",): 1, ("t",): 2}),
    ("a = [ { b = 1 }, # c\n  [2, 3],\n]\nd = 1979-05-27 07:32:00Z # x\n", {("a",): 1, ("d",): 4}),
    ("[[run]]\nk = 1\n[[run]]\nk = 2\nj = 3\n", {("run",): 1, ("run", "k"): 2, ("run", "j"): 5}),
    ('[t]\n"\\u0041" = 1\r\nb = 2\r\n', {("t",): 1, ("t", "A"): 2, ("t", "b"): 3}),
]


def test_forms() -> None:
    for text, want in FORMS:
        tomllib.loads(text)  # each is TOML
        assert toml_key_lines(text) == want, text


def test_where() -> None:
    lines = toml_key_lines("x = 1\n[stress]\nspin = 3\n")
    assert toml_where("f.toml", lines, "stress", "spin") == "f.toml:3"
    assert toml_where("f.toml", lines, "stress", "stride") == "f.toml"  # not written: no line


def test_text_tomllib_refuses_gives_the_keys_before_the_fault() -> None:
    assert toml_key_lines("a = 1\nb = \nc = 2\n") == {("a",): 1, ("b",): 2}
    assert toml_key_lines('a = "open\n') == {("a",): 1}


# -- the property: documents in random forms ------------------------------------------------

KEYS = st.one_of(st.sampled_from(["stress", "spin", "a.b", "x y", "q\"uote", "it's", "", "é", "[s]", "k=v", "#"]),
                 st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x7f"), max_size=6))
SCALARS = st.one_of(st.integers(-5, 5), st.sampled_from(['"[stress]"', '"a = 1"', '"""\n[t]\nk = 1\n"""', "'''\n'x' = 2\n'''",
                                                         "[1,\n 2]", "true", "1979-05-27 07:32:00Z", "[{ z = 1 }]"]))
TREES = st.recursive(SCALARS, lambda sub: st.dictionaries(KEYS, sub, min_size=1, max_size=3), max_leaves=8)


def _key(k: str, quote: str) -> str:
    if k and all(c.isascii() and (c.isalnum() or c in "_-") for c in k) and quote == "bare":
        return k
    if quote == "literal" and "'" not in k and all(c.isprintable() or c == "\t" for c in k):
        return f"'{k}'"
    return json.dumps(k, ensure_ascii=False)


class _Writer:
    """TOML text for a tree, each table in a form the data draws; the line of every key path."""

    def __init__(self, data: st.DataObject) -> None:
        self.data = data
        self.lines: list[str] = []
        self.want: dict[tuple[str, ...], int] = {}

    def _k(self, k: str) -> str:
        return _key(k, self.data.draw(st.sampled_from(["bare", "basic", "literal"])))

    def _inline(self, tree: Any, path: tuple[str, ...], line: int) -> str:
        """``tree`` as a value that starts on ``line`` (a multi-line string or array inside an
        inline table moves the keys after it to later lines)."""
        if not isinstance(tree, dict):
            return str(tree)
        text = "{ "
        for n, (k, v) in enumerate(tree.items()):
            text += ", " if n else ""
            self.want[path + (k,)] = line + text.count("\n")
            text += f"{self._k(k)} = "
            text += self._inline(v, path + (k,), line + text.count("\n"))
        return text + " }"

    def _emit(self, text: str) -> None:
        self.lines.extend(text.split("\n"))

    def pairs(self, tree: dict, path: tuple[str, ...], dotted: tuple[str, ...] = ()) -> list[tuple[str, Any]]:
        """Key/value lines of ``tree`` (under the table ``path``); sub-tables dotted or inline, or
        returned as (key, tree) for a header of their own."""
        headers = []
        for k, v in tree.items():
            full = path + dotted + (k,)
            form = self.data.draw(st.sampled_from(["dotted", "inline", "header"])) if isinstance(v, dict) else "scalar"
            if form == "header" and not dotted:
                headers.append((k, v))
                continue
            if form == "dotted":
                self.pairs(v, path, dotted + (k,))
                continue
            line = len(self.lines) + 1
            for n in range(1, len(full) + 1):
                self.want.setdefault(full[:n], line)
            keys = ".".join(self._k(x) for x in dotted + (k,))
            self._emit(f"{keys} = {self._inline(v, full, line)}")
        return headers

    def table(self, tree: dict, path: tuple[str, ...]) -> None:
        for k, v in self.pairs(tree, path):
            sub = path + (k if isinstance(k, tuple) else (k,))
            line = len(self.lines) + 1
            for n in range(1, len(sub) + 1):
                self.want.setdefault(sub[:n], line)
            self._emit("[" + ".".join(self._k(x) for x in sub) + "]")
            self.table(v, sub)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(KEYS, TREES, min_size=1, max_size=4), st.data())
def test_every_key_has_the_line_it_was_written_on(tree: dict, data: st.DataObject) -> None:
    w = _Writer(data)
    w.table(tree, ())
    text = "\n".join(w.lines) + "\n"
    assert tomllib.loads(text) == _plain(tree), text  # the writer wrote the tree
    got = toml_key_lines(text)
    assert {p: got.get(p) for p in w.want} == w.want, text


def _plain(tree: Any) -> Any:
    """A tree with its scalars as tomllib reads them (the writer writes scalars as TOML text)."""
    if isinstance(tree, dict):
        return {k: _plain(v) for k, v in tree.items()}
    return tree if not isinstance(tree, str) else tomllib.loads(f"v = {tree}")["v"]
