// toolchain-and-ptxas.md section 4: X_fence_proxy_async: wait; fence.proxy.async; __ldg -> HOISTED
#include "section4.cuh"
__global__ void X_fence_proxy_async(const int* in, int* out) {
    STS_SYNC_WAIT();
    asm volatile("fence.proxy.async;" ::: "memory");
    int v = __ldg(in + blockIdx.x) + NEIGHBOUR;
    STORE_OUT(v);
}
