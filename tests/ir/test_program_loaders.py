"""Every program loader goes through one door, :func:`fuzzgpu.semantics.checked` (``ir.validate``,
then every instruction known to the semantics table; docs/architecture.md, "Program loaders").

The IR sits below the table, so ``ir.validate`` and ``ir.program_from_json`` cannot know which
fences exist: a loader that stopped at them would let ``fence.relaxed`` through.  Three checks keep
the door the only way in: each loader hands its program to ``semantics.checked`` (a spy sees it),
each refuses a fence the table does not know in the table's own words, and no function of the
package that builds, reads or validates a Program skips ``semantics.checked`` (so a new loader
that forgets it fails here, by name)."""

from __future__ import annotations

import ast
import dataclasses
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fuzzgpu import codegen, corpus, ir, litmus, properties, semantics
from fuzzgpu.backends.base import RunConfig
from fuzzgpu.backends.sim import SimBackend
from fuzzgpu.errors import UserError
from fuzzgpu.ir import Fence, Program, Scope, Sem

PACKAGE = Path(__file__).resolve().parents[2] / "fuzzgpu"

MP = """PTX MP-fence
{ x=0; y=0; }
 P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;
 st.relaxed.gpu x, 1 | ld.acquire.gpu r0, y ;
 fence.sc.gpu | ld.relaxed.gpu r1, x ;
 st.release.gpu y, 1 | ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""


def _with_fence(p: Program, sem: Sem) -> Program:
    """``p`` with P0's fence made ``fence.<sem>.gpu`` (built in Python: the IR's checks pass)."""
    t0 = p.threads[0]
    code = tuple(Fence(sem, Scope.GPU) if isinstance(i, Fence) else i for i in t0.code)
    return ir.validate(dataclasses.replace(p, threads=(dataclasses.replace(t0, code=code),) + p.threads[1:]))


@pytest.fixture(scope="module")
def good() -> Program:
    return litmus.parse(MP)


@pytest.fixture(scope="module")
def entry(good: Program) -> dict[str, Any]:
    b, cfg = SimBackend(), RunConfig(instances=100)
    h = b.run(good, cfg)
    return corpus.make_entry(good, properties.check("model", good, h), h, b, cfg)


def _corpus_entry(entry: dict[str, Any], p: Program) -> Callable[[Path], object]:
    return lambda tmp: corpus.validate_entry(dict(entry, program=ir.program_to_json(p)), "e.json")


def _corpus_file(entry: dict[str, Any], p: Program) -> Callable[[Path], object]:
    def load(tmp: Path) -> object:
        import json

        f = tmp / "e.json"
        f.write_text(json.dumps(dict(entry, program=ir.program_to_json(p))))
        return corpus.load_entry(f)
    return load


def _litmus_file(p: Program) -> Callable[[Path], object]:
    def load(tmp: Path) -> object:
        f = tmp / "t.litmus"
        f.write_text(litmus.format_program(p))
        return litmus.parse_file(f)
    return load


#: each loader, from its own input form: litmus text, a corpus entry (JSON), the Python API of
#: code generation (every entry that turns a Program into CUDA source)
LOADERS: dict[str, Callable[[dict[str, Any], Program], Callable[[Path], object]]] = {
    "litmus.parse": lambda e, p: lambda tmp: litmus.parse(litmus.format_program(p), "t.litmus"),
    "litmus.parse_file": lambda e, p: _litmus_file(p),
    "corpus.validate_entry": _corpus_entry,
    "corpus.load_entry": _corpus_file,
    "codegen.generate_static": lambda e, p: lambda tmp: codegen.generate_static(p),
    "codegen.generate_harness": lambda e, p: lambda tmp: codegen.generate_harness(p),
    "codegen.generate_module": lambda e, p: lambda tmp: codegen.generate_module([p]),
    "codegen.harness_source": lambda e, p: lambda tmp: codegen.harness_source(p),
}


def test_the_list_names_every_source_entry_of_codegen():
    """A new ``generate_*`` / ``*_source`` entry of code generation joins :data:`LOADERS`."""
    entries = {f"codegen.{n}" for n in codegen.__all__
               if inspect.isfunction(getattr(codegen, n)) and (n.startswith("generate_") or n.endswith("_source"))}
    assert entries == {k for k in LOADERS if k.startswith("codegen.")}


@pytest.mark.parametrize("loader", sorted(LOADERS))
def test_every_loader_goes_through_semantics_checked(loader, good, entry, tmp_path, monkeypatch):
    seen: list[str] = []
    real = semantics.checked

    def spy(p: Program) -> Program:
        seen.append(p.name)
        return real(p)

    monkeypatch.setattr(semantics, "checked", spy)
    LOADERS[loader](entry, good)(tmp_path)
    assert good.name in seen, f"{loader} did not hand its program to semantics.checked"


@pytest.mark.parametrize("loader", sorted(LOADERS))
def test_every_loader_refuses_an_unknown_fence_in_the_tables_words(loader, good, entry, tmp_path):
    bad = _with_fence(good, Sem.RELAXED)
    words = semantics.unknown_fence(Sem.RELAXED)
    assert words is not None and words.startswith("fence.relaxed is not a PTX fence (use ")
    with pytest.raises((UserError, ir.ProgramError)) as e:  # SourceError, CorpusError (bad input), ProgramError
        LOADERS[loader](entry, bad)(tmp_path)
    msg = str(e.value)
    assert words in msg and "\n" not in msg.strip(), (loader, msg)


# -- no function of the package builds, reads or validates a Program past the door ----------------

#: the IR constructs a program (``Program``), reads one (``program_from_json``) or checks its own
#: part (``validate``); above the IR each of these calls sits in a function that calls
#: ``semantics.checked``
MAKERS = frozenset({"Program", "program_from_json", "validate"})
#: below or at the door: the IR itself and the table
DOOR = ("fuzzgpu.ir", "fuzzgpu.semantics")
#: generators, not loaders: they build programs from their own instructions (no input names an
#: instruction) and every program they make is read by code generation or the model, which go
#: through the table (codegen: semantics.checked; the model's event builder: semantics.unknown_fence)
GENERATORS = ("fuzzgpu.strategies", "fuzzgpu.fixes")


def _module(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _called(node: ast.AST) -> tuple[set[str], bool]:
    """The MAKERS a function (or module body) calls, and whether it calls ``semantics.checked``."""
    made: set[str] = set()
    door = False
    for n in ast.walk(node):
        if not isinstance(n, ast.Call):
            continue
        f = n.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        if name in MAKERS:
            made.add(name)
        if isinstance(f, ast.Attribute) and f.attr == "checked" and isinstance(f.value, ast.Name) and f.value.id == "semantics":
            door = True
    return made, door


def bypasses(root: Path = PACKAGE) -> list[str]:
    """``module:line function (makers)`` for every function outside the door and the generators
    that builds, reads or validates a Program without calling ``semantics.checked``."""
    out = []
    for path in sorted(root.rglob("*.py")):
        mod = _module(path, root)
        if any(mod == m or mod.startswith(m + ".") for m in DOOR + GENERATORS):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        top = ast.Module(body=[s for s in tree.body if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))],
                         type_ignores=[])
        scopes: list[tuple[str, int, ast.AST]] = [("<module>", 1, top)]
        scopes += [(n.name, n.lineno, n) for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        for name, line, node in scopes:
            made, door = _called(node)
            if made and not door:
                out.append(f"{mod}:{line} {name} ({', '.join(sorted(made))})")
    return out


def test_the_bypass_finder_finds_a_loader_without_the_door(tmp_path):
    pkg = tmp_path / "fuzzgpu"
    (pkg / "ir").mkdir(parents=True)
    (pkg / "ir" / "__init__.py").write_text("def program_from_json(d):\n    return validate(Program(d))\n")
    (pkg / "good.py").write_text("from . import semantics\nfrom .ir import program_from_json\n\n"
                                 "def load(d):\n    return semantics.checked(program_from_json(d))\n")
    (pkg / "bad.py").write_text("from .ir import program_from_json, validate\n\n"
                                "def load(d):\n    return program_from_json(d)\n\n"
                                "def build(p):\n    return validate(p)\n")
    assert bypasses(pkg) == ["fuzzgpu.bad:3 load (program_from_json)", "fuzzgpu.bad:6 build (validate)"]


def test_no_loader_bypasses_semantics_checked():
    found = bypasses()
    assert not found, ("a Program built, read or validated without semantics.checked "
                       f"(docs/architecture.md, 'Program loaders'): {found}")
