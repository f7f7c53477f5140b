// SPDX-License-Identifier: MIT
/*
 * The versions header (issue 26 item 1): the NVIDIA module, CUDA, NVML,
 * rdma-core, MLNX_OFED/DOCA and each kind of NIC with its firmware, read
 * once after the gates into the report's meta; text and JSON show them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access/sysroot.h"
#include "decode/cuda_api.h"
#include "probes/probes.h"

/* Marketing names of the RDMA NICs a GPU node carries (PCI device ids). */
static const struct {
	unsigned int vendor, device;
	const char *name;
} nic_names[] = {
	{ 0x15b3, 0x101b, "ConnectX-6" },
	{ 0x15b3, 0x101d, "ConnectX-6 Dx" },
	{ 0x15b3, 0x101f, "ConnectX-6 Lx" },
	{ 0x15b3, 0x1021, "ConnectX-7" },
	{ 0x15b3, 0x1023, "ConnectX-8" },
	{ 0x15b3, 0x1025, "ConnectX-9" },
	{ 0x15b3, 0x101e, "ConnectX VF" },
	{ 0x15b3, 0xa2d6, "BlueField-2" },
	{ 0x15b3, 0xa2dc, "BlueField-3" },
	{ 0x1d0f, 0xefa0, "EFA" },
	{ 0x1d0f, 0xefa1, "EFA" },
	{ 0x1d0f, 0xefa2, "EFA" },
	{ 0x1d0f, 0xefa3, "EFA" },
	{ 0x14e4, 0x1760, "Thor 2" },
};

static void read_text(struct gdr_ctx *ctx, const char *path, char *buf,
		      size_t len)
{
	if (sysroot_read_line(ctx->sr, path, buf, len) < 0)
		buf[0] = '\0';
}

static void nic_model(struct gdr_ctx *ctx, const struct inv_nic *nic,
		      char *out, size_t len)
{
	char path[160], v[16], d[16];
	unsigned int vendor, device;

	out[0] = '\0';
	if (!nic->pci[0])
		return;
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/vendor", nic->pci);
	read_text(ctx, path, v, sizeof(v));
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/device", nic->pci);
	read_text(ctx, path, d, sizeof(d));
	if (sscanf(v, "%x", &vendor) != 1 || sscanf(d, "%x", &device) != 1)
		return;
	for (size_t i = 0; i < sizeof(nic_names) / sizeof(nic_names[0]); i++)
		if (nic_names[i].vendor == vendor && nic_names[i].device == device) {
			snprintf(out, len, "%s", nic_names[i].name);
			return;
		}
	snprintf(out, len, "%04x:%04x", vendor, device);
}

/* The system's bytes, made safe as the report model keeps text. */
static void clean(char *s, size_t len)
{
	char raw[128];

	snprintf(raw, sizeof(raw), "%s", s);
	report_clean(s, len, raw);
}

static void nic_kinds(struct gdr_ctx *ctx, struct report_versions *v)
{
	size_t room = ctx->inv.nnic ? ctx->inv.nnic : 1;

	for (size_t i = 0; i < ctx->inv.nnic; i++) {
		const struct inv_nic *nic = &ctx->inv.nic[i];
		struct nic_kind k = { .count = 0 };
		char path[160];
		int at;

		nic_model(ctx, nic, k.model, sizeof(k.model));
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/fw_ver",
			 nic->name);
		read_text(ctx, path, k.fw, sizeof(k.fw));
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/board_id",
			 nic->name);
		read_text(ctx, path, k.board, sizeof(k.board));
		if (nic->nports) {
			snprintf(path, sizeof(path),
				 "/sys/class/infiniband/%s/ports/%d/rate",
				 nic->name, nic->ports[0].num);
			read_text(ctx, path, k.rate, sizeof(k.rate));
		}
		clean(k.fw, sizeof(k.fw));
		clean(k.board, sizeof(k.board));
		clean(k.rate, sizeof(k.rate));
		for (at = 0; at < v->nnic_kinds; at++) {
			struct nic_kind *o = &v->nic[at];

			if (!strcmp(o->model, k.model) && !strcmp(o->fw, k.fw) &&
			    !strcmp(o->board, k.board) && !strcmp(o->rate, k.rate))
				break;
		}
		if (at == v->nnic_kinds && at < REPORT_NIC_KINDS) {
			k.nics = report_alloc(ctx->rep, room * sizeof(int));
			v->nic[v->nnic_kinds++] = k;
		}
		if (at < REPORT_NIC_KINDS)
			v->nic[at].nics[v->nic[at].count++] = nic->subject;
		else
			v->nic_kinds_more++;
	}
}

/*
 * The libibverbs file: the one named, else libibverbs.so.1 in the
 * distribution's library directories; its name carries the release
 * ("libibverbs.so.1.14.50.0": rdma-core 50).
 */
static void verbs_version(struct gdr_ctx *ctx, struct report_versions *v)
{
	static const char *const dirs[] = {
		"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
		"/usr/lib64", "/lib64", "/usr/lib",
	};
	const char *named = ctx->vf->verbs.lib.path;
	char path[320], real[512];
	const char *base;
	unsigned int a, b, rel;

	real[0] = '\0';
	if (named[0] == '/') {
		if (sysroot_realpath(ctx->sr, named, real, sizeof(real)) < 0)
			real[0] = '\0';
	} else {
		for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]) && !real[0]; i++) {
			snprintf(path, sizeof(path), "%s/libibverbs.so.1", dirs[i]);
			if (sysroot_realpath(ctx->sr, path, real, sizeof(real)) < 0)
				real[0] = '\0';
		}
	}
	if (!real[0])
		return;
	base = strrchr(real, '/');
	base = base ? base + 1 : real;
	snprintf(v->libibverbs, sizeof(v->libibverbs), "%.*s",
		 (int)sizeof(v->libibverbs) - 1, base);
	if (sscanf(base, "libibverbs.so.1.%u.%u.%u", &a, &b, &rel) == 3)
		snprintf(v->rdma_core, sizeof(v->rdma_core), "%u", b);
}

void versions_collect(struct gdr_ctx *ctx)
{
	struct report_versions *v = &ctx->rep->meta.versions;
	const struct vendor_facts *vf = ctx->vf;
	enum nv_flavour fl = NV_FLAVOUR_UNKNOWN;
	const char *ver = NULL;

	memset(v, 0, sizeof(*v));
	if (nvidia_module(ctx, &fl, &ver) == 0 && ver) {
		snprintf(v->nvidia, sizeof(v->nvidia), "%s", ver);
		snprintf(v->nvidia_flavour, sizeof(v->nvidia_flavour), "%s",
			 fl == NV_FLAVOUR_OPEN ? "open" :
			 fl == NV_FLAVOUR_PROPRIETARY ? "proprietary" : "");
	}
	if (vf->cuda.driver_version > 0)
		cuda_version_string(vf->cuda.driver_version, v->cuda,
				    sizeof(v->cuda));
	snprintf(v->nvml, sizeof(v->nvml), "%s", vf->nvml.driver_version);
	clean(v->nvml, sizeof(v->nvml));
	verbs_version(ctx, v);
	clean(v->libibverbs, sizeof(v->libibverbs));
	/* Only MLNX_OFED/DOCA's mlx5_core has a version file. */
	read_text(ctx, "/sys/module/mlx5_core/version", v->ofed, sizeof(v->ofed));
	clean(v->ofed, sizeof(v->ofed));
	nic_kinds(ctx, v);
}
