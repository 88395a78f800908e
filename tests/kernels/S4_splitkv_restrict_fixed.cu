// split-KV decode, the fix of S4: the same plain loads without __restrict__ (ld.global, not .nc)
#include "splitkv_common.cuh"
__global__ void S4_splitkv_restrict_fixed(const int4* metadata, const int* seqlens_k, int* out) {
    SPLITKV_PROLOGUE_AND_WAIT();
    int4 md = metadata[blockIdx.x];
    int acc = 0;
    for (int b = md.x; b <= md.z; ++b) acc += seqlens_k[b] * (b == md.x ? md.y : 1);
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc + md.w;
}
