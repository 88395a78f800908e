// probe_replica.cu -- a stand-alone replica of the litmus harness METHOD described in
// /work/shared/facts/h200-litmus-probe.md ("Method"), with toggles that move it, one factor at a
// time, toward fuzzgpu's harness (fuzzgpu/codegen.py + fuzzgpu/backends/cuda.py).
//
// Probe method (default, no toggles):
//   * tc = 256 testing CTAs x 256 threads = 65,536 instances per launch.
//   * thread (wg, lid) plays role 0 of instance a = wg*256 + lid and role 1 of instance
//     b = nwg*256 + (lid*lfac mod 256), nwg = (wg + 1 + ((lid+seed) mod (tc-1))) mod tc.
//   * wg = perm[pidx][blockIdx.x], one of 64 host-precomputed random permutations, pidx per launch.
//   * x(i) = mem + 2*stride*i, y(i) = mem + 2*stride*yperm(i) + stride, yperm(i) = i*yfac + yadd
//     mod 65536 (yfac odd).
//   * stored value v = launch number + 1 (memory is never reset; 0 = the initial value).
//   * a SEPARATE check kernel after each test launch bins (r0==v, r1==v, same SM) into 8 bins.
//   * per-launch random parameters (seed, lfac, yfac, yadd, pidx, v) are KERNEL ARGUMENTS drawn on
//     the host (std::mt19937_64).
//   * knobs: --barrier (loose global barrier: one lane per warp atomicAdd, then poll <= 1024 times),
//     --spin N (per-warp %clock delay in [0,N) cycles), --stress K (K extra CTAs hammering
//     --stress-lines scratch lines with volatile store+load until all testing warps are done,
//     <= 4096 iterations).
//
// Toggles toward fuzzgpu's harness:
//   --graph        64 launch steps (test [+check]) are kernel nodes of one CUDA graph, replayed; with
//                  host parameters the 64 nodes' arguments are updated before each replay
//                  (cudaGraphExecKernelNodeSetParams), so every launch still gets fresh parameters.
//   --devparams    the test kernel takes no per-launch arguments: every thread does a volatile 64-bit
//                  load of a device control word (the epoch, bumped by the last CTA of the previous
//                  launch) and derives seed/lfac/yfac/yadd/pidx/v on the device (hash), then loads
//                  the CTA permutation (a second dependent global load), as fuzzgpu does.  It needs
//                  the epoch bump, so it brings the CTA-level part of --tail with it (__syncthreads,
//                  __threadfence, CTA counter), not the per-warp counter.
//   --inline-check no separate check kernel: each test launch classifies the PREVIOUS launch after
//                  its test (results double-buffered), plus one final check-only launch.
//   --samekernel   test and check are ONE kernel function with a mode argument (fuzzgpu's
//                  inline_check=False shape): the check launch runs the same code object.
//   --twobuf       two memory buffers alternating per launch (fuzzgpu: mem + (epoch&1)*...).
//   --tail         fuzzgpu's kernel tail: per-warp atomicAdd on a "warps done" counter after the
//                  test, then __syncthreads, thread 0: __threadfence + atomicAdd on a CTA counter,
//                  the last CTA resets the counters and bumps the epoch (implied by --devparams).
//   --tight        closer to fuzzgpu's schedule: the four addresses and the result addresses are
//                  materialised (an empty asm with "+l" operands) before the barrier/spin.  fuzzgpu's
//                  SASS has the four accesses back to back; the probe-faithful replica has ~1-10
//                  ALU instructions between them, --tight 1-4 (ptxas still fills a few slots).
//   --stl          fuzzgpu's prologue also writes its parameter struct to the local-memory stack
//                  (~10 STL per thread, because the __noinline__ prime() takes FzParams by
//                  reference); this writes 14 words of a local struct that a never-called
//                  __noinline__ function takes by reference.  Built alone or with all the others.
//   --all          all of the above.
//
// What is NOT known about the probe and guessed here: its code schedule, how its barrier counter was
// reset (here it only grows: target = 8*tc*(launch+1)), how it stored r0/r1/%smid (here one word
// per result, one byte per %smid, double-buffered by launch parity), its RNG.
//
// Output: one JSON line per run on stdout.
//
// Build: nvcc -O3 -arch=sm_90 -o probe_replica bench/probe_replica.cu
// Run:   ./probe_replica --test MP --stride 1 --launches 3052 [--barrier] [--spin 3000] [toggles]

#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#define CK(call)                                                                                    \
  do {                                                                                              \
    cudaError_t e_ = (call);                                                                        \
    if (e_ != cudaSuccess) {                                                                        \
      fprintf(stderr, "CUDA error %s at %s:%d: %s\n", cudaGetErrorName(e_), __FILE__, __LINE__,     \
              cudaGetErrorString(e_));                                                              \
      printf("{\"error\": \"%s at line %d\"}\n", cudaGetErrorName(e_), __LINE__);                  \
      exit(2);                                                                                      \
    }                                                                                               \
  } while (0)

enum { T_MP = 0, T_SB = 1, T_LB = 2, T_MPCTA = 3 };
static const char* TEST_NAMES[] = {"MP", "SB", "LB", "MPcta"};

// mode bits
enum { M_TEST = 1u, M_CHECK = 2u };
// flag bits
enum { F_DEVPARAMS = 1u, F_TWOBUF = 2u, F_TAIL = 4u, F_BARRIER = 8u, F_STRESS = 16u };

constexpr unsigned NPERMS = 64;
constexpr unsigned THREADS = 256;

struct Args {
  unsigned* mem;                // 2 buffers when F_TWOBUF (each 2*stride*ninst words)
  unsigned* res;                // 2 (parity) x 2 (r0, r1) x ninst words
  unsigned char* smid;          // 2 (parity) x 2 (role) x ninst bytes
  unsigned long long* hist;     // 8 bins
  unsigned long long* ctl;      // [0] epoch, [1] CTAs done, [2] barrier counter, [3] warps done
  const unsigned short* perms;  // NPERMS x grid
  unsigned* scratch;            // stress lines (32 words each)
  unsigned tc, grid, stride, spin, flags, mode, seed0, stress_lines;
  // host-drawn per-launch parameters of the TEST (ignored with F_DEVPARAMS)
  unsigned long long launch;    // launch number n (v = n + 1)
  unsigned seed, lfac, yfac, yadd, pidx;
  // what the CHECK classifies (ignored with F_DEVPARAMS: the device derives it from the epoch)
  unsigned long long check_launch;
};

__host__ __device__ inline unsigned mix32(unsigned x) {
  x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; x *= 0x846ca68bU; x ^= x >> 16; return x;
}

struct LParams { unsigned v, seed, lfac, yfac, yadd, pidx, par; };

// device-derived parameters of launch n (--devparams), fuzzgpu-like (fz_params): a hash of (n, seed0)
__device__ __forceinline__ LParams derive(unsigned long long n, unsigned seed0) {
  LParams P;
  const unsigned h0 = mix32(seed0 ^ mix32((unsigned)n * 0x9e3779b9u + (unsigned)(n >> 32)));
  P.seed = h0;
  unsigned h = mix32(h0 + 1u);
  P.lfac = (h & 255u) | 1u;
  P.pidx = (h >> 8) % NPERMS;
  h = mix32(h0 ^ 0x7701u);
  P.yfac = h | 1u;
  P.yadd = mix32(h);
  P.v = (unsigned)n + 1u;
  P.par = (unsigned)(n & 1ull);
  return P;
}

__device__ __forceinline__ unsigned long long ld_vol64(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.volatile.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ unsigned clock32() {
  unsigned c;
  asm volatile("mov.u32 %0, %%clock;" : "=r"(c)::"memory");
  return c;
}
__device__ __forceinline__ unsigned smid32() {
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}

// ---- litmus accesses: inline PTX, asm volatile, "memory" clobbers -------------------------------
#define PTX_STORE(name, ins)                                                \
  __device__ __forceinline__ void name(unsigned* p, unsigned v) {           \
    asm volatile(ins " [%0], %1;" ::"l"(p), "r"(v) : "memory");             \
  }
#define PTX_LOAD(name, ins)                                                 \
  __device__ __forceinline__ unsigned name(const unsigned* p) {             \
    unsigned r;                                                             \
    asm volatile(ins " %0, [%1];" : "=r"(r) : "l"(p) : "memory");           \
    return r;                                                               \
  }
PTX_STORE(st_rlx, "st.relaxed.gpu.global.u32")
PTX_LOAD(ld_rlx, "ld.relaxed.gpu.global.u32")
PTX_STORE(st_weak, "st.global.u32")
PTX_LOAD(ld_weak, "ld.global.u32")
PTX_STORE(st_rel_cta, "st.release.cta.global.u32")
PTX_LOAD(ld_acq_cta, "ld.acquire.cta.global.u32")

// stress CTA (not inlined: keeps the test's straight-line code readable in SASS)
__device__ __noinline__ void stress_body(unsigned* scratch, unsigned lines, const unsigned long long* ctl,
                                         unsigned long long target) {
  const unsigned t = threadIdx.x;
  unsigned acc = 0u;
  for (unsigned i = 0; i < 4096u; ++i) {
    unsigned line = (blockIdx.x * 7u + (t >> 5) * 3u + i) % lines;
    unsigned* a = scratch + line * 32u + (t & 31u);
    asm volatile("st.volatile.global.u32 [%0], %1;" ::"l"(a), "r"(i + acc) : "memory");
    unsigned v;
    asm volatile("ld.volatile.global.u32 %0, [%1];" : "=r"(v) : "l"(a) : "memory");
    acc += v;
    if ((i & 15u) == 0u && ld_vol64(ctl + 3) >= target) break;
  }
  asm volatile("" ::"r"(acc));
}

// ---- the test -------------------------------------------------------------------------------
template <int T, bool TIGHT>
__device__ __forceinline__ void test_body(const Args& A, const LParams& P, unsigned wg) {
  const unsigned lid = threadIdx.x;
  const unsigned tc = A.tc;
  const unsigned ninst = tc * THREADS;
  const unsigned nwg = (wg + 1u + ((lid + P.seed) % (tc - 1u))) % tc;
  const unsigned a = wg * THREADS + lid;
  const unsigned b = nwg * THREADS + ((lid * P.lfac) & 255u);
  const unsigned s = A.stride;
  unsigned* mem = A.mem + ((A.flags & F_TWOBUF) ? (unsigned long long)P.par * 2ull * s * ninst : 0ull);
  unsigned* xa = mem + 2ull * s * a;
  unsigned* ya = mem + 2ull * s * ((a * P.yfac + P.yadd) & (ninst - 1u)) + s;
  unsigned* xb = mem + 2ull * s * b;
  unsigned* yb = mem + 2ull * s * ((b * P.yfac + P.yadd) & (ninst - 1u)) + s;
  const unsigned v = P.v;
  if (TIGHT) {
    // fuzzgpu's schedule: every address is materialised before the barrier/spin, so the four test
    // accesses issue back to back (the probe-faithful kernel lets ptxas sink address arithmetic
    // between them)
    asm volatile("" : "+l"(xa), "+l"(ya), "+l"(xb), "+l"(yb));
  }

  if (A.flags & F_BARRIER) {  // loose global barrier
    if ((lid & 31u) == 0u) {
      unsigned long long target = (unsigned long long)(tc * (THREADS / 32u));
      if (!(A.flags & (F_DEVPARAMS | F_TAIL))) target *= (unsigned long long)(P.v);  // never reset
      atomicAdd(A.ctl + 2, 1ull);
      for (unsigned i = 0; i < 1024u; ++i)
        if (ld_vol64(A.ctl + 2) >= target) break;
    }
    __syncwarp();
  }
  if (A.spin) {  // per-warp random delay, a %clock loop
    const unsigned d = mix32(P.seed ^ (wg * 8u + (lid >> 5))) % A.spin;
    const unsigned c0 = clock32();
    while (clock32() - c0 < d) {
    }
  }
  unsigned* res = A.res + (unsigned long long)P.par * 2ull * ninst;
  unsigned char* sm = A.smid + (unsigned long long)P.par * 2ull * ninst;
  // both loads are role 1's in MP/MPcta; in SB/LB r0 is role 0's
  unsigned* rp0 = (T == T_MP || T == T_MPCTA) ? res + b : res + a;
  unsigned* rp1 = res + ninst + b;
  unsigned char* sp0 = sm + a;
  unsigned char* sp1 = sm + ninst + b;
  unsigned me = 0u;
  if (TIGHT) {  // result addresses and %smid too, so nothing is left to schedule between the accesses
    me = smid32();
    asm volatile("" : "+l"(rp0), "+l"(rp1), "+l"(sp0), "+l"(sp1), "+r"(me));
  }
  unsigned r0, r1;
  if (T == T_MP) {
    st_rlx(xa, v);
    st_rlx(ya, v);
    r0 = ld_rlx(yb);
    r1 = ld_rlx(xb);
  } else if (T == T_SB) {
    st_rlx(xa, v);
    r0 = ld_rlx(ya);
    st_rlx(yb, v);
    r1 = ld_rlx(xb);
  } else if (T == T_LB) {
    r0 = ld_rlx(xa);
    st_rlx(ya, v);
    r1 = ld_rlx(yb);
    st_rlx(xb, v);
  } else {  // MPcta: weak data, release/acquire.cta flag
    st_weak(xa, v);
    st_rel_cta(ya, v);
    r0 = ld_acq_cta(yb);
    r1 = ld_weak(xb);
  }
  if (!TIGHT) me = smid32();
  *rp0 = r0;
  *rp1 = r1;
  *sp0 = (unsigned char)me;
  *sp1 = (unsigned char)me;
  if (A.flags & (F_TAIL | F_STRESS)) {  // one atomic per warp on a "warps done" counter (fuzzgpu; stress)
    __syncwarp();
    if ((lid & 31u) == 0u) atomicAdd(A.ctl + 3, 1ull);
  }
}

// the check of launch n (results parity n&1): 8 bins (r0==v) | (r1==v)<<1 | (same SM)<<2
__device__ __noinline__ void check_body(const unsigned* res_all, const unsigned char* smid_all,
                                        unsigned long long* hist, unsigned tc, unsigned long long n, unsigned row) {
  __shared__ unsigned h[8];
  const unsigned t = threadIdx.x;
  const unsigned ninst = tc * THREADS;
  if (t < 8u) h[t] = 0u;
  __syncthreads();
  const unsigned v = (unsigned)n + 1u;
  const unsigned par = (unsigned)(n & 1ull);
  const unsigned i = row * THREADS + t;
  const unsigned* res = res_all + (unsigned long long)par * 2ull * ninst;
  const unsigned char* sm = smid_all + (unsigned long long)par * 2ull * ninst;
  const unsigned r0 = res[i], r1 = res[ninst + i];
  const unsigned bin = (r0 == v ? 1u : 0u) | (r1 == v ? 2u : 0u) | (sm[i] == sm[ninst + i] ? 4u : 0u);
  atomicAdd(&h[bin], 1u);
  __syncthreads();
  if (t < 8u && h[t]) atomicAdd(hist + t, (unsigned long long)h[t]);
}

// the kernel tail: last CTA resets the counters and bumps the epoch (fuzzgpu's shape)
__device__ __forceinline__ void tail(const Args& A, unsigned long long epoch) {
  __syncthreads();
  if (threadIdx.x == 0u) {
    __threadfence();
    unsigned long long old = atomicAdd(A.ctl + 1, 1ull);
    if (old == (unsigned long long)gridDim.x - 1ull) {
      A.ctl[1] = 0ull;
      A.ctl[2] = 0ull;
      A.ctl[3] = 0ull;
      __threadfence();
      A.ctl[0] = epoch + 1ull;
    }
  }
}

// The test kernel.  Compile-time variants, so that the probe-faithful kernel carries no code of the
// toggles: DEV (--devparams: params from the epoch), TAIL (--tail or DEV: the fuzzgpu tail),
// COMB (--samekernel / --inline-check: one kernel function that can also check, by mode bits).
// The probe-faithful run uses <T, false, false, false> for the test and check_kernel for the check.
// fuzzgpu's kernel writes its per-launch parameter struct (FzParams) to the local-memory stack in
// every launch, because a __noinline__ function (prime) takes it by reference: ~10 STL per thread
// before the test.  STL reproduces that: a parameter struct in local memory, passed to a
// __noinline__ function on a branch that is never taken.
struct LocalParams { unsigned w[14]; };
__device__ __noinline__ void stl_sink(const LocalParams& L, unsigned* out) {
  unsigned acc = 0u;
  for (int i = 0; i < 14; ++i) acc += L.w[i] * (unsigned)(i + 1);
  *out = acc;
}

template <int T, bool DEV, bool TAIL, bool COMB, bool TIGHT, bool STL>
__global__ void __launch_bounds__(256) litmus_kernel(const Args A) {
  unsigned long long n;
  LParams P;
  if (DEV) {
    n = ld_vol64(A.ctl);  // the epoch = this launch's number (check-only launches: one past the last)
    P = derive(n, A.seed0);
  } else {
    n = A.launch;
    P.v = (unsigned)n + 1u; P.seed = A.seed; P.lfac = A.lfac; P.yfac = A.yfac; P.yadd = A.yadd;
    P.pidx = A.pidx; P.par = (unsigned)(n & 1ull);
  }
  const unsigned wg = A.perms[P.pidx * A.grid + blockIdx.x];
  const bool testing = wg < A.tc;
  if (STL) {
    LocalParams L;
    unsigned h = P.seed;
    for (int i = 0; i < 14; ++i) { h = mix32(h + (unsigned)i); L.w[i] = h ^ P.yfac; }
    if (A.mode == 0xdeadu) { stl_sink(L, A.res); return; }  // never taken (mode is 1, 2 or 3)
  }
  if (!COMB || (A.mode & M_TEST)) {
    if (testing) {
      test_body<T, TIGHT>(A, P, wg);
    } else {
      // until every testing warp is done: the counter is reset per launch by the tail (DEV, TAIL),
      // else it only grows
      unsigned long long target = (unsigned long long)A.tc * 8ull;
      if (!(DEV || TAIL)) target *= (unsigned long long)P.v;
      stress_body(A.scratch, A.stress_lines, A.ctl, target);
    }
  }
  if (COMB) {
    if ((A.mode & M_CHECK) && testing) {
      // with M_TEST: classify the previous launch (n-1); check only: the launch before the epoch
      // (DEV) or A.check_launch
      unsigned long long cn = (A.mode & M_TEST) ? n - 1ull : (DEV ? n - 1ull : A.check_launch);
      check_body(A.res, A.smid, A.hist, A.tc, cn, wg);
    }
  }
  if (DEV || TAIL) {
    if (!COMB || (A.mode & M_TEST)) tail(A, n);
  }
}

// the probe's separate check kernel (its own code object)
template <bool DEV>
__global__ void __launch_bounds__(256) check_kernel(const Args A) {
  const unsigned long long cn = DEV ? ld_vol64(A.ctl) - 1ull : A.check_launch;
  if (blockIdx.x < A.tc) check_body(A.res, A.smid, A.hist, A.tc, cn, blockIdx.x);
}

typedef void (*KFn)(const Args);
template <int T, bool TIGHT>
static KFn test_fn_tt(bool dev, bool tail, bool comb) {
  if (dev) {
    return comb ? litmus_kernel<T, true, true, true, TIGHT, false> : litmus_kernel<T, true, true, false, TIGHT, false>;
  }
  if (tail) return comb ? litmus_kernel<T, false, true, true, TIGHT, false> : litmus_kernel<T, false, true, false, TIGHT, false>;
  return comb ? litmus_kernel<T, false, false, true, TIGHT, false> : litmus_kernel<T, false, false, false, TIGHT, false>;
}
template <int T>
static KFn test_fn_t(bool dev, bool tail, bool comb, bool tight, bool stl) {
  if (stl) {  // instantiated alone and with every other toggle only
    if (!dev && !tail && !comb && !tight) return litmus_kernel<T, false, false, false, false, true>;
    if (dev && tail && comb && tight) return litmus_kernel<T, true, true, true, true, true>;
    return nullptr;
  }
  return tight ? test_fn_tt<T, true>(dev, tail, comb) : test_fn_tt<T, false>(dev, tail, comb);
}
static KFn test_fn(int t, bool dev, bool tail, bool comb, bool tight, bool stl) {
  switch (t) {
    case T_MP: return test_fn_t<T_MP>(dev, tail, comb, tight, stl);
    case T_SB: return test_fn_t<T_SB>(dev, tail, comb, tight, stl);
    case T_LB: return test_fn_t<T_LB>(dev, tail, comb, tight, stl);
    default: return test_fn_t<T_MPCTA>(dev, tail, comb, tight, stl);
  }
}

// ---------------------------------------------------------------------------------------------
struct Opts {
  int test = T_MP;
  unsigned stride = 1, spin = 0, stress = 0, stress_lines = 64, tc = 256;
  bool barrier = false;
  unsigned long long launches = 1000;
  double instances = 0;  // > 0: launches = ceil(instances / (tc*256))
  unsigned long long seed = 12345;
  bool graph = false, devparams = false, inline_check = false, samekernel = false, twobuf = false, tail = false,
       tight = false, stl = false;
  std::string label;
};

static void usage() {
  fprintf(stderr,
          "usage: probe_replica [--test MP|SB|LB|MPcta] [--stride N] [--barrier] [--spin N] [--stress K]\n"
          "                     [--stress-lines N] [--tc N] [--launches N | --instances N] [--seed S]\n"
          "                     [--graph] [--devparams] [--inline-check] [--samekernel] [--twobuf] [--tail]\n"
          "                     [--tight] [--stl] [--all] [--label STR]\n");
}

int main(int argc, char** argv) {
  Opts o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) { usage(); exit(1); }
      return argv[++i];
    };
    if (a == "--test") {
      std::string t = next();
      if (t == "MP") o.test = T_MP;
      else if (t == "SB") o.test = T_SB;
      else if (t == "LB") o.test = T_LB;
      else if (t == "MPcta") o.test = T_MPCTA;
      else { usage(); return 1; }
    } else if (a == "--stride") o.stride = (unsigned)strtoul(next(), 0, 0);
    else if (a == "--spin") o.spin = (unsigned)strtoul(next(), 0, 0);
    else if (a == "--stress") o.stress = (unsigned)strtoul(next(), 0, 0);
    else if (a == "--stress-lines") o.stress_lines = (unsigned)strtoul(next(), 0, 0);
    else if (a == "--tc") o.tc = (unsigned)strtoul(next(), 0, 0);
    else if (a == "--barrier") o.barrier = true;
    else if (a == "--launches") o.launches = strtoull(next(), 0, 0);
    else if (a == "--instances") o.instances = strtod(next(), 0);
    else if (a == "--seed") o.seed = strtoull(next(), 0, 0);
    else if (a == "--graph") o.graph = true;
    else if (a == "--devparams") o.devparams = true;
    else if (a == "--inline-check") o.inline_check = true;
    else if (a == "--samekernel") o.samekernel = true;
    else if (a == "--twobuf") o.twobuf = true;
    else if (a == "--tail") o.tail = true;
    else if (a == "--tight") o.tight = true;
    else if (a == "--stl") o.stl = true;
    else if (a == "--all") o.graph = o.devparams = o.inline_check = o.samekernel = o.twobuf = o.tail = o.tight = o.stl = true;
    else if (a == "--label") o.label = next();
    else if (a == "-h" || a == "--help") { usage(); return 0; }
    else { fprintf(stderr, "unknown option %s\n", a.c_str()); usage(); return 1; }
  }
  if (o.tc < 2 || (o.tc & (o.tc - 1))) { fprintf(stderr, "--tc must be a power of two >= 2\n"); return 1; }
  if (o.stride < 1) o.stride = 1;
  if (o.stress_lines < 1) o.stress_lines = 1;
  const unsigned ninst = o.tc * THREADS;
  if (o.instances > 0) o.launches = (unsigned long long)((o.instances + ninst - 1) / ninst);
  if (o.launches < 2) o.launches = 2;
  const unsigned grid = o.tc + o.stress;
  if (grid > 65535) { fprintf(stderr, "grid too large\n"); return 1; }

  int dev = 0;
  CK(cudaSetDevice(dev));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, dev));

  // ---- buffers
  const unsigned long long mem_words = 2ull * o.stride * ninst * (o.twobuf ? 2ull : 1ull);
  Args A;
  memset(&A, 0, sizeof(A));
  CK(cudaMalloc(&A.mem, mem_words * 4));
  CK(cudaMalloc(&A.res, 2ull * 2ull * ninst * 4));
  CK(cudaMalloc(&A.smid, 2ull * 2ull * ninst));
  CK(cudaMalloc(&A.hist, 8 * 8));
  CK(cudaMalloc(&A.ctl, 64));
  CK(cudaMalloc(&A.scratch, (size_t)o.stress_lines * 32 * 4));
  CK(cudaMemset(A.mem, 0, mem_words * 4));
  CK(cudaMemset(A.res, 0xff, 2ull * 2ull * ninst * 4));
  CK(cudaMemset(A.smid, 0, 2ull * 2ull * ninst));
  CK(cudaMemset(A.hist, 0, 64));
  CK(cudaMemset(A.ctl, 0, 64));
  CK(cudaMemset(A.scratch, 0, (size_t)o.stress_lines * 32 * 4));
  std::mt19937_64 rng(o.seed);
  std::vector<unsigned short> perms(NPERMS * grid);
  for (unsigned p = 0; p < NPERMS; ++p) {
    for (unsigned i = 0; i < grid; ++i) perms[p * grid + i] = (unsigned short)i;
    for (unsigned i = grid - 1; i > 0; --i) {
      unsigned j = (unsigned)(rng() % (i + 1));
      std::swap(perms[p * grid + i], perms[p * grid + j]);
    }
  }
  unsigned short* dperms;
  CK(cudaMalloc(&dperms, perms.size() * 2));
  CK(cudaMemcpy(dperms, perms.data(), perms.size() * 2, cudaMemcpyHostToDevice));
  A.perms = dperms;
  A.tc = o.tc;
  A.grid = grid;
  A.stride = o.stride;
  A.spin = o.spin;
  A.flags = (o.devparams ? F_DEVPARAMS : 0u) | (o.twobuf ? F_TWOBUF : 0u) | (o.tail ? F_TAIL : 0u) |
            (o.barrier ? F_BARRIER : 0u) | (o.stress ? F_STRESS : 0u);
  A.seed0 = (unsigned)(o.seed ^ (o.seed >> 32));
  A.stress_lines = o.stress_lines;

  const bool comb = o.samekernel || o.inline_check;
  KFn kt = test_fn(o.test, o.devparams, o.tail, comb, o.tight, o.stl);
  if (!kt) {
    fprintf(stderr, "--stl is built alone or with every other toggle (--all) only\n");
    printf("{\"error\": \"--stl combination not instantiated\"}\n");
    return 1;
  }
  KFn kc = o.devparams ? (KFn)check_kernel<true> : (KFn)check_kernel<false>;
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));

  // ---- the launch plan: step n = test launch n (+ its check, or the check of n-1 inline)
  auto test_args = [&](unsigned long long n, unsigned mode) {
    Args a = A;
    a.mode = mode;
    a.launch = n;
    a.seed = (unsigned)rng();
    a.lfac = ((unsigned)rng() & 255u) | 1u;
    a.yfac = (unsigned)rng() | 1u;
    a.yadd = (unsigned)rng();
    a.pidx = (unsigned)(rng() % NPERMS);
    a.check_launch = n;
    return a;
  };
  auto check_args = [&](unsigned long long n) {
    Args a = A;
    a.mode = M_CHECK;
    a.launch = n;
    a.check_launch = n;
    return a;
  };
  // kernels of one step: (fn, args)
  struct K { KFn fn; Args a; };
  auto step = [&](unsigned long long n, std::vector<K>& ks) {
    ks.clear();
    if (o.inline_check) {
      ks.push_back({kt, test_args(n, n == 0 ? M_TEST : (M_TEST | M_CHECK))});
    } else {
      ks.push_back({kt, test_args(n, M_TEST)});
      ks.push_back({o.samekernel ? kt : kc, check_args(n)});
    }
  };
  auto launch = [&](const K& k) {
    void* params[] = {(void*)&k.a};
    CK(cudaLaunchKernel((const void*)k.fn, dim3(grid), dim3(THREADS), params, 0, st));
  };

  const unsigned PER = 64;
  std::vector<K> ks;
  // warm-up-free: launch 0 directly (inline check: test only)
  CK(cudaDeviceSynchronize());
  auto t0 = std::chrono::steady_clock::now();
  unsigned long long n = 0;
  step(n, ks);
  for (auto& k : ks) launch(k);
  ++n;
  // a graph node launching k's grid with the parameter block params
  auto node_params = [&](const auto& k, void** params) {
    cudaKernelNodeParams kp;
    memset(&kp, 0, sizeof(kp));
    kp.func = (void*)k.fn;
    kp.gridDim = dim3(grid);
    kp.blockDim = dim3(THREADS);
    kp.kernelParams = params;
    return kp;
  };
  if (o.graph && o.launches - n >= PER) {
    cudaGraph_t g;
    CK(cudaGraphCreate(&g, 0));
    std::vector<cudaGraphNode_t> nodes;
    std::vector<Args> store;  // kernelParams must point at live memory during add/instantiate
    store.reserve(PER * 2);
    cudaGraphNode_t prev = nullptr;
    for (unsigned s = 0; s < PER; ++s) {
      step(n + s, ks);
      for (auto& k : ks) {
        store.push_back(k.a);
        void* params[] = {(void*)&store.back()};
        cudaKernelNodeParams kp = node_params(k, params);
        cudaGraphNode_t node;
        CK(cudaGraphAddKernelNode(&node, g, prev ? &prev : nullptr, prev ? 1 : 0, &kp));
        nodes.push_back(node);
        prev = node;
      }
    }
    cudaGraphExec_t ge;
    CK(cudaGraphInstantiate(&ge, g, 0));
    bool first = true;
    while (o.launches - n >= PER) {
      if (!first && !o.devparams) {  // fresh host parameters for every launch of this replay
        size_t j = 0;
        for (unsigned s = 0; s < PER; ++s) {
          step(n + s, ks);
          for (auto& k : ks) {
            Args a = k.a;
            void* params[] = {(void*)&a};
            cudaKernelNodeParams kp = node_params(k, params);
            CK(cudaGraphExecKernelNodeSetParams(ge, nodes[j++], &kp));
          }
        }
      }
      first = false;
      CK(cudaGraphLaunch(ge, st));
      n += PER;
    }
    CK(cudaStreamSynchronize(st));
    CK(cudaGraphExecDestroy(ge));
    CK(cudaGraphDestroy(g));
  }
  for (; n < o.launches; ++n) {
    step(n, ks);
    for (auto& k : ks) launch(k);
  }
  if (o.inline_check) {  // classify the last launch (devparams: the epoch is now `launches`, so it
                         // checks epoch - 1 = the last launch)
    K k{kt, check_args(o.launches - 1)};
    launch(k);
  }
  CK(cudaStreamSynchronize(st));
  CK(cudaGetLastError());
  auto t1 = std::chrono::steady_clock::now();
  double secs = std::chrono::duration<double>(t1 - t0).count();

  unsigned long long h[8], ctl[8];
  CK(cudaMemcpy(h, A.hist, sizeof(h), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(ctl, A.ctl, sizeof(ctl), cudaMemcpyDeviceToHost));
  unsigned long long total = 0;
  for (int i = 0; i < 8; ++i) total += h[i];
  const unsigned long long instances = o.launches * (unsigned long long)ninst;
  // weak: MP/MPcta r0==v && r1!=v (bits 01); SB r0!=v && r1!=v (00); LB r0==v && r1==v (11)
  const unsigned wbits = (o.test == T_SB) ? 0u : (o.test == T_LB ? 3u : 1u);
  unsigned long long weak = h[wbits] + h[wbits | 4u], weak_same = h[wbits | 4u];
  unsigned long long same = h[4] + h[5] + h[6] + h[7];
  bool epoch_ok = !(o.devparams || o.tail) || ctl[0] == o.launches;
  printf("{\"test\": \"%s\", \"label\": \"%s\", \"stride\": %u, \"barrier\": %s, \"spin\": %u, \"stress\": %u, "
         "\"tc\": %u, \"toggles\": {\"graph\": %s, \"devparams\": %s, \"inline_check\": %s, \"samekernel\": %s, "
         "\"twobuf\": %s, \"tail\": %s, \"tight\": %s, \"stl\": %s}, \"launches\": %llu, \"instances\": %llu, \"weak\": %llu, \"rate\": %.6e, "
         "\"weak_same_sm\": %llu, \"same_sm\": %llu, \"bins\": [%llu, %llu, %llu, %llu, %llu, %llu, %llu, %llu], "
         "\"sum_ok\": %s, \"epoch\": %llu, \"epoch_ok\": %s, \"seconds\": %.4f, \"inst_per_s\": %.4g, \"device\": \"%s\"}\n",
         TEST_NAMES[o.test], o.label.c_str(), o.stride, o.barrier ? "true" : "false", o.spin, o.stress, o.tc,
         o.graph ? "true" : "false", o.devparams ? "true" : "false", o.inline_check ? "true" : "false",
         o.samekernel ? "true" : "false", o.twobuf ? "true" : "false", o.tail ? "true" : "false", o.tight ? "true" : "false", o.stl ? "true" : "false", o.launches,
         instances, weak, (double)weak / (double)instances, weak_same, same, h[0], h[1], h[2], h[3], h[4], h[5], h[6],
         h[7], total == instances ? "true" : "false", ctl[0], epoch_ok ? "true" : "false", secs,
         (double)instances / secs, prop.name);
  return (total == instances && epoch_ok) ? 0 : 3;
}
