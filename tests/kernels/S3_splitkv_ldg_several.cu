// split-KV decode, pre-01a2772 shape: a rolled loop (unroll 1) with three __ldg per iteration
// (seqlens, num_splits, block table) -> the metadata LDG.E.128.CONSTANT HOISTED above ACQBULK
#include "splitkv_common.cuh"
struct DecodeParams_S3 { const int4* metadata; const int* seqlens_k; const int* num_splits; const int* block_table; int* out; };
__global__ void S3_splitkv_ldg_several(DecodeParams_S3 params) {
    SPLITKV_PROLOGUE_AND_WAIT();
    int4 md = __ldg(params.metadata + blockIdx.x);
    int acc = 0;
    #pragma unroll 1
    for (int b = md.x; b <= md.z; ++b) {
        int seqlen = __ldg(params.seqlens_k + b);
        int splits = __ldg(params.num_splits + b);
        int block = __ldg(params.block_table + b * 4 + (threadIdx.x & 3));
        acc += seqlen * splits + block;
    }
    params.out[blockIdx.x * blockDim.x + threadIdx.x] = acc + md.y + md.w;
}
