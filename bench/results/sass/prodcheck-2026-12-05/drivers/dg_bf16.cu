// driver: DeepGEMM JIT instantiation, sm90_bf16_gemm, normal, multicast 2 on B
#include <deep_gemm/impls/sm90_bf16_gemm.cuh>
using namespace deep_gemm;
static void __instantiate_kernel() {
    auto ptr = reinterpret_cast<void*>(&sm90_bf16_gemm_impl<
        cute::UMMA::Major::K, cute::UMMA::Major::K, 0, 4096, 7168, 1, 128, 128, 64, 128, 128, 128, 5, 128, 256,
        2, true, 132, GemmType::Normal, false, cutlass::bfloat16_t>);
};
