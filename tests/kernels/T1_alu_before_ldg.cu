// toolchain-and-ptxas.md section 4: T1: ALU only before the wait, __ldg -> after
#include <cuda_runtime.h>
__global__ void T1_alu_before_ldg(const int* in, int* out, int k) {
    int a = k * threadIdx.x + 7; a ^= a >> 3;
    cudaGridDependencySynchronize();
    int v = __ldg(in + blockIdx.x) + a;
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
