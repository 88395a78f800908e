// toolchain-and-ptxas.md section 4: ld.acquire.gpu in asm -> after
#include "section4.cuh"
__global__ void L_asm_acquire_gpu(const int* in, int* out) {
    STS_SYNC_WAIT();
    int v = ASM_LOAD("ld.acquire.gpu.global.u32") + NEIGHBOUR;
    STORE_OUT(v);
}
