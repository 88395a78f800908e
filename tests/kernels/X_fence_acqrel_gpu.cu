// toolchain-and-ptxas.md section 4: X_fence_acqrel_gpu: wait; fence.acq_rel.gpu; __ldg -> after
#include "section4.cuh"
__global__ void X_fence_acqrel_gpu(const int* in, int* out) {
    STS_SYNC_WAIT();
    asm volatile("fence.acq_rel.gpu;" ::: "memory");
    int v = __ldg(in + blockIdx.x) + NEIGHBOUR;
    STORE_OUT(v);
}
