// driver: DeepGEMM JIT instantiation, sm90_fp8_gemm_1d1d, K-grouped contiguous (wgrad), fp32 out
#include <deep_gemm/impls/sm90_fp8_gemm_1d1d.cuh>
using namespace deep_gemm;
static void __instantiate_kernel() {
    auto ptr = reinterpret_cast<void*>(&sm90_fp8_gemm_1d1d_impl<
        4096, 7168, 0, 4, 128, 128, 128, 128, 128, 5, 128, 256, 1, false, 132,
        GemmType::KGroupedContiguous, float>);
};
