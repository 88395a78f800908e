// toolchain-and-ptxas.md section 4: nothing before the wait, plain load -> after
#include <cuda_runtime.h>
__global__ void B_nothing_before_plain(const int* in, int* out) {

    cudaGridDependencySynchronize();
    int v = in[blockIdx.x];
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
