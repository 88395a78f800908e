#ifndef FUZZGPU_HARNESS_HELPERS
#define FUZZGPU_HARNESS_HELPERS
__host__ __device__ __forceinline__ int fz_dec(unsigned raw, unsigned tagh, int init) {
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
// the launch tag of launch epoch, in a value word's high half (1..65535: ValueCodec)
__host__ __device__ __forceinline__ unsigned fz_tagh(unsigned long long epoch) {
  return ((unsigned)(epoch % 65535ull) + 1u) << 16;
}
__device__ __forceinline__ void fz_params(FzParams& P, const FzParams* ptab, unsigned pmask, unsigned long long epoch) {
  P = ptab[(unsigned)epoch & pmask];
  P.tagh = fz_tagh(epoch);
  P.lb = 31u - __clz(blockDim.x); P.cm = blockDim.x - 1u; P.wm = (blockDim.x >> 5) - 1u;
}
// The classification of the previous launch's instances (docs/harness.md, "Outcomes on the device"): one
// function for every program of a module, driven by the program's table (codegen.harness.class_table, a
// __device__ const array of words):
//   [0] NG (global locations' slots), [1] NRES (result words per instance), [2] NBINS (bins; NBINS counts
//   timeouts), [3] result keys (then a timeout word per role, then a where word per role), [4] roles,
//   [5] 1: tagged values (fz_dec), 0: exact, [6] keys; from word FZ_CT_HEAD 4 words a key in radix order --
//   where (a global location's index j, or FZ_CT_RES | a result word's index), the initial value it decodes
//   against, its values' count and their table offset -- then the values.
#define FZ_CT_HEAD 7u
#define FZ_CT_RES 0x80000000u
// the bin of instance inst of launch pe: each key's value decoded, its digit its index in the key's values
// (their count: another value), mixed radix (the first key lowest); NBINS when a role timed out
__host__ __device__ __forceinline__ unsigned fz_class_bin(const unsigned* ct, const unsigned* mem, const unsigned* res,
                                                          unsigned inst, unsigned ninst, unsigned stride,
                                                          const FzParams* ptab, unsigned pmask, unsigned long long pe) {
  const unsigned ng = ct[0], nrk = ct[3], nroles = ct[4], tagged = ct[5], nkeys = ct[6];
  const unsigned tagh = fz_tagh(pe);
  const FzParams* row = ptab + ((unsigned)pe & pmask);
  // the launch's halves of res and mem (they alternate per launch)
  const unsigned* resp = res + (unsigned long long)(pe & 1ull) * ((unsigned long long)ct[1] * ninst);
  const unsigned* memp = mem + (unsigned long long)(pe & 1ull) * ((unsigned long long)ninst * ng * stride);
  unsigned tmo = 0u;
  #pragma unroll 1
  for (unsigned k = nrk; k < nrk + nroles; ++k) tmo |= resp[(unsigned long long)k * ninst + inst];
  unsigned bin = 0u, mult = 1u;
  #pragma unroll 1
  for (unsigned i = 0; i < nkeys; ++i) {
    const unsigned* key = ct + FZ_CT_HEAD + 4u * i;
    const unsigned where = key[0], j = where & ~FZ_CT_RES;
    unsigned raw;
    if (where & FZ_CT_RES) {
      raw = resp[(unsigned long long)j * ninst + inst];
    } else {  // global location j's slot (codegen.layout._gslot)
      const unsigned long long slot = j == 0u ? (unsigned long long)inst * (ng * stride)
          : (unsigned long long)((inst * row->F[j] + row->Cc[j]) & (ninst - 1u)) * (ng * stride) + j * stride;
      raw = *(volatile const unsigned*)(memp + slot);
    }
    const int v = tagged ? fz_dec(raw, tagh, (int)key[1]) : (int)raw;
    const unsigned n = key[2], *vals = ct + key[3];
    unsigned d = 0u;
    #pragma unroll 1
    while (d < n && (int)vals[d] != v) ++d;
    bin += mult * d;
    mult *= n + 1u;
  }
  return tmo ? ct[2] : bin;
}
// classify the previous launch's instance of this thread; the histogram lives on the device (in shared memory,
// fz_hist, when the kernel has one; else hist).  Not inlined: its accesses stay out of the test's straight-line code
__device__ __noinline__ void fz_classify(const unsigned* ct, const unsigned* mem, const unsigned* res, unsigned long long* hist,
                                         unsigned* fz_hist, unsigned lcta, unsigned ninst, unsigned stride,
                                         const FzParams* ptab, unsigned pmask, unsigned long long epoch,
                                         unsigned long long* ctl) {
  const unsigned t = threadIdx.x, NBINS = ct[2], nrk = ct[3], nroles = ct[4];
  const unsigned long long pe = epoch - 1ull;
  const unsigned inst = (lcta << (31u - __clz(blockDim.x))) | t;
  const unsigned bin = fz_class_bin(ct, mem, res, inst, ninst, stride, ptab, pmask, pe);
  // provenance: an instance whose bin the host marked (the oracle's forbidden outcomes) is logged with its
  // launch, instance and every role's where word (fz_where)
  if (bin < FZ_PROV_BINS && ((ctl[FZ_PROV_WATCH + bin / 64u] >> (bin % 64u)) & 1ull)) {
    const unsigned long long slot = atomicAdd(ctl + FZ_PROV_COUNT, 1ull);
    if (slot < FZ_PROV_CAP) {
      const unsigned* resp = res + (unsigned long long)(pe & 1ull) * ((unsigned long long)ct[1] * ninst);
      unsigned long long* e = ctl + FZ_PROV_LOG + slot * (2ull + nroles);
      e[0] = (pe << 32) | inst; e[1] = bin;
      #pragma unroll 1
      for (unsigned k = 0; k < nroles; ++k) e[2 + k] = resp[(unsigned long long)(nrk + nroles + k) * ninst + inst];
    }
  }
  if (fz_hist) {  // one per CTA (a kernel argument: every thread of the CTA takes this branch or none)
    #pragma unroll 1
    for (unsigned b = t; b <= NBINS; b += blockDim.x) fz_hist[b] = 0u;
    __syncthreads();
    atomicAdd(&fz_hist[bin], 1u);
    __syncthreads();
    #pragma unroll 1
    for (unsigned b = t; b <= NBINS; b += blockDim.x) if (fz_hist[b]) atomicAdd(hist + b, (unsigned long long)fz_hist[b]);
  } else {
    atomicAdd(hist + bin, 1ull);
  }
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
