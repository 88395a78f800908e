// four adjacent stores, the last .release.gpu: ptxas 13.0 (sm_90a) writes all four as one STG.E.128.STRONG.GPU after
// the release's MEMBAR (tests/sass/test_sass_hostile_inputs.py)
#include <cstdint>
__global__ void k(uint32_t *mc, uint32_t *out) {
  uint32_t a, b, c, d;
  asm volatile("multimem.ld_reduce.global.add.u32 %0, [%1];" : "=r"(a) : "l"(mc) : "memory");
  asm volatile("multimem.ld_reduce.weak.global.add.u32 %0, [%1];" : "=r"(b) : "l"(mc+1) : "memory");
  asm volatile("multimem.ld_reduce.relaxed.gpu.global.add.u32 %0, [%1];" : "=r"(c) : "l"(mc+2) : "memory");
  asm volatile("multimem.ld_reduce.acquire.sys.global.add.u32 %0, [%1];" : "=r"(d) : "l"(mc+3) : "memory");
  asm volatile("st.global.u32 [%0], %1;" :: "l"(mc+4), "r"(a) : "memory");
  asm volatile("st.weak.global.u32 [%0], %1;" :: "l"(mc+5), "r"(b) : "memory");
  asm volatile("st.relaxed.cta.global.u32 [%0], %1;" :: "l"(mc+6), "r"(c) : "memory");
  asm volatile("st.release.gpu.global.u32 [%0], %1;" :: "l"(mc+7), "r"(d) : "memory");
  asm volatile("multimem.red.global.add.u32 [%0], %1;" :: "l"(mc+8), "r"(a) : "memory");
  asm volatile("multimem.red.relaxed.cta.global.add.u32 [%0], %1;" :: "l"(mc+9), "r"(b) : "memory");
  asm volatile("multimem.red.release.sys.global.add.u32 [%0], %1;" :: "l"(mc+10), "r"(c) : "memory");
  asm volatile("multimem.ld_reduce.global.add.v4.f32 {%0,%1,%2,%3}, [%4];" : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "l"(mc+16) : "memory");
  out[0] = a + b + c + d;
}
