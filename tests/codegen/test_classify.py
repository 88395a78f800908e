"""The harness's classification (``fz_class_bin`` in codegen/harness_helpers.cuh, driven by each program's table,
codegen.harness.class_table): compiled for the host with nvcc and run over random result and memory words, its
bins must be those the program's :class:`HarnessSpec` describes -- each key's word decoded with the program's
codec, its digit its index in the key's values, mixed radix in ``spec.keys``' order (``decode_bin``), the
timeout bin ``nbins`` -- for programs drawn from profile ``all``; a broken table must break it."""

from __future__ import annotations

import random
import re
import subprocess
from typing import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hseed

from fuzzgpu import codegen, strategies
from fuzzgpu.backends.launch_params import launch_params
from fuzzgpu.codegen.harness import HarnessSpec
from fuzzgpu.codegen.resources import HARNESS_HELPERS, PRELUDE
from fuzzgpu.codegen.values import EXACT, TAGGED
from fuzzgpu.ir import Program
from fuzzgpu.profiles import load_profile
from nvcc import NVCC, needs_nvcc
from paths import LITMUS

pytestmark = needs_nvcc

# reads cases from stdin: table words (count first), ptab rows (count first), pmask, pe, ninst, stride, mem and
# res words (count first); writes each instance's bin
HOST_MAIN = r"""
#include <cstdio>
#include <vector>
static bool rd(void* p, size_t n) { return fread(p, 1, n, stdin) == n; }
static std::vector<unsigned> words() { unsigned n = 0; rd(&n, 4); std::vector<unsigned> v(n); rd(v.data(), 4ull * n); return v; }
int main() {
  unsigned n;
  while (fread(&n, 4, 1, stdin) == 1) {
    std::vector<unsigned> ct(n); rd(ct.data(), 4ull * n);
    std::vector<unsigned> rows = words();
    unsigned pmask, ninst, stride; unsigned long long pe;
    rd(&pmask, 4); rd(&pe, 8); rd(&ninst, 4); rd(&stride, 4);
    std::vector<unsigned> mem = words(), res = words();
    for (unsigned inst = 0; inst < ninst; ++inst) {
      unsigned bin = fz_class_bin(ct.data(), mem.data(), res.data(), inst, ninst, stride, (const FzParams*)rows.data(), pmask, pe);
      fwrite(&bin, 4, 1, stdout);
    }
  }
  return 0;
}
"""

NINST, ROWS = 64, 4


@pytest.fixture(scope="module")
def classify(tmp_path_factory) -> Callable[[list[bytes]], np.ndarray]:
    """The host build of the harness's classification: cases (:func:`case`) in, every instance's bin out."""
    d = tmp_path_factory.mktemp("classify")
    (d / "classify.cu").write_text(PRELUDE + HARNESS_HELPERS + HOST_MAIN)
    subprocess.run([str(NVCC), "-arch=sm_90", "-O1", "-w", "-o", str(d / "classify"), str(d / "classify.cu")],
                   check=True, capture_output=True)

    def run(cases: list[bytes]) -> np.ndarray:
        out = subprocess.run([str(d / "classify")], input=b"".join(cases), check=True, capture_output=True).stdout
        return np.frombuffer(out, dtype=np.uint32)

    return run


def table_of(src: str) -> list[int]:
    """The classification table of the (one) program of a harness source."""
    (body,) = re.findall(r"__device__ const unsigned fzt\[\d+\] = \{([^}]*)\};", src)
    return [int(w.strip().rstrip("u")) for w in body.split(",")]


def u32(xs: list[int] | np.ndarray) -> bytes:
    a = np.asarray(xs, dtype=np.uint64).astype(np.uint32)
    return np.uint32(len(a)).tobytes() + a.tobytes()


def case(table: list[int], rows: np.ndarray, pe: int, stride: int, mem: np.ndarray, res: np.ndarray) -> bytes:
    return (u32(table) + u32(rows.reshape(-1)) + np.uint32(ROWS - 1).tobytes() + np.uint64(pe).tobytes()
            + np.uint32(NINST).tobytes() + np.uint32(stride).tobytes() + u32(mem) + u32(res))


def result_inits(p: Program, spec: HarnessSpec, table: list[int]) -> list[int]:
    """The initial value each result word decodes against: a shared final's is its location's; a register's is
    the table's (the test's code decides: a raw loaded word decodes against its location's initial value, an
    encoded one against 0), which must be 0 or the initial value of a location the register's role reads."""
    res = [k for k in spec.keys if k.kind != "gloc"]
    inits = [table[7 + 4 * spec.keys.index(k) + 1] for k in res]
    inits = [x - (1 << 32) if x >> 31 else x for x in inits]
    for k, x in zip(res, inits):
        if k.kind == "sloc":
            assert x == p.location(str(k.loc)).init, k
        else:
            assert x in {0} | {p.location(p.physical(n)).init for i in p.threads[k.role].code for n in i.locations()}, k
    return inits


def expected(p: Program, spec: HarnessSpec, res_init: list[int], rows: np.ndarray, pe: int, stride: int,
             mem: np.ndarray, res: np.ndarray) -> list[int]:
    """The bins the spec describes (the reference the device's classification must equal)."""
    codec = TAGGED if spec.values == "tagged" else EXACT
    tag = pe % 65535 + 1
    row = rows[pe & (ROWS - 1)]
    ng = spec.n_global_locs
    half = pe & 1
    res_keys = [k for k in spec.keys if k.kind != "gloc"]
    nrk = len(res_keys)
    out = []
    for inst in range(NINST):
        def rword(k: int) -> int:
            return int(res[half * spec.n_results * NINST + k * NINST + inst])

        if any(rword(nrk + r) for r in range(spec.roles)):
            out.append(spec.nbins)
            continue
        vals: dict[str, int | None] = {}
        for ks in spec.keys:
            if ks.kind == "gloc":
                j = spec.global_locs.index(str(ks.loc))
                x = inst if j == 0 else (inst * int(row[24 + j]) + int(row[40 + j])) & 0xFFFFFFFF & (NINST - 1)
                raw, init = int(mem[half * NINST * ng * stride + x * ng * stride + j * stride]), p.location(str(ks.loc)).init
            else:
                ri = res_keys.index(ks)
                raw, init = rword(ri), res_init[ri]
            v = codec.decode(raw, tag, init)
            vals[ks.key] = v if v in ks.values else None
        b = 0
        for ks in reversed(spec.keys):
            v = vals[ks.key]
            b = b * ks.radix + (ks.values.index(v) if v is not None else len(ks.values))
        assert spec.decode_bin(b) == vals  # the bin is the spec's numbering of these values
        out.append(b)
    return out


def contents(spec: HarnessSpec, rnd: random.Random, pe: int, stride: int) -> tuple[np.ndarray, np.ndarray]:
    """Random words, mostly a value of the key's table in the launch's encoding, some another value, another
    launch's tag or any word; timeout words mostly 0."""
    codec = TAGGED if spec.values == "tagged" else EXACT
    tag = pe % 65535 + 1
    known = sorted({v for k in spec.keys for v in k.values} | {0, 1, -1, 7})

    def word() -> int:
        r = rnd.random()
        if r < 0.6:
            return codec.encode(rnd.choice(known), tag)
        if r < 0.75:
            return codec.encode(rnd.randint(-40000, 40000), tag)
        if r < 0.9:
            return codec.encode(rnd.choice(known), rnd.randint(1, 65535))
        return rnd.getrandbits(32)

    mem = np.array([word() for _ in range(2 * NINST * spec.n_global_locs * stride)], dtype=np.uint64)
    res = np.array([word() for _ in range(2 * spec.n_results * NINST)], dtype=np.uint64)
    nrk = sum(k.kind != "gloc" for k in spec.keys)
    for half in range(2):
        for r in range(spec.roles):
            at = half * spec.n_results * NINST + (nrk + r) * NINST
            res[at:at + NINST] = [rnd.getrandbits(32) if rnd.random() < 0.04 else 0 for _ in range(NINST)]
    return mem, res


def cases_of(p: Program, rnd: random.Random, n: int, table: list[int] | None = None):
    """``n`` random cases of ``p`` (its table, or ``table``) with the bins its spec describes."""
    src, spec = codegen.generate_harness(p, kernel="fzh_t")
    real = table_of(src)
    res_init = result_inits(p, spec, real)
    for _ in range(n):
        pe = rnd.choice([0, 1, 2, 65534, 65535, 65536, rnd.getrandbits(16), rnd.getrandbits(64)])
        stride = rnd.choice([1, 4, 32])
        rows = launch_params(rnd.getrandbits(32), rnd.choice([0, 1, 2]), 4, ROWS)
        mem, res = contents(spec, rnd, pe, stride)
        yield case(table or real, rows, pe, stride, mem, res), expected(p, spec, res_init, rows, pe, stride, mem, res)


def check(classify, p: Program, n: int = 6, seed: int = 0, table: list[int] | None = None) -> bool:
    rnd = random.Random(f"{p.name}/{seed}")
    cases = list(cases_of(p, rnd, n, table))
    got = classify([c for c, _ in cases])
    want = np.array([b for _, bins in cases for b in bins], dtype=np.uint32)
    return got.shape == want.shape and bool((got == want).all())


def drawn(n: int, seed: int) -> list[Program]:
    prof = load_profile("all")
    out: list[Program] = []

    @hseed(seed)
    @settings(database=None, max_examples=4 * n, deadline=None, phases=(Phase.generate,), suppress_health_check=list(HealthCheck))
    @given(strategies.weighted(prof.shapes, prof.options))
    def collect(p: Program) -> None:
        if len(out) < n and not codegen.unrunnable_reasons(p):
            out.append(p)

    collect()
    return out


def test_drawn_programs_classify_as_their_spec_says(classify) -> None:
    programs = drawn(60, 29)
    assert len(programs) >= 40
    assert {codegen.generate_harness(p)[1].values for p in programs} == {"tagged", "exact"}
    bad = [p.name for p in programs if not check(classify, p)]
    assert not bad


def shared_final() -> Program:
    """A shared location's final value, two global locations' (the second one's slot is permuted) and a
    register as keys."""
    from fuzzgpu.ir import Load, Location, Placement, Space, Store, Thread, validate

    return validate(Program("SFIN", (Thread("P0", Placement(), (Store("s", 1), Store("y", 4), Load("r0", "x"))),
                                     Thread("P1", Placement(), (Store("x", 2), Store("s", 3), Store("y", 6)))),
                            (Location("x", init=-3), Location("y"), Location("s", space=Space.SHARED, init=5)),
                            observed=("P0:r0", "s", "y", "x")))


@pytest.mark.parametrize("rel", ["gpu/MP-relaxed-gpu.litmus", "core/CoWW.litmus", "dat3m/Manual/Atom-plus-location_.litmus",
                                 "cluster/MP-relacq-cluster-same-cluster.litmus", "gpu-pdl/PDL-hoist-nc.litmus",
                                 "async-proxy/TMA-load-after-pdl-wait.litmus", "RMW_ISSUE12", "SFIN"])
def test_litmus_programs_classify_as_their_spec_says(classify, rel: str) -> None:
    """Global and shared locations' final values, exact (primed) values, clusters, PDL's two grids."""
    from fuzzgpu.litmus import parse_file
    from programs import RMW_ISSUE12

    p = {"RMW_ISSUE12": RMW_ISSUE12, "SFIN": shared_final()}.get(rel) or parse_file(str(LITMUS / rel))
    assert check(classify, p, n=10)


def test_a_broken_table_breaks_the_classification(classify) -> None:
    """Each part of the table counts: the codec, a key's place, initial value, values and their count."""
    from fuzzgpu.litmus import parse_file

    p = parse_file(str(LITMUS / "gpu" / "MP-relaxed-gpu.litmus"))
    src, spec = codegen.generate_harness(p, kernel="fzh_t")
    t = table_of(src)
    assert check(classify, p, n=10, table=t)
    k0 = 7  # the first key's words
    broken = []
    for at, value in [(5, 1 - t[5]), (2, t[2] + 1), (3, t[3] + 1), (k0, t[k0 + 4]), (k0 + 1, t[k0 + 1] + 1),
                      (k0 + 2, t[k0 + 2] - 1), (t[k0 + 3], t[t[k0 + 3]] + 5)]:
        b = list(t)
        b[at] = value
        broken.append(b)
    for b in broken:
        assert not check(classify, p, n=10, table=b), b
