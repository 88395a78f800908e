// driver: what DeepGEMM's JIT generates for sm90_fp8_gemm_1d2d (csrc/jit_kernels/impls/sm90_fp8_gemm_1d2d.hpp), one typical config
#include <deep_gemm/impls/sm90_fp8_gemm_1d2d.cuh>

using namespace deep_gemm;

static void __instantiate_kernel() {
    auto ptr = reinterpret_cast<void*>(&sm90_fp8_gemm_1d2d_impl<
        cute::UMMA::Major::K,
        0, 4096, 7168,
        1,
        128, 128, 128,
        128, 128, 128,
        5,
        128, 256,
        1, false,
        132, GemmType::Normal,
        cutlass::bfloat16_t,
        epilogue::transform::EpilogueIdentity
    >);
};
