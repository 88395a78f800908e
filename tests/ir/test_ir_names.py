"""The IR's names follow the PTX ISA (issue 14): every instruction class's docstring cites the PTX ISA
section of its instruction, or says it is a fuzzgpu abstraction; the abstractions are exactly
AsyncRead and Filler; the short class names (BulkCommit, BulkWait) keep their JSON tags, which are
the mnemonics."""

import re

from fuzzgpu.ir import INSTRUCTION_TYPES, BulkCommit, BulkWait

CITES_ISA = re.compile(r'PTX ISA,?\s+"[^"]+"')
ABSTRACTION = "fuzzgpu abstraction, not a PTX instruction"


def test_every_instruction_cites_the_isa_or_says_it_is_an_abstraction():
    missing = [cls.__name__ for cls in INSTRUCTION_TYPES.values()
               if not CITES_ISA.search(cls.__doc__ or "") and ABSTRACTION not in (cls.__doc__ or "")]
    assert not missing, f"no PTX ISA citation and not said to be an abstraction: {missing}"


def test_the_abstractions_are_async_read_and_filler():
    abstractions = sorted(cls.__name__ for cls in INSTRUCTION_TYPES.values() if ABSTRACTION in (cls.__doc__ or ""))
    assert abstractions == ["AsyncRead", "Filler"]


def test_bulk_group_classes_are_the_bulk_group_instructions():
    assert BulkCommit.OP == "cp.async.bulk.commit_group" and 'PTX ISA "cp.async.bulk.commit_group"' in (BulkCommit.__doc__ or "")
    assert BulkWait.OP == "cp.async.bulk.wait_group" and 'PTX ISA "cp.async.bulk.wait_group"' in (BulkWait.__doc__ or "")
