// split-KV decode, pre-01a2772 shape through const __restrict__ pointers: plain dereferences that NVVM
// turns into ld.global.nc -> the metadata LDG.E.128.CONSTANT HOISTED above ACQBULK
#include "splitkv_common.cuh"
__global__ void S4_splitkv_restrict(const int4* __restrict__ metadata, const int* __restrict__ seqlens_k,
                                    int* __restrict__ out) {
    SPLITKV_PROLOGUE_AND_WAIT();
    int4 md = metadata[blockIdx.x];
    int acc = 0;
    for (int b = md.x; b <= md.z; ++b) acc += seqlens_k[b] * (b == md.x ? md.y : 1);
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc + md.w;
}
