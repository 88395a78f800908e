// CUTLASS's ClusterBarrier::wait shape (a try_wait with a suspend-time hint in a retry loop: ptxas writes a first
// check, then an out-of-line loop `TRYWAIT; @!P0 NANOSLEEP; @!P0 PHASECHK; @!P0 BRA`) unrolled three times, in a
// warp role ptxas lays out after the other role's EXIT.  The retry loops carry the wait's source line, the first
// checks may not; each wait is paired with its first check and its retry loop's checks, and every access after them
// is guarded: fully checked, clean.
#include <cstdint>
extern __shared__ __align__(16) uint8_t smem[];
__device__ __forceinline__ void wait_hint(uint32_t bar, uint32_t phase) {
  asm volatile("{ .reg .pred P1; LAB_WAIT: mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1, %2; @P1 bra DONE; "
               "bra LAB_WAIT; DONE: }" :: "r"(bar), "r"(phase), "r"(10000000) : "memory");
}
__device__ __forceinline__ unsigned ld_shared(uint32_t a) {
  unsigned r;
  asm volatile("ld.shared.u32 %0, [%1];" : "=r"(r) : "r"(a) : "memory");
  return r;
}
__global__ void k(int* out, int n) {
  uint32_t base = (uint32_t)__cvta_generic_to_shared(smem);
  uint32_t bar = base + 8 * (n & 1);
  int warp = threadIdx.x / 32;
  if (warp == 0) {
    unsigned acc = 0;
#pragma unroll
    for (int s = 0; s < 3; ++s) {
      wait_hint(bar + 8 * s, n & 1);
      acc += ld_shared(base + 64 + 4 * s);
    }
    out[threadIdx.x] = acc;
  } else {
#pragma unroll 1
    for (int i = 0; i < n; ++i) {
      wait_hint(bar + 32, i & 1);
      asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" :: "r"(bar + 40) : "memory");
    }
  }
}
