// NCCL oracle: runs NCCL's own topology code (compiled from the tag's
// sources) on the node this process sees under /sys, and prints, per GPU,
// what NCCL decides: NET paths, GDR for send/recv, rails and PXN relays.
// Output: one compact JSON object on stdout (run.sh sorts and indents it).
#include "nccl.h"
#include "comm.h"
#include "graph.h"
#include "graph/topo.h"
#include "graph/xml.h"
#include "net.h"
#include "utils.h"
#include "transport.h"
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <string>

#define ORACLE_VER NCCL_VERSION_CODE
extern int oracleCudaDev, oracleFill, oracleNetPhysDevs;
extern char ncclLastError[];
int oracleCudaDeviceCount();
extern "C" cudaError_t cudaDeviceGetAttribute(int*, cudaDeviceAttr, int);
extern "C" cudaError_t cudaDriverGetVersion(int*);
NCCL_PARAM(OracleDmaBufEnable, "DMABUF_ENABLE", 1);

static std::string jstr(const char* s) {
  std::string o = "\"";
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') o += '\\';
    if ((unsigned char)*s < 0x20) { char b[8]; snprintf(b, sizeof b, "\\u%04x", *s); o += b; continue; }
    o += *s;
  }
  return o + "\"";
}

static const char* scenario;
static int fail(const char* what, ncclResult_t r) {
  std::string msg = std::string("error: ") + what;
  if (ncclLastError[0]) msg += std::string(": ") + ncclLastError;
  else msg += ": ncclResult " + std::to_string((int)r);
  while (!msg.empty() && msg.back() == '\n') msg.pop_back();
  printf("{\"nccl\": \"%d.%d.%d\", \"scenario\": %s, \"status\": %s, \"gpus\": []}\n",
         NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH, jstr(scenario).c_str(), jstr(msg.c_str()).c_str());
  return 0;
}
#define TRY(what, call) do { ncclResult_t r_ = (call); if (r_ != ncclSuccess) return fail(what, r_); } while (0)

static const char* netName(ncclComm* comm, int dev) {
  static char names[NCCL_TOPO_MAX_NODES][256];
  ncclNetProperties_t props;
  if (dev < 0 || dev >= NCCL_TOPO_MAX_NODES || comm->ncclNet->getProperties(dev, &props) != ncclSuccess) return "?";
  snprintf(names[dev], sizeof names[dev], "%s", props.name);
  return names[dev];
}

// GDR for rank's GPU and a NET: until 2.26 ncclTopoCheckGdr took the GPU's
// bus id and answered an int.
static ncclResult_t checkGdr(ncclComm* comm, ncclTopoSystem* sys, int rank, int64_t netId, int read, bool* gdr) {
#if ORACLE_VER >= 22600
  enum ncclTopoGdrMode mode;
  NCCLCHECK(ncclTopoCheckGdr(sys, rank, netId, read, &mode));
  *gdr = mode != ncclTopoGdrModeDisable;
#else
  int use = 0;
  NCCLCHECK(ncclTopoCheckGdr(sys, comm->peerInfo[rank].busId, netId, read, &use));
  *gdr = use != 0;
#endif
  return ncclSuccess;
}

// NCCL takes a CPU's arch at compile time (#if __x86_64__, __aarch64__)
// and its vendor from cpuid: built here, every tree would get this host's
// x86 CPU.  For a tree of another arch (ORACLE_CPU_ARCH, set by run.sh for
// Grace trees) the CPUs are given to NCCL the way NCCL itself accepts
// them: a topology file (NCCL_TOPO_FILE) naming each NUMA node's <cpu>
// with its arch and NCCL's own host hash; NCCL fills in the rest (affinity
// from sysfs, PCI trees, NICs) as without the file.
static char seedPath[] = "/tmp/oracle-topo-XXXXXX";
static void removeSeed() { unlink(seedPath); }
static void seedCpuArch() {
  const char* arch = getenv("ORACLE_CPU_ARCH");
  if (arch == NULL || *arch == '\0' || getenv("NCCL_TOPO_FILE")) return;
  char* path = seedPath;
  int fd = mkstemp(path);
  FILE* f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (f == NULL) return;
  unsigned long long hash = (unsigned long long)getHostHash();
  fprintf(f, "<system version=\"%d\">\n", NCCL_TOPO_XML_VERSION);
  DIR* d = opendir("/sys/devices/system/node");
  for (struct dirent* e; d && (e = readdir(d));) {
    int n;
    if (sscanf(e->d_name, "node%d", &n) == 1)
      fprintf(f, "  <cpu numaid=\"%d\" host_hash=\"0x%llx\" arch=\"%s\"/>\n", n, hash, arch);
  }
  if (d) closedir(d);
  // Devices with numa_node -1 hang under NCCL's cpu "-1".
  fprintf(f, "  <cpu numaid=\"-1\" host_hash=\"0x%llx\" arch=\"%s\"/>\n</system>\n", hash, arch);
  fclose(f);
  atexit(removeSeed);
  setenv("NCCL_TOPO_FILE", path, 1);
}

// Make `rank` the communicator's own rank, as its process would be.
// dmaBufSupport is dmaBufSupported (init.cc): NCCL_DMABUF_ENABLE, the
// plugin's regMrDmaBuf, driver >= 11.7 and this GPU's DMA-BUF attribute.
static void setRank(ncclComm* comm, int rank) {
  int drv = 0, flag = 0;
  comm->rank = rank;
  oracleCudaDev = comm->peerInfo[rank].cudaDev;
  cudaDriverGetVersion(&drv);
  cudaDeviceGetAttribute(&flag, (cudaDeviceAttr)124 /* CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED */, oracleCudaDev);
  comm->dmaBufSupport = ncclParamOracleDmaBufEnable() != 0 && comm->ncclNet->regMrDmaBuf != NULL && drv >= 11070 && flag;
}

// NCCL's view of one rank: ncclTopoGetSystem, then paths, trim, paths again,
// as initTransportsRank does.
static ncclResult_t rankSystem(ncclComm* comm, int rank, ncclTopoSystem** sys) {
  setRank(comm, rank);
  NCCLCHECK(ncclTopoGetSystem(comm, sys));
  comm->topo = *sys;
  NCCLCHECK(ncclTopoComputePaths(*sys, comm));
  NCCLCHECK(ncclTopoTrimSystem(*sys, comm));
  NCCLCHECK(ncclTopoComputePaths(*sys, comm));
  return ncclSuccess;
}

int main(int argc, char** argv) {
  scenario = argc > 1 ? argv[1] : "";
  seedCpuArch();
  int nGpus = oracleCudaDeviceCount();
  if (nGpus <= 0) return fail("no CUDA device", ncclInvalidUsage);
  if (nGpus > 32) nGpus = 32;

  // The NET plugin NCCL would pick first: its own IB plugin (net_ib.cc).
  ncclNet_t* net = &ncclNetIb;
#if ORACLE_VER >= 22800
  void* netCtx = NULL;
  ncclNetCommConfig_t netConfig = {};
  TRY("NET/IB init", net->init(&netCtx, 0, &netConfig, ncclDebugLog, NULL));
#elif ORACLE_VER >= 22700
  TRY("NET/IB init", net->init(ncclDebugLog, NULL));
#else
  TRY("NET/IB init", net->init(ncclDebugLog));
#endif
  TRY("NET/IB devices", net->devices(&oracleNetPhysDevs));
  if (oracleNetPhysDevs == 0) return fail("NET/IB", ncclSystemError);

  // A two-node communicator: ranks 0..n-1 are this node's GPUs, n..2n-1 a
  // twin node (other host hash), so NCCL keeps its NETs (inter-node).
  ncclComm* comm = (ncclComm*)calloc(1, sizeof(ncclComm));
  comm->nRanks = 2 * nGpus;
  comm->nNodes = 2;
  comm->ncclNet = net;
#if ORACLE_VER >= 22800
  comm->netContext = netCtx;
#endif
#if ORACLE_VER >= 23000
  comm->ncclNetVer = 12;  // NCCL's internal IB plugin speaks the newest API
  comm->sharedRes = (ncclSharedResources*)calloc(1, sizeof(*comm->sharedRes));  // no GIN
#elif ORACLE_VER >= 22800
  comm->ncclNetVer = 11;
#elif ORACLE_VER >= 22700
  comm->ncclNetVer = 10;
#endif
  comm->peerInfo = (ncclPeerInfo*)calloc(comm->nRanks + 1, sizeof(ncclPeerInfo));
  for (int r = 0; r < comm->nRanks; r++) {
    ncclPeerInfo* p = comm->peerInfo + r;
    int dev = r % nGpus;
    p->rank = r;
    p->cudaDev = dev;
    p->hostHash = r < nGpus ? 0x1111 : 0x2222;
#if ORACLE_VER >= 23000
    p->mloPart = NCCL_TOPO_UNDEF;  // not an MLOPart GPU (init.cc fillInfo)
#endif
    oracleCudaDev = dev;
    TRY("getBusId", getBusId(dev, &p->busId));
    // ncclGpuGdrSupport (plugin/net.cc): the driver's GPUDirect RDMA attribute.
    int attr = 0;
    cudaDeviceGetAttribute(&attr, cudaDevAttrGPUDirectRDMASupported, dev);
    p->gdrSupport = attr;
  }
  ncclTopoSystem* sys;
  // Pass 1: each rank's own XML (collected by the bootstrap stub).
  for (int r = 0; r < nGpus; r++) {
    setRank(comm, r);
    TRY("ncclTopoGetSystem", ncclTopoGetSystem(comm, &sys));
    ncclTopoFree(sys);
  }
  oracleFill = 1;
  std::string out = "{\"nccl\": \"" + std::to_string(NCCL_MAJOR) + "." + std::to_string(NCCL_MINOR) + "." +
                    std::to_string(NCCL_PATCH) + "\", \"scenario\": " + jstr(scenario) + ", \"status\": \"ok\", \"gpus\": [";
  for (int rank = 0; rank < nGpus; rank++) {
    TRY("topology", rankSystem(comm, rank, &sys));
    int g;
#if ORACLE_VER >= 22700  // showWarn: in 2.27, not in 2.23
    TRY("ncclTopoRankToIndex", ncclTopoRankToIndex(sys, rank, &g, true));
#else
    TRY("ncclTopoRankToIndex", ncclTopoRankToIndex(sys, rank, &g));
#endif
    ncclTopoNode* gpu = sys->nodes[GPU].nodes + g;
    char busId[32];
    int64ToBusId(comm->peerInfo[rank].busId, busId);
    char buf[512];
    snprintf(buf, sizeof buf, "%s{\"rank\": %d, \"dev\": %d, \"busid\": \"%s\", \"nets\": [", rank ? ", " : "", rank, gpu->gpu.dev, busId);
    out += buf;
    for (int n = 0; n < sys->nodes[NET].count; n++) {
      ncclTopoNode* nn = sys->nodes[NET].nodes + n;
      bool s, rcv;
      TRY("ncclTopoCheckGdr", checkGdr(comm, sys, rank, nn->id, 1, &s));
      TRY("ncclTopoCheckGdr", checkGdr(comm, sys, rank, nn->id, 0, &rcv));
      snprintf(buf, sizeof buf, "%s{\"name\": %s, \"dev\": %d, \"path\": \"%s\", \"bw\": %.4f, \"gdr_send\": %s, \"gdr_recv\": %s}",
               n ? ", " : "", jstr(netName(comm, nn->net.dev)).c_str(), nn->net.dev, topoPathTypeStr[gpu->paths[NET][n].type],
               gpu->paths[NET][n].bw, s ? "true" : "false", rcv ? "true" : "false");
      out += buf;
    }
    std::string rails, byChannel, pxn;
    std::string seen = ",";
    for (int c = 0; c < 32; c++) {
      int64_t id; int dev;
      TRY("ncclTopoGetLocalNet", ncclTopoGetLocalNet(sys, rank, c, &id, &dev));
      std::string name = jstr(netName(comm, dev));
      byChannel += (c ? ", " : "") + name;
      if (seen.find("," + name + ",") != std::string::npos) continue;
      seen += name + ",";
      rails += (rails.empty() ? "" : ", ") + name;
      int proxy;
      TRY("ncclTopoGetIntermediateRank", ncclTopoGetIntermediateRank(sys, rank, id, &proxy));
      pxn += (pxn.empty() ? "" : ", ") + name + ": " + (proxy == rank ? std::string("null") : std::to_string(proxy));
    }
    out += "], \"rails\": [" + rails + "], \"rail_by_channel\": [" + byChannel + "], \"pxn\": {" + pxn + "}}";
    ncclTopoFree(sys);
  }
  out += "]}";
  printf("%s\n", out.c_str());
  return 0;
}
