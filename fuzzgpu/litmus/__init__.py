"""The PTX litmus dialect of Dat3M/herd: parser and printer.

:func:`parse` turns ``.litmus`` text into a :class:`fuzzgpu.ir.Program`; :func:`format_program` writes a
Program back in the same dialect, with aligned columns.  ``parse(format_program(p)) == p`` for every
Program that :func:`fuzzgpu.ir.validate` accepts and the printer can express (see
``docs/litmus-format.md`` for the few it cannot).

The parser is a hand-written tokenizer plus a recursive-descent parser.  It is strict: anything it does
not understand raises :class:`fuzzgpu.errors.SourceError` pointing at the offending token, never another
exception.  Its work is linear in the input (condition nesting is bounded).

The package, by job:

- :mod:`.tokens`: the tokenizer and the limits on what is read;
- :mod:`.mnemonics`: the mnemonic table (instruction syntax <-> IR class) and the qualifier spellings;
- :mod:`.builder`: one IR instruction from a mnemonic token and its operand tokens;
- :mod:`.parser`: the recursive-descent parser of a whole test and the entry points;
- :mod:`.printer`: a Program back to litmus text.
"""

from __future__ import annotations

from .parser import MAX_NESTING, parse, parse_file, parse_path_tree
from .printer import MAX_PRINTED_DEPTH, format_instruction, format_program
from .tokens import MAX_DIGITS, MAX_LITMUS_BYTES, MAX_TOKENS, Token

__all__ = [
    "parse",
    "parse_file",
    "parse_path_tree",
    "format_program",
    "format_instruction",
    "MAX_DIGITS",
    "MAX_LITMUS_BYTES",
    "MAX_NESTING",
    "MAX_PRINTED_DEPTH",
    "MAX_TOKENS",
    "Token",
]
