// toolchain-and-ptxas.md section 4: D_flashmla_shape: pre-01a2772 (mbarrier init, fence, STS, __syncthreads, wait, __ldg of an int4) -> HOISTED above the mbarrier init, BAR.SYNC and ACQBULK
// The shape of FlashMLA's kernel before/after commit 01a2772.
#include <cuda_runtime.h>
#include <cstdint>
struct FlashParams_shape { const int4* ptr; int4* out; };
__global__ void D_flashmla_shape(FlashParams_shape params) {
    __shared__ uint64_t bar;
    __shared__ int smem[128];
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"((unsigned)__cvta_generic_to_shared(&bar)), "r"(1));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    smem[threadIdx.x] = threadIdx.x;
    __syncthreads();
    cudaGridDependencySynchronize();
    int4 v = __ldg(params.ptr + blockIdx.x);  // pre-01a2772: __ldg (ld.global.nc.v4)
    v.x += smem[(threadIdx.x + 1) % 128];
    params.out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
