// A lone mbarrier.try_wait (its result only stored) followed by an ld.shared, in the warp role ptxas lays out after
// the other role's EXIT: the token order of the code before the first EXIT pairs no phase check with the wait, its
// source line does (TRYWAIT 0x230, the only check of line 15).  The LDS at 0x240 follows it with no branch on its
// predicate: forbidden unguarded-wait, as in lone_wait_control.cu (a hostile review of Blackwell kernels, FlashMLA
// 9241ae3 sm100 decode has the shape; the checker first skipped the wait, then said it was not checked).
#include <cstdint>
extern __shared__ __align__(16) uint8_t smem[];
__global__ void k(int* out, int n) {
  uint32_t base = (uint32_t)__cvta_generic_to_shared(smem);
  uint32_t bar = base + 8 * (n & 1);                  // a register address: no pairing by operand
  uint32_t xs = base + 64;
  int warp = threadIdx.x / 32;
  if (warp == 0) {
    unsigned r0, r1;
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }" : "=r"(r0) : "r"(bar) : "memory");
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(r1) : "r"(xs) : "memory");
    out[threadIdx.x] = r0 * 2 + r1;
  } else {
#pragma unroll 1
    for (int i = 0; i < n; ++i) {
      asm volatile("{ .reg .pred p; W: mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%0], %1; @!p bra W; }" :: "r"(bar + 16), "r"(i & 1) : "memory");
      asm volatile("{ .reg .pred p; W: mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%0], %1; @!p bra W; }" :: "r"(bar + 24), "r"(i & 1) : "memory");
      asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" :: "r"(bar + 32) : "memory");
      asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" :: "r"(bar + 40) : "memory");
    }
  }
}
