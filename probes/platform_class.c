// SPDX-License-Identifier: MIT
/*
 * The platform class (issue 16 item 2) and the Direct-NIC ACS rule
 * (item 1): which node this is, from facts, and on GB200/GB300 Direct-NIC
 * nodes the per-port ACS masks rdma-core's rdma_topo would set.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access/sysroot.h"
#include "decode/parse.h"
#include "decode/pcie.h"
#include "probes/probes.h"
#include "core/xalloc.h"

#define PCI_DEVICES	"/sys/bus/pci/devices"

/*
 * Device kinds as rdma-core's kernel-boot/rdma_topo names them
 * (pci_device_types, rdma-core 691953d8d): the first match wins.
 */
enum dev_kind { DK_OTHER = 0, DK_GRACE_RP, DK_VERA_RP, DK_CX_NIC, DK_BF3_NIC,
		DK_CX_DMA, DK_CX_SWITCH, DK_NVGPU };

static const struct {
	unsigned int vendor, device;
	enum dev_kind kind;
} dev_ids[] = {
	{ 0x10de, 0x22b1, DK_GRACE_RP },	/* Grace PCI Root Port Bridge */
	{ 0x10de, 0x22b2, DK_GRACE_RP },
	{ 0x10de, 0x22b8, DK_GRACE_RP },
	{ 0x10de, 0x2f95, DK_VERA_RP },		/* Vera PCIe Root Port Bridge */
	{ 0x10de, 0x2f96, DK_VERA_RP },
	{ 0x15b3, 0x1021, DK_CX_NIC },		/* ConnectX-7 */
	{ 0x15b3, 0x1023, DK_CX_NIC },		/* ConnectX-8 */
	{ 0x15b3, 0x1025, DK_CX_NIC },		/* ConnectX-9 */
	{ 0x15b3, 0xa2dc, DK_BF3_NIC },		/* BlueField-3 */
	{ 0x15b3, 0x2100, DK_CX_DMA },		/* ConnectX-8 DMA Controller */
	{ 0x15b3, 0x197c, DK_CX_SWITCH },	/* USP/DSP of a CX switch */
	{ 0x15b3, 0x1979, DK_CX_SWITCH },
};

#define CX8_DEVICE	0x1023

static int read_id(struct sysroot *sr, const char *bdf, const char *attr,
		   unsigned int *v)
{
	char p[160];
	long long x;
	int ret;

	snprintf(p, sizeof(p), PCI_DEVICES "/%s/%s", bdf, attr);
	ret = sysroot_read_ll(sr, p, &x);
	if (!ret && (x < 0 || x > 0xffff))
		ret = -EINVAL;
	if (!ret)
		*v = (unsigned int)x;
	return ret;
}

static enum dev_kind node_kind(const struct gdr_ctx *ctx, size_t i,
			       unsigned int *device)
{
	const struct pcinode *n = &ctx->tree.n[i];
	unsigned int ven = 0, dev = 0;

	*device = 0;
	if (read_id(ctx->sr, n->bdf, "vendor", &ven) ||
	    read_id(ctx->sr, n->bdf, "device", &dev))
		return DK_OTHER;
	*device = dev;
	for (size_t k = 0; k < sizeof(dev_ids) / sizeof(dev_ids[0]); k++)
		if (dev_ids[k].vendor == ven && dev_ids[k].device == dev)
			return dev_ids[k].kind;
	if (ven == 0x10de && !n->class_bad && (n->class_code >> 16) == 0x03)
		return DK_NVGPU;
	return DK_OTHER;
}

/* --- the class ----------------------------------------------------------- */

static void classify_cpu(struct gdr_ctx *ctx, struct platform_class *pc)
{
	char text[16384], line[32];
	const char *v, *flags;
	ssize_t n;

	if (!sysroot_read_line(ctx->sr, "/proc/sys/kernel/arch", line,
			       sizeof(line)) && line[0]) {
		snprintf(pc->machine, sizeof(pc->machine), "%s", line);
		snprintf(pc->src_machine, sizeof(pc->src_machine),
			 "/proc/sys/kernel/arch");
	}
	/* The first CPU's lines are enough (a 16-CPU H200 VM has 26 KiB). */
	n = sysroot_read_head(ctx->sr, "/proc/cpuinfo", text, sizeof(text));
	if (n < 0)
		goto done;
	text[sizeof(text) - 1] = '\0';
	if ((v = strstr(text, "vendor_id\t: "))) {
		v += strlen("vendor_id\t: ");
		snprintf(pc->cpu, sizeof(pc->cpu), "%.*s", (int)strcspn(v, "\n"),
			 v);
		snprintf(pc->src_cpu, sizeof(pc->src_cpu), "/proc/cpuinfo");
		if (!pc->machine[0] && (!strcmp(pc->cpu, "GenuineIntel") ||
					!strcmp(pc->cpu, "AuthenticAMD"))) {
			snprintf(pc->machine, sizeof(pc->machine), "x86_64");
			snprintf(pc->src_machine, sizeof(pc->src_machine),
				 "/proc/cpuinfo vendor_id");
		}
	} else if ((v = strstr(text, "CPU implementer\t: "))) {
		const char *part = strstr(text, "CPU part\t: ");

		v += strlen("CPU implementer\t: ");
		snprintf(pc->cpu, sizeof(pc->cpu), "implementer %.*s part %.*s",
			 (int)strcspn(v, "\n"), v,
			 part ? (int)strcspn(part + 11, "\n") : 1,
			 part ? part + 11 : "?");
		snprintf(pc->src_cpu, sizeof(pc->src_cpu), "/proc/cpuinfo");
		if (!pc->machine[0]) {
			snprintf(pc->machine, sizeof(pc->machine), "aarch64");
			snprintf(pc->src_machine, sizeof(pc->src_machine),
				 "/proc/cpuinfo CPU implementer");
		}
	}
	/* x86 guests: the CPUID hypervisor bit, shown as a flag. */
	flags = strstr(text, "\nflags\t");
	if (flags) {
		char fl[4096];

		snprintf(fl, sizeof(fl), "%.*s ", (int)strcspn(flags + 1, "\n"),
			 flags + 1);
		pc->vm = strstr(fl, " hypervisor ") != NULL;
		snprintf(pc->vm_why, sizeof(pc->vm_why), "%s hypervisor flag "
			 "in /proc/cpuinfo", pc->vm ? "the" : "no");
	}
done:
	if (!strcmp(pc->machine, "x86_64"))
		pc->arch = PLAT_ARCH_X86_64;
	else if (!strcmp(pc->machine, "aarch64") || !strcmp(pc->machine, "arm64"))
		pc->arch = PLAT_ARCH_AARCH64;
	else if (pc->machine[0])
		pc->arch = PLAT_ARCH_OTHER;
}

/* DMI names of hypervisors (a guest's firmware says what it runs on). */
static void classify_dmi(struct gdr_ctx *ctx, struct platform_class *pc)
{
	static const char *const guests[] = {
		"QEMU", "KVM", "Virtual Machine", "VMware", "VirtualBox",
		"Xen", "Bochs", "bochs", "Cloud Hypervisor",
		"Google Compute Engine", "OpenStack",
	};
	static const char *const attrs[] = {
		"/sys/class/dmi/id/sys_vendor", "/sys/class/dmi/id/product_name",
	};
	char val[96];

	for (size_t a = 0; a < 2; a++) {
		if (sysroot_read_line(ctx->sr, attrs[a], val, sizeof(val)))
			continue;
		for (size_t g = 0; g < sizeof(guests) / sizeof(guests[0]); g++) {
			if (!strstr(val, guests[g]))
				continue;
			pc->vm = 1;
			snprintf(pc->vm_why, sizeof(pc->vm_why), "%s: %.60s",
				 strrchr(attrs[a], '/') + 1, val);
			return;
		}
	}
	if (!sysroot_read_line(ctx->sr, "/sys/hypervisor/type", val,
			       sizeof(val)) && val[0]) {
		pc->vm = 1;
		snprintf(pc->vm_why, sizeof(pc->vm_why),
			 "/sys/hypervisor/type: %.60s", val);
	}
}

static void classify_iommu(struct gdr_ctx *ctx, struct platform_class *pc)
{
	char **units = NULL;
	size_t n = 0;
	int ret = sysroot_list(ctx->sr, "/sys/class/iommu", &units, &n);

	if (ret == -ENOENT || (!ret && !n)) {
		pc->iommu = PLAT_IOMMU_NONE;
	} else if (!ret) {
		const char *u = units[0];

		snprintf(pc->iommu_unit, sizeof(pc->iommu_unit), "%s", u);
		/* The names each driver registers its units under. */
		pc->iommu = !strncmp(u, "dmar", 4) ? PLAT_IOMMU_INTEL :
			    !strncmp(u, "ivhd", 4) ? PLAT_IOMMU_AMD :
			    !strncmp(u, "smmu3.", 6) ? PLAT_IOMMU_SMMU_V3 :
			    !strncmp(u, "smmu.", 5) ? PLAT_IOMMU_ARM_SMMU :
			    PLAT_IOMMU_OTHER;
	}
	sysroot_free_list(units, n);
}

static int top_of(const struct gdr_ctx *ctx, int i)
{
	while (i >= 0 && ctx->tree.n[i].parent >= 0)
		i = ctx->tree.n[i].parent;
	return i;
}

static void classify_pci(struct gdr_ctx *ctx, struct platform_class *pc)
{
	for (size_t i = 0; i < ctx->tree.count; i++) {
		unsigned int dev;
		enum dev_kind k = node_kind(ctx, i, &dev);
		const char *bdf = ctx->tree.n[i].bdf;

		if ((k == DK_GRACE_RP || k == DK_VERA_RP) && !pc->grace_rp[0])
			snprintf(pc->grace_rp, sizeof(pc->grace_rp), "%s", bdf);
		pc->grace |= k == DK_GRACE_RP;
		pc->vera |= k == DK_VERA_RP;
		if (k == DK_CX_NIC && dev == CX8_DEVICE && !pc->cx8) {
			pc->cx8 = true;
			snprintf(pc->cx8_pf, sizeof(pc->cx8_pf), "%s", bdf);
		}
		if (k == DK_CX_DMA) {
			/* Its root port: the topmost bridge above it. */
			int up = top_of(ctx, ctx->tree.n[i].parent);
			enum dev_kind uk = DK_OTHER;
			unsigned int d;

			if (!pc->cx_dma)
				snprintf(pc->cx_dma_fn, sizeof(pc->cx_dma_fn),
					 "%s", bdf);
			pc->cx_dma = true;
			if (up >= 0)
				uk = node_kind(ctx, (size_t)up, &d);
			pc->direct_nic |= uk == DK_GRACE_RP || uk == DK_VERA_RP;
		}
	}
}

static const char *const iommu_names[] = {
	[PLAT_IOMMU_UNKNOWN] = "unknown", [PLAT_IOMMU_NONE] = "none",
	[PLAT_IOMMU_INTEL] = "intel-iommu (VT-d)",
	[PLAT_IOMMU_AMD] = "amd-iommu", [PLAT_IOMMU_SMMU_V3] = "arm-smmu-v3",
	[PLAT_IOMMU_ARM_SMMU] = "arm-smmu", [PLAT_IOMMU_OTHER] = "other",
};

const char *plat_iommu_name(enum plat_iommu i)
{
	return (unsigned int)i < sizeof(iommu_names) / sizeof(iommu_names[0]) ?
	       iommu_names[i] : "unknown";
}

const struct platform_class *ctx_platform(struct gdr_ctx *ctx)
{
	struct platform_class *pc = &ctx->platform;

	if (pc->known)
		return pc;
	memset(pc, 0, sizeof(*pc));
	pc->known = true;
	pc->vm = -1;
	classify_cpu(ctx, pc);
	classify_dmi(ctx, pc);
	classify_iommu(ctx, pc);
	classify_pci(ctx, pc);
	if (!sysroot_read_line(ctx->sr, "/proc/sys/kernel/osrelease",
			       pc->release, sizeof(pc->release)) &&
	    !parse_kernel_release(pc->release, &pc->kernel))
		pc->kernel_known = true;
	/* Grace root ports make it Grace even where the CPU is not read. */
	if (pc->direct_nic)
		pc->kind = PLAT_KIND_GRACE_DIRECT_NIC;
	else if (pc->grace || pc->vera)
		pc->kind = PLAT_KIND_GRACE;
	else if (pc->arch == PLAT_ARCH_X86_64)
		pc->kind = PLAT_KIND_X86;
	else if (pc->arch == PLAT_ARCH_AARCH64)
		pc->kind = PLAT_KIND_ARM64;
	else if (pc->arch == PLAT_ARCH_OTHER)
		pc->kind = PLAT_KIND_OTHER;
	switch (pc->kind) {
	case PLAT_KIND_GRACE_DIRECT_NIC:
		snprintf(pc->describe, sizeof(pc->describe),
			 "%s Direct-NIC (GB200/GB300 class: %sData Direct "
			 "function %s)", pc->vera ? "Vera" : "Grace",
			 pc->cx8 ? "ConnectX-8, " : "", pc->cx_dma_fn);
		break;
	case PLAT_KIND_GRACE:
		snprintf(pc->describe, sizeof(pc->describe), "%s (%s root "
			 "port %s)", pc->vera ? "Vera" : "Grace",
			 pc->vera ? "Vera" : "Grace", pc->grace_rp);
		break;
	case PLAT_KIND_X86:
		snprintf(pc->describe, sizeof(pc->describe), "x86_64%s%s%s%s",
			 pc->cpu[0] ? " (" : "", pc->cpu, pc->cpu[0] ? ")" : "",
			 pc->vm == 1 ? " guest" : "");
		break;
	case PLAT_KIND_ARM64:
		snprintf(pc->describe, sizeof(pc->describe), "aarch64 without "
			 "Grace root ports%s", pc->vm == 1 ? " (guest)" : "");
		break;
	case PLAT_KIND_OTHER:
		snprintf(pc->describe, sizeof(pc->describe), "%s", pc->machine);
		break;
	default:
		snprintf(pc->describe, sizeof(pc->describe),
			 "an unclassified node");
	}
	return pc;
}

void gate_platform_class(struct gdr_ctx *ctx, const struct target *t)
{
	const struct platform_class *pc = ctx_platform(ctx);
	struct result *r;

	(void)t;
	if (pc->kind == PLAT_KIND_UNKNOWN) {
		r = emit(ctx, ctx->host, ST_SKIP, C_PLATFORM_CLASS_UNKNOWN,
			 "cannot classify the node: no CPU architecture "
			 "(/proc/sys/kernel/arch, /proc/cpuinfo) and no Grace "
			 "root port on the PCI bus");
	} else {
		r = emit(ctx, ctx->host, ST_PASS, C_PLATFORM_CLASS,
			 "%s", pc->describe);
	}
	ev_str(r, "machine", "%s%s%s%s", pc->machine[0] ? pc->machine :
	       "unknown", pc->src_machine[0] ? " (" : "", pc->src_machine,
	       pc->src_machine[0] ? ")" : "");
	ev_str(r, "cpu", "%s%s%s%s", pc->cpu[0] ? pc->cpu : "unknown",
	       pc->src_cpu[0] ? " (" : "", pc->src_cpu,
	       pc->src_cpu[0] ? ")" : "");
	ev_str(r, "grace_root_port", "%s", pc->grace_rp[0] ? pc->grace_rp :
	       "none (10de:22b1/22b2/22b8, Vera 10de:2f95/2f96, in "
	       PCI_DEVICES ")");
	ev_str(r, "connectx8", "%s", pc->cx8 ? pc->cx8_pf : "none (15b3:1023)");
	ev_str(r, "data_direct_function", "%s%s", pc->cx_dma ? pc->cx_dma_fn :
	       "none (15b3:2100)", pc->cx_dma && !pc->direct_nic ?
	       " (not below a Grace/Vera root port)" : "");
	ev_str(r, "kernel", "%s", pc->release[0] ? pc->release :
	       "unknown (/proc/sys/kernel/osrelease)");
	ev_str(r, "iommu_driver", "%s%s%s%s", plat_iommu_name(pc->iommu),
	       pc->iommu_unit[0] ? " (/sys/class/iommu/" : "", pc->iommu_unit,
	       pc->iommu_unit[0] ? ")" : "");
	ev_str(r, "vm", "%s%s%s%s", pc->vm == 1 ? "yes" : pc->vm == 0 ? "no" :
	       "unknown", pc->vm_why[0] ? " (" : "", pc->vm_why,
	       pc->vm_why[0] ? ")" : "");
}

int direct_nic_dma_of(struct gdr_ctx *ctx, const char *gpu, char *out,
		      size_t len)
{
	int g = pcitree_find(&ctx->tree, gpu), top;
	unsigned int d;

	out[0] = '\0';
	if (ctx_platform(ctx)->kind != PLAT_KIND_GRACE_DIRECT_NIC || g < 0)
		return -ENOENT;
	top = top_of(ctx, g);
	for (size_t i = 0; i < ctx->tree.count; i++)
		if (top_of(ctx, (int)i) == top &&
		    node_kind(ctx, i, &d) == DK_CX_DMA) {
			snprintf(out, len, "%s", ctx->tree.n[i].bdf);
			return 0;
		}
	return -ENOENT;
}

/* --- Direct-NIC ACS (rdma_topo's DMA-based complex) --------------------- */

/*
 * rdma-core kernel-boot/rdma_topo (691953d8d; PR #1644, layout and masks
 * unchanged by #1725 for DMA-based topologies), NVCX_DMA_Complex:
 *
 *   Grace RP -> CX switch USP -> DSP -> CX DMA function (15b3:2100)
 *                             -> DSP1 -> USP2 -> DSP2 -> GPU
 *
 *   DSP toward the DMA function  xx110x1 (UF, CR, SV on; RR off)
 *   DSP1 toward the GPU          xx101x1 (UF, RR, SV on; CR off)
 *   the root port                xx111x0 (SV off: one iommu_group)
 *   every other CX switch port or Grace/Vera root port with ACS: the
 *   kernel default, xx111x1 (Vera xx101x1: kernel_acs_isolated)
 *
 * write-grub-acs writes the ports whose mask differs from the kernel
 * default, sorted by address: pci=config_acs="<mask>@<bdf>;...". check
 * compares each mask bit ('1' set, '0' clear, 'x' any) with the ACS
 * control register. rdma_topo also pairs the DMA function with its PF by
 * VPD V3; that does not change a mask and is not repeated here.
 */
struct acs_want {
	int node;
	const char *role;
	const char *mask;	/* bit 6 first */
	bool in_line;		/* differs from the kernel default */
};

static const char *kernel_default(enum dev_kind k)
{
	return k == DK_VERA_RP ? "xx101x1" : "xx111x1";
}

static bool mask_holds(const char *mask, unsigned int ctl)
{
	for (int b = 0; b < 7; b++) {
		char m = mask[6 - b];

		if ((m == '1' && !(ctl & (1u << b))) ||
		    (m == '0' && (ctl & (1u << b))))
			return false;
	}
	return true;
}

static int parent_of(const struct gdr_ctx *ctx, const enum dev_kind *kind,
		     int i, enum dev_kind want)
{
	int p = i >= 0 ? ctx->tree.n[i].parent : -1;

	return p >= 0 && kind[p] == want ? p : -1;
}

static bool below(const struct gdr_ctx *ctx, int i, int top)
{
	for (int p = ctx->tree.n[i].parent; p >= 0; p = ctx->tree.n[p].parent)
		if (p == top)
			return true;
	return false;
}

static bool has_acs(const struct gdr_ctx *ctx, int i)
{
	return !ctx->cfg[i].acs_unreadable[0] && ctx->cfg[i].acs.present;
}

/*
 * One DMA-based complex from its DMA function: the three ports and masks
 * rdma_topo sets, or a reason the layout is not the one it knows.
 */
static int dma_complex(const struct gdr_ctx *ctx, const enum dev_kind *kind,
		       int dma, struct acs_want *w, size_t *nw, char *why,
		       size_t wlen)
{
	int dsp = parent_of(ctx, kind, dma, DK_CX_SWITCH);
	int usp = parent_of(ctx, kind, dsp, DK_CX_SWITCH);
	int rp = parent_of(ctx, kind, usp, DK_GRACE_RP);
	int gpu = -1, ngpu = 0, dsp2, usp2, dsp1, members = 0;

	if (rp < 0 || ctx->tree.n[rp].parent >= 0) {
		snprintf(why, wlen, "%s is not below CX switch DSP, CX switch "
			 "USP and a Grace root port", ctx->tree.n[dma].bdf);
		return -1;
	}
	for (size_t i = 0; i < ctx->tree.count; i++) {
		if (!below(ctx, (int)i, rp))
			continue;
		members++;
		if (kind[i] == DK_NVGPU) {
			gpu = (int)i;
			ngpu++;
		}
	}
	if (ngpu != 1) {
		snprintf(why, wlen, "%d GPUs below root port %s (one expected)",
			 ngpu, ctx->tree.n[rp].bdf);
		return -1;
	}
	dsp2 = parent_of(ctx, kind, gpu, DK_CX_SWITCH);
	usp2 = parent_of(ctx, kind, dsp2, DK_CX_SWITCH);
	dsp1 = parent_of(ctx, kind, usp2, DK_CX_SWITCH);
	if (dsp1 < 0 || ctx->tree.n[dsp1].parent != usp) {
		snprintf(why, wlen, "GPU %s is not behind two CX switch levels "
			 "below %s", ctx->tree.n[gpu].bdf, ctx->tree.n[usp].bdf);
		return -1;
	}
	if (members != 7) {
		snprintf(why, wlen, "%d functions below root port %s (rdma_topo "
			 "expects exactly 7)", members, ctx->tree.n[rp].bdf);
		return -1;
	}
	/* rdma_topo asserts the ACS capability of the three (has_acs). */
	for (int k = 0; k < 3; k++) {
		int x = k == 0 ? dsp : k == 1 ? dsp1 : rp;

		if (ctx->cfg[x].acs_unreadable[0] || ctx->cfg[x].acs.present)
			continue;
		snprintf(why, wlen, "%s has no ACS capability",
			 ctx->tree.n[x].bdf);
		return -1;
	}
	w[(*nw)++] = (struct acs_want){ dsp, "CX switch port toward the Data "
					"Direct function", "xx110x1", true };
	w[(*nw)++] = (struct acs_want){ dsp1, "CX switch port toward the GPU",
					"xx101x1", true };
	w[(*nw)++] = (struct acs_want){ rp, "Grace root port", "xx111x0",
					true };
	return 0;
}

/* Does the command line's pci=...config_acs= hold "mask@bdf"? */
static bool cmdline_has(const char *acs, const char *mask, const char *bdf)
{
	char entry[64];
	size_t el;
	const char *p = acs;

	el = (size_t)snprintf(entry, sizeof(entry), "%s@%s", mask, bdf);
	while ((p = strstr(p, entry))) {
		char before = p == acs ? ';' : p[-1];
		char after = p[el];

		if ((before == ';' || before == '"' || before == '=') &&
		    (after == ';' || after == '"' || after == '\0' ||
		     after == ' ' || after == ','))
			return true;
		p++;
	}
	return false;
}

/*
 * Every other CX switch port and Grace/Vera root port with ACS, after the
 * nw ports of the Data Direct complexes; returns the new count.
 */
static size_t other_acs_ports(const struct gdr_ctx *ctx,
			      const enum dev_kind *kind, struct acs_want *w,
			      size_t nw)
{
	for (size_t i = 0; i < ctx->tree.count; i++) {
		enum dev_kind k = kind[i];
		bool taken = false;

		if (k != DK_CX_SWITCH && k != DK_GRACE_RP && k != DK_VERA_RP)
			continue;
		for (size_t j = 0; j < nw; j++)
			taken |= w[j].node == (int)i;
		if (taken || (!has_acs(ctx, (int)i) &&
			      !ctx->cfg[i].acs_unreadable[0]))
			continue;
		w[nw++] = (struct acs_want){ (int)i, k == DK_CX_SWITCH ?
			"CX switch port" : k == DK_VERA_RP ? "Vera root port" :
			"Grace root port",
			kernel_default(k), false };
	}
	return nw;
}

/* The kernel's line lists ports in address order (rdma_topo sorts). */
static void sort_by_bdf(const struct gdr_ctx *ctx, struct acs_want *w,
			size_t nw)
{
	for (size_t i = 0; i < nw; i++)
		for (size_t j = i + 1; j < nw; j++)
			if (strcmp(ctx->tree.n[w[j].node].bdf,
				   ctx->tree.n[w[i].node].bdf) < 0) {
				struct acs_want tmp = w[i];

				w[i] = w[j];
				w[j] = tmp;
			}
}

/* Each port's ACS control against the mask rdma_topo wants there. */
static void port_evidence(const struct gdr_ctx *ctx, struct result *r,
			  const struct acs_want *w, size_t nw)
{
	char key[64];

	for (size_t i = 0; i < nw; i++) {
		const struct pci_cfg *c = &ctx->cfg[w[i].node];
		char bits[8];

		snprintf(key, sizeof(key), "acs_%s", ctx->tree.n[w[i].node].bdf);
		if (c->acs_unreadable[0]) {
			ev_str(r, key, "%s: want %s, unreadable: %s", w[i].role,
			       w[i].mask, c->acs_unreadable);
			continue;
		}
		for (int b = 0; b < 7; b++)
			bits[b] = c->acs.ctrl & (1u << (6 - b)) ? '1' : '0';
		bits[7] = '\0';
		ev_str(r, key, "%s: ctl 0x%04x (%s), want %s: %s", w[i].role,
		       c->acs.ctrl, bits, w[i].mask,
		       mask_holds(w[i].mask, c->acs.ctrl) ? "ok" : "differs");
	}
}

void gate_platform_direct_acs(struct gdr_ctx *ctx, const struct target *t)
{
	const struct platform_class *pc = ctx_platform(ctx);
	struct acs_want *w = NULL;
	char why[160] = "", line[1024] = "", cmd[4096] = "", bad[256] = "";
	const char *acs = NULL;
	enum dev_kind *kind = NULL;
	size_t nw = 0, used = 0, bused = 0;
	int wrong = 0, unreadable = 0, header = 0, in_cmd = 0, nline = 0;
	unsigned int d;
	struct result *r;

	(void)t;
	if (pc->kind != PLAT_KIND_GRACE_DIRECT_NIC) {
		emit(ctx, ctx->host, ST_SKIP, C_DIRECT_ACS_NOT_APPLICABLE,
		     "not a Direct-NIC platform: the per-port ACS masks of "
		     "rdma_topo do not apply to %s", pc->describe);
		return;
	}
	/* Each function is at most one port: the tree bounds the list. */
	kind = xcalloc(ctx->tree.count + 1, sizeof(*kind));
	w = xcalloc(ctx->tree.count + 1, sizeof(*w));
	for (size_t i = 0; i < ctx->tree.count; i++)
		kind[i] = node_kind(ctx, i, &d);
	/* The complexes, in tree order. */
	for (size_t i = 0; i < ctx->tree.count; i++) {
		if (kind[i] != DK_CX_DMA)
			continue;
		if (dma_complex(ctx, kind, (int)i, w, &nw, why, sizeof(why)))
			break;
	}
	if (why[0]) {
		r = emit(ctx, ctx->host, ST_SKIP, C_DIRECT_ACS_LAYOUT_UNKNOWN,
			 "Direct-NIC layout not the one rdma_topo knows: %s",
			 why);
		remedy_DIRECT_ACS_LAYOUT_UNKNOWN(r);
		goto out;
	}
	nw = other_acs_ports(ctx, kind, w, nw);
	if (!sysroot_read_line(ctx->sr, "/proc/cmdline", cmd, sizeof(cmd)))
		acs = strstr(cmd, "config_acs=");
	sort_by_bdf(ctx, w, nw);
	for (size_t i = 0; i < nw; i++) {
		const struct pci_cfg *c = &ctx->cfg[w[i].node];
		const char *bdf = ctx->tree.n[w[i].node].bdf;

		if (w[i].in_line) {
			nline++;
			if (used < sizeof(line))
				used += (size_t)snprintf(line + used,
					sizeof(line) - used, "%s%s@%s",
					used ? ";" : "", w[i].mask, bdf);
			in_cmd += acs && cmdline_has(acs, w[i].mask, bdf);
		}
		if (c->acs_unreadable[0]) {
			unreadable++;
			header += c->len == 64;
		} else if (c->acs.present && !mask_holds(w[i].mask, c->acs.ctrl)) {
			wrong++;
			if (bused < sizeof(bad))
				bused += (size_t)snprintf(bad + bused,
					sizeof(bad) - bused, "%s%s", bused ?
					", " : "", bdf);
		}
	}
	if (unreadable && header == unreadable) {
		r = emit(ctx, ctx->host, ST_SKIP, C_DIRECT_ACS_NEEDS_ROOT,
			 "ACS of %d Direct-NIC port(s) unreadable: only the "
			 "64-byte header is visible; needs root", unreadable);
		remedy_DIRECT_ACS_NEEDS_ROOT(r);
	} else if (unreadable) {
		r = emit(ctx, ctx->host, ST_ERROR, C_DIRECT_ACS_UNREADABLE,
			 "cannot decode ACS of %d Direct-NIC port(s)",
			 unreadable);
	} else if (wrong && in_cmd == nline) {
		r = emit(ctx, ctx->host, ST_WARN, C_DIRECT_ACS_NOT_APPLIED,
			 "the command line sets rdma_topo's ACS masks, but %d "
			 "port(s) differ (%s): the kernel did not apply "
			 "pci=config_acs=", wrong, bad);
		remedy_DIRECT_ACS_NOT_APPLIED(r);
	} else if (wrong) {
		r = emit(ctx, ctx->host, ST_WARN, C_DIRECT_ACS_WRONG,
			 "ACS of %d Direct-NIC port(s) differs from the masks "
			 "rdma_topo sets (%s): GPU-NIC DMA through the Data "
			 "Direct function is refused or slow", wrong, bad);
		remedy_DIRECT_ACS_WRONG(r, line);
	} else {
		r = emit(ctx, ctx->host, ST_PASS, C_DIRECT_ACS_OK,
			 "ACS of %zu Direct-NIC port(s) matches the masks "
			 "rdma_topo sets%s", nw, in_cmd == nline ?
			 " (configured on the command line)" : "");
	}
	ev_str(r, "platform", "%s", pc->describe);
	port_evidence(ctx, r, w, nw);
	ev_str(r, "config_acs_line", "pci=config_acs=\"%s\"", line);
	if (pc->kernel_known && kver_cmp(&pc->kernel, 6, 11) < 0)
		ev_str(r, "config_acs_kernel", "%s: before 6.11, which added "
		       "pci=config_acs= (upgrade first, or rdma_topo setpci-acs "
		       "with NVreg_GrdmaPciTopoCheckOverride=1)", pc->release);
	ev_str(r, "cmdline_config_acs", "%s", !acs ? "absent" :
	       in_cmd == nline ? "holds every mask above" :
	       "present, without rdma_topo's masks");
out:
	free(w);
	free(kind);
}
