/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_NCCL_NETDEV_H
#define GDRCHECK_NCCL_NETDEV_H

/*
 * NCCL's network devices as its IB plugin makes them (net_ib.cc
 * ncclIbInitDevices, net_ib/init.cc in v2.30.7-1): which port of a NIC it
 * opens, which NICs it fuses into one device and under what name, and the
 * GID rules' inputs. Pure functions over the typed port facts that
 * probes/nccl_facts.c reads from sysfs; nothing here reads the node.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nccl/settings.h"

/* A port's link_layer file. */
enum nccl_link {
	NCCL_LINK_UNREAD,	/* unreadable */
	NCCL_LINK_IB,		/* "InfiniBand" */
	NCCL_LINK_ETH,		/* "Ethernet" */
	NCCL_LINK_OTHER,	/* anything else (AWS EFA: "Unknown") */
};

/* What NCCL reads of one port. */
struct nccl_port_facts {
	int num;
	enum nccl_link link;
	bool state_known;	/* the state file read and "N: ..." */
	long state;		/* N of "4: ACTIVE" */
	bool rate_read;		/* rate: the sysfs rate text */
	char rate[96];
};

/* One RDMA device's ports, and its device link's real path. */
struct nccl_nic_ports {
	const char *name;
	const struct nccl_port_facts *port;
	size_t nports;
	const char *real;	/* "" when unreadable */
	/* ibv_open_device fails for a reason of the device's own (not this
	 * process's permissions or view): NCCL skips it now. */
	bool open_fails;
};

enum nccl_link nccl_link_of(const char *text);
/* "4: ACTIVE" -> *state 4, true; malformed: false. */
bool nccl_port_state_of(const char *text, long *state);

/*
 * Does NCCL_IB_HCA select the port and does NCCL take its link layer (a
 * port whose rate NCCL could read)? nccl_port_opens: this pass also needs
 * it ACTIVE, unless as_built (every present port counted as ACTIVE).
 */
bool nccl_port_listed(const struct nccl_settings *set, const char *dev,
		      const struct nccl_port_facts *p);
bool nccl_port_opens(const struct nccl_settings *set, const char *dev,
		     const struct nccl_port_facts *p, bool as_built);
/* The first port of nic NCCL opens, or -1 (none now on a device that
 * does not open, unless as_built). */
int nccl_first_port(const struct nccl_settings *set,
		    const struct nccl_nic_ports *nic, bool as_built);
/* Is a port NCCL could open (link layer, NCCL_IB_HCA) not ACTIVE, or on a
 * device that does not open (the node now is not the node as built)? */
bool nccl_ports_down(const struct nccl_settings *set,
		     const struct nccl_nic_ports *nics, size_t nnic);
/* The port's speed in Mbps as NCCL ver reads it; 0 unread. */
int nccl_port_mbps(int ver, const struct nccl_port_facts *p);

/*
 * A device's PCI identity as NCCL's IB plugin takes it (ncclIbGetPciPath):
 * the real path with the function digit 0 and, unless NCCL_IB_MERGE_VFS
 * is 0, the device digits too. "" when real is "".
 */
void nccl_pci_identity(const char *real, const char *merge_vfs, char *out,
		       size_t len);

/* Per NIC: the NCCL device it is part of. */
struct nccl_fusion {
	int lead;		/* the NIC whose pairs stand for it */
	int ports;		/* ports fused into it (1: none) */
	long long mbps;		/* their speeds summed; 0 unknown */
	char name[160];		/* "mlx5_0+mlx5_0" as NCCL names it */
};

struct nccl_fuse_in {
	int ver;
	const struct nccl_settings *set;
	bool as_built;
	/* NCCL_IB_MERGE_NICS, NCCL_NET_MERGE_LEVEL, NCCL_IB_MERGE_VFS */
	const char *merge_nics, *merge_level, *merge_vfs;
	const struct nccl_nic_ports *nics;
	size_t nnic;
};

/*
 * NIC fusion this pass (nccl_fused_ports): fuse[nnic] filled. The usable
 * ports of the NICs with one PCI identity, in device order, fused in
 * groups of the size the release and settings give.
 */
void nccl_fuse(const struct nccl_fuse_in *in, struct nccl_fusion *fuse);

/* NCCL_IB_ADDR_FAMILY (envIbAddrFamily): NCCL_AF_INET or NCCL_AF_INET6. */
int nccl_addr_family(int ver, const char *value);
/* A sysfs GID ("fe80:0000:...") into raw; false if malformed. */
bool nccl_gid_text(const char *text, uint8_t raw[16]);
/* A gid_attrs/types file's text: 2 (RoCE v2), 1 (IB/RoCE v1), else 0. */
int nccl_gid_type_of(const char *text);

#endif
