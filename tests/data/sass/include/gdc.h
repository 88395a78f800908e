// The shape of CUTLASS's grid dependency control (cutlass/arch/grid_dependency_control.h): the
// wait is compiled in only when the build defines CUTLASS_ENABLE_GDC_FOR_SM90 (CUTLASS's CMake adds
// it; a build without it silently loses every griddepcontrol: cccl #9134, flashinfer #2708).
#pragma once
namespace cutlass { namespace arch {
__device__ __forceinline__ void wait_on_dependent_grids()
{
#if defined(CUTLASS_ENABLE_GDC_FOR_SM90) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void launch_dependent_grids()
{
#if defined(CUTLASS_ENABLE_GDC_FOR_SM90) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}
}}  // namespace cutlass::arch
