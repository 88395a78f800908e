// multimem.ld_reduce / multimem.st / multimem.red (NVLink SHARP all-reduce kernels: TransformerEngine's
// userbuffers), read by tests/sass/test_sass_multimem.py; captured with nvcc 13.0.88:
// nvcc -arch=sm_90a -O3 -ptx / -cubin, nvdisasm -c
#include <cstdint>
__global__ void k(const int* flag, uint32_t* mc, uint4* mc4, uint32_t* out) {
  int f;
  asm volatile("ld.relaxed.sys.global.u32 %0, [%1];" : "=r"(f) : "l"(flag) : "memory");
  asm volatile("fence.acq_rel.sys;" ::: "memory");
  uint32_t v;
  asm volatile("multimem.ld_reduce.global.add.u32 %0, [%1];" : "=r"(v) : "l"(mc) : "memory");
  uint4 w;
  asm volatile("multimem.ld_reduce.relaxed.sys.global.add.v4.f32 {%0,%1,%2,%3}, [%4];"
               : "=r"(w.x), "=r"(w.y), "=r"(w.z), "=r"(w.w) : "l"(mc4) : "memory");
  asm volatile("multimem.st.global.v4.f32 [%0], {%1,%2,%3,%4};" :: "l"(mc4 + 1), "r"(w.x), "r"(w.y), "r"(w.z), "r"(w.w) : "memory");
  asm volatile("multimem.red.release.sys.global.add.u32 [%0], %1;" :: "l"(mc + 64), "r"(v + (uint32_t)f) : "memory");
  out[threadIdx.x] = v;
}
