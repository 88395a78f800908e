"""Each launch's random parameters, computed on the host once per run (pure; numpy).

A harness launch places its instances with parameters drawn from the launch number and the run's seed: the
warp and lane rotations (``mw``, ``ml``), the CTA permutation's index (``pidx``), each CTA group's lane
multiplier and its inverse mod 256 (``f``, ``finv``) and each global location's permutation (``F``, ``Cc``)
-- the ``FzParams`` of ``codegen/harness_helpers.cuh``.  The host derives them here, one row per launch number,
and the kernels read the row of ``epoch & mask`` (``fz_params``): derived in each kernel (three inlined copies:
the launch, the prime, the classification) they cost 18% of a batch's nvcc CPU
(``bench/results/throughput/harness-skeleton.md``).  Runs of more than :data:`MAX_ROWS` launches reuse the rows in
turn (the launch tag, which tells a word written in this launch from an older one, is still the launch
number's: the kernels compute it).
"""

from __future__ import annotations

import numpy as np

#: words of one ``FzParams`` row: seed, tagh, mw, ml, pidx, lb, cm, wm, f[8], finv[8], F[16], Cc[16]
ROW_WORDS = 56
#: the most rows a table holds (a power of two: the kernels index it with ``epoch & (rows - 1)``); 14.7 MB
MAX_ROWS = 1 << 16
#: CTA groups and global locations a row covers (the harness refuses more: codegen.harness)
GROUPS, LOCS = 8, 16
_OFF_F, _OFF_FINV, _OFF_LF, _OFF_LC = 8, 16, 24, 40


def _mix(x: np.ndarray) -> np.ndarray:
    """``fz_mix`` (codegen/prelude.cuh) on uint32 words."""
    x = x ^ (x >> np.uint32(16))
    x = x * np.uint32(0x7FEB352D)
    x = x ^ (x >> np.uint32(15))
    x = x * np.uint32(0x846CA68B)
    return x ^ (x >> np.uint32(16))


def _inv8(f: np.ndarray) -> np.ndarray:
    """``fz_inv8``: the inverse of odd ``f`` mod 256."""
    x = f.copy()
    for _ in range(3):
        x = x * (np.uint32(2) - f * x)
    return x & np.uint32(255)


def table_rows(launches: int) -> int:
    """Rows of a run's table: one per launch number the run uses (0 to ``launches``: the last classification
    reads the row of the launch before it, and every launch's its own), rounded up to a power of two, at
    most :data:`MAX_ROWS`."""
    need = max(1, int(launches) + 1)
    return min(MAX_ROWS, 1 << (need - 1).bit_length())


def launch_params(seed0: int, knobs: int, nperms: int, rows: int) -> np.ndarray:
    """The ``(rows, ROW_WORDS)`` uint32 table of launch numbers ``0 .. rows-1`` for a run of seed ``seed0``
    with the knobs word ``knobs`` (bit 0: no thread permutation, bit 1: no location shuffle;
    :meth:`RunConfig.knobs_word`) and ``nperms`` CTA permutations.  ``tagh``, ``lb``, ``cm`` and ``wm`` are
    left 0: the kernels compute them (the launch number's tag; the CTA's size)."""
    if rows < 1 or rows & (rows - 1) or rows > MAX_ROWS:
        raise ValueError(f"launch_params: rows={rows} must be a power of two from 1 to {MAX_ROWS}")
    if nperms < 1:
        raise ValueError(f"launch_params: nperms={nperms} must be positive")
    with np.errstate(over="ignore"):
        e = np.arange(rows, dtype=np.uint64)
        lo, hi = (e & np.uint64(0xFFFFFFFF)).astype(np.uint32), (e >> np.uint64(32)).astype(np.uint32)
        h0 = _mix(np.uint32(seed0 & 0xFFFFFFFF) ^ _mix(lo * np.uint32(0x9E3779B9) + hi))
        tperm, lshuf = not (knobs & 1), not (knobs & 2)
        out = np.zeros((rows, ROW_WORDS), dtype=np.uint32)
        out[:, 0] = h0
        h = _mix(h0 + np.uint32(1))
        one = np.uint32(1)
        out[:, 2] = ((h & np.uint32(7)) | one) if tperm else one
        out[:, 3] = (((h >> np.uint32(3)) & np.uint32(31)) | one) if tperm else one
        out[:, 4] = (h >> np.uint32(8)) % np.uint32(nperms)
        for g in range(GROUPS):
            hg = _mix(h0 ^ np.uint32(0x5100 + g))
            f = ((hg & np.uint32(255)) | one) if (g and tperm) else np.full(rows, 1, dtype=np.uint32)
            out[:, _OFF_F + g] = f
            out[:, _OFF_FINV + g] = _inv8(f)
        for j in range(LOCS):
            hj = _mix(h0 ^ np.uint32(0x7700 + j))
            if j and lshuf:
                out[:, _OFF_LF + j] = hj | one
                out[:, _OFF_LC + j] = _mix(hj)
            else:
                out[:, _OFF_LF + j] = one
    return out
