// Three copies of one lone mbarrier.try_wait (an inlined helper in an unrolled loop: one source chain for the three),
// each followed by an ld.shared, in a warp role ptxas lays out after the other role's EXIT: no token order pairs them,
// and their source line is the three's.  Paired in order of dominance (each copy runs before the next on every path,
// on both graphs): three forbidden unguarded-wait, one per copy (TRYWAIT 0x200/0x220/0x250, LDS 0x210/0x230/0x260).
#include <cstdint>
extern __shared__ __align__(16) uint8_t smem[];
__device__ __forceinline__ unsigned lone_wait(uint32_t bar) {
  unsigned r;
  asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }" : "=r"(r) : "r"(bar) : "memory");
  return r;
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
      acc += lone_wait(bar + 8 * s);
      acc += ld_shared(base + 64 + 4 * s);
    }
    out[threadIdx.x] = acc;
  } else {
#pragma unroll 1
    for (int i = 0; i < n; ++i) {
      asm volatile("{ .reg .pred p; W: mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%0], %1; @!p bra W; }" :: "r"(bar + 32), "r"(i & 1) : "memory");
      asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" :: "r"(bar + 40) : "memory");
    }
  }
}
