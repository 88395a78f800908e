// toolchain-and-ptxas.md section 4: X_threadfence: wait; __threadfence(); __ldg -> after
#include "section4.cuh"
__global__ void X_threadfence(const int* in, int* out) {
    STS_SYNC_WAIT();
    __threadfence();
    int v = __ldg(in + blockIdx.x) + NEIGHBOUR;
    STORE_OUT(v);
}
