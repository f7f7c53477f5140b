// SPDX-License-Identifier: MIT
/*
 * Scenario-driven test double of libnvidia-ml.so.1: the subset in
 * decode/nvml_api.h. Built like the libcuda double and loaded through the
 * same dlopen path (--libnvml / GDRCHECK_LIBNVML). Built with
 * -DFAKE_NVML_OLD it is a driver before nvmlDeviceGetNvLinkRemoteDeviceType
 * and nvmlDeviceGetC2cModeInfoV: those symbols are not exported.
 *
 * Scenario (env FAKE_NVML_SCENARIO), keys [defaults]; I = device index,
 * L = link:
 *   preset [none]         the node's NVLink fabric:
 *     none      PCIe only: every link answers NVML_ERROR_NOT_SUPPORTED
 *     nvswitch  HGX H100/H200: 18 links per GPU, all active, all to one
 *               of 4 NVSwitches (links 0-4, 5-8, 9-12, 13-17)
 *     dgx1      DGX-1 V100 hybrid cube mesh: 6 links per GPU, GPU to GPU
 *               (two quads 0-3 and 4-7, fully connected, plus 0-4, 1-5,
 *               2-6, 3-7; some pairs doubled, as nvidia-smi topo -m shows)
 *     gh200     Grace Hopper: 18 links, all inactive; C2C enabled
 *   init [0]              nvmlReturn_t of nvmlInit_v2; until it succeeded
 *                         every other call answers NVML_ERROR_UNINITIALIZED
 *   driver_version ["580.95.05"]
 *   device_count [nvswitch, dgx1: 8; others 1]   at most 64
 *   gpuI.pci ["0000:00:00.0"]   returned as "00000000:3B:00.0"
 *   gpuI.uuid ["GPU-00000000-fake-0000-0000-00000000000I"]
 *   gpuI.links [preset: none 0, dgx1 6, others 18]  links that exist;
 *                         past them the state answers INVALID_ARGUMENT
 *   gpuI.linkL.active [preset]   0/1
 *   gpuI.linkL.remote [preset]   gpuJ, switchK, npu or unknown
 *   gpuI.c2c [gh200: 1, else 0]  isC2cEnabled
 *   gpuI.c2c_rc [gh200: 0, else 3]  nvmlReturn_t of ..C2cModeInfoV (3:
 *                         NOT_SUPPORTED, what a GPU without C2C answers)
 * A GPU far end's PCI info is that GPU's gpuJ.pci; NVSwitch K is at
 * synthetic 0000:(0xa0+K):00.0, device 0x22a3; an NPU at 0000:ff:00.0.
 * Fault keys (fake_scenario.h): fail/hang/crash/exit.NAME[.I], I the
 * device index (nvmlDeviceGetHandleByIndex_v2: the index asked).
 * Ledger row: init (nvmlInit_v2 / nvmlShutdown).
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode/nvml_api.h"
#include "tests/doubles/fake_scenario.h"

#define FAKE_MAX_GPUS	64
#define EXPORT __attribute__((visibility("default")))

EXPORT nvmlReturn_t nvmlInit_v2(void);
EXPORT nvmlReturn_t nvmlShutdown(void);
EXPORT const char *nvmlErrorString(nvmlReturn_t result);
EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char *version,
					       unsigned int length);
EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count);
EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index,
						  nvmlDevice_t *device);
EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid,
				      unsigned int length);
EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device,
					    nvmlPciInfo_t *pci);
EXPORT nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device,
					     unsigned int link,
					     nvmlEnableState_t *active);
EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device,
		unsigned int link, nvmlPciInfo_t *pci);
#ifndef FAKE_NVML_OLD
EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t device,
		unsigned int link, nvmlIntNvLinkDeviceType_t *type);
EXPORT nvmlReturn_t nvmlDeviceGetC2cModeInfoV(nvmlDevice_t device,
					      nvmlC2cModeInfo_v1_t *info);
#endif

static const char *const ledger_rows[] = { "init" };

enum preset { P_NONE, P_NVSWITCH, P_DGX1, P_GH200 };

/* DGX-1 V100: the GPU at the far end of each of a GPU's 6 links. */
static const int dgx1_links[8][6] = {
	{ 1, 2, 3, 3, 4, 4 }, { 0, 2, 2, 3, 5, 5 },
	{ 0, 1, 1, 3, 3, 6 }, { 0, 0, 1, 2, 2, 7 },
	{ 0, 0, 5, 6, 7, 7 }, { 1, 1, 4, 6, 6, 7 },
	{ 2, 4, 5, 5, 7, 7 }, { 3, 4, 4, 5, 6, 6 },
};

struct nvmlDevice_st {
	int idx;
};

static struct nvmlDevice_st devs[FAKE_MAX_GPUS];
static enum preset preset;
static int ndev;
static int inits;

static void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...);

static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("fake libnvidia-ml: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

static void __attribute__((constructor)) fake_nvml_init(void)
{
	const char *p;

	fake_scenario_load("FAKE_NVML_SCENARIO");
	fake_ledger_init("nvml", ledger_rows, 1);
	p = fake_get("preset");
	if (!p || !strcmp(p, "none"))
		preset = P_NONE;
	else if (!strcmp(p, "nvswitch"))
		preset = P_NVSWITCH;
	else if (!strcmp(p, "dgx1"))
		preset = P_DGX1;
	else if (!strcmp(p, "gh200"))
		preset = P_GH200;
	else
		die("preset = '%s': want none|nvswitch|dgx1|gh200", p);
	ndev = (int)fake_get_ll("device_count",
				preset == P_NVSWITCH || preset == P_DGX1 ? 8 : 1);
	if (ndev < 0 || ndev > FAKE_MAX_GPUS)
		die("device_count %d not modelled", ndev);
	for (int i = 0; i < ndev; i++)
		devs[i].idx = i;
}

/* Entry of every call: injected fault first, then the init gate. */
#define ENTER(name, idx) do {						\
	long long v_;							\
	if (fake_fault(name, idx, &v_))					\
		return (nvmlReturn_t)v_;				\
	if (!inits)							\
		return NVML_ERROR_UNINITIALIZED;			\
} while (0)

static int dev_idx(nvmlDevice_t d)
{
	for (int i = 0; i < ndev; i++)
		if (d == &devs[i])
			return i;
	return -1;
}

nvmlReturn_t nvmlInit_v2(void)
{
	long long v;
	int rc;

	if (fake_fault("nvmlInit_v2", -1, &v))
		return (nvmlReturn_t)v;
	rc = (int)fake_get_ll("init", 0);
	if (rc != NVML_SUCCESS)
		return rc;
	inits++;
	fake_ledger_acquire(0);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void)
{
	ENTER("nvmlShutdown", -1);
	inits--;
	fake_ledger_release(0);
	return NVML_SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t result)
{
	return result == NVML_SUCCESS ? "Success" : "Fake NVML error";
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
	const char *v = fake_get("driver_version");

	ENTER("nvmlSystemGetDriverVersion", -1);
	if (!version || !length)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (snprintf(version, length, "%s", v ? v : "580.95.05") >= (int)length)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
	ENTER("nvmlDeviceGetCount_v2", -1);
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	*count = (unsigned int)ndev;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index,
					   nvmlDevice_t *device)
{
	ENTER("nvmlDeviceGetHandleByIndex_v2", (int)index);
	if (!device || index >= (unsigned int)ndev)
		return NVML_ERROR_INVALID_ARGUMENT;
	*device = &devs[index];
	return NVML_SUCCESS;
}

#define DEVICE(name, d, i) do {						\
	i = dev_idx(d);							\
	ENTER(name, i);							\
	if (i < 0)							\
		return NVML_ERROR_INVALID_ARGUMENT;			\
} while (0)

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid,
			       unsigned int length)
{
	const char *u;
	char dflt[64];
	int i;

	DEVICE("nvmlDeviceGetUUID", device, i);
	snprintf(dflt, sizeof(dflt), "GPU-00000000-fake-0000-0000-%012d", i);
	u = fake_getf("gpu%d.uuid", i);
	if (!uuid)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (snprintf(uuid, length, "%s", u ? u : dflt) >= (int)length)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	return NVML_SUCCESS;
}

/* "0000:3b:00.0" -> the struct NVML fills, busId "00000000:3B:00.0". */
static void fill_pci(nvmlPciInfo_t *pci, const char *addr,
		     unsigned int device_id)
{
	unsigned int dom = 0, bus = 0, dev = 0, fn = 0;

	memset(pci, 0, sizeof(*pci));
	if (sscanf(addr, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4)
		die("bad PCI address '%s'", addr);
	pci->domain = dom;
	pci->bus = bus;
	pci->device = dev;
	pci->pciDeviceId = device_id << 16 | 0x10de;
	snprintf(pci->busId, sizeof(pci->busId), "%08X:%02X:%02X.%X", dom, bus,
		 dev, fn);
	snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy),
		 "%04X:%02X:%02X.%X", dom & 0xffff, bus, dev, fn);
}

static const char *gpu_pci(int i)
{
	const char *p = fake_getf("gpu%d.pci", i);

	return p ? p : "0000:00:00.0";
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
	int i;

	DEVICE("nvmlDeviceGetPciInfo_v3", device, i);
	if (!pci)
		return NVML_ERROR_INVALID_ARGUMENT;
	fill_pci(pci, gpu_pci(i), 0x2330);
	return NVML_SUCCESS;
}

static int links_of(int i)
{
	int dflt = preset == P_NONE ? 0 : preset == P_DGX1 ? 6 : 18;

	return (int)fake_getf_ll(dflt, "gpu%d.links", i);
}

/* What the preset puts at the far end of link l: "gpuJ", "switchK", ... */
static const char *remote_of(int i, unsigned int l, char *buf, size_t len)
{
	const char *r = fake_getf("gpu%d.link%u.remote", i, l);

	if (r)
		return r;
	switch (preset) {
	case P_NVSWITCH:
		snprintf(buf, len, "switch%d", l < 5 ? 0 : l < 9 ? 1 :
			 l < 13 ? 2 : 3);
		break;
	case P_DGX1:
		if (i < 8 && l < 6)
			snprintf(buf, len, "gpu%d", dgx1_links[i][l]);
		else
			snprintf(buf, len, "unknown");
		break;
	default:
		snprintf(buf, len, "unknown");
	}
	return buf;
}

static bool link_active(int i, unsigned int l)
{
	long long dflt = preset == P_NVSWITCH || preset == P_DGX1;

	return fake_getf_ll(dflt, "gpu%d.link%u.active", i, l) != 0;
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link,
				      nvmlEnableState_t *active)
{
	int i;

	DEVICE("nvmlDeviceGetNvLinkState", device, i);
	if (!active)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (preset == P_NONE && !fake_getf("gpu%d.links", i))
		return NVML_ERROR_NOT_SUPPORTED;
	if (link >= (unsigned int)links_of(i))
		return NVML_ERROR_INVALID_ARGUMENT;
	*active = link_active(i, link) ? NVML_FEATURE_ENABLED :
		  NVML_FEATURE_DISABLED;
	return NVML_SUCCESS;
}

/* The far end of an existing, active link, or an NVML error. */
static int far_end(int i, unsigned int link, char *buf, size_t len,
		   const char **what)
{
	if (link >= (unsigned int)links_of(i))
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!link_active(i, link))
		return NVML_ERROR_NOT_FOUND;
	*what = remote_of(i, link, buf, len);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device,
		unsigned int link, nvmlPciInfo_t *pci)
{
	const char *what;
	char buf[32], addr[32];
	int i, rc, k;

	DEVICE("nvmlDeviceGetNvLinkRemotePciInfo_v2", device, i);
	if (!pci)
		return NVML_ERROR_INVALID_ARGUMENT;
	rc = far_end(i, link, buf, sizeof(buf), &what);
	if (rc)
		return rc;
	if (sscanf(what, "gpu%d", &k) == 1 && k >= 0 && k < ndev) {
		fill_pci(pci, gpu_pci(k), 0x2330);
	} else if (sscanf(what, "switch%d", &k) == 1) {
		snprintf(addr, sizeof(addr), "0000:%02x:00.0", (0xa0 + k) & 0xff);
		fill_pci(pci, addr, 0x22a3);
	} else if (!strcmp(what, "npu")) {
		fill_pci(pci, "0000:ff:00.0", 0x04ea);
	} else {
		return NVML_ERROR_UNKNOWN;
	}
	return NVML_SUCCESS;
}

#ifndef FAKE_NVML_OLD
nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t device,
		unsigned int link, nvmlIntNvLinkDeviceType_t *type)
{
	const char *what;
	char buf[32];
	int i, rc;

	DEVICE("nvmlDeviceGetNvLinkRemoteDeviceType", device, i);
	if (!type)
		return NVML_ERROR_INVALID_ARGUMENT;
	rc = far_end(i, link, buf, sizeof(buf), &what);
	if (rc)
		return rc;
	*type = !strncmp(what, "gpu", 3) ? NVML_NVLINK_DEVICE_TYPE_GPU :
		!strncmp(what, "switch", 6) ? NVML_NVLINK_DEVICE_TYPE_SWITCH :
		!strcmp(what, "npu") ? NVML_NVLINK_DEVICE_TYPE_IBMNPU :
		NVML_NVLINK_DEVICE_TYPE_UNKNOWN;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetC2cModeInfoV(nvmlDevice_t device,
				       nvmlC2cModeInfo_v1_t *info)
{
	int i, rc;

	DEVICE("nvmlDeviceGetC2cModeInfoV", device, i);
	if (!info)
		return NVML_ERROR_INVALID_ARGUMENT;
	rc = (int)fake_getf_ll(preset == P_GH200 ? 0 : NVML_ERROR_NOT_SUPPORTED,
			       "gpu%d.c2c_rc", i);
	if (rc)
		return rc;
	info->isC2cEnabled = (unsigned int)fake_getf_ll(preset == P_GH200,
							"gpu%d.c2c", i);
	return NVML_SUCCESS;
}
#endif
