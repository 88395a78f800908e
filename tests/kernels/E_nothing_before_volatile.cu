// toolchain-and-ptxas.md section 4: nothing before the wait, volatile load -> after
#include <cuda_runtime.h>
__global__ void E_nothing_before_volatile(const volatile int* in, int* out) {

    cudaGridDependencySynchronize();
    int v = in[blockIdx.x];
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
