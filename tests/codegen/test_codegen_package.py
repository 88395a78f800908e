"""The package fuzzgpu.codegen (issue 14's split of codegen.py): the fixed CUDA text is package data
read with importlib.resources, and the emitter refuses what its split-out typing made explicit.
(The wheel carrying the .cuh files: tests/package/test_packaging.py.)"""

from __future__ import annotations

from importlib import resources

import pytest
from paths import ROOT

from fuzzgpu import codegen, litmus
from fuzzgpu.ir import CpAsyncBulk, Space

LITMUS = ROOT / "tests" / "litmus"


@pytest.mark.parametrize("name, text, guard", [
    ("prelude.cuh", codegen.PRELUDE, "FUZZGPU_PRELUDE"),
    ("harness_helpers.cuh", codegen._HARNESS_HELPERS, "FUZZGPU_HARNESS_HELPERS"),
], ids=["prelude", "harness_helpers"])
def test_the_cuda_text_is_the_packages_cuh_resource(name, text, guard):
    res = resources.files("fuzzgpu.codegen").joinpath(name)
    assert res.is_file()
    body = res.read_text(encoding="utf-8")
    # emitted after a blank line of its own, include-guarded, every line ending in a newline
    assert text == "\n" + body
    lines = body.splitlines()
    i = lines.index(f"#ifndef {guard}")
    assert i < 2 and lines[i + 1] == f"#define {guard}"
    assert body.endswith("#endif\n") and "\r" not in body


def test_every_generated_source_starts_with_the_prelude():
    p = litmus.parse_file(LITMUS / "gpu" / "MP-relacq-gpu.litmus")
    assert codegen.PRELUDE in codegen.generate_static(p)
    src, _ = codegen.harness_source(p)
    assert src.startswith(codegen.PRELUDE + "\n" + codegen._HARNESS_HELPERS)


class _Ctx(codegen.EmitContext):
    def addr(self, loc: str) -> tuple[str, Space]:
        return {"s": ("sa", Space.SHARED), "g": ("ga", Space.GLOBAL), "b": ("ba", Space.SHARED)}[loc]


def test_a_bulk_copy_into_shared_memory_completes_on_its_mbarrier():
    """global -> shared has only the mbarrier::complete_tx form; a bulk_group completion (which
    ir.validate refuses) is a TypeError, not a lookup of the missing mbarrier."""
    (line,) = codegen.emit_instruction(CpAsyncBulk("s", "g", completion="mbarrier", bar="b"), _Ctx())
    assert "mbarrier::complete_tx::bytes [%0], [%1], 16, [%2];" in line and '"r"(ba)' in line
    with pytest.raises(TypeError, match="completes on an mbarrier"):
        codegen.emit_instruction(CpAsyncBulk("s", "g", completion="bulk_group"), _Ctx())
