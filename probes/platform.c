// SPDX-License-Identifier: MIT
/* Layer 5: the platform. This file: BAR1, the window GDR pins through. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "access/sysroot.h"
#include "probes/parse.h"
#include "probes/probes.h"

/* NVIDIA's BAR1 is the GPU's second memory BAR (see pci_nth_mem_bar). */
#define BAR1_ORDINAL 1

void gate_platform_bar1(struct gdr_ctx *ctx, const struct target *t)
{
	const struct inv_gpu *ig = &ctx->inv.gpu[t->gpu];
	const struct cuda_gpu *g = ctx_cuda_gpu(ctx, t->gpu);
	unsigned long long start, end, size;
	char path[128], text[4096], bar[32], mem[32];
	struct result *r;
	ssize_t n;
	int reg, ret;

	if (!ig->in_sysfs) {
		emit(ctx, ig->subject, ST_SKIP, "NOT_IN_SYSFS",
		     "GPU %s not found under /sys/bus/pci/devices", ig->pci);
		return;
	}
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource", ig->pci);
	n = sysroot_read(path, text, sizeof(text));
	if (n < 0) {
		emit(ctx, ig->subject, ST_ERROR, "BAR1_UNREADABLE",
		     "cannot read %s: %s", path, strerror((int)-n));
		return;
	}
	ret = pci_nth_mem_bar(text, BAR1_ORDINAL, &reg, &start, &end);
	if (ret) {
		emit(ctx, ig->subject, ST_ERROR, ret == -ENOENT ?
		     "BAR1_MISSING" : "BAR1_MALFORMED", "%s: %s", path,
		     ret == -ENOENT ? "fewer than two memory BARs" :
		     "malformed line");
		return;
	}
	size = end - start + 1;
	format_bytes(size, bar, sizeof(bar));
	if (!g || !g->total_mem) {
		r = emit(ctx, ig->subject, ST_SKIP, "GPU_MEMORY_UNKNOWN",
			 "BAR1 is %s; GPU memory size unknown (CUDA unavailable)",
			 bar);
	} else {
		format_bytes(g->total_mem, mem, sizeof(mem));
		if (size >= g->total_mem) {
			r = emit(ctx, ig->subject, ST_PASS, "BAR1_COVERS_MEMORY",
				 "BAR1 %s covers all %s of GPU memory", bar, mem);
		} else {
			r = emit(ctx, ig->subject, ST_WARN, "BAR1_SMALL",
				 "BAR1 %s < %s of GPU memory: at most that much "
				 "can be pinned for GDR at once", bar, mem);
			result_remedy(r, "enable large/resizable BAR (BIOS: Above "
				      "4G Decoding, Resizable BAR) or keep "
				      "registered GPU buffers below BAR1");
		}
		ev_int(r, "total_mem_bytes", (long long)g->total_mem);
	}
	ev_int(r, "bar1_bytes", (long long)size);
	ev_str(r, "bar1_start", "0x%llx", start);
	ev_int(r, "bar1_register", reg);
}
