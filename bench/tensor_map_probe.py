"""Which forms of a 1-D ``cuTensorMapEncodeTiled`` the GPU's driver accepts (a diagnostic run on
the GPU machine; an H200 refused the harness's first form with CUDA_ERROR_INVALID_VALUE).

Each form encodes a map of 32-bit elements over one cuMemAlloc buffer, box
``codegen.TENSOR_BOX`` elements, element stride 1, no interleave, swizzle, L2 promotion or
out-of-bound fill; the forms differ in the rank, the global strides array and the size.  Prints
a line per form and writes them as JSON::

    python3 bench/tensor_map_probe.py --out DIR
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def _forms(cu: Any, box: int, words: int) -> dict[str, tuple[int, list[Any], list[Any], list[Any], list[Any]]]:
    """name -> (rank, globalDim, globalStrides (bytes), boxDim, elementStrides)."""
    u64, u32 = cu.cuuint64_t, cu.cuuint32_t
    return {
        f"rank1-no-strides-{words}": (1, [u64(words)], [], [u32(box)], [u32(1)]),
        f"rank1-stride-{words}": (1, [u64(words)], [u64(4 * words)], [u32(box)], [u32(1)]),
        f"rank2-{words}": (2, [u64(box), u64(words // box)], [u64(4 * box)], [u32(box), u32(1)], [u32(1), u32(1)]),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    try:
        from cuda.bindings import driver as cu
    except ImportError:
        try:
            from cuda import cuda as cu  # type: ignore[no-redef]
        except ImportError:
            print("tensor_map_probe: needs cuda-bindings (pip install cuda-bindings) and a GPU", file=sys.stderr)
            return 3
    from fuzzgpu import codegen

    def ck(r: Any) -> Any:
        if int(r[0]) != 0:
            raise RuntimeError(repr(r[0]))
        return r[1:] if len(r) > 2 else (r[1] if len(r) == 2 else None)

    try:
        ck(cu.cuInit(0))
    except RuntimeError as e:
        print(f"tensor_map_probe: no GPU: cuInit failed ({e})", file=sys.stderr)
        return 3
    dev = ck(cu.cuDeviceGet(0))
    ctx = ck(cu.cuDevicePrimaryCtxRetain(dev))
    ck(cu.cuCtxSetCurrent(ctx))
    results = []
    for words in (1024, 1 << 20, 1 << 28):
        ptr = ck(cu.cuMemAlloc(4 * words))
        for name, (rank, dims, strides, box, estr) in _forms(cu, codegen.TENSOR_BOX, words).items():
            r = cu.cuTensorMapEncodeTiled(
                cu.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_UINT32, rank, int(ptr), dims, strides, box, estr,
                cu.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE, cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_NONE,
                cu.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_NONE,
                cu.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
            results.append({"form": name, "address": int(ptr), "result": repr(r[0]), "ok": int(r[0]) == 0})
            print(f"{name:32s} {r[0]!r}")
        ck(cu.cuMemFree(ptr))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "tensor-map-probe.json").write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
