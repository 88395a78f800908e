// toolchain-and-ptxas.md section 4: X_syncthreads: wait; __syncthreads(); __ldg -> HOISTED above ACQBULK and BAR
#include "section4.cuh"
__global__ void X_syncthreads(const int* in, int* out) {
    STS_SYNC_WAIT();
    __syncthreads();
    int v = __ldg(in + blockIdx.x) + NEIGHBOUR;
    STORE_OUT(v);
}
