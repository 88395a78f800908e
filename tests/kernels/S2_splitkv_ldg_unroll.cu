// split-KV decode, pre-01a2772 shape with a fully unrolled loop of __ldg (a fixed number of splits)
// -> the metadata LDG.E.128.CONSTANT (and maybe some of the unrolled loads) HOISTED above ACQBULK
#include "splitkv_common.cuh"
struct DecodeParams_S2 { const int4* metadata; const int* num_splits; int* out; };
__global__ void S2_splitkv_ldg_unroll(DecodeParams_S2 params) {
    SPLITKV_PROLOGUE_AND_WAIT();
    int4 md = __ldg(params.metadata + blockIdx.x);
    int acc = md.y;
    #pragma unroll
    for (int i = 0; i < 8; ++i) acc += __ldg(params.num_splits + md.x + i) * (i + 1);
    params.out[blockIdx.x * blockDim.x + threadIdx.x] = acc + md.w;
}
