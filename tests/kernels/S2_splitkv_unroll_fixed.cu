// split-KV decode, the 01a2772 fix of S2: plain loads after the wait
#include "splitkv_common.cuh"
struct DecodeParams_S2F { const int4* metadata; const int* num_splits; int* out; };
__global__ void S2_splitkv_unroll_fixed(DecodeParams_S2F params) {
    SPLITKV_PROLOGUE_AND_WAIT();
    int4 md = params.metadata[blockIdx.x];
    int acc = md.y;
    #pragma unroll
    for (int i = 0; i < 8; ++i) acc += params.num_splits[md.x + i] * (i + 1);
    params.out[blockIdx.x * blockDim.x + threadIdx.x] = acc + md.w;
}
