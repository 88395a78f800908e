// toolchain-and-ptxas.md section 4: D_flashmla_fixed_01a2772: the fix, a plain dereference -> LDG.E.128 after ACQBULK
// The shape of FlashMLA's kernel before/after commit 01a2772.
#include <cuda_runtime.h>
#include <cstdint>
struct FlashParams_fixed { const int4* ptr; int4* out; };
__global__ void D_flashmla_fixed_01a2772(FlashParams_fixed params) {
    __shared__ uint64_t bar;
    __shared__ int smem[128];
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"((unsigned)__cvta_generic_to_shared(&bar)), "r"(1));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    smem[threadIdx.x] = threadIdx.x;
    __syncthreads();
    cudaGridDependencySynchronize();
    int4 v = *(params.ptr + blockIdx.x);  // 01a2772: a plain dereference
    v.x += smem[(threadIdx.x + 1) % 128];
    params.out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
