// Two __ldg of one type at neighbouring lines, one before an mbarrier wait and one after it.  ptxas
// keys a line-table row on the innermost location alone (sm_32_intrinsics.hpp's line of the int
// __ldg): when the two LDGs are adjacent in the SASS they share one row, the first one's, inlining
// chain included, so the SASS of one line carries the other's (as FlashMLA's combine kernel, lines
// 36 and 37).  coarse_rows.sh moves the second load above the wait in the PTX by hand.
#include <cstdint>
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t phase) {
  asm volatile("{\n.reg .pred P1;\nLAB_WAIT:\n"
               "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n"
               "@P1 bra DONE;\nbra LAB_WAIT;\nDONE:\n}\n"
               :: "r"(bar), "r"(phase) : "memory");
}
__global__ void k(const int* __restrict__ p, int* out, int phase) {
  __shared__ uint64_t bar;
  uint32_t b = (uint32_t)__cvta_generic_to_shared(&bar);
  const int s = __ldg(p + blockIdx.x);
  mbar_wait(b, phase);
  const int e = __ldg(p + blockIdx.x + 1);
  out[threadIdx.x] = e - s;
}
