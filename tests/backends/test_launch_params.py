"""The host's table of launch parameters (backends/launch_params.py), which the harness kernels read instead of
deriving them on the device."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paths import LITMUS

from fuzzgpu.backends.launch_params import MAX_ROWS, ROW_WORDS, launch_params, table_rows

# The derivation the kernels made on the device until the table (codegen/harness_helpers.cuh's fz_params of
# commit cdad464, with codegen/prelude.cuh's fz_mix and fz_inv8), as host C: the table must hold exactly what
# they computed, so that a run places its instances as before.
DEVICE_DERIVATION = r"""
#include <stdio.h>
#include <stdlib.h>
static unsigned fz_mix(unsigned x) {
  x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; x *= 0x846ca68bU; x ^= x >> 16; return x;
}
static unsigned fz_inv8(unsigned f) { unsigned x = f; x *= 2u - f * x; x *= 2u - f * x; x *= 2u - f * x; return x & 255u; }
int main(int argc, char** argv) {
  unsigned seed0 = (unsigned)strtoul(argv[1], 0, 0), knobs = (unsigned)strtoul(argv[2], 0, 0);
  unsigned nperms = (unsigned)strtoul(argv[3], 0, 0), rows = (unsigned)strtoul(argv[4], 0, 0);
  for (unsigned long long epoch = 0; epoch < rows; ++epoch) {
    unsigned r[56] = {0};
    const unsigned h0 = fz_mix(seed0 ^ fz_mix((unsigned)epoch * 0x9e3779b9u + (unsigned)(epoch >> 32)));
    r[0] = h0;
    const int tperm = !(knobs & 1u), lshuf = !(knobs & 2u);
    unsigned h = fz_mix(h0 + 1u); r[2] = tperm ? ((h & 7u) | 1u) : 1u; r[3] = tperm ? (((h >> 3) & 31u) | 1u) : 1u;
    r[4] = (h >> 8) % nperms;
    for (unsigned g = 0; g < 8; ++g) {
      h = fz_mix(h0 ^ (0x5100u + g));
      r[8 + g] = (g == 0 || !tperm) ? 1u : ((h & 255u) | 1u);
      r[16 + g] = fz_inv8(r[8 + g]);
    }
    for (unsigned j = 0; j < 16; ++j) {
      h = fz_mix(h0 ^ (0x7700u + j));
      r[24 + j] = (j == 0 || !lshuf) ? 1u : (h | 1u);
      r[40 + j] = (j == 0 || !lshuf) ? 0u : fz_mix(h);
    }
    for (int k = 0; k < 56; ++k) printf("%u%c", r[k], k == 55 ? '\n' : ' ');
  }
  return 0;
}
"""


@pytest.fixture(scope="module")
def device_derivation(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    d = tmp_path_factory.mktemp("derive")
    (d / "derive.c").write_text(DEVICE_DERIVATION)
    subprocess.run([cc, "-O1", "-o", str(d / "derive"), str(d / "derive.c")], check=True)

    def run(seed0: int, knobs: int, nperms: int, rows: int) -> np.ndarray:
        out = subprocess.run([str(d / "derive"), str(seed0), str(knobs), str(nperms), str(rows)],
                             check=True, capture_output=True, text=True).stdout
        return np.array([[int(w) for w in line.split()] for line in out.splitlines()], dtype=np.uint32)

    return run


@pytest.mark.parametrize("seed0,knobs,rows", [(1, 0, 256), (0xDEADBEEF, 0, 64), (7, 1, 32), (7, 2, 32), (7, 3, 16), (12345, 0x80 | (64 << 8), 128)])
def test_the_table_is_the_derivation_the_kernels_made(device_derivation, seed0, knobs, rows):
    assert (launch_params(seed0, knobs, 64, rows) == device_derivation(seed0, knobs, 64, rows)).all()


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1), st.integers(1, 64), st.sampled_from([1, 2, 8, 64]))
def test_rows_hold_what_the_kernels_rely_on(seed0, knobs, nperms, rows):
    t = launch_params(seed0, knobs, nperms, rows)
    assert t.shape == (rows, ROW_WORDS) and t.dtype == np.uint32
    f, finv = t[:, 8:16], t[:, 16:24]
    assert (f % 2 == 1).all() and ((f * finv) % 256 == 1).all()  # a lane multiplier and its inverse mod 256
    assert (t[:, 2] % 2 == 1).all() and (t[:, 3] % 2 == 1).all() and (t[:, 4] < nperms).all()
    assert (t[:, 24:40] % 2 == 1).all()  # odd location multipliers: a bijection mod a power of two
    assert (t[:, [1, 5, 6, 7]] == 0).all()  # the kernels compute the tag and the CTA's size
    if knobs & 1:
        assert (t[:, 2:4] == 1).all() and (f == 1).all()
    if knobs & 2:
        assert (t[:, 24:40] == 1).all() and (t[:, 40:56] == 0).all()


def test_a_run_has_a_row_per_launch_number_up_to_the_cap():
    assert table_rows(1) == 2 and table_rows(2) == 4 and table_rows(3) == 4 and table_rows(153) == 256
    assert table_rows(10**9) == MAX_ROWS
    with pytest.raises(ValueError, match="power of two"):
        launch_params(1, 0, 64, 3)


def test_the_backend_packs_every_kernel_parameter_by_name_with_its_type():
    """The harness's signature and the backend's arguments come from one list (codegen.KERNEL_PARAMS): every
    name given once, pointers as 64-bit pointers, ``unsigned long long`` as u64, the rest u32."""
    from fuzzgpu import codegen, litmus
    from fuzzgpu.backends.cuda import EPOCH_ARG

    names = [n for _, n in codegen.KERNEL_PARAMS]
    packed = codegen.kernel_args({n: i for i, n in enumerate(names)})
    assert [v for _, v in packed] == list(range(len(names)))
    kinds = dict(zip(names, (k for k, _ in packed)))
    assert kinds["mem"] == kinds["ptab"] == "p" and kinds["epoch_arg"] == kinds["epoch0"] == "u64" and kinds["pmask"] == "u32"
    assert names[EPOCH_ARG] == "epoch_arg"
    with pytest.raises(ValueError, match=r"missing \['pmask'\]"):
        codegen.kernel_args({n: 0 for n in names if n != "pmask"})
    src, _ = codegen.harness_source(litmus.parse_file(LITMUS / "gpu" / "MP-relaxed-gpu.litmus"))
    assert "(\n    " + ", ".join(f"{t} {n}" for t, n in codegen.KERNEL_PARAMS) + ") {" in src
