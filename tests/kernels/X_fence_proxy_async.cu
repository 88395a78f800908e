// toolchain-and-ptxas.md section 4: X_fence_proxy_async: wait; fence.proxy.async; __ldg -> HOISTED
#include <cuda_runtime.h>
__global__ void X_fence_proxy_async(const int* in, int* out) {
    __shared__ int s[256];
    s[threadIdx.x] = threadIdx.x * 3;
    __syncthreads();
    cudaGridDependencySynchronize();
    asm volatile("fence.proxy.async;" ::: "memory");
    int v = __ldg(in + blockIdx.x) + s[(threadIdx.x + 1) % 256];
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
