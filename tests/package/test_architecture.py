"""The layout of the package (docs/architecture.md): no import cycle among fuzzgpu's modules, every
module small enough to read, and the one table of instruction semantics the model, the SASS checker
and the properties read."""

from __future__ import annotations

import ast
from pathlib import Path


PACKAGE = Path(__file__).resolve().parents[2] / "fuzzgpu"
MAX_LINES = 800


def _modules(root: Path = PACKAGE) -> dict[str, Path]:
    out = {}
    for f in sorted(root.rglob("*.py")):
        parts = list(f.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = f
    return out


def _imported(module: str, path: Path, node: ast.Import | ast.ImportFrom, known: set[str]) -> set[str]:
    """The modules of the package an import statement names (``from . import x`` names ``pkg.x``
    when that is a module, else ``pkg``)."""
    if isinstance(node, ast.Import):
        return {a.name for a in node.names if a.name in known}
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    if node.level:
        base = package.split(".")[: len(package.split(".")) - node.level + 1]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    out = set()
    for a in node.names:
        if f"{target}.{a.name}" in known:
            out.add(f"{target}.{a.name}")
        elif target in known:
            out.add(target)
    return out


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the package's modules it imports, at module level or inside a function."""
    mods = _modules(root)
    known = set(mods)
    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                deps |= _imported(name, path, node, known)
        graph[name] = deps - {name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle ``[a, b, ..., a]``, or None."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(v: str) -> list[str] | None:
        state[v] = 1
        path.append(v)
        for w in sorted(graph[v]):
            if state.get(w) == 1:
                return path[path.index(w):] + [w]
            if w not in state:
                found = visit(w)
                if found:
                    return found
        path.pop()
        state[v] = 2
        return None

    for v in sorted(graph):
        if v not in state:
            found = visit(v)
            if found:
                return found
    return None


def test_the_cycle_finder_finds_cycles():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_the_graph_sees_function_level_and_relative_imports(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from .sub import b\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("from .. import a\nimport pkg.sub\n")
    g = import_graph(pkg)
    assert g["pkg.a"] == {"pkg.sub.b"}
    assert g["pkg.sub.b"] == {"pkg.a", "pkg.sub"}
    assert find_cycle(g) == ["pkg.a", "pkg.sub.b", "pkg.a"]


def test_no_import_cycle_in_fuzzgpu():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or ())


def test_semantics_is_below_model_sass_and_properties():
    """The table imports only the IR; the three readers import the table."""
    g = import_graph()
    assert g["fuzzgpu.semantics"] <= {"fuzzgpu.ir"} | {m for m in g if m.startswith("fuzzgpu.ir.")}
    for reader in ("fuzzgpu.sass", "fuzzgpu.model.race", "fuzzgpu.model.events", "fuzzgpu.model.ptx"):
        assert "fuzzgpu.semantics" in g[reader], reader
    assert "fuzzgpu.sass" in g["fuzzgpu.properties"]  # properties read the table through the SASS classification


def test_no_module_over_800_lines():
    long = {name: n for name, path in _modules().items() if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def test_the_models_extensions_are_named_relations_of_the_model():
    """grid order (PDL and stream order), the async-proxy release and the .nc free reads are
    relations the model defines (model/ptx.py), not data the event builder hands it."""
    import dataclasses
    from functools import cached_property

    from fuzzgpu import litmus
    from fuzzgpu.model import events, executions, ptx

    fields = {f.name for f in dataclasses.fields(events.Candidate)}
    assert not fields & {"grid_order", "api_sync", "free_reads"}
    for name in ("api_sync", "launch_fence", "grid_order", "nc_free_reads"):
        assert isinstance(vars(ptx.Static)[name], cached_property), name
    assert isinstance(vars(ptx.Execution)["async_release"], cached_property)
    p = litmus.parse_file(Path(__file__).parents[1] / "litmus" / "gpu-pdl" / "PDL-hoist-nc.litmus")
    pt = events.program_traces(p)
    x = next(x for _, x in executions._executions(p, pt))
    primary = {e.eid for e in x.ev if e.tid >= 0 and p.grid_of(e.tid) == min(p.grid_of(t) for t in range(len(p.threads)))}
    assert x.grid == x.static.grid_order and any(a in primary for a, _ in x.grid.pairs())
    assert x.static.nc_free_reads == ptx.nc_free_reads(p, x.ev) != 0


#: docs/architecture.md, "Import layering": a module imports only from its own layer or below
LAYERS: tuple[tuple[str, ...], ...] = (
    ("fuzzgpu", "fuzzgpu.errors", "fuzzgpu.files", "fuzzgpu.ir", "fuzzgpu.schema", "fuzzgpu.deadline", "fuzzgpu.progress",
     "fuzzgpu.recent"),
    ("fuzzgpu.semantics", "fuzzgpu.bug_classes", "fuzzgpu.hashing", "fuzzgpu.litmus"),
    ("fuzzgpu.model",),
    ("fuzzgpu.codegen", "fuzzgpu.sass", "fuzzgpu.backends.base", "fuzzgpu.backends.gpus"),
    ("fuzzgpu.evidence", "fuzzgpu.properties", "fuzzgpu.fixes", "fuzzgpu.fix_pairs", "fuzzgpu.necessity", "fuzzgpu.stress"),
    ("fuzzgpu.backends",),
    ("fuzzgpu.profiles", "fuzzgpu.strategies", "fuzzgpu.corpus"),
    ("fuzzgpu.workers", "fuzzgpu.campaign"),
    ("fuzzgpu.commands", "fuzzgpu.cli", "fuzzgpu.pytest_plugin", "fuzzgpu.__main__"),
)


def _layer(module: str) -> int:
    """The layer of a module: the one naming it, else its longest listed parent package."""
    best, where = -1, -1
    for i, names in enumerate(LAYERS):
        for n in names:
            if (module == n or module.startswith(n + ".")) and len(n) > best:
                best, where = len(n), i
    return where


def test_imports_follow_the_layers():
    g = import_graph()
    assert all(_layer(m) >= 0 for m in g), [m for m in g if _layer(m) < 0]
    upward = [f"{m} -> {d}" for m, deps in g.items() for d in deps if _layer(d) > _layer(m)]
    assert not upward, f"imports against the layering of docs/architecture.md: {upward}"
