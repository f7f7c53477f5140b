// SPDX-License-Identifier: MIT
/*
 * NVML (libnvidia-ml.so.1) through a dlopen'd function table, as NCCL's
 * nvmlwrap does: the node facts CUDA does not give (GPU UUIDs, NVLink links
 * and what is at their far end, C2C to a Grace CPU). Runs inside the
 * isolated worker only.
 */
#include "access/nvml.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "core/clock.h"
#include "decode/nvml_api.h"
#include "access/symtab.h"

struct nvml_table {
	nvmlInit_fn init;
	nvmlShutdown_fn shutdown;
	nvmlErrorString_fn error_string;
	nvmlSystemGetDriverVersion_fn driver_version;
	nvmlDeviceGetCount_fn get_count;
	nvmlDeviceGetHandleByIndex_fn get_handle;
	nvmlDeviceGetUUID_fn get_uuid;
	nvmlDeviceGetPciInfo_fn get_pci;
	nvmlDeviceGetNvLinkState_fn link_state;
	nvmlDeviceGetNvLinkRemotePciInfo_fn link_remote_pci;
	nvmlDeviceGetNvLinkRemoteDeviceType_fn link_remote_type;
	nvmlDeviceGetC2cModeInfoV_fn c2c_mode;
};

#define SYM(n, field, req) { .name = n, .version = NULL, \
	.offset = offsetof(struct nvml_table, field), .required = req }

static const struct sym_entry nvml_syms[] = {
	SYM("nvmlInit_v2", init, true),
	SYM("nvmlShutdown", shutdown, true),
	SYM("nvmlErrorString", error_string, false),
	SYM("nvmlSystemGetDriverVersion", driver_version, false),
	SYM("nvmlDeviceGetCount_v2", get_count, true),
	SYM("nvmlDeviceGetHandleByIndex_v2", get_handle, true),
	SYM("nvmlDeviceGetUUID", get_uuid, true),
	SYM("nvmlDeviceGetPciInfo_v3", get_pci, true),
	SYM("nvmlDeviceGetNvLinkState", link_state, true),
	SYM("nvmlDeviceGetNvLinkRemotePciInfo_v2", link_remote_pci, true),
	/* Newer drivers only: absent, the far end's kind is unknown. */
	SYM("nvmlDeviceGetNvLinkRemoteDeviceType", link_remote_type, false),
	/* R550+ only (Grace Hopper): absent, C2C is unknown. */
	SYM("nvmlDeviceGetC2cModeInfoV", c2c_mode, false),
};

static struct nvml_table nv;

const char *nvml_result_name(int rc)
{
	switch (rc) {
	case NVML_SUCCESS: return "NVML_SUCCESS";
	case NVML_ERROR_UNINITIALIZED: return "NVML_ERROR_UNINITIALIZED";
	case NVML_ERROR_INVALID_ARGUMENT: return "NVML_ERROR_INVALID_ARGUMENT";
	case NVML_ERROR_NOT_SUPPORTED: return "NVML_ERROR_NOT_SUPPORTED";
	case NVML_ERROR_NO_PERMISSION: return "NVML_ERROR_NO_PERMISSION";
	case NVML_ERROR_ALREADY_INITIALIZED: return "NVML_ERROR_ALREADY_INITIALIZED";
	case NVML_ERROR_NOT_FOUND: return "NVML_ERROR_NOT_FOUND";
	case NVML_ERROR_INSUFFICIENT_SIZE: return "NVML_ERROR_INSUFFICIENT_SIZE";
	case NVML_ERROR_INSUFFICIENT_POWER: return "NVML_ERROR_INSUFFICIENT_POWER";
	case NVML_ERROR_DRIVER_NOT_LOADED: return "NVML_ERROR_DRIVER_NOT_LOADED";
	case NVML_ERROR_TIMEOUT: return "NVML_ERROR_TIMEOUT";
	case NVML_ERROR_IRQ_ISSUE: return "NVML_ERROR_IRQ_ISSUE";
	case NVML_ERROR_LIBRARY_NOT_FOUND: return "NVML_ERROR_LIBRARY_NOT_FOUND";
	case NVML_ERROR_FUNCTION_NOT_FOUND: return "NVML_ERROR_FUNCTION_NOT_FOUND";
	case NVML_ERROR_CORRUPTED_INFOROM: return "NVML_ERROR_CORRUPTED_INFOROM";
	case NVML_ERROR_GPU_IS_LOST: return "NVML_ERROR_GPU_IS_LOST";
	case NVML_ERROR_RESET_REQUIRED: return "NVML_ERROR_RESET_REQUIRED";
	case NVML_ERROR_OPERATING_SYSTEM: return "NVML_ERROR_OPERATING_SYSTEM";
	case NVML_ERROR_LIB_RM_VERSION_MISMATCH: return "NVML_ERROR_LIB_RM_VERSION_MISMATCH";
	case NVML_ERROR_IN_USE: return "NVML_ERROR_IN_USE";
	case NVML_ERROR_MEMORY: return "NVML_ERROR_MEMORY";
	case NVML_ERROR_NO_DATA: return "NVML_ERROR_NO_DATA";
	case NVML_ERROR_UNKNOWN: return "NVML_ERROR_UNKNOWN";
	default: return NULL;
	}
}

/* Mark the call in progress, so a hang or crash names it. */
static void enter(struct stage_status *st, const char *call)
{
	snprintf(st->call, sizeof(st->call), "%s", call);
}

/* The constant's name; for a value we do not know, the library's words
 * (its string is untrusted: copied, bounded, cleaned by the renderers). */
static void record(struct cu_call *c, int rc, double t0)
{
	const char *name = nvml_result_name(rc);

	c->called = true;
	c->rc = rc;
	c->ms = now_ms() - t0;
	if (name)
		snprintf(c->name, sizeof(c->name), "%s", name);
	else if (nv.error_string && (name = nv.error_string(rc)) != NULL)
		snprintf(c->name, sizeof(c->name), "nvmlReturn %d (%.28s)", rc,
			 name);
	else
		snprintf(c->name, sizeof(c->name), "nvmlReturn %d", rc);
}

/* "00000000:3B:00.0" -> "0000:3b:00.0" (as access/cuda.c does); "" when
 * it is no address. */
static void normalise_bus_id(const char *in, size_t inlen, char *out,
			     size_t len)
{
	unsigned int dom = 0, bus = 0, dev = 0, fn = 0;
	char buf[64], tail;

	snprintf(buf, sizeof(buf), "%.*s", (int)strnlen(in, inlen), in);
	out[0] = '\0';
	if (sscanf(buf, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) == 4 &&
	    bus <= 0xff && dev <= 0x1f && fn <= 7)
		snprintf(out, len, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
}

static void gpu_fail(struct nvml_gpu *g, const char *fn, int rc, double t0)
{
	if (g->fail.called)
		return;
	record(&g->fail, rc, t0);
	snprintf(g->fail_fn, sizeof(g->fail_fn), "%s", fn);
}

static void query_link(nvmlDevice_t dev, unsigned int l, struct nvml_link *k,
		       struct stage_status *st)
{
	nvmlEnableState_t active = NVML_FEATURE_DISABLED;
	nvmlPciInfo_t pci;

	k->remote_rc = k->type_rc = NV_UNKNOWN;
	k->active = k->remote_type = NV_UNKNOWN;
	enter(st, "nvmlDeviceGetNvLinkState");
	k->state_rc = nv.link_state(dev, l, &active);
	if (k->state_rc != NVML_SUCCESS)
		return;
	k->active = active == NVML_FEATURE_ENABLED;
	if (!k->active)
		return;
	memset(&pci, 0, sizeof(pci));
	enter(st, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
	k->remote_rc = nv.link_remote_pci(dev, l, &pci);
	if (k->remote_rc == NVML_SUCCESS) {
		normalise_bus_id(pci.busId, sizeof(pci.busId), k->remote_pci,
				 sizeof(k->remote_pci));
		k->remote_device_id = pci.pciDeviceId;
	}
	if (nv.link_remote_type) {
		nvmlIntNvLinkDeviceType_t type = NVML_NVLINK_DEVICE_TYPE_UNKNOWN;

		enter(st, "nvmlDeviceGetNvLinkRemoteDeviceType");
		k->type_rc = nv.link_remote_type(dev, l, &type);
		if (k->type_rc == NVML_SUCCESS)
			k->remote_type = (int)type;
	}
}

static void query_gpu(struct nvml_facts *nf, int i, struct stage_status *st)
{
	struct nvml_gpu *g = &nf->gpus[i];
	nvmlDevice_t dev = NULL;
	nvmlPciInfo_t pci;
	char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
	double t0;
	int rc;

	g->index = i;
	g->c2c = g->c2c_rc = NV_UNKNOWN;
	nf->gpus_recorded = i + 1;
	enter(st, "nvmlDeviceGetHandleByIndex_v2");
	t0 = now_ms();
	rc = nv.get_handle((unsigned int)i, &dev);
	if (rc != NVML_SUCCESS) {
		gpu_fail(g, "nvmlDeviceGetHandleByIndex_v2", rc, t0);
		return;
	}
	enter(st, "nvmlDeviceGetUUID");
	t0 = now_ms();
	memset(uuid, 0, sizeof(uuid));
	rc = nv.get_uuid(dev, uuid, sizeof(uuid));
	if (rc == NVML_SUCCESS)
		snprintf(g->uuid, sizeof(g->uuid), "%.*s",
			 (int)strnlen(uuid, sizeof(uuid)), uuid);
	else
		gpu_fail(g, "nvmlDeviceGetUUID", rc, t0);
	enter(st, "nvmlDeviceGetPciInfo_v3");
	t0 = now_ms();
	memset(&pci, 0, sizeof(pci));
	rc = nv.get_pci(dev, &pci);
	if (rc == NVML_SUCCESS)
		normalise_bus_id(pci.busId, sizeof(pci.busId), g->pci,
				 sizeof(g->pci));
	else
		gpu_fail(g, "nvmlDeviceGetPciInfo_v3", rc, t0);
	for (unsigned int l = 0; l < NV_MAX_LINKS; l++) {
		query_link(dev, l, &g->links[l], st);
		g->links_asked = (int)l + 1;
	}
	if (nv.c2c_mode) {
		nvmlC2cModeInfo_v1_t c2c = { 0 };

		enter(st, "nvmlDeviceGetC2cModeInfoV");
		g->c2c_rc = nv.c2c_mode(dev, &c2c);
		if (g->c2c_rc == NVML_SUCCESS)
			g->c2c = c2c.isC2cEnabled ? 1 : 0;
	}
	g->complete = true;
}

void nvml_stage_query(const struct vendor_options *opt,
		      struct vendor_facts *vf, struct stage_status *st)
{
	struct nvml_facts *nf = &vf->nvml;
	unsigned int count = 0;
	void *handle;
	double t0;
	int rc, n;

	memset(&nf->lib, 0, sizeof(nf->lib));
	enter(st, "dlopen");
	handle = symtab_load(opt->libnvml ? opt->libnvml : LIBNVML_DEFAULT,
			     nvml_syms, sizeof(nvml_syms) / sizeof(nvml_syms[0]),
			     &nv, &nf->lib);
	if (!handle)
		return;
	nf->have_remote_type = nv.link_remote_type != NULL;
	nf->have_c2c = nv.c2c_mode != NULL;

	enter(st, "nvmlInit_v2");
	t0 = now_ms();
	rc = nv.init();
	record(&nf->init, rc, t0);
	if (rc != NVML_SUCCESS)
		return;	/* nothing to shut down; the handle dies with us */
	if (nv.driver_version) {
		char ver[80] = "";

		enter(st, "nvmlSystemGetDriverVersion");
		if (nv.driver_version(ver, sizeof(ver)) == NVML_SUCCESS)
			snprintf(nf->driver_version, sizeof(nf->driver_version),
				 "%.*s", (int)strnlen(ver, sizeof(ver)), ver);
	}
	enter(st, "nvmlDeviceGetCount_v2");
	t0 = now_ms();
	rc = nv.get_count(&count);
	record(&nf->count_call, rc, t0);
	if (rc == NVML_SUCCESS) {
		nf->count = count > (unsigned int)VF_CAPS_MAX_GPUS * 64 ?
			    VF_CAPS_MAX_GPUS * 64 : (int)count;
		n = nf->count < vf->cap.gpus ? nf->count : vf->cap.gpus;
		for (int i = 0; i < n; i++)
			query_gpu(nf, i, st);
	}
	enter(st, "nvmlShutdown");
	t0 = now_ms();
	rc = nv.shutdown();
	record(&nf->shutdown, rc, t0);
}
