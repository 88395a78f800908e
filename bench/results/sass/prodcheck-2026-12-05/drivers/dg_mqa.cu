// driver: DeepGEMM JIT instantiation, sm90_fp8_mqa_logits (64 heads, head_dim 128, block_q 2, block_kv 256, 3/3 stages, 128+512 threads)
#include <deep_gemm/impls/sm90_fp8_mqa_logits.cuh>
using namespace deep_gemm;
static void __instantiate_kernel() {
    auto ptr = reinterpret_cast<void*>(&sm90_fp8_mqa_logits<64, 128, false, 2, 256, 3, 3, 132, 128, 512, float>);
};
