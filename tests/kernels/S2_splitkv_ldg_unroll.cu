// split-KV decode, pre-01a2772 shape with a fully unrolled loop of __ldg (a fixed number of splits)
// -> the metadata LDG.E.128.CONSTANT (and maybe some of the unrolled loads) HOISTED above ACQBULK
#include <cuda_runtime.h>
#include <cstdint>
struct DecodeParams_S2 { const int4* metadata; const int* num_splits; int* out; };
__global__ void S2_splitkv_ldg_unroll(DecodeParams_S2 params) {
    __shared__ uint64_t bar;
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"((unsigned)__cvta_generic_to_shared(&bar)), "r"(1));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    cudaGridDependencySynchronize();
    int4 md = __ldg(params.metadata + blockIdx.x);
    int acc = md.y;
    #pragma unroll
    for (int i = 0; i < 8; ++i) acc += __ldg(params.num_splits + md.x + i) * (i + 1);
    params.out[blockIdx.x * blockDim.x + threadIdx.x] = acc + md.w;
}
