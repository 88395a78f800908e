"""``async.read`` on the GPU: a wgmma operand read (sm_90a) observed through the accumulator.

An ``async.read r, s`` of the IR is an async-proxy read of shared memory -- what a wgmma or tcgen05
operand read is.  The harness runs it as one ``wgmma.mma_async.sync.aligned.m64n16k32.s32.u8.u8``
per warpgroup (128 threads issue it together), with A the *tile* of the location (every instance's
word of ``s`` in that warpgroup's tile) and B a constant selection matrix, and reads the word back
out of the accumulator:

* **The tile.**  A is 64 rows x 32 u8 elements, K-major, no swizzle: core matrices of 8 rows x 16
  bytes, 128 bytes each, adjacent in K at ``LBO`` = 128 bytes, adjacent in M at ``SBO`` = 256
  bytes (PTX ISA, wgmma "Matrix Descriptor Format": the leading dimension byte offset is the
  distance between core matrices adjacent in K, the stride dimension byte offset between those
  adjacent in M/N).  A tile is 2 KB, holding 128 sixteen-byte *slots*: the slot of hardware thread
  ``q`` of the warpgroup (warp ``w``, lane ``l``, ``c = l % 4``) is row ``16w + l/4 + 8*(c/2)``,
  K bytes ``16*(c%2)`` .. ``+15``, byte offset ``512w + 128c + 16*(l/4)``
  (:func:`slot_offset`).  The litmus word is the first 4 bytes of the slot; the harness puts the
  location's word of the instance whose *reading role* that thread plays there, so the wgmma of a
  warpgroup reads exactly the words its 128 reading roles read, each its own instance's.
* **B** (32 x 16 u8, K-major, same strides, :func:`b_bytes`) is one-hot: column ``n`` selects K
  byte ``pi(n) = 16*(c%2) + 2*(n/8) + n%2`` with ``c = (n%8)/2``, so ``D[m][n] = A[m][pi(n)]``
  exactly (u8 x {0,1} summed in s32).
* **The accumulator** of m64nNk32 (PTX ISA, wgmma "Register Fragments", the figure for D): thread
  (warp ``w``, lane ``l``) holds ``d[4i + b]`` = ``D[16w + l/4][8i + 2(l%4) + b]`` and
  ``d[4i + 2 + b]`` = ``D[16w + l/4 + 8][...]``, ``i`` in 0..1, ``b`` in 0..1.  With B as above,
  byte ``2i + b`` of the thread's own slot word is ``d[4i + b]`` (``c < 2``) or ``d[4i + 2 + b]``
  (``c >= 2``): no other thread's registers, no shuffle, no barrier the program does not have.

Each shared location of such a program lives in two tiles (one per warpgroup of the 256-thread
CTA), 4 KB per location, B after them; mbarrier objects and bulk-copy slots keep their 16-byte,
16-byte-aligned slots.  ``tests/codegen/test_wgmma.py`` checks these maps with a numpy model of the
descriptor and the fragment layout.
"""

from __future__ import annotations

from typing import Sequence

#: bytes of one wgmma A tile (64 rows x 32 u8) and of one slot in it
TILE_BYTES = 2048
SLOT_BYTES = 16
#: core-matrix strides of the tile and of B (K-major, no swizzle), bytes
LBO = 128
SBO = 256
#: warpgroups per 256-thread harness CTA; words of one location's tiles
WARPGROUPS = 2
LOC_WORDS = WARPGROUPS * TILE_BYTES // 4
#: B: 32 (K) x 16 (N) u8
B_BYTES = 512
#: shared memory per location (its two tiles) bounds how many shared locations such a program has
MAX_SHARED_LOCATIONS = 6
WGMMA_SHAPE = "m64n16k32"


def slot_offset(q: int) -> int:
    """Byte offset, in its warpgroup's tile, of the slot that thread ``q`` (0..127) reads."""
    w, lane = (q >> 5) & 3, q & 31
    return 512 * w + 128 * (lane & 3) + 16 * (lane >> 2)


def tile_offset(row: int, kbyte: int) -> int:
    """Byte offset of element (row, K byte) of a 64 x 32-byte K-major tile (no swizzle)."""
    return (row // 8) * SBO + (kbyte // 16) * LBO + (row % 8) * 16 + kbyte % 16


def b_select(n: int) -> int:
    """The K byte that column ``n`` of B selects."""
    c = (n % 8) // 2
    return 16 * (c % 2) + 2 * (n // 8) + n % 2


def b_bytes() -> bytes:
    """B as it lies in shared memory (N rows of 32 K bytes, core matrices as the tile's)."""
    out = bytearray(B_BYTES)
    for n in range(16):
        out[tile_offset(n, b_select(n))] = 1
    return bytes(out)


def b_words() -> list[int]:
    """B as 128 little-endian 32-bit words (the harness writes them with generic stores)."""
    b = b_bytes()
    return [int.from_bytes(b[4 * i : 4 * i + 4], "little") for i in range(B_BYTES // 4)]


def descriptor(byte_addr: int) -> int:
    """The 64-bit matrix descriptor of a tile at shared byte address ``byte_addr`` (Python mirror
    of the device's ``fz_wg_desc``)."""
    return ((byte_addr & 0x3FFFF) >> 4) | ((LBO >> 4) << 16) | ((SBO >> 4) << 32)


#: device helpers (emitted once per translation unit that has an async.read program)
HELPERS = r"""
#ifndef FUZZGPU_WGMMA_HELPERS
#define FUZZGPU_WGMMA_HELPERS
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "fuzzgpu: async.read runs as wgmma.mma_async, which only sm_90a has; compile this module for sm_90a"
#endif
// async.read as wgmma (fuzzgpu/codegen_wgmma.py): slot of hardware thread q (0..255) of the CTA
// in its warpgroup's 2 KB tile, in words
__device__ __forceinline__ unsigned fz_wg_word(unsigned q) {
  return (q >> 7) * %(tile_words)du + (((q >> 5) & 3u) * 512u + (q & 3u) * 128u + ((q >> 2) & 7u) * 16u) / 4u;
}
// K-major, no swizzle: LBO %(lbo)d bytes (core matrices adjacent in K), SBO %(sbo)d (adjacent in M/N)
__device__ __forceinline__ unsigned long long fz_wg_desc(unsigned saddr) {
  return (unsigned long long)((saddr & 0x3FFFFu) >> 4) | ((unsigned long long)(%(lbo)du >> 4) << 16)
       | ((unsigned long long)(%(sbo)du >> 4) << 32);
}
__device__ const unsigned fz_wg_b[%(bw)du] = {%(bwords)s};
// one wgmma of the warpgroup: A = the tile at ``tile``, B at ``bmat``; returns this thread's slot word
__device__ __forceinline__ unsigned fz_wg_read(unsigned tile, unsigned bmat) {
  unsigned d0 = 0u, d1 = 0u, d2 = 0u, d3 = 0u, d4 = 0u, d5 = 0u, d6 = 0u, d7 = 0u;
  const unsigned long long da = fz_wg_desc(tile), db = fz_wg_desc(bmat);
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  // scale-d false: D = A x B (the accumulator's old value is not read)
  asm volatile("{ .reg .pred p_; setp.ne.b32 p_, %%10, 0;\n\t"
               "wgmma.mma_async.sync.aligned.%(shape)s.s32.u8.u8 {%%0, %%1, %%2, %%3, %%4, %%5, %%6, %%7}, %%8, %%9, p_; }"
               : "+r"(d0), "+r"(d1), "+r"(d2), "+r"(d3), "+r"(d4), "+r"(d5), "+r"(d6), "+r"(d7)
               : "l"(da), "l"(db), "r"(0u) : "memory");
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;"
               : "+r"(d0), "+r"(d1), "+r"(d2), "+r"(d3), "+r"(d4), "+r"(d5), "+r"(d6), "+r"(d7) :: "memory");
  const bool hi = (threadIdx.x & 2u) != 0u;  // lane %% 4 >= 2: the slot is in the thread's second row
  const unsigned b0 = hi ? d2 : d0, b1 = hi ? d3 : d1, b2 = hi ? d6 : d4, b3 = hi ? d7 : d5;
  return (b0 & 255u) | ((b1 & 255u) << 8) | ((b2 & 255u) << 16) | ((b3 & 255u) << 24);
}
#endif
"""


def helpers() -> str:
    words = ", ".join(f"0x{w:08x}u" for w in b_words())
    return HELPERS % {"tile_words": TILE_BYTES // 4, "lbo": LBO, "sbo": SBO, "bw": B_BYTES // 4,
                      "bwords": words, "shape": WGMMA_SHAPE}


def reasons(n_shared: int, loc: str, async_roles: Sequence[str], control_flow: Sequence[str], dsm: bool) -> list[str]:
    """Why a program with ``async.read`` cannot run as wgmma in the harness (empty: it can).
    ``async_roles``: the threads that read location ``loc`` with async.read; ``control_flow``:
    threads with a label or branch; ``n_shared``: its shared locations."""
    out: list[str] = []
    if len(async_roles) > 1:
        out.append(f"async.read of {loc} in threads {', '.join(async_roles)}: a location's wgmma tiles hold each "
                   "instance's word in the slot of one reading thread")
    for t in control_flow:
        out.append(f"{t}: control flow in a program with async.read (the wgmma is issued by a whole warpgroup "
                   "together; divergent roles could not)")
    if n_shared > MAX_SHARED_LOCATIONS:
        out.append(f"{n_shared} shared locations with async.read (at most {MAX_SHARED_LOCATIONS}: 4 KB of wgmma "
                   "tiles each)")
    if dsm:
        out.append("async.read in a program with distributed shared memory (not mapped onto wgmma tiles)")
    return out


#: the mapping self-check's pad word (the 12 bytes of a slot after the litmus word)
PAD_WORD = 0xFFFFFFFF


def selftest_word(q: int, j: int) -> int:
    """The word the self-check kernel puts in the slot of thread ``q`` of location ``j``."""
    return 0xA5000000 | (j << 16) | (q << 4) | 0x5


def selftest_source(n_locations: int = 2) -> str:
    """A stand-alone kernel (``fz_wg_selftest``, 256 threads, one CTA) that checks the tile and
    accumulator maps on the hardware: every slot of ``n_locations`` locations gets a distinct word
    (the pads all-ones bytes, so a wrong column of B shows), the initial state is fenced to the
    async proxy, and thread ``q`` writes what its wgmma of location j returned to
    ``out[j * 256 + q]``; expected: :func:`selftest_word`."""
    return helpers() + r"""
extern "C" __global__ void __launch_bounds__(256) fz_wg_selftest(unsigned* out) {
  constexpr unsigned NL = %(nl)du;
  __shared__ __align__(128) unsigned fz_sm[NL * %(lw)du + %(bw)du];
  const unsigned t = threadIdx.x;
  for (unsigned i = t; i < NL * %(lw)du; i += 256u) fz_sm[i] = 0x%(pad)08xu;
  __syncthreads();
  for (unsigned j = 0; j < NL; ++j) fz_sm[j * %(lw)du + fz_wg_word(t)] = 0xA5000000u | (j << 16) | (t << 4) | 0x5u;
  if (t < %(bw)du) fz_sm[NL * %(lw)du + t] = fz_wg_b[t];
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  for (unsigned j = 0; j < NL; ++j) {
    const unsigned tile = (unsigned)__cvta_generic_to_shared(fz_sm + j * %(lw)du + (t >> 7) * %(tw)du);
    out[j * 256u + t] = fz_wg_read(tile, (unsigned)__cvta_generic_to_shared(fz_sm + NL * %(lw)du));
  }
}
""" % {"nl": n_locations, "lw": LOC_WORDS, "bw": B_BYTES // 4, "tw": TILE_BYTES // 4, "pad": PAD_WORD}
