"""The SASS check of the harness that ran (DESIGN.md: "the harness checks its own SASS before it
trusts a run").

A campaign checks each program's SASS in its *static kernels* (one small kernel per litmus thread,
:func:`fuzzgpu.backends.static.check_batch`): cheap, and what a user's kernel of the program would
be.  The GPU runs the program's *harness* (:func:`fuzzgpu.codegen.generate_module`), another
compile: every role in one kernel with the stress and the classification around it, in a batch of
programs -- and ptxas may treat the program's operations there otherwise (even a program's kernel
compiled in a batch and alone differ in the SASS now and then: 1 of 95 in ``bench/results/sass/ran-sass.md``).
So when a run shows an outcome the oracle forbids -- a verdict that accuses the hardware or the
compiler -- the backend checks the SASS of *the cubin that ran*, with the PTX that cubin was
assembled from (:func:`fuzzgpu.backends.cuda.compile_module` keeps it), and attributes each finding
by the source lines of each role's code (:func:`fuzzgpu.codegen.role_regions`):

* ``program``: a move within one role's code -- an operation and a synchronisation point of one
  litmus thread (or a litmus barrier every role meets): the program's own order, changed by ptxas;
* ``cross_role``: between two roles' code (each hardware thread plays every role, for different
  instances): no program order relates them;
* ``harness``: the harness's own operations or synchronisation (its counters, the stress, the
  classification): nothing of the program;
* ``unplaced``: a SASS operation the check paired with no PTX one (an unguarded wait is the wait's).

To the program's findings it adds one the SASS checker cannot make, since it reads addresses: two
accesses of one location by one role issued out of the program order the model keeps
(:func:`location_order`; the harness may reach one location through two address expressions, issue
27).  Only the program's findings say anything about the outcome: with none, and the kernels fully
checked, ptxas kept the program's order in the code that ran, and the outcome is the hardware's (or
the model's)."""

from __future__ import annotations

import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from .. import codegen, sass, semantics
from ..codegen import ptx_of
from ..ir import Atom, Branch, Goto, Label, Load, Program, Red, Store

#: a finding's attribution (:func:`attribute`)
PROGRAM, CROSS_ROLE, HARNESS, UNPLACED = "program", "cross-role", "harness", "unplaced"
#: the check of two accesses of one location issued out of program order (:func:`location_order`)
REORDERED = "reordered"
#: the file name a harness module is compiled from (:func:`fuzzgpu.backends.cuda.compile_module`):
#: the file of its PTX's line information
MODULE_FILE = "k.cu"


@dataclass(frozen=True)
class RanSass:
    """What the SASS check of the cubin that ran found in one program's kernels."""

    kernels: tuple[str, ...]
    arch: str
    #: the findings on the program's own order, each a :class:`fuzzgpu.sass.Finding` dict with its
    #: ``role`` (the litmus thread's index)
    program: tuple[dict[str, Any], ...]
    cross_role: int
    harness: int
    #: findings on a SASS operation the check could not pair with a PTX one, so not attributed
    unplaced: int
    #: what the check of the program's kernels could not account for (empty: fully checked)
    unchecked: tuple[str, ...]

    def to_meta(self) -> dict[str, Any]:
        return {"kernels": list(self.kernels), "arch": self.arch, "program": [dict(f) for f in self.program],
                "cross_role": self.cross_role, "harness": self.harness, "unplaced": self.unplaced, "unchecked": list(self.unchecked),
                "summary": self.summary()}

    def summary(self) -> str:
        """One sentence a person reads beside the forbidden outcome."""
        where = f"the SASS that ran ({', '.join(self.kernels)}, {self.arch}, checked against the PTX it was assembled from)"
        other = [f"{n} {what}" for n, what in ((self.cross_role, "between two roles' code"),
                                                (self.harness, "on the harness's own code")) if n]
        if self.unplaced:
            other.append(f"{self.unplaced} on SASS operations paired with no PTX one (not attributed)")
        rest = f"; beside them {', '.join(other)}" if other else ""
        if self.program:
            shown = "; ".join(_one_line(f) for f in self.program[:3])
            more = f" and {len(self.program) - 3} more" if len(self.program) > 3 else ""
            return f"{where}: {len(self.program)} finding(s) on the program's operations -- {shown}{more}{rest}"
        if self.unchecked:
            return (f"{where}: no finding on the program's operations, but not fully checked "
                    f"({'; '.join(self.unchecked[:2])}){rest}")
        return f"{where}: ptxas kept the program's order (no finding on its operations, fully checked){rest}"


def _one_line(f: dict[str, Any]) -> str:
    """``crossing (forbidden, role 1): ld.global.u32 ... hoisted above fence.sc.gpu``."""
    what = " ".join(x for x in (f.get("op_ptx", "").strip().rstrip(";"), f.get("direction", ""),
                                f.get("sync_ptx", "").strip().rstrip(";")) if x)
    return f"{f.get('check')} ({f.get('verdict')}, role {f.get('role')}): {what}"


def _role_at(chain: Sequence[tuple[str, int]], module: str, roles: Sequence[tuple[int, int, int]]) -> int | None:
    """The role whose code holds the first location of ``chain`` (a PTX line's source locations,
    innermost first: an operation of an inlined helper is at its call) in the module's file."""
    for file, line in chain:
        if Path(file).name != module:
            continue
        for first, last, role in roles:
            if first <= line <= last:
                return role
    return None


def attribute(f: sass.Finding, src_at: Callable[[int], Sequence[tuple[str, int]]], module: str,
              roles: Sequence[tuple[int, int, int]]) -> tuple[str, int | None]:
    """(:data:`PROGRAM`, :data:`CROSS_ROLE`, :data:`HARNESS` or :data:`UNPLACED`, the role) of a finding
    in a harness kernel: by the roles whose code holds its operation and, for a move or a merge, the
    point or the other load (a litmus barrier, :data:`fuzzgpu.codegen.ALL_ROLES`, is in every role's
    order).  A finding on a SASS operation no PTX operation was paired with cannot be placed -- but
    an unguarded wait is the wait's (nothing after it waits for it)."""
    other = _role_at(src_at(f.sync_ptx_line), module, roles) if f.sync_ptx_line else None
    if not f.op_ptx_line:  # a SASS operation no PTX one was paired with (a counted finding)
        if f.check == sass.UNGUARDED_WAIT and other is not None and other != codegen.ALL_ROLES:
            return PROGRAM, other  # nothing after the role's wait waits for it, whoever's the access is
        return UNPLACED, None
    op = _role_at(src_at(f.op_ptx_line), module, roles)
    if op is None or op == codegen.ALL_ROLES:
        return HARNESS, None
    if not f.sync_ptx_line or f.check in (sass.DELETED, sass.LOOP_DELETED):
        return PROGRAM, op
    if other is None:
        return HARNESS, op
    return (PROGRAM if other in (op, codegen.ALL_ROLES) else CROSS_ROLE), op


def _kernel_of(function: str) -> str:
    """``fzh_3_X`` -> itself; ``fz_stress (in fzh_3_X)`` -> ``fzh_3_X``."""
    return function.rsplit(" (in ", 1)[-1].rstrip(")") if function.endswith(")") else function


def _kernels(compiled: Any) -> tuple[str, ...]:
    """The kernels of ``compiled``'s program in its module: one per grid (a PDL program has two)."""
    return tuple(compiled.spec.kernels or (compiled.spec.kernel,))


@dataclass(frozen=True)
class ModuleCheck:
    """The SASS check of one harness cubin (a batch's: every program of it is read from here)."""

    report: sass.Report
    src_at: Callable[[int], Sequence[tuple[str, int]]]
    #: the cubin's functions as the SASS parser reads them (each instruction's source line)
    functions: tuple[sass.SassFunction, ...] = ()


def check_module(cubin: bytes, ptx: bytes, name: str = "harness") -> ModuleCheck:
    """Disassemble ``cubin`` and check it against ``ptx`` (zlib, :func:`fuzzgpu.backends.cuda.compile_module`).
    Raises UserError / EnvError (nvdisasm missing) as the SASS checker does."""
    ptx_text = zlib.decompress(ptx).decode()
    with tempfile.TemporaryDirectory(prefix="fuzzgpu-ran-") as tmp:
        path = Path(tmp) / "ran.cubin"
        path.write_bytes(cubin)
        sass_text = sass.disassemble(path, ndf_first=True)  # the harness: fuzzgpu's generated code
    arch = sass.ptx_target(ptx_text) or sass.cubin_arch(sass_text)
    return ModuleCheck(sass.analysed(ptx_text, sass_text, arch, name), sass.ptx_source_lines(ptx_text),
                       sass.parse_sass(sass_text))


def _issued_first(fn: sass.SassFunction, ops: Sequence[tuple[int, int, int]]) -> dict[tuple[int, int], tuple[int, str]]:
    """Per (role, instruction) of the module's ``ops`` lines: the offset and text of the first SASS
    memory operation of ``fn`` the line information puts on one of its lines."""
    at = {line: (role, n) for line, role, n in ops}
    first: dict[tuple[int, int], tuple[int, str]] = {}
    for m in fn.mem_ops:
        for file, line in m.instr.src:
            key = at.get(line) if Path(file).name == MODULE_FILE else None
            if key is not None:
                if key not in first or m.instr.offset < first[key][0]:
                    first[key] = (m.instr.offset, m.instr.text)
                break
    return first


def _ptx(program: Program, ins: Any, loc: str) -> str:
    """``ld.relaxed.sys.global.u32 y``: the instruction's mnemonic and its location."""
    space = getattr(program.location(loc), "space", None)
    return f"{ptx_of(ins, space) if space is not None else ptx_of(ins)} {loc}"


def location_order(program: Program, module: ModuleCheck, compiled: Any) -> tuple[list[dict[str, Any]], list[str]]:
    """Two accesses of one location by one role that the model keeps in program order
    (:func:`fuzzgpu.semantics.keeps_location_order`) but the SASS issues the other way round -- what
    the SASS checker, which reads addresses, cannot see when the harness reaches one location
    through two address expressions (issue 27: ``y`` and ``y + 4*fz_zero``).  Each a ``reordered``
    finding, forbidden; and what could not be checked: a role with branches (its SASS order is not
    its issue order), an access with no SASS on its line."""
    kernels = set(_kernels(compiled))
    found: list[dict[str, Any]] = []
    unchecked: list[str] = []
    for fn in module.functions:
        if fn.name not in kernels:
            continue
        first = _issued_first(fn, compiled.ops)
        roles = {role for role, _ in first}  # the roles this kernel runs (a grid's)
        for k, t in enumerate(program.threads):
            acc = [(n, i, program.physical(loc)) for n, i in enumerate(t.code)
                   if isinstance(i, (Load, Store, Atom, Red)) for loc in i.locations()]
            pairs = [(a, b) for x, a in enumerate(acc) for b in acc[x + 1:]
                     if a[2] == b[2] and a[0] != b[0] and semantics.keeps_location_order(a[1], b[1])]
            if not pairs or k not in roles:
                continue  # no ordered pair, or the role is not in this kernel (another grid's)
            if any(isinstance(i, (Branch, Goto, Label)) for i in t.code):
                unchecked.append(f"{fn.name}: {t.name}'s accesses of one location: their order is not checked (a role with branches)")
                continue
            for (n1, i1, loc), (n2, i2, _) in pairs:
                if (k, n1) not in first or (k, n2) not in first:
                    unchecked.append(f"{fn.name}: {t.name}'s instructions {n1} and {n2} ({loc}): no SASS memory operation "
                                     "on their source lines, their order not checked")
                elif first[(k, n2)][0] < first[(k, n1)][0]:
                    found.append({"check": REORDERED, "verdict": sass.FORBIDDEN, "direction": "issued before",
                                  "function": fn.name, "role": k, "op_ptx": _ptx(program, i2, loc), "sync_ptx": _ptx(program, i1, loc),
                                  "op_sass": first[(k, n2)][1], "op_sass_offset": first[(k, n2)][0],
                                  "sync_sass": first[(k, n1)][1], "sync_sass_offset": first[(k, n1)][0], "op_ptx_line": 0,
                                  "reason": f"{t.name}'s two accesses of {loc}: the model keeps them in program order "
                                            "(semantics.keeps_location_order), the SASS issues the later one first"})
    return found, unchecked


def program_check(module: ModuleCheck, compiled: Any, program: Program | None = None) -> RanSass:
    """What ``module`` (the check of ``compiled``'s cubin) found in ``compiled``'s program's kernels
    (and the helpers ptxas copied into them), attributed (:func:`attribute`); with ``program``, also
    its accesses of one location issued out of order (:func:`location_order`)."""
    kernels = _kernels(compiled)
    found: list[dict[str, Any]] = []
    counts = {CROSS_ROLE: 0, HARNESS: 0, UNPLACED: 0}
    unchecked: list[str] = []
    for fn in module.report.functions:
        if _kernel_of(fn.name) not in kernels and _kernel_of(fn.short_name) not in kernels:
            continue
        unchecked += [f"{fn.short_name}: {u}" for u in fn.unchecked]
        for f in fn.findings:
            kind, role = attribute(f, module.src_at, MODULE_FILE, compiled.roles)
            if kind == PROGRAM:
                found.append({**f.to_dict(), "role": role})
            else:
                counts[kind] += 1
    if program is not None:
        reordered, not_checked = location_order(program, module, compiled)
        found += reordered
        unchecked += not_checked
    return RanSass(kernels, module.report.arch, tuple(found), counts[CROSS_ROLE], counts[HARNESS], counts[UNPLACED],
                   tuple(unchecked))


def check_ran(compiled: Any, program: Program | None = None) -> RanSass:
    """The SASS check of the cubin ``compiled`` (a :class:`fuzzgpu.backends.cuda.Compiled`) ran, for
    its program's kernels (``program``: its IR, for :func:`location_order`).  ValueError when the
    harness was compiled without its PTX."""
    if not compiled.ptx:
        raise ValueError(f"{compiled.program}: the harness's PTX was not kept")
    return program_check(check_module(compiled.cubin, compiled.ptx, f"{compiled.program} (harness)"), compiled, program)


def ran_sass_lines(meta: dict[str, Any]) -> list[str]:
    """The text form of a run's ``meta["ran_sass"]`` (:meth:`RanSass.to_meta`): its summary, then the
    program's findings one per line; ``[]`` when the run has none (no forbidden outcome, or a run
    made before the harness kept its PTX)."""
    rs = meta.get("ran_sass")
    if not rs:
        return []
    if "error" in rs:
        return [str(rs["error"])]
    out = [str(rs.get("summary", ""))]
    for f in rs.get("program", ()):
        ptx_line = f"PTX line {f['op_ptx_line']}, " if f.get("op_ptx_line") else ""
        out.append(f"  {_one_line(f)}  [{ptx_line}SASS {f.get('op_sass', '').strip()} at {f.get('op_sass_offset', -1):#x}]")
    return out


def order_kept(meta: dict[str, Any]) -> bool | None:
    """What the run's SASS check says of the compiler: True -- the program's order kept in the code
    that ran, every kernel fully checked; False -- a finding on the program's operations; None --
    not known (no check, or not fully checked)."""
    rs = meta.get("ran_sass")
    if not rs or "error" in rs:
        return None
    if rs.get("program"):
        return False
    return None if rs.get("unchecked") else True


__all__ = ["CROSS_ROLE", "HARNESS", "MODULE_FILE", "PROGRAM", "REORDERED", "UNPLACED", "ModuleCheck", "RanSass", "attribute", "check_module", "check_ran", "location_order", "order_kept", "program_check", "ran_sass_lines"]
