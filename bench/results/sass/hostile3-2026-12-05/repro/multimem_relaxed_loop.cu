// multimem.ld_reduce with an explicit .relaxed.sys in a grid-stride loop (mscclpp allreduce6 shape)
__device__ __forceinline__ float ldred(float* p) {
  float v;
  asm("multimem.ld_reduce.relaxed.sys.global.add.f32 %0, [%1];" : "=f"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void st(float* p, float v) {
  asm volatile("multimem.st.relaxed.sys.global.f32 [%0], %1;" ::"l"(p), "f"(v) : "memory");
}
extern "C" __global__ void k(float* mc, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    st(mc + i, ldred(mc + i));
  }
}
