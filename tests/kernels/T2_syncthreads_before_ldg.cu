// toolchain-and-ptxas.md section 4: T2: __syncthreads only before the wait, __ldg -> after
#include <cuda_runtime.h>
__global__ void T2_syncthreads_before_ldg(const int* in, int* out) {
    __syncthreads();
    cudaGridDependencySynchronize();
    int v = __ldg(in + blockIdx.x);
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
