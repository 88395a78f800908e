// split-KV decode, pre-01a2772 shape: mbarrier init, __syncthreads, wait, int4 __ldg of the tile
// metadata, then a loop of __ldg (seqlens) -> the metadata LDG.E.128.CONSTANT is HOISTED above ACQBULK
#include "splitkv_common.cuh"
struct DecodeParams_S1 { const int4* metadata; const int* seqlens_k; int* out; };
__global__ void S1_splitkv_ldg_loop(DecodeParams_S1 params) {
    SPLITKV_PROLOGUE_AND_WAIT();
    int4 md = __ldg(params.metadata + blockIdx.x);  // begin batch, begin split, end batch, end split
    int acc = 0;
    for (int b = md.x; b <= md.z; ++b) {
        int seqlen = __ldg(params.seqlens_k + b);
        acc += seqlen * (b == md.x ? md.y : 1);
    }
    params.out[blockIdx.x * blockDim.x + threadIdx.x] = acc + md.w;
}
