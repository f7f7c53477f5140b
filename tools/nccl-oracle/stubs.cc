// Stubs for what NCCL's topology code calls outside the topology model.
// Nothing here decides a path, a rail, a PXN relay or GDR: those are NCCL's
// own compiled sources (see README.md).  Every stub is listed there.
#include "nccl.h"
#include "comm.h"
#include "transport.h"
#include "bootstrap.h"
#include "net.h"
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ORACLE_VER NCCL_VERSION_CODE

// --- CUDA runtime: answered by the CUDA test double's driver API ----------
// (tests/doubles/libcuda-fake.so, cuda.conf), so no GPU is needed.
int oracleCudaDev = 0;
static void* cu;
typedef int (*cuInt_t)(int*, int, int);
static void* cuSym(const char* name) {
  if (!cu) {
    const char* lib = getenv("ORACLE_LIBCUDA");
    cu = dlopen(lib ? lib : "libcuda.so.1", RTLD_NOW);
    if (!cu) { fprintf(stderr, "oracle: cannot load %s\n", lib); exit(3); }
    ((int (*)(unsigned))dlsym(cu, "cuInit"))(0);
  }
  return dlsym(cu, name);
}
int oracleCudaDeviceCount() {
  int n = 0;
  if (((int (*)(int*))cuSym("cuDeviceGetCount"))(&n) != 0) return 0;
  return n;
}
extern "C" {
cudaError_t cudaGetDevice(int* dev) { *dev = oracleCudaDev; return cudaSuccess; }
cudaError_t cudaSetDevice(int dev) { oracleCudaDev = dev; return cudaSuccess; }
// Runtime and driver attribute numbers are the same for what NCCL asks
// (compute capability 75/76, GPUDirect RDMA 116, DMA-BUF 124).
cudaError_t cudaDeviceGetAttribute(int* v, cudaDeviceAttr a, int dev) {
  return ((cuInt_t)cuSym("cuDeviceGetAttribute"))(v, (int)a, dev) ? cudaErrorInvalidValue : cudaSuccess;
}
cudaError_t cudaDeviceGetPCIBusId(char* s, int len, int dev) {
  return ((int (*)(char*, int, int))cuSym("cuDeviceGetPCIBusId"))(s, len, dev) ? cudaErrorInvalidValue : cudaSuccess;
}
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int dev) {
  memset(p, 0, sizeof(*p));
  cudaDeviceGetAttribute(&p->major, cudaDevAttrComputeCapabilityMajor, dev);
  cudaDeviceGetAttribute(&p->minor, cudaDevAttrComputeCapabilityMinor, dev);
  return cudaSuccess;
}
cudaError_t cudaDriverGetVersion(int* v) {
  return ((int (*)(int*))cuSym("cuDriverGetVersion"))(v) ? cudaErrorInvalidValue : cudaSuccess;
}
const char* cudaGetErrorString(cudaError_t e) { return "cuda error (oracle stub)"; }
cudaError_t cudaGetLastError() { return cudaSuccess; }
// Host memory registration and stream capture: used outside the topology.
cudaError_t cudaHostRegister(void*, size_t, unsigned) { return cudaErrorNotSupported; }
cudaError_t cudaHostUnregister(void*) { return cudaErrorNotSupported; }
cudaError_t cudaHostGetDevicePointer(void**, void*, unsigned) { return cudaErrorNotSupported; }
cudaError_t cudaThreadExchangeStreamCaptureMode(cudaStreamCaptureMode*) { return cudaSuccess; }
}

// --- Bootstrap: the intra-node all-gather of per-rank XMLs ----------------
// The oracle is every local rank in one process.  Pass 1 (capture) keeps
// each rank's own XML as ncclTopoGetSystem hands it over; pass 2 (fill)
// hands each rank the others' XMLs, as the real all-gather would.  In pass
// 1 the other slots get a copy of the rank's own XML: fusing a copy of
// itself changes nothing, and an all-zero slot is no valid XML.
char* oracleXml[64];
int oracleXmlSize;
int oracleFill;
ncclResult_t bootstrapIntraNodeAllGather(void* commState, int* ranks, int rank, int nranks, void* allData, int size) {
  oracleXmlSize = size;
  char* own = (char*)allData + (size_t)rank * size;
  if (!oracleFill) {
    if (!oracleXml[ranks[rank]]) oracleXml[ranks[rank]] = (char*)malloc(size);
    memcpy(oracleXml[ranks[rank]], own, size);
  }
  for (int i = 0; i < nranks; i++) {
    char* slot = (char*)allData + (size_t)i * size;
    if (i == rank) continue;
    memcpy(slot, oracleFill && oracleXml[ranks[i]] ? oracleXml[ranks[i]] : own, size);
  }
  return ncclSuccess;
}

// --- Net plugin bookkeeping (plugin/net.cc, 2.28+; topo.cc kept its own
// before): one plugin, the IB one.
#if ORACLE_VER >= 22800
int oracleNetPhysDevs = 0, oracleNetVirtDevs = NCCL_UNDEF_DEV_COUNT;
ncclResult_t ncclNetGetDevCount(int idx, int* phys, int* virt) {
  *phys = oracleNetPhysDevs; *virt = oracleNetVirtDevs; return ncclSuccess;
}
ncclResult_t ncclNetSetVirtDevCount(int idx, int n) { oracleNetVirtDevs = n; return ncclSuccess; }
// CollNet is not modelled (comm->ncclCollNet is NULL, so these are not reached).
ncclResult_t ncclCollNetGetDevCount(int, int*, int*) { return ncclInternalError; }
ncclResult_t ncclCollNetSetVirtDevCount(int, int) { return ncclInternalError; }
#else
int oracleNetPhysDevs = 0;
#endif

// --- Environment: NCCL's internal env plugin is getenv() after initEnv()
// has loaded ~/.nccl.conf and /etc/nccl.conf (param.cc, NCCL's code).
void initEnv();
ncclResult_t ncclInitEnv() { initEnv(); return ncclSuccess; }
const char* ncclEnvPluginGetEnv(const char* name) { return getenv(name); }
bool ncclEnvPluginInitialized() { return true; }

// --- Transports: P2P/SHM canConnect.  Same-node peers can always talk
// (through P2P or else SHM), so no GPU is marked unreachable.
#if ORACLE_VER >= 22300
static ncclResult_t canConnectYes(int* ret, struct ncclComm*, struct ncclTopoGraph*, struct ncclPeerInfo*, struct ncclPeerInfo*) {
#else  // 2.21 passed the topology, not the communicator
static ncclResult_t canConnectYes(int* ret, struct ncclTopoSystem*, struct ncclTopoGraph*, struct ncclPeerInfo*, struct ncclPeerInfo*) {
#endif
  *ret = 1; return ncclSuccess;
}
static struct ncclTransport oracleTransport = { "oracle", canConnectYes };
struct ncclTransport* ncclTransports[NTRANSPORTS] = { &oracleTransport, &oracleTransport, &oracleTransport, &oracleTransport
#if NTRANSPORTS > 4
  , &oracleTransport
#endif
};

#if ORACLE_VER < 22700
// plugin/net.cc: the net plugin's API version; NCCL's own IB plugin is v8
// at 2.21/2.23 (PXN is only disabled for v4 plugins).
int ncclNetVersion(struct ncclComm*) { return 8; }
#endif

// --- Never reached by the oracle (channel setup, search, GIN) -------------
ncclResult_t initChannel(struct ncclComm*, int) { return ncclInternalError; }
int64_t ncclParamWorkArgsBytes() { return 0; }
ncclResult_t ncclTopoGetNetDev(struct ncclComm*, int, struct ncclTopoGraph*, int, int, int64_t*, int*, int*) { return ncclInternalError; }
#if ORACLE_VER >= 23000
ncclResult_t ncclGinGdakiCreateContext(void*, int, int, int, int, int, int, void**, ncclNetDeviceHandle_v7_t**) { return ncclInternalError; }
ncclResult_t ncclGinGdakiRegMrSym(void*, void*, unsigned long, int, unsigned long, void**, void**) { return ncclInternalError; }
ncclResult_t ncclGinGdakiDeregMrSym(void*, void*) { return ncclInternalError; }
ncclResult_t ncclGinGdakiDestroyContext(void*) { return ncclInternalError; }
ncclResult_t ncclGinGdakiProgress(void*) { return ncclInternalError; }
ncclResult_t ncclGinGdakiQueryLastError(void*, bool*) { return ncclInternalError; }
ncclResult_t ncclGinGetDevCount(int, int*, int*) { return ncclInternalError; }
ncclResult_t ncclRmaGetDevCount(int, int*, int*) { return ncclInternalError; }
int64_t ncclParamSetCpuStackSize() { return 0; }  // the oracle runs no proxy threads
// cudawrap.cc's driver entry points, used by GIN only.
#include "cudawrap.h"
PFN_cuDeviceGetAttribute_v2000 pfn_cuDeviceGetAttribute = nullptr;
PFN_cuGetErrorString_v6000 pfn_cuGetErrorString = nullptr;
#endif
#if ORACLE_VER >= 22800
#if ORACLE_VER < 23000
ncclResult_t ncclGinGdakiCreateContext(void*, int, int, void**, ncclNetDeviceHandle_v7_t**) { return ncclInternalError; }
ncclResult_t ncclGinGdakiDeregMrSym(void*, void*) { return ncclInternalError; }
ncclResult_t ncclGinGdakiDestroyContext(void*) { return ncclInternalError; }
ncclResult_t ncclGinGdakiProgress(void*) { return ncclInternalError; }
ncclResult_t ncclGinGdakiQueryLastError(void*, bool*) { return ncclInternalError; }
ncclResult_t ncclGinGdakiRegMrSym(void*, void*, unsigned long, int, void**, void**) { return ncclInternalError; }
#endif
#endif
