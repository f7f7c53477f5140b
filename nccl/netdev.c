// SPDX-License-Identifier: MIT
/*
 * NCCL's network devices (see nccl/netdev.h): the ports its IB plugin
 * opens, NIC fusion, the GID rules' inputs. Pure: the port facts come in
 * typed (probes/nccl_facts.c reads them), the answers go out.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"
#include "nccl/netdev.h"

enum nccl_link nccl_link_of(const char *text)
{
	if (!strcmp(text, "InfiniBand"))
		return NCCL_LINK_IB;
	if (!strcmp(text, "Ethernet"))
		return NCCL_LINK_ETH;
	return NCCL_LINK_OTHER;
}

bool nccl_port_state_of(const char *text, long *state)
{
	char *end;

	*state = strtol(text, &end, 10);
	return end != text && *end == ':';
}

/*
 * ncclIbInitDevices skips ports whose link layer is neither InfiniBand nor
 * Ethernet (net_ib.cc v2.12.7-1..v2.28.9-1, net_ib/init.cc in v2.30.7-1):
 * an AWS EFA ("Unknown") is never an IB-transport device. Unreadable: kept.
 */
static bool layer_ok(const struct nccl_port_facts *p)
{
	return p->link != NCCL_LINK_OTHER;
}

/*
 * ncclIbInitDevices skips ports that are not ACTIVE ("if (portAttr.state !=
 * IBV_PORT_ACTIVE) continue;": net_ib.cc v2.12.7-1..v2.28.9-1, net_ib/init.cc
 * in v2.30.7-1): a DOWN port is no NCCL device, so a GPU whose nearest NIC
 * is down takes the next one (scenario node-8x12-broken-rail). Unreadable
 * or malformed: kept (nic.port says so).
 */
static bool active(const struct nccl_port_facts *p)
{
	return !p->state_known || p->state == 4;
}

static bool hca_selects(const struct nccl_settings *set, const char *dev,
			int port)
{
	return !set->hca_set || nccl_hca_match(&set->hca, dev, port);
}

bool nccl_port_listed(const struct nccl_settings *set, const char *dev,
		      const struct nccl_port_facts *p)
{
	return layer_ok(p) && hca_selects(set, dev, p->num);
}

bool nccl_port_opens(const struct nccl_settings *set, const char *dev,
		     const struct nccl_port_facts *p, bool as_built)
{
	return layer_ok(p) && (as_built || active(p)) &&
	       hca_selects(set, dev, p->num);
}

/*
 * ncclIbInit skips a device ibv_open_device refuses ("NET/IB : Unable to
 * open device": net_ib.cc v2.12.7-1..v2.28.9-1, net_ib/init.cc v2.30.7-1),
 * so none of its ports is an NCCL device now.
 */
static bool device_opens(const struct nccl_nic_ports *nic, bool as_built)
{
	return as_built || !nic->open_fails;
}

int nccl_first_port(const struct nccl_settings *set,
		    const struct nccl_nic_ports *nic, bool as_built)
{
	if (!device_opens(nic, as_built))
		return -1;
	for (size_t p = 0; p < nic->nports; p++)
		if (nccl_port_opens(set, nic->name, &nic->port[p], as_built))
			return nic->port[p].num;
	return -1;
}

bool nccl_ports_down(const struct nccl_settings *set,
		     const struct nccl_nic_ports *nics, size_t nnic)
{
	for (size_t i = 0; i < nnic; i++)
		for (size_t p = 0; p < nics[i].nports; p++)
			if (nccl_port_listed(set, nics[i].name,
					     &nics[i].port[p]) &&
			    (!active(&nics[i].port[p]) ||
			     !device_opens(&nics[i], false)))
				return true;
	return false;
}

int nccl_port_mbps(int ver, const struct nccl_port_facts *p)
{
	return p->rate_read ? nccl_ib_port_mbps(ver, p->rate) : 0;
}

/*
 * ncclIbGetPciPath (net_ib.cc v2.18.6-1..v2.28.9-1, net_ib/init.cc
 * v2.30.7-1): the device link's real path with the function digit set to
 * 0 ("merge multi-port NICs"), and, with NCCL_IB_MERGE_VFS (default 1),
 * the device digits too ("merge virtual functions"). Two devices with one
 * identity sit on one PCI node of NCCL's topology, PATH_PORT apart.
 */
void nccl_pci_identity(const char *real, const char *merge_vfs, char *out,
		       size_t len)
{
	size_t n;

	if (len < 8 || !real[0]) {
		if (len)
			out[0] = '\0';
		return;
	}
	snprintf(out, len, "%s", real);
	n = strlen(out);
	if (n < 4)
		return;
	out[n - 1] = '0';
	if (!merge_vfs || strtoll(merge_vfs, NULL, 0) != 0)
		out[n - 3] = out[n - 4] = '0';
}

/* Usable ports of a NIC this pass (nccl_port_opens), their speed summed. */
static int usable_ports(const struct nccl_fuse_in *in,
			const struct nccl_nic_ports *n, long long *mbps)
{
	int count = 0, v;

	*mbps = 0;
	if (!device_opens(n, in->as_built))
		return 0;
	for (size_t k = 0; k < n->nports; k++) {
		if (!nccl_port_opens(in->set, n->name, &n->port[k],
				     in->as_built))
			continue;
		count++;
		v = nccl_port_mbps(in->ver, &n->port[k]);
		*mbps = v > 0 && *mbps >= 0 ? *mbps + v : -1;
	}
	if (*mbps < 0)
		*mbps = 0;
	return count;
}

/* Appends a NIC's name to the fused device's ("mlx5_0+mlx5_1"). */
static void name_add(struct nccl_fusion *f, const char *name)
{
	if (f->name[0])
		strncat(f->name, "+", sizeof(f->name) - strlen(f->name) - 1);
	strncat(f->name, name, sizeof(f->name) - strlen(f->name) - 1);
}

/* The working arrays of one nccl_fuse, [nnic + 1] each. */
struct fuse_work {
	char (*id)[PATH_MAX];
	int *ports;
	long long *mbps;
	bool *done;
};

/*
 * The group of NIC n (the NICs with its identity, not yet done), walked
 * port by port in device order, size at a time: the first NIC of each run
 * leads it. pass 0 only marks them done.
 */
static void fuse_group(const struct nccl_fuse_in *in, struct fuse_work *w,
		       size_t n, int size, int pass, struct nccl_fusion *fuse)
{
	long long sum = 0;
	size_t lead = n;
	int left = 0;

	for (size_t m = n; m < in->nnic; m++) {
		if (w->done[m] || !w->ports[m] || strcmp(w->id[m], w->id[n]))
			continue;
		w->done[m] = true;
		if (!pass)
			continue;
		for (int k = 0; k < w->ports[m]; k++) {
			if (!left) {
				lead = m;
				left = size;
				sum = 0;
				fuse[m].ports = 0;
				fuse[m].name[0] = '\0';
			}
			fuse[m].lead = (int)lead;
			fuse[lead].ports++;
			sum = sum >= 0 && w->mbps[m] > 0 ?
			      sum + w->mbps[m] / w->ports[m] : -1;
			fuse[lead].mbps = sum > 0 ? sum : 0;
			name_add(&fuse[lead], in->nics[m].name);
			left--;
		}
	}
}

/*
 * In the releases that fuse inside the IB plugin (2.20.3-2.23.4) a group
 * also needs one link layer, and a node whose groups differ in size fuses
 * none: pass 0 finds that out, pass 1 fuses.
 */
void nccl_fuse(const struct nccl_fuse_in *in, struct nccl_fusion *fuse)
{
	size_t nn = in->nnic;
	struct fuse_work w = {
		xcalloc(nn + 1, sizeof(*w.id)), xcalloc(nn + 1, sizeof(int)),
		xcalloc(nn + 1, sizeof(long long)), xcalloc(nn + 1, sizeof(bool)),
	};
	int first_size = 0;
	bool mixed = false;
	struct nccl_fusion_in fin = {
		.ver = in->ver,
		.merge_nics = in->merge_nics,
		.merge_level = in->merge_level,
	};

	for (size_t n = 0; n < nn; n++) {
		fuse[n].lead = (int)n;
		fuse[n].ports = 1;
		snprintf(fuse[n].name, sizeof(fuse[n].name), "%s",
			 in->nics[n].name);
		w.ports[n] = usable_ports(in, &in->nics[n], &w.mbps[n]);
		fuse[n].mbps = w.mbps[n];
		nccl_pci_identity(in->nics[n].real, in->merge_vfs, w.id[n],
				  PATH_MAX);
	}
	for (int pass = 0; pass < 2; pass++) {
		memset(w.done, 0, (nn + 1) * sizeof(bool));
		for (size_t n = 0; n < nn; n++) {
			int total = 0, size;

			if (w.done[n] || !w.ports[n] || !w.id[n][0])
				continue;
			for (size_t m = n; m < nn; m++)
				if (!w.done[m] && w.ports[m] &&
				    !strcmp(w.id[m], w.id[n]))
					total += w.ports[m];
			fin.ports = total;
			fin.mixed = mixed;
			size = nccl_fused_ports(&fin);
			/* 2.20.3-2.23.4: sizes that differ turn fusion off. */
			if (!pass && size > 1 && in->ver < NCCL_VER(2, 24, 3)) {
				int last = total % size ? total % size : size;

				if (!first_size)
					first_size = size;
				mixed |= size != first_size || last != size;
			}
			fuse_group(in, &w, n, size, pass, fuse);
		}
	}
	free(w.id);
	free(w.ports);
	free(w.mbps);
	free(w.done);
}

/*
 * NCCL_IB_ADDR_FAMILY (envIbAddrFamily, net_ib.cc from v2.21.5-1,
 * net_ib/connect.cc in v2.30.7-1): "AF_INET6" selects IPv6 GIDs, anything
 * else AF_INET; older NCCL has no such setting.
 */
int nccl_addr_family(int ver, const char *value)
{
	return ver >= NCCL_VER(2, 21, 5) && value && !strcmp(value, "AF_INET6") ?
	       NCCL_AF_INET6 : NCCL_AF_INET;
}

bool nccl_gid_text(const char *text, uint8_t raw[16])
{
	unsigned int w[8];

	if (sscanf(text, "%x:%x:%x:%x:%x:%x:%x:%x", &w[0], &w[1], &w[2], &w[3],
		   &w[4], &w[5], &w[6], &w[7]) != 8)
		return false;
	for (int i = 0; i < 8; i++) {
		raw[2 * i] = (uint8_t)(w[i] >> 8);
		raw[2 * i + 1] = (uint8_t)w[i];
	}
	return true;
}

int nccl_gid_type_of(const char *text)
{
	return strstr(text, "v2") ? 2 : strstr(text, "IB/RoCE v1") ? 1 : 0;
}
