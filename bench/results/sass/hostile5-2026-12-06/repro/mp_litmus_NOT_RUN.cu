#include <cstdio>
#define N 2000000
struct alignas(256) S{unsigned long long x;char p[248];unsigned long long f;char q[248];};
__device__ __forceinline__ unsigned long long acq(unsigned long long*p){unsigned long long v;asm volatile("ld.acquire.sys.global.u64 %0,[%1];":"=l"(v):"l"(p):"memory");return v;}
__device__ __forceinline__ unsigned long long rlx(unsigned long long*p){unsigned long long v;asm volatile("ld.relaxed.gpu.global.u64 %0,[%1];":"=l"(v):"l"(p):"memory");return v;}
template<int CTRL> __global__ void k(S*s,unsigned long long*bad,unsigned long long*seen){
 S*m=&s[blockIdx.x/2];
 if(threadIdx.x)return;
 if(blockIdx.x&1){for(unsigned long long i=1;i<=N;i++){m->x=i;asm volatile("st.release.sys.global.u64 [%0],%1;"::"l"(&m->f),"l"(i):"memory");}return;}
 unsigned long long nb=0,ns=0,last=0;
 while(last<N){asm volatile("fence.sc.gpu;":::"memory");unsigned long long a=m->x;unsigned long long v=acq(&m->f);unsigned long long b=CTRL?rlx(&m->x):m->x;
  if(b<v)nb++; if(v!=a)ns++; last=v; bad[0]+=0*a;}
 atomicAdd(bad,nb);atomicAdd(seen,ns);}
int main(){S*s;unsigned long long*d,h[2];cudaMalloc(&s,sizeof(S)*64);cudaMalloc(&d,16);
 for(int c=0;c<2;c++){cudaMemset(s,0,sizeof(S)*64);cudaMemset(d,0,16);
  if(c)k<1><<<128,32>>>(s,d,d+1);else k<0><<<128,32>>>(s,d,d+1);
  cudaError_t e=cudaDeviceSynchronize();cudaMemcpy(h,d,16,cudaMemcpyDeviceToHost);
  printf("%s: err=%s  b<v violations=%llu  iterations where v!=a=%llu\n",c?"control (b = ld.relaxed)":"merged  (b = plain load)",cudaGetErrorString(e),h[0],h[1]);}
}
