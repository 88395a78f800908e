// toolchain-and-ptxas.md section 4: nothing before the wait, ld.relaxed.gpu -> after
#include <cuda_runtime.h>
__global__ void F_nothing_before_relaxed(const int* in, int* out) {

    cudaGridDependencySynchronize();
    int v = [&]{ int r; asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(r) : "l"(in + blockIdx.x) : "memory"); return r; }();
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
