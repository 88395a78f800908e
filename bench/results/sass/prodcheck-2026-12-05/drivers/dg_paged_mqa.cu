// driver: DeepGEMM JIT instantiation, sm90_fp8_paged_mqa_logits (next_n 1, 64 heads, head_dim 128, block_kv 64, split_kv 256, 3/3 stages, 128+512 threads)
#include <deep_gemm/impls/sm90_fp8_paged_mqa_logits.cuh>
using namespace deep_gemm;
static void __instantiate_kernel() {
    auto ptr = reinterpret_cast<void*>(&sm90_fp8_paged_mqa_logits<1, 64, 128, 64, false, false, 3, 3, 256, 128, 512, float>);
};
