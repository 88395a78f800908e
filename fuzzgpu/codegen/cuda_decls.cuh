// ---- fuzzgpu: the CUDA declarations a generated module uses, instead of cuda_runtime.h -------
// nvcc pre-includes cuda_runtime.h (about 1.3 MB once preprocessed); parsing it is most of an nvcc
// call's fixed CPU cost. fuzzgpu compiles its own modules with -D__CUDA_RUNTIME_H__ (the header's
// include guard: it is then skipped) and this file pre-included (sass.runtime_header_flags). The builtins
// below are the ones cuda_runtime.h declares for these names, so the PTX and the SASS are the same
// (tests/codegen/test_runtime_header.py compiles modules both ways and compares them). Compiled without
// that guard, cuda_runtime.h is there and this file declares nothing.
#if !defined(__CUDA_RUNTIME_API_H__) && !defined(FUZZGPU_CUDA_DECLS)
#define FUZZGPU_CUDA_DECLS
#define __CUDA_INCLUDE_COMPILER_INTERNAL_HEADERS__
#include <crt/host_defines.h>
#include <vector_types.h>
#include <device_launch_parameters.h>
#undef __CUDA_INCLUDE_COMPILER_INTERNAL_HEADERS__
typedef __SIZE_TYPE__ size_t;
extern "C" {
extern __device__ __cudart_builtin__ void __syncthreads(void);
extern __device__ __cudart_builtin__ void __threadfence(void);
extern __device__ __cudart_builtin__ int __clz(int);
extern __device__ __device_builtin__ unsigned int __uAtomicAdd(unsigned int*, unsigned int);
extern __device__ __device_builtin__ int __iAtomicAdd(int*, int);
extern __device__ __device_builtin__ unsigned long long int __ullAtomicAdd(unsigned long long int*, unsigned long long int);
extern __device__ __device_builtin__ void __nvvm_bar_warp_sync(unsigned);
extern __device__ __device_builtin__ size_t __nv_cvta_generic_to_shared_impl(const void*);
}
static __inline__ __device__ unsigned int atomicAdd(unsigned int* a, unsigned int v) { return __uAtomicAdd(a, v); }
static __inline__ __device__ int atomicAdd(int* a, int v) { return __iAtomicAdd(a, v); }
static __inline__ __device__ unsigned long long int atomicAdd(unsigned long long int* a, unsigned long long int v) { return __ullAtomicAdd(a, v); }
static __inline__ __device__ void __syncwarp(unsigned m = 0xFFFFFFFFu) { __nvvm_bar_warp_sync(m); }
static __inline__ __device__ size_t __cvta_generic_to_shared(const void* p) { return __nv_cvta_generic_to_shared_impl(p); }
#endif
