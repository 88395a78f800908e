// driver: DeepGEMM JIT instantiation, sm90_fp8_gemm_1d2d, M-grouped masked, TMA multicast 2 on A (cluster)
#include <deep_gemm/impls/sm90_fp8_gemm_1d2d.cuh>
using namespace deep_gemm;
static void __instantiate_kernel() {
    auto ptr = reinterpret_cast<void*>(&sm90_fp8_gemm_1d2d_impl<
        cute::UMMA::Major::K, 0, 4096, 7168, 4, 64, 128, 128, 128, 128, 128, 6, 128, 256, 2, true, 132,
        GemmType::MGroupedMasked, cutlass::bfloat16_t, epilogue::transform::EpilogueIdentity>);
};
