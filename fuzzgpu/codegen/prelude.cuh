// ---- fuzzgpu prelude -------------------------------------------------------------------
#ifndef FUZZGPU_PRELUDE
#define FUZZGPU_PRELUDE
__device__ __forceinline__ unsigned fz_clock() {
  unsigned c; asm volatile("mov.u32 %0, %%clock;" : "=r"(c) :: "memory"); return c;
}
// a %clock spin: the asm volatile reads keep it (an empty C++ loop is deleted by the compiler)
__device__ __forceinline__ void fz_delay(unsigned cycles) {
  unsigned s = fz_clock();
  while (fz_clock() - s < cycles) { }
}
__device__ __forceinline__ unsigned fz_mix(unsigned x) {
  x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; x *= 0x846ca68bU; x ^= x >> 16; return x;
}
__device__ __forceinline__ unsigned fz_inv8(unsigned f) {   // inverse of odd f mod 256
  unsigned x = f; x *= 2u - f * x; x *= 2u - f * x; x *= 2u - f * x; return x & 255u;
}
__device__ __forceinline__ unsigned long long fz_ld_vol64(const unsigned long long* p) {
  unsigned long long v; asm volatile("ld.volatile.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v;
}
// a CUtensorMap (cuda.h): 128 opaque bytes, 64-byte aligned (cuTensorMapEncodeTiled: "tensorMap
// address must be aligned to 64 bytes"); the host encodes it and copies it to a __constant__ one
struct __align__(64) FzTensorMap { unsigned long long opaque[16]; };
#endif
