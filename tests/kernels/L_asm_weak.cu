// toolchain-and-ptxas.md section 4: weak ld.global in asm -> after
#include <cuda_runtime.h>
__global__ void L_asm_weak(const int* in, int* out) {
    __shared__ int s[256];
    s[threadIdx.x] = threadIdx.x * 3;
    __syncthreads();
    cudaGridDependencySynchronize();
    int v = [&]{ int r; asm volatile("ld.global.u32 %0, [%1];" : "=r"(r) : "l"(in + blockIdx.x) : "memory"); return r; }() + s[(threadIdx.x + 1) % 256];
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
