// split-KV decode, the 01a2772 fix of S1: plain loads after the wait -> LDG.E.128 and LDG.E after ACQBULK
#include <cuda_runtime.h>
#include <cstdint>
struct DecodeParams_S1F { const int4* metadata; const int* seqlens_k; int* out; };
__global__ void S1_splitkv_fixed(DecodeParams_S1F params) {
    __shared__ uint64_t bar;
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"((unsigned)__cvta_generic_to_shared(&bar)), "r"(1));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    cudaGridDependencySynchronize();
    int4 md = params.metadata[blockIdx.x];
    int acc = 0;
    for (int b = md.x; b <= md.z; ++b) {
        int seqlen = params.seqlens_k[b];
        acc += seqlen * (b == md.x ? md.y : 1);
    }
    params.out[blockIdx.x * blockDim.x + threadIdx.x] = acc + md.w;
}
