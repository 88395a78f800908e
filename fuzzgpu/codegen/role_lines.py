"""Where a harness module has each role's code (:func:`role_regions`) and each role's instruction
(:func:`op_lines`): the comments :mod:`fuzzgpu.codegen.harness` writes (:data:`ROLE_MARK`,
:data:`ALL_ROLES_MARK`, :data:`OP_MARK`) and their reader, in one place.  The SASS check of the harness
that ran (:mod:`fuzzgpu.backends.ran_sass`) attributes its findings by them."""

from __future__ import annotations

import re

#: the comment that opens the code of role ``k`` in a harness kernel (``// ---- role 0: P0``), and
#: the one a litmus barrier every role meets at once ends its line with: :func:`role_regions` reads them
ROLE_MARK = "// ---- role "
ALL_ROLES_MARK = "all roles at once"
#: :func:`role_regions`' role of a litmus barrier line (every role's program order has it)
ALL_ROLES = -1
#: the comment that ends each line of a role's code with its role and instruction (``// fz-op 1.3``:
#: role 1's instruction 3): :func:`op_lines` reads it
OP_MARK = "// fz-op "
_OP_MARK_RE = re.compile(r"// fz-op (\d+)\.(\d+)$")
_ROLE_END = re.compile(r"^\s*L\d+___end: ;")


def role_regions(source: str) -> tuple[tuple[int, int, int], ...]:
    """Where a harness module (:func:`generate_module`) has each role's code: ``(first line, last
    line, role)``, lines 1-based, ``role`` the litmus thread's index, :data:`ALL_ROLES` for a litmus
    barrier that every role meets at once.  A role's code runs from the line after its
    :data:`ROLE_MARK` to the line before the next mark, litmus barrier or its ``L<k>___end`` label,
    less the PDL delay a primary runs after its trigger (``fz_gdelay``); everything else -- the
    stress, the barriers before the test, the results, the classification -- is the harness's.
    What the SASS check of the harness that ran (:mod:`fuzzgpu.backends.ran_sass`) attributes its
    findings by."""
    owner: list[tuple[int, int]] = []  # (line, role)
    role: int | None = None
    for n, line in enumerate(source.splitlines(), 1):
        text = line.strip()
        if text.startswith(ROLE_MARK):
            role = int(text[len(ROLE_MARK):].split(":", 1)[0])
        elif text.endswith(ALL_ROLES_MARK):
            role = None
            owner.append((n, ALL_ROLES))
        elif _ROLE_END.match(line):
            role = None
        elif role is not None and "fz_gdelay(" not in text:
            owner.append((n, role))
    out: list[tuple[int, int, int]] = []
    for n, r in owner:
        if out and out[-1][2] == r and out[-1][1] == n - 1:
            out[-1] = (out[-1][0], n, r)
        else:
            out.append((n, n, r))
    return tuple(out)


def op_lines(source: str) -> tuple[tuple[int, int, int], ...]:
    """The lines of a harness module that hold a program's instruction: ``(line, role, index of the
    instruction in the role's thread)``, lines 1-based (:data:`OP_MARK`)."""
    out = []
    for n, line in enumerate(source.splitlines(), 1):
        m = _OP_MARK_RE.search(line)
        if m:
            out.append((n, int(m.group(1)), int(m.group(2))))
    return tuple(out)
