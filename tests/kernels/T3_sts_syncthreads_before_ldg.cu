// toolchain-and-ptxas.md section 4: T3: STS + __syncthreads before the wait, __ldg -> HOISTED
#include <cuda_runtime.h>
__global__ void T3_sts_syncthreads_before_ldg(const int* in, int* out) {
    __shared__ int s[256];
    s[threadIdx.x] = threadIdx.x * 3;
    __syncthreads();
    cudaGridDependencySynchronize();
    int v = __ldg(in + blockIdx.x) + s[(threadIdx.x + 1) % 256];
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
