#ifndef FUZZGPU_HARNESS_HELPERS
#define FUZZGPU_HARNESS_HELPERS
__device__ __forceinline__ int fz_dec(unsigned raw, unsigned tagh, int init) {
  // a word written in this launch carries its tag; anything else was written before the launch
  return ((raw & 0xffff0000u) == tagh) ? (int)(short)(raw & 0xffffu) : init;
}
// provenance (the control block, unsigned long long words; backends/cuda.py PROV_*): words
// [FZ_PROV_WATCH, +64) a bitmap of the bins to log (the host marks the oracle's forbidden outcomes),
// FZ_PROV_COUNT the entries logged, FZ_PROV_LOG on: FZ_PROV_CAP entries of (launch << 32 | instance,
// bin, one where word per role)
#define FZ_PROV_COUNT 64u
#define FZ_PROV_WATCH 65u
#define FZ_PROV_BINS 4096u
#define FZ_PROV_LOG 129u
#define FZ_PROV_CAP 256u
// where this thread runs: %smid << 24 | blockIdx.x (16 bits) << 8 | warp << 5 | lane
__device__ __forceinline__ unsigned fz_where() {
  unsigned sm; asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  return (sm & 0xffu) << 24 | (blockIdx.x & 0xffffu) << 8 | (threadIdx.x & 255u);
}
// a CTA's lanes rotated: warp class w by w * mw over the CTA's warps (wm: their number less one,
// a power of two less one), lane class l by l * ml over the warp's 32 lanes
__device__ __forceinline__ unsigned fz_rot(unsigned x, unsigned w, unsigned mw, unsigned l, unsigned ml, unsigned wm) {
  return ((((x >> 5) + w * mw) & wm) << 5) | (((x & 31u) + l * ml) & 31u);
}
__device__ __forceinline__ unsigned fz_unrot(unsigned x, unsigned w, unsigned mw, unsigned l, unsigned ml, unsigned wm) {
  return ((((x >> 5) - w * mw) & wm) << 5) | (((x & 31u) - l * ml) & 31u);
}
// a %globaltimer spin of ns nanoseconds (PDL: the primary runs long after its trigger)
__device__ __forceinline__ void fz_gdelay(unsigned ns) {
  unsigned long long t0, t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0) :: "memory");
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1) :: "memory"); } while (t1 - t0 < ns);
}
// per-launch random parameters: the host derives them from (launch number, the run's seed, the knobs) once
// per run, one row per launch number (fuzzgpu/backends/launch_params.py: derived here, in each kernel, they
// would cost 18% of a batch's nvcc CPU), and passes the table (ptab, rows - 1 as pmask); a launch reads its
// row.  The launch tag and the CTA's size are computed here.
struct FzParams {
  unsigned seed, tagh, mw, ml, pidx;
  unsigned lb, cm, wm;         // the CTA's threads (blockDim.x, RunConfig.cta_threads: 32-256, a power of
                               // two): their log2, less one (a lane mask), warps less one
  unsigned f[8], finv[8];      // lane multiplier per CTA group (odd) and its inverse mod 256 (so mod the CTA's threads)
  unsigned F[16], Cc[16];      // location permutation per location: inst*F + C mod ninst
};
// knobs (fuzzgpu.stress, RunConfig): bit 0 thread permutation off (roles of an instance in
// neighbouring warps, same lane), bit 1 location shuffle off (an instance's locations in one row:
// adjacent at the stride), bits 2-3 the stress CTAs' access pattern, bits 4-5 the pre-test stress
// pattern, bit 6 stress lines by CTA (else round-robin by warp), bit 7 roles
// of other CTA groups in the neighbouring clusters (else at a random distance: layout.py), bits 8-30 pre-test stress
// iterations, bit 31 the stress on one word per CTA (fz_stress_word); bits 0-1 shape the host's table
#define FZ_PRE_STRESS_MASK 0x7fffffu  // (knobs >> 8) & this: the pre-test stress's iterations (backends.base.PRE_STRESS_MAX)
__device__ __forceinline__ void fz_params(FzParams& P, const FzParams* ptab, unsigned pmask, unsigned long long epoch) {
  P = ptab[(unsigned)epoch & pmask];
  P.tagh = ((unsigned)(epoch % 65535ull) + 1u) << 16;
  P.lb = 31u - __clz(blockDim.x); P.cm = blockDim.x - 1u; P.wm = (blockDim.x >> 5) - 1u;
}
// one stress access pair on a scratch word, pattern 0 store;load 1 store;store 2 load;store 3 load;load
__device__ __forceinline__ unsigned fz_hammer(unsigned* a, unsigned pattern, unsigned x) {
  unsigned v = 0u;
  if (pattern & 2u) asm volatile("ld.volatile.global.u32 %0, [%1];" : "=r"(v) : "l"(a) : "memory");
  else asm volatile("st.volatile.global.u32 [%0], %1;" :: "l"(a), "r"(x) : "memory");
  unsigned u = 0u;
  if ((pattern & 1u) == (pattern >> 1)) asm volatile("ld.volatile.global.u32 %0, [%1];" : "=r"(u) : "l"(a) : "memory");
  else asm volatile("st.volatile.global.u32 [%0], %1;" :: "l"(a), "r"(x + v) : "memory");
  return v + u;
}
// the scratch line of access i: round-robin over warps (default) or one line per CTA (knob bit 6)
__device__ __forceinline__ unsigned fz_stress_line(unsigned knobs, unsigned i, unsigned scratch_lines) {
  const unsigned w = (knobs & 64u) ? 0u : (threadIdx.x >> 5) * 3u;
  return (blockIdx.x * 7u + w + i) % scratch_lines;
}
// the scratch word of stress access i: by default each lane its own word of the line of access i
// (fz_stress_line); with knob bit 31 every thread of the CTA on one word, the same in every
// iteration (cuda-litmus's do_stress: scratchpad[scratch_locations[blockIdx.x]]; on an H200 it
// changed nothing fuzzgpu's harness showed, bench/results/anchor/README.md)
__device__ __forceinline__ unsigned* fz_stress_word(unsigned* scratch, unsigned knobs, unsigned i, unsigned scratch_lines) {
  if (knobs & 0x80000000u) return scratch + ((blockIdx.x * 7u) % scratch_lines) * 32u;
  return scratch + fz_stress_line(knobs, i, scratch_lines) * 32u + (threadIdx.x & 31u);
}
// The two stress loops below are not unrolled (#pragma unroll 1): ptxas compiles a module's kernels
// as a whole program and gives every kernel that calls a __noinline__ helper its own copy of it, so
// each program of a batch paid for both helpers again -- unrolled, 520 of a typical kernel's 1,030
// SASS instructions and a third of its ptxas time (bench/results/throughput/README.md, "The harness's
// stress helpers"); a loop iteration is two volatile accesses and a modulo either way.
// stress CTA: hammer scratch lines until every testing warp is done (not inlined: its accesses stay
// out of the test's straight-line code, which the SASS checks read)
__device__ __noinline__ void fz_stress(unsigned* scratch, unsigned scratch_lines, const unsigned long long* ctl,
                                       unsigned target, unsigned knobs) {
  const unsigned pattern = (knobs >> 2) & 3u;
  unsigned acc = 0u;
  #pragma unroll 1
  for (unsigned i = 0; i < 4096u; ++i) {
    unsigned* a = fz_stress_word(scratch, knobs, i, scratch_lines);
    acc += fz_hammer(a, pattern, i + acc);
    if ((i & 15u) == 0u && fz_ld_vol64(ctl + 3) >= target) break;
  }
  asm volatile("" :: "r"(acc));
}
// pre-test stress: each testing thread hammers scratch lines (knob bits 8-30: iterations) before
// the test (cuda-litmus's "pre-stress"); not inlined, as fz_stress
__device__ __noinline__ void fz_pre_stress(unsigned* scratch, unsigned scratch_lines, unsigned knobs) {
  const unsigned n = (knobs >> 8) & FZ_PRE_STRESS_MASK, pattern = (knobs >> 4) & 3u;
  unsigned acc = 0u;
  #pragma unroll 1
  for (unsigned i = 0; i < n; ++i) {
    unsigned* a = fz_stress_word(scratch, knobs, i, scratch_lines);
    acc += fz_hammer(a, pattern, i + acc);
  }
  asm volatile("" :: "r"(acc));
}
#endif
