// SPDX-License-Identifier: MIT
/*
 * NCCL's rules as pure functions. Each comment names where NCCL holds the
 * rule (file, function, first and last release); docs/nccl-model.md shows
 * the evidence. Versions are NCCL_VER codes; releases between two tags
 * read are assumed to follow the older one.
 */
#include "nccl/rules.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const ptype_names[NPT_COUNT] = {
	[NPT_LOC] = "LOC", [NPT_NVL] = "NVL", [NPT_NVB] = "NVB",
	[NPT_C2C] = "C2C", [NPT_PIX] = "PIX", [NPT_PXB] = "PXB",
	[NPT_P2C] = "P2C", [NPT_PXN] = "PXN", [NPT_PHB] = "PHB",
	[NPT_SYS] = "SYS", [NPT_NET] = "NET", [NPT_DIS] = "DIS",
};

const char *nccl_ptype_name(enum nccl_ptype t)
{
	return (unsigned int)t < NPT_COUNT ? ptype_names[t] : "unknown";
}

/*
 * src/graph/topo.h PATH_* and topo.cc topoPathTypeStr[]:
 *   < 2.12.7        LOC NVL NVB PIX PXB PHB SYS
 *   2.12.7-2.25.1   LOC NVL NVB PIX PXB PXN PHB SYS NET(2.18+) DIS
 *   2.26.2-2.26.6   LOC NVL NVB C2C PIX PXB PXN PHB SYS NET DIS
 *   2.27.3          ... PXB PXN P2C PHB ...
 *   2.27.5-2.30.7   ... PXB P2C PXN PHB ...
 * DIS equals SYS in 2.12-2.17; that case does not arise in the rules here.
 */
int nccl_path_code(int ver, enum nccl_ptype t)
{
	static const signed char old[NPT_COUNT] = {
		0, 1, 2, -1, 3, 4, -1, -1, 5, 6, -1, -1 };
	static const signed char pxn[NPT_COUNT] = {
		0, 1, 2, -1, 3, 4, -1, 5, 6, 7, 8, 9 };
	static const signed char c2c[NPT_COUNT] = {
		0, 1, 2, 3, 4, 5, -1, 6, 7, 8, 9, 10 };
	static const signed char p2c_after_pxn[NPT_COUNT] = {
		0, 1, 2, 3, 4, 5, 7, 6, 8, 9, 10, 11 };
	static const signed char p2c[NPT_COUNT] = {
		0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 };
	const signed char *tbl;

	if ((unsigned int)t >= NPT_COUNT)
		return -1;
	if (ver < NCCL_VER(2, 12, 0))
		tbl = old;
	else if (ver < NCCL_VER(2, 26, 0))
		tbl = pxn;
	else if (ver < NCCL_VER(2, 27, 0))
		tbl = c2c;
	else if (ver < NCCL_VER(2, 27, 5))
		tbl = p2c_after_pxn;
	else
		tbl = p2c;
	return tbl[t];
}

/* The type whose code is `code` in ver, NPT_COUNT if none. */
static enum nccl_ptype ptype_of_code(int ver, int code)
{
	for (int t = 0; t < NPT_COUNT; t++)
		if (nccl_path_code(ver, (enum nccl_ptype)t) == code)
			return (enum nccl_ptype)t;
	return NPT_COUNT;
}

/*
 * ncclGetLevel (src/graph/paths.cc, same logic 2.12.7-2.30.7): strcmp
 * against topoPathTypeStr[0] to [PATH_SYS] (case-sensitive, names of that
 * release only); else, when the first character is a digit,
 * strtol(str, NULL, 0) into an int, > 5 clamped to 5, through
 * levelsOldToNew {LOC, PIX, PXB, PHB, SYS, SYS}.
 */
int nccl_parse_level(int ver, const char *s, enum nccl_ptype *level)
{
	static const enum nccl_ptype old_to_new[] = {
		NPT_LOC, NPT_PIX, NPT_PXB, NPT_PHB, NPT_SYS, NPT_SYS,
	};
	int sys = nccl_path_code(ver, NPT_SYS);
	long l;
	int v;

	if (!s)
		return -ENOENT;
	for (int code = 0; code <= sys; code++) {
		enum nccl_ptype t = ptype_of_code(ver, code);

		if (t != NPT_COUNT && !strcmp(s, ptype_names[t])) {
			*level = t;
			return 0;
		}
	}
	if (s[0] < '0' || s[0] > '9')
		return -ENOENT;
	l = strtol(s, NULL, 0);
	/* NCCL stores the long in an int: the low 32 bits. */
	v = (int)(unsigned int)(unsigned long)l;
	if (v < 0)
		return -ERANGE;
	if (v > 5)
		v = 5;
	*level = old_to_new[v];
	return 0;
}

/*
 * ncclLoadParam (src/misc/param.cc, 2.13.4-2.30.7) and the NCCL_PARAM
 * macro before it (src/include/param.h, 2.12.x): empty or unset keeps the
 * default; errno = 0; strtoll(str, nullptr, 0); errno set keeps the default.
 */
bool nccl_parse_param(const char *s, int64_t deflt, int64_t *out)
{
	long long v;

	*out = deflt;
	if (!s || !*s)
		return false;
	errno = 0;
	v = strtoll(s, NULL, 0);
	if (errno)
		return false;
	*out = v;
	return true;
}

/*
 * paths.cc NCCL_PARAM(NetGdrRead, "NET_GDR_READ", -2), 2.12.7-2.30.7,
 * read by ncclLoadParam: ncclTopoCheckGdr tests == 0 and < 0.
 */
int64_t nccl_gdr_read_param(const char *s)
{
	int64_t v;

	nccl_parse_param(s, NCCL_GDR_READ_DEFAULT, &v);
	return v;
}

/* paths.cc NCCL_PARAM(NetGdrC2c): 0 in 2.26.2-2.26.6, 1 since 2.27.3. */
int nccl_gdr_c2c_default(int ver)
{
	if (ver < NCCL_VER(2, 26, 0))
		return -1;
	return ver < NCCL_VER(2, 27, 0) ? 0 : 1;
}

/* paths.cc NCCL_PARAM(PxnC2c): 0 in 2.27.3-2.27.7, 1 since 2.28.3. */
int nccl_pxn_c2c_default(int ver)
{
	if (ver < NCCL_VER(2, 27, 0))
		return -1;
	return ver < NCCL_VER(2, 28, 0) ? 0 : 1;
}

/*
 * paths.cc ncclTopoCheckGdr: "int netGdrLevel = PATH_PXB" 2.10.3-2.28.9;
 * "ncclParamNetGdrC2c() ? PATH_P2C : PATH_PXB" since 2.29.2.
 */
enum nccl_ptype nccl_default_gdr_level(int ver, int64_t gdr_c2c)
{
	if (ver >= NCCL_VER(2, 29, 0) && gdr_c2c)
		return NPT_P2C;
	return NPT_PXB;
}

static int code(int ver, enum nccl_ptype t)
{
	return nccl_path_code(ver, t);
}

/*
 * xml.cc ncclTopoGetXmlFromGpu adds a <c2c> node when the GPU is sm >= 90
 * and NVML's NVML_FI_DEV_C2C_LINK_COUNT / C2C_LINK_GET_STATUS field values
 * show an active link (2.19.1-2.30.7; absent in 2.18.6). topo.cc
 * ncclTopoAddC2c links that GPU to its local CPU (findLocalCpu) with
 * LINK_NVL in 2.19.1-2.25.1 and LINK_C2C since 2.26.2; ncclTopoSetPaths
 * takes the path type from the link. Else the GPU reaches the CPU by PCI:
 * PHB.
 */
enum nccl_ptype nccl_gpu_cpu_path(int ver, bool c2c_link, int cc)
{
	if (!c2c_link || cc < 90 || ver < NCCL_VER(2, 19, 0))
		return NPT_PHB;
	return ver < NCCL_VER(2, 26, 0) ? NPT_NVL : NPT_C2C;
}

/*
 * paths.cc mergePathType (2.27.5-2.30.7): max == PHB && min == C2C gives
 * P2C, else max. Before 2.27.5 addInterStep took the max.
 */
enum nccl_ptype nccl_merge_path(int ver, enum nccl_ptype a, enum nccl_ptype b)
{
	enum nccl_ptype hi = code(ver, a) >= code(ver, b) ? a : b;
	enum nccl_ptype lo = hi == a ? b : a;

	if (ver >= NCCL_VER(2, 27, 5) && hi == NPT_PHB && lo == NPT_C2C)
		return NPT_P2C;
	return hi;
}

/*
 * paths.cc ncclTopoComputePaths, "update the GPU -> NIC path in the case
 * of C2C + PHB": 2.27.3 turns PHB into P2C when the GPU's CPU path is C2C;
 * 2.27.5-2.28.9 set min(P2C, path) when mergePathType(gpu->CPU, net->CPU)
 * is P2C; since 2.29.2 only for the GPU's local NICs (ncclTopoGetLocal).
 */
enum nccl_ptype nccl_p2c_path(int ver, enum nccl_ptype gpu_net,
			      enum nccl_ptype gpu_cpu, enum nccl_ptype net_cpu,
			      bool net_is_local)
{
	if (ver < NCCL_VER(2, 27, 0))
		return gpu_net;
	if (ver < NCCL_VER(2, 27, 5))
		return gpu_net == NPT_PHB && gpu_cpu == NPT_C2C ? NPT_P2C :
		       gpu_net;
	if (ver >= NCCL_VER(2, 29, 0) && !net_is_local)
		return gpu_net;
	if (nccl_merge_path(ver, gpu_cpu, net_cpu) != NPT_P2C)
		return gpu_net;
	return code(ver, NPT_P2C) < code(ver, gpu_net) ? NPT_P2C : gpu_net;
}

/*
 * paths.cc ncclTopoComputePaths, "Update path when we dont want to / can't
 * use GPU Direct RDMA" (per NIC n, per GPU g, right after the PXN step):
 * when ncclTopoCheckGdr(g, n, read=0) disables GDR -- the write direction:
 * NIC/GPU gdrSupport, MLO, distance > level; never the read rules -- NCCL
 * diverts the pair through the GPU's local CPU, both ways
 * (addInterStep(CPU, localCpu, NET, n, GPU, g) and (..., GPU, g, NET, n)).
 * The new type is addInterStep's merge of GPU->CPU and CPU->NIC:
 *   2.12.7-2.20.5  every pair whose check fails, PHB and SYS ones too
 *                  (v2.12.7-1 paths.cc:544-552, v2.20.5-1 paths.cc:621-629)
 *   2.21.5-2.30.7  only a pair whose path is < PATH_PHB, NCCL's codes
 *                  (v2.21.5-1 paths.cc:625-634, v2.30.7-1 paths.cc:844-853)
 *   merge          std::max until 2.27.3 (v2.12.7-1 paths.cc:186, v2.27.3-1
 *                  paths.cc:190); mergePathType since 2.27.5, PHB over C2C
 *                  is P2C (v2.27.5-1 paths.cc:178-182, 197; v2.30.7-1
 *                  paths.cc:203-207, 224)
 * A PXN pair is < PHB too: its check uses the relay's distance, and a
 * failure undoes the PXN (the CPU step replaces the relay step).
 */
bool nccl_nogdr_path(int ver, enum nccl_ptype gpu_net, bool gdr_write,
		     enum nccl_ptype gpu_cpu, enum nccl_ptype cpu_net,
		     enum nccl_ptype *out)
{
	*out = gpu_net;
	if (gdr_write || code(ver, gpu_net) < 0 || code(ver, gpu_cpu) < 0 ||
	    code(ver, cpu_net) < 0)
		return false;
	if (ver >= NCCL_VER(2, 21, 0) &&
	    code(ver, gpu_net) >= code(ver, NPT_PHB))
		return false;
	*out = nccl_merge_path(ver, gpu_cpu, cpu_net);
	return true;
}

/*
 * paths.cc ncclTopoComputePaths, "Check whether we can access the NIC
 * through another NVLink-connected GPU (PXN)", PXN since 2.12.7:
 *   2.12.7-2.13.4  only when gpu->NIC > PXB; the relay's ncclTopoGetLocalNet
 *                  is this NIC; relay->NIC <= PXB; relay<->GPU <= NVL
 *   2.14.3-2.17.1  any peer with relay->NIC <= PXB, NVL, and (relay bw >
 *                  GPU bw || gpu->NIC > PXB)
 *   2.18.1-        the relay is ncclTopoGetLocalGpu(NIC), same conditions;
 *   2.21.5-        and the same system id (MNNVL);
 *   2.27.3         relay->NIC may be P2C when NCCL_PXN_C2C;
 *   2.27.5-2.28.9  relay->NIC <= pxnType (P2C if PXN_C2C else PXB) and
 *                  gpu->NIC > pxnType for the bw alternative;
 *   2.29.2-        gpu->NIC > PXN for the bw alternative;
 *   2.30.3-2.30.7  and GDR (read) enabled on relay->NIC.
 * ncclPxnDisable: NCCL_PXN_DISABLE (default 0) or a v4 net plugin.
 */
bool nccl_pxn_applies(const struct nccl_pxn_in *in)
{
	int v = in->ver;
	int gpu = code(v, in->gpu_net), peer = code(v, in->peer_net);
	int pxb = code(v, NPT_PXB);
	int pxn_type = pxb, far;

	if (v < NCCL_VER(2, 12, 0) || in->pxn_disable == 1)
		return false;
	if (!in->peer_nvlink)
		return false;
	if (v < NCCL_VER(2, 14, 0))
		return gpu > pxb && in->peer_is_relay && peer <= pxb;
	if (v >= NCCL_VER(2, 18, 0) && !in->peer_is_relay)
		return false;
	if (v >= NCCL_VER(2, 21, 0) && !in->same_system)
		return false;
	if (v >= NCCL_VER(2, 30, 0) && !in->peer_gdr_read)
		return false;
	if (v >= NCCL_VER(2, 27, 5) && in->pxn_c2c)
		pxn_type = code(v, NPT_P2C);
	if (v >= NCCL_VER(2, 27, 0) && v < NCCL_VER(2, 27, 5)) {
		if (!(peer <= pxb || (in->pxn_c2c && in->peer_net == NPT_P2C)))
			return false;
	} else if (peer > pxn_type) {
		return false;
	}
	if (v >= NCCL_VER(2, 29, 0))
		far = code(v, NPT_PXN);
	else
		far = pxn_type;
	return in->peer_net_bw > in->gpu_net_bw || gpu > far;
}

/*
 * paths.cc ncclTopoCheckGdr, 2.12.7-2.30.7:
 *  - NIC and GPU gdrSupport; since 2.30.7 an MLO partition needs
 *    NCCL_NET_GDR_MLOPART;
 *  - read (send): NCCL_NET_GDR_READ 0 disables; negative (auto) disables
 *    unless a single GPU or an NVLink peer, for every GPU before 2.19.1 and
 *    for cudaCompCap < 80 since 2.19.1;
 *  - level: NCCL_NET_GDR_LEVEL else nccl_default_gdr_level();
 *  - distance PXN: the relay GPU's distance (2.12.7+);
 *  - 2.26.2-2.26.6: PHB with a C2C GPU->CPU path is C2C when NET_GDR_C2C;
 *    2.27.3-2.28.9: P2C is C2C when NET_GDR_C2C;
 *  - distance > level (NCCL's codes): disabled;
 *  - mode (2.26.2+): PCI when the GPU reaches its CPU by C2C and the
 *    distance is not C2C (2.26-2.28) / not P2C (2.29.2+), else default.
 */
int nccl_gdr_decide(const struct nccl_gdr_in *in, struct nccl_gdr_out *out)
{
	int v = in->ver;
	enum nccl_ptype d = in->dist, lv, c2c_dist;

	out->mode = NCCL_GDR_DISABLED;
	out->distance = d;
	lv = in->level_set ? in->level : nccl_default_gdr_level(v, in->gdr_c2c);
	out->level = lv;
	if (code(v, d) < 0 || code(v, lv) < 0)
		return -EINVAL;
	if (d == NPT_PXN && code(v, in->relay_dist) < 0)
		return -EINVAL;

	if (!in->net_gdr || !in->gpu_gdr) {
		out->why = NCCL_GDR_NO_SUPPORT;
		return 0;
	}
	if (v >= NCCL_VER(2, 30, 7) && in->mlo_part && !in->gdr_mlopart) {
		out->why = NCCL_GDR_MLO_PART;
		return 0;
	}
	if (in->read) {
		if (in->gdr_read == 0) {
			out->why = NCCL_GDR_READ_OFF;
			return 0;
		}
		if (in->gdr_read < 0 &&
		    (v < NCCL_VER(2, 19, 0) || in->cc < 80) &&
		    in->ngpus != 1 && !in->nvlink_peer) {
			out->why = NCCL_GDR_READ_DEFAULT_OFF;
			return 0;
		}
	}
	if (d == NPT_PXN)
		d = in->relay_dist;
	if (v >= NCCL_VER(2, 26, 0) && v < NCCL_VER(2, 27, 0) &&
	    in->gdr_c2c && d == NPT_PHB && in->cpu_c2c)
		d = NPT_C2C;
	if (v >= NCCL_VER(2, 27, 0) && v < NCCL_VER(2, 29, 0) &&
	    in->gdr_c2c && d == NPT_P2C)
		d = NPT_C2C;
	out->distance = d;
	if (code(v, d) > code(v, lv)) {
		out->why = NCCL_GDR_TOO_FAR;
		return 0;
	}
	out->why = NCCL_GDR_OK;
	c2c_dist = v >= NCCL_VER(2, 29, 0) ? NPT_P2C : NPT_C2C;
	if (v >= NCCL_VER(2, 26, 0) && in->cpu_c2c && d != c2c_dist)
		out->mode = NCCL_GDR_PCI;
	else
		out->mode = NCCL_GDR_DEFAULT;
	return 0;
}

/*
 * init.cc dmaBufSupported, 2.13.4-2.30.7: NCCL_DMABUF_ENABLE (default 1)
 * non-zero, the net plugin has regMrDmaBuf, cudaDriverVersion >= 11070,
 * CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED non-zero. No DMA-BUF before 2.13.4.
 */
bool nccl_dmabuf_comm(int ver, int64_t dmabuf_enable, bool plugin_dmabuf,
		      int cuda_driver, int attr_dmabuf)
{
	if (ver < NCCL_VER(2, 13, 4))
		return false;
	return dmabuf_enable != 0 && plugin_dmabuf && cuda_driver >= 11070 &&
	       attr_dmabuf > 0;
}

/*
 * net_ib ncclIbDmaBufSupport: ibv_reg_dmabuf_mr(pd, 0, 0, 0, -1, 0) and
 * any errno but EOPNOTSUPP (2.13.4) / EOPNOTSUPP or EPROTONOSUPPORT
 * (2.14.3-2.30.7) means supported. ibvwrap sets EOPNOTSUPP when
 * libibverbs lacks the symbol. Checked at v2.13.4-1 net_ib.cc:292,
 * v2.14.3-1 net_ib.cc:291, v2.26.2-1 net_ib.cc:735, v2.28.9-1
 * net_ib.cc:589, v2.29.7-1 net_ib/gdr.cc:60, v2.30.7-1 net_ib/gdr.cc:59
 * (ibvwrap.cc:227). errno is not cleared before the call; an MR returned
 * (errno 0 here) counts as supported.
 */
bool nccl_dmabuf_probe_ok(int ver, int probe_errno)
{
	if (ver < NCCL_VER(2, 13, 4))
		return false;
	if (probe_errno == EOPNOTSUPP)
		return false;
	return ver < NCCL_VER(2, 14, 0) || probe_errno != EPROTONOSUPPORT;
}

/*
 * topo.cc ncclTopoGetNetInfo/ncclTopoFillNet (2.13.4-2.30.7): gdrSupport =
 * ptrSupport & NCCL_PTR_CUDA (peermem) || (comm dmaBufSupport &&
 * ptrSupport & NCCL_PTR_DMABUF). net.cc: useDmaBuf = useGdr &&
 * dmaBufSupport && NIC DMABUF (2.14.3-2.30.7); 2.13.4 tests only
 * comm->dmaBufSupport. With useDmaBuf the buffers go through regMrDmaBuf
 * under NCCLCHECK: a failure fails the connection, no peermem fallback.
 */
void nccl_mechanism(int ver, bool use_gdr, bool comm_dmabuf, bool nic_dmabuf,
		    bool peermem, struct nccl_mech_out *out)
{
	bool dmabuf;

	memset(out, 0, sizeof(*out));
	out->net_gdr = peermem || (comm_dmabuf && nic_dmabuf);
	if (!use_gdr || !out->net_gdr) {
		out->mech = NCCL_MECH_HOST;
		return;
	}
	if (ver < NCCL_VER(2, 14, 0)) {
		dmabuf = comm_dmabuf;
		out->dmabuf_unprobed = dmabuf && !nic_dmabuf;
	} else {
		dmabuf = comm_dmabuf && nic_dmabuf;
	}
	out->mech = dmabuf ? NCCL_MECH_DMABUF : NCCL_MECH_PEERMEM;
	out->no_fallback = dmabuf;
}

/* One entry's port: absent means any port (-1). */
static int if_field(const char *tok)
{
	return tok && *tok ? atoi(tok) : -1;
}

/*
 * utils.cc parseStringList since 2.30.7: strtok_r on ',', strsep on ':'
 * for prefix, port, rail, plane; empty fields are -1; the prefix is
 * truncated to 63 characters.
 */
static void parse_list_new(const char *s, struct nccl_hca_filter *f)
{
	char *str = strdup(s), *save = NULL, *entry;

	if (!str)
		return;
	for (entry = strtok_r(str, ",", &save); entry && f->n < NCCL_MAX_IFS;
	     entry = strtok_r(NULL, ",", &save)) {
		char *c = entry, *tok = strsep(&c, ":");
		struct nccl_if *e = &f->ifs[f->n];

		if (!tok || !*tok)
			continue;
		snprintf(e->prefix, sizeof(e->prefix), "%s", tok);
		e->port = if_field(strsep(&c, ":"));
		e->rail = if_field(strsep(&c, ":"));
		e->plane = if_field(strsep(&c, ":"));
		f->n++;
	}
	free(str);
}

/*
 * utils.cc parseStringList 2.12.7-2.30.4: a character loop; ':' ends the
 * prefix and the port is atoi of the rest (so "mlx5_0:" is port 0), the
 * entry then runs to ','; an empty prefix is dropped.
 */
static int parse_list_old(const char *s, struct nccl_hca_filter *f)
{
	size_t len = 0;
	int ret = 0;
	char c;

	do {
		struct nccl_if *e = &f->ifs[f->n];

		c = *s;
		if (c == ':') {
			if (len > 0) {
				e->prefix[len] = '\0';
				e->port = atoi(s + 1);
				e->rail = e->plane = -1;
				f->n++;
				len = 0;
			}
			while (c != ',' && c != '\0')
				c = *++s;
		} else if (c == ',' || c == '\0') {
			if (len > 0) {
				e->prefix[len] = '\0';
				e->port = e->rail = e->plane = -1;
				f->n++;
				len = 0;
			}
		} else if (len + 1 < sizeof(e->prefix)) {
			e->prefix[len++] = c;
		} else {
			ret = -ENAMETOOLONG;
		}
		s++;
	} while (f->n < NCCL_MAX_IFS && c);
	return ret;
}

/*
 * net_ib ncclIbInitDevices (2.12.7-2.30.7): a leading '^' excludes, then
 * a leading '=' matches exactly; MAX_IB_DEVS entries (16 before 2.18.5,
 * 32 since).
 */
int nccl_hca_parse(int ver, const char *env, struct nccl_hca_filter *f)
{
	int max = ver < NCCL_VER(2, 18, 5) ? 16 : 32;
	int ret = 0;

	memset(f, 0, sizeof(*f));
	if (!env)
		return 0;
	if (*env == '^') {
		f->exclude = true;
		env++;
	}
	if (*env == '=') {
		f->exact = true;
		env++;
	}
	if (ver >= NCCL_VER(2, 30, 7))
		parse_list_new(env, f);
	else
		ret = parse_list_old(env, f);
	if (f->n > max)
		f->n = max;
	return ret;
}

/*
 * utils.cc matchIfList/matchIf/matchPort (2.12.7-2.30.7): an empty list
 * matches everything; exact compares the whole name, otherwise the entry
 * is a prefix of the name; port -1 on either side matches. net_ib keeps a
 * port when matchIfList(...) ^ searchNot.
 */
bool nccl_hca_match(const struct nccl_hca_filter *f, const char *dev, int port)
{
	bool hit = f->n == 0;

	for (int i = 0; i < f->n && !hit; i++) {
		const struct nccl_if *e = &f->ifs[i];
		bool name = f->exact ? !strcmp(dev, e->prefix) :
			    !strncmp(dev, e->prefix, strlen(e->prefix));

		hit = name && (port == -1 || e->port == -1 || port == e->port);
	}
	return hit ^ f->exclude;
}

/*
 * NCCL_NET: src/net.cc ncclNetInit strcmp (2.12.x), strcasecmp since
 * 2.13.4 (src/net.cc, later src/plugin/net.cc, to 2.30.7). Unset selects
 * the first transport that initialises.
 */
bool nccl_net_selects(int ver, const char *env, const char *name)
{
	if (!env)
		return true;
	if (ver < NCCL_VER(2, 13, 0))
		return !strcmp(env, name);
	return !strcasecmp(env, name);
}

static uint32_t word(const uint8_t raw[16], int i)
{
	return (uint32_t)raw[4 * i] << 24 | (uint32_t)raw[4 * i + 1] << 16 |
	       (uint32_t)raw[4 * i + 2] << 8 | raw[4 * i + 3];
}

/* net_ib getGidAddrFamily (2.21.5-2.30.7). */
int nccl_gid_family(const uint8_t raw[16])
{
	bool mapped = (word(raw, 0) | word(raw, 1) |
		       (word(raw, 2) ^ 0x0000ffff)) == 0;
	bool mapped_mc = word(raw, 0) == 0xff0e0000 &&
			 (word(raw, 1) | (word(raw, 2) ^ 0x0000ffff)) == 0;

	return mapped || mapped_mc ? NCCL_AF_INET : NCCL_AF_INET6;
}

/* net_ib configuredGid && !linkLocalGid (2.21.5-2.30.7). */
bool nccl_gid_valid(const uint8_t raw[16])
{
	uint32_t trailer = word(raw, 1) | word(raw, 2) | word(raw, 3);
	bool configured = !((word(raw, 0) | trailer) == 0 ||
			    (word(raw, 0) == 0xfe800000 && trailer == 0));
	bool link_local = word(raw, 0) == 0xfe800000 && word(raw, 1) == 0;

	return configured && !link_local;
}

static uint32_t netmask(int bits)
{
	return bits >= 32 ? 0xffffffffu : ~((1u << (32 - bits)) - 1);
}

/* net_ib matchGidAddrPrefix: no range (prefixlen 0) matches. */
static bool gid_in_range(const struct nccl_gid_in *in, const uint8_t raw[16])
{
	int left = in->range_set ? in->prefixlen : 0;

	if (left <= 0)
		return true;
	if (in->family == NCCL_AF_INET)
		return ((word(in->range, 0) ^ word(raw, 3)) &
			netmask(left)) == 0;
	for (int i = 0; i < 4 && left > 0; i++) {
		uint32_t m = netmask(left);

		if ((word(in->range, i) ^ word(raw, i)) & m)
			return false;
		left -= 32;
	}
	return true;
}

/*
 * net_ib ncclUpdateGidIndex (2.21.5-2.30.7): take the candidate when it
 * has the wanted family and the current one does not; else, when the
 * candidate has the wanted family, is valid and in range, when its RoCE
 * version is the wanted one and differs from the current one's (or the
 * current GID is invalid). The types files are read only in that branch.
 */
static int gid_update(const struct nccl_gid_in *in, int cand, int *index)
{
	const struct nccl_gid *g = &in->tbl[*index], *c = &in->tbl[cand];
	int cfam = nccl_gid_family(c->raw);
	bool in_range = gid_in_range(in, c->raw);

	if (cfam != nccl_gid_family(g->raw) && cfam == in->family && in_range) {
		*index = cand;
		return 0;
	}
	if (cfam != in->family || !nccl_gid_valid(c->raw) || !in_range)
		return 0;
	if (g->roce_ver < 0 || c->roce_ver < 0)
		return -EIO;
	if ((g->roce_ver != c->roce_ver || !nccl_gid_valid(g->raw)) &&
	    c->roce_ver == in->roce_ver)
		*index = cand;
	return 0;
}

/* net_ib NCCL_PARAM(IbGidIndex): 0 in 2.12.7-2.20.5, -1 since 2.21.5. */
int64_t nccl_gid_index_default(int ver)
{
	return ver < NCCL_VER(2, 21, 0) ? 0 : -1;
}

/*
 * net_ib ncclIbGetGidIndex: before 2.21.5 the GID index is
 * NCCL_IB_GID_INDEX (default 0). Since 2.22.3 an IB port takes
 * NCCL_IB_ROUTABLE_FLID_GID_INDEX when that GID has a non-zero FLID,
 * else 0. RoCE (and IB in 2.21.5): NCCL_IB_GID_INDEX when >= 0, else
 * start at 0 and offer every later index to ncclUpdateGidIndex.
 */
int nccl_gid_index(const struct nccl_gid_in *in, int *index)
{
	int ret;

	*index = 0;
	if (in->ver < NCCL_VER(2, 21, 0)) {
		*index = (int)in->gid_index;
		return 0;
	}
	if (in->infiniband && in->ver >= NCCL_VER(2, 22, 0)) {
		if (in->flid_index < in->n) {
			const uint8_t *raw;

			if (in->flid_index < 0)
				return -EINVAL;
			raw = in->tbl[in->flid_index].raw;
			if (raw[4] || raw[5])
				*index = (int)in->flid_index;
		}
		return 0;
	}
	if (in->gid_index >= 0) {
		*index = (int)in->gid_index;
		return 0;
	}
	if (in->n < 1 || !in->tbl)
		return -EINVAL;
	for (int cand = 1; cand < in->n; cand++) {
		ret = gid_update(in, cand, index);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * net_ib ncclIbInitDevices, NCCL_IB_DATA_DIRECT (default 1, 2.27.3+), for a
 * device that is Data Direct capable:
 *   2.27.3, 2.27.5 (net_ib.cc:658/660 `if (ncclParamIbDataDirect())`):
 *     any non-zero value exposes "<dev>" and "<dev>_dma";
 *   2.27.6, 2.27.7 (net_ib.cc:662-663, skipNetDevForDataDirect): 1 only
 *     "<dev>_dma", 2 both, anything else only "<dev>";
 *   2.28.3+ (net_ib.cc:702,709; net_ib/init.cc:378,386 since 2.29.2):
 *     > 0 "<dev>_dma",
 *     both when it is 2; <= 0 only "<dev>".
 */
void nccl_data_direct(int ver, int64_t dd_param, bool dd_capable,
		      struct nccl_dd_out *out)
{
	out->plain = true;
	out->dma = false;
	if (ver < NCCL_VER(2, 27, 0) || !dd_capable)
		return;
	if (ver < NCCL_VER(2, 27, 6)) {
		out->dma = dd_param != 0;
		return;
	}
	if (ver < NCCL_VER(2, 28, 0)) {
		out->dma = dd_param == 1 || dd_param == 2;
		out->plain = dd_param != 1;
		return;
	}
	if (dd_param > 0) {
		out->dma = true;
		out->plain = dd_param == 2;
	}
}

/* cudawrap.cc NCCL_PARAM(CuMemEnable): 0 in 2.18.x, -2 (auto) since 2.19.1. */
int64_t nccl_cumem_param_default(int ver)
{
	return ver < NCCL_VER(2, 19, 0) ? 0 : -2;
}

/*
 * cudawrap.cc ncclCuMemEnable and ncclIsCuMemSupported (2.18.1-2.30.7):
 * supported = driver >= 12000, cuMemCreate present, VMM attribute, and
 * (2.18.1-2.23.4 only) GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED.
 * 2.18.x: (param == -2 && supported) || param; since 2.19.1: param >= 0 ?
 * param : (param == -2 && supported). No cuMem before 2.18.1.
 */
bool nccl_cumem_enable(int ver, int64_t param, int cuda_driver,
		       bool has_cumem_create, int attr_vmm, int attr_gdr_vmm)
{
	bool supported = cuda_driver >= 12000 && has_cumem_create &&
			 attr_vmm > 0;

	if (ver < NCCL_VER(2, 18, 0))
		return false;
	if (ver < NCCL_VER(2, 24, 0))
		supported = supported && attr_gdr_vmm > 0;
	if (ver < NCCL_VER(2, 19, 0))
		return (param == -2 && supported) || param;
	return param >= 0 ? param != 0 : (param == -2 && supported);
}

uint64_t nccl_pci_id(unsigned int vendor, unsigned int device,
		     unsigned int sub_vendor, unsigned int sub_device)
{
	return (uint64_t)(vendor & 0xffff) << 48 |
	       (uint64_t)(device & 0xffff) << 32 |
	       (uint64_t)(sub_vendor & 0xffff) << 16 | (sub_device & 0xffff);
}

/*
 * topo.cc getBcmGen: Gen4 (1000:c010, subsystem 1000:a0xx, both levels)
 * since before 2.12.7; Gen5 (1000:c030, subsystem 1000:0xxx at the top,
 * 1000:1xxx below) since 2.20.3.
 */
int nccl_bcm_gen(int ver, uint64_t id, int level)
{
	uint64_t masked = id & 0xfffffffffffff000ULL;

	if (masked == 0x1000c0101000a000ULL)
		return 4;
	if (ver >= NCCL_VER(2, 20, 0) &&
	    masked == (0x1000c03010000000ULL | (uint64_t)level * 0x1000))
		return 5;
	return 0;
}

/*
 * topo.cc ncclTopoFlattenBcmSwitches (called by ncclTopoGetSystemFromXml
 * after the PCI links): a PCI switch whose id is a Broadcom PEX top level
 * absorbs every PCI switch linked below it that is the same generation one
 * level down; their children link straight to it (with their own link
 * bandwidth) and the sub-switch node is removed, so two devices below two
 * sub-switches of one PEX are one switch apart (PIX), not PXB.
 *   2.12.7-2.19.4  Gen4 only (1000:c010 sub 1000:a0xx) and the sub-switch's
 *                  id must equal the parent's exactly ("sub->pci.device !=
 *                  device"), subsystem device included;
 *   2.20.3-2.30.7  getBcmGen(parent, 0) == getBcmGen(sub, 1): Gen4 a0xx at
 *                  both levels, Gen5 (1000:c030) 0xxx on top, 1xxx below.
 * The flattened parent's id is then changed so it is not merged again:
 * one level only.
 */
bool nccl_bcm_flattens(int ver, uint64_t parent, uint64_t child)
{
	int gen = nccl_bcm_gen(ver, parent, 0);

	if (ver < NCCL_VER(2, 20, 0))
		return gen == 4 && child == parent;
	return gen && nccl_bcm_gen(ver, child, 1) == gen;
}

/*
 * paths.cc ncclTopoSetPaths (2.12.7-2.30.7): a hop between two PCI switch
 * nodes makes the path PXB; a path through one switch stays PIX.
 */
enum nccl_ptype nccl_pci_switch_path(int nswitches)
{
	return nswitches <= 1 ? NPT_PIX : NPT_PXB;
}

/* sscanf("%f GT/s"): unreadable reads as FLT_MAX (2.30.7 initialises it). */
static double gts_of(const char *s)
{
	float f;

	return s && sscanf(s, "%f GT/s", &f) == 1 ? f : 3.4e38;
}

/*
 * topo.cc kvDictPciGen through kvConvertToInt (xml.h: prefix match, in
 * order, else the fallback 60), 2.12.7-2.30.7; xml.cc picks the port's
 * max_link_speed text when it is lower, min(max_link_width) (strtol, 0
 * when unreadable), and ncclTopoAddPci turns width 0 into 16.
 */
double nccl_pci_bw(const char *dev_speed, const char *port_speed,
		   const char *dev_width, const char *port_width)
{
	static const struct { const char *key; int val; } gen[] = {
		{ "2.5 GT/s", 15 }, { "5 GT/s", 30 }, { "8 GT/s", 60 },
		{ "16 GT/s", 120 }, { "32 GT/s", 240 },
		{ "2.5 GT/s PCIe", 15 }, { "5.0 GT/s PCIe", 30 },
		{ "8.0 GT/s PCIe", 60 }, { "16.0 GT/s PCIe", 120 },
		{ "32.0 GT/s PCIe", 240 }, { "64.0 GT/s PCIe", 480 },
	};
	const char *str = dev_speed ? dev_speed : "";
	long width = dev_width ? strtol(dev_width, NULL, 0) : 0;
	int speed = 60;

	if (port_speed && gts_of(port_speed) < gts_of(dev_speed))
		str = port_speed;
	if (port_width) {
		long pw = strtol(port_width, NULL, 0);

		width = pw < width ? pw : width;
	}
	if (width == 0)
		width = 16;
	for (size_t i = 0; i < sizeof(gen) / sizeof(gen[0]); i++)
		if (!strncmp(str, gen[i].key, strlen(gen[i].key))) {
			speed = gen[i].val;
			break;
		}
	return (double)width * speed / 80.0;
}

/*
 * net_ib ncclIbSpeed/ncclIbWidth: the first set bit of active_speed /
 * active_width indexes a table, clamped to its last entry:
 *   widths {1, 4, 8, 12} before 2.14.3 (a 2X port reads as 12), {1, 4, 8,
 *   12, 2} since;
 *   speeds SDR..HDR {2500 5000 10000 10000 14000 25000 50000} before
 *   2.16.5, + NDR 100000 since 2.16.5, + XDR 200000 since 2.27.5 (an
 *   unknown speed reads as the last entry). 2.27.6+ read active_speed_ex
 *   and ibv_query_port_speed for XDR, the same 200000 a lane.
 * The kernel's sysfs rate (drivers/infiniband/core/sysfs.c rate_show)
 * prints the same two fields: "%d Gb/sec (%dX%s)" with " SDR" .. " XDR".
 */
int nccl_ib_port_mbps(int ver, const char *rate)
{
	static const char *const names[] = {
		"SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR", "NDR", "XDR",
	};
	static const int speeds[] = {
		2500, 5000, 10000, 10000, 14000, 25000, 50000, 100000, 200000,
	};
	const char *p = rate ? strchr(rate, '(') : NULL;
	int lanes, nspeeds, idx = 0, n = 0;
	char name[8] = "";

	if (!p || sscanf(p, "(%dX%n", &lanes, &n) != 1 || !n)
		return 0;
	sscanf(p + n, " %7[A-Z0-9]", name);
	if (lanes == 2 && ver < NCCL_VER(2, 14, 0))
		lanes = 12;
	if (lanes != 1 && lanes != 2 && lanes != 4 && lanes != 8 && lanes != 12)
		return 0;
	for (idx = 0; idx < 9 && strcmp(name, names[idx]); idx++)
		;
	if (idx == 9) {
		if (name[0])
			return 0;
		idx = 0;	/* old kernels print no name for SDR */
	}
	nspeeds = ver < NCCL_VER(2, 16, 5) ? 7 : ver < NCCL_VER(2, 27, 5) ? 8 : 9;
	if (idx >= nspeeds)
		idx = nspeeds - 1;
	return speeds[idx] * lanes;
}

/*
 * xml.cc ncclTopoGetXmlFromSys: a vendor "0x1000" PCI node gets a pcilink
 * per bus id in virtual_switch_links/<busid>/ (getBcmLinks, v2.22.3-1
 * xml.cc:410-431, 620; ncclOsGetBcmLinks, v2.30.7-1 src/os/linux.cc:676);
 * topo.cc ncclTopoAddPciLinks links the two PCI switch nodes (LINK_LOC,
 * LOC_BW: v2.22.3-1 topo.cc:604). Not in 2.21.5.
 */
bool nccl_bcm_virtual_links(int ver)
{
	return ver >= NCCL_VER(2, 22, 3);
}

double nccl_net_bw(int mbps)
{
	return (mbps <= 0 ? 10000 : mbps) / 8000.0;
}

enum nccl_ptype nccl_cpu_path(int numa_a, int numa_b)
{
	return numa_a == numa_b ? NPT_PHB : NPT_SYS;
}

/*
 * topo.cc ncclTopoGetLocal (2.18.5-2.30.7; getLocalNetMask 2.18.1-2.18.3
 * and ncclTopoGetLocalNet 2.12.7-2.17.1 the same way): highest bandwidth,
 * then lowest path code.
 */
int nccl_local_nets(int ver, const struct nccl_net_path *paths, int n,
		    int *locals)
{
	int min_code = INT_MAX, count = 0;
	double max_bw = 0;

	for (int i = 0; i < n; i++) {
		int c = code(ver, paths[i].type);

		if (paths[i].bw > max_bw ||
		    (paths[i].bw == max_bw && c < min_code)) {
			max_bw = paths[i].bw;
			min_code = c;
			count = 0;
		}
		if (paths[i].bw == max_bw && c == min_code) {
			if (locals)
				locals[count] = i;
			count++;
		}
	}
	return count;
}

/*
 * paths.cc ncclTopoComputePaths:
 *   P2C    gpuNode->paths[NET] and netNode->paths[GPU] both set
 *          (2.27.3-2.30.7; v2.30.7-1 :806-807)
 *   PXN    addInterStep(GPU, relay, GPU, g, NET, n): GPU->NET only,
 *          "Only enabling it in the GPU->NIC direction" (2.12.7-2.30.7;
 *          v2.30.7-1 :840)
 *   no GDR addInterStep(CPU, .., NET, n, GPU, g) then (CPU, .., GPU, g,
 *          NET, n): both (2.12.7-2.30.7; v2.30.7-1 :852-853)
 */
bool nccl_rewrite_net_side(int ver, enum nccl_rewrite rw)
{
	return rw != NCCL_RW_PXN;
}

/*
 * topo.cc ncclTopoGetLocalNet, ncclTopoGetLocal(NET, localNets[0], GPU)
 * (2.18.5-2.28.9; ncclTopoGetLocalNetType 2.30.7): the same comparison as
 * nccl_local_nets, seen from the NIC.
 */
int nccl_net_local_gpus(int ver, const struct nccl_net_path *net_gpu, int n)
{
	return nccl_local_nets(ver, net_gpu, n, NULL);
}

/*
 * topo.cc getNetDevsPolicyOnce (2.28.3-2.30.7): AUTO, ALL, MAX:<n>
 * (case-insensitive, n > 0); anything else is AUTO.
 */
enum nccl_netdevs nccl_netdevs_parse(const char *env, int *max)
{
	*max = 0;
	if (!env || !strcasecmp(env, "AUTO"))
		return NCCL_NETDEVS_AUTO;
	if (!strcasecmp(env, "ALL"))
		return NCCL_NETDEVS_ALL;
	if (!strncasecmp(env, "MAX:", 4) && atoi(env + 4) > 0) {
		*max = atoi(env + 4);
		return NCCL_NETDEVS_MAX;
	}
	return NCCL_NETDEVS_AUTO;
}

/* topo.h mirrorBits: reverse the low log2(pow2) bits. */
static int mirror_bits(int val, int pow2)
{
	int mirror = 0;

	for (int b = 1, mb = pow2 >> 1; b < pow2; b <<= 1, mb >>= 1)
		if (val & b)
			mirror |= mb;
	return mirror;
}

/*
 * ncclTopoGetLocalNet:
 *   2.12.7-2.17.1  gpu.dev % count (no channels)
 *   2.18.1-2.18.3  round robin over the local set by GPU, then channel
 *   2.18.5-2.30.7  net = gpu.dev (% localGpuCount since 2.30.7), mirrored
 *                  when the count is a power of two, + channel %
 *                  netsPerGpu; netsPerGpu DIVUP(nets, gpus) (AUTO), nets
 *                  (ALL), min(max, nets) (MAX, 2.28.3+).
 */
int nccl_rail_pick(const struct nccl_rail_in *in)
{
	int nets = in->local_nets, gpus = in->local_gpus;
	int net, per_gpu;

	if (nets <= 0 || in->gpu_dev < 0 || in->channel < 0)
		return -EINVAL;
	if (in->ver < NCCL_VER(2, 18, 0))
		return in->gpu_dev % nets;
	if (in->ver < NCCL_VER(2, 18, 5)) {
		if (in->same_set_count <= 0 || in->same_set_index < 0)
			return -EINVAL;
		return (in->channel * in->same_set_count + in->same_set_index) %
		       nets;
	}
	if (gpus <= 0)
		return -EINVAL;
	per_gpu = (nets + gpus - 1) / gpus;
	if (in->ver >= NCCL_VER(2, 28, 0) && in->policy == NCCL_NETDEVS_ALL)
		per_gpu = nets;
	else if (in->ver >= NCCL_VER(2, 28, 0) &&
		 in->policy == NCCL_NETDEVS_MAX)
		per_gpu = in->policy_max < nets ? in->policy_max : nets;
	if (per_gpu <= 0)
		return -EINVAL;
	net = in->gpu_dev;
	if (in->ver >= NCCL_VER(2, 30, 7))
		net %= gpus;
	if ((nets & (nets - 1)) == 0)
		net = mirror_bits(net, nets);
	net += in->channel % per_gpu;
	return net % nets;
}

/* NCCL_PARAM's reading (param.cc ncclLoadParam): an integer, else default. */
static long long nccl_param(const char *s, long long def)
{
	char *end;
	long long v;

	if (!s)
		return def;
	errno = 0;
	v = strtoll(s, &end, 0);
	return errno || end == s || *end ? def : v;
}

/* xml.h kvConvertToInt over topo.cc nicPathKvList: a prefix match, else
 * the list's end (PATH_LOC). Only LOC/PORT matter for one device's ports. */
static bool merge_level_fuses_ports(const char *env)
{
	static const char *const wide[] = { "PORT", "PIX", "PXB", "P2C",
					    "PXN", "PHB", "SYS" };

	if (!env)
		return true;		/* PATH_PORT, the default */
	for (size_t i = 0; i < sizeof(wide) / sizeof(wide[0]); i++)
		if (!strncmp(env, wide[i], strlen(wide[i])))
			return true;
	return false;
}

/*
 * How many usable ports of one RDMA device NCCL fuses into one device
 * (1: every port its own device):
 *   < 2.20.3       none
 *   2.20.3-2.23.4  net_ib.cc ncclIbInit (ncclIbInitDevices): ports with the
 *                  same pciPath, sys_image_guid and link layer
 *                  (ncclIbFindMatchingDev), NCCL_IB_MAX_DEVS_PER_NIC 2 per
 *                  device, NCCL_IB_MERGE_NICS (default 1); when the node's
 *                  merged devices differ in size ("a mix of single and
 *                  multiple-port NICs") merging is off for all
 *                  (v2.23.4-1 net_ib.cc:481-497, :536-637)
 *   2.24.3-        topo.cc ncclTopoAutoMerge: NETs whose XML path is within
 *                  NCCL_NET_MERGE_LEVEL (default PORT: the ports of one
 *                  PCI function; LOC or an unknown name: none), up to
 *                  NCCL_NET_MAX_DEVS_PER_NIC (4; 8 with the v12 plugin API
 *                  from 2.30.3); ncclIbMakeVDeviceInternal refuses when
 *                  NCCL_IB_MERGE_NICS=0 and the ports stay apart
 *                  (v2.28.9-1 topo.cc:1094-1160, :1399-1408, net_ib.cc:598;
 *                  v2.30.7-1 topo.cc:1392-1440, net_ib/init.cc:197-200)
 * mixed: (2.20.3-2.23.4) the node's devices fuse into groups of different
 * sizes.
 */
int nccl_fused_ports(const struct nccl_fusion_in *in)
{
	int cap;

	if (in->ports <= 1 || in->ver < NCCL_VER(2, 20, 3))
		return 1;
	if (!nccl_param(in->merge_nics, 1))
		return 1;
	if (in->ver < NCCL_VER(2, 24, 3))
		return in->mixed ? 1 : 2 < in->ports ? 2 : in->ports;
	if (!merge_level_fuses_ports(in->merge_level))
		return 1;
	cap = in->ver >= NCCL_VER(2, 30, 3) ? 8 : 4;
	return in->ports < cap ? in->ports : cap;
}

/* The fused device's name: ncclIbMakeVDeviceInternal (2.24.3+) and
 * ncclIbInit (2.20.3-2.23.4) append "+<name>" per further port. */
void nccl_fused_name(char *buf, size_t len, const char *dev, int ports)
{
	size_t used;

	snprintf(buf, len, "%s", dev);
	for (int i = 1; i < ports; i++) {
		used = strlen(buf);
		if (used + 1 >= len)
			break;
		snprintf(buf + used, len - used, "+%s", dev);
	}
}

/*
 * Does ncclTopoAddC2c's findLocalCpu search without a came-from check?
 * v2.19.3-1 (ncclTopoAddC2c added) .. v2.26.1: it follows every PCI link
 * in the link order (topo.cc:47-58 at v2.21.5-1) and can circle below a
 * switch for ever; v2.26.2-1 passes the node it came from and follows only
 * PCI switches and the CPU (topo.cc:48-62).
 */
bool nccl_local_cpu_search_circles(int ver)
{
	return ver >= NCCL_VER(2, 19, 3) && ver < NCCL_VER(2, 26, 2);
}
