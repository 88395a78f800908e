// toolchain-and-ptxas.md section 4: C: cudaGridDependencySynchronize, nothing before, __ldg -> after
#include <cuda_runtime.h>
__global__ void C_nothing_before_ldg_cgds(const int* in, int* out) {

    cudaGridDependencySynchronize();
    int v = __ldg(in + blockIdx.x);
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
