// driver: instantiate FlashInfer PCIe IPC all-reduce (all kernels, via host dispatcher all_reduce<T>); kernel code unchanged
#include "flashinfer/comm/pcie_ipc_all_reduce.cuh"
namespace flashinfer { namespace comm { namespace pcie_ipc {
template cudaError_t all_reduce<half>(const half*, half*, int64_t, const PeerViews&, int, int, int, int64_t, int, int, Variant, bool, cudaStream_t);
}}}
