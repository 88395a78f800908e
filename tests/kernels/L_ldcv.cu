// toolchain-and-ptxas.md section 4: L___ldcv: no .CONSTANT -> after
#include <cuda_runtime.h>
__global__ void L_ldcv(const int* in, int* out) {
    __shared__ int s[256];
    s[threadIdx.x] = threadIdx.x * 3;
    __syncthreads();
    cudaGridDependencySynchronize();
    int v = __ldcv(in + blockIdx.x) + s[(threadIdx.x + 1) % 256];
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
