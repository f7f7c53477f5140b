// SPDX-License-Identifier: MIT
/* Layer 5: the platform — BAR1, IOMMU, ACS on the path, link health. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access/pci.h"
#include "decode/pcie.h"

#include "access/sysroot.h"
#include "decode/parse.h"
#include "probes/probes.h"
#include "core/xalloc.h"

/* NVIDIA's BAR1 is the GPU's second memory BAR (see pci_nth_mem_bar). */
#define BAR1_ORDINAL 1

/* Line n of a resource file (for evidence; the parser has vetted n). */
static const char *resource_line(const char *text, int n)
{
	while (n-- > 0 && strchr(text, '\n'))
		text = strchr(text, '\n') + 1;
	return text;
}

static int resource_line_len(const char *text, int n)
{
	const char *l = resource_line(text, n);

	return (int)strcspn(l, "\n") < 200 ? (int)strcspn(l, "\n") : 200;
}

/*
 * A byte count as JSON's signed integer: a BAR spanning 2^63 or more
 * (a corrupt resource file) saturates and says so, never negative.
 */
static void ev_bytes(struct result *r, const char *key, unsigned long long v)
{
	char sat[64];

	ev_int(r, key, v > LLONG_MAX ? LLONG_MAX : (long long)v);
	if (v > LLONG_MAX) {
		snprintf(sat, sizeof(sat), "%s_saturated", key);
		ev_bool(r, sat, true);
	}
}

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
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s", ig->pci);
		emit(ctx, ig->subject, ST_SKIP, C_NOT_IN_SYSFS,
		     "%s is %s: BAR1 unknown", ig->pci,
		     sysroot_exists(ctx->sr, path) ? "in sysfs but not an NVIDIA "
		     "display/3D function" : "not under /sys/bus/pci/devices");
		return;
	}
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource", ig->pci);
	n = sysroot_read(ctx->sr, path, text, sizeof(text));
	if (n < 0) {
		emit(ctx, ig->subject, ST_ERROR, C_BAR1_UNREADABLE,
		     "cannot read %s: %s", path, sysroot_strerror((int)-n));
		return;
	}
	ret = pci_nth_mem_bar(text, BAR1_ORDINAL, &reg, &start, &end);
	if (ret == -ERANGE) {
		r = emit(ctx, ig->subject, ST_ERROR, C_BAR1_VALUE_OUT_OF_RANGE,
			 "%s line %d: a value or span that does not fit in 64 "
			 "bits", path, reg + 1);
		ev_str(r, "path", "%s", path);
		ev_str(r, "line", "%.*s", resource_line_len(text, reg),
		       resource_line(text, reg));
		return;
	}
	if (ret) {
		emit(ctx, ig->subject, ST_ERROR, ret == -ENOENT ?
		     C_BAR1_MISSING : C_BAR1_MALFORMED, "%s: %s", path,
		     ret == -ENOENT ? "fewer than two memory BARs" :
		     "malformed line");
		return;
	}
	size = end - start + 1;
	format_bytes(size, bar, sizeof(bar));
	if (!g || !g->total_mem) {
		r = emit(ctx, ig->subject, ST_SKIP, C_GPU_MEMORY_UNKNOWN,
			 "BAR1 is %s; GPU memory size unknown (%s%s%s)", bar,
			 g && g->enum_call.called ? g->enum_fn : "CUDA unavailable",
			 g && g->enum_call.called ? " failed: " : "",
			 g && g->enum_call.called ? g->enum_call.name : "");
	} else {
		format_bytes(g->total_mem, mem, sizeof(mem));
		if (size >= g->total_mem) {
			r = emit(ctx, ig->subject, ST_PASS, C_BAR1_COVERS_MEMORY,
				 "BAR1 %s covers all %s of GPU memory", bar, mem);
		} else {
			r = emit(ctx, ig->subject, ST_WARN, C_BAR1_SMALL,
				 "BAR1 %s < %s of GPU memory: at most that much "
				 "can be pinned for GDR at once", bar, mem);
			remedy_BAR1_SMALL(r);
		}
		ev_bytes(r, "total_mem_bytes", g->total_mem);
	}
	ev_bytes(r, "bar1_bytes", size);
	ev_str(r, "bar1_start", "0x%llx", start);
	ev_int(r, "bar1_register", reg);
}

/* --- IOMMU ------------------------------------------------------------ */

/* The IOMMU group type of a function: "identity", "DMA", "DMA-FQ", ... */
static int iommu_group(struct sysroot *sr, const char *bdf, char *group,
		       size_t glen, char *type, size_t tlen)
{
	char p[256];
	int ret;

	snprintf(p, sizeof(p), "/sys/bus/pci/devices/%s/iommu_group", bdf);
	ret = sysroot_link_name(sr, p, group, glen);
	if (ret)
		return ret;
	/* A link that names a group but does not lead to one (a loop). */
	ret = sysroot_access(sr, p);
	if (ret)
		return ret;
	snprintf(p, sizeof(p), "/sys/kernel/iommu_groups/%s/type", group);
	ret = sysroot_read_line(sr, p, type, tlen);
	/* A type we cannot read is not a type we know ("unknown"). */
	if (ret && path_state_of(ret) == PATH_UNREADABLE)
		return ret;
	if (ret)
		snprintf(type, tlen, "unknown");
	return 0;
}

static bool translating(const char *type)
{
	return !strncmp(type, "DMA", 3);
}

/* Does the IOMMU translate DMA of the GPU or the NIC of a pair? */
static bool pair_translated(const struct gdr_ctx *ctx, const struct inv_pair *p)
{
	char g[32], type[32];

	if (!iommu_group(ctx->sr, ctx->inv.gpu[p->gpu].pci, g, sizeof(g), type,
			 sizeof(type)) && translating(type))
		return true;
	return ctx->inv.nic[p->nic].pci[0] &&
	       !iommu_group(ctx->sr, ctx->inv.nic[p->nic].pci, g, sizeof(g), type,
			    sizeof(type)) && translating(type);
}

static void cmdline_iommu(struct sysroot *sr, char *out, size_t len)
{
	char line[4096];
	size_t used = 0;

	out[0] = '\0';
	if (sysroot_read_line(sr, "/proc/cmdline", line, sizeof(line)))
		return;
	for (char *tok = strtok(line, " "); tok; tok = strtok(NULL, " "))
		if ((strstr(tok, "iommu") || strstr(tok, "dmar")) && used < len)
			used += (size_t)snprintf(out + used, len - used, "%s%s",
						 used ? " " : "", tok);
}

void gate_platform_iommu(struct gdr_ctx *ctx, const struct target *t)
{
	char **units = NULL, cmd[256], key[96], group[32], type[32];
	size_t nunits = 0, translated = 0, grouped = 0, unreadable = 0;
	size_t untyped = 0;
	const char *first_bad = NULL, *first_untyped = NULL;
	struct result *r = NULL;
	int ret = sysroot_list(ctx->sr, "/sys/class/iommu", &units, &nunits), bad_err = 0;

	cmdline_iommu(ctx->sr, cmd, sizeof(cmd));
	if (ret && ret != -ENOENT) {
		emit(ctx, ctx->host, ST_ERROR, C_IOMMU_UNREADABLE,
		     "cannot list /sys/class/iommu: %s", strerror(-ret));
		return;
	}
	/* Count first, then record: the evidence goes on the final result. */
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1 && unreadable && !translated) {
			/* The one we cannot see may be translated. */
			r = emit(ctx, ctx->host, ST_ERROR, C_IOMMU_UNREADABLE,
				 "cannot tell the IOMMU domain of %s: %s",
				 first_bad, strerror(-bad_err));
			ev_int(r, "errno", -bad_err);
			ev_int(r, "functions_unreadable", (long long)unreadable);
			break;
		}
		if (pass == 1 && untyped && !translated) {
			/* No type file: neither identity nor translated. */
			r = emit(ctx, ctx->host, ST_ERROR, C_IOMMU_TYPE_UNKNOWN,
				 "%s is in an IOMMU group of unknown type: "
				 "translated or pass-through cannot be told",
				 first_untyped);
			ev_int(r, "functions_untyped", (long long)untyped);
			break;
		}
		if (pass == 1) {
			if (!nunits && !grouped) {
				r = emit(ctx, ctx->host, ST_PASS, C_NO_IOMMU,
					 "no IOMMU active: peer DMA is not "
					 "translated");
			} else if (translated && ctx_platform(ctx)->kind ==
				   PLAT_KIND_GRACE_DIRECT_NIC) {
				/*
				 * rdma_topo's masks are made for translating
				 * domains: SV off on the root port puts the
				 * Data Direct function and the GPU in one
				 * iommu_group, the redirect kept on the GPU's
				 * port sends the rest to the SMMU
				 * (NVCX_DMA_Complex.compute_acs).
				 */
				r = emit(ctx, ctx->host, ST_PASS,
					 C_IOMMU_TRANSLATING_DIRECT_NIC,
					 "IOMMU translates DMA of %zu GPU/NIC "
					 "function(s): the state %s is set up for "
					 "(ACS per port, platform.direct_acs)",
					 translated, ctx_platform(ctx)->describe);
			} else if (translated) {
				r = emit(ctx, ctx->host, ST_WARN,
					 C_IOMMU_TRANSLATING,
					 "IOMMU translates DMA of %zu GPU/NIC "
					 "function(s): peer-to-peer needs ACS "
					 "redirect off or ATS, else it faults or "
					 "detours", translated);
				/* The x86 advice is inverted on Grace. */
				if (ctx_platform(ctx)->iommu ==
				    PLAT_IOMMU_SMMU_V3)
					remedy_IOMMU_TRANSLATING_SMMU(r);
				else
					remedy_IOMMU_TRANSLATING(r);
			} else {
				r = emit(ctx, ctx->host, ST_PASS,
					 C_IOMMU_PASSTHROUGH,
					 "IOMMU on, GPU and NIC in identity "
					 "(pass-through) domains");
			}
			ev_int(r, "iommu_units", (long long)nunits);
			ev_str(r, "iommu_driver", "%s",
			       plat_iommu_name(ctx_platform(ctx)->iommu));
			ev_str(r, "cmdline", "%s", cmd[0] ? cmd : "none");
		}
		for (size_t i = 0; i < ctx->inv.ngpu + ctx->inv.nnic; i++) {
			bool gpu = i < ctx->inv.ngpu;
			const char *bdf = gpu ? ctx->inv.gpu[i].pci :
				ctx->inv.nic[i - ctx->inv.ngpu].pci;
			int subj = gpu ? ctx->inv.gpu[i].subject :
				ctx->inv.nic[i - ctx->inv.ngpu].subject;

			if (!bdf[0])
				continue;
			ret = iommu_group(ctx->sr, bdf, group, sizeof(group), type,
					  sizeof(type));
			if (ret && pass == 0 &&
			    path_state_of(ret) == PATH_UNREADABLE &&
			    !unreadable++) {
				first_bad = bdf;
				bad_err = ret;
			}
			if (ret)
				continue;
			if (pass == 0) {
				grouped++;
				translated += translating(type);
				if (!strcmp(type, "unknown") && !untyped++)
					first_untyped = bdf;
				continue;
			}
			snprintf(key, sizeof(key), "group_%s",
				 ctx->rep->subj[subj].id);
			ev_str(r, key, "%s (%s)", group, type);
		}
	}
	sysroot_free_list(units, nunits);
}

/* --- ACS on the GPU-NIC path -------------------------------------------- */

/* On a Grace Direct-NIC node the x86 ACS rule is not this gate's to apply. */
static void acs_not_applicable(struct gdr_ctx *ctx, const struct inv_pair *pr)
{
	const struct result *da;
	struct result *r;

	/*
	 * rdma_topo keeps P2P Request Redirect on the GPU's switch
	 * port and the root port on purpose: the x86 rule "redirect
	 * off" is wrong advice here.
	 */
	r = emit(ctx, pr->subject, ST_SKIP, C_ACS_RULE_NOT_APPLICABLE,
		 "the ACS-redirect-off rule does not apply to %s: ACS "
		 "is set per port there (see platform.direct_acs)",
		 ctx_platform(ctx)->describe);
	ev_int(r, "bridges", pr->path.nbridges);
	/* The matrix shows what platform.direct_acs found. */
	da = ctx_result_of(ctx, "platform.direct_acs", ctx->host);
	if (da && da->status == ST_PASS)
		fact_acs(r, PAIR_ACS_CLEAR);
	else if (da && da->status == ST_WARN)
		fact_acs(r, PAIR_ACS_REDIRECT);
}

/* Per-bridge registers are in platform.bridges; here the findings. */
static void acs_evidence(const struct gdr_ctx *ctx, struct result *r,
			 const struct pcipath *p, int with_acs)
{
	char key[64];

	ev_int(r, "bridges", p->nbridges);
	ev_int(r, "with_acs", with_acs);
	for (int i = 0; i < p->nbridges; i++) {
		const struct pci_cfg *c = &ctx->cfg[p->bridges[i]];

		if (!c->acs_unreadable[0] && !(c->acs.present &&
					       (c->acs.ctrl & ACS_REDIRECTS)))
			continue;
		snprintf(key, sizeof(key), "acs_%s", ctx->tree.n[p->bridges[i]].bdf);
		if (c->acs_unreadable[0])
			ev_str(r, key, "unreadable: %s", c->acs_unreadable);
		else
			ev_str(r, key, "ctl 0x%04x", c->acs.ctrl);
	}
}

void gate_platform_acs(struct gdr_ctx *ctx, const struct target *t)
{
	const struct inv_pair *pr = &ctx->inv.pair[t->pair];
	const struct pcipath *p = &pr->path;
	char redir[512] = "", bad[512] = "", bdfs[512] = "";
	int redirect = 0, header_only = 0, unreadable = 0, with_acs = 0;
	size_t used = 0, bused = 0, dused = 0;
	const struct reg_pair *pp;
	struct result *r;
	bool proven;

	/* Not a DEP: topo.path ERRORs on paths still judged here. */
	if (!p->known) {
		emit(ctx, pr->subject, ST_SKIP, C_PATH_UNKNOWN,
		     "no PCIe path known (see topo.path)");
		return;
	}
	if (ctx_platform(ctx)->kind == PLAT_KIND_GRACE_DIRECT_NIC) {
		acs_not_applicable(ctx, pr);
		return;
	}
	if (ctx->pci_open_err) {
		r = emit(ctx, pr->subject, ST_SKIP, C_LIBPCI_UNAVAILABLE,
			 "cannot read config space: %s", pci_lib_facts(ctx->pci)->error);
		remedy_LIBPCI_UNAVAILABLE(r);
		return;
	}
	if (p->suspect >= 0) {
		emit(ctx, pr->subject, ST_ERROR, C_PATH_UNTRUSTED,
		     "%s/class is unreadable or malformed: the bridges of the "
		     "path are unknown", ctx->tree.n[p->suspect].bdf);
		return;
	}
	if (!p->nbridges) {
		r = emit(ctx, pr->subject, ST_PASS, C_NO_BRIDGE_ON_PATH,
			 "no PCIe bridge between GPU and NIC: nothing to redirect");
		fact_acs(r, PAIR_ACS_CLEAR);
		return;
	}
	for (int i = 0; i < p->nbridges; i++) {
		const struct pcinode *n = &ctx->tree.n[p->bridges[i]];
		const struct pci_cfg *c = &ctx->cfg[p->bridges[i]];

		if (c->acs_unreadable[0]) {
			unreadable++;
			header_only += c->len == 64;
			if (bused < sizeof(bad))
				bused += (size_t)snprintf(bad + bused,
					sizeof(bad) - bused, "%s%s: %s",
					bused ? "; " : "", n->bdf,
					c->acs_unreadable);
			continue;
		}
		if (!c->acs.present)
			continue;
		with_acs++;
		if ((c->acs.ctrl & ACS_REDIRECTS) && used < sizeof(redir)) {
			redirect++;
			used += (size_t)snprintf(redir + used, sizeof(redir) - used,
						 "%s%s (%s)", used ? ", " : "",
						 n->bdf,
						 pcie_port_type_name(n->port_type));
			/* The kernel's list: pci=disable_acs_redir=a;b */
			if (dused < sizeof(bdfs))
				dused += (size_t)snprintf(bdfs + dused,
					sizeof(bdfs) - dused, "%s%s",
					dused ? ";" : "", n->bdf);
		}
	}
	pp = ctx_reg_pair(ctx, pr);
	proven = pp && ((pp->dp_dmabuf.tried && pp->dp_dmabuf.ok) ||
			(pp->dp_peermem.tried && pp->dp_peermem.ok));
	if (redirect && proven) {
		/*
		 * A proof outranks an inference: a transfer verified on this
		 * very pair (data.dmabuf, data.peermem) shows the redirected
		 * DMA arrives; what is left is its cost.
		 */
		r = emit(ctx, pr->subject, ST_WARN, C_ACS_REDIRECT,
			 "ACS redirect on %s: peer traffic forced up to the root "
			 "complex%s; a verified transfer on this pair shows DMA "
			 "works, at a cost in performance", redir,
			 pair_translated(ctx, pr) ? ", where the IOMMU "
			 "translates it" : "");
		remedy_ACS_REDIRECT_IOMMU(r, bdfs);
	} else if (redirect) {
		bool iommu = pair_translated(ctx, pr);

		r = emit(ctx, pr->subject, iommu ? ST_BLOCKED : ST_WARN,
			 iommu ? C_ACS_REDIRECT_IOMMU : C_ACS_REDIRECT,
			 "ACS redirect on %s: peer traffic forced up to the root "
			 "complex%s", redir,
			 iommu ? ", where the IOMMU translates it: GPU-NIC DMA "
			 "faults or is blocked" :
			 " (slower; some root complexes drop it)");
		remedy_ACS_REDIRECT_IOMMU(r, bdfs);
		fact_acs(r, iommu ? PAIR_ACS_REDIRECT_IOMMU : PAIR_ACS_REDIRECT);
	} else if (unreadable && header_only == unreadable) {
		/* The kernel shows non-root readers only the 64-byte header. */
		r = emit(ctx, pr->subject, ST_SKIP, C_ACS_NEEDS_ROOT,
			 "ACS of %d bridge(s) on the path unreadable: only the "
			 "64-byte header is visible; needs root", unreadable);
		remedy_ACS_NEEDS_ROOT(r);
	} else if (unreadable) {
		r = emit(ctx, pr->subject, ST_ERROR, C_ACS_UNREADABLE,
			 "cannot decode ACS on the path: %s", bad);
	} else {
		r = emit(ctx, pr->subject, ST_PASS, C_ACS_NO_REDIRECT,
			 "no ACS redirect on the %d bridge(s) of the path (%d "
			 "with an ACS capability)", p->nbridges, with_acs);
		fact_acs(r, PAIR_ACS_CLEAR);
	}
	acs_evidence(ctx, r, p, with_acs);
}

/* --- every bridge on a GPU-NIC path, once ----------------------------- */

void gate_platform_bridges(struct gdr_ctx *ctx, const struct target *t)
{
	bool *on = xcalloc(ctx->tree.count, sizeof(*on));
	int bridges = 0, with_acs = 0, redirect = 0, unreadable = 0;
	char key[64], bits[128];
	struct result *r;

	for (size_t i = 0; i < ctx->inv.npair; i++) {
		const struct pcipath *pp = &ctx->inv.pair[i].path;

		if (pp->suspect >= 0) {
			emit(ctx, ctx->host, ST_ERROR, C_PATH_UNTRUSTED,
			     "%s/class is unreadable or malformed: the bridges on "
			     "GPU-NIC paths are unknown",
			     ctx->tree.n[pp->suspect].bdf);
			free(on);
			return;
		}
		for (int b = 0; b < pp->nbridges; b++)
			on[pp->bridges[b]] = true;
	}
	for (size_t i = 0; i < ctx->tree.count; i++) {
		const struct pci_cfg *c = &ctx->cfg[i];

		if (!on[i])
			continue;
		bridges++;
		unreadable += c->acs_unreadable[0] != '\0';
		with_acs += c->acs.present;
		redirect += c->acs.present && (c->acs.ctrl & ACS_REDIRECTS);
	}
	if (!bridges)
		r = emit(ctx, ctx->host, ST_SKIP, C_NO_PATH_BRIDGES,
			 "no PCIe bridge lies on a GPU-NIC path");
	else
		r = emit(ctx, ctx->host, ST_PASS, C_PATH_BRIDGES,
			 "%d bridge(s) on GPU-NIC paths: %d with ACS, %d "
			 "redirecting, %d unreadable (verdicts per pair in "
			 "platform.acs)", bridges, with_acs, redirect, unreadable);
	for (size_t i = 0; i < ctx->tree.count; i++) {
		const struct pcinode *n = &ctx->tree.n[i];
		const struct pci_cfg *c = &ctx->cfg[i];

		if (!on[i])
			continue;
		snprintf(key, sizeof(key), "acs_%s", n->bdf);
		if (c->acs_unreadable[0]) {
			ev_str(r, key, "unreadable: %s", c->acs_unreadable);
		} else if (!c->acs.present) {
			ev_str(r, key, "no ACS capability");
		} else {
			acs_bits_string(c->acs.ctrl, bits, sizeof(bits));
			ev_str(r, key, "ctl 0x%04x cap 0x%04x: %s", c->acs.ctrl,
			       c->acs.cap, bits);
		}
		snprintf(key, sizeof(key), "type_%s", n->bdf);
		ev_str(r, key, "%s%s", pcie_port_type_name(n->port_type),
		       n->type_inferred ? " (inferred)" : "");
		if (c->link_known && c->link_bad[0]) {
			snprintf(key, sizeof(key), "link_%s", n->bdf);
			ev_str(r, key, "out of range: %s", c->link_bad);
		} else if (c->link_known) {
			snprintf(key, sizeof(key), "link_%s", n->bdf);
			ev_str(r, key, "%s x%d (max %s x%d)", c->cur_speed,
			       c->cur_width, c->max_speed, c->max_width);
		}
	}
	free(on);
}

/* --- link health ------------------------------------------------------- */

void gate_platform_link(struct gdr_ctx *ctx, const struct target *t)
{
	const struct inv_pair *pr = &ctx->inv.pair[t->pair];
	const struct pcipath *p = &pr->path;
	int nodes[PCIPATH_MAX + 2], n = 0, checked = 0, bad = 0;
	char degraded[512] = "", odd[512] = "";
	size_t used = 0, oused = 0;
	struct result *r;

	/* Not a DEP: topo.path ERRORs on paths still judged here. */
	if (!p->known) {
		emit(ctx, pr->subject, ST_SKIP, C_PATH_UNKNOWN,
		     "no PCIe path known (see topo.path)");
		return;
	}
	nodes[n++] = pr->node_gpu;
	for (int i = 0; i < p->nbridges; i++)
		nodes[n++] = p->bridges[i];
	nodes[n++] = pr->node_nic;
	for (int i = 0; i < n; i++) {
		const struct pci_cfg *c = &ctx->cfg[nodes[i]];
		bool is_gpu = i == 0, is_nic = i == n - 1, down;
		const char *what = is_gpu ? "GPU" : is_nic ? "NIC" : "bridge";

		if (!c->link_known)
			continue;
		if (c->link_bad[0]) {
			/* Not comparable: say what sysfs holds instead. */
			bad++;
			if (oused < sizeof(odd))
				oused += (size_t)snprintf(odd + oused,
					sizeof(odd) - oused, "%s%s %s %s",
					oused ? "; " : "", what,
					ctx->tree.n[nodes[i]].bdf, c->link_bad);
			continue;
		}
		checked++;
		/* GPUs drop link speed when idle: only width counts there. */
		down = c->cur_width < c->max_width ||
		       (is_nic && c->cur_gts < c->max_gts);
		if (down && used < sizeof(degraded))
			used += (size_t)snprintf(degraded + used,
				sizeof(degraded) - used, "%s%s %s at %s x%d (max %s x%d)",
				used ? "; " : "", what,
				ctx->tree.n[nodes[i]].bdf, c->cur_speed,
				c->cur_width, c->max_speed, c->max_width);
	}
	if (!checked && !bad) {
		emit(ctx, pr->subject, ST_SKIP, C_NO_LINK_INFO,
		     "no link speed/width in sysfs for the path (virtual or "
		     "legacy PCI)");
		return;
	}
	if (degraded[0]) {
		r = emit(ctx, pr->subject, ST_WARN, C_LINK_DEGRADED,
			 "trained below its maximum: %s", degraded);
		remedy_LINK_DEGRADED(r);
	} else if (bad) {
		r = emit(ctx, pr->subject, ST_WARN, C_LINK_VALUE_OUT_OF_RANGE,
			 "link state outside its domain (link down or not "
			 "trained?): %s", odd);
		remedy_LINK_VALUE_OUT_OF_RANGE(r);
	} else {
		r = emit(ctx, pr->subject, ST_PASS, C_LINKS_AT_MAX,
			 "%d link(s) on the path at their maximum width (GPU "
			 "link speed drops when idle)", checked);
	}
	ev_int(r, "links_checked", checked);
	if (bad) {
		ev_int(r, "links_out_of_range", bad);
		ev_str(r, "links_out_of_range_values", "%s", odd);
	}
}
