"""The harness's watched outcomes and their provenance log: the watch bitmap a run hands the
device, and the logged instances read back from its control block (docs/harness.md,
"Provenance").  Pure host code (numpy, no GPU): a campaign worker computes the bitmap and the GPU
runner process only launches."""

from __future__ import annotations

from typing import Any, Callable

from .. import codegen


#: the control block's provenance words (harness_helpers.cuh FZ_PROV_*)
PROV_COUNT, PROV_WATCH, PROV_BINS, PROV_LOG, PROV_CAP = 64, 65, 4096, 129, 256


def watch_bitmap(spec: codegen.HarnessSpec, watch: Callable[[dict[str, int | None]], bool] | None) -> Any:
    """The 64 words of the device's watch bitmap: bit ``b`` set for each bin ``b`` (below
    :data:`PROV_BINS`) whose decoded outcome ``watch`` accepts."""
    import numpy as np

    bits = np.zeros(PROV_BINS // 64, dtype=np.uint64)
    if watch is not None:
        for b in range(min(spec.nbins, PROV_BINS)):
            if watch(spec.decode_bin(b)):
                bits[b // 64] |= np.uint64(1 << (b % 64))
    return bits


def decode_where(word: int) -> dict[str, int]:
    """A role's where word (harness_helpers.cuh fz_where): the SM, hardware CTA, warp and lane."""
    return {"sm": word >> 24 & 0xFF, "cta": word >> 8 & 0xFFFF, "warp": word >> 5 & 7, "lane": word & 31}


def provenance(spec: codegen.HarnessSpec, ctl: Any, cta_threads: int) -> dict[str, Any]:
    """The logged instances of watched outcomes, from the control block's words ``ctl``: per
    instance its launch, instance number (logical CTA ``instance // cta_threads``), outcome and, per role, where
    it ran (:func:`decode_where`); ``logged`` of ``seen`` (the log keeps the first
    :data:`PROV_CAP`)."""
    seen = int(ctl[PROV_COUNT])
    n = 2 + spec.roles
    entries = []
    for i in range(min(seen, PROV_CAP)):
        e = [int(x) for x in ctl[PROV_LOG + i * n: PROV_LOG + (i + 1) * n]]
        entries.append({
            "launch": e[0] >> 32, "instance": e[0] & 0xFFFFFFFF, "logical_cta": (e[0] & 0xFFFFFFFF) // cta_threads,
            "outcome": spec.decode_bin(e[1]),
            "roles": [decode_where(w & 0xFFFFFFFF) for w in e[2:]],
        })
    return {"seen": seen, "logged": len(entries), "entries": entries}
