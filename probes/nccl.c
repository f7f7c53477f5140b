// SPDX-License-Identifier: MIT
/*
 * What NCCL will do on this node (issue 14): the release it is, the
 * settings it reads, the rails it uses and the mechanism it registers GPU
 * memory with, from the pure rules of nccl/rules.c, nccl/conf.c,
 * nccl/settings.c and nccl/cumem.c (its buffers), the PCI view of
 * nccl/pciview.c, the devices of nccl/netdev.c and the path rewrites, GDR
 * decisions and rail choice of nccl/model.c, built for the run by
 * probes/nccl_state.c over the facts probes/nccl_facts.c gathers. This
 * file holds the gates: it judges the model and emits their results
 * (docs/nccl-model.md cites NCCL's sources rule by rule).
 *
 *   topo.nccl_config  the release modelled (--nccl-version, --libnccl, or the
 *                     libnccl.so.2 the dynamic loader or a PyTorch wheel
 *                     would give) and the effective NCCL settings, each with
 *                     the variable or file it came from (param.cc
 *                     initEnvFunc: env, NCCL_CONF_FILE or ~/.nccl.conf,
 *                     /etc/nccl.conf).
 *   topo.nccl         per GPU x NIC pair: a rail of the GPU (ncclTopoGetLocal
 *                     + ncclTopoGetLocalNet) is judged (GDR both ways,
 *                     DMA-BUF or peermem); a far pair NCCL does not use, or
 *                     reaches through an NVLink peer (PXN), is information.
 *   data.nccl         per GPU: the mechanism NCCL picks on each rail, and
 *                     whether that exact mechanism was proven by the
 *                     registration and transfer gates on that pair.
 *
 * Path bandwidths (nccl/pciview.c: PCI links, then the port's rate) rank a GPU's NICs before their path types (ncclTopoGetLocal);
 * Broadcom PEX sub-switches are merged as ncclTopoFlattenBcmSwitches does,
 * and their virtual switch links join two switches (bcm_virtual_link).
 * Not modelled here (see docs/nccl-model.md): the CPU interconnect's
 * bandwidth, Data Direct devices,
 * NCCL_TOPO_FILE, net plugins.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access/sysroot.h"
#include "decode/cuda_api.h"
#include "decode/parse.h"
#include "decode/pcie.h"
#include "nccl/cumem.h"
#include "nccl/rules.h"
#include "probes/nccl_state.h"
#include "probes/probes.h"


/* --- topo.nccl_config ---------------------------------------------------- */

static const char *const shown[] = {
	"NCCL_IB_HCA", "NCCL_IB_DISABLE", "NCCL_NET", "NCCL_NET_GDR_LEVEL",
	"NCCL_NET_GDR_READ", "NCCL_NET_GDR_C2C", "NCCL_DMABUF_ENABLE",
	"NCCL_IB_GID_INDEX", "NCCL_IB_ROCE_VERSION_NUM", "NCCL_PXN_DISABLE",
	"NCCL_NETDEVS_POLICY", "NCCL_CUMEM_ENABLE", "NCCL_IB_DATA_DIRECT",
};

/* An integer NCCL reads with strtoll: does the text say what NCCL reads? */
static bool int_malformed(const char *v)
{
	char *end;

	if (!v || !*v)
		return false;
	errno = 0;
	(void)strtoll(v, &end, 0);
	return errno || end == v || *end;
}

void gate_topo_nccl_config(struct gdr_ctx *ctx, const struct target *t)
{
	struct nccl_state *s = nccl_model(ctx);
	char set[1024] = "", bad[512] = "";
	size_t us = 0, ub = 0;
	int nbad = 0;
	struct result *r;

	for (size_t i = 0; i < sizeof(shown) / sizeof(shown[0]); i++) {
		enum nccl_conf_src src;
		int line;
		const char *v = nccl_conf_get(&s->conf, shown[i], &src, &line);
		bool malformed;

		if (!v)
			continue;
		if (!strcmp(shown[i], "NCCL_NET_GDR_LEVEL"))
			malformed = s->set.level_err != 0;
		else if (!strcmp(shown[i], "NCCL_IB_HCA"))
			malformed = s->set.hca_err != 0;
		else if (!strcmp(shown[i], "NCCL_NET") ||
			 !strcmp(shown[i], "NCCL_NETDEVS_POLICY"))
			malformed = false;
		else
			malformed = int_malformed(v);
		if (us < sizeof(set))
			us += (size_t)snprintf(set + us, sizeof(set) - us,
					       "%s%s=%.64s (%s%s%.0d)",
					       us ? ", " : "", shown[i], v,
					       nccl_conf_src_name(src),
					       line ? ":" : "", line);
		if (malformed && ub < sizeof(bad)) {
			nbad++;
			ub += (size_t)snprintf(bad + ub, sizeof(bad) - ub,
					       "%s%s=%.64s", ub ? ", " : "",
					       shown[i], v);
		}
	}
	if (s->circle_gpu >= 0) {
		const struct inv_gpu *g = &ctx->inv.gpu[s->circle_gpu];

		r = emit(ctx, ctx->host, ST_BLOCKED, C_NCCL_CANNOT_INIT,
			 "NCCL %s (%s) cannot initialise on this node: its "
			 "search for %s's CPU over NVLink-C2C circles below "
			 "switch %s (ncclTopoAddC2c, findLocalCpu) until the "
			 "stack runs out", s->version, s->vsrc,
			 ctx->rep->subj[g->subject].id,
			 ctx->tree.n[s->circle_switch].bdf);
		/* Every NCCL job fails: the nccl path is closed. */
		r->paths = P_NCCL;
		remedy_NCCL_CANNOT_INIT(r);
	} else if (s->vcode == C_NOT_REPLAYED)
		r = emit(ctx, ctx->host, ST_SKIP, C_NOT_REPLAYED,
			 "not replayed: this capture (an older gdrcheck's) "
			 "does not hold the libnccl.so.2 and the NCCL settings "
			 "the node saw; NCCL %s (the newest modelled) assumed",
			 s->version);
	else if (s->vcode == C_NCCL_NOT_FOUND)
		r = emit(ctx, ctx->host, ST_PASS, C_NCCL_NOT_FOUND,
			 "no libnccl.so.2 found; NCCL %s (the newest modelled) "
			 "assumed; settings: %s", s->version,
			 set[0] ? set : "defaults");
	else if (s->vcode == C_NCCL_VERSION_UNREADABLE)
		r = emit(ctx, ctx->host, ST_WARN, C_NCCL_VERSION_UNREADABLE,
			 "%s has no readable NCCL version; NCCL %s assumed",
			 s->vsrc, s->version);
	else if (s->vcode == C_NCCL_VERSION_OUTSIDE_MODEL) {
		char near[16];

		nccl_ver_string(s->ver, near, sizeof(near));
		r = emit(ctx, ctx->host, ST_WARN, C_NCCL_VERSION_OUTSIDE_MODEL,
			 "%s is NCCL %s, outside the modelled releases "
			 "2.12.7-2.30.7; the nearest (%s) is modelled",
			 s->vsrc, s->version, near);
		remedy_NCCL_VERSION_OUTSIDE_MODEL(r);
	} else if (nbad) {
		r = emit(ctx, ctx->host, ST_WARN, C_NCCL_CONFIG_MALFORMED,
			 "NCCL %s (%s): %d setting(s) NCCL reads differently "
			 "than written: %s", s->version, s->vsrc, nbad, bad);
		remedy_NCCL_CONFIG_MALFORMED(r);
	} else {
		r = emit(ctx, ctx->host, ST_PASS, C_NCCL_CONFIG,
			 "NCCL %s (%s); settings: %s", s->version, s->vsrc,
			 set[0] ? set : "defaults");
	}
	ev_str(r, "nccl_version", "%s", s->version);
	ev_str(r, "nccl_version_source", "%s", s->vsrc);
	ev_str(r, "settings", "%s", set[0] ? set : "defaults");
	if (nbad)
		ev_str(r, "malformed", "%s", bad);
	ev_str(r, "gdr_level", "%s%s", nccl_ptype_name(s->set.level),
	       s->set.level_set ? "" : " (default)");
	ev_int(r, "gdr_read", (long long)s->set.gdr_read);
	ev_int(r, "dmabuf_enable", (long long)s->set.dmabuf_enable);
	ev_bool(r, "ib_transport", s->set.ib_used);
	ev_bool(r, "peermem", s->peermem);
	for (int i = 0; i < 2; i++)
		if (s->conf.file[i].used)
			ev_str(r, i ? "system_conf" : "user_conf", "%s: %s",
			       s->conf.file[i].path,
			       s->conf.file[i].err ?
			       sysroot_strerror(-s->conf.file[i].err) : "read");
}

/* --- topo.nccl ----------------------------------------------------------- */

/* "mlx5_0 (PIX)" for the rails of GPU gpu. */
static void rails_string(const struct gdr_ctx *ctx, int gpu, char *buf,
			 size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t n = 0; n < ctx->inv.nnic && used < len; n++) {
		int pi = nccl_pair_index(ctx, gpu, (int)n);
		char nm[80];

		if (pi >= 0 && ctx->nccl->pm[pi].rail && ctx->nccl->pm[pi].used)
			used += (size_t)snprintf(buf + used, len - used,
				"%s%s (%s)", used ? ", " : "",
				nccl_nic_name(ctx, pi, nm, sizeof(nm)),
				nccl_ptype_name(ctx->nccl->pm[pi].type));
	}
	if (!buf[0])
		snprintf(buf, len, "no RDMA device");
}

static const char *why_name(enum nccl_gdr_why w)
{
	switch (w) {
	case NCCL_GDR_OK: return "ok";
	case NCCL_GDR_NO_SUPPORT: return "no GDR support (NIC: peermem or "
		"DMA-BUF; GPU attribute)";
	case NCCL_GDR_MLO_PART: return "MLO partition";
	case NCCL_GDR_READ_OFF: return "NCCL_NET_GDR_READ=0";
	case NCCL_GDR_READ_DEFAULT_OFF: return "GDR read is off by default "
		"(compute capability < 8.0 without an NVLink peer)";
	case NCCL_GDR_TOO_FAR: return "distance above the level";
	}
	return "?";
}

/*
 * Why a C2C GPU's NIC is out of NCCL's GDR reach, by release: before
 * 2.26.2 NCCL has no C2C link (the path is PHB through the PCI root);
 * 2.26.x reads PHB as C2C only with NCCL_NET_GDR_C2C=1 (default 0);
 * 2.27.3+ default it to 1 (paths.cc NCCL_PARAM(NetGdrC2c), ncclTopoCheckGdr).
 * Empty when the GPU is not C2C or the level was configured.
 */
/*
 * Where the GDR level came from, for a rail line. NCCL's own default is
 * P2C since 2.29.2 (paths.cc ncclTopoCheckGdr); P2C only names a Grace
 * C2C path, so on a node without one it admits exactly PIX and PXB: say
 * that rather than leave an x86 operator with a Grace term.
 */
static const char *level_src(struct gdr_ctx *ctx, const struct nccl_state *s,
			     enum nccl_ptype level, int gpu)
{
	enum plat_kind k = ctx_platform(ctx)->kind;

	if (s->set.level_set)
		return " (NCCL_NET_GDR_LEVEL)";
	if (level == NPT_P2C && gpu_is_c2c(ctx, gpu) != 1 &&
	    k != PLAT_KIND_GRACE && k != PLAT_KIND_GRACE_DIRECT_NIC)
		return " (NCCL's default; with no NVLink-C2C here, as PXB)";
	return " (default)";
}

static bool c2c_why(struct gdr_ctx *ctx, const struct nccl_state *s,
		    int gpu, char *buf, size_t len, char *how, size_t hlen)
{
	enum nccl_conf_src src;
	enum plat_kind k;
	const char *v;

	buf[0] = '\0';
	if (s->set.level_set)
		return false;
	/*
	 * A Grace node whose GPU's C2C link NVML did not answer (no NVML,
	 * a replay without it): NCCL reads NVML itself and would call
	 * this path P2C on a C2C-attached GPU, as Grace GPUs are. Say so
	 * rather than advise moving a NIC.
	 */
	k = ctx_platform(ctx)->kind;
	if (gpu_is_c2c(ctx, gpu) < 0 && s->ver >= NCCL_VER(2, 27, 3) &&
	    s->set.gdr_c2c && (k == PLAT_KIND_GRACE ||
			   k == PLAT_KIND_GRACE_DIRECT_NIC)) {
		snprintf(buf, len, "; NVML did not say whether the GPU "
			 "reaches this Grace CPU over NVLink-C2C (gpu.nvml), "
			 "which makes the path NCCL's P2C");
		snprintf(how, hlen, "let gdrcheck read NVML (the driver's "
			 "libnvidia-ml.so.1, or --libnvml) to see the path as "
			 "NCCL does");
		return true;
	}
	if (gpu_is_c2c(ctx, gpu) != 1)
		return false;
	if (s->ver < NCCL_VER(2, 26, 0)) {
		snprintf(buf, len, "; NCCL %s has no C2C path type (2.26.2) "
			 "nor NCCL_NET_GDR_C2C (on by default since 2.27.3)",
			 s->version);
		snprintf(how, hlen, "use NCCL >= 2.27.3");
		return true;
	}
	if (s->set.gdr_c2c)
		return false;
	v = nccl_conf_get(&s->conf, "NCCL_NET_GDR_C2C", &src, NULL);
	if (v) {
		snprintf(buf, len, "; NCCL_NET_GDR_C2C=%s (%s) keeps GDR off "
			 "through the Grace CPU", v, nccl_conf_src_name(src));
		snprintf(how, hlen, "remove NCCL_NET_GDR_C2C=%s (%s) or set "
			 "it to 1", v, nccl_conf_src_name(src));
	} else {
		snprintf(buf, len, "; NCCL_NET_GDR_C2C is 0 by default in "
			 "NCCL %s (1 since 2.27.3)", s->version);
		snprintf(how, hlen, "export NCCL_NET_GDR_C2C=1 or use NCCL "
			 ">= 2.27.3");
	}
	return true;
}

/* The typed pair fact the report's table and policy read (core/result.h). */
static enum pair_gdr gdr_fact(const struct nccl_pair_model *m)
{
	if (m->wr.mode == NCCL_GDR_DISABLED)
		return PAIR_GDR_HOST;
	return m->rd.mode == NCCL_GDR_DISABLED ? PAIR_GDR_RECV : PAIR_GDR_BOTH;
}

/* The best bandwidth among the GPU's rails, 0 when none is known. */
static double rail_bw(const struct gdr_ctx *ctx, const struct nccl_state *s,
		      int gpu)
{
	double best = 0;

	for (size_t n = 0; n < ctx->inv.nnic; n++) {
		int pi = nccl_pair_index(ctx, gpu, (int)n);

		if (pi >= 0 && s->pm[pi].rail && s->pm[pi].bw > best)
			best = s->pm[pi].bw;
	}
	return best;
}

/*
 * "; narrower: 3.1 GB/s < the rails' 48.0 GB/s" into buf when bandwidth, not the path type,
 * kept this NIC from the rails (ncclTopoGetLocal); else "".
 */
static const char *narrower(const struct gdr_ctx *ctx,
			    const struct nccl_state *s, int gpu,
			    const struct nccl_pair_model *m, char *buf, size_t len)
{
	double best = rail_bw(ctx, s, gpu);

	buf[0] = '\0';
	if (!m->used || m->bw <= 0 || best <= m->bw)
		return buf;
	snprintf(buf, len, "; narrower: %.1f GB/s < the rails' "
		 "%.1f GB/s", m->bw, best);
	return buf;
}

/*
 * Evidence only where NCCL's view differs from the PCI walk's: a merged
 * Broadcom sub-switch, a bandwidth that decided the rails.
 */
static void pci_view_ev(struct result *r, const struct gdr_ctx *ctx,
			const struct nccl_state *s, int gpu,
			const struct nccl_pair_model *m)
{
	double best = rail_bw(ctx, s, gpu);

	if (m->bcm)
		ev_str(r, "bcm_flattened", "%s -> %s (Broadcom PEX sub-switch "
		       "merged, topo.cc ncclTopoFlattenBcmSwitches)",
		       nccl_ptype_name(m->pci_type),
		       nccl_ptype_name(m->type));
	if (m->vlink)
		ev_str(r, "bcm_virtual_link", "%s -> PXB (Broadcom virtual "
		       "switch link, /sys/kernel/pci_switch_link/"
		       "virtual_switch_links)", nccl_ptype_name(m->pci_type));
	if (m->used && m->bw > 0 && best > m->bw)
		ev_str(r, "bandwidth", "%.1f GB/s, rails %.1f GB/s", m->bw,
		       best);
	if (m->nogdr && m->nogdr_from != m->type)
		ev_str(r, "nogdr_route", "%s -> %s (no GPUDirect RDMA: NCCL "
		       "routes the pair through the GPU's CPU, paths.cc "
		       "ncclTopoComputePaths)", nccl_ptype_name(m->nogdr_from),
		       nccl_ptype_name(m->type));
}

/*
 * A pair the IB model does not judge: an EFA (aws-ofi-nccl), a device
 * NCCL's IB transport does not use, or a model that cannot decide; says
 * so and returns true.
 */
static bool topo_nccl_not_ib(struct gdr_ctx *ctx, const struct nccl_state *s,
			     const struct inv_pair *pr,
			     const struct nccl_pair_model *m)
{
	struct result *r;

	if (nic_is_efa(ctx, &ctx->inv.nic[pr->nic])) {
		/* platform.provider: aws-ofi-nccl, not NCCL's net_ib. */
		r = emit(ctx, pr->subject, ST_SKIP, C_NCCL_NET_OFI,
			 "%s is an AWS EFA: NCCL drives it through aws-ofi-nccl "
			 "(NCCL_NET ofi, libfabric FI_HMEM), whose rail and GDR "
			 "choices gdrcheck's IB-verbs model does not make",
			 ctx->inv.nic[pr->nic].name);
		ev_str(r, "nccl_ib", "ncclIbInitDevices skips the port: link "
		       "layer neither InfiniBand nor Ethernet");
		return true;
	}
	if (!s->set.ib_used || m->port < 0) {
		r = emit(ctx, pr->subject, ST_PASS, C_NCCL_NET_NOT_IB,
			 "NCCL does not use this device: %s",
			 !s->set.ib_used ? s->set.ib_why : s->set.hca_set ?
			 "NCCL_IB_HCA selects none of its ports" :
			 "no ACTIVE port with an InfiniBand or Ethernet link "
			 "layer (see nic.port)");
		if (s->set.hca_set)
			ev_str(r, "nccl_ib_hca", "%s", nccl_get(s, "NCCL_IB_HCA"));
		return true;
	}
	if (m->err) {
		emit(ctx, pr->subject, ST_ERROR, C_NCCL_MODEL_FAILED,
		     "the NCCL model cannot decide: a path type of NCCL %s is "
		     "missing", s->version);
		return true;
	}
	return false;
}

/* Far pairs are information: NCCL does not use them. */
static void topo_nccl_far(struct gdr_ctx *ctx, const struct nccl_state *s,
			  const struct inv_pair *pr, const struct nccl_pair_model *m,
			  const char *rails)
{
	char narrow[96];
	struct result *r;
	const struct nccl_fusion *fu = &s->fuse[pr->nic];

	if (fu->lead != pr->nic) {
		/* Fused into another NIC's device: that device decides. */
		r = emit(ctx, pr->subject, ST_PASS, C_NCCL_NOT_A_RAIL,
			 "not a rail of this GPU: NCCL uses %s; here fused "
			 "into NCCL's device %s (no device of its own)", rails,
			 s->fuse[fu->lead].name);
		ev_bool(r, "rail", false);
		ev_str(r, "nccl_device", "%s", s->fuse[fu->lead].name);
		ev_str(r, "nccl_version", "%s", s->version);
		return;
	}
	if (m->relay >= 0)
		r = emit(ctx, pr->subject, ST_PASS, C_NCCL_NOT_A_RAIL,
			 "not a rail of this GPU: NCCL uses %s; here "
			 "PXN through %s (NVLink), GDR %s",
			 rails, ctx->rep->subj[ctx->inv.gpu[m->relay].subject].id,
			 m->rd.mode != NCCL_GDR_DISABLED ? "on" : "off");
	else
		r = emit(ctx, pr->subject, ST_PASS, C_NCCL_NOT_A_RAIL,
			 "not a rail of this GPU: NCCL uses %s; here %s "
			 "(%s%s)", rails, nccl_ptype_name(m->type),
			 m->wr.mode != NCCL_GDR_DISABLED ? "GDR if used" :
			 "no GDR if used",
			 narrower(ctx, s, pr->gpu, m, narrow,
				  sizeof(narrow)));
	ev_bool(r, "rail", false);
	ev_str(r, "path", "%s", nccl_ptype_name(m->type));
	pci_view_ev(r, ctx, s, pr->gpu, m);
	ev_str(r, "nccl_version", "%s", s->version);
}

/* A rail: whether NCCL uses GPUDirect RDMA on it, each way. */
static struct result *topo_nccl_rail(struct gdr_ctx *ctx,
				     const struct nccl_state *s, int pair,
				     const struct nccl_pair_model *m)
{
	const struct inv_pair *pr = &ctx->inv.pair[pair];
	char nm[80], via[160] = "";
	struct result *r;

	if (m->wr.mode == NCCL_GDR_DISABLED && m->wr.why == NCCL_GDR_TOO_FAR) {
		enum nccl_ptype d = m->wr.distance;
		char c2c[200], how[200];
		bool grace = c2c_why(ctx, s, pr->gpu, c2c, sizeof(c2c), how,
				     sizeof(how));
		r = emit(ctx, pr->subject, ST_WARN, C_NCCL_DISTANCE_EXCEEDS_LEVEL,
			 "NCCL rail: NCCL will not use GPUDirect RDMA here: "
			 "distance %s > level %s%s%s; traffic bounces through "
			 "host memory", nccl_ptype_name(d),
			 nccl_ptype_name(m->wr.level),
			 level_src(ctx, s, m->wr.level, pr->gpu), c2c);
		if (grace && s->ver >= NCCL_VER(2, 26, 0))
			ev_int(r, "nccl_net_gdr_c2c", s->set.gdr_c2c);
		if (grace)
			remedy_NCCL_C2C_GDR_OFF(r, how, nccl_ptype_name(d));
		else
			remedy_NCCL_DISTANCE_EXCEEDS_LEVEL(r,
				nccl_ptype_name(d), d >= NPT_SYS ?
				"CPU interconnect" : "root complex");
		return r;
	}
	if (m->wr.mode == NCCL_GDR_DISABLED) {
		/* Not the distance: the level advice would not help. */
		r = emit(ctx, pr->subject, ST_WARN, C_NCCL_RAIL_NO_GDR,
			 "NCCL rail: NCCL will not use GPUDirect RDMA here: %s",
			 why_name(m->wr.why));
		if (m->wr.why == NCCL_GDR_NO_SUPPORT)
			remedy_NCCL_RAIL_NO_GDR(r);
		return r;
	}
	if (m->rd.mode == NCCL_GDR_DISABLED) {
		r = emit(ctx, pr->subject, ST_WARN, C_NCCL_GDR_WRITE_ONLY,
			 "NCCL rail: GDR for receives (distance %s <= %s) but "
			 "not for sends: %s", nccl_ptype_name(m->wr.distance),
			 nccl_ptype_name(m->wr.level), why_name(m->rd.why));
		remedy_NCCL_GDR_WRITE_ONLY(r);
		return r;
	}
	/* ncclTopoCheckGdr: a PXN path's distance is the relay's. */
	if (m->relay >= 0)
		snprintf(via, sizeof(via), " (PXN: sends through %s "
			 "over NVLink; the relay's distance)",
			 ctx->rep->subj[ctx->inv.gpu[m->relay].subject].id);
	return emit(ctx, pr->subject, ST_PASS, C_NCCL_GDR_ALLOWED,
		    "NCCL rail %s port %d: %s both ways%s, distance %s <= "
		    "level %s%s%s", nccl_nic_name(ctx, pair, nm,
		    sizeof(nm)), m->port,
		    nccl_mech_name(m->mwr.mech),
		    m->mwr.no_fallback ? " (no fallback)" : "",
		    nccl_ptype_name(m->wr.distance),
		    nccl_ptype_name(m->wr.level),
		    level_src(ctx, s, m->wr.level, pr->gpu), via);
}

/* What a rail's result shows of the model's decision. */
static void topo_nccl_rail_ev(struct gdr_ctx *ctx, struct result *r,
			      const struct nccl_state *s, int pair,
			      const struct nccl_pair_model *m)
{
	const struct inv_pair *pr = &ctx->inv.pair[pair];
	char nm[80];

	fact_gdr(r, gdr_fact(m));
	ev_bool(r, "rail", true);
	ev_str(r, "path", "%s", nccl_ptype_name(m->type));
	pci_view_ev(r, ctx, s, pr->gpu, m);
	if (m->relay >= 0)
		ev_str(r, "pxn_relay", "%s",
		       ctx->rep->subj[ctx->inv.gpu[m->relay].subject].id);
	ev_int(r, "port", m->port);
	if (m->gid_index >= 0)
		ev_int(r, "gid_index", m->gid_index);
	ev_str(r, "level", "%s", nccl_ptype_name(m->wr.level));
	ev_bool(r, "level_from_config", s->set.level_set);
	ev_bool(r, "gdr_send", m->rd.mode != NCCL_GDR_DISABLED);
	ev_bool(r, "gdr_recv", m->wr.mode != NCCL_GDR_DISABLED);
	ev_str(r, "mechanism_send", "%s", nccl_mech_name(m->mrd.mech));
	ev_str(r, "mechanism_recv", "%s", nccl_mech_name(m->mwr.mech));
	ev_bool(r, "no_fallback", m->mwr.no_fallback || m->mrd.no_fallback);
	if (m->dd) {
		const struct verbs_nic *v = ctx_verbs_nic(ctx, pr->nic);
		const char *fn = v ? strrchr(v->dd_path, '/') : NULL;

		/* init.cc: `<dev>_dma`, pciPath from mlx5dv; reg.cc:
		 * mlx5dv_reg_dmabuf_mr; net.cc: a PCI gdrMode exports with
		 * CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE (CUDA >= 12.8). */
		ev_str(r, "nccl_device", "%s",
		       nccl_nic_name(ctx, pair, nm, sizeof(nm)));
		ev_str(r, "data_direct_pci", "%s", fn ? fn + 1 : "");
		ev_bool(r, "pcie_mapping", m->wr.mode == NCCL_GDR_PCI ||
			m->rd.mode == NCCL_GDR_PCI);
	}
	if (m->cc_unknown)
		ev_str(r, "gdr_read_reason", "default (compute capability "
		       "unknown)");
	ev_str(r, "nccl_version", "%s", s->version);
}

void gate_topo_nccl(struct gdr_ctx *ctx, const struct target *t)
{
	const struct inv_pair *pr = &ctx->inv.pair[t->pair];
	struct nccl_state *s = nccl_model(ctx);
	const struct nccl_pair_model *m = &s->pm[t->pair];
	char rails[256];
	struct result *r;

	if (ctx_gpu_hidden(ctx, pr->gpu)) {
		emit(ctx, pr->subject, ST_SKIP, C_GPU_NOT_IN_CUDA,
		     "not visible to this process (see gpu.visible)");
		return;
	}
	/* Not a DEP: topo.path ERRORs on paths the model still places. */
	if (!m->known) {
		emit(ctx, pr->subject, ST_SKIP, C_PATH_UNKNOWN,
		     "no PCIe path known (see topo.path)");
		return;
	}
	if (topo_nccl_not_ib(ctx, s, pr, m))
		return;
	rails_string(ctx, pr->gpu, rails, sizeof(rails));
	if (m->rail && m->undecided) {
		/* Not NCCL_RAIL_NO_GDR: nothing said no (issue 23). */
		r = emit(ctx, pr->subject, ST_SKIP, C_NCCL_UNDECIDED,
			 "NCCL rail: whether NCCL uses GPUDirect RDMA here "
			 "cannot be decided: %s", m->undecided);
		ev_bool(r, "rail", true);
		ev_str(r, "path", "%s", nccl_ptype_name(m->type));
		ev_int(r, "port", m->port);
		ev_str(r, "nccl_version", "%s", s->version);
		return;
	}
	if (!m->rail) {
		topo_nccl_far(ctx, s, pr, m, rails);
		return;
	}
	r = topo_nccl_rail(ctx, s, t->pair, m);
	topo_nccl_rail_ev(ctx, r, s, t->pair, m);
}

/* --- data.nccl ----------------------------------------------------------- */

enum proof { PR_PROVEN, PR_UNPROVEN, PR_ERROR, PR_FAILED };


static bool word_in(const char *list, const char *w)
{
	size_t n = strlen(w);

	for (const char *p = list; (p = strstr(p, w)); p += n)
		if ((p == list || p[-1] == ' ') && (!p[n] || p[n] == ' '))
			return true;
	return false;
}

/*
 * Does NCCL allocate GPU gpu's buffers with cuMemCreate? The parameter
 * (NCCL_CUMEM_ENABLE from the environment or a conf file, else the
 * release's default) and ncclIsCuMemSupported's facts: driver version,
 * cuMemCreate in libcuda, VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED and (until
 * 2.23.4) GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED. A fact not known is
 * tried both ways: when the answer differs, the kind is unknown. why says
 * which and from where.
 */
/* NCCL's buffers (nccl_cumem_kind) from the GPU's CUDA facts. */
static enum nccl_bufkind cumem_of(const struct gdr_ctx *ctx,
				  const struct nccl_state *s, int gpu,
				  char *why, size_t len)
{
	const struct cuda_facts *cf = &ctx->vf->cuda;
	const struct cuda_gpu *g = ctx_cuda_gpu(ctx, gpu);
	const struct reg_vmm_gpu *v = NULL;
	struct nccl_cumem_in in = {
		.ver = s->ver, .version = s->version, .conf = &s->conf,
		.driver_version = cf->driver_version,
		.create = -1, .vmm = -1, .gdr_vmm = -1,
	};

	if (cf->lib.loaded)
		in.create = !word_in(cf->lib.missing_optional, "cuMemCreate");
	if (g && g->ordinal >= 0 && g->ordinal < cf->gpus_recorded)
		v = &ctx->vf->reg.vmm[g->ordinal];
	if (v && (v->skip == VMMS_TRIED || v->skip == VMMS_GDR_UNSUPPORTED ||
		  (v->skip == VMMS_ATTR_FAILED &&
		   v->attr != CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED)))
		in.vmm = 1;
	else if (v && v->skip == VMMS_UNSUPPORTED)
		in.vmm = 0;
	if (g && !(g->attr_unanswered & CU_SLOT_BIT(CU_SLOT_VMM_GDR)))
		in.gdr_vmm = g->attr_vmm_gdr;
	return nccl_cumem_kind(&in, why, len);
}

/*
 * Data Direct unknown on a node that has it: libmlx5 was never asked (a
 * --sysroot replay without --libmlx5, a capture older than the Data
 * Direct facts) while the tree holds a ConnectX-8 Data Direct function
 * (15b3:2100, platform.class) and this NCCL release with this
 * NCCL_IB_DATA_DIRECT would expose `<dev>_dma` on a capable device
 * (nccl_data_direct). NCCL may then register through mlx5dv
 * (DATA_DIRECT) at another PCI function, which the plain registration
 * of the pair does not prove. An rdma-core that lacks the symbols
 * (DD_OLD_RDMA_CORE) is known, not unasked: NCCL's dlvsym fails too.
 */
static bool dd_unasked(struct gdr_ctx *ctx, const struct inv_pair *pr)
{
	const struct nccl_state *s = ctx->nccl;
	struct nccl_dd_out dd;

	if (ctx->vf->verbs.mlx5_lib.attempted || s->pm[pr - ctx->inv.pair].dd ||
	    !ctx_platform(ctx)->cx_dma)
		return false;
	nccl_data_direct(s->ver, s->set.ib_data_direct, true, &dd);
	return dd.dma;
}

/*
 * Was mechanism m (P_DMABUF or P_PEERMEM) proven on pair pi for buffers
 * of kind kind? Reads the results the registration and datapath gates
 * recorded: a BLOCKED result of that mechanism on the host, the GPU, the
 * NIC, its ports or the pair closes it; the reg and data results of the
 * buffer kind on the pair PASSing prove it: reg.dmabuf/data.dmabuf
 * (reg.peermem/data.peermem) for cuMemAlloc buffers, reg.vmm_dmabuf/
 * data.vmm_dmabuf (..._peermem) and vmm_proof() for cuMemCreate ones, and
 * then the cuMemAlloc results of the pair do not count.
 */
static enum proof proven_kind(struct gdr_ctx *ctx, int pi, unsigned int mask,
			      bool vmm, const struct result **why)
{
	const struct inv_pair *pr = &ctx->inv.pair[pi];
	const struct inv_nic *nic = &ctx->inv.nic[pr->nic];
	const struct report *rep = ctx->rep;
	bool db = mask == P_DMABUF;
	int reg_g = vmm ? (db ? G_REG_VMM_DMABUF : G_REG_VMM_PEERMEM) :
			  (db ? G_REG_DMABUF : G_REG_PEERMEM);
	int data_g = vmm ? (db ? G_DATA_VMM_DMABUF : G_DATA_VMM_PEERMEM) :
			   (db ? G_DATA_DMABUF : G_DATA_PEERMEM);
	int alloc_reg = db ? G_REG_DMABUF : G_REG_PEERMEM;
	int alloc_data = db ? G_DATA_DMABUF : G_DATA_PEERMEM;
	const struct result *reg = NULL, *data = NULL;
	int vp;

	*why = NULL;
	for (size_t i = 0; i < rep->nres; i++) {
		const struct result *r = &rep->res[i];
		int sj = r->subject, gi = r->gate->index;
		bool mine = sj == ctx->host || sj == ctx->inv.gpu[pr->gpu].subject ||
			    sj == nic->subject || sj == pr->subject ||
			    (rep->subj[sj].kind == SUBJ_PORT &&
			     rep->subj[sj].parent == nic->subject);

		if (!mine)
			continue;
		if (sj == pr->subject && gi == reg_g)
			reg = r;
		if (sj == pr->subject && gi == data_g)
			data = r;
		/* NCCL registers no cuMemAlloc memory with cuMem on. */
		if (vmm && sj == pr->subject &&
		    (gi == alloc_reg || gi == alloc_data))
			continue;
		if (((r->paths & mask) || gi == reg_g || gi == data_g) &&
		    r->status == ST_BLOCKED) {
			*why = r;
			return PR_FAILED;
		}
	}
	/*
	 * DMA-BUF on a Data Direct rail is mlx5dv_reg_dmabuf_mr(DATA_DIRECT)
	 * (net_ib reg.cc); a registration made the other way proves
	 * something else, and the other way round. The MR of the buffer
	 * kind NCCL registers is the one that counts.
	 */
	if (mask == P_DMABUF && reg && reg->status == ST_PASS) {
		const struct reg_pair *rp = ctx_reg_pair(ctx, pr);
		const struct mr_result *mr = !rp ? NULL :
					     vmm ? &rp->vmm_dmabuf : &rp->dmabuf;

		if (!mr || mr->data_direct != ctx->nccl->pm[pi].dd) {
			*why = reg;
			return PR_UNPROVEN;
		}
		if (dd_unasked(ctx, pr)) {
			*why = ctx_result_of(ctx, "nic.data_direct",
					     nic->subject);
			return PR_UNPROVEN;
		}
	}
	vp = vmm ? vmm_proof(ctx, pi, db ? VMM_PATH_DMABUF : VMM_PATH_PEERMEM) :
		   VMM_PROVEN;
	/* --no-datapath waives the transfer (vmm_proof then NOT_TRIED). */
	if (reg && reg->status == ST_PASS && data &&
	    ((data->status == ST_PASS && vp == VMM_PROVEN) ||
	     (data->status == ST_SKIP && data->waived && vp != VMM_FAILED)))
		return PR_PROVEN;
	*why = data && data->status != ST_PASS ? data : reg;
	if (*why && (*why)->status == ST_ERROR)
		return PR_ERROR;
	/* The worker's record says it failed (the VMM allocation itself). */
	if (vp == VMM_FAILED)
		return PR_FAILED;
	return PR_UNPROVEN;
}

/*
 * The kind unknown: both kinds proven prove it; a failure of one kind
 * only is not proof of NCCL's failure.
 */
static enum proof proven(struct gdr_ctx *ctx, int pi, unsigned int mask,
			 enum nccl_bufkind kind, const struct result **why)
{
	const struct result *wa, *wv;
	enum proof pa, pv;

	if (kind != NCCL_BUF_UNKNOWN)
		return proven_kind(ctx, pi, mask, kind == NCCL_BUF_CUMEM, why);
	pa = proven_kind(ctx, pi, mask, false, &wa);
	pv = proven_kind(ctx, pi, mask, true, &wv);
	*why = pa >= pv ? wa : wv;
	if (pa == pv)
		return pa;
	return pa == PR_FAILED || pv == PR_FAILED ? PR_UNPROVEN :
	       pa > pv ? pa : pv;
}

static bool vmm_gate(const struct result *r)
{
	int gi = r ? r->gate->index : -1;

	return gi == G_REG_VMM_DMABUF || gi == G_REG_VMM_PEERMEM ||
	       gi == G_DATA_VMM_DMABUF || gi == G_DATA_VMM_PEERMEM;
}

/*
 * A failure on VMM memory that cuMemAlloc memory does not share: then
 * NCCL_CUMEM_ENABLE=0 is a workaround. When cuMemAlloc memory fails too,
 * *why becomes that failure (the mechanism's own fix clears both).
 */
static bool vmm_only_failure(struct gdr_ctx *ctx, int pi, unsigned int mask,
			     enum proof p, const struct result **why)
{
	const struct result *w;

	if (p != PR_FAILED || !vmm_gate(*why))
		return false;
	if (proven_kind(ctx, pi, mask, false, &w) != PR_FAILED)
		return true;
	if (w)
		*why = w;
	return false;
}

static const char *kind_name(enum nccl_bufkind k)
{
	return k == NCCL_BUF_CUMEM ? "cuMemCreate" : k == NCCL_BUF_CUMEMALLOC ?
	       "cuMemAlloc" : "unknown";
}


/* What data.nccl gathers over one GPU's rails. */
struct rails_proof {
	enum nccl_bufkind kind;		/* the buffers NCCL allocates */
	char bufwhy[512];
	char on[256];			/* the rails, as shown */
	size_t used;
	int nrails;
	enum proof worst;
	const struct result *worst_why;
	int worst_pi;			/* the pair of the worst rail */
	bool worst_vmm_only;
	bool nogdr;			/* a rail without GDR */
	const char *undecided;		/* a rail's inputs never read */
};

static const char *mech_word(enum nccl_mech mm)
{
	return mm == NCCL_MECH_DMABUF ? "DMA-BUF" :
	       mm == NCCL_MECH_PEERMEM ? "peermem" : "host memory";
}

/*
 * The proof of the mechanism mm NCCL uses on rail pi (to NIC n); *why is
 * the result it stands on, *vo whether only VMM memory fails.
 */
static enum proof rail_proof(struct gdr_ctx *ctx, const struct nccl_state *s,
			     int pi, int n, enum nccl_mech mm,
			     struct rails_proof *rp, const struct result **why,
			     bool *vo)
{
	const struct nccl_pair_model *m = &s->pm[pi];
	char rwhy_buf[512];
	enum proof p;

	if (mm == NCCL_MECH_HOST && m->undecided) {
		/* The inputs were never read: undecided, not no. */
		rp->undecided = m->undecided;
		*why = NULL;
		return PR_ERROR;
	}
	if (mm == NCCL_MECH_HOST) {
		rp->nogdr = true;
		*why = NULL;
		return PR_FAILED;
	}
	p = proven(ctx, pi, mm == NCCL_MECH_DMABUF ? P_DMABUF :
		   P_PEERMEM, rp->kind, why);
	*vo = vmm_only_failure(ctx, pi, mm == NCCL_MECH_DMABUF ?
			       P_DMABUF : P_PEERMEM, p, why);
	/*
	 * PXN (paths.cc ncclTopoComputePaths, GPU->NIC only):
	 * sends leave from the relay GPU's memory, so the
	 * relay's pair must be proven too.
	 */
	if (m->relay >= 0) {
		const struct result *rwhy;
		int rpi = nccl_pair_index(ctx, m->relay, n);
		enum nccl_mech rm = m->mrd.mech != NCCL_MECH_HOST ?
				    m->mrd.mech : mm;
		enum nccl_bufkind rk = cumem_of(ctx, s, m->relay,
			rwhy_buf, sizeof(rwhy_buf));
		enum proof rpr = rpi < 0 ? PR_UNPROVEN :
			proven(ctx, rpi, rm == NCCL_MECH_DMABUF ?
			       P_DMABUF : P_PEERMEM, rk, &rwhy);

		if (rpi < 0)
			rwhy = NULL;
		if (rpr > p) {
			p = rpr;
			*why = rwhy;
			*vo = vmm_only_failure(ctx, rpi,
				rm == NCCL_MECH_DMABUF ?
				P_DMABUF : P_PEERMEM, rpr, why);
		}
	}
	return p;
}

/* One rail of the GPU: listed, proven, and the worst one kept. */
static void data_nccl_rail(struct gdr_ctx *ctx, const struct nccl_state *s,
			   struct nccl_gpu_rails *gr, int pi, int n,
			   struct rails_proof *rp)
{
	const struct nccl_pair_model *m = &s->pm[pi];
	enum nccl_mech mm;
	const struct result *why;
	bool vo = false;
	enum proof p;
	char nm[80];

	rp->nrails++;
	mm = m->mwr.mech != NCCL_MECH_HOST ? m->mwr.mech : m->mrd.mech;
	if (rp->used < sizeof(rp->on))
		rp->used += (size_t)snprintf(rp->on + rp->used,
					     sizeof(rp->on) - rp->used,
					     "%s%s%s%s%s", rp->used ? ", " : "",
					     nccl_nic_name(ctx, pi, nm, sizeof(nm)),
					     m->relay >= 0 ? " (PXN through " : "",
					     m->relay >= 0 ? ctx->rep->subj[
					     ctx->inv.gpu[m->relay].subject].id : "",
					     m->relay >= 0 ? ")" : "");
	p = rail_proof(ctx, s, pi, n, mm, rp, &why, &vo);
	if (gr)
		for (int k = 0; k < gr->nrails; k++)
			if (gr->rail[k].nic == ctx->inv.nic[n].subject)
				gr->rail[k].proof =
					p == PR_PROVEN && ctx->opt->no_datapath ?
					"registered" :
					p == PR_PROVEN ? "proven" :
					p == PR_FAILED ? "failed" :
					p == PR_ERROR ? "error" : "unproven";
	if (p > rp->worst || rp->worst_pi < 0) {
		if (p >= rp->worst) {
			rp->worst = p;
			rp->worst_why = why;
			rp->worst_vmm_only = vo;
		}
		if (rp->worst_pi < 0 || p >= rp->worst)
			rp->worst_pi = pi;
	}
}

/* A GPU NCCL uses no rail for: why, and whether that blocks. */
static void data_nccl_no_rails(struct gdr_ctx *ctx, const struct nccl_state *s,
			       const struct inv_gpu *gpu)
{
	struct result *r;
	size_t efa = 0;

	if (!s->set.ib_used) {
		r = emit(ctx, gpu->subject, ST_BLOCKED, C_NCCL_NO_GDR,
			 "NCCL will not use GPUDirect RDMA on %s: %s",
			 ctx->rep->subj[gpu->subject].id, s->set.ib_why);
		remedy_NCCL_NO_GDR(r);
		return;
	}
	for (size_t i = 0; i < ctx->inv.nnic; i++)
		efa += nic_is_efa(ctx, &ctx->inv.nic[i]);
	if (efa)
		emit(ctx, gpu->subject, ST_SKIP, C_NCCL_UNPROVEN,
		     "NCCL's IB transport uses no RDMA device "
		     "on %s; not proven: the node's %zu AWS "
		     "EFA device(s) are driven by aws-ofi-nccl "
		     "(NCCL_NET ofi), which gdrcheck's "
		     "IB-verbs model does not cover (see "
		     "platform.provider)",
		     ctx->rep->subj[gpu->subject].id, efa);
	else
		emit(ctx, gpu->subject, ST_SKIP,
		     C_NCCL_UNPROVEN, "NCCL uses no RDMA "
		     "device on %s; not proven: no RDMA device "
		     "with a known path that NCCL selects",
		     ctx->rep->subj[gpu->subject].id);
}

/* The worst rail failed: which mechanism, and whose fix. */
static struct result *data_nccl_failed(struct gdr_ctx *ctx,
				       const struct rails_proof *rp,
				       const struct nccl_pair_model *m,
				       enum nccl_mech mm, const char *nic,
				       const char *mech, int subject)
{
	const char *wr = rp->worst_why ? rp->worst_why->reason : "";
	const char *wg = rp->worst_why ? rp->worst_why->gate->id : "";
	struct result *r;

	if (rp->worst_vmm_only) {
		r = emit(ctx, subject, ST_BLOCKED,
			 C_NCCL_CUMEM_VMM_FAILS, "NCCL allocates its "
			 "buffers with cuMemCreate (%s) and uses %s on "
			 "%s; that fails on VMM memory: %s: %s",
			 rp->bufwhy, mech, nic, wg, wr);
		remedy_NCCL_CUMEM_VMM_FAILS(r);
	} else if (rp->nogdr && mm == NCCL_MECH_HOST) {
		const struct result *tr = ctx_result_of(ctx,
			"topo.nccl", ctx->inv.pair[rp->worst_pi].subject);
		/* Read before emit: emit may move the results (realloc). */
		const char *fix = tr && tr->status == ST_WARN ?
				  tr->remediation : NULL;

		r = emit(ctx, subject, ST_BLOCKED, C_NCCL_NO_GDR,
			 "NCCL will not use GPUDirect RDMA on %s: %s",
			 nic, why_name(m->wr.why));
		/*
		 * topo.nccl owns the rail's fix (the level, the C2C
		 * switch, NVML): carry it, so the report lists one
		 * fix under "to fix" for both results instead of
		 * "see topo.nccl" there and the fix under "optional".
		 */
		if (fix)
			result_remedy(r, "%s", fix);
		else
			remedy_NCCL_NO_GDR(r);
	} else if (mm == NCCL_MECH_DMABUF && m->dd) {
		/* Its own code: the fix differs (NCCL_IB_DATA_DIRECT). */
		r = emit(ctx, subject, ST_BLOCKED, C_NCCL_DD_FAILS,
			 "NCCL uses DMA-BUF through Data Direct on %s "
			 "(no fallback to peermem) and the Data Direct "
			 "registration fails there: %s: %s", nic, wg, wr);
		remedy_NCCL_DD_FAILS(r);
	} else if (mm == NCCL_MECH_DMABUF) {
		r = emit(ctx, subject, ST_BLOCKED, C_NCCL_DMABUF_FAILS,
			 "NCCL uses DMA-BUF on %s (no fallback to "
			 "peermem) and DMA-BUF fails there: %s: %s",
			 nic, wg, wr);
		remedy_NCCL_DMABUF_FAILS(r);
	} else {
		r = emit(ctx, subject, ST_BLOCKED, C_NCCL_PEERMEM_FAILS,
			 "NCCL uses peermem on %s and peermem fails "
			 "there: %s: %s", nic, wg, wr);
		remedy_NCCL_PEERMEM_FAILS(r);
	}
	return r;
}

/* The GPU's result: the worst of its rails' proofs. */
static struct result *data_nccl_worst(struct gdr_ctx *ctx,
				      const struct nccl_state *s,
				      const struct rails_proof *rp,
				      int subject, char *mech, size_t mlen)
{
	const struct nccl_pair_model *m = &s->pm[rp->worst_pi];
	enum nccl_mech mm = m->mwr.mech != NCCL_MECH_HOST ?
			    m->mwr.mech : m->mrd.mech;
	char nm[80];
	const char *nic = nccl_nic_name(ctx, rp->worst_pi, nm, sizeof(nm));
	const char *wr = rp->worst_why ? rp->worst_why->reason : "";
	const char *wg = rp->worst_why ? rp->worst_why->gate->id : "";
	enum nccl_bufkind kind = rp->kind;
	bool other = kind != NCCL_BUF_CUMEMALLOC;

	snprintf(mech, mlen, "%s", mech_word(mm));
	if (rp->worst == PR_PROVEN)
		return emit(ctx, subject, ST_PASS, C_NCCL_RAILS_PROVEN,
			    "NCCL uses %s on %s with %s buffers (%s): %s", mech,
			    rp->on, kind_name(kind), rp->bufwhy,
			    ctx->opt->no_datapath ? "registration verified, no "
			    "transfer run (--no-datapath)" :
			    "registration and transfer verified");
	if (rp->worst == PR_FAILED)
		return data_nccl_failed(ctx, rp, m, mm, nic, mech, subject);
	if (rp->worst == PR_ERROR && rp->undecided && !rp->worst_why)
		return emit(ctx, subject, ST_ERROR, C_NCCL_UNDECIDED,
			    "NCCL's mechanism on %s cannot be decided: %s",
			    nic, rp->undecided);
	if (rp->worst == PR_ERROR)
		return emit(ctx, subject, ST_ERROR, C_NCCL_PROOF_ERROR,
			    "NCCL uses %s on %s%s%s%s%s; the check could not "
			    "decide: %s: %s", mech, nic,
			    other ? " with " : "",
			    other ? kind_name(kind) : "",
			    other ? " buffers: " : "",
			    other ? rp->bufwhy : "", wg, wr);
	if (ctx->opt->no_alloc)
		/* The health-check mode: READY-UNPROVEN, not UNKNOWN. */
		return emit(ctx, subject, ST_SKIP, C_NCCL_NO_ALLOC,
			    "NCCL uses %s on %s; --no-alloc: the "
			    "registration proof was not attempted", mech,
			    nic);
	return emit(ctx, subject, ST_SKIP, C_NCCL_UNPROVEN,
		    "NCCL uses %s on %s%s%s%s%s; not proven: %s%s%s",
		    mech, nic, other ? " with " : "",
		    other ? kind_name(kind) : "",
		    other ? " buffers: " : "",
		    other ? rp->bufwhy : "",
		    wg[0] ? wg : "no registration on this rail",
		    wg[0] ? ": " : "", wr);
}

void gate_data_nccl(struct gdr_ctx *ctx, const struct target *t)
{
	struct nccl_state *s = nccl_model(ctx);
	const struct inv_gpu *gpu = &ctx->inv.gpu[t->gpu];
	struct nccl_gpu_rails *gr = NULL;
	struct rails_proof rp;
	char mech[16] = "";
	struct result *r;

	if (ctx_gpu_hidden(ctx, t->gpu)) {
		emit(ctx, gpu->subject, ST_SKIP, C_GPU_NOT_IN_CUDA,
		     "not visible to this process (see gpu.visible)");
		return;
	}
	memset(&rp, 0, sizeof(rp));
	rp.worst = PR_PROVEN;
	rp.worst_pi = -1;
	for (size_t g = 0; g < ctx->rep->nccl.ngpus; g++)
		if (ctx->rep->nccl.gpus[g].gpu == gpu->subject)
			gr = &ctx->rep->nccl.gpus[g];
	rp.kind = cumem_of(ctx, s, t->gpu, rp.bufwhy, sizeof(rp.bufwhy));
	for (size_t n = 0; n < ctx->inv.nnic; n++) {
		int pi = nccl_pair_index(ctx, t->gpu, (int)n);

		if (pi < 0 || !s->pm[pi].rail || !s->pm[pi].used)
			continue;
		data_nccl_rail(ctx, s, gr, pi, (int)n, &rp);
	}
	if (!rp.nrails) {
		data_nccl_no_rails(ctx, s, gpu);
		return;
	}
	r = data_nccl_worst(ctx, s, &rp, gpu->subject, mech, sizeof(mech));
	ev_str(r, "rails", "%s", rp.on);
	/* The result it stands on: its fix is the root fix (failing.c). */
	if (rp.worst_why && rp.worst == PR_FAILED)
		ev_str(r, "caused_by", "%s %s", rp.worst_why->gate->id,
		       ctx->rep->subj[rp.worst_why->subject].id);
	ev_str(r, "mechanism", "%s", mech);
	ev_str(r, "buffers", "%s", kind_name(rp.kind));
	ev_str(r, "buffers_why", "%s", rp.bufwhy);
	ev_str(r, "nccl_version", "%s", s->version);
}

/* --- topo.rails ---------------------------------------------------------- */

/* "DOWN" and "Polling" from "1: DOWN" and "2: Polling", as the kernel says. */
static void port_words(const struct nccl_state *s, const char *dev, int port,
		       const char *attr, char *buf, size_t len)
{
	char p[256], t[64];
	const char *w;

	snprintf(p, sizeof(p), "/sys/class/infiniband/%s/ports/%d/%s", dev,
		 port, attr);
	if (sysroot_read_line(s->sr, p, t, sizeof(t)) < 0) {
		snprintf(buf, len, "unreadable");
		return;
	}
	w = strchr(t, ':');
	w = w ? w + 1 + strspn(w + 1, " ") : t;
	snprintf(buf, len, "%s", *w ? w : t);
}

/*
 * The rail NIC's PCIe link trained below what the NIC and its slot can do
 * (the smaller of the two max_link_* values): "x8 16.0 GT/s of x16 32.0
 * GT/s" in buf, true. Unreadable or "Unknown" values (VFs): false.
 */
static bool nic_link_short(const struct gdr_ctx *ctx,
			   const struct nccl_state *s, int node, char *buf,
			   size_t len)
{
	const struct pcinode *n;
	char t[64];
	double cur, max, pmax;
	int cw, mw, pmw;

	if (node < 0 || (size_t)node >= ctx->tree.count)
		return false;
	n = &ctx->tree.n[node];
	nccl_pci_attr(s, n->bdf, "current_link_speed", t, sizeof(t));
	if (parse_link_speed(t, &cur))
		return false;
	nccl_pci_attr(s, n->bdf, "max_link_speed", t, sizeof(t));
	if (parse_link_speed(t, &max))
		return false;
	nccl_pci_attr(s, n->bdf, "current_link_width", t, sizeof(t));
	if (parse_link_width(t, &cw))
		return false;
	nccl_pci_attr(s, n->bdf, "max_link_width", t, sizeof(t));
	if (parse_link_width(t, &mw))
		return false;
	if (n->parent >= 0) {
		const char *pb = ctx->tree.n[n->parent].bdf;

		nccl_pci_attr(s, pb, "max_link_speed", t, sizeof(t));
		if (!parse_link_speed(t, &pmax) && pmax < max)
			max = pmax;
		nccl_pci_attr(s, pb, "max_link_width", t, sizeof(t));
		if (!parse_link_width(t, &pmw) && pmw < mw)
			mw = pmw;
	}
	if (cur >= max && cw >= mw)
		return false;
	snprintf(buf, len, "x%d %.1f GT/s of x%d %.1f GT/s", cw, cur, mw, max);
	return true;
}

/* Does the exemption item ("mlx5_6/1", or "mlx5_6": every port) match? */
static bool exempt_item(const char *item, size_t n, const char *dev, int port)
{
	char p[80];

	snprintf(p, sizeof(p), "%s/%d", dev, port);
	return (n == strlen(dev) && !strncmp(item, dev, n)) ||
	       (n == strlen(p) && !strncmp(item, p, n));
}

/* Is the item in a comma or blank separated list? */
static bool exempt_list(const char *list, const char *dev, int port)
{
	while (list && *list) {
		size_t n;

		list += strspn(list, ", \t");
		n = strcspn(list, ", \t\n#");
		if (n && exempt_item(list, n, dev, port))
			return true;
		list += n;
		if (*list == '#')
			break;
	}
	return false;
}

/*
 * Exempted on purpose: --exempt-port, or an "exempt-port LIST" line of
 * /etc/gdrcheck/gdrcheck.conf (below the sysroot, so a capture keeps it).
 * Returns where the exemption came from, or NULL.
 */
static const char *exempted(struct gdr_ctx *ctx, const char *dev, int port)
{
	char buf[8192];
	const char *line;
	ssize_t n;

	for (int i = 0; i < ctx->opt->nexempt; i++)
		if (exempt_list(ctx->opt->exempt[i], dev, port))
			return "--exempt-port";
	n = sysroot_read(ctx->sr, GDRCHECK_CONF, buf, sizeof(buf));
	if (n < 0)
		return NULL;
	for (line = buf; line && *line; line = strchr(line, '\n'),
	     line = line ? line + 1 : NULL) {
		line += strspn(line, " \t");
		if (!strncmp(line, "exempt-port", 11) &&
		    (line[11] == ' ' || line[11] == '\t' || line[11] == '=') &&
		    exempt_list(line + 12, dev, port))
			return GDRCHECK_CONF;
	}
	return NULL;
}

/* "mlx5_7/1, mlx5_8/1": the GPU's rails now, or "none". */
static void rails_now(const struct gdr_ctx *ctx, const struct nccl_state *s,
		      int gpu, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t n = 0; n < ctx->inv.nnic && used < len; n++) {
		int pi = nccl_pair_index(ctx, gpu, (int)n);

		if (pi < 0 || !s->pm[pi].used || !s->pm[pi].rail)
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%s%s/%d",
					 used ? ", " : "",
					 ctx->inv.nic[n].name, s->pm[pi].port);
	}
	if (!buf[0])
		snprintf(buf, len, "none");
}

static void rail_evidence(struct result *r, const char *nic, int port,
			  const char *cause)
{
	ev_str(r, "nic", "%s", nic);
	ev_int(r, "port", port);
	ev_str(r, "cause", "%s", cause);
}

/*
 * A NIC of the node as built whose RDMA device is missing: a network
 * function of an RDMA vendor bound to its RDMA-capable driver (mlx5_core)
 * that no /sys/class/infiniband device names (mlx5_ib not bound, a probe
 * failure). Physical functions only: an SR-IOV VF without RDMA is usually
 * meant for a VM. Returns its tree index, or -1; from *next on.
 */
static int missing_rdma_fn(const struct gdr_ctx *ctx,
			   const struct nccl_state *s, size_t *next)
{
	for (size_t i = *next; i < ctx->tree.count; i++) {
		const struct pcinode *n = &ctx->tree.n[i];
		char t[64], p[128];
		bool named = false;

		if (n->bridge || n->class_bad || (n->class_code >> 16) != 0x02)
			continue;
		nccl_pci_attr(s, n->bdf, "vendor", t, sizeof(t));
		if (strtoul(t, NULL, 0) != 0x15b3)
			continue;
		snprintf(p, sizeof(p), "/sys/bus/pci/devices/%s/driver", n->bdf);
		if (sysroot_link_name(s->sr, p, t, sizeof(t)) < 0 ||
		    strcmp(t, "mlx5_core"))
			continue;
		snprintf(p, sizeof(p), "/sys/bus/pci/devices/%s/physfn", n->bdf);
		if (sysroot_exists(s->sr, p))
			continue;
		for (size_t k = 0; k < ctx->inv.nnic && !named; k++)
			named = !strcmp(ctx->inv.nic[k].pci, n->bdf);
		if (!named) {
			*next = i + 1;
			return (int)i;
		}
	}
	*next = ctx->tree.count;
	return -1;
}

/*
 * GPU g's rails lost to NICs without an RDMA device: such a NIC nearer or
 * as near (nvidia-smi class) as the GPU's nearest rail now would be one of
 * its rails as built (NCCL takes the nearest path type). One result each
 * (BLOCKED, or SKIP when exempted); returns how many.
 */
static int rails_without_rdma(struct gdr_ctx *ctx, const struct nccl_state *s,
			      int gpu, const char *now)
{
	int subject = ctx->inv.gpu[gpu].subject, node, nbad = 0;
	int gnode = pcitree_find(&ctx->tree, ctx->inv.gpu[gpu].pci);
	enum topo_class best = TOPO_UNKNOWN;
	size_t next = 0;

	if (gnode < 0)
		return 0;
	for (size_t n = 0; n < ctx->inv.nnic; n++) {
		int pi = nccl_pair_index(ctx, gpu, (int)n);

		if (pi >= 0 && s->pm[pi].used && s->pm[pi].rail &&
		    ctx->inv.pair[pi].path.cls < best)
			best = ctx->inv.pair[pi].path.cls;
	}
	while ((node = missing_rdma_fn(ctx, s, &next)) >= 0) {
		const char *bdf = ctx->tree.n[node].bdf, *why;
		struct pcipath path;
		struct result *r;

		pcitree_path(&ctx->tree, gnode, node, &path);
		if (!path.known || path.cls == TOPO_UNKNOWN || path.cls > best)
			continue;
		why = exempted(ctx, bdf, 0);
		if (why) {
			r = emit(ctx, subject, ST_SKIP, C_RAIL_EXEMPTED,
				 "%s lost rail %s (%s): no RDMA device, "
				 "exempted (%s); NCCL uses %s",
				 ctx->rep->subj[subject].id, bdf,
				 topo_class_name(path.cls), why, now);
			ev_str(r, "exempted_by", "%s", why);
		} else {
			r = emit(ctx, subject, ST_BLOCKED, C_RAIL_NO_RDMA_DEVICE,
				 "%s lost rail %s (%s): the NIC has no RDMA "
				 "device (mlx5_core bound, nothing in "
				 "/sys/class/infiniband); NCCL uses %s now",
				 ctx->rep->subj[subject].id, bdf,
				 topo_class_name(path.cls), now);
			remedy_RAIL_NO_RDMA_DEVICE(r, bdf);
		}
		nbad++;
		rail_evidence(r, bdf, 0, "rdma_device_missing");
		ev_str(r, "distance", "%s", topo_class_name(path.cls));
		ev_str(r, "rails_now", "%s", now);
	}
	return nbad;
}

/* Why NIC n's port is lost now: its state words, its rate, the cause. */
struct lost_port {
	char state[64], phys[64], rate[64], cause[160];
	int err;		/* ibv_open_device's errno: the device fails */
};

static void lost_port_facts(const struct gdr_ctx *ctx,
			    const struct nccl_state *s, size_t n, int port,
			    struct lost_port *lp)
{
	const char *dev = ctx->inv.nic[n].name;
	char p[160];

	port_words(s, dev, port, "state", lp->state, sizeof(lp->state));
	port_words(s, dev, port, "phys_state", lp->phys, sizeof(lp->phys));
	snprintf(p, sizeof(p), "/sys/class/infiniband/%s/ports/%d/rate", dev,
		 port);
	if (sysroot_read_line(s->sr, p, lp->rate, sizeof(lp->rate)) < 0)
		snprintf(lp->rate, sizeof(lp->rate), "unreadable");
	lp->err = 0;
	/* The port may be up: the device does not open. */
	if (s->nics[n].open_fails) {
		lp->err = ctx_verbs_nic(ctx, (int)n)->open_errno;
		snprintf(lp->cause, sizeof(lp->cause), "its RDMA device does "
			 "not open (ibv_open_device: %s), so NCCL skips it",
			 strerror(lp->err));
	} else {
		snprintf(lp->cause, sizeof(lp->cause), "port %s (%s)",
			 lp->state, lp->phys);
	}
}

/*
 * The rails NCCL would use with every present port ACTIVE (the node as
 * built) against those it uses now: a rail lost to a port that is not
 * ACTIVE, or one whose NIC's PCIe link trained down, fails the node (a
 * rail-optimised job runs at the pace of its slowest GPU). One result per
 * such rail; a GPU with all its rails intact gets one PASS.
 */
void gate_topo_rails(struct gdr_ctx *ctx, const struct target *t)
{
	struct nccl_state *s = nccl_model(ctx);
	int gpu = t->gpu, subject = ctx->inv.gpu[gpu].subject, nbad = 0;
	char now[256], built[256] = "";
	size_t bused = 0;
	const struct result *ns = ctx_result_of(ctx, "nic.netns", ctx->host);
	const struct result *kv = ctx_result_of(ctx, "nic.kernel_verbs",
						ctx->host);

	/* This process cannot see the node's RDMA devices: nothing to judge. */
	if ((ns && ns->code_index == C_NETNS_EXCLUSIVE_HIDDEN) ||
	    (kv && kv->code_index == C_KERNEL_VERBS_HIDDEN)) {
		emit(ctx, subject, ST_SKIP, C_RAILS_UNJUDGED, "the node's RDMA "
		     "devices are hidden from this process (%s): its rails as "
		     "built cannot be judged here", ns && ns->code_index ==
		     C_NETNS_EXCLUSIVE_HIDDEN ? "nic.netns" : "nic.kernel_verbs");
		return;
	}

	rails_now(ctx, s, gpu, now, sizeof(now));
	for (size_t n = 0; n < ctx->inv.nnic; n++) {
		const char *dev = ctx->inv.nic[n].name, *why;
		int pi = nccl_pair_index(ctx, gpu, (int)n), port;
		struct lost_port lp = { .err = 0 };
		char link[96];
		bool lost;
		struct result *r;

		if (pi < 0)
			continue;
		lost = s->built && s->built[pi].rail &&
		       !(s->pm[pi].used && s->pm[pi].rail);
		if (!lost && !(s->pm[pi].used && s->pm[pi].rail))
			continue;
		port = lost ? s->built[pi].port : s->pm[pi].port;
		if (bused < sizeof(built))
			bused += (size_t)snprintf(built + bused,
						  sizeof(built) - bused,
						  "%s%s/%d", bused ? ", " : "",
						  dev, port);
		if (!lost && !nic_link_short(ctx, s, ctx->inv.pair[pi].node_nic,
					     link, sizeof(link)))
			continue;
		nbad++;
		why = exempted(ctx, dev, port);
		if (lost)
			lost_port_facts(ctx, s, n, port, &lp);
		if (why && lost)
			r = emit(ctx, subject, ST_SKIP, C_RAIL_EXEMPTED,
				 "%s lost rail %s/%d: %s, exempted (%s); NCCL "
				 "uses %s", ctx->rep->subj[subject].id, dev,
				 port, lp.cause, why, now);
		else if (why)
			r = emit(ctx, subject, ST_SKIP, C_RAIL_EXEMPTED,
				 "%s rail %s/%d: PCIe link %s, exempted (%s)",
				 ctx->rep->subj[subject].id, dev, port, link,
				 why);
		else if (lost && lp.err) {
			r = emit(ctx, subject, ST_BLOCKED, C_RAIL_DEVICE_FAILED,
				 "%s lost rail %s/%d: %s; NCCL uses %s now",
				 ctx->rep->subj[subject].id, dev, port, lp.cause,
				 now);
			remedy_RAIL_DEVICE_FAILED(r, dev, port);
		} else if (lost) {
			r = emit(ctx, subject, ST_BLOCKED, C_RAIL_LOST,
				 "%s lost rail %s/%d: %s; NCCL uses %s now",
				 ctx->rep->subj[subject].id, dev, port, lp.cause,
				 now);
			remedy_RAIL_LOST(r, dev, port);
		} else {
			r = emit(ctx, subject, ST_BLOCKED, C_RAIL_LINK_DEGRADED,
				 "%s rail %s/%d: the NIC's PCIe link trained "
				 "down to %s", ctx->rep->subj[subject].id, dev,
				 port, link);
			remedy_RAIL_LINK_DEGRADED(r);
		}
		rail_evidence(r, dev, port, lp.err ? "device_failed" :
			      lost ? "port_down" : "link_degraded");
		if (lp.err)
			ev_int(r, "open_errno", lp.err);
		if (lost) {
			ev_str(r, "state", "%s", lp.state);
			ev_str(r, "phys_state", "%s", lp.phys);
			ev_str(r, "rate", "%s", lp.rate);
		} else {
			ev_str(r, "pcie_link", "%s", link);
		}
		if (why)
			ev_str(r, "exempted_by", "%s", why);
		ev_str(r, "rails_now", "%s", now);
	}
	nbad += rails_without_rdma(ctx, s, gpu, now);
	if (!nbad) {
		struct result *r;

		if (!bused)
			r = emit(ctx, subject, ST_PASS, C_RAILS_AS_BUILT,
				 "NCCL uses no RDMA device for this GPU, as "
				 "built");
		else
			r = emit(ctx, subject, ST_PASS, C_RAILS_AS_BUILT,
				 "every rail as built: %s", built);
		ev_str(r, "rails_now", "%s", now);
	}
}
