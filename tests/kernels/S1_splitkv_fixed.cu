// split-KV decode, the 01a2772 fix of S1: plain loads after the wait -> LDG.E.128 and LDG.E after ACQBULK
#include "splitkv_common.cuh"
struct DecodeParams_S1F { const int4* metadata; const int* seqlens_k; int* out; };
__global__ void S1_splitkv_fixed(DecodeParams_S1F params) {
    SPLITKV_PROLOGUE_AND_WAIT();
    int4 md = params.metadata[blockIdx.x];
    int acc = 0;
    for (int b = md.x; b <= md.z; ++b) {
        int seqlen = params.seqlens_k[b];
        acc += seqlen * (b == md.x ? md.y : 1);
    }
    params.out[blockIdx.x * blockDim.x + threadIdx.x] = acc + md.w;
}
