// CUTLASS's pipeline_check_is_producer (sm90_pipeline.hpp:65-70, compiled without -DNDEBUG):
// `if (!is_producer) asm volatile("brkpt;");` just before the producer's release (an mbarrier
// arrive). ptxas emits BPT.TRAP for brkpt, as for trap; the SASS graph takes BPT.TRAP for an exit, and the PTX
// graph let brkpt fall through until 2026-12-05, so the load before the release looked "sunk below" it (2 false
// "forbidden" here, 1,131 in CUTLASS 7107b05 example 77 without -DNDEBUG: a hostile review).
#include <cstdint>
__global__ void k(const int* in, int* out, int role) {
  __shared__ uint64_t bar;
  uint32_t b = (uint32_t)__cvta_generic_to_shared(&bar);
  int v = in[threadIdx.x];                       // weak global load, before the release
  out[threadIdx.x] = v;                          // weak global store, before the release
  if (role != 1) asm volatile("brkpt;\n" ::);
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" :: "r"(b) : "memory");
}
