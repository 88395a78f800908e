// toolchain-and-ptxas.md section 4: L_plain_const: plain deref of a const pointer (no __restrict__) -> after
#include "section4.cuh"
__global__ void L_plain_const(const int* in, int* out) {
    STS_SYNC_WAIT();
    int v = in[blockIdx.x] + NEIGHBOUR;
    STORE_OUT(v);
}
