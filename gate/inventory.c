// SPDX-License-Identifier: MIT
/*
 * The subjects of the report: GPUs (from CUDA and from the PCI bus by
 * class, so they are listed even when CUDA is broken) and RDMA devices with
 * their ports (from /sys/class/infiniband, matched to the verbs list).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"

#include "access/sysroot.h"
#include "gate/context.h"
#include "decode/parse.h"

#define PCI_DEVICES	"/sys/bus/pci/devices"
#define IB_CLASS	"/sys/class/infiniband"
#define PCI_VENDOR_NVIDIA 0x10de

/* Remember a function that may be a GPU but cannot be told (EACCES...). */
static void pci_unreadable(struct inventory *inv, const char *bdf,
			   const char *attr, int ret)
{
	if (inv->pci_unreadable++)
		return;
	snprintf(inv->first_pci_unreadable, sizeof(inv->first_pci_unreadable),
		 "%s/%s: %s", bdf, attr, strerror(-ret));
}

/*
 * VGA (0x0300) or 3D controller (0x0302) from NVIDIA: a GPU. A vendor or
 * class that cannot be read is counted as unknown, not as "no GPU".
 */
static bool is_nvidia_gpu(struct sysroot *sr, struct inventory *inv,
			  const char *bdf, unsigned int *device)
{
	char p[256];
	long long vendor, class, dev;
	int ret;

	snprintf(p, sizeof(p), PCI_DEVICES "/%s/vendor", bdf);
	ret = sysroot_read_ll(sr, p, &vendor);
	if (ret && ret != -EINVAL && path_state_of(ret) == PATH_UNREADABLE)
		pci_unreadable(inv, bdf, "vendor", ret);
	if (ret || vendor != PCI_VENDOR_NVIDIA)
		return false;
	snprintf(p, sizeof(p), PCI_DEVICES "/%s/class", bdf);
	ret = sysroot_read_ll(sr, p, &class);
	if (ret && ret != -EINVAL && path_state_of(ret) == PATH_UNREADABLE)
		pci_unreadable(inv, bdf, "class", ret);
	if (ret)
		return false;
	if ((class >> 8) != 0x0300 && (class >> 8) != 0x0302)
		return false;
	snprintf(p, sizeof(p), PCI_DEVICES "/%s/device", bdf);
	*device = sysroot_read_ll(sr, p, &dev) ? 0 : (unsigned int)dev;
	return true;
}

/* NVML's UUID of the GPU at this PCI address, or "". */
static const char *nvml_uuid(const struct vendor_facts *vfs, const char *pci)
{
	const struct nvml_facts *nf = &vfs->nvml;

	if (!pci[0])
		return "";
	for (int i = 0; i < vf_upto(nf->gpus_recorded, vfs->cap.gpus); i++)
		if (!strcmp(nf->gpus[i].pci, pci))
			return nf->gpus[i].uuid;
	return "";
}

/*
 * GPUn: n is the GPU's place in PCI address order on the node (what
 * nvidia-smi numbers), never its CUDA ordinal, so a GPU keeps its id when
 * CUDA_VISIBLE_DEVICES or a device cgroup hides others. The label carries
 * the PCI address and the UUID where NVML gave one.
 */
static void add_gpu_subject(struct gdr_ctx *ctx, struct inv_gpu *g,
			    const struct cuda_gpu *cg, size_t index)
{
	char id[64], name[VF_NAME + 16], label[256];

	snprintf(id, sizeof(id), "GPU%zu", index);
	if (cg && cg->name[0])
		snprintf(name, sizeof(name), "%s", cg->name);
	else
		snprintf(name, sizeof(name), "NVIDIA GPU 10de:%04x",
			 g->pci_device);
	if (g->uuid[0])
		snprintf(label, sizeof(label), "%s (%s, %s)", name,
			 g->pci[0] ? g->pci : "PCI address unknown", g->uuid);
	else if (g->pci[0])
		snprintf(label, sizeof(label), "%s (%s)", name, g->pci);
	else
		snprintf(label, sizeof(label), "%s (PCI address unknown)", name);
	g->subject = report_subject(ctx->rep, SUBJ_GPU, id, label, g->pci, -1);
	report_subject_uuid(ctx->rep, g->subject, g->uuid);
}

/* PCI address order; GPUs whose address is unknown last, by CUDA ordinal. */
static int cmp_gpu(const void *a, const void *b)
{
	const struct inv_gpu *x = a, *y = b;

	if (!x->pci[0] != !y->pci[0])
		return x->pci[0] ? -1 : 1;
	if (x->pci[0] && strcmp(x->pci, y->pci))
		return strcmp(x->pci, y->pci);
	return x->cuda - y->cuda;
}

static void build_gpus(struct gdr_ctx *ctx)
{
	const struct cuda_facts *cf = &ctx->vf->cuda;
	struct inventory *inv = &ctx->inv;
	char **names = NULL;
	size_t n = 0, ng = 0;
	bool *used;
	int ret;

	ret = sysroot_list(ctx->sr, PCI_DEVICES, &names, &n);
	inv->pci_errno = ret ? -ret : 0;
	inv->gpu = xcalloc((size_t)cf->gpus_recorded + n, sizeof(*inv->gpu));
	used = xcalloc(n, sizeof(*used));

	/* CUDA's GPUs, matched to sysfs. */
	for (int i = 0; i < cf->gpus_recorded; i++) {
		struct inv_gpu *g = &inv->gpu[ng++];

		snprintf(g->pci, sizeof(g->pci), "%s", cf->gpus[i].pci);
		g->cuda = i;
		for (size_t j = 0; j < n; j++) {
			if (strcmp(names[j], g->pci))
				continue;
			g->in_sysfs = is_nvidia_gpu(ctx->sr, inv, names[j],
						    &g->pci_device);
			used[j] = true;
		}
	}
	/*
	 * Then GPUs on the PCI bus that CUDA did not report -- unless a CUDA
	 * GPU's address is unknown: one of them is that GPU, and listing it
	 * twice would call it "not visible to this process".
	 */
	size_t scan = n;

	for (int i = 0; i < cf->gpus_recorded; i++)
		if (!cf->gpus[i].pci[0])
			scan = 0;
	for (size_t j = 0; j < scan; j++) {
		struct inv_gpu *g;
		unsigned int device;

		if (used[j] || !is_nvidia_gpu(ctx->sr, inv, names[j], &device))
			continue;
		g = &inv->gpu[ng++];
		snprintf(g->pci, sizeof(g->pci), "%s", names[j]);
		g->cuda = -1;
		g->in_sysfs = true;
		g->pci_device = device;
	}
	qsort(inv->gpu, ng, sizeof(*inv->gpu), cmp_gpu);
	for (size_t i = 0; i < ng; i++) {
		struct inv_gpu *g = &inv->gpu[i];

		snprintf(g->uuid, sizeof(g->uuid), "%s",
			 nvml_uuid(ctx->vf, g->pci));
		add_gpu_subject(ctx, g, g->cuda >= 0 ? &cf->gpus[g->cuda] :
				NULL, i);
	}
	inv->ngpu = ng;
	free(used);
	sysroot_free_list(names, n);
}

static int cmp_port(const void *a, const void *b)
{
	return ((const struct inv_port *)a)->num -
	       ((const struct inv_port *)b)->num;
}

/*
 * The PCI function a sysfs link leads to: the deepest BDF in its realpath
 * (a netdev's "device" may be a virtio device below the PCI function).
 */
static bool realpath_bdf(struct sysroot *sr, const char *link, char *out,
			 size_t len, int *err)
{
	char real[1024];
	unsigned int d, b, s, f;
	char tail;
	int ret = sysroot_realpath(sr, link, real, sizeof(real));

	/*
	 * A loop or a refusal (EACCES) is an unreadable entry, not an absent
	 * one: only ENOENT means there is no link (a software device).
	 */
	if (ret && ret != -ENOENT && ret != -ENOTDIR && err)
		*err = -ret;
	if (ret)
		return false;
	for (char *slash = strrchr(real, '/'); slash; slash = strrchr(real, '/')) {
		const char *comp = slash + 1;

		if (sscanf(comp, "%x:%x:%x.%x%c", &d, &b, &s, &f, &tail) == 4 &&
		    strlen(comp) < len) {
			memcpy(out, comp, strlen(comp) + 1);
			return true;
		}
		*slash = '\0';
	}
	return false;
}

/*
 * The PCI function behind an RDMA device: its own device link, or for
 * software devices (soft-RoCE, siw) the function of the netdev it runs on.
 */
static void nic_pci(struct sysroot *sr, struct inv_nic *nic)
{
	char p[256], ndev[64];

	snprintf(p, sizeof(p), IB_CLASS "/%s/device", nic->name);
	if (realpath_bdf(sr, p, nic->pci, sizeof(nic->pci), &nic->pci_err)) {
		snprintf(nic->pci_via, sizeof(nic->pci_via), "device");
		return;
	}
	if (nic->pci_err)
		return;		/* there, but unreadable: not a soft device */
	snprintf(p, sizeof(p), IB_CLASS "/%s/parent", nic->name);
	if (sysroot_read_line(sr, p, ndev, sizeof(ndev)) || !ndev[0] ||
	    strchr(ndev, '/'))
		return;
	snprintf(p, sizeof(p), "/sys/class/net/%s/device", ndev);
	if (realpath_bdf(sr, p, nic->pci, sizeof(nic->pci), &nic->pci_err))
		snprintf(nic->pci_via, sizeof(nic->pci_via), "netdev %s", ndev);
}

static void build_nics(struct gdr_ctx *ctx)
{
	const struct verbs_facts *vf = &ctx->vf->verbs;
	struct inventory *inv = &ctx->inv;
	char **names = NULL;
	size_t n = 0;
	int ret = sysroot_list(ctx->sr, IB_CLASS, &names, &n);

	inv->ib_errno = ret ? -ret : 0;
	inv->nic = xcalloc(n, sizeof(*inv->nic));
	for (size_t i = 0; i < n; i++) {
		struct inv_nic *nic = &inv->nic[inv->nnic++];
		char dir[256], label[256], **ports = NULL;
		size_t np = 0;

		snprintf(nic->name, sizeof(nic->name), "%s", names[i]);
		nic_pci(ctx->sr, nic);
		nic->verbs = -1;
		for (int v = 0; v < vf_upto(vf->count, ctx->vf->cap.nics); v++)
			if (!strcmp(vf->nics[v].name, nic->name))
				nic->verbs = v;
		if (!nic->pci[0])
			snprintf(label, sizeof(label), "%s (no PCI function)",
				 nic->name);
		else if (strcmp(nic->pci_via, "device"))
			snprintf(label, sizeof(label), "%s (%s via %s)", nic->name,
				 nic->pci, nic->pci_via);
		else
			snprintf(label, sizeof(label), "%s (%s)", nic->name,
				 nic->pci);
		nic->subject = report_subject(ctx->rep, SUBJ_NIC, nic->name,
					      label, nic->pci, -1);

		snprintf(dir, sizeof(dir), IB_CLASS "/%s/ports", nic->name);
		nic->ports_err = -sysroot_list(ctx->sr, dir, &ports, &np);
		nic->ports = xcalloc(np, sizeof(*nic->ports));
		for (size_t p = 0; p < np; p++) {
			char *end;
			long num = strtol(ports[p], &end, 10);

			if (*end || num < 1 || num > 255)
				continue;
			nic->ports[nic->nports++].num = (int)num;
		}
		qsort(nic->ports, nic->nports, sizeof(*nic->ports), cmp_port);
		for (size_t p = 0; p < nic->nports; p++) {
			char id[96];

			snprintf(id, sizeof(id), "%s/%d", nic->name,
				 nic->ports[p].num);
			snprintf(label, sizeof(label), "%s port %d", nic->name,
				 nic->ports[p].num);
			nic->ports[p].subject = report_subject(ctx->rep,
					SUBJ_PORT, id, label, nic->pci,
					nic->subject);
		}
		sysroot_free_list(ports, np);
	}
	sysroot_free_list(names, n);
}

/* Every GPU x RDMA device, with the PCIe path between the two. */
static void build_pairs(struct gdr_ctx *ctx)
{
	struct inventory *inv = &ctx->inv;

	int *nic_node = xcalloc(inv->nnic, sizeof(*nic_node));

	/* Tree lookups once per device, not once per pair. */
	for (size_t n = 0; n < inv->nnic; n++)
		nic_node[n] = inv->nic[n].pci[0] ?
			pcitree_find(&ctx->tree, inv->nic[n].pci) : -1;
	inv->pair = xcalloc(inv->ngpu * inv->nnic, sizeof(*inv->pair));
	for (size_t g = 0; g < inv->ngpu; g++) {
		int gpu_node = pcitree_find(&ctx->tree, inv->gpu[g].pci);

		for (size_t n = 0; n < inv->nnic; n++) {
			struct inv_pair *p = &inv->pair[inv->npair++];
			const struct subject *sg, *sn;
			char id[160], label[200];

			p->gpu = (int)g;
			p->nic = (int)n;
			p->node_gpu = gpu_node;
			p->node_nic = nic_node[n];
			pcitree_path(&ctx->tree, p->node_gpu, p->node_nic,
				     &p->path);
			sg = &ctx->rep->subj[inv->gpu[g].subject];
			sn = &ctx->rep->subj[inv->nic[n].subject];
			snprintf(id, sizeof(id), "%s~%s", sg->id, sn->id);
			snprintf(label, sizeof(label), "%s <-> %s", sg->id, sn->id);
			p->subject = report_subject(ctx->rep, SUBJ_PAIR, id,
						    label, NULL, -1);
			ctx->rep->subj[p->subject].pair_gpu = inv->gpu[g].subject;
			ctx->rep->subj[p->subject].pair_nic = inv->nic[n].subject;
		}
	}
	free(nic_node);
}

static const struct inv_nic *nic_base;

static int nic_by_name(const void *a, const void *b)
{
	return strcmp(nic_base[*(const int *)a].name,
		      nic_base[*(const int *)b].name);
}

/*
 * Each pair's registration record, found once (gates ask per pair and
 * per gate: a search of every record each time was quadratic, most of
 * the run on an 8 x 256 node). The first record of a GPU and device
 * counts, as the worker writes one per pair.
 */
static void link_reg_pairs(struct gdr_ctx *ctx)
{
	struct inventory *inv = &ctx->inv;
	const struct reg_facts *rf = &ctx->vf->reg;
	const struct cuda_facts *cf = &ctx->vf->cuda;
	int *by_name = xcalloc(inv->nnic + 1, sizeof(*by_name));
	int *gpu_of = xcalloc((size_t)cf->gpus_recorded + 1, sizeof(*gpu_of));

	for (size_t i = 0; i < inv->npair; i++)
		inv->pair[i].reg = -1;
	for (int o = 0; o < cf->gpus_recorded; o++)
		gpu_of[o] = -1;
	/* CUDA ordinal -> inventory GPU (the worker records ordinals). */
	for (size_t g = 0; g < inv->ngpu; g++) {
		int c = inv->gpu[g].cuda;

		if (c >= 0 && c < cf->gpus_recorded) {
			int o = cf->gpus[c].ordinal;

			if (o >= 0 && o < cf->gpus_recorded && gpu_of[o] < 0)
				gpu_of[o] = (int)g;
		}
	}
	for (size_t n = 0; n < inv->nnic; n++)
		by_name[n] = (int)n;
	nic_base = inv->nic;
	qsort(by_name, inv->nnic, sizeof(*by_name), nic_by_name);
	for (int i = 0; i < rf->npairs; i++) {
		const struct reg_pair *rp = &rf->pairs[i];
		size_t lo = 0, hi = inv->nnic;
		int g = rp->gpu >= 0 && rp->gpu < cf->gpus_recorded ?
			gpu_of[rp->gpu] : -1;

		if (g < 0)
			continue;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (strcmp(inv->nic[by_name[mid]].name, rp->nic) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		/* Equal names (a broken tree) all get the record. */
		for (; lo < inv->nnic && !strcmp(inv->nic[by_name[lo]].name,
						  rp->nic); lo++) {
			struct inv_pair *p = &inv->pair[(size_t)g * inv->nnic +
							 (size_t)by_name[lo]];

			if (p->reg < 0)
				p->reg = i;
		}
	}
	nic_base = NULL;
	free(by_name);
	free(gpu_of);
}

void inventory_build(struct gdr_ctx *ctx)
{
	memset(&ctx->inv, 0, sizeof(ctx->inv));
	ctx->host = report_subject(ctx->rep, SUBJ_HOST, "host",
				   ctx->rep->meta.hostname, NULL, -1);
	build_gpus(ctx);
	build_nics(ctx);
	build_pairs(ctx);
	link_reg_pairs(ctx);
}

void inventory_free(struct inventory *inv)
{
	for (size_t i = 0; i < inv->nnic; i++)
		free(inv->nic[i].ports);
	free(inv->nic);
	free(inv->gpu);
	free(inv->pair);
	memset(inv, 0, sizeof(*inv));
}
