// toolchain-and-ptxas.md section 4: X_syncthreads: wait; __syncthreads(); __ldg -> HOISTED above ACQBULK and BAR
#include <cuda_runtime.h>
__global__ void X_syncthreads(const int* in, int* out) {
    __shared__ int s[256];
    s[threadIdx.x] = threadIdx.x * 3;
    __syncthreads();
    cudaGridDependencySynchronize();
    __syncthreads();
    int v = __ldg(in + blockIdx.x) + s[(threadIdx.x + 1) % 256];
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
