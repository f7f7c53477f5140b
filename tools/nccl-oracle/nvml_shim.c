/*
 * libnvidia-ml.so.1 for the oracle.  NCCL's nvmlwrap.cc dlopens that name
 * and looks up more functions than the project's NVML double exports.  The
 * double (ORACLE_LIBNVML, nvml.conf) answers devices, PCI info, NVLink
 * state and far ends, and C2C mode; this shim forwards those and derives
 * the rest:
 *   nvmlDeviceGetHandleByPciBusId / GetIndex: by matching PCI bus ids;
 *   nvmlDeviceGetCudaComputeCapability: the CUDA double's attributes 75/76
 *     for the device with the same bus id (ORACLE_LIBCUDA, cuda.conf);
 *   nvmlDeviceGetNvLinkCapability(P2P_SUPPORTED): 1 for a link the double
 *     knows (its state call succeeds);
 *   nvmlDeviceGetFieldValues: NVLINK_GET_STATE from the link state; C2C
 *     link count/status/max bw from C2C mode: 10 links of 45000 MB/s when
 *     C2C is enabled (a GH200's NVML answer; an assumption, bw only);
 *   nvmlDeviceGetCurrPcieLinkGeneration/Width, GetPcieLinkMaxSpeed (2.30+):
 *     the GPU's own current_link_speed/width and max_link_speed in the
 *     tree's sysfs (this runs inside the oracle's mount namespace);
 *   nvmlDeviceGetP2PStatus: OK (P2P is allowed between the node's GPUs);
 *   fabric, platform and confidential-compute queries: NOT_SUPPORTED.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int ret_t;
typedef void *dev_t_;
enum { OK = 0, INVALID = 2, NOT_SUPPORTED = 3, NOT_FOUND = 6 };
typedef struct {
	char busIdLegacy[16];
	unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
	char busId[32];
} pci_t;
typedef struct {
	unsigned fieldId, scopeId;
	long long timestamp, latencyUsec;
	int valueType;
	ret_t nvmlReturn;
	union { double d; unsigned ui; unsigned long ul; unsigned long long ull; long long sll; } value;
} field_t;

static void *nv, *cu;
static void *sym(void **h, const char *env, const char *name)
{
	if (!*h) {
		const char *lib = getenv(env);
		*h = lib ? dlopen(lib, RTLD_NOW | RTLD_LOCAL) : NULL;
		if (!*h) {
			fprintf(stderr, "oracle nvml shim: cannot load %s (%s)\n", env, lib ? lib : "unset");
			exit(3);
		}
	}
	return dlsym(*h, name);
}
#define NV(name, type) ((type)sym(&nv, "ORACLE_LIBNVML", name))

ret_t nvmlInit_v2(void) { return NV("nvmlInit_v2", ret_t (*)(void))(); }
ret_t nvmlInit(void) { return nvmlInit_v2(); }
ret_t nvmlShutdown(void) { return NV("nvmlShutdown", ret_t (*)(void))(); }
const char *nvmlErrorString(ret_t r) { return NV("nvmlErrorString", const char *(*)(ret_t))(r); }
ret_t nvmlDeviceGetCount_v2(unsigned *n) { return NV("nvmlDeviceGetCount_v2", ret_t (*)(unsigned *))(n); }
ret_t nvmlDeviceGetCount(unsigned *n) { return nvmlDeviceGetCount_v2(n); }
ret_t nvmlDeviceGetHandleByIndex_v2(unsigned i, dev_t_ *d) { return NV("nvmlDeviceGetHandleByIndex_v2", ret_t (*)(unsigned, dev_t_ *))(i, d); }
ret_t nvmlDeviceGetHandleByIndex(unsigned i, dev_t_ *d) { return nvmlDeviceGetHandleByIndex_v2(i, d); }
ret_t nvmlDeviceGetPciInfo_v3(dev_t_ d, pci_t *p) { return NV("nvmlDeviceGetPciInfo_v3", ret_t (*)(dev_t_, pci_t *))(d, p); }
ret_t nvmlDeviceGetNvLinkState(dev_t_ d, unsigned l, int *s) { return NV("nvmlDeviceGetNvLinkState", ret_t (*)(dev_t_, unsigned, int *))(d, l, s); }
ret_t nvmlDeviceGetNvLinkRemotePciInfo_v2(dev_t_ d, unsigned l, pci_t *p) { return NV("nvmlDeviceGetNvLinkRemotePciInfo_v2", ret_t (*)(dev_t_, unsigned, pci_t *))(d, l, p); }
ret_t nvmlDeviceGetNvLinkRemotePciInfo(dev_t_ d, unsigned l, pci_t *p) { return nvmlDeviceGetNvLinkRemotePciInfo_v2(d, l, p); }

/* "0000:05:00.0" and "00000000:05:00.0" name the same device. */
static int bdf(const char *s, unsigned v[4])
{
	return sscanf(s, "%x:%x:%x.%x", &v[0], &v[1], &v[2], &v[3]) == 4;
}
static int same_bdf(const char *a, const char *b)
{
	unsigned x[4], y[4];
	return bdf(a, x) && bdf(b, y) && !memcmp(x, y, sizeof(x));
}
ret_t nvmlDeviceGetHandleByPciBusId_v2(const char *busId, dev_t_ *d)
{
	unsigned n = 0;
	ret_t r = nvmlDeviceGetCount_v2(&n);
	if (r) return r;
	for (unsigned i = 0; i < n; i++) {
		pci_t p;
		if (nvmlDeviceGetHandleByIndex_v2(i, d) == OK && nvmlDeviceGetPciInfo_v3(*d, &p) == OK &&
		    same_bdf(p.busId, busId))
			return OK;
	}
	return NOT_FOUND;
}
ret_t nvmlDeviceGetHandleByPciBusId(const char *busId, dev_t_ *d) { return nvmlDeviceGetHandleByPciBusId_v2(busId, d); }
ret_t nvmlDeviceGetIndex(dev_t_ d, unsigned *idx)
{
	unsigned n = 0;
	nvmlDeviceGetCount_v2(&n);
	for (unsigned i = 0; i < n; i++) {
		dev_t_ h;
		if (nvmlDeviceGetHandleByIndex_v2(i, &h) == OK && h == d) {
			*idx = i;
			return OK;
		}
	}
	return INVALID;
}
ret_t nvmlDeviceGetCudaComputeCapability(dev_t_ d, int *major, int *minor)
{
	pci_t p;
	int n = 0;
	ret_t r = nvmlDeviceGetPciInfo_v3(d, &p);
	if (r) return r;
	((int (*)(unsigned))sym(&cu, "ORACLE_LIBCUDA", "cuInit"))(0);
	((int (*)(int *))sym(&cu, "ORACLE_LIBCUDA", "cuDeviceGetCount"))(&n);
	for (int i = 0; i < n; i++) {
		char bus[64];
		if (((int (*)(char *, int, int))sym(&cu, "ORACLE_LIBCUDA", "cuDeviceGetPCIBusId"))(bus, sizeof(bus), i) ||
		    !same_bdf(bus, p.busId))
			continue;
		int (*attr)(int *, int, int) = (int (*)(int *, int, int))sym(&cu, "ORACLE_LIBCUDA", "cuDeviceGetAttribute");
		attr(major, 75, i);
		attr(minor, 76, i);
		return OK;
	}
	return NOT_FOUND;
}
ret_t nvmlDeviceGetNvLinkCapability(dev_t_ d, unsigned l, int cap, unsigned *v)
{
	int s;
	ret_t r = nvmlDeviceGetNvLinkState(d, l, &s);
	(void)cap;
	if (r) return r;
	*v = 1;
	return OK;
}
typedef struct { unsigned isC2cEnabled; } c2c_t; /* v1: no version tag */
static int c2c_enabled(dev_t_ d)
{
	c2c_t c = { 0 };
	ret_t (*f)(dev_t_, c2c_t *) = NV("nvmlDeviceGetC2cModeInfoV", ret_t (*)(dev_t_, c2c_t *));
	return f && f(d, &c) == OK && c.isC2cEnabled;
}
ret_t nvmlDeviceGetFieldValues(dev_t_ d, int n, field_t *fv)
{
	for (int i = 0; i < n; i++) {
		int s = 0;
		fv[i].nvmlReturn = NOT_SUPPORTED;
		switch (fv[i].fieldId) {
		case 165: /* NVML_FI_DEV_NVLINK_GET_STATE */
			fv[i].nvmlReturn = nvmlDeviceGetNvLinkState(d, fv[i].scopeId, &s);
			fv[i].value.ui = (unsigned)s;
			break;
		case 170: /* C2C_LINK_COUNT */
			if (c2c_enabled(d)) fv[i].nvmlReturn = OK, fv[i].value.ui = 10;
			break;
		case 171: /* C2C_LINK_GET_STATUS */
			if (c2c_enabled(d)) fv[i].nvmlReturn = OK, fv[i].value.ui = 1;
			break;
		case 172: /* C2C_LINK_GET_MAX_BW, MB/s */
			if (c2c_enabled(d)) fv[i].nvmlReturn = OK, fv[i].value.ui = 45000;
			break;
		}
	}
	return OK;
}
ret_t nvmlDeviceGetP2PStatus(dev_t_ a, dev_t_ b, int idx, int *st) { (void)a; (void)b; (void)idx; *st = 0; return OK; }
ret_t nvmlDeviceGetGpuFabricInfoV(dev_t_ d, void *i) { (void)d; (void)i; return NOT_SUPPORTED; }
ret_t nvmlDeviceGetGpuFabricInfo(dev_t_ d, void *i) { (void)d; (void)i; return NOT_SUPPORTED; }
ret_t nvmlDeviceGetPlatformInfo(dev_t_ d, void *i) { (void)d; (void)i; return NOT_SUPPORTED; }
ret_t nvmlSystemGetConfComputeState(void *s) { (void)s; return NOT_SUPPORTED; }
ret_t nvmlSystemGetConfComputeSettings(void *s) { (void)s; return NOT_SUPPORTED; }

/* The GPU's sysfs attribute NAME, or "" */
static void sysattr(dev_t_ d, const char *name, char *out, size_t len)
{
	pci_t p;
	unsigned v[4];
	char path[256];
	FILE *f;
	out[0] = 0;
	if (nvmlDeviceGetPciInfo_v3(d, &p) != OK || !bdf(p.busId, v))
		return;
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%04x:%02x:%02x.%x/%s", v[0], v[1], v[2], v[3], name);
	if ((f = fopen(path, "r"))) {
		if (!fgets(out, (int)len, f)) out[0] = 0;
		fclose(f);
	}
}
static float gts(dev_t_ d, const char *name)
{
	char b[64];
	float x = 0;
	sysattr(d, name, b, sizeof(b));
	sscanf(b, "%f", &x);
	return x;
}
ret_t nvmlDeviceGetCurrPcieLinkGeneration(dev_t_ d, unsigned *gen)
{
	float x = gts(d, "current_link_speed");
	*gen = x >= 64 ? 6 : x >= 32 ? 5 : x >= 16 ? 4 : x >= 8 ? 3 : x >= 5 ? 2 : x >= 2.5 ? 1 : 0;
	return *gen ? OK : NOT_SUPPORTED;
}
ret_t nvmlDeviceGetCurrPcieLinkWidth(dev_t_ d, unsigned *w)
{
	char b[64];
	sysattr(d, "current_link_width", b, sizeof(b));
	*w = (unsigned)strtoul(b, NULL, 0);
	return *w ? OK : NOT_SUPPORTED;
}
/* NVML answers the per-lane speed in MB/s (2500 .. 64000). */
ret_t nvmlDeviceGetPcieLinkMaxSpeed(dev_t_ d, unsigned *mbps)
{
	*mbps = (unsigned)(gts(d, "max_link_speed") * 1000);
	return *mbps ? OK : NOT_SUPPORTED;
}
