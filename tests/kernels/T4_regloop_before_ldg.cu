// toolchain-and-ptxas.md section 4: T4: register loop before the wait, __ldg -> HOISTED
#include "section4.cuh"
__global__ void T4_regloop_before_ldg(const int* in, int* out, int n) {
    REGLOOP_WAIT();
    int v = __ldg(in + blockIdx.x) + acc;
    STORE_OUT(v);
}
