"""The CUDA backend: PyCUDA for the context, memory and stream; ``nvcc`` for cubins (content-hash
cache, many programs per nvcc call, parallel processes); ``cuda.bindings.driver`` for module loading
and launches (``cuLaunchKernelEx`` with launch attributes -- PDL -- which PyCUDA lacks), in PyCUDA's
context and on its stream.

Compilation needs only ``nvcc`` (no GPU, no PyCUDA): :func:`compile_cubin`, :func:`compile_programs`.
Running needs a GPU, PyCUDA and cuda-bindings; without them :class:`CudaBackend` raises one
:class:`~fuzzgpu.errors.EnvError` (exit 3) that says what is missing.
"""

from __future__ import annotations

import concurrent.futures
import ctypes
import dataclasses
import hashlib
import os
import subprocess
import tempfile
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from .. import codegen, properties
from ..errors import EnvError, MissingTool, UserError
from ..ir import Program
from ..recent import Recent
from .base import Histogram, RunConfig, fault_hits, mostly_timed_out, parse_fault_spec, seen_forbidden
from .geometry import check_tensor_map_words, cta_permutations, launch_geometry, needs_shared_opt_in
from .ran_sass import MODULE_FILE, ModuleCheck, check_module, program_check
from .provenance import PROV_CAP, PROV_COUNT, PROV_LOG, PROV_WATCH, decode_where, provenance, watch_bitmap

DEFAULT_FLAGS = ("-O3", "-w", "-lineinfo")
#: the harness's ``epoch_arg`` when the kernels read the launch number from the control block
NO_EPOCH = (1 << 64) - 1
#: the index of ``epoch_arg`` in a harness kernel's arguments (set per launch with host_epoch)
EPOCH_ARG = [name for _, name in codegen.KERNEL_PARAMS].index("epoch_arg")


class CompileError(UserError):
    """nvcc failed: the message carries the first lines of its output."""


# --------------------------------------------------------------------------------------------
# Compilation (no GPU needed)
# --------------------------------------------------------------------------------------------


def cache_dir() -> Path:
    d = os.environ.get("FUZZGPU_CACHE")
    base = Path(d) if d else Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "fuzzgpu"
    return base / "cubin"


_NVCC_ID: dict[str, str] = {}


def nvcc_path() -> str:
    """``$NVCC`` when it names a file, else nvcc where :func:`fuzzgpu.sass.find_tool` finds it (PATH,
    the nvidia wheels, /usr/local/cuda/bin); none is the environment's failure (exit 3)."""
    from .. import sass

    env = os.environ.get("NVCC")
    if env and Path(env).exists():
        return env
    found = sass.find_tool("nvcc")
    if found:
        return found
    raise MissingTool("nvcc", "install the CUDA toolkit and put its bin/ on PATH (or set NVCC to the nvcc to use)")


def _nvcc_id(nvcc: str) -> str:
    if nvcc not in _NVCC_ID:
        try:
            out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=60).stdout
        except OSError as e:
            raise EnvError(f"cannot run {nvcc}: {e}") from None
        _NVCC_ID[nvcc] = hashlib.sha256(out.encode()).hexdigest()[:16]
    return _NVCC_ID[nvcc]


def compile_cubin(
    source: str, arch: str = "sm_90", flags: Sequence[str] = DEFAULT_FLAGS, use_cache: bool = True
) -> bytes:
    """Compile one translation unit to a cubin with nvcc, through the content-hash cache."""
    return compile_module(source, arch, flags, use_cache)[0]


def compile_module(
    source: str, arch: str = "sm_90", flags: Sequence[str] = DEFAULT_FLAGS, use_cache: bool = True,
    runtime_header: str | None = codegen.CUDA_DECLS,
) -> tuple[bytes, bytes]:
    """One translation unit -> (its cubin, the PTX that cubin was assembled from, zlib-compressed):
    one nvcc call (``-keep``: the PTX is the one nvcc's ptxas read, so a SASS check of the cubin
    reads exactly what runs, :mod:`fuzzgpu.backends.ran_sass`), through the content-hash cache.
    ``runtime_header``: what nvcc pre-includes instead of cuda_runtime.h (default: the generated
    modules' declarations, :func:`fuzzgpu.sass.runtime_header_flags`); None: cuda_runtime.h."""
    from ..sass import runtime_header_flags

    nvcc = nvcc_path()
    key = hashlib.sha256("\0".join([source, arch, *flags, _nvcc_id(nvcc), runtime_header or ""]).encode()).hexdigest()
    path = cache_dir() / f"{key}.cubin"
    ptx_path = path.with_suffix(".ptx.z")
    if use_cache and path.exists() and ptx_path.exists():
        return path.read_bytes(), ptx_path.read_bytes()
    with tempfile.TemporaryDirectory(prefix="fuzzgpu-") as tmp:
        cu = Path(tmp) / MODULE_FILE
        out = Path(tmp) / "k.cubin"
        keep = Path(tmp) / "keep"
        keep.mkdir()
        cu.write_text(source)
        lean = runtime_header_flags(Path(tmp), runtime_header) if runtime_header is not None else []
        cmd = [nvcc, "-cubin", f"-arch={arch}", *flags, *lean, "-keep", "-keep-dir", str(keep), "-o", str(out), str(cu)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            msg = (r.stderr or r.stdout).strip().splitlines()
            raise CompileError(f"nvcc failed ({arch}): " + " | ".join(msg[:6]))
        data = out.read_bytes()
        ptx = zlib.compress((keep / cu.with_suffix(".ptx").name).read_bytes(), 1)
    if use_cache:
        path.parent.mkdir(parents=True, exist_ok=True)
        for f, b in ((ptx_path, ptx), (path, data)):  # the cubin last: a cubin in the cache has its PTX
            tmpf = f.with_suffix(f".tmp{os.getpid()}")
            tmpf.write_bytes(b)
            os.replace(tmpf, f)
    return data, ptx


def parse_gpu_faults(spec: str | None) -> dict[str, float]:
    """``--gpu-fault trap:0.02,hang:0.01`` -> ``{"trap": 0.02, "hang": 0.01}`` (default rate 1/16);
    see :data:`fuzzgpu.codegen.INJECTED_FAULTS`.  Raises UserError (one line) on a bad spec."""
    return parse_fault_spec(spec, sorted(codegen.INJECTED_FAULTS), "--gpu-fault")


@dataclass(frozen=True)
class Compiled:
    program: str
    cubin: bytes
    spec: codegen.HarnessSpec
    #: the PTX ``cubin`` was assembled from (zlib; :func:`compile_module`) and where the module's
    #: source has each role's code (:func:`fuzzgpu.codegen.role_regions`): what the SASS check of
    #: the harness that ran reads (:mod:`fuzzgpu.backends.ran_sass`); shared by a batch's programs
    ptx: bytes = b""
    roles: tuple[tuple[int, int, int], ...] = ()
    #: the module's lines that hold a program instruction: (line, role, instruction index) (:func:`fuzzgpu.codegen.op_lines`)
    ops: tuple[tuple[int, int, int], ...] = ()


def compile_programs(
    programs: Sequence[Program],
    arch: str = "sm_90",
    batch: int = 8,
    jobs: int | None = None,
    use_cache: bool = True,
    inject: str | None = None,
) -> list[Compiled]:
    """Harness cubins for many programs: ``batch`` programs per nvcc call (one module with many
    kernels), ``jobs`` nvcc processes at a time.  Raises :class:`codegen.Unrunnable` for a program
    the GPU cannot run (filter with :func:`codegen.unrunnable_reasons` first)."""
    for p in programs:
        codegen.check_runnable(p)
        codegen.harness_arch([p], arch)  # async.read (wgmma) only on sm_90: Unrunnable elsewhere
    chunks = [list(programs[i : i + batch]) for i in range(0, len(programs), batch)]
    jobs = jobs or os.cpu_count() or 1

    def one(chunk: list[Program]) -> list[Compiled]:
        src, specs = codegen.generate_module(chunk, inject=inject)
        # a module with an async.read program is compiled for sm_90a (wgmma.mma_async)
        cubin, ptx = compile_module(src, codegen.harness_arch(chunk, arch), use_cache=use_cache)
        roles, ops = codegen.role_regions(src), codegen.op_lines(src)
        return [Compiled(s.program, cubin, s, ptx, roles, ops) for s in specs]

    out: list[Compiled] = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as ex:
        for res in ex.map(one, chunks):
            out.extend(res)
    return out


def compile_batch(programs: Sequence[Program], arch: str, inject: str | None = None) -> dict[Program, Compiled]:
    """The harnesses of ``programs`` (all runnable, one harness arch) in one nvcc call; a batch nvcc
    refuses is split in halves and each compiled again, and a program refused on its own is left
    out (its own compile, when it runs, says why)."""
    if not programs:
        return {}
    try:
        # not kept in the cubin cache: a batch's translation unit is never compiled again
        return dict(zip(programs, compile_programs(programs, arch, batch=len(programs), jobs=1, use_cache=False, inject=inject)))
    except UserError:
        if len(programs) == 1:
            return {}
        half = len(programs) // 2
        return {**compile_batch(programs[:half], arch, inject), **compile_batch(programs[half:], arch, inject)}


# --------------------------------------------------------------------------------------------
# Running (GPU)
# --------------------------------------------------------------------------------------------


def _import_gpu() -> tuple[Any, Any]:
    try:
        import pycuda.driver as drv  # noqa: F401
    except ImportError as e:
        raise EnvError(
            f"the cuda backend needs PyCUDA and an NVIDIA driver (import pycuda.driver failed: {e}); "
            "install the 'cuda' extra on a GPU machine"
        ) from None
    try:
        from cuda.bindings import driver as cu
    except ImportError:
        try:
            from cuda import cuda as cu  # cuda-python < 12.6
        except ImportError as e:
            raise EnvError(f"the cuda backend needs cuda-bindings (cuda-python): {e}") from None
    return drv, cu


def gpu_unavailable() -> str | None:
    """Why the cuda backend cannot run here, in one line (PyCUDA or cuda-bindings not importable,
    no driver, no device), else None; opens no context (``CudaBackend()`` does)."""
    try:
        drv, _ = _import_gpu()
    except EnvError as e:
        return str(e)
    try:
        drv.init()
        n = drv.Device.count()
    except drv.Error as e:
        return f"no usable CUDA driver or device: {e}"
    return None if n else "no CUDA device"


class GpuFault(Exception):
    """The GPU faulted while running a program (a trap, an illegal address, a launch failure): the
    CUDA context is lost, and with it every later launch of this process.  A supervised worker
    reports it and exits (fuzzgpu.workers): the campaign quarantines the program and goes on with
    a fresh worker and context.  Also what a harness bug found while running is (a module symbol
    the harness declared, of the wrong size): never the user's input (UserError, exit 2), and
    ``run`` exits 3 on it."""


#: CUDA errors after which the context is unusable ("sticky" errors, CUDA programming guide)
_STICKY = ("ILLEGAL_ADDRESS", "ILLEGAL_INSTRUCTION", "LAUNCH_FAILED", "MISALIGNED_ADDRESS", "INVALID_ADDRESS_SPACE",
           "INVALID_PC", "HARDWARE_STACK_ERROR", "ASSERT", "EXCEPTION", "TRAP",
           "illegal memory access", "illegal instruction", "unspecified launch failure", "misaligned address",
           "invalid program counter", "device-side assert", "exception on the device")


def is_sticky(message: str) -> bool:
    return any(k.lower() in message.lower() for k in _STICKY)


#: how a driver error's message starts (a campaign keeps the program it refused: ``D/refused/``)
DRIVER_ERROR = "CUDA driver error"


def _ck(result: Any, call: str) -> Any:
    """Unwrap the result ``(err, *values)`` of the cuda.bindings call ``call``; raise UserError on
    an error (naming the call), and :class:`GpuFault` on one that loses the context."""
    if isinstance(result, tuple):
        err, rest = result[0], result[1:]
    else:
        err, rest = result, ()
    if int(err) != 0:
        if is_sticky(repr(err)):
            raise GpuFault(f"{DRIVER_ERROR} {err!r} from {call}")
        raise UserError(f"{DRIVER_ERROR} {err!r} from {call}")
    if not rest:
        return None
    return rest[0] if len(rest) == 1 else rest


def tensor_map_args(cu: Any, address: int, words: int) -> tuple[Any, ...]:
    """The arguments of ``cuTensorMapEncodeTiled`` for the harness's 1-D tensor map over a buffer
    of ``words`` 32-bit elements at ``address``: UINT32 elements, rank 1, a box of
    :data:`fuzzgpu.codegen.TENSOR_BOX` elements (one location's 16-byte slot: boxDim[0] * element
    size a multiple of 16 bytes), element stride 1, no interleave, no swizzle, no L2 promotion, no
    out-of-bound fill (CUDA driver API, cuTensorMapEncodeTiled: the global address 16-byte
    aligned -- cuMemAlloc gives 256 --, globalDim non-zero and at most 2^32, boxDim at most 256).

    A rank-1 map has no global stride (the driver reads ``tensorRank - 1`` of them), yet the
    array is not left empty: cuda-bindings passes an empty list as NULL, which the H200's driver
    (580.159.04) refuses with CUDA_ERROR_INVALID_VALUE.  A non-NULL array, here of one entry (the
    buffer's size in bytes, never read), is what rank-1 users of the C API pass, and the driver
    accepts it (bench/tensor_map_probe.py at 1024, 2^20 and 2^28 words:
    bench/results/tensor/h200-tensor-copies.md)."""
    return (
        cu.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_UINT32, 1, address,
        [cu.cuuint64_t(words)], [cu.cuuint64_t(4 * words)], [cu.cuuint32_t(codegen.TENSOR_BOX)], [cu.cuuint32_t(1)],
        cu.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE, cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_NONE,
        cu.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_NONE,
        cu.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
    )


class KernelArgs:
    """A kernel's parameters packed once with ctypes; ``ptr`` is the ``void**`` cuLaunchKernel
    takes, so repeated launches marshal nothing."""

    def __init__(self, values: Sequence[tuple[str, int]]) -> None:
        ctor = {"p": ctypes.c_uint64, "u32": ctypes.c_uint32, "u64": ctypes.c_uint64}
        self.vals = [ctor[t](int(v)) for t, v in values]
        self.arr = (ctypes.c_void_p * len(self.vals))(*[ctypes.addressof(v) for v in self.vals])

    @property
    def ptr(self) -> int:
        return ctypes.addressof(self.arr)


#: how the host thread waits for the GPU (CUDA driver API, cuCtxCreate: CUctx_flags), by name
CTX_SCHED = {"auto": 0x00, "spin": 0x01, "yield": 0x02, "blocking": 0x04}
CTX_SCHED_MASK = 0x07


def ctx_sched_flags(sched: str) -> int:
    """The context flag for ``sched`` (:data:`CTX_SCHED`).  ``blocking`` (the default of
    :class:`CudaBackend`): CU_CTX_SCHED_BLOCKING_SYNC, the host thread sleeps on a synchronisation
    primitive until the GPU is done.  With ``auto`` the driver spins (CU_CTX_SCHED_SPIN) while a
    process's contexts are fewer than the cores -- every campaign worker's backend is one process
    with one context, so each of K workers on one GPU spins a core on every wait, also while the GPU
    runs the other workers' kernels (bench/results/throughput/).  A flag of this process's context,
    not a setting of the GPU."""
    if sched not in CTX_SCHED:
        raise UserError(f"unknown CUDA context scheduling {sched!r} (one of {', '.join(CTX_SCHED)})")
    return CTX_SCHED[sched]


#: harnesses a builder keeps (:meth:`HarnessBuilder.prepare`): 16 of a campaign's batches of 64
PREPARED_KEPT = 1024


class HarnessBuilder:
    """What compiles a program's harness for a GPU without running it (no CUDA context): the
    arch, the injected faults, the harnesses prepared ahead in batches.  :class:`CudaBackend` runs
    them here; a campaign worker's :class:`fuzzgpu.backends.remote.RemoteCuda` sends them to the GPU
    runner process that owns the GPU's context (fuzzgpu.workers.gpu_runner)."""

    name = "cuda"
    #: :meth:`run` takes a campaign worker's :class:`properties.RunAdvice` (the model's analysis,
    #: not computed again here)
    takes_advice = True

    def __init__(self, arch: str, fault: str | None = None) -> None:
        self.arch = arch
        self.faults = parse_gpu_faults(fault)
        #: harnesses compiled ahead (:meth:`prepare`), the most recently used last: a program runs again
        #: (its profile's budget after timeouts at the short one, the tuner's configurations, more
        #: instances) from the same cubin, as its SASS check read it
        self._prepared: Recent[Program, Compiled] = Recent(PREPARED_KEPT)
        #: the SASS checks of the cubins that ran lately (a batch's serves each of its programs)
        self._ran: Recent[str, ModuleCheck] = Recent(2)

    def identity(self) -> tuple[str, str, str]:
        """(backend id, arch, toolchain) for the evidence cache and corpus entries.  The id names
        the harness's value encoding (``codegen.VALUES_VERSION``): a histogram recorded under an
        older encoding -- one that could not follow RMW arithmetic, say -- is no evidence for this
        one, so the cache does not answer with it."""
        try:
            toolchain = f"nvcc#{_nvcc_id(nvcc_path())}"
        except EnvError:  # MissingTool, or nvcc cannot run: the identity says so, the run fails later
            toolchain = "no-nvcc"
        return (f"cuda:values-v{codegen.VALUES_VERSION}", self.arch, toolchain)

    def compile(self, program: Program, inject: str | None = None) -> Compiled:
        return compile_programs([program], self.arch, batch=1, jobs=1, inject=inject)[0]

    def harness(self, program: Program) -> Compiled:
        """The program's harness: prepared ahead (kept for its next run), else compiled now."""
        c = self._prepared.get(program)
        return c if c is not None else self.compile(program, inject=self.injected(program))

    def prepare(self, programs: Sequence[Program]) -> None:
        """Compile the harnesses of ``programs`` ahead, as few nvcc calls as their fault injection
        and harness arch allow (:func:`compile_batch`); :meth:`harness` takes them from there.  A
        program the harness cannot run is left to the run (which says why); a program given twice
        is compiled once."""
        groups: dict[tuple[str | None, str], list[Program]] = {}
        for p in dict.fromkeys(programs):
            if p in self._prepared or codegen.unrunnable_reasons(p):
                continue
            try:
                arch = codegen.harness_arch([p], self.arch)
            except UserError:
                continue
            groups.setdefault((self.injected(p), arch), []).append(p)
        for (inject, _), group in groups.items():  # past PREPARED_KEPT the least recently used go (a batch's cubin with its last)
            for p, c in compile_batch(group, self.arch, inject).items():
                self._prepared.put(p, c)

    def with_ran_sass(self, program: Program, c: Compiled, h: Histogram) -> Histogram:
        """``h`` (a run of ``program`` from ``c``) with ``meta["ran_sass"]`` when the run logged an outcome the oracle
        forbids (``meta["provenance"]``: a verdict that accuses the hardware or the compiler): the
        SASS check of the cubin that ran, against the PTX it was assembled from, attributed to the
        program's roles (:mod:`fuzzgpu.backends.ran_sass`); a check that could not be made says why."""
        meta = dict(h.meta)
        if not seen_forbidden(meta):
            return h
        if not c.ptx:
            meta["ran_sass"] = {"error": "the SASS that ran was not checked: its harness was compiled without its PTX"}
        else:
            key = hashlib.sha256(c.cubin).hexdigest()
            try:
                mod = self._ran.get(key) or self._ran.put(key, check_module(c.cubin, c.ptx, f"{c.program} (harness)"))
                meta["ran_sass"] = program_check(mod, c, program).to_meta()
            except (UserError, EnvError) as e:
                meta["ran_sass"] = {"error": f"the SASS that ran was not checked: {str(e).splitlines()[0] if str(e) else e!r}"}
        return dataclasses.replace(h, meta=tuple(meta.items()))

    def injected(self, program: Program) -> str | None:
        """The fault ``--gpu-fault`` injects into this program, if any (a function of its hash)."""
        return next((f for f, rate in self.faults.items() if fault_hits(program, f, rate)), None)


#: modules a long-lived context keeps loaded (a campaign's batch cubins hold 64 harnesses each);
#: the least recently used is unloaded beyond this
MAX_MODULES = 256


class CudaBackend(HarnessBuilder):
    """Runs harness kernels on one GPU.  ``CudaBackend()`` creates a PyCUDA context on device 0,
    whose waits block (``sched``: :func:`ctx_sched_flags`)."""

    def __init__(self, device: int = 0, arch: str | None = None, fault: str | None = None, sched: str = "blocking") -> None:
        super().__init__(arch or "", fault)
        flags = ctx_sched_flags(sched)
        drv, cu = _import_gpu()
        self.drv, self.cu = drv, cu
        try:
            drv.init()
            if drv.Device.count() == 0:
                raise EnvError("no CUDA device")
            self.device = drv.Device(device)
            self.ctx = self.device.make_context(flags=flags)
        except drv.Error as e:
            raise EnvError(f"cannot open a CUDA context: {e}") from None
        _ck(cu.cuInit(0), "cuInit")
        major, minor = self.device.compute_capability()
        self.arch = arch or f"sm_{major}{minor}"
        self.stream = drv.Stream()
        self.custream = cu.CUstream(self.stream.handle)
        self._modules: dict[bytes, Any] = {}
        self._keys: dict[int, tuple[bytes, bytes]] = {}
        self.sms = self.device.get_attribute(drv.device_attribute.MULTIPROCESSOR_COUNT)
        smem_attr = getattr(drv.device_attribute, "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR", None)
        self.smem_per_sm = int(self.device.get_attribute(smem_attr)) if smem_attr is not None else 228 * 1024
        import atexit

        atexit.register(self.close)

    def close(self) -> None:
        """Pop the PyCUDA context (PyCUDA aborts the process at exit if one is left pushed)."""
        ctx, self.ctx = getattr(self, "ctx", None), None
        if ctx is not None:
            try:
                self._modules.clear()
                ctx.pop()
            except Exception:
                pass

    def context_flags(self) -> int:
        """The flags of this backend's CUDA context (cuCtxGetFlags; its scheduling:
        ``& CTX_SCHED_MASK``)."""
        return int(_ck(self.cu.cuCtxGetFlags(), "cuCtxGetFlags"))

    def describe(self) -> str:
        major, minor = self.device.compute_capability()
        inj = f"; INJECTED FAULTS {','.join(f'{k}:{v:g}' for k, v in self.faults.items())}" if self.faults else ""
        return (
            f"cuda: {self.device.name()} (sm_{major}{minor}, {self.sms} SMs), driver "
            f"{self.drv.get_driver_version()}, arch {self.arch}{inj}"
        )

    # -- modules and launches ---------------------------------------------------------------

    def _module(self, cubin: bytes) -> Any:
        """``cubin`` loaded (once) with cuModuleLoadData in the PyCUDA context.  The key is its
        hash, computed once per bytes object (a batch's cubin is megabytes: hashing it at every
        launch cost milliseconds a run in a GPU runner)."""
        known = self._keys.get(id(cubin))
        key = known[1] if known is not None and known[0] is cubin else hashlib.sha256(cubin).digest()
        if known is None or known[0] is not cubin:
            while len(self._keys) >= MAX_MODULES:
                del self._keys[next(iter(self._keys))]
            self._keys[id(cubin)] = (cubin, key)  # (the bytes kept: their id is not reused meanwhile)
        mod = self._modules.pop(key, None)
        if mod is None:
            mod = _ck(self.cu.cuModuleLoadData(cubin), "cuModuleLoadData")
            while len(self._modules) >= MAX_MODULES:  # the least recently used goes
                _ck(self.cu.cuModuleUnload(self._modules.pop(next(iter(self._modules)))), "cuModuleUnload")
        self._modules[key] = mod  # (re)inserted last: the most recently used
        return mod

    def function(self, cubin: bytes, name: str) -> Any:
        """Load ``cubin`` (once) with cuModuleLoadData in the PyCUDA context; get ``name``."""
        return _ck(self.cu.cuModuleGetFunction(self._module(cubin), name.encode()), "cuModuleGetFunction")

    def put_tensor_map(self, cubin: bytes, program: str, symbol: str, address: int, words: int) -> None:
        """Encode the harness's 1-D tensor map over the buffer at ``address`` (``words`` 32-bit
        elements; :func:`tensor_map_args`) with ``cuTensorMapEncodeTiled`` and copy it into the
        module's ``__constant__`` ``symbol`` (cuModuleGetGlobal, then a host-to-device copy) before
        the launches.  Raises :class:`codegen.Unrunnable` when a coordinate would not fit in 32
        bits (:func:`launch_geometry` refuses that before the buffers are allocated; this is its
        guard), :class:`EnvError` when cuda-bindings has no cuTensorMapEncodeTiled, and
        :class:`GpuFault` when the module's ``symbol`` is not a CUtensorMap's size: a harness bug,
        not the user's input (exit 3 in ``run``; a campaign quarantines the program and goes on
        with a fresh worker)."""
        import struct

        check_tensor_map_words(program, words)
        encode = getattr(self.cu, "cuTensorMapEncodeTiled", None)
        if encode is None:
            raise EnvError("cp.async.bulk.tensor needs cuda.bindings.driver.cuTensorMapEncodeTiled (cuda-bindings 12 or later)")
        err, tmap = encode(*tensor_map_args(self.cu, address, words))
        if int(err) != 0:  # the arguments in the message: what the driver refused is the harness's, not the program's
            raise UserError(
                f"{program}: cuTensorMapEncodeTiled refused the harness's tensor map ({err!r}): UINT32, rank 1, "
                f"globalDim [{words}], globalStrides [{4 * words}], boxDim [{codegen.TENSOR_BOX}], elementStrides [1], "
                f"global address {address:#x}")
        raw = struct.pack("<16Q", *(int(q) for q in tmap.opaque))
        mod = self._module(cubin)
        dptr, nbytes = _ck(self.cu.cuModuleGetGlobal(mod, symbol.encode()), "cuModuleGetGlobal")
        if int(nbytes) != len(raw):  # codegen declared the symbol: the harness's fault, never the program's
            raise GpuFault(f"{program}: harness bug: tensor map {symbol} is {int(nbytes)} bytes in the module, "
                           f"not the {len(raw)} of a CUtensorMap")
        self.drv.memcpy_htod(int(dptr), raw)

    def static_smem(self, func: Any) -> int:
        """A kernel's static shared memory in bytes (cuFuncGetAttribute)."""
        return int(_ck(self.cu.cuFuncGetAttribute(self.cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, func), "cuFuncGetAttribute"))

    def allow_shared(self, func: Any, nbytes: int) -> None:
        """Let ``func`` launch with ``nbytes`` of dynamic shared memory (:func:`needs_shared_opt_in`)."""
        if needs_shared_opt_in(self.static_smem(func), nbytes):
            attr = self.cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            _ck(self.cu.cuFuncSetAttribute(func, attr, nbytes), "cuFuncSetAttribute")

    def launch(self, func: Any, grid: int, block: int, args: KernelArgs, pdl: bool = False, shared: int = 0) -> None:
        cu = self.cu
        if not pdl:
            _ck(cu.cuLaunchKernel(func, grid, 1, 1, block, 1, 1, shared, self.custream, args.ptr, 0), "cuLaunchKernel")
            return
        cfg = cu.CUlaunchConfig()
        cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = grid, 1, 1
        cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = block, 1, 1
        cfg.sharedMemBytes = shared
        cfg.hStream = self.custream
        attr = cu.CUlaunchAttribute()
        attr.id = cu.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
        attr.value.programmaticStreamSerializationAllowed = 1
        cfg.attrs = [attr]
        cfg.numAttrs = 1
        _ck(cu.cuLaunchKernelEx(cfg, func, args.ptr, 0), "cuLaunchKernelEx")

    def graph(self, record: Callable[[], None]) -> Any:
        """Capture the launches ``record()`` makes on the stream into an executable graph."""
        cu = self.cu
        _ck(cu.cuStreamBeginCapture(self.custream, cu.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "cuStreamBeginCapture")
        try:
            record()
        finally:
            g = _ck(cu.cuStreamEndCapture(self.custream), "cuStreamEndCapture")
        return _ck(cu.cuGraphInstantiate(g, 0), "cuGraphInstantiate")

    def graph_launch(self, gexec: Any) -> None:
        _ck(self.cu.cuGraphLaunch(gexec, self.custream), "cuGraphLaunch")

    def sync(self) -> None:
        self.stream.synchronize()

    # -- running programs -------------------------------------------------------------------

    def run(self, program: Program, config: RunConfig | None = None, compiled: Compiled | None = None,
            watch: Callable[[dict[str, int | None]], bool] | None = None,
            advice: properties.RunAdvice | None = None) -> Histogram:
        """Run ``program``; ``watch``: the outcomes (a decoded bin) whose instances are logged with
        their provenance (:func:`provenance`); by default the oracle's forbidden ones
        (:func:`properties.forbidden_watch`), so that a campaign's corpus entry keeps them --
        from ``advice`` when the caller has the model's analysis of the program already (a
        campaign worker: :class:`properties.RunAdvice`), else computed here."""
        config = config or RunConfig()
        if watch is None:
            watch = properties.forbidden_watch(program, advice)
        c = compiled or self.harness(program)
        return self.with_ran_sass(program, c, self.run_watched(c, config, watch_bitmap(c.spec, watch)))

    def run_watched(self, c: Compiled, config: RunConfig, watched: Any) -> Histogram:
        """:meth:`run_compiled` with the watched bins' bitmap (:func:`watch_bitmap`) computed by the
        caller (a campaign worker, for the GPU runner); PyCUDA's errors (a synchronize after a
        faulting launch) as :class:`GpuFault` when they lose the context, else UserError."""
        try:
            return self._run_bitmap(c, config, watched)
        except self.drv.Error as e:
            if is_sticky(str(e)):
                raise GpuFault(str(e).strip().splitlines()[0]) from None
            raise UserError(f"{c.spec.program}: CUDA error: {e}") from None

    def run_compiled(self, c: Compiled, config: RunConfig,
                     watch: Callable[[dict[str, int | None]], bool] | None = None) -> Histogram:
        """Run a compiled harness (:meth:`_run_bitmap`), logging the instances of the outcomes ``watch``
        accepts."""
        return self._run_bitmap(c, config, watch_bitmap(c.spec, watch))

    def _run_bitmap(self, c: Compiled, config: RunConfig, watched: Any) -> Histogram:
        """Run a compiled harness.  A program with several grids launches one kernel per grid, in
        order, on one stream, per launch; grid ``g`` with ``spec.pdl[g]`` (and ``config.pdl``)
        through ``cuLaunchKernelEx`` with ``CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION``
        after grid ``g-1``, the others as plain stream-ordered launches.  Multi-grid launches are
        not replayed from a CUDA graph (PDL edges in captured graphs are left untested here)."""
        import numpy as np

        drv = self.drv
        spec = c.spec
        names = spec.kernels or (spec.kernel,)
        funcs = [self.function(c.cubin, n) for n in names]
        func = funcs[0]
        G = len(funcs)
        pdl_flags = [bool(spec.pdl[g]) if g < len(spec.pdl) else False for g in range(G)]
        use_pdl = [f and config.pdl for f in pdl_flags]
        # the occupancy cap counts the largest static shared memory of the program's kernels (a grid's)
        geo = launch_geometry(spec, config, self.smem_per_sm, max(self.static_smem(f) for f in funcs) if config.ctas_per_sm else 0)
        tc, C, nstress, grid, ninst, stride, shared = (geo.test_ctas, geo.cluster, geo.stress_ctas, geo.grid,
                                                       geo.instances_per_launch, geo.stride, geo.shared_bytes)
        launches = max(1, -(-config.instances // ninst))
        mem_words = geo.mem_words
        # class D: 128 bytes per tensor map in global memory and instance, after both halves (codegen.harness)
        mem_bytes = 2 * mem_words * 4 + spec.tensormaps * ninst * 128
        mem = drv.mem_alloc(mem_bytes)
        res = drv.mem_alloc(2 * spec.n_results * ninst * 4)
        hist = drv.mem_alloc((spec.nbins + 1) * 8)
        ctl_bytes = 8 * (PROV_LOG + PROV_CAP * (2 + spec.roles))
        ctl = drv.mem_alloc(ctl_bytes)
        scratch = drv.mem_alloc(max(1, config.stress_lines) * 32 * 4)
        nperms = 64
        perms = cta_permutations(grid // C, nperms, config.seed, config.permute_ctas)
        dperms = drv.to_device(perms)
        from .launch_params import launch_params, table_rows

        # each launch number's parameters, derived here once (backends/launch_params.py; the kernels read the
        # row of epoch & (rows - 1))
        prows = table_rows(launches)
        dptab = drv.to_device(launch_params(config.seed & 0xFFFFFFFF, geo.knobs, nperms, prows))
        for f in funcs:
            self.allow_shared(f, shared)
        for buf, n in ((mem, mem_bytes), (res, 2 * spec.n_results * ninst * 4), (hist, (spec.nbins + 1) * 8), (ctl, ctl_bytes)):
            drv.memset_d8(buf, 0, n)
        if spec.tensor_map:  # tensor copies: the 1-D map over both halves of mem, before any launch
            try:
                self.put_tensor_map(c.cubin, spec.program, spec.tensor_map, int(mem), 2 * mem_words)
            except Exception:
                for buf in (mem, res, hist, ctl, scratch):
                    buf.free()
                raise
        if watched.any():
            drv.memcpy_htod(int(ctl) + 8 * PROV_WATCH, watched)
        self.sync()
        pdl_delay = max(0, int(config.pdl_delay_ns)) if any(pdl_flags) else 0

        def args(mode: int) -> KernelArgs:
            return KernelArgs(codegen.kernel_args(dict(
                mem=int(mem), res=int(res), hist=int(hist), ctl=int(ctl), perms=int(dperms), scratch=int(scratch),
                ntest=tc, stride=stride, spin=geo.spin, barrier=geo.barrier, mode=mode, scratch_lines=geo.stress_lines,
                budget=config.budget, epoch0=0, pdl_delay=pdl_delay, epoch_arg=NO_EPOCH, knobs=geo.knobs,
                ptab=int(dptab), pmask=prows - 1)))

        a_test, a_check, a_prime = args(0 if config.inline_check else 3), args(1), args(2)
        launched = [0]

        def at(a: KernelArgs, epoch: int) -> KernelArgs:
            if config.host_epoch:  # cuLaunchKernel copies the arguments: the next launch may change them
                a.vals[EPOCH_ARG].value = epoch
            return a

        def one() -> None:
            n = launched[0]
            if spec.needs_prime:
                self.launch(func, grid, geo.cta_threads, at(a_prime, n), shared=shared)
            for g, f in enumerate(funcs):
                self.launch(f, grid, geo.cta_threads, at(a_test, n), pdl=use_pdl[g], shared=shared)
            if not config.inline_check:
                self.launch(func, grid, geo.cta_threads, at(a_check, n + 1), shared=shared)
            launched[0] = n + 1

        per = 64

        def record() -> None:  # one graph: ``per`` rounds of launches
            for _ in range(per):
                one()

        gexec = (
            self.graph(record)
            if config.graphs and not config.host_epoch and launches >= per and G == 1
            else None
        )
        t0 = time.perf_counter()
        busy = (drv.Event(), drv.Event())  # the GPU's time on this harness: its launches, first to last
        busy[0].record(self.stream)
        done = 0
        h = np.zeros(spec.nbins + 1, dtype=np.uint64)
        asked, stopped = launches, ""
        keep = -(-config.timeout_stop // ninst) if config.timeout_stop > 0 else launches
        if keep < launches:  # RunConfig.timeout_stop: the first launch judged (the next classifies it inline), then read
            while done < min(launches, 2 if config.inline_check else 1):
                one()
                done += 1
            self.sync()
            drv.memcpy_dtoh(h, hist)
            judged, timed_out = int(h.sum()), int(h[spec.nbins])
            if mostly_timed_out(timed_out, judged):
                launches = max(done, keep)
                stopped = (f"{launches * ninst} of {asked * ninst} instances run: {timed_out} of the first launch's "
                           f"{judged} timed out (RunConfig.timeout_stop {config.timeout_stop})")
        if gexec is not None:
            while done + per <= launches:
                self.graph_launch(gexec)
                done += per
        while done < launches:
            one()
            done += 1
        if config.inline_check:
            self.launch(func, grid, geo.cta_threads, at(a_check, launches), shared=shared)  # classify the last launch
        busy[1].record(self.stream)
        self.sync()
        drv.memcpy_dtoh(h, hist)
        secs = time.perf_counter() - t0
        gpu_s = busy[1].time_since(busy[0]) / 1e3
        epoch = np.zeros(ctl_bytes // 8, dtype=np.uint64)
        drv.memcpy_dtoh(epoch, ctl)
        prov = provenance(spec, epoch, geo.cta_threads) if watched.any() else None
        total = int(h.sum())
        expect = launches * ninst
        counts = []
        for b in np.nonzero(h[: spec.nbins])[0]:
            d = spec.decode_bin(int(b))
            counts.append((tuple(d.items()), int(h[b])))
        counts.sort(key=lambda oc: -oc[1])
        for buf in (mem, res, hist, ctl, scratch, dperms, dptab):
            buf.free()
        meta = {
            "launches": launches,
            "instances_per_launch": ninst,
            "cta_threads": geo.cta_threads,
            "grid": grid,
            "stress_ctas": nstress,
            "cluster": C,
            "epoch_after": int(epoch[0]),
            "sum_ok": total == expect,
            "kernel": spec.kernel,
            "arch": self.arch,
            "device": self.device.name(),
            "stride": stride,
            "dynamic_shared_bytes": shared,
            "values": spec.values,  # the value encoding: tagged, or exact (primed before each launch)
            "gpu_s": gpu_s,  # CUDA events around the launches: the campaign's GPU busy share
        }
        if prov is not None:
            meta["provenance"] = prov
        if stopped:
            meta["stopped_early"] = stopped
        if G > 1:
            meta.update({
                "grids": G,
                "pdl_grids": [g for g in range(G) if pdl_flags[g]],
                "pdl_launch": bool(config.pdl),
                "pdl_delay_ns": pdl_delay,
                "us_per_launch": round(secs / launches * 1e6, 2),
            })
        if total != expect or int(epoch[0]) != launches:
            raise UserError(
                f"{spec.program}: histogram check failed: {total} counted, {expect} expected, "
                f"epoch {int(epoch[0])} after {launches} launches"
            )
        return Histogram(
            keys=tuple(k.key for k in spec.keys),
            counts=tuple(counts),
            instances=expect,
            timeouts=int(h[spec.nbins]),
            seconds=secs,
            backend=self.name,
            meta=tuple(meta.items()),
        )


__all__ = ["PROV_CAP", "PROV_COUNT", "PROV_LOG", "PROV_WATCH", "decode_where", "provenance", "watch_bitmap", "HarnessBuilder", "MAX_MODULES", "CTX_SCHED", "CTX_SCHED_MASK", "ctx_sched_flags", "tensor_map_args", "CudaBackend", "compile_cubin", "compile_module", "compile_programs", "Compiled", "KernelArgs", "cache_dir", "CompileError",
           "GpuFault", "is_sticky", "parse_gpu_faults"]
