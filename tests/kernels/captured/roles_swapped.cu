// Mechanism (b) of the Blackwell review: four warp roles in a switch; ptxas lays them out in another order than the
// PTX (PTX: case 1, 2, 3, 0; SASS: case 1, 0, 2, 3).  The token order of the code before the first EXIT paired case
// 2's loop wait with case 0's lone wait's check (0x270): the forbidden access after it was blamed on a wait its own
// retry loop guards, and case 0's and case 3's lone waits were not checked.  The line table refutes that pairing; by
// source line each wait gets its own check: two forbidden unguarded-wait, case 0's (TRYWAIT 0x270, LDS 0x280) and
// case 3's (0x4a0, 0x4b0); the loop waits theirs (0x1a0, 0x3d0), whose retry loops guard them.
#include <cstdint>
extern __shared__ __align__(16) uint8_t smem[];
__device__ __forceinline__ unsigned lone_wait(uint32_t bar) {
  unsigned r;
  asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }" : "=r"(r) : "r"(bar) : "memory");
  return r;
}
__device__ __forceinline__ void loop_wait(uint32_t bar, int ph) {
  asm volatile("{ .reg .pred p; W: mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%0], %1; @!p bra W; }" :: "r"(bar), "r"(ph) : "memory");
}
__device__ __forceinline__ unsigned ld_shared(uint32_t a) {
  unsigned r;
  asm volatile("ld.shared.u32 %0, [%1];" : "=r"(r) : "r"(a) : "memory");
  return r;
}
__device__ __forceinline__ void arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" :: "r"(bar) : "memory");
}
__global__ void k(int* out, int n) {
  uint32_t base = (uint32_t)__cvta_generic_to_shared(smem);
  uint32_t bar = base + 8 * (n & 1);
  int warp = threadIdx.x / 32;
  switch (warp) {
  case 0: { unsigned r0 = lone_wait(bar); unsigned r1 = ld_shared(base + 64); out[threadIdx.x] = r0 * 2 + r1; break; }
  case 1:
#pragma unroll 1
    for (int i = 0; i < n; ++i) { loop_wait(bar + 16, i & 1); arrive(bar + 24); }
    break;
  case 2:
#pragma unroll 1
    for (int i = 0; i < n; ++i) { loop_wait(bar + 24, i & 1); arrive(bar + 16); }
    break;
  case 3: { unsigned r0 = lone_wait(bar + 32); unsigned r1 = ld_shared(base + 96); out[threadIdx.x + 64] = r0 * 2 + r1; break; }
  default: break;
  }
}
