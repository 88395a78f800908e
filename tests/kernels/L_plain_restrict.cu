// toolchain-and-ptxas.md section 4: L_plain_restrict: const __restrict__ plain deref (NVVM emits ld.global.nc) -> HOISTED
#include <cuda_runtime.h>
__global__ void L_plain_restrict(const int* __restrict__ in, int* __restrict__ out) {
    __shared__ int s[256];
    s[threadIdx.x] = threadIdx.x * 3;
    __syncthreads();
    cudaGridDependencySynchronize();
    int v = in[blockIdx.x] + s[(threadIdx.x + 1) % 256];
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
