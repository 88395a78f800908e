"""The mnemonic table (fuzzgpu/litmus/mnemonics.py) is the one description of the instruction syntax:
every IR class has a row, every row the builder reads is the row the printer writes, and
print . parse is the identity on every fixed spelling with any operands."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzgpu import ir
from fuzzgpu.errors import SourceError
from fuzzgpu.litmus import format_instruction
from fuzzgpu.litmus.builder import InstructionBuilder
from fuzzgpu.litmus.mnemonics import FAMILIES, FORMS, MNEMONICS, TABLE, Family, Form, printer_rows
from fuzzgpu.litmus.parser import _Parser

FORM_ROWS = [row for row in TABLE if isinstance(row, Form)]


def parse_cell(text: str) -> ir.Instruction:
    """One cell, read as the parser reads a cell of a thread's column (not validated against a program)."""
    parser = _Parser("PTX cell\n" + text + " ;", "<cell>")
    cell = parser.parse_cell()
    assert cell is not None and parser.at(";"), text
    return cell.instr


registers = st.integers(0, 12).map(lambda n: f"r{n}")
numbers = st.integers(-(2**31), 2**31 - 1)
names = st.sampled_from(["x", "y", "flag", "bar0", "LC00", "exists", "ld"])
SLOT_VALUES = {
    "register": registers,
    "value": registers | numbers,
    "number": numbers,
    "location": names,
    "label": names,
}


@st.composite
def form_instances(draw, rows=tuple(FORM_ROWS)):
    row = draw(st.sampled_from(rows))
    operands = {slot.field: draw(SLOT_VALUES[slot.kind]) for slot in row.operands}
    return row, row.ir(**dict(row.fields), **operands)


def test_every_instruction_class_has_a_row():
    """A new IR instruction without a row would silently print as JSON: the table must name it."""
    missing = [name for name, cls in ir.INSTRUCTION_TYPES.items() if cls is not ir.Label and not printer_rows(cls)]
    assert missing == []


def test_every_family_names_a_builder_method():
    for row in TABLE:
        if isinstance(row, Family):
            assert callable(getattr(InstructionBuilder, row.build, None)), row.build


def test_the_parser_accepts_exactly_the_tables_first_words():
    assert MNEMONICS == frozenset(FAMILIES)
    assert {row.base for row in FORM_ROWS} <= MNEMONICS


def test_forms_are_spelt_once():
    spellings = [row.mnemonic for row in FORM_ROWS if row.parsed]
    assert len(spellings) == len(set(spellings))
    assert set(FORMS) == set(spellings)


@settings(max_examples=400, deadline=None)
@given(form_instances())
def test_print_parse_is_identity_on_every_form(row_and_ins):
    row, ins = row_and_ins
    text = format_instruction(ins)
    writer = next((r for r in printer_rows(type(ins)) if isinstance(r, Form) and r.matches(ins)), None)
    if row.printed:  # written by its own row (``mov r0, 1`` by the earlier ``ld r0, 1``)
        assert writer is not None and text.split(" ", 1)[0] == writer.mnemonic
        assert writer == row or row.ir is ir.Mov
    back = parse_cell(text)
    assert back == ins
    assert format_instruction(back) == text


@settings(max_examples=100, deadline=None)
@given(form_instances(tuple(row for row in FORM_ROWS if row.parsed and not row.printed)))
def test_aliases_read_as_the_instruction_printed_otherwise(row_and_ins):
    """``membar.gl`` is ``fence.sc.gpu``, ``barrier.cluster.arrive.aligned`` is ``barrier.cluster.arrive``."""
    row, ins = row_and_ins
    args = ", ".join(str(getattr(ins, s.field)) for s in row.operands)
    parsed = parse_cell(f"{row.mnemonic} {args}".rstrip())
    assert parsed == ins
    assert format_instruction(parsed) != row.mnemonic


@pytest.mark.parametrize("row", [r for r in FORM_ROWS if r.parsed and r.operands], ids=lambda r: r.mnemonic)
def test_a_form_counts_its_operands(row):
    args = ", ".join(["1"] * (len(row.operands) + 1))
    with pytest.raises(SourceError, match=rf"{row.mnemonic} takes {len(row.operands)} operand\(s\), got {len(row.operands) + 1}"):
        parse_cell(f"{row.mnemonic} {args}")


def test_an_instance_no_row_writes_falls_back_to_json():
    """A field outside the table's spellings (an unknown filler kind) is written in the generic JSON form."""
    assert format_instruction(ir.Filler("spin", 3)) == '{"op": "filler", "kind": "spin", "n": 3}'
    assert format_instruction(ir.GridDepControl("sleep")) == '{"op": "griddepcontrol", "action": "sleep"}'
