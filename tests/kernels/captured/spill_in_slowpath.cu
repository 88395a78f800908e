// STL/LDL spills inside ptxas's division slow path subroutine ($__internal_*_slowpath, reached by CALL.REL.NOINC)
// with -maxrregcount=24 (tests/sass/test_sass_hostile_inputs.py): thread-private, so never "not checked"
__global__ void k(const float *__restrict__ in, float *out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float acc[16];
#pragma unroll
  for (int i = 0; i < 16; ++i) acc[i] = in[t + i * n];
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < 16; ++i) s += acc[i] / acc[(i + 1) & 15];
#pragma unroll
  for (int i = 0; i < 16; ++i) out[t + i * n] = acc[i] * s;
}
