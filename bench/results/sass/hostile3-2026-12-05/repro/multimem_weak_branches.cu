// Three multimem.ld_reduce.relaxed.sys in three branches, each in a grid-stride loop
// (the shape of mscclpp python/mscclpp_benchmark/allreduce.cu allreduce6 at 1f5f065).
// Expected: clean (nothing moves).  Observed: "not fully checked: SASS LDGMC operation(s) with no PTX LDGMC".
template <int V> struct vec { float w[V]; };
__device__ __forceinline__ vec<1> ldred(vec<1>* p) { vec<1> v;
  asm("multimem.ld_reduce.global.add.f32 %0, [%1];" : "=f"(v.w[0]) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ vec<2> ldred(vec<2>* p) { vec<2> v;
  asm("multimem.ld_reduce.global.add.v2.f32 {%0,%1}, [%2];" : "=f"(v.w[0]), "=f"(v.w[1]) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ vec<4> ldred(vec<4>* p) { vec<4> v;
  asm("multimem.ld_reduce.global.add.v4.f32 {%0,%1,%2,%3}, [%4];" : "=f"(v.w[0]), "=f"(v.w[1]), "=f"(v.w[2]), "=f"(v.w[3]) : "l"(p) : "memory"); return v; }
template <int V> __device__ void body(float* mc, float* out, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    vec<V> v = ldred(reinterpret_cast<vec<V>*>(mc) + i);
    reinterpret_cast<vec<V>*>(out)[i] = v;
  }
}
extern "C" __global__ void k(float* mc, float* out, size_t n, int vs) {
  if (vs == 4) body<4>(mc, out, n);
  else if (vs == 2) body<2>(mc, out, n);
  else body<1>(mc, out, n);
}
