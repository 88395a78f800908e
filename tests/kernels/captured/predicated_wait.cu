// CUTLASS's sm100 epilogue shape: `if (need) token = try_wait(bar)` (ptxas: `@P1 SYNCS.PHASECHK`), then in the loop
// `if (need) { if (!token) wait(bar); read }` and a store to shared memory.  Where `need` is false the phase check
// does not run and nothing is waited for; where it is true the store follows the test of the token.  ptxas skips the
// wait with `BRA.U !UP1`, a copy of the guard the checker does not know for one: its permitted-hazard on the store
// (0x240) is false (docs/sass.md, Limits); with a branch on P1 itself, as in CUTLASS example 81, there is none.
#include <cstdint>
extern __shared__ __align__(16) uint8_t smem[];
__global__ void k(int* out, int n, int need) {
  uint32_t base = (uint32_t)__cvta_generic_to_shared(smem);
  uint32_t bar = base + 8 * (n & 1);
  unsigned token = 1;
  if (need) {
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }" : "=r"(token) : "r"(bar) : "memory");
  }
  int acc = 0;
#pragma unroll 1
  for (int i = 0; i < n; ++i) {
    if (need) {
      if (!token) {
        asm volatile("{ .reg .pred p; W: mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%0], 0; @!p bra W; }" :: "r"(bar) : "memory");
        token = 1;
      }
      unsigned v;
      asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(base + 64 + 4 * (i & 7)) : "memory");
      acc += v;
    }
    asm volatile("st.shared.u32 [%0], %1;" :: "r"(base + 128 + 4 * (i & 7)), "r"(acc) : "memory");
  }
  out[threadIdx.x] = acc;
}
