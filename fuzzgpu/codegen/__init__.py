"""Program -> CUDA C++ with inline PTX.

Two outputs share one per-instruction emitter (:func:`emit_instruction`), so the PTX of every
memory operation, fence and barrier is written in exactly one place:

* :func:`generate_static` -- one ``__global__`` kernel per litmus thread (``fuzzgpu_<thread>``),
  its instructions in order, each location a distinct compile-time offset from one base pointer.
  For the static SASS checks (fuzzgpu.sass): nothing but the thread's own code.
* :func:`generate_harness` / :func:`generate_module` -- the parallel litmus harness that the CUDA
  backend runs: 256 testing CTAs x 256 threads = 65,536 instances per launch, every hardware thread
  playing every role of the program for a different instance (GPUHarbor / MC-Mutants "parallel
  testing"), threads placed as the Program says (same warp, same CTA, same cluster, different CTAs),
  random CTA permutation, seed and location permutation per launch, stress knobs, launch-unique store
  values, and the outcome histogram built on the device.  docs/harness.md describes the layout.

Every memory operation, fence and barrier is ``asm volatile(... ::: "memory")``.  Programs the GPU
cannot run (abstract surface/texture/constant proxies, virtual aliases, several GPUs or grids...)
raise :class:`Unrunnable`, a :class:`~fuzzgpu.errors.UserError`; :func:`unrunnable_reasons` lists
every reason at once.

The package, by job (import from ``fuzzgpu.codegen``, not from the modules): :mod:`.runnable`
(which programs the harness can run, and why not), :mod:`.values` (how a litmus value lives in a
device word), :mod:`.emit` (IR instruction -> inline PTX), :mod:`.layout` (where the roles of an
instance run and where its locations live), :mod:`.static` (the static kernels),
:mod:`.harness` (the stress harness), :mod:`.resources` (the fixed CUDA text, ``prelude.cuh`` and
``harness_helpers.cuh``).
"""

from __future__ import annotations

from .emit import (  # noqa: F401
    BULK_SCALE,
    BULK_SLOT_BYTES,
    TCGEN05_ARCHS,
    EmitContext,
    comment_text,
    emit_instruction,
    ptx_of,
    tcgen05_arch_ok,
)
from .harness import (  # noqa: F401
    INJECTED_FAULTS,
    KERNEL_PARAMS,
    MAX_SHARED_BINS,
    TENSOR_BOX,
    HarnessSpec,
    KeySpec,
    _HARNESS_HELPERS,
    generate_harness,
    generate_module,
    harness_source,
    kernel_args,
)
from .role_lines import ALL_ROLES, op_lines, role_regions  # noqa: F401
from .layout import (  # noqa: F401
    CTA_THREADS,
    MAX_CLUSTER,
    Layout,
    RoleLayout,
    _layout,
    cluster_rank_of,
    min_cta_threads,
    uses_dsm,
    uses_wgmma,
)
from .resources import CUDA_DECLS, PRELUDE  # noqa: F401
from .runnable import (  # noqa: F401
    added_reasons,
    MAX_GRIDS,
    WGMMA_ARCHES,
    Unrunnable,
    _spin_order_reasons,
    check_runnable,
    harness_arch,
    unrunnable_reasons,
)
from .static import STATIC_LOCATION_STRIDE, generate_static, static_kernel_name, static_offsets  # noqa: F401
from .values import (  # noqa: F401
    EXACT,
    MAX_BINS,
    TAGGED,
    TAGGED_MAX,
    TAGGED_MIN,
    VALUE_MAX,
    VALUE_MIN,
    VALUES_VERSION,
    ValueCodec,
    ValuePlan,
    value_plan,
)

__all__ = [
    "Unrunnable",
    "EmitContext",
    "emit_instruction",
    "ptx_of",
    "generate_static",
    "static_offsets",
    "static_kernel_name",
    "generate_harness",
    "generate_module",
    "harness_source",
    "KERNEL_PARAMS",
    "kernel_args",
    "role_regions",
    "op_lines",
    "ALL_ROLES",
    "unrunnable_reasons",
    "added_reasons",
    "check_runnable",
    "HarnessSpec",
    "TENSOR_BOX",
    "KeySpec",
    "Layout",
    "RoleLayout",
    "PRELUDE",
    "CUDA_DECLS",
    "CTA_THREADS",
    "INJECTED_FAULTS",
    # names other modules, tests and bench/ use (before the split they were module attributes)
    "harness_arch",
    "uses_wgmma",
    "min_cta_threads",
    "uses_dsm",
    "cluster_rank_of",
    "comment_text",
    "value_plan",
    "ValueCodec",
    "ValuePlan",
    "TAGGED",
    "EXACT",
    "VALUES_VERSION",
    "VALUE_MIN",
    "VALUE_MAX",
    "TAGGED_MIN",
    "TAGGED_MAX",
    "MAX_BINS",
    "BULK_SCALE",
]
