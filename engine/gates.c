// SPDX-License-Identifier: MIT
/* The ordered gate chain: layers in the design's order, gates in each. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "access/symtab.h"
#include "engine/gates.h"
#include "probes/probes.h"

#define GATE(i, l, s, p, t, fn) { .id = i, .layer = l, .scope = s, \
	.paths = p, .title = t, .run = fn }
#define PROOF(i, l, s, p, t, fn) { .id = i, .layer = l, .scope = s, \
	.paths = p, .title = t, .run = fn, .proof = true }

const struct gate gate_table[] = {
	GATE("host.kernel", L_HOST, SUBJ_HOST, P_DMABUF,
	     "kernel release allows RDMA dma-buf import (>= 5.12)",
	     gate_host_kernel),
	GATE("host.memlock", L_HOST, SUBJ_HOST, P_BOTH,
	     "RLIMIT_MEMLOCK for host-memory registrations",
	     gate_host_memlock),
	GATE("host.privileges", L_HOST, SUBJ_HOST, P_NONE,
	     "effective uid and capabilities (what can be read)",
	     gate_host_privileges),
	GATE("host.container", L_HOST, SUBJ_HOST, P_NONE,
	     "container runtime hints and device nodes",
	     gate_host_container),

	GATE("gpu.driver", L_GPU, SUBJ_HOST, P_BOTH,
	     "NVIDIA kernel driver loaded (/proc/driver/nvidia/version)",
	     gate_gpu_driver),
	GATE("gpu.libcuda", L_GPU, SUBJ_HOST, P_BOTH,
	     "libcuda.so.1 loads with the required symbols",
	     gate_gpu_libcuda),
	GATE("gpu.cuinit", L_GPU, SUBJ_HOST, P_BOTH,
	     "cuInit succeeds; driver version",
	     gate_gpu_cuinit),
	GATE("gpu.devices", L_GPU, SUBJ_HOST, P_BOTH,
	     "CUDA enumerates the NVIDIA GPUs on the PCI bus",
	     gate_gpu_devices),
	GATE("gpu.visible", L_GPU, SUBJ_GPU, P_BOTH,
	     "GPU is visible to CUDA (name, bus id, compute capability)",
	     gate_gpu_visible),
	GATE("gpu.gdr_attr", L_GPU, SUBJ_GPU, P_BOTH,
	     "CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED, flush and ordering",
	     gate_gpu_gdr_attr),
	GATE("gpu.dmabuf_attr", L_GPU, SUBJ_GPU, P_DMABUF,
	     "CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED and driver >= 11.7",
	     gate_gpu_dmabuf_attr),

	GATE("nic.libibverbs", L_NIC, SUBJ_HOST, P_BOTH,
	     "libibverbs.so.1 loads; optional symbols by version node",
	     gate_nic_libibverbs),
	GATE("nic.kernel_verbs", L_NIC, SUBJ_HOST, P_BOTH,
	     "kernel user verbs present (infiniband_verbs/abi_version)",
	     gate_nic_kernel_verbs),
	GATE("nic.devices", L_NIC, SUBJ_HOST, P_BOTH,
	     "RDMA devices in /sys/class/infiniband",
	     gate_nic_devices),
	GATE("nic.uverbs", L_NIC, SUBJ_NIC, P_BOTH,
	     "uverbs device node present and opens through libibverbs",
	     gate_nic_uverbs),
	GATE("nic.port", L_NIC, SUBJ_PORT, P_BOTH,
	     "port ACTIVE; physical state, link layer, rate",
	     gate_nic_port),
	GATE("nic.gid", L_NIC, SUBJ_PORT, P_BOTH,
	     "usable RoCE v2 GID on Ethernet ports",
	     gate_nic_gid),

	GATE("mech.peermem", L_MECHANISM, SUBJ_HOST, P_PEERMEM,
	     "GPU peer-memory client (nvidia_peermem) for ibv_reg_mr on GPU memory",
	     gate_mech_peermem),
	GATE("mech.dmabuf_module", L_MECHANISM, SUBJ_HOST, P_DMABUF,
	     "open NVIDIA kernel module (DMA-BUF export)",
	     gate_mech_dmabuf_module),
	GATE("mech.dmabuf_verbs", L_MECHANISM, SUBJ_HOST, P_DMABUF,
	     "libibverbs exports ibv_reg_dmabuf_mr@IBVERBS_1.12",
	     gate_mech_dmabuf_verbs),
	GATE("mech.dmabuf_provider", L_MECHANISM, SUBJ_NIC, P_DMABUF,
	     "provider probe ibv_reg_dmabuf_mr(fd=-1): EBADF means supported",
	     gate_mech_dmabuf_provider),
	GATE("mech.dmabuf_export", L_MECHANISM, SUBJ_GPU, P_DMABUF,
	     "CUDA exports cuMemAlloc memory as a dma-buf (fdinfo checked)",
	     gate_mech_dmabuf_export),
	GATE("mech.gdrcopy", L_MECHANISM, SUBJ_HOST, P_NONE,
	     "GDRCopy (gdrdrv, libgdrapi): informational, not needed for GDR",
	     gate_mech_gdrcopy),

	GATE("topo.tree", L_TOPOLOGY, SUBJ_HOST, P_NONE,
	     "PCIe tree from sysfs: functions, bridges, host bridges, NUMA",
	     gate_topo_tree),
	GATE("topo.path", L_TOPOLOGY, SUBJ_PAIR, P_NONE,
	     "GPU-NIC PCIe path: bridges, nvidia-smi class, NCCL path type",
	     gate_topo_path),
	GATE("topo.nccl", L_TOPOLOGY, SUBJ_PAIR, P_BOTH,
	     "what NCCL decides for the pair (NCCL_NET_GDR_LEVEL, GDR read)",
	     gate_topo_nccl),
	GATE("topo.best_nic", L_TOPOLOGY, SUBJ_GPU, P_NONE,
	     "nearest RDMA device per GPU",
	     gate_topo_best_nic),

	GATE("platform.bar1", L_PLATFORM, SUBJ_GPU, P_BOTH,
	     "BAR1 size against GPU memory (what GDR can pin at once)",
	     gate_platform_bar1),
	GATE("platform.iommu", L_PLATFORM, SUBJ_HOST, P_BOTH,
	     "IOMMU presence and the GPU's and NIC's group domain types",
	     gate_platform_iommu),
	GATE("platform.bridges", L_PLATFORM, SUBJ_HOST, P_NONE,
	     "every bridge on a GPU-NIC path: port type, ACS registers, link",
	     gate_platform_bridges),
	GATE("platform.acs", L_PLATFORM, SUBJ_PAIR, P_BOTH,
	     "ACS control of every bridge on the GPU-NIC path (config space)",
	     gate_platform_acs),
	GATE("platform.link", L_PLATFORM, SUBJ_PAIR, P_NONE,
	     "PCIe link width/speed of GPU, NIC and bridges on the path",
	     gate_platform_link),

	GATE("reg.plan", L_REGISTRATION, SUBJ_HOST, P_NONE,
	     "what the proof allocates: GPU memory per GPU, pairs tried",
	     gate_reg_plan),
	GATE("reg.host_mr", L_REGISTRATION, SUBJ_NIC, P_BOTH,
	     "control: ibv_reg_mr on host memory (verbs and memlock work)",
	     gate_reg_host_mr),
	PROOF("reg.peermem", L_REGISTRATION, SUBJ_PAIR, P_PEERMEM,
	      "ibv_reg_mr on a cuMemAlloc pointer (the peermem path)",
	      gate_reg_peermem),
	PROOF("reg.dmabuf", L_REGISTRATION, SUBJ_PAIR, P_DMABUF,
	      "CUDA dma-buf export + ibv_reg_dmabuf_mr (the DMA-BUF path)",
	      gate_reg_dmabuf),

	PROOF("data.peermem", L_DATAPATH, SUBJ_PAIR, P_PEERMEM,
	      "loopback RC: RDMA WRITE into / READ from the peermem MR, verified",
	      gate_data_peermem),
	PROOF("data.dmabuf", L_DATAPATH, SUBJ_PAIR, P_DMABUF,
	      "loopback RC: RDMA WRITE into / READ from the DMA-BUF MR, verified",
	      gate_data_dmabuf),
	GATE("data.gpu_to_gpu", L_DATAPATH, SUBJ_NIC, P_NONE,
	     "RDMA WRITE from one GPU's MR into another's through the NIC",
	     gate_data_gpu_to_gpu),
	GATE("data.kmsg", L_DATAPATH, SUBJ_HOST, P_NONE,
	     "new IOMMU/DMAR/AMD-Vi/AER lines in the kernel log meanwhile",
	     gate_data_kmsg),
};

const size_t gate_count = sizeof(gate_table) / sizeof(gate_table[0]);

struct result *emit(struct gdr_ctx *ctx, int subject, enum gdr_status st,
		    const char *code, const char *fmt, ...)
{
	const struct gate *g = ctx->gate;
	struct result *r;
	double now = now_ms();
	va_list ap;

	va_start(ap, fmt);
	r = report_vadd(ctx->rep, g->id, g->layer, g->paths, subject, st, code,
			fmt, ap);
	va_end(ap);
	r->duration_ms = now - ctx->mark_ms;
	r->proof = g->proof;
	ctx->mark_ms = now;
	return r;
}

static bool in_list(const char *list, const struct gate *g)
{
	const char *p = list;

	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if ((strlen(g->id) == n && !strncmp(g->id, p, n)) ||
		    (strlen(layer_name(g->layer)) == n &&
		     !strncmp(layer_name(g->layer), p, n)))
			return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}

bool gate_selected(const struct options *o, const struct gate *g)
{
	if (o->only && !in_list(o->only, g))
		return false;
	return !(o->skip && in_list(o->skip, g));
}

const char *gates_check_list(const char *list)
{
	static char bad[64];
	const char *p = list;

	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		bool known = false;

		for (size_t i = 0; i < gate_count && !known; i++)
			known = (strlen(gate_table[i].id) == n &&
				 !strncmp(gate_table[i].id, p, n)) ||
				(strlen(layer_name(gate_table[i].layer)) == n &&
				 !strncmp(layer_name(gate_table[i].layer), p, n));
		if (!known) {
			snprintf(bad, sizeof(bad), "%.*s", (int)(n < 60 ? n : 60), p);
			return bad;
		}
		p = end ? end + 1 : NULL;
	}
	return NULL;
}

bool layers_selected(const struct options *o, unsigned int mask)
{
	for (size_t i = 0; i < gate_count; i++)
		if ((mask & (1u << gate_table[i].layer)) &&
		    gate_selected(o, &gate_table[i]))
			return true;
	return false;
}

static void skip_no_subject(struct gdr_ctx *ctx, const struct gate *g)
{
	struct result *r = emit(ctx, ctx->host, ST_SKIP, "NO_SUBJECT",
		"no %s to check", g->scope == SUBJ_GPU ? "GPU" :
		g->scope == SUBJ_NIC ? "RDMA device" :
		g->scope == SUBJ_PAIR ? "GPU x RDMA device pair" : "RDMA port");

	/* Nothing to prove: the missing subject is decided by other gates. */
	r->waived = true;
}

void gates_run(struct gdr_ctx *ctx)
{
	for (size_t i = 0; i < gate_count; i++) {
		const struct gate *g = &gate_table[i];
		struct target t = { -1, -1, -1, -1 };
		bool any = false;

		ctx->gate = g;
		ctx->mark_ms = now_ms();
		if (!gate_selected(ctx->opt, g)) {
			struct result *r = emit(ctx, ctx->host, ST_SKIP, "EXCLUDED",
						"excluded by --only/--skip");

			/* Leaving out the transfer is the user's call. */
			r->waived = g->layer == L_DATAPATH;
			continue;
		}
		switch (g->scope) {
		case SUBJ_HOST:
			g->run(ctx, &t);
			any = true;
			break;
		case SUBJ_GPU:
			for (t.gpu = 0; t.gpu < (int)ctx->inv.ngpu; t.gpu++) {
				g->run(ctx, &t);
				any = true;
			}
			break;
		case SUBJ_NIC:
			for (t.nic = 0; t.nic < (int)ctx->inv.nnic; t.nic++) {
				g->run(ctx, &t);
				any = true;
			}
			break;
		case SUBJ_PORT:
			for (t.nic = 0; t.nic < (int)ctx->inv.nnic; t.nic++) {
				/* Ports that cannot be listed: ask about the NIC. */
				if (ctx->inv.nic[t.nic].ports_err &&
				    ctx->inv.nic[t.nic].ports_err != ENOENT) {
					t.port = -1;
					g->run(ctx, &t);
					any = true;
				}
				for (t.port = 0;
				     t.port < (int)ctx->inv.nic[t.nic].nports;
				     t.port++) {
					g->run(ctx, &t);
					any = true;
				}
			}
			break;
		case SUBJ_PAIR:
			for (t.pair = 0; t.pair < (int)ctx->inv.npair; t.pair++) {
				t.gpu = ctx->inv.pair[t.pair].gpu;
				t.nic = ctx->inv.pair[t.pair].nic;
				g->run(ctx, &t);
				any = true;
			}
			break;
		}
		/* Every gate shows up in the report, if only to say why not. */
		if (!any)
			skip_no_subject(ctx, g);
	}
	ctx->gate = NULL;
}

static void paths_string(unsigned int paths, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", paths & P_DMABUF ? "dmabuf" : "",
		 paths == P_BOTH ? "," : "",
		 paths & P_PEERMEM ? "peermem" : paths ? "" : "-");
}

void gates_list(FILE *out)
{
	enum gdr_layer last = L_COUNT;

	for (size_t i = 0; i < gate_count; i++) {
		const struct gate *g = &gate_table[i];
		char paths[32];

		if (g->layer != last) {
			fprintf(out, "%s%s\n", i ? "\n" : "", layer_name(g->layer));
			last = g->layer;
		}
		paths_string(g->paths, paths, sizeof(paths));
		fprintf(out, "  %-22s %-5s %-15s %s\n", g->id,
			subject_kind_name(g->scope), paths, g->title);
	}
}
