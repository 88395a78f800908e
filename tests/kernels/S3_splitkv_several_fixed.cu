// split-KV decode, the 01a2772 fix of S3: plain loads after the wait
#include "splitkv_common.cuh"
struct DecodeParams_S3F { const int4* metadata; const int* seqlens_k; const int* num_splits; const int* block_table; int* out; };
__global__ void S3_splitkv_several_fixed(DecodeParams_S3F params) {
    SPLITKV_PROLOGUE_AND_WAIT();
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
