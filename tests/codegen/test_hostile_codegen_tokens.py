"""Every IR string field fuzzed into code generation (issue 13.1): a hostile string in any field --
through the JSON form (corpus entries), through ``.litmus`` text and through the Python API -- is
refused (ProgramError / SourceError), and wherever a string is accepted the generated CUDA source's
token stream is unchanged except for identifier tokens (renamed consistently): no name ever adds,
removes or changes a code token, a preprocessor directive or a string literal of the source."""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from fuzzgpu import codegen, ir, litmus
from fuzzgpu.errors import SourceError
from fuzzgpu.ir import ProgramError, program_from_json, program_to_json

LITMUS = Path(__file__).resolve().parents[1] / "litmus"

#: programs covering labels and branches, PDL grids, mbarriers, bulk copies, proxy fences with a
#: state space, cp.async, clusters, RMWs and register initial values
SAMPLES = [
    "termination/MP-spin-wrong-value.litmus",
    "core/MP-relacq-gpu.litmus",
    "core/Atomicity-add.litmus",
    "async-proxy/TMA-store-fence-global-space.litmus",
    "async-proxy/TMA-load-mbarrier-acquire.litmus",
    "cp-async/CPASYNC-wait-all.litmus",
    "gpu-pdl/PDL-hoist-nc.litmus",
    "cluster/MP-relacq-cluster-diff-cluster.litmus",
]

#: strings no grammar of a name accepts (or only the program name's, which reaches comments only)
HOSTILE = [
    "a: ; base[7] = 0x1337; __trap(); L_b",
    "a: ;\n#include </etc/passwd>\n//",
    '#error "from a corpus entry"',
    "r3\n", "x\n", "P0\n", "sm_90\n", "\n", "", " ", "\t", "x y", "x\\", "x\\\n", "??/", "*/", "/*", '"', "'",
    "x;", "x)", "x}", "%0", "\x00", "\x1b[31m", "\u202e", "é", "x" * 65, "r" + "9" * 7, "r", "r-1", "a.b", "a-b",
    "shared::cta\n", 'global;" ::: "memory"); __trap(); asm volatile("', 'gpu;" ::: "memory"); __trap(); asm("',
    "1", "-1", "$x", "@x", "L_a",
]

# -- a C++ tokenizer (after line splicing, as a compiler's translation phases 1-3) -----------

_TOKEN = re.compile(r"""
  (?P<ws>\s+)
| (?P<comment>//[^\n]*|/\*.*?\*/)
| (?P<string>"(?:\\.|[^"\\\n])*")
| (?P<char>'(?:\\.|[^'\\\n])*')
| (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
| (?P<number>\.?[0-9](?:[eEpP][+-]|[A-Za-z0-9_.])*)
| (?P<punct>::|->|\+\+|--|<<=|>>=|<<|>>|<=|>=|==|!=|&&|\|\||\+=|-=|\*=|/=|%=|&=|\|=|\^=|[-+*/%&|^!~=<>?:;,.()\[\]{}#])
""", re.S | re.X)


def tokens(source: str) -> list[tuple[str, str]]:
    """(kind, text) of every token of C++ source, comments and blanks dropped; a backslash-newline
    splices lines first (so a comment ending in ``\\`` swallows the next line, as in a compiler)."""
    text = source.replace("\\\n", "")
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        assert m, f"stray character {text[pos]!r} in generated source at {pos}: {text[max(0, pos - 40):pos + 40]!r}"
        pos = m.end()
        if m.lastgroup not in ("ws", "comment"):
            out.append((m.lastgroup, m.group()))
    return out


def same_but_names(a: list[tuple[str, str]], b: list[tuple[str, str]]) -> str | None:
    """None when ``b`` is ``a`` with identifiers renamed by a bijection; else what differs."""
    if len(a) != len(b):
        return f"{len(a)} tokens became {len(b)}"
    fwd: dict[str, str] = {}
    back: dict[str, str] = {}
    for i, ((ka, ta), (kb, tb)) in enumerate(zip(a, b)):
        if ka != kb:
            return f"token {i}: {ka} {ta!r} became {kb} {tb!r}"
        if ka == "ident":
            if fwd.setdefault(ta, tb) != tb or back.setdefault(tb, ta) != ta:
                return f"token {i}: identifier {ta!r} renamed inconsistently ({ta!r}->{tb!r})"
        elif ta != tb:
            return f"token {i}: {ka} {ta!r} became {tb!r}"
    return None


def generators(p: ir.Program) -> list[tuple[str, Callable[[ir.Program], str]]]:
    """The code generators that accept ``p``: the static kernels, the harness (and for GPU-runnable programs)."""
    gens: list[tuple[str, Callable[[ir.Program], str]]] = []
    for name, fn in (("static", lambda q: codegen.generate_static(q)), ("harness", lambda q: codegen.harness_source(q)[0])):
        try:
            fn(p)
        except codegen.Unrunnable:
            continue
        gens.append((name, fn))
    return gens


def _program(rel: str) -> ir.Program:
    return litmus.parse_file(LITMUS / rel)


PROGRAMS = {rel: _program(rel) for rel in SAMPLES}
BASE_TOKENS = {rel: {g: tokens(fn(p)) for g, fn in generators(p)} for rel, p in PROGRAMS.items()}


def test_samples_generate_code():
    assert all(BASE_TOKENS[rel] for rel in SAMPLES), {rel: list(t) for rel, t in BASE_TOKENS.items()}
    assert sum(len(t) for t in BASE_TOKENS.values()) >= 12


def test_the_tokenizer_sees_injections():
    """The check can fail: a newline or a backslash in a comment, a directive, a statement all
    change the token stream."""
    base = tokens("int a; // c\nint b;\n")
    for bad in ("int a; // c\nx = 1;\nint b;\n", "int a; // c\\\nint b;\n", "int a; // c\n#include <x>\nint b;\n"):
        assert same_but_names(base, tokens(bad)) is not None
    assert same_but_names(base, tokens("int q; // anything \"here\n int b;")) is None


# -- the JSON form: every string value (and every string key) of program_to_json ------------


def _string_slots(d: Any, path: tuple = ()) -> Iterator[tuple[tuple, str]]:
    """(path, kind) of every string in a JSON tree: kind 'value' or 'key'."""
    if isinstance(d, dict):
        for k, v in d.items():
            if path == () and k in ("schema",):
                continue
            yield (*path, k), "key"
            yield from _string_slots(v, (*path, k))
    elif isinstance(d, list):
        for i, v in enumerate(d):
            yield from _string_slots(v, (*path, i))
    elif isinstance(d, str):
        yield path, "value"


def _set(d: Any, path: tuple, kind: str, new: str) -> Any:
    d = copy.deepcopy(d)
    parent = d
    for p in path[:-1]:
        parent = parent[p]
    last = path[-1]
    if kind == "value":
        parent[last] = new
    else:
        parent[new] = parent.pop(last)
    return d


def _json_cases() -> list[tuple[str, tuple, str]]:
    cases = []
    for rel in SAMPLES:
        for path, kind in _string_slots(program_to_json(PROGRAMS[rel])):
            cases.append((rel, path, kind))
    return cases


JSON_CASES = _json_cases()


@pytest.mark.parametrize("rel,path,kind", JSON_CASES, ids=[f"{r.split('/')[-1]}:{'.'.join(map(str, p))}:{k}" for r, p, k in JSON_CASES])
def test_every_json_string_field_fails_closed(rel, path, kind):
    p = PROGRAMS[rel]
    d = program_to_json(p)
    accepted = 0
    for bad in HOSTILE:
        if kind == "key" and bad in _parent(d, path):
            continue
        mutant = _set(d, path, kind, bad)
        try:
            q = program_from_json(mutant)
        except ProgramError as e:
            assert "\n" not in str(e)
            continue
        accepted += 1
        for g, fn in generators(q):
            if g in BASE_TOKENS[rel]:
                diff = same_but_names(BASE_TOKENS[rel][g], tokens(fn(q)))
                assert diff is None, (bad, path, g, diff)


def _parent(d: Any, path: tuple) -> Any:
    for p in path[:-1]:
        d = d[p]
    return d


def test_json_cases_are_many():
    assert len(JSON_CASES) * len(HOSTILE) >= 5000


# -- consistent renames of valid names: the token stream changes in identifiers only ---------

VALID_NAMES = ["q", "Q_1", "int", "goto", "asm", "base", "fz_zero", "_", "x" * 64, "L_x", "__trap", "main", "raw_", "ld0_"]


def _names(p: ir.Program) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {"thread": {t.name for t in p.threads}, "location": {loc.name for loc in p.locations},
                                "label": {i.name for t in p.threads for i in t.code if isinstance(i, ir.Label)}}
    return out


def _rename(d: Any, old: str, new: str) -> Any:
    """Every string value equal to ``old`` (and ``old:rN`` observed keys) becomes ``new`` (keys are
    field names, or registers: not renamed here)."""
    if isinstance(d, dict):
        return {k: _rename(v, old, new) for k, v in d.items()}
    if isinstance(d, list):
        return [_rename(v, old, new) for v in d]
    if isinstance(d, str):
        if d == old:
            return new
        if d.startswith(old + ":"):
            return new + d[len(old):]
    return d


def _shift_register(s: str) -> str:
    m = re.fullmatch(r"(.*:)?r([0-9]+)", s)
    return f"{m.group(1) or ''}r{100000 + int(m.group(2))}" if m else s


def _map_strings(d: Any, f: Callable[[str], str]) -> Any:
    if isinstance(d, dict):
        return {f(k): _map_strings(v, f) for k, v in d.items()}
    if isinstance(d, list):
        return [_map_strings(v, f) for v in d]
    return f(d) if isinstance(d, str) else d


_NAME_KEYS = frozenset({"name", "loc", "bar", "dst_loc", "src_loc", "target", "alias_of", "thread", "reg", "dst", "src", "a", "b",
                        "value", "operands", "id", "count", "observed"})


def _keyword_values(d: Any, key: str = "") -> set[str]:
    """String values of the JSON tree under keys that hold no name (op tags, kinds, modes...)."""
    if isinstance(d, dict):
        return set().union(*(_keyword_values(v, k) for k, v in d.items())) if d else set()
    if isinstance(d, list):
        return set().union(*(_keyword_values(v, key) for v in d)) if d else set()
    return {d} if isinstance(d, str) and key not in _NAME_KEYS else set()


KEYWORDS = {m.value for e in (ir.Sem, ir.Scope, ir.Proxy, ir.Space, ir.RmwOp, ir.ArithOp, ir.Cond, ir.ProxyFenceKind) for m in e}


@pytest.mark.parametrize("rel", SAMPLES)
def test_consistent_renames_change_identifiers_only(rel):
    p = PROGRAMS[rel]
    d = program_to_json(p)
    checked = 0
    for kind, names in _names(p).items():
        for old in sorted(names):
            if old in _keyword_values(d):
                continue
            for new in VALID_NAMES:
                if any(new in ns for ns in _names(p).values()):
                    continue
                q = program_from_json(_rename(d, old, new))
                for g, fn in generators(q):
                    diff = same_but_names(BASE_TOKENS[rel][g], tokens(fn(q)))
                    assert diff is None, (kind, old, new, g, diff)
                    checked += 1
    # registers: all of them at once, order kept (r0 -> r100000, r1 -> r100001...)
    q = program_from_json(_map_strings(d, _shift_register))
    for g, fn in generators(q):
        diff = same_but_names(BASE_TOKENS[rel][g], tokens(fn(q)))
        assert diff is None, ("registers", g, diff)
        checked += 1
    assert checked >= 1


# -- the Python API: a hostile string in any field of the dataclasses ------------------------


def _dataclass_slots(p: ir.Program) -> Iterator[tuple[str, Callable[[Any], ir.Program]]]:
    """(where, build): ``build(v)`` is ``p`` with one field (of the program, a thread, a location,
    an instruction, the condition's terms) replaced by ``v``."""
    for f in dataclasses.fields(p):
        if f.name not in ("threads", "locations", "condition"):
            yield f"program.{f.name}", lambda v, f=f: dataclasses.replace(p, **{f.name: v if f.name in ("name", "arch") else (v,)})
    for i, loc in enumerate(p.locations):
        for f in dataclasses.fields(loc):
            def build(v, i=i, f=f):
                locs = list(p.locations)
                locs[i] = dataclasses.replace(locs[i], **{f.name: v})
                return dataclasses.replace(p, locations=tuple(locs))
            yield f"locations[{i}].{f.name}", build
    for ti, t in enumerate(p.threads):
        yield f"threads[{ti}].name", lambda v, ti=ti: _with_thread(p, ti, lambda t: dataclasses.replace(t, name=v))
        yield f"threads[{ti}].init", lambda v, ti=ti: _with_thread(p, ti, lambda t: dataclasses.replace(t, init=((v, 0),)))
        for n, ins in enumerate(t.code):
            for f in dataclasses.fields(ins):
                def build(v, ti=ti, n=n, f=f):
                    def change(t):
                        code = list(t.code)
                        code[n] = dataclasses.replace(code[n], **{f.name: v})
                        return dataclasses.replace(t, code=tuple(code))
                    return _with_thread(p, ti, change)
                yield f"threads[{ti}].code[{n}].{type(ins).__name__}.{f.name}", build


def _with_thread(p: ir.Program, ti: int, change: Callable[[ir.Thread], ir.Thread]) -> ir.Program:
    threads = list(p.threads)
    threads[ti] = change(threads[ti])
    return dataclasses.replace(p, threads=tuple(threads))


@pytest.mark.parametrize("rel", SAMPLES)
def test_python_api_fails_closed(rel):
    """A Program built in Python with a hostile string in any field never reaches generated source:
    the code generators validate what they are given."""
    p = PROGRAMS[rel]
    n = 0
    for where, build in _dataclass_slots(p):
        for bad in HOSTILE:
            if ir.is_name("label", bad):  # a valid identifier: any name field may take it
                continue
            try:
                q = build(bad)
            except (TypeError, ValueError):
                continue
            try:
                ir.validate(q)
            except ProgramError:
                pass
            else:  # only free text is accepted, and it reaches no code token
                assert where in ("program.name", "program.comments"), (where, bad)
                continue
            for g, fn in (("static", codegen.generate_static), ("harness", lambda q: codegen.harness_source(q)[0])):
                with pytest.raises(ProgramError):
                    fn(q)
                n += 1
    assert n >= 100


# -- the examples, through .litmus, corpus JSON and the Python API -------------------

LABEL_ATTACKS = ["a: ; base[7] = 0x1337; __trap(); L_b", "a: ;\n#include </etc/passwd>\n//", "a\n#error boom\n"]


@pytest.mark.parametrize("name", LABEL_ATTACKS)
def test_label_injection_through_litmus(name, tmp_path):
    cell = json.dumps({"op": "label", "name": name})
    text = f"PTX t\n{{ x=0; }}\n P0 ;\n {cell} ;\n st.weak x, 1 ;\nexists (x == 1)\n"
    f = tmp_path / "t.litmus"
    f.write_text(text)
    with pytest.raises(SourceError) as e:
        litmus.parse_file(f)
    assert str(e.value).startswith(f"{f}:4:") and "bad label name" in str(e.value) and "\n" not in str(e.value)
    from fuzzgpu.cli import main

    assert main(["check", str(f)]) == 2


@pytest.mark.parametrize("name", LABEL_ATTACKS)
def test_label_injection_through_python_api(name):
    p = PROGRAMS["termination/MP-spin-wrong-value.litmus"]
    t1 = p.threads[1]
    code = tuple(ir.Label(name) if isinstance(i, ir.Label) else dataclasses.replace(i, target=name) if isinstance(i, ir.Branch) else i
                 for i in t1.code)
    q = dataclasses.replace(p, threads=(p.threads[0], dataclasses.replace(t1, code=code)))
    for fn in (codegen.generate_static, codegen.harness_source, ir.validate):
        with pytest.raises(ProgramError, match="bad label name"):
            fn(q)


@pytest.mark.parametrize("field,value", [
    ("reg", "r3\n"), ("thread", "P0\n"), ("loc", "x\n"), ("name", "MP\n"), ("arch", "PTX\n"),
    ("scope", 'gpu;" ::: "memory"); __trap(); asm("'), ("space", 'global;" ::: "memory"); __trap(); asm("'),
])
def test_trailing_newlines_and_lookalike_strings_are_refused(field, value):
    p = PROGRAMS["core/MP-relacq-gpu.litmus"]
    t0, t1 = p.threads
    if field == "reg":
        code = tuple(dataclasses.replace(i, dst=value) if isinstance(i, ir.Load) else i for i in t1.code)
        q = dataclasses.replace(p, threads=(t0, dataclasses.replace(t1, code=code)))
    elif field == "thread":
        q = dataclasses.replace(p, threads=(dataclasses.replace(t0, name=value), t1))
    elif field == "loc":
        q = dataclasses.replace(p, locations=(dataclasses.replace(p.locations[0], name=value), *p.locations[1:]))
    elif field in ("name", "arch"):
        q = dataclasses.replace(p, **{field: value})
    elif field == "scope":
        q = dataclasses.replace(p, threads=(dataclasses.replace(t0, code=(*t0.code, ir.Fence(ir.Sem.SC, value))), t1))  # type: ignore[arg-type]
    else:
        q = dataclasses.replace(p, threads=(dataclasses.replace(t0, code=(*t0.code, ir.ProxyFence(ir.ProxyFenceKind.ASYNC, value))), t1))
    with pytest.raises(ProgramError):
        ir.validate(q)
    with pytest.raises(ProgramError):
        codegen.generate_static(q)


def test_arch_with_a_newline_is_refused():
    from fuzzgpu import sass
    from fuzzgpu.errors import UserError

    for bad in ("sm_90\n", "sm_90 ", "xsm_90", "sm_90\x00"):
        with pytest.raises(UserError):
            sass.parse_arch(bad)
    assert sass.parse_arch("sm_90") == (90, "")


def test_comment_text_keeps_comments_inert():
    for text in ("x\\", "a\nb", "??/", "x\r", "\u2028", "é", "*/ int a; /*"):
        line = "// " + codegen.comment_text(text)
        assert tokens(line + "\nint a;") == [("ident", "int"), ("ident", "a"), ("punct", ";")], text
