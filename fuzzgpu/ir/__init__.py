"""The Program IR: one litmus program, as frozen dataclasses.

Every stage of fuzzgpu (model, litmus text, code generation, SASS checks, backends, corpus) takes a
:class:`Program` and returns plain values.  Names follow the PTX ISA: *semantics* (``.weak``,
``.relaxed``, ``.acquire``...), *scope* (``.cta``, ``.cluster``, ``.gpu``, ``.sys``), *proxy*
(generic, surface, texture, constant, async), *state space* (global, shared).

Values are 32-bit integers held in Python ``int``; an operand is either an ``int`` (immediate) or a
``str`` (a register name such as ``"r0"``).

JSON: :func:`program_to_json` / :func:`program_from_json` round-trip a Program through plain dicts
carrying ``{"schema": "fuzzgpu.program", "version": SCHEMA_VERSION}``.  :func:`validate` raises
:class:`ProgramError` with a message that names the thread and instruction at fault.  Which
instructions exist (the fences) is the semantics table's, above the IR: a loader hands its program
to :func:`fuzzgpu.semantics.checked` (``validate``, then the table), not to ``validate`` alone.

The package, by job: :mod:`.enums` (names, limits, the PTX enums), :mod:`.instructions` (one class
per instruction), :mod:`.program` (threads, locations, conditions, the Program), :mod:`.tensormap` (tensor maps the
kernel writes), :mod:`.tcgen05` (tensor memory and its tcgen05 instructions), :mod:`.validate`
and :mod:`.serial` (JSON).  Import from ``fuzzgpu.ir``, not from the modules.
"""

from __future__ import annotations

from . import enums, instructions, program, tcgen05, tensormap
from .enums import *  # noqa: F403 -- the names of each module's __all__
from .instructions import *  # noqa: F403
from .program import *  # noqa: F403
from .tensormap import *  # noqa: F403
from .tcgen05 import *  # noqa: F403
from .serial import instruction_from_json, instruction_to_json, program_from_json, program_to_json
from .validate import check_name, is_name, validate

__all__ = [*enums.__all__, *instructions.__all__, *program.__all__, *tensormap.__all__, *tcgen05.__all__, "check_name", "is_name", "validate",
           "instruction_from_json", "instruction_to_json", "program_from_json", "program_to_json"]
