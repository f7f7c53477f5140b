// SPDX-License-Identifier: MIT
/*
 * The facts the NCCL model reads, gathered from the node (see
 * probes/nccl_state.h): the libnccl.so.2 a job would load and its release
 * (or a replayed capture's answer), the configuration NCCL reads, the
 * peermem files, every RDMA port's link layer, state and rate, each
 * device's PCI identity (its device link's realpath, once per run), the
 * GID tables, the PCI nodes' ids and links, and the vendor facts of the
 * GPUs and NICs. The rules that judge them are nccl/'s; no result is
 * emitted here.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "access/sysroot.h"
#include "core/xalloc.h"
#include "decode/cuda_api.h"
#include "decode/parse.h"
#include "nccl/libfind.h"
#include "nccl/rules.h"
#include "probes/nccl_state.h"
#include "probes/probes.h"

extern char **environ;

/* --- the release --------------------------------------------------------- */

/* Is there a libnccl.so.2 in dir (below the sysroot)? */
static bool try_dir(struct sysroot *sr, const char *dir, char *out, size_t len)
{
	snprintf(out, len, "%s/libnccl.so.2", dir);
	return sysroot_exists(sr, out);
}

static bool cache_exists(const char *path, void *arg)
{
	return sysroot_exists(arg, path);
}

/*
 * The loader's cache: the first entry for a ".../libnccl.so.2" that exists
 * (nccl/libfind.c parses the file; an unreadable or damaged cache is no
 * entry, as for ld.so, which then searches the default directories).
 */
static bool from_ld_cache(struct sysroot *sr, char *out, size_t len)
{
	const size_t size = 4 << 20;
	char *cache = xcalloc(1, size);
	ssize_t n = sysroot_read_bin(sr, "/etc/ld.so.cache", cache, size);
	bool found = n > 0 &&
		nccl_ldcache_find(cache, (size_t)n, "libnccl.so.2",
				  cache_exists, sr, out, len) == 1;

	free(cache);
	return found;
}

/* <prefix>/python3.*\/{site,dist}-packages/nvidia/nccl/lib (PyTorch wheels). */
static bool from_python(struct sysroot *sr, const char *prefix, char *out,
			size_t len)
{
	char **names = NULL, dir[512];
	size_t count = 0;
	bool found = false;

	if (sysroot_list(sr, prefix, &names, &count))
		return false;
	for (size_t i = 0; i < count && !found; i++) {
		if (strncmp(names[i], "python3", 7))
			continue;
		for (int k = 0; k < 2 && !found; k++) {
			snprintf(dir, sizeof(dir), "%s/%s/%s/nvidia/nccl/lib",
				 prefix, names[i],
				 k ? "dist-packages" : "site-packages");
			found = try_dir(sr, dir, out, len);
		}
	}
	sysroot_free_list(names, count);
	return found;
}

/*
 * The libnccl.so.2 a job would load: LD_LIBRARY_PATH, the loader's cache,
 * the default directories, then a pip "nvidia-nccl" wheel (PyTorch's).
 * *how says which.
 */
static bool find_libnccl(struct sysroot *sr, char *out, size_t len,
			 const char **how)
{
	static const char *const dirs[] = {
		"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
		"/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
		"/lib64", "/usr/lib64", "/lib", "/usr/lib", "/usr/local/lib",
		"/usr/local/cuda/lib64", "/usr/local/nccl/lib", "/opt/nccl/lib",
	};
	static const char *const pydirs[] = {
		"/usr/local/lib", "/usr/lib", "/opt/conda/lib",
	};
	const char *llp = getenv("LD_LIBRARY_PATH");

	if (llp) {
		char copy[4096], *save = NULL;

		snprintf(copy, sizeof(copy), "%s", llp);
		for (char *d = strtok_r(copy, ":", &save); d;
		     d = strtok_r(NULL, ":", &save))
			if (*d && try_dir(sr, d, out, len)) {
				*how = "LD_LIBRARY_PATH";
				return true;
			}
	}
	if (from_ld_cache(sr, out, len)) {
		*how = "/etc/ld.so.cache";
		return true;
	}
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (try_dir(sr, dirs[i], out, len)) {
			*how = "default library directory";
			return true;
		}
	for (size_t i = 0; i < sizeof(pydirs) / sizeof(pydirs[0]); i++)
		if (from_python(sr, pydirs[i], out, len)) {
			*how = "python wheel nvidia/nccl (PyTorch)";
			return true;
		}
	return false;
}

/*
 * /gdrcheck/libnccl of a capture: "none", or "HOW<TAB>PATH<TAB>REAL<TAB>
 * VERSION" (0: none readable) for the libnccl.so.2 the node's loader would
 * find (the library itself stays on the node). The environment NCCL reads
 * is /gdrcheck/environ (access/capture.c).
 */
static void capture_libnccl(struct gdr_ctx *ctx, const char *how,
			    const char *path, const char *real, int ver)
{
	char *text;

	if (!how) {
		capfact_write(ctx, "libnccl", "none\n");
		return;
	}
	if (asprintf(&text, "%s\t%s\t%s\t%d\n", how, path, real, ver) < 0)
		return;
	capfact_write(ctx, "libnccl", text);
	free(text);
}

/*
 * The node's environment from a replayed capture's /gdrcheck/environ
 * ("NAME=value" lines); empty for a capture without it.
 */
static void replay_env(struct gdr_ctx *ctx, struct nccl_state *s)
{
	size_t n = 0, cap = 8;
	char *save = NULL, *line;

	s->cap_env = xcalloc(cap, sizeof(*s->cap_env));
	s->cap_envtext = capfact_read(ctx, "environ");
	if (!s->cap_envtext)
		return;
	for (line = strtok_r(s->cap_envtext, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strchr(line, '='))
			continue;
		if (n + 1 >= cap) {
			cap *= 2;
			s->cap_env = xrealloc(s->cap_env,
					      cap * sizeof(*s->cap_env));
		}
		s->cap_env[n++] = line;
	}
	s->cap_env[n] = NULL;
}

/* A replayed /gdrcheck/libnccl; false: "none". */
static bool replay_libnccl(struct nccl_state *s, char *path, size_t plen,
			   char *real, size_t rlen, char *how, size_t hlen,
			   int *ver)
{
	char h[64] = "", p[PATH_MAX] = "", r[PATH_MAX] = "";

	*ver = 0;
	if (!strncmp(s->cap_lib, "none", 4) ||
	    sscanf(s->cap_lib, "%63[^\t]\t%4095[^\t]\t%4095[^\t]\t%d", h,
		   p, r, ver) != 4)
		return false;
	snprintf(path, plen, "%s", p);
	snprintf(real, rlen, "%s", r);
	snprintf(how, hlen, "%s", h);
	return true;
}

/*
 * A library is read for its version string only when it is a regular
 * file: opened non-blocking (a FIFO at --libnccl or on the loader path
 * would block the run past every deadline), anything else refused
 * (/dev/zero never ends). Returns fd, or -1 with fd closed.
 */
#define LIB_OPEN_FLAGS (O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
static int regular_fd(int fd)
{
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* No release known: the newest modelled is assumed, and why. */
static void assume_newest(struct nccl_state *s, enum reason_code code,
			  const char *why)
{
	s->ver = NCCL_VER_NEWEST;
	s->vcode = code;
	snprintf(s->vsrc, sizeof(s->vsrc), "%s", why);
}

static void pick_version(struct gdr_ctx *ctx, struct nccl_state *s)
{
	const struct options *o = ctx->opt;
	char path[PATH_MAX], real[PATH_MAX], rhow[64];
	const char *how = "--libnccl";
	int ver = 0, fd;
	bool ok;

	s->vcode = C_NCCL_CONFIG;
	if (o->nccl_version) {
		s->ver = o->nccl_version;
		snprintf(s->vsrc, sizeof(s->vsrc), "--nccl-version");
		capture_libnccl(ctx, "--nccl-version", "-", "-", s->ver);
		goto done;
	}
	if (s->replay && !o->libnccl) {
		if (!s->cap_lib) {
			assume_newest(s, C_NOT_REPLAYED, "assumed: this capture "
				      "(an older gdrcheck's) does not hold the "
				      "node's libnccl.so.2 and NCCL settings");
			goto done;
		}
		if (!replay_libnccl(s, path, sizeof(path), real, sizeof(real),
				    rhow, sizeof(rhow), &ver))
			goto none;
		if (!strcmp(rhow, "--nccl-version") && ver > 0) {
			/* The node's run named the release. */
			s->ver = ver;
			snprintf(s->vsrc, sizeof(s->vsrc), "--nccl-version");
			goto done;
		}
		how = rhow;
		ok = ver > 0;
		goto have;
	}
	if (o->libnccl) {
		snprintf(path, sizeof(path), "%s", o->libnccl);
		fd = regular_fd(open(path, LIB_OPEN_FLAGS));
		if (!realpath(path, real))
			snprintf(real, sizeof(real), "%s", path);
	} else if (find_libnccl(ctx->sr, path, sizeof(path), &how)) {
		fd = sysroot_open_regular(ctx->sr, path);
		if (fd < 0)
			fd = -1;
		if (sysroot_realpath(ctx->sr, path, real, sizeof(real)))
			snprintf(real, sizeof(real), "%s", path);
	} else {
		capture_libnccl(ctx, NULL, NULL, NULL, 0);
none:
		assume_newest(s, C_NCCL_NOT_FOUND, "assumed: no libnccl.so.2 "
			      "found (LD_LIBRARY_PATH, ld.so.cache, library "
			      "directories, python nvidia/nccl wheels)");
		goto done;
	}
	ok = nccl_version_from_name(real, &ver);
	if (!ok && fd >= 0)
		ok = nccl_version_from_fd(fd, &ver);
	if (fd >= 0)
		close(fd);
	capture_libnccl(ctx, how, path, real, ok ? ver : 0);
have:
	if (!ok) {
		s->ver = NCCL_VER_NEWEST;
		s->vcode = C_NCCL_VERSION_UNREADABLE;
		snprintf(s->vsrc, sizeof(s->vsrc), "%.200s (%s): no version in its "
			 "name or contents", path, how);
		goto done;
	}
	s->ver = ver;
	snprintf(s->vsrc, sizeof(s->vsrc), "%.200s (%s)", real, how);
	if (ver < NCCL_VER_OLDEST || ver > NCCL_VER_NEWEST) {
		s->vcode = C_NCCL_VERSION_OUTSIDE_MODEL;
		s->ver = ver < NCCL_VER_OLDEST ? NCCL_VER_OLDEST : NCCL_VER_NEWEST;
	}
done:
	nccl_ver_string(s->vcode == C_NCCL_VERSION_OUTSIDE_MODEL ? ver : s->ver,
			s->version, sizeof(s->version));
}

/* --- settings ------------------------------------------------------------ */

/*
 * The release, the effective configuration (nccl_conf_load), the settings
 * (nccl_settings_read), and whether NCCL sees peermem.
 */
void nccl_facts_release(struct gdr_ctx *ctx, struct nccl_state *s)
{
	s->sr = ctx->sr;
	s->replay = capture_replaying(ctx);
	if (s->replay) {
		s->cap_lib = capfact_read(ctx, "libnccl");
		replay_env(ctx, s);
	}
	pick_version(ctx, s);
	s->conf_err = nccl_conf_load(&s->conf, ctx->sr, s->ver, s->replay ?
				     s->cap_env : (const char *const *)environ);
	nccl_settings_read(&s->conf, s->ver, &s->set);
	/* ncclIbGdrSupport (net_ib): any of these means peermem. */
	s->peermem = sysroot_exists(s->sr, "/sys/kernel/mm/memory_peers/nv_mem/version") ||
		     sysroot_exists(s->sr, "/sys/kernel/mm/memory_peers/nv_mem_nc/version") ||
		     (s->ver >= NCCL_VER(2, 23, 4) &&
		      sysroot_exists(s->sr, "/sys/module/nvidia_peermem/version"));
}

/* --- NCCL's PCI view: Broadcom flattening, link bandwidths -------------- */

void nccl_pci_attr(const struct nccl_state *s, const char *bdf,
		   const char *attr, char *buf, size_t len)
{
	char p[160];

	snprintf(p, sizeof(p), "/sys/bus/pci/devices/%s/%s", bdf, attr);
	if (sysroot_read_line(s->sr, p, buf, len) < 0)
		buf[0] = '\0';
}

/* topo.cc ncclTopoGetIntDevice: strtol(.., 0) of the four sysfs ids. */
static uint64_t pci_id_of(const struct nccl_state *s, const char *bdf)
{
	static const char *const f[4] = {
		"vendor", "device", "subsystem_vendor", "subsystem_device",
	};
	unsigned int v[4];
	char t[32];

	for (int i = 0; i < 4; i++) {
		nccl_pci_attr(s, bdf, f[i], t, sizeof(t));
		v[i] = (unsigned int)strtoul(t, NULL, 0);
	}
	return nccl_pci_id(v[0], v[1], v[2], v[3]);
}

/*
 * The link NCCL gives tree node i towards its parent (xml.cc link_speed,
 * link_width; nccl_pci_bw). nvml: 2.30.7 reads a GPU's link from NVML
 * (nvmlDeviceGetCurrPcieLinkGeneration/Width, the current link, not
 * compared with the port): the state sysfs shows as current_link_*.
 */
static double link_bw_read(const struct gdr_ctx *ctx,
			   const struct nccl_state *s, int i, bool nvml)
{
	const struct pcinode *n = &ctx->tree.n[i];
	char ds[64], dw[16], ps[64] = "", pw[16] = "";
	float gts;

	if (nvml) {
		nccl_pci_attr(s, n->bdf, "current_link_speed", ds, sizeof(ds));
		nccl_pci_attr(s, n->bdf, "current_link_width", dw, sizeof(dw));
		if (sscanf(ds, "%f GT/s", &gts) == 1 && gts > 0)
			snprintf(ds, sizeof(ds), "%.1f GT/s PCIe", gts);
		else
			snprintf(ds, sizeof(ds), "16.0 GT/s");
		if (strtol(dw, NULL, 0) <= 0)
			snprintf(dw, sizeof(dw), "16");
		return nccl_pci_bw(ds, NULL, dw, NULL);
	}
	nccl_pci_attr(s, n->bdf, "max_link_speed", ds, sizeof(ds));
	nccl_pci_attr(s, n->bdf, "max_link_width", dw, sizeof(dw));
	if (n->parent >= 0) {
		nccl_pci_attr(s, ctx->tree.n[n->parent].bdf, "max_link_speed", ps,
			 sizeof(ps));
		nccl_pci_attr(s, ctx->tree.n[n->parent].bdf, "max_link_width", pw,
			 sizeof(pw));
	}
	return nccl_pci_bw(ds, ps, dw, pw);
}

static double link_bw(const struct gdr_ctx *ctx, const struct nccl_state *s,
		      int i, bool nvml)
{
	struct node_memo *m;

	if (i < 0 || (size_t)i >= ctx->tree.count)
		return link_bw_read(ctx, s, i, nvml);
	m = &s->memo[i];
	if (!m->bw_read[nvml]) {
		m->bw[nvml] = link_bw_read(ctx, s, i, nvml);
		m->bw_read[nvml] = true;
	}
	return m->bw[nvml];
}

/* pci_id_of tree node i, read once. */
static uint64_t node_id(const struct gdr_ctx *ctx, const struct nccl_state *s,
			int i)
{
	struct node_memo *m = &s->memo[i];

	if (!m->id_read) {
		m->id = pci_id_of(s, ctx->tree.n[i].bdf);
		m->id_read = true;
	}
	return m->id;
}

/* Does switch a's virtual_switch_links directory name switch b? */
static bool bcm_link(const struct gdr_ctx *ctx, const struct nccl_state *s,
		     int a, int b)
{
	const char *ab = ctx->tree.n[a].bdf, *bb = ctx->tree.n[b].bdf;
	char p[192], v[32];

	nccl_pci_attr(s, ab, "vendor", v, sizeof(v));
	if (strcmp(v, "0x1000") || strlen(bb) != 12)
		return false;
	/* The switch's own directory first: one lookup per switch (memo). */
	snprintf(p, sizeof(p), "/sys/kernel/pci_switch_link/"
		 "virtual_switch_links/%s", ab);
	if (!sysroot_exists(s->sr, p))
		return false;
	snprintf(p, sizeof(p), "/sys/kernel/pci_switch_link/"
		 "virtual_switch_links/%s/%s", ab, bb);
	if (!sysroot_exists(s->sr, p))
		return false;
	snprintf(p, sizeof(p), "/sys/bus/pci/devices/%s", bb);
	return sysroot_exists(s->sr, p);
}

/* nccl/pciview.c's reader: sysfs facts of tree nodes, each read once. */
static uint64_t reader_id(void *arg, int node)
{
	struct nccl_pci_facts *a = arg;

	return node_id(a->ctx, a->s, node);
}

static double reader_link_bw(void *arg, int node, bool nvml)
{
	struct nccl_pci_facts *a = arg;

	return link_bw(a->ctx, a->s, node, nvml);
}

static bool reader_bcm_link(void *arg, int x, int y)
{
	struct nccl_pci_facts *a = arg;

	return bcm_link(a->ctx, a->s, x, y);
}

/* --- ports --------------------------------------------------------------- */

static int port_line(const struct nccl_state *s, const char *dev, int port,
		     const char *attr, char *buf, size_t len)
{
	char p[256];

	snprintf(p, sizeof(p), "/sys/class/infiniband/%s/ports/%d/%s", dev,
		 port, attr);
	return sysroot_read_line(s->sr, p, buf, len);
}

/*
 * A port's link layer; its state where NCCL takes the link layer; its
 * rate where NCCL_IB_HCA selects it too (the files a pass reads).
 */
static void port_facts(const struct nccl_state *s, const char *dev,
		       struct nccl_port_facts *f)
{
	char t[64];

	f->link = port_line(s, dev, f->num, "link_layer", t, sizeof(t)) < 0 ?
		  NCCL_LINK_UNREAD : nccl_link_of(t);
	if (f->link == NCCL_LINK_OTHER)
		return;
	f->state_known = port_line(s, dev, f->num, "state", t, sizeof(t)) >= 0 &&
			 nccl_port_state_of(t, &f->state);
	if (nccl_port_listed(&s->set, dev, f))
		f->rate_read = port_line(s, dev, f->num, "rate", f->rate,
					 sizeof(f->rate)) >= 0;
}

/*
 * The device refuses ibv_open_device for a reason of its own (the verbs
 * stage's errno; nic.uverbs UVERBS_OPEN_FAILED): NCCL skips it as well.
 * Refused for this process's rights or view of /dev: unknown, kept.
 */
static bool nic_open_fails(const struct gdr_ctx *ctx, int nic)
{
	const struct verbs_nic *v = ctx_verbs_nic(ctx, nic);

	return v && !v->opened && open_errno_is_device(v->open_errno);
}

/*
 * Every NIC's ports and the real path of its device link (the PCI
 * identity NCCL's IB plugin takes, ncclIbGetPciPath), read once a run;
 * and the PCI reader over s->memo.
 */
void nccl_facts_node_files(struct gdr_ctx *ctx, struct nccl_state *s)
{
	const struct inventory *inv = &ctx->inv;
	size_t total = 0, at = 0;
	char p[192];

	for (size_t n = 0; n < inv->nnic; n++)
		total += inv->nic[n].nports;
	s->nics = xcalloc(inv->nnic + 1, sizeof(*s->nics));
	s->ports = xcalloc(total + 1, sizeof(*s->ports));
	s->real = xcalloc(inv->nnic + 1, sizeof(*s->real));
	s->nnic = inv->nnic;
	for (size_t n = 0; n < inv->nnic; n++) {
		const struct inv_nic *nic = &inv->nic[n];

		s->nics[n].name = nic->name;
		s->nics[n].port = s->ports + at;
		s->nics[n].nports = nic->nports;
		s->nics[n].real = s->real[n];
		s->nics[n].open_fails = nic_open_fails(ctx, (int)n);
		for (size_t k = 0; k < nic->nports; k++, at++) {
			s->ports[at].num = nic->ports[k].num;
			port_facts(s, nic->name, &s->ports[at]);
		}
		snprintf(p, sizeof(p), "/sys/class/infiniband/%s/device",
			 nic->name);
		if (sysroot_realpath(ctx->sr, p, s->real[n], PATH_MAX) < 0)
			s->real[n][0] = '\0';
	}
	s->memo = xcalloc(ctx->tree.count + 1, sizeof(*s->memo));
	s->rd_arg.ctx = ctx;
	s->rd_arg.s = s;
	s->rd.arg = &s->rd_arg;
	s->rd.id = reader_id;
	s->rd.link_bw = reader_link_bw;
	s->rd.bcm_link = reader_bcm_link;
}

const struct nccl_port_facts *nccl_port_of(const struct nccl_state *s,
					   int nic, int port)
{
	const struct nccl_nic_ports *n = &s->nics[nic];

	for (size_t k = 0; k < n->nports; k++)
		if (n->port[k].num == port)
			return &n->port[k];
	return NULL;
}

/*
 * The sysfs GID table of an Ethernet port (RoCE) into tbl; 0 entries on
 * IB, an unreadable link layer or table.
 */
int nccl_facts_gid_table(const struct nccl_state *s, int nic, int port,
			 struct nccl_gid *tbl, int max)
{
	const struct nccl_port_facts *f = nccl_port_of(s, nic, port);
	const char *dev = s->nics[nic].name;
	char p[64], t[128];
	int n;

	if (!f || f->link != NCCL_LINK_ETH)
		return 0;
	for (n = 0; n < max; n++) {
		snprintf(p, sizeof(p), "gids/%d", n);
		if (port_line(s, dev, port, p, t, sizeof(t)) < 0)
			break;
		if (!nccl_gid_text(t, tbl[n].raw))
			memset(tbl[n].raw, 0, 16);
		snprintf(p, sizeof(p), "gid_attrs/types/%d", n);
		tbl[n].roce_ver = port_line(s, dev, port, p, t, sizeof(t)) < 0 ?
				  0 : nccl_gid_type_of(t);
	}
	return n;
}

/* --- the GPUs and NICs' vendor facts ------------------------------------ */

static bool nic_dmabuf(const struct gdr_ctx *ctx, const struct nccl_state *s,
		       int nic)
{
	const struct verbs_nic *v = ctx_verbs_nic(ctx, nic);

	/*
	 * NCCL's rule, not mech.dmabuf_provider's stricter one (which calls
	 * anything but EBADF unexpected): ncclIbDmaBufSupport counts every
	 * errno but EOPNOTSUPP (2.13.4+) and EPROTONOSUPPORT (2.14.3+) as
	 * supported, EINVAL and 0 included (nccl_dmabuf_probe_ok; scenario
	 * nccl-dmabuf-probe-einval). No ibv_reg_dmabuf_mr: NCCL's wrapper
	 * answers EOPNOTSUPP (ibvwrap.cc wrap_direct_ibv_reg_dmabuf_mr). No
	 * probe because ibv_alloc_pd failed: NCCL's NCCLCHECKGOTO takes the
	 * failure branch (unsupported).
	 */
	if (!ctx->vf->verbs.have_reg_dmabuf_mr || !v || !v->probe_run)
		return false;
	return nccl_dmabuf_probe_ok(s->ver, v->probe_errno);
}

static bool comm_dmabuf(const struct gdr_ctx *ctx, const struct nccl_state *s,
			int gpu)
{
	const struct cuda_gpu *g = ctx_cuda_gpu(ctx, gpu);

	return g && nccl_dmabuf_comm(s->ver, s->set.dmabuf_enable,
				     ctx->vf->verbs.have_reg_dmabuf_mr,
				     ctx->vf->cuda.driver_version,
				     g->attr_dmabuf == CU_ATTR_UNKNOWN ? 0 :
				     g->attr_dmabuf);
}

/*
 * Why ncclIbGdrSupport / the DMA-BUF checks cannot be answered for this GPU
 * and NIC here, or NULL: their inputs (the GPU's attributes, the NIC's
 * provider probe) were never read, so "no GDR support" would be a guess.
 */
/* A GPU input of the GDR decision never answered: why, else NULL. */
static const char *gpu_inputs_unknown(const struct gdr_ctx *ctx, int gpu)
{
	const struct cuda_gpu *g = ctx_cuda_gpu(ctx, gpu);

	if (ctx_gpu_hidden(ctx, gpu))
		return "the GPU is hidden from this process (see gpu.visible)";
	if (!g)
		return "CUDA did not answer for this GPU (see gpu.cuinit, "
		       "gpu.devices)";
	if (g->attr_gdr == CU_ATTR_UNKNOWN || g->attr_dmabuf == CU_ATTR_UNKNOWN)
		return "the GPU's GPUDirect RDMA and DMA-BUF attributes were "
		       "not answered (see gpu.gdr_attr, gpu.dmabuf_attr)";
	return NULL;
}

/* The NIC's DMA-BUF support never learnt: why, else NULL. */
static const char *nic_inputs_unknown(const struct gdr_ctx *ctx, int nic)
{
	const struct verbs_nic *v = ctx_verbs_nic(ctx, nic);

	if (ctx->vf->verbs.have_reg_dmabuf_mr && (!v || !v->opened))
		return "this process could not open the RDMA device, so its "
		       "DMA-BUF support is unknown (see nic.uverbs)";
	return NULL;
}

/*
 * The GPU's path to its local CPU as NCCL computes it (nccl_gpu_cpu_path:
 * C2C since 2.26.2 when NVML shows NVLink-C2C and cc >= 9.0). NCCL reads
 * the C2C link count and status field values; gdrcheck has NVML's C2C
 * mode (gpu_is_c2c), the same fact on GH200/GB200. An unanswered compute
 * capability counts as 9.0: only Grace GPUs answer C2C at all.
 */
static enum nccl_ptype gpu_cpu_path(const struct gdr_ctx *ctx,
				    const struct nccl_state *s, int gpu)
{
	const struct cuda_gpu *g = ctx_cuda_gpu(ctx, gpu);
	int cc = 90;

	/* Only an answer inside its domain counts (out-of-range scenario). */
	if (g && !(g->attr_unanswered & (CU_SLOT_BIT(CU_SLOT_CC_MAJOR) |
					  CU_SLOT_BIT(CU_SLOT_CC_MINOR))) &&
	    !cuda_attr_check(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
			     g->cc_major) &&
	    !cuda_attr_check(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
			     g->cc_minor))
		cc = g->cc_major * 10 + g->cc_minor;
	return nccl_gpu_cpu_path(s->ver, gpu_is_c2c(ctx, gpu) == 1, cc);
}

/* What the GDR decision and the mechanism read of GPU gpu. */
static void gpu_facts(const struct gdr_ctx *ctx, const struct nccl_state *s,
		      int gpu, struct nccl_gpu_facts *f)
{
	const struct cuda_gpu *g = ctx_cuda_gpu(ctx, gpu);

	f->dev = g ? g->ordinal : gpu;
	f->cpu_path = gpu_cpu_path(ctx, s, gpu);
	f->gdr = !g || g->attr_gdr != 0;
	/*
	 * Only an answered compute capability inside its domain counts; else
	 * the read rule falls back to the newest GPUs' (cc >= 8: on), and the
	 * result says it assumed.
	 */
	f->cc_unknown = !g ||
		(g->attr_unanswered & (CU_SLOT_BIT(CU_SLOT_CC_MAJOR) |
				       CU_SLOT_BIT(CU_SLOT_CC_MINOR))) ||
		cuda_attr_check(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
				g->cc_major) ||
		cuda_attr_check(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
				g->cc_minor);
	f->cc = f->cc_unknown ? 90 : g->cc_major * 10 + g->cc_minor;
	f->c2c = gpu_is_c2c(ctx, gpu) == 1;
	f->comm_dmabuf = comm_dmabuf(ctx, s, gpu);
	f->unknown = gpu_inputs_unknown(ctx, gpu);
}

/*
 * What nccl/model.c reads of the node: the pairs' GPU and NIC, each GPU's
 * and NIC's facts, the NVLink peers and the settings. Filled once;
 * pair_at is filled by each pass (probes/nccl_state.c model_pass).
 */
void nccl_facts_node(struct gdr_ctx *ctx, const struct nccl_state *s,
		     struct nccl_node *nd)
{
	const struct inventory *inv = &ctx->inv;
	int *pair_gpu = xcalloc(inv->npair + 1, sizeof(int));
	int *pair_nic = xcalloc(inv->npair + 1, sizeof(int));
	struct nccl_gpu_facts *gpu = xcalloc(inv->ngpu + 1, sizeof(*gpu));
	struct nccl_nic_facts *nic = xcalloc(inv->nnic + 1, sizeof(*nic));
	int *npeers = xcalloc(inv->ngpu + 1, sizeof(int));
	/* Row g: the NVLink peers of GPU g (at most every other GPU). */
	int *peers = xcalloc(inv->ngpu * inv->ngpu + 1, sizeof(*peers));

	memset(nd, 0, sizeof(*nd));
	for (size_t i = 0; i < inv->npair; i++) {
		pair_gpu[i] = inv->pair[i].gpu;
		pair_nic[i] = inv->pair[i].nic;
	}
	for (size_t g = 0; g < inv->ngpu; g++) {
		gpu_facts(ctx, s, (int)g, &gpu[g]);
		npeers[g] = gpu_nvlink_peers(ctx, (int)g, peers + g * inv->ngpu,
					     (int)inv->ngpu);
	}
	for (size_t n = 0; n < inv->nnic; n++) {
		nic[n].dmabuf = nic_dmabuf(ctx, s, (int)n);
		nic[n].unknown = nic_inputs_unknown(ctx, (int)n);
	}
	nd->ver = s->ver;
	nd->ngpu = inv->ngpu;
	nd->nnic = inv->nnic;
	nd->npair = inv->npair;
	nd->pair_gpu = pair_gpu;
	nd->pair_nic = pair_nic;
	nd->pair_at = s->pair_at;
	nd->gpu = gpu;
	nd->nic = nic;
	nd->npeers = npeers;
	nd->peers = peers;
	nd->peermem = s->peermem;
	nd->gdr_read = s->set.gdr_read;
	nd->gdr_c2c = s->set.gdr_c2c;
	nd->level_set = s->set.level_set;
	nd->level = s->set.level;
	nd->pxn_disable = s->set.pxn_disable;
	nd->pxn_c2c = s->set.pxn_c2c;
	nd->netdevs_policy = nccl_get(s, "NCCL_NETDEVS_POLICY");
}

void nccl_facts_node_free(struct nccl_node *nd)
{
	free((void *)nd->pair_gpu);
	free((void *)nd->pair_nic);
	free((void *)nd->gpu);
	free((void *)nd->nic);
	free((void *)nd->npeers);
	free((void *)nd->peers);
}

/* The facts' storage (nccl_state_free). */
void nccl_facts_free(struct nccl_state *s)
{
	nccl_conf_free(&s->conf);
	free(s->cap_lib);
	free(s->cap_envtext);
	free(s->cap_env);
	free(s->memo);
	free(s->nics);
	free(s->ports);
	free(s->real);
}
