// toolchain-and-ptxas.md section 4: T4: register loop before the wait, __ldg -> HOISTED
#include <cuda_runtime.h>
__global__ void T4_regloop_before_ldg(const int* in, int* out, int n) {
    int acc = threadIdx.x;
    #pragma unroll 1
    for (int i = 0; i < n; ++i) acc = acc * 3 + (i ^ acc);
    cudaGridDependencySynchronize();
    int v = __ldg(in + blockIdx.x) + acc;
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
