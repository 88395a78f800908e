// toolchain-and-ptxas.md section 4: L_plain_mut: plain deref of a mutable pointer -> after
#include "section4.cuh"
__global__ void L_plain_mut(int* in, int* out) {
    STS_SYNC_WAIT();
    int v = in[blockIdx.x] + NEIGHBOUR;
    STORE_OUT(v);
}
