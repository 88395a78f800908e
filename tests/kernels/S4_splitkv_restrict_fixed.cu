// split-KV decode, the fix of S4: the same plain loads without __restrict__ (ld.global, not .nc)
#include <cuda_runtime.h>
#include <cstdint>
__global__ void S4_splitkv_restrict_fixed(const int4* metadata, const int* seqlens_k, int* out) {
    __shared__ uint64_t bar;
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"((unsigned)__cvta_generic_to_shared(&bar)), "r"(1));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    cudaGridDependencySynchronize();
    int4 md = metadata[blockIdx.x];
    int acc = 0;
    for (int b = md.x; b <= md.z; ++b) acc += seqlens_k[b] * (b == md.x ? md.y : 1);
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc + md.w;
}
