"""The litmus builder's message for a bad mbarrier spelling comes from the mnemonic table: an
operation the table spells out (a ``Form`` row) is answered with its spellings, any other with
every operation -- so a new ``Form`` row needs no edit of the builder's message."""

from __future__ import annotations

import pytest

from fuzzgpu.errors import SourceError
from fuzzgpu.litmus import parse
from fuzzgpu.litmus.mnemonics import FORMS


def _program(line: str) -> str:
    return f"PTX T\n{{\nbar @ shared mbarrier = 0;\n}}\n P0@cta 0,gpu 0 ;\n mbarrier.init bar, 1 ;\n {line} ;\nexists (P0:r0 == 0)\n"


def test_a_bad_spelling_of_a_fixed_operation_names_its_spellings():
    with pytest.raises(SourceError, match=r"'mbarrier\.expect_tx\.relaxed' \(write mbarrier\.expect_tx\)"):
        parse(_program("mbarrier.expect_tx.relaxed bar, 4"))


def test_an_unknown_operation_lists_every_operation_of_the_table():
    with pytest.raises(SourceError) as e:
        parse(_program("mbarrier.frobnicate bar"))
    for op in {f.mnemonic.split(".")[1] for f in FORMS.values() if f.base == "mbarrier" and "." in f.mnemonic}:
        assert f".{op}" in str(e.value)
    assert ".try_wait.parity" in str(e.value)
