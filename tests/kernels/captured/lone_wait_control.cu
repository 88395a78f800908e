// The control of lone_wait_after_exit.cu: a lone mbarrier.try_wait (its result only stored) followed by an
// ld.shared, with no other warp role: its phase check is paired and the access after it is unguarded (forbidden).
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
  }
}
