// The harness fuzzgpu generated at commit 55df353 for tests/litmus/gpu/corr3-volatile-relaxed.litmus (issue 27),
// with the role/instruction comments of codegen.OP_MARK added (comments only: the same code).  ptxas 13.0
// issues P0's ld.relaxed.sys of y before its ld.volatile of y in it: the harness artefact that an H200 run
// counted as a forbidden coherence outcome (docs/findings.md, section 3).  tests/backends/test_ran_sass.py.

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


#ifndef FUZZGPU_HARNESS_HELPERS
#define FUZZGPU_HARNESS_HELPERS
__device__ __forceinline__ int fz_dec(unsigned raw, unsigned tagh, int init) {
  // a word written in this launch carries its tag; anything else was written before the launch
  return ((raw & 0xffff0000u) == tagh) ? (int)(short)(raw & 0xffffu) : init;
}
__device__ __forceinline__ unsigned fz_rot(unsigned x, unsigned w, unsigned mw, unsigned l, unsigned ml) {
  return ((((x >> 5) + w * mw) & 7u) << 5) | (((x & 31u) + l * ml) & 31u);
}
__device__ __forceinline__ unsigned fz_unrot(unsigned x, unsigned w, unsigned mw, unsigned l, unsigned ml) {
  return ((((x >> 5) - w * mw) & 7u) << 5) | (((x & 31u) - l * ml) & 31u);
}
// a %globaltimer spin of ns nanoseconds (PDL: the primary runs long after its trigger)
__device__ __forceinline__ void fz_gdelay(unsigned ns) {
  unsigned long long t0, t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0) :: "memory");
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1) :: "memory"); } while (t1 - t0 < ns);
}
// per-launch random parameters, derived on the device from (epoch, seed): no per-launch arguments
struct FzParams {
  unsigned seed, tagh, mw, ml, pidx;
  unsigned f[8], finv[8];      // lane multiplier per CTA group (odd) and its inverse mod 256
  unsigned F[16], Cc[16];      // location permutation per location: inst*F + C mod ninst
};
// knobs (fuzzgpu.stress, RunConfig): bit 0 thread permutation off (roles of an instance in
// neighbouring warps, same lane), bit 1 location shuffle off (an instance's locations in one row:
// adjacent at the stride), bits 2-3 the stress CTAs' access pattern, bits 4-5 the pre-test stress
// pattern, bit 6 stress lines by CTA (else round-robin by warp), bits 8-31 pre-test stress iterations
__device__ __forceinline__ void fz_params(FzParams& P, unsigned long long epoch, unsigned seed0,
                                          unsigned ngroups, unsigned nlocs, unsigned nperms, unsigned knobs) {
  const unsigned h0 = fz_mix(seed0 ^ fz_mix((unsigned)epoch * 0x9e3779b9u + (unsigned)(epoch >> 32)));
  P.seed = h0;
  P.tagh = ((unsigned)(epoch % 65535ull) + 1u) << 16;
  const bool tperm = !(knobs & 1u), lshuf = !(knobs & 2u);
  unsigned h = fz_mix(h0 + 1u); P.mw = tperm ? ((h & 7u) | 1u) : 1u; P.ml = tperm ? (((h >> 3) & 31u) | 1u) : 1u;
  P.pidx = (h >> 8) % nperms;
  for (unsigned g = 0; g < ngroups && g < 8; ++g) {
    h = fz_mix(h0 ^ (0x5100u + g));
    P.f[g] = (g == 0 || !tperm) ? 1u : ((h & 255u) | 1u);
    P.finv[g] = fz_inv8(P.f[g]);
  }
  for (unsigned j = 0; j < nlocs && j < 16; ++j) {
    h = fz_mix(h0 ^ (0x7700u + j));
    P.F[j] = (j == 0 || !lshuf) ? 1u : (h | 1u);
    P.Cc[j] = (j == 0 || !lshuf) ? 0u : fz_mix(h);
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
// stress CTA: hammer scratch lines until every testing warp is done (not inlined: its accesses stay
// out of the test's straight-line code, which the SASS checks read)
__device__ __noinline__ void fz_stress(unsigned* scratch, unsigned scratch_lines, const unsigned long long* ctl,
                                       unsigned target, unsigned knobs) {
  const unsigned t = threadIdx.x, pattern = (knobs >> 2) & 3u;
  unsigned acc = 0u;
  for (unsigned i = 0; i < 4096u; ++i) {
    unsigned* a = scratch + fz_stress_line(knobs, i, scratch_lines) * 32u + (t & 31u);
    acc += fz_hammer(a, pattern, i + acc);
    if ((i & 15u) == 0u && fz_ld_vol64(ctl + 3) >= target) break;
  }
  asm volatile("" :: "r"(acc));
}
// pre-test stress: each testing thread hammers scratch lines (knob bits 8-31: iterations) before
// the test (cuda-litmus's "pre-stress"); not inlined, as fz_stress
__device__ __noinline__ void fz_pre_stress(unsigned* scratch, unsigned scratch_lines, unsigned knobs) {
  const unsigned n = knobs >> 8, pattern = (knobs >> 4) & 3u, t = threadIdx.x;
  unsigned acc = 0u;
  for (unsigned i = 0; i < n; ++i) {
    unsigned* a = scratch + fz_stress_line(knobs, i, scratch_lines) * 32u + (t & 31u);
    acc += fz_hammer(a, pattern, i + acc);
  }
  asm volatile("" :: "r"(acc));
}
#endif

// harness for corr3-volatile-relaxed: 3 roles, 2 CTA group(s), cluster 1, 1 grid(s)
namespace ns_fzh_0_corr3_volatile_relaxed_be03dd {
constexpr unsigned NG = 2u;
// exact-value (RMW) programs: initial values before each launch (not inlined: kept out of the test's code)
__device__ __noinline__ void prime(unsigned* memc, unsigned inst, unsigned ninst, unsigned stride,
                                   unsigned long long epoch, unsigned seed0, unsigned nperms, unsigned knobs) {
  FzParams P;
  fz_params(P, epoch, seed0, 0u, NG, nperms, knobs);
  memc[((unsigned long long)(inst) * (NG * stride))] = (P.tagh | ((unsigned)(0) & 0xffffu));
  memc[((unsigned long long)(((inst) * P.F[1] + P.Cc[1]) & (ninst - 1u)) * (NG * stride) + 1u * stride)] = (P.tagh | ((unsigned)(0) & 0xffffu));
}
}
__device__ __noinline__ void fzc_fzh_0_corr3_volatile_relaxed_be03dd(const unsigned* mem, const unsigned* res, unsigned long long* hist, unsigned* fz_hist, unsigned lcta, unsigned ninst, unsigned stride, unsigned seed0, unsigned nperms, unsigned long long epoch, unsigned knobs) {
  constexpr unsigned NG = 2u, NRES = 5u, NBINS = 9u;
  const unsigned t = threadIdx.x;
    // classify the previous launch's instances; the histogram lives on the device
    const unsigned long long pe = epoch - 1ull;
    FzParams PP;
    fz_params(PP, pe, seed0, 0u, NG, nperms, knobs);
    const unsigned inst = (lcta << 8) | t;
    const unsigned* resp = res + (unsigned long long)(pe & 1ull) * ((unsigned long long)NRES * ninst);
    const unsigned* memp = mem + (unsigned long long)(pe & 1ull) * ((unsigned long long)ninst * NG * stride);
    unsigned tmo = 0u;
    for (unsigned k = 2u; k < NRES; ++k) tmo |= resp[(unsigned long long)k * ninst + inst];
    unsigned bin = 0u, mult = 1u; int v;
    v = fz_dec(resp[0ull * ninst + inst], PP.tagh, 0);
    bin += mult * (v == 0 ? 0u : v == 6 ? 1u : 2u); mult *= 3u;
    v = fz_dec(resp[1ull * ninst + inst], PP.tagh, 0);
    bin += mult * (v == 0 ? 0u : v == 6 ? 1u : 2u); mult *= 3u;
    if (tmo) bin = NBINS;
    for (unsigned b = t; b <= NBINS; b += 256u) fz_hist[b] = 0u;
    __syncthreads();
    atomicAdd(&fz_hist[bin], 1u);
    __syncthreads();
    for (unsigned b = t; b <= NBINS; b += 256u) if (fz_hist[b]) atomicAdd(hist + b, (unsigned long long)fz_hist[b]);
}
extern "C" __global__ void __launch_bounds__(256) fzh_0_corr3_volatile_relaxed_be03dd(
    unsigned* mem, unsigned* res, unsigned long long* hist, unsigned long long* ctl,
    const unsigned short* perms, unsigned* scratch, unsigned ntest, unsigned stride, unsigned spin,
    unsigned barrier, unsigned mode, unsigned seed0, unsigned scratch_lines, unsigned budget,
    unsigned long long epoch0, unsigned nperms, unsigned pdl_delay, unsigned long long epoch_arg, unsigned knobs) {
  using namespace ns_fzh_0_corr3_volatile_relaxed_be03dd;
  constexpr unsigned NSH = 0u, NRES = 5u, NBINS = 9u, SW = 1u;  (void)SW; (void)NRES;
  __shared__ unsigned fz_hist[NBINS + 1u];
  const unsigned t = threadIdx.x;
  const unsigned fz_zero = (unsigned)((unsigned long long)mem >> 63);  // a run-time 0 (repeated loads)
  // the launch number: a kernel argument (RunConfig.host_epoch), or read from the control block
  // (one argument set for every launch: launches replay from a CUDA graph)
  const unsigned long long epoch = (epoch_arg != ~0ull) ? epoch_arg : fz_ld_vol64(ctl);
  unsigned long long* const ctlg = ctl + 0u;  // this grid's counters: [1] CTAs done, [2] barrier, [3] warps done
  const unsigned ninst = ntest * 256u;
  const unsigned nQ = ntest / 1u;
  const unsigned rank = blockIdx.x % 1u;
  FzParams P;
  fz_params(P, epoch, seed0, 2u, NG, nperms, knobs);
  const unsigned lq = perms[P.pidx * (gridDim.x / 1u) + blockIdx.x / 1u];
  const unsigned lcta = lq * 1u + rank;
  const bool testing = lcta < ntest;
  unsigned* memc = mem;
  const unsigned tagh = P.tagh;
  (void)pdl_delay; (void)fz_zero; (void)nQ; (void)tagh; (void)memc;
  if (mode == 0u || mode == 3u) {
    if (testing) {
      unsigned inst0_L = (fz_unrot(t, 0u, P.mw, 0u, P.ml) * P.finv[0]) & 255u;
      unsigned inst0 = ((((lq + nQ - 0u) % nQ) * 1u + 0u) << 8) | inst0_L;
      unsigned* k0_a1 = memc + ((unsigned long long)(((inst0) * P.F[1] + P.Cc[1]) & (ninst - 1u)) * (NG * stride) + 1u * stride);
      int k0_r1 = 0;
      int k0_r2 = 0;
      unsigned k0_r1_raw = 0u; (void)k0_r1_raw;
      unsigned k0_r2_raw = 0u; (void)k0_r2_raw;
      unsigned k0__tmo = 0u, k0__spins = 0u; (void)k0__spins;
      unsigned inst1_L = (fz_unrot(t, 0u, P.mw, 0u, P.ml) * P.finv[1]) & 255u;
      unsigned inst1 = ((((lq + nQ - (1u * (1u + ((inst1_L + P.seed) % ((nQ - 1u) / 1u))))) % nQ) * 1u + 0u) << 8) | inst1_L;
      unsigned* k1_a0 = memc + ((unsigned long long)(inst1) * (NG * stride));
      int k1_r0 = 0;
      unsigned k1_r0_raw = 0u; (void)k1_r0_raw;
      unsigned k1__tmo = 0u, k1__spins = 0u; (void)k1__spins;
      unsigned inst2_L = (fz_unrot(t, 1u, P.mw, 0u, P.ml) * P.finv[0]) & 255u;
      unsigned inst2 = ((((lq + nQ - 0u) % nQ) * 1u + 0u) << 8) | inst2_L;
      unsigned* k2_a1 = memc + ((unsigned long long)(((inst2) * P.F[1] + P.Cc[1]) & (ninst - 1u)) * (NG * stride) + 1u * stride);
      unsigned k2__tmo = 0u, k2__spins = 0u; (void)k2__spins;
      if (knobs >> 8) fz_pre_stress(scratch, scratch_lines, knobs);  // pre-test stress
      if (barrier) {  // loose global barrier: one lane per warp counts in, polls at most 1024 times
        if ((t & 31u) == 0u) {
          atomicAdd(ctlg + 2, 1ull);
          for (unsigned i = 0; i < 1024u; ++i) if (fz_ld_vol64(ctlg + 2) >= (unsigned long long)ntest * 8u) break;
        }
        __syncwarp();
      }
      if (spin) fz_delay(fz_mix(P.seed ^ (lcta * 8u + (t >> 5))) % spin);  // per-warp random delay
      // ---- role 0: P0
      asm volatile("fence.sc.cta;" ::: "memory");  // fz-op 0.0
      { unsigned raw_;  // fz-op 0.1
        asm volatile("ld.volatile.global.u32 %0, [%1];" : "=r"(raw_) : "l"(k0_a1) : "memory");  // fz-op 0.1
        k0_r1_raw = raw_; }  // fz-op 0.1
      { unsigned raw_;  // fz-op 0.2
        asm volatile("ld.relaxed.sys.global.u32 %0, [%1];" : "=r"(raw_) : "l"(((k0_a1) + 1u * fz_zero)) : "memory");  // fz-op 0.2
        k0_r2_raw = raw_; }  // fz-op 0.2
      L0___end: ;
      // ---- role 1: P1
      { unsigned raw_;  // fz-op 1.0
        asm volatile("ld.relaxed.sys.global.u32 %0, [%1];" : "=r"(raw_) : "l"(k1_a0) : "memory");  // fz-op 1.0
        k1_r0_raw = raw_; }  // fz-op 1.0
      L1___end: ;
      // ---- role 2: P2
      asm volatile("fence.sc.sys;" ::: "memory");  // fz-op 2.0
      asm volatile("st.relaxed.sys.global.u32 [%0], %1;" :: "l"(k2_a1), "r"((tagh | ((unsigned)((6)) & 0xffffu))) : "memory");  // fz-op 2.1
      L2___end: ;
      unsigned* resc = res + (unsigned long long)(epoch & 1ull) * ((unsigned long long)NRES * ninst);
      resc[0ull * ninst + inst0] = k0_r1_raw;
      resc[1ull * ninst + inst0] = k0_r2_raw;
      resc[2ull * ninst + inst0] = k0__tmo;
      resc[3ull * ninst + inst1] = k1__tmo;
      resc[4ull * ninst + inst2] = k2__tmo;
      __syncwarp();
      if ((t & 31u) == 0u) atomicAdd(ctlg + 3, 1ull);
    } else {
      fz_stress(scratch, scratch_lines, ctlg, ntest * 8u, knobs);  // stress CTA
    }
  }
  if (testing && (mode == 1u || (mode == 0u && epoch > epoch0))) {
    fzc_fzh_0_corr3_volatile_relaxed_be03dd(mem, res, hist, fz_hist, lcta, ninst, stride, seed0, nperms, epoch, knobs);
  }
  if (mode == 0u || mode == 3u) {
    __syncthreads();
    if (t == 0u) {
      __threadfence();
      unsigned long long old = atomicAdd(ctlg + 1, 1ull);
      if (old == (unsigned long long)gridDim.x - 1ull) {
        ctl[1] = 0ull; ctl[2] = 0ull; ctl[3] = 0ull; __threadfence(); ctl[0] = epoch + 1ull;
      }
    }
  }
}
