// issue 27, corr3 by hand, outside the harness: P0 (fence.sc.cta; ld.volatile r1,y; ld.relaxed.sys
// r2,y), P1 in another CTA (ld.relaxed.sys x), P2 in P0's CTA, the warp before (fence.sc.sys;
// st.relaxed.sys y,6).  Every thread plays all three roles, each for a different instance, as the
// harness does.  "same": both loads through one address; "offset": the second through
// y + fz_zero (a run-time 0), as the harness emitted it before the fix.  y reset to 0 per launch.
template <bool OFFSET>
__device__ void corr3(unsigned* y, const unsigned* x, unsigned* out, unsigned spin, unsigned seed) {
  const unsigned t = threadIdx.x, B = blockIdx.x, nB = gridDim.x;
  const unsigned zero = (unsigned)((unsigned long long)y >> 63);
  const unsigned a = B * 256u + t;                                   // P0's instance
  const unsigned b = ((B + 1u + (seed % (nB - 1u))) % nB) * 256u + t; // P1's: another CTA
  const unsigned c = B * 256u + ((t + 32u) & 255u);                  // P2's: the next warp's P0
  unsigned h = (seed ^ (B * 8u + (t >> 5))) * 0x9e3779b9u; h ^= h >> 15; h *= 0x85ebca6bu; h ^= h >> 13;
  if (spin) { unsigned s0 = clock(); while (clock() - s0 < h % spin) { } }
  unsigned r1, r2, r0;
  asm volatile("fence.sc.cta;" ::: "memory");
  asm volatile("ld.volatile.global.u32 %0, [%1];" : "=r"(r1) : "l"(y + a) : "memory");
  asm volatile("ld.relaxed.sys.global.u32 %0, [%1];" : "=r"(r2) : "l"(OFFSET ? y + a + zero : y + a) : "memory");
  asm volatile("ld.relaxed.sys.global.u32 %0, [%1];" : "=r"(r0) : "l"(x + b) : "memory");
  asm volatile("fence.sc.sys;" ::: "memory");
  asm volatile("st.relaxed.sys.global.u32 [%0], %1;" :: "l"(y + c), "r"(6u) : "memory");
  unsigned sm; asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  out[3u * a] = r1; out[3u * a + 1u] = r2; out[3u * a + 2u] = (sm << 24) | (r0 & 0xffffffu);
}
extern "C" __global__ void __launch_bounds__(256) corr3_same(unsigned* y, const unsigned* x, unsigned* out, unsigned spin, unsigned seed) {
  corr3<false>(y, x, out, spin, seed);
}
extern "C" __global__ void __launch_bounds__(256) corr3_offset(unsigned* y, const unsigned* x, unsigned* out, unsigned spin, unsigned seed) {
  corr3<true>(y, x, out, spin, seed);
}
