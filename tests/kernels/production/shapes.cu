// Production-shaped kernels for the control-flow-graph checker (tests/test_sass_cfg_kernels.py):
// warp-specialised producer/consumer roles over an mbarrier pipeline, an inlined subroutine called
// twice, a shared-memory reduction loop that ptxas unrolls, and PDL with a hoistable __ldg in a
// consumer role.  Only the last has a move that matters (the __ldg above griddepcontrol.wait).
#include <cstdint>

__device__ __forceinline__ void mbar_init(uint64_t* bar, unsigned count) {
    unsigned a = (unsigned)__cvta_generic_to_shared(bar);
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(a), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
    unsigned a = (unsigned)__cvta_generic_to_shared(bar);
    asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" :: "r"(a) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint64_t* bar, unsigned parity) {
    unsigned a = (unsigned)__cvta_generic_to_shared(bar);
    asm volatile("{\n .reg .pred P1;\n LAB_WAIT:\n"
                 " mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 P1, [%0], %1;\n"
                 " @P1 bra DONE;\n bra LAB_WAIT;\n DONE:\n }" :: "r"(a), "r"(parity) : "memory");
}

// warp 0 produces into a two-stage ring, warp 1 consumes; each stage has a full and an empty barrier
__global__ void P1_producer_consumer(const int* __restrict__ in, int* out, int n) {
    __shared__ int ring[2][32];
    __shared__ uint64_t full[2], empty[2];
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (threadIdx.x == 0) {
        for (int s = 0; s < 2; ++s) { mbar_init(&full[s], 32); mbar_init(&empty[s], 32); }
    }
    __syncthreads();
    if (warp == 0) {
        for (int i = 0; i < n; ++i) {
            int s = i & 1;
            if (i >= 2) mbar_wait(&empty[s], ((i >> 1) - 1) & 1);
            ring[s][lane] = in[i * 32 + lane];
            mbar_arrive(&full[s]);
        }
    } else if (warp == 1) {
        int acc = 0;
        for (int i = 0; i < n; ++i) {
            int s = i & 1;
            mbar_wait(&full[s], (i >> 1) & 1);
            acc += ring[s][lane];
            mbar_arrive(&empty[s]);
        }
        out[lane] = acc;
    }
}

__device__ __forceinline__ int exchange(int* buf, int v) {
    buf[threadIdx.x] = v;
    __syncthreads();
    int r = buf[(threadIdx.x + 1) % blockDim.x];
    __syncthreads();
    return r;
}

// the subroutine inlined twice: each copy's loads after its own barrier
__global__ void P2_inlined_twice(int* out) {
    __shared__ int buf[256];
    int a = exchange(buf, threadIdx.x);
    int b = exchange(buf, a * 3);
    out[threadIdx.x] = a + b;
}

// a shared-memory reduction: the loop is unrolled, its loads stay between the barriers
__global__ void P3_reduction(const float* in, float* out) {
    __shared__ float s[256];
    s[threadIdx.x] = in[blockIdx.x * 256 + threadIdx.x];
    __syncthreads();
    for (int k = 128; k > 0; k >>= 1) {
        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}

// PDL: the consumer warps (a named barrier of their own) read what the primary grid wrote, after
// the wait -- through __ldg, which ptxas issues above the wait (FlashMLA 70b9468's bug, here in a
// warp-role branch; the producer warp never waits)
__global__ void P4_pdl_ldg_role(const int4* meta, int* out) {
    __shared__ int flag[128];
    int warp = threadIdx.x / 32;
    if (warp != 0) {
        flag[threadIdx.x] = threadIdx.x;
        asm volatile("bar.sync 1, 96;" ::: "memory");
        asm volatile("griddepcontrol.wait;" ::: "memory");
        int4 m = __ldg(meta + blockIdx.x);
        out[threadIdx.x] = m.x + m.y + m.z + m.w + flag[(threadIdx.x + 32) % 128];
    } else {
        out[threadIdx.x] = threadIdx.x;
    }
}

// the same with a plain load (01a2772's fix): nothing moves above the wait
__global__ void P5_pdl_plain_role(const int4* meta, int* out) {
    __shared__ int flag[128];
    int warp = threadIdx.x / 32;
    if (warp != 0) {
        flag[threadIdx.x] = threadIdx.x;
        asm volatile("bar.sync 1, 96;" ::: "memory");
        asm volatile("griddepcontrol.wait;" ::: "memory");
        int4 m = meta[blockIdx.x];
        out[threadIdx.x] = m.x + m.y + m.z + m.w + flag[(threadIdx.x + 32) % 128];
    } else {
        out[threadIdx.x] = threadIdx.x;
    }
}
