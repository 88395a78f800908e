// toolchain-and-ptxas.md section 4: D2: register loop before the wait, __ldg through __restrict__ -> HOISTED
#include "section4.cuh"
__global__ void D2_regloop_before_ldg_restrict(const int* __restrict__ in, int* __restrict__ out, int n) {
    REGLOOP_WAIT();
    int v = __ldg(in + blockIdx.x) + acc;
    STORE_OUT(v);
}
