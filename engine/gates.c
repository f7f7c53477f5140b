// SPDX-License-Identifier: MIT
/* The ordered gate chain: layers in the design's order, gates in each. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "access/symtab.h"
#include "engine/gates.h"
#include "probes/probes.h"

#define GATE(i, l, s, p, t, fn) { .id = i, .layer = l, .scope = s, \
	.paths = p, .title = t, .run = fn }

const struct gate gate_table[] = {
	GATE("host.kernel", L_HOST, SCOPE_HOST, P_DMABUF,
	     "kernel release allows RDMA dma-buf import (>= 5.12)",
	     gate_host_kernel),
	GATE("host.memlock", L_HOST, SCOPE_HOST, P_BOTH,
	     "RLIMIT_MEMLOCK for host-memory registrations",
	     gate_host_memlock),
	GATE("host.privileges", L_HOST, SCOPE_HOST, P_NONE,
	     "effective uid and capabilities (what can be read)",
	     gate_host_privileges),
	GATE("host.container", L_HOST, SCOPE_HOST, P_NONE,
	     "container runtime hints and device nodes",
	     gate_host_container),

	GATE("gpu.driver", L_GPU, SCOPE_HOST, P_BOTH,
	     "NVIDIA kernel driver loaded (/proc/driver/nvidia/version)",
	     gate_gpu_driver),
	GATE("gpu.libcuda", L_GPU, SCOPE_HOST, P_BOTH,
	     "libcuda.so.1 loads with the required symbols",
	     gate_gpu_libcuda),
	GATE("gpu.cuinit", L_GPU, SCOPE_HOST, P_BOTH,
	     "cuInit succeeds; driver version",
	     gate_gpu_cuinit),
	GATE("gpu.devices", L_GPU, SCOPE_HOST, P_BOTH,
	     "CUDA enumerates the NVIDIA GPUs on the PCI bus",
	     gate_gpu_devices),
	GATE("gpu.visible", L_GPU, SCOPE_GPU, P_BOTH,
	     "GPU is visible to CUDA (name, bus id, compute capability)",
	     gate_gpu_visible),
	GATE("gpu.gdr_attr", L_GPU, SCOPE_GPU, P_BOTH,
	     "CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED, flush and ordering",
	     gate_gpu_gdr_attr),
	GATE("gpu.dmabuf_attr", L_GPU, SCOPE_GPU, P_DMABUF,
	     "CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED and driver >= 11.7",
	     gate_gpu_dmabuf_attr),

	GATE("nic.libibverbs", L_NIC, SCOPE_HOST, P_BOTH,
	     "libibverbs.so.1 loads; optional symbols by version node",
	     gate_nic_libibverbs),
	GATE("nic.kernel_verbs", L_NIC, SCOPE_HOST, P_BOTH,
	     "kernel user verbs present (infiniband_verbs/abi_version)",
	     gate_nic_kernel_verbs),
	GATE("nic.devices", L_NIC, SCOPE_HOST, P_BOTH,
	     "RDMA devices in /sys/class/infiniband",
	     gate_nic_devices),
	GATE("nic.uverbs", L_NIC, SCOPE_NIC, P_BOTH,
	     "uverbs device node present and opens through libibverbs",
	     gate_nic_uverbs),
	GATE("nic.port", L_NIC, SCOPE_PORT, P_BOTH,
	     "port ACTIVE; physical state, link layer, rate",
	     gate_nic_port),
	GATE("nic.gid", L_NIC, SCOPE_PORT, P_BOTH,
	     "usable RoCE v2 GID on Ethernet ports",
	     gate_nic_gid),

	GATE("mech.peermem", L_MECHANISM, SCOPE_HOST, P_PEERMEM,
	     "GPU peer-memory client (nvidia_peermem) for ibv_reg_mr on GPU memory",
	     gate_mech_peermem),
	GATE("mech.dmabuf_module", L_MECHANISM, SCOPE_HOST, P_DMABUF,
	     "open NVIDIA kernel module (DMA-BUF export)",
	     gate_mech_dmabuf_module),
	GATE("mech.dmabuf_verbs", L_MECHANISM, SCOPE_HOST, P_DMABUF,
	     "libibverbs exports ibv_reg_dmabuf_mr@IBVERBS_1.12",
	     gate_mech_dmabuf_verbs),
	GATE("mech.dmabuf_provider", L_MECHANISM, SCOPE_NIC, P_DMABUF,
	     "provider probe ibv_reg_dmabuf_mr(fd=-1): EBADF means supported",
	     gate_mech_dmabuf_provider),
	GATE("mech.dmabuf_export", L_MECHANISM, SCOPE_GPU, P_DMABUF,
	     "CUDA exports cuMemAlloc memory as a dma-buf (fdinfo checked)",
	     gate_mech_dmabuf_export),
	GATE("mech.gdrcopy", L_MECHANISM, SCOPE_HOST, P_NONE,
	     "GDRCopy (gdrdrv, libgdrapi): informational, not needed for GDR",
	     gate_mech_gdrcopy),

	GATE("topo.tree", L_TOPOLOGY, SCOPE_HOST, P_NONE,
	     "PCIe tree from sysfs: functions, bridges, host bridges, NUMA",
	     gate_topo_tree),
	GATE("topo.path", L_TOPOLOGY, SCOPE_PAIR, P_NONE,
	     "GPU-NIC PCIe path: bridges, nvidia-smi class, NCCL path type",
	     gate_topo_path),
	GATE("topo.nccl", L_TOPOLOGY, SCOPE_PAIR, P_BOTH,
	     "what NCCL decides for the pair (NCCL_NET_GDR_LEVEL, GDR read)",
	     gate_topo_nccl),
	GATE("topo.best_nic", L_TOPOLOGY, SCOPE_GPU, P_NONE,
	     "nearest RDMA device per GPU",
	     gate_topo_best_nic),

	GATE("platform.bar1", L_PLATFORM, SCOPE_GPU, P_BOTH,
	     "BAR1 size against GPU memory (what GDR can pin at once)",
	     gate_platform_bar1),
	GATE("platform.iommu", L_PLATFORM, SCOPE_HOST, P_BOTH,
	     "IOMMU presence and the GPU's and NIC's group domain types",
	     gate_platform_iommu),
	GATE("platform.acs", L_PLATFORM, SCOPE_PAIR, P_BOTH,
	     "ACS control of every bridge on the GPU-NIC path (config space)",
	     gate_platform_acs),
	GATE("platform.link", L_PLATFORM, SCOPE_PAIR, P_NONE,
	     "PCIe link width/speed of GPU, NIC and bridges on the path",
	     gate_platform_link),
};

const size_t gate_count = sizeof(gate_table) / sizeof(gate_table[0]);

struct result *emit(struct gdr_ctx *ctx, int subject, enum gdr_status st,
		    const char *code, const char *fmt, ...)
{
	const struct gate *g = ctx->gate;
	struct result *r;
	char *reason = NULL;
	double now = now_ms();
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&reason, fmt, ap) < 0)
		reason = NULL;
	va_end(ap);
	r = report_add(ctx->rep, g->id, g->layer, g->paths, subject, st, code,
		       "%s", reason ? reason : "(out of memory)");
	free(reason);
	r->duration_ms = now - ctx->mark_ms;
	ctx->mark_ms = now;
	return r;
}

static const char *const scope_names[] = {
	[SCOPE_HOST] = "host", [SCOPE_GPU] = "gpu", [SCOPE_NIC] = "nic",
	[SCOPE_PORT] = "port", [SCOPE_PAIR] = "pair",
};

static void skip_no_subject(struct gdr_ctx *ctx, const struct gate *g)
{
	emit(ctx, ctx->host, ST_SKIP, "NO_SUBJECT",
	     "no %s to check", g->scope == SCOPE_GPU ? "GPU" :
	     g->scope == SCOPE_NIC ? "RDMA device" :
	     g->scope == SCOPE_PAIR ? "GPU x RDMA device pair" : "RDMA port");
}

void gates_run(struct gdr_ctx *ctx)
{
	for (size_t i = 0; i < gate_count; i++) {
		const struct gate *g = &gate_table[i];
		struct target t = { -1, -1, -1, -1 };
		bool any = false;

		ctx->gate = g;
		ctx->mark_ms = now_ms();
		switch (g->scope) {
		case SCOPE_HOST:
			g->run(ctx, &t);
			any = true;
			break;
		case SCOPE_GPU:
			for (t.gpu = 0; t.gpu < (int)ctx->inv.ngpu; t.gpu++) {
				g->run(ctx, &t);
				any = true;
			}
			break;
		case SCOPE_NIC:
			for (t.nic = 0; t.nic < (int)ctx->inv.nnic; t.nic++) {
				g->run(ctx, &t);
				any = true;
			}
			break;
		case SCOPE_PORT:
			for (t.nic = 0; t.nic < (int)ctx->inv.nnic; t.nic++)
				for (t.port = 0;
				     t.port < (int)ctx->inv.nic[t.nic].nports;
				     t.port++) {
					g->run(ctx, &t);
					any = true;
				}
			break;
		case SCOPE_PAIR:
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
			scope_names[g->scope], paths, g->title);
	}
}
