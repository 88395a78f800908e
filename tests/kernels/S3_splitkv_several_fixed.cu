// split-KV decode, the 01a2772 fix of S3: plain loads after the wait
#include <cuda_runtime.h>
#include <cstdint>
struct DecodeParams_S3F { const int4* metadata; const int* seqlens_k; const int* num_splits; const int* block_table; int* out; };
__global__ void S3_splitkv_several_fixed(DecodeParams_S3F params) {
    __shared__ uint64_t bar;
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"((unsigned)__cvta_generic_to_shared(&bar)), "r"(1));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    cudaGridDependencySynchronize();
    int4 md = params.metadata[blockIdx.x];
    int acc = 0;
    #pragma unroll 1
    for (int b = md.x; b <= md.z; ++b) {
        int seqlen = params.seqlens_k[b];
        int splits = params.num_splits[b];
        int block = params.block_table[b * 4 + (threadIdx.x & 3)];
        acc += seqlen * splits + block;
    }
    params.out[blockIdx.x * blockDim.x + threadIdx.x] = acc + md.y + md.w;
}
