// toolchain-and-ptxas.md section 4: T3: STS + __syncthreads before the wait, __ldg -> HOISTED
#include "section4.cuh"
__global__ void T3_sts_syncthreads_before_ldg(const int* in, int* out) {
    STS_SYNC_WAIT();
    int v = __ldg(in + blockIdx.x) + NEIGHBOUR;
    STORE_OUT(v);
}
