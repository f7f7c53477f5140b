// SPDX-License-Identifier: MIT
/* Layer 2: the NIC — libibverbs, kernel verbs, devices, uverbs nodes, ports. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access/ibsysfs.h"
#include "access/sysroot.h"
#include "decode/parse.h"
#include "probes/probes.h"
#include "core/xalloc.h"

#define IB_CLASS	"/sys/class/infiniband"
#define UVERBS_CLASS	"/sys/class/infiniband_verbs"

/* RDMA kernel drivers worth naming when no device is bound. */
static const char *const rdma_modules[] = {
	"ib_core", "ib_uverbs", "mlx5_core", "mlx5_ib", "mlx4_core", "mlx4_ib",
	"irdma", "bnxt_re", "efa", "rdma_rxe", "siw", "ionic_rdma",
};

void gate_nic_libibverbs(struct gdr_ctx *ctx, const struct target *t)
{
	const struct verbs_facts *v = &ctx->vf->verbs;
	const struct lib_facts *lf = &v->lib;
	char why[256] = "";
	struct result *r;

	if (lf->loaded) {
		r = emit(ctx, ctx->host, ST_PASS, C_LIBIBVERBS_OK,
			 "%s loaded; ibv_reg_dmabuf_mr %s, ibv_reg_mr_iova2 %s",
			 lf->path, v->have_reg_dmabuf_mr ? "present" : "absent",
			 v->have_reg_mr_iova2 ? "present" : "absent");
		ev_str(r, "path", "%s", lf->path);
		ev_bool(r, "ibv_reg_dmabuf_mr@IBVERBS_1.12", v->have_reg_dmabuf_mr);
		ev_bool(r, "ibv_reg_mr_iova2@IBVERBS_1.8", v->have_reg_mr_iova2);
		ev_bool(r, "_ibv_query_gid_ex@IBVERBS_1.11", v->have_query_gid_ex);
		return;
	}
	r = not_replayed(ctx, lf, ctx->opt->libibverbs, WSTAGE_VERBS,
			 "libibverbs");
	if (r) {
		remedy_NOT_REPLAYED_VERBS(r);
		return;
	}
	/* stage_problem first: it always sets why. */
	if (stage_problem(ctx, WSTAGE_VERBS, why, sizeof(why)) || !lf->attempted) {
		if (!lf->attempted && !why[0])
			snprintf(why, sizeof(why), "the verbs stage did not run");
		emit(ctx, ctx->host, ST_ERROR, C_LIBIBVERBS_PROBE_FAILED,
		     "loading libibverbs: %s", why);
		return;
	}
	if (lf->missing_required[0])
		r = emit(ctx, ctx->host, ST_BLOCKED, C_LIBIBVERBS_INCOMPLETE,
			 "%s lacks required symbols: %s", lf->path,
			 lf->missing_required);
	else
		r = emit(ctx, ctx->host, ST_BLOCKED, C_LIBIBVERBS_NOT_FOUND,
			 "cannot load %s: %s", lf->path, lf->error);
	remedy_LIBIBVERBS_NOT_FOUND(r);
	ev_str(r, "path", "%s", lf->path);
	ev_str(r, "error", "%s", lf->error);
}

void gate_nic_kernel_verbs(struct gdr_ctx *ctx, const struct target *t)
{
	long long abi;
	struct result *r;
	int ret = sysroot_read_ll(ctx->sr, UVERBS_CLASS "/abi_version", &abi);

	if (ret == 0) {
		r = emit(ctx, ctx->host, ST_PASS, C_KERNEL_VERBS_OK,
			 "kernel user verbs (ib_uverbs) present, ABI %lld", abi);
		ev_int(r, "abi_version", abi);
		return;
	}
	if (path_state_of(ret) == PATH_ABSENT &&
	    sysroot_exists(ctx->sr, "/sys/module/ib_uverbs")) {
		/* Loaded, not seen: "not loaded" would contradict nic.devices. */
		r = emit(ctx, ctx->host, ST_BLOCKED, C_KERNEL_VERBS_HIDDEN,
			 "%s/abi_version absent although ib_uverbs is loaded "
			 "(/sys/module/ib_uverbs): this process does not see "
			 "the uverbs class", UVERBS_CLASS);
		remedy_KERNEL_VERBS_HIDDEN(r);
		return;
	}
	if (path_state_of(ret) == PATH_ABSENT) {
		r = emit(ctx, ctx->host, ST_BLOCKED, C_KERNEL_VERBS_MISSING,
			 "%s/abi_version absent: ib_uverbs is not loaded", UVERBS_CLASS);
		remedy_KERNEL_VERBS_MISSING(r);
		ret = sysroot_access(ctx->sr, "/sys/module/ib_core");
		if (path_state_of(ret) == PATH_UNREADABLE)
			ev_str(r, "ib_core_loaded", "unreadable: %s",
			       strerrorname_np(-ret));
		else
			ev_bool(r, "ib_core_loaded", !ret);
		return;
	}
	emit(ctx, ctx->host, ST_ERROR, C_KERNEL_VERBS_UNREADABLE,
	     "%s/abi_version: %s", UVERBS_CLASS,
	     ret == -EINVAL ? "not a number" : sysroot_strerror(-ret));
}

void gate_nic_devices(struct gdr_ctx *ctx, const struct target *t)
{
	const struct verbs_facts *v = &ctx->vf->verbs;
	char names[512] = "", mods[256] = "";
	struct result *r;
	size_t used = 0;

	if (path_state_of(-ctx->inv.ib_errno) == PATH_UNREADABLE) {
		emit(ctx, ctx->host, ST_ERROR, C_RDMA_CLASS_UNREADABLE,
		     "cannot list %s: %s", IB_CLASS, strerror(ctx->inv.ib_errno));
		return;
	}
	for (size_t i = 0; i < ctx->inv.nnic; i++)
		used += (size_t)snprintf(names + used, used < sizeof(names) ?
					 sizeof(names) - used : 0, "%s%s",
					 i ? " " : "", ctx->inv.nic[i].name);
	used = 0;
	for (size_t i = 0; i < sizeof(rdma_modules) / sizeof(rdma_modules[0]); i++) {
		char p[96];

		snprintf(p, sizeof(p), "/sys/module/%s", rdma_modules[i]);
		if (sysroot_exists(ctx->sr, p))
			used += (size_t)snprintf(mods + used, used < sizeof(mods) ?
						 sizeof(mods) - used : 0, "%s%s",
						 used ? " " : "", rdma_modules[i]);
	}
	if (ctx->inv.nnic) {
		r = emit(ctx, ctx->host, ST_PASS, C_RDMA_DEVICES,
			 "%zu RDMA device(s): %s", ctx->inv.nnic, names);
	} else {
		r = emit(ctx, ctx->host, ST_BLOCKED, C_NO_RDMA_DEVICE,
			 "no RDMA device in %s%s%s", IB_CLASS,
			 mods[0] ? " although these modules are loaded: " : "",
			 mods);
		remedy_NO_RDMA_DEVICE(r);
	}
	ev_str(r, "sysfs_devices", "%s", names);
	ev_str(r, "rdma_modules", "%s", mods);
	if (v->list_called)
		ev_int(r, "verbs_devices", v->count);
}

/* uverbsN -> ibdev, read once per run (one listing, not one per NIC). */

/* Remember the first lookup that failed for another reason than absence. */
static void uverbs_map_error(struct uverbs_map *um, const char *path, int ret)
{
	if (um->err || path_state_of(ret) != PATH_UNREADABLE)
		return;
	um->err = ret;
	snprintf(um->err_path, sizeof(um->err_path), "%s", path);
}

static void uverbs_map_load(struct gdr_ctx *ctx)
{
	struct uverbs_map *um = &ctx->uverbs;
	char **names;
	size_t n;
	int ret;

	if (um->loaded)
		return;
	um->loaded = true;
	ret = sysroot_list(ctx->sr, UVERBS_CLASS, &names, &n);
	if (ret) {
		uverbs_map_error(um, UVERBS_CLASS, ret);
		return;
	}
	um->node = xcalloc(n, sizeof(*um->node));
	um->ibdev = xcalloc(n, sizeof(*um->ibdev));
	for (size_t i = 0; i < n; i++) {
		char p[256];
		size_t k = um->n;

		if (strncmp(names[i], "uverbs", 6) ||
		    strlen(names[i]) >= sizeof(um->node[0]))
			continue;
		snprintf(p, sizeof(p), UVERBS_CLASS "/%s/ibdev", names[i]);
		ret = sysroot_read_line(ctx->sr, p, um->ibdev[k],
					sizeof(um->ibdev[0]));
		if (ret) {
			uverbs_map_error(um, p, ret);
			continue;
		}
		strcpy(um->node[k], names[i]);
		um->n++;
	}
	sysroot_free_list(names, n);
}

/*
 * The uverbs node that belongs to ibdev, found by its ibdev attribute:
 * -ENOENT when there is none, another -errno when an entry that could be
 * it was unreadable.
 */
static int find_uverbs(struct gdr_ctx *ctx, const char *ibdev, char *out,
		       size_t len)
{
	const struct uverbs_map *um = &ctx->uverbs;

	uverbs_map_load(ctx);
	for (size_t i = 0; i < um->n; i++)
		if (!strcmp(um->ibdev[i], ibdev)) {
			snprintf(out, len, "%s", um->node[i]);
			return 0;
		}
	return um->err ? um->err : -ENOENT;
}

static void nic_identity(struct sysroot *sr, struct result *r,
			 const struct inv_nic *nic)
{
	char p[256], val[128];

	snprintf(p, sizeof(p), IB_CLASS "/%s/fw_ver", nic->name);
	if (sysroot_read_line(sr, p, val, sizeof(val)) == 0)
		ev_str(r, "fw_ver", "%s", val);
	snprintf(p, sizeof(p), IB_CLASS "/%s/device/driver", nic->name);
	if (sysroot_link_name(sr, p, val, sizeof(val)) == 0)
		ev_str(r, "driver", "%s", val);
	ev_str(r, "pci", "%s", nic->pci[0] ? nic->pci : "none");
}

void gate_nic_uverbs(struct gdr_ctx *ctx, const struct target *t)
{
	const struct inv_nic *nic = &ctx->inv.nic[t->nic];
	const struct verbs_facts *v = &ctx->vf->verbs;
	const struct verbs_nic *vn = ctx_verbs_nic(ctx, t->nic);
	char uv[64], node[128], why[256];
	struct result *r;
	int ret = find_uverbs(ctx, nic->name, uv, sizeof(uv));

	if (ret && ret != -ENOENT) {
		r = emit(ctx, nic->subject, ST_ERROR, C_UVERBS_CLASS_UNREADABLE,
			 "cannot tell this device's uverbs interface: %s: %s",
			 ctx->uverbs.err_path, strerror(-ret));
		ev_str(r, "path", "%s", ctx->uverbs.err_path);
		ev_int(r, "errno", -ret);
		nic_identity(ctx->sr, r, nic);
		return;
	}
	if (ret) {
		r = emit(ctx, nic->subject, ST_BLOCKED, C_UVERBS_CLASS_MISSING,
			 "no uverbs interface in %s for this device", UVERBS_CLASS);
		remedy_UVERBS_CLASS_MISSING(r);
		nic_identity(ctx->sr, r, nic);
		return;
	}
	snprintf(node, sizeof(node), "/dev/infiniband/%s", uv);
	ret = sysroot_access(ctx->sr, node);
	if (path_state_of(ret) == PATH_UNREADABLE) {
		r = emit(ctx, nic->subject, ST_ERROR, C_UVERBS_NODE_UNREADABLE,
			 "cannot look at %s: %s", node, strerror(-ret));
		ev_str(r, "node", "%s", node);
		ev_int(r, "errno", -ret);
		nic_identity(ctx->sr, r, nic);
		return;
	}
	if (ret) {
		r = emit(ctx, nic->subject, ST_BLOCKED, C_UVERBS_NODE_MISSING,
			 "in sysfs, but %s is missing: the device node is not "
			 "exposed here (container without /dev/infiniband?)", node);
		remedy_UVERBS_NODE_MISSING(r, uv);
		ev_str(r, "uverbs", "%s", uv);
		ev_str(r, "node", "%s", node);
		nic_identity(ctx->sr, r, nic);
		return;
	}
	if (v->lib.loaded && v->list_called && v->list_errno) {
		r = emit(ctx, nic->subject, ST_ERROR, C_DEVICE_LIST_FAILED,
			 "%s present; ibv_get_device_list failed: %s", node,
			 strerror(v->list_errno));
		ev_int(r, "errno", v->list_errno);
	} else if (stage_problem(ctx, WSTAGE_VERBS, why, sizeof(why)) &&
		   (!vn || !vn->opened)) {
		/* The stage broke before this device was decided. */
		r = emit(ctx, nic->subject, ST_ERROR, C_VERBS_PROBE_FAILED,
			 "%s present; opening it: %s", node, why);
	} else if (!vn && v->name_errno) {
		r = emit(ctx, nic->subject, ST_ERROR, C_DEVICE_NAME_FAILED,
			 "%s present; ibv_get_device_name failed: %s", node,
			 strerror(v->name_errno));
	} else if (!v->lib.loaded || !v->list_called) {
		if (stage_problem(ctx, WSTAGE_VERBS, why, sizeof(why)))
			r = emit(ctx, nic->subject, ST_ERROR, C_VERBS_PROBE_FAILED,
				 "%s present; opening it: %s", node, why);
		else
			r = emit(ctx, nic->subject, ST_SKIP, C_LIBIBVERBS_UNAVAILABLE,
				 "%s present; not opened: libibverbs unavailable",
				 node);
	} else if (!vn) {
		r = emit(ctx, nic->subject, ST_BLOCKED, C_NO_VERBS_PROVIDER,
			 "%s present, but libibverbs does not list the device: "
			 "no user-space provider for its driver", node);
		remedy_NO_VERBS_PROVIDER(r);
	} else if (!vn->opened) {
		struct classified c = classify_open_errno(vn->open_errno);
		enum reason_code code = code_by_name(c.code);

		r = emit(ctx, nic->subject, c.status, code,
			 "ibv_open_device failed: %s (%s)", strerror(vn->open_errno),
			 c.meaning);
		if (code == C_UVERBS_OPEN_FAILED)
			remedy_UVERBS_OPEN_FAILED(r, nic->name);
		else if (code == C_UVERBS_NODE_MISSING)
			remedy_UVERBS_NODE_MISSING(r, uv);
		else
			remedy_UVERBS_PERMISSION(r, node);
		ev_int(r, "errno", vn->open_errno);
	} else {
		r = emit(ctx, nic->subject, ST_PASS, C_UVERBS_OK,
			 "%s opens through libibverbs", node);
		if (vn->phys_ports >= 0)
			ev_int(r, "phys_ports", vn->phys_ports);
	}
	ev_str(r, "uverbs", "%s", uv);
	nic_identity(ctx->sr, r, nic);
}

static int port_attr(struct sysroot *sr, const struct inv_nic *nic, int port,
		     const char *attr, char *buf, size_t len)
{
	char p[256];

	snprintf(p, sizeof(p), IB_CLASS "/%s/ports/%d/%s", nic->name, port, attr);
	return sysroot_read_line(sr, p, buf, len);
}

/* Port gates asked about a NIC whose ports cannot be listed. */
static bool ports_unlisted(struct gdr_ctx *ctx, const struct target *t)
{
	const struct inv_nic *nic = &ctx->inv.nic[t->nic];

	if (t->port >= 0)
		return false;
	emit(ctx, nic->subject, ST_ERROR, C_PORTS_UNREADABLE,
	     "cannot list %s/%s/ports: %s", IB_CLASS, nic->name,
	     strerror(nic->ports_err));
	return true;
}

void gate_nic_port(struct gdr_ctx *ctx, const struct target *t)
{
	const struct inv_nic *nic = &ctx->inv.nic[t->nic];
	const struct inv_port *pt;

	if (ports_unlisted(ctx, t))
		return;
	pt = &nic->ports[t->port];
	char state[64], phys[64] = "", ll[32] = "", rate[64] = "";
	char sname[32], pname[32] = "?";
	int snum, pnum;
	struct result *r;
	int ret = port_attr(ctx->sr, nic, pt->num, "state", state, sizeof(state));

	if (ret || parse_num_name(state, &snum, sname, sizeof(sname))) {
		emit(ctx, pt->subject, ST_ERROR, C_PORT_UNREADABLE,
		     "port state unreadable: %s",
		     ret ? sysroot_strerror(-ret) : "malformed");
		return;
	}
	if (ib_port_state_check(snum, sname)) {
		/* "9: FOO" or "4: DOWN" is no state to act on. */
		r = emit(ctx, pt->subject, ST_ERROR, C_PORT_STATE_OUT_OF_RANGE,
			 "port state \"%s\" is not one the kernel defines",
			 state);
		ev_str(r, "state", "%s", state);
		return;
	}
	port_attr(ctx->sr, nic, pt->num, "phys_state", phys, sizeof(phys));
	if (parse_num_name(phys, &pnum, pname, sizeof(pname)))
		snprintf(pname, sizeof(pname), "?");
	port_attr(ctx->sr, nic, pt->num, "link_layer", ll, sizeof(ll));
	port_attr(ctx->sr, nic, pt->num, "rate", rate, sizeof(rate));

	if (snum == 4) {
		r = emit(ctx, pt->subject, ST_PASS, C_PORT_ACTIVE,
			 "ACTIVE, %s, %s, %s", pname, ll[0] ? ll : "?",
			 rate[0] ? rate : "rate unknown");
	} else {
		r = emit(ctx, pt->subject, ST_BLOCKED, C_PORT_NOT_ACTIVE,
			 "port %s (physical %s)", sname, pname);
		if (!strcmp(ll, "InfiniBand"))
			if (snum == 2 || snum == 3)
				remedy_PORT_NO_SM(r);
			else
				remedy_PORT_CABLE(r);
		else
			remedy_PORT_NOT_ACTIVE(r);
	}
	ev_int(r, "state", snum);
	ev_str(r, "state_name", "%s", sname);
	ev_str(r, "phys_state", "%s", pname);
	ev_str(r, "link_layer", "%s", ll[0] ? ll : "unknown");
	ev_str(r, "rate", "%s", rate[0] ? rate : "unknown");
}

void gate_nic_gid(struct gdr_ctx *ctx, const struct target *t)
{
	const struct inv_nic *nic = &ctx->inv.nic[t->nic];
	const struct inv_port *pt;
	struct gid_scan gs;
	char ll[32] = "";
	struct result *r;
	int v2, v1, populated;

	if (ports_unlisted(ctx, t))
		return;
	pt = &nic->ports[t->port];
	port_attr(ctx->sr, nic, pt->num, "link_layer", ll, sizeof(ll));
	if (strcmp(ll, "Ethernet")) {
		emit(ctx, pt->subject, ST_SKIP, C_NOT_ROCE,
		     "link layer %s: no RoCE GID needed", ll[0] ? ll : "unknown");
		return;
	}
	ib_scan_gids(ctx->sr, nic->name, pt->num, &gs);
	if (gs.err) {
		emit(ctx, pt->subject, ST_ERROR, C_GID_TABLE_UNREADABLE,
		     "cannot list the GID table of %s port %d: %s", nic->name,
		     pt->num, strerror(-gs.err));
		return;
	}
	v2 = gs.v2;
	v1 = gs.v1;
	populated = gs.populated;

	if (v2 >= 0) {
		char p[256], ndev[64] = "";

		snprintf(p, sizeof(p), IB_CLASS "/%s/ports/%d/gid_attrs/ndevs/%d",
			 nic->name, pt->num, v2);
		sysroot_read_line(ctx->sr, p, ndev, sizeof(ndev));
		r = emit(ctx, pt->subject, ST_PASS, C_ROCE_V2_GID,
			 "RoCE v2 GID at index %d%s%s", v2,
			 ndev[0] ? " on " : "", ndev);
		ev_int(r, "gid_index", v2);
		if (ndev[0])
			ev_str(r, "netdev", "%s", ndev);
	} else if (v1 >= 0) {
		r = emit(ctx, pt->subject, ST_WARN, C_ROCE_V1_ONLY,
			 "only RoCE v1 GIDs (index %d): not routable, NCCL "
			 "prefers RoCE v2", v1);
		remedy_ROCE_V1_ONLY(r);
		ev_int(r, "gid_index", v1);
	} else if (gs.malformed) {
		r = emit(ctx, pt->subject, ST_ERROR, C_GID_TABLE_MALFORMED,
			 "no usable RoCE GID, and %d GID entr(ies) are "
			 "unreadable or hold no GID (first: gids/%s): the "
			 "table cannot be trusted",
			 gs.malformed, gs.first_bad);
	} else {
		r = emit(ctx, pt->subject, ST_BLOCKED, C_NO_ROCE_GID,
			 "no usable RoCE GID (%d non-zero GID(s)): the netdev "
			 "has no IP address?", populated);
		remedy_NO_ROCE_GID(r);
	}
	ev_int(r, "nonzero_gids", populated);
}

/* The PCI function a sysfs device path ends in ("0008:04:00.0"), or "". */
static const char *dd_function(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/*
 * NCCL's Data Direct detection, from the verbs stage's libmlx5 answers
 * (access/mlx5.c). NCCL >= 2.27.3 (net_ib init.cc ncclIbInitDevices):
 * mlx5 provider, ncclMlx5dvDmaBufCapable (the mlx5dv fd -1 probe not
 * EOPNOTSUPP/EPROTONOSUPPORT), then mlx5dv_get_data_direct_sysfs_path:
 * 0 -> `<dev>_dma` with that path, ENODEV -> none, another error -> NCCL
 * WARNs and (2.28.3+) fails its IB set-up.
 */
void gate_nic_data_direct(struct gdr_ctx *ctx, const struct target *t)
{
	const struct inv_nic *nic = &ctx->inv.nic[t->nic];
	const struct verbs_facts *v = &ctx->vf->verbs;
	const struct verbs_nic *vn = ctx_verbs_nic(ctx, t->nic);
	const char *other = nic_non_mlx5(ctx, nic);
	char why[256];
	struct result *r;

	/*
	 * sysfs already says which provider drives it: no --libmlx5 advice
	 * for an EFA or a bnxt_re device (Data Direct is ConnectX-8's).
	 */
	if (other && (!v->mlx5_lib.attempted || !v->mlx5_lib.loaded)) {
		emit(ctx, nic->subject, ST_SKIP, C_DD_NOT_MLX5,
		     "not an mlx5 device (%s is %s): no Data Direct",
		     nic->name, other);
		return;
	}
	if (!v->mlx5_lib.attempted) {
		r = emit(ctx, nic->subject, ST_SKIP, C_DD_NOT_ASKED,
			 "libmlx5 not loaded%s: Data Direct not asked",
			 ctx->opt->sysroot ? " (--sysroot analyses a captured "
			 "node)" : "");
		if (ctx->opt->sysroot)
			remedy_DD_NOT_ASKED_SYSROOT(r);
		return;
	}
	if (!v->mlx5_lib.loaded) {
		r = emit(ctx, nic->subject, ST_SKIP, C_DD_NOT_ASKED,
			 "libmlx5 not loaded (%s): Data Direct not asked",
			 v->mlx5_lib.error);
		ev_str(r, "library", "%s", v->mlx5_lib.path);
		return;
	}
	if (!v->have_dd_sysfs_path || !v->have_mlx5_is_supported) {
		r = emit(ctx, nic->subject, ST_SKIP, C_DD_NOT_ASKED,
			 "libmlx5 %s lacks %s (rdma-core before v54): Data "
			 "Direct not asked", v->mlx5_lib.path,
			 v->mlx5_lib.missing_optional);
		if (ctx_platform(ctx)->cx_dma)
			remedy_DD_OLD_RDMA_CORE_CX8(r,
						    ctx_platform(ctx)->cx_dma_fn);
		else
			remedy_DD_OLD_RDMA_CORE(r);
		ev_str(r, "missing", "%s", v->mlx5_lib.missing_optional);
		return;
	}
	if (!vn || !vn->opened || vn->mlx5 < 0 ||
	    (vn->mlx5 == 1 && !vn->dd_path_called)) {
		if (stage_problem(ctx, WSTAGE_VERBS, why, sizeof(why))) {
			emit(ctx, nic->subject, ST_ERROR, C_DD_QUERY_FAILED,
			     "%s", why);
			return;
		}
		emit(ctx, nic->subject, ST_SKIP, C_DD_NOT_ASKED,
		     "libmlx5 loaded, device not opened or no PD (see "
		     "nic.uverbs): Data Direct not asked");
		return;
	}
	if (vn->mlx5 == 0) {
		emit(ctx, nic->subject, ST_SKIP, C_DD_NOT_MLX5,
		     "not an mlx5 device (mlx5dv_is_supported): no Data Direct");
		return;
	}
	if (vn->dd_path_rc == ENODEV) {
		r = emit(ctx, nic->subject, ST_PASS, C_DD_NONE,
			 "no Data Direct function (mlx5dv_get_data_direct_"
			 "sysfs_path: ENODEV): NCCL uses the device as it is");
		return;
	}
	if (vn->dd_path_rc) {
		r = emit(ctx, nic->subject, ST_ERROR, C_DD_QUERY_FAILED,
			 "mlx5dv_get_data_direct_sysfs_path failed: %s",
			 strerror(vn->dd_path_rc));
		remedy_DD_QUERY_FAILED(r);
		ev_int(r, "errno", vn->dd_path_rc);
		return;
	}
	if (!vn->dd_probe_run || vn->dd_probe_errno == EOPNOTSUPP ||
	    vn->dd_probe_errno == EPROTONOSUPPORT) {
		r = emit(ctx, nic->subject, ST_PASS, C_DD_NOT_CAPABLE,
			 "a Data Direct function (%s), but mlx5dv_reg_dmabuf_mr"
			 "(fd=-1) -> %s: NCCL does not use it",
			 dd_function(vn->dd_path),
			 !vn->dd_probe_run ? "not available" :
			 strerrorname_np(vn->dd_probe_errno));
		ev_str(r, "dd_path", "%s", vn->dd_path);
		return;
	}
	r = emit(ctx, nic->subject, ST_PASS, C_DD_FOUND,
		 "Data Direct function %s: NCCL >= 2.27.3 uses %s_dma there "
		 "(unless NCCL_IB_DATA_DIRECT turns it off), registering "
		 "through mlx5dv_reg_dmabuf_mr(DATA_DIRECT)",
		 dd_function(vn->dd_path), nic->name);
	ev_str(r, "dd_path", "%s", vn->dd_path);
	ev_str(r, "dd_pci", "%s", dd_function(vn->dd_path));
	ev_str(r, "nccl_device", "%s_dma", nic->name);
}
