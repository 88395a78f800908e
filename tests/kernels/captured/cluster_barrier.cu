// barrier.cluster in its four forms (tests/test_sass_cluster.py); captured with nvcc 13.0.88:
// nvcc -arch=sm_90 -O3 -ptx / -cubin, nvdisasm -c
__global__ void __cluster_dims__(2,1,1) k(int *x, int *y) {
  x[threadIdx.x] = 1;
  asm volatile("barrier.cluster.arrive;" ::: "memory");
  asm volatile("barrier.cluster.wait;" ::: "memory");
  y[threadIdx.x] = x[threadIdx.x+1];
  asm volatile("barrier.cluster.arrive.release;" ::: "memory");
  asm volatile("barrier.cluster.wait.acquire;" ::: "memory");
  y[threadIdx.x+2] = x[threadIdx.x+3];
  asm volatile("barrier.cluster.arrive.relaxed;" ::: "memory");
  asm volatile("barrier.cluster.wait;" ::: "memory");
  y[threadIdx.x+4] = x[threadIdx.x+5];
  asm volatile("barrier.cluster.arrive.aligned;" ::: "memory");
  asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
  y[threadIdx.x+6] = x[threadIdx.x+7];
}
