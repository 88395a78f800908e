// split-KV decode, the 01a2772 fix of S2: plain loads after the wait
#include <cuda_runtime.h>
#include <cstdint>
struct DecodeParams_S2F { const int4* metadata; const int* num_splits; int* out; };
__global__ void S2_splitkv_unroll_fixed(DecodeParams_S2F params) {
    __shared__ uint64_t bar;
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"((unsigned)__cvta_generic_to_shared(&bar)), "r"(1));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    cudaGridDependencySynchronize();
    int4 md = params.metadata[blockIdx.x];
    int acc = md.y;
    #pragma unroll
    for (int i = 0; i < 8; ++i) acc += params.num_splits[md.x + i] * (i + 1);
    params.out[blockIdx.x * blockDim.x + threadIdx.x] = acc + md.w;
}
