/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_NCCL_RULES_H
#define GDRCHECK_NCCL_RULES_H

/*
 * NCCL's decisions about GPUDirect RDMA, as pure functions of the NCCL
 * version and the facts NCCL looks at. Every function names the NCCL file,
 * function and the versions (release tags of github.com/NVIDIA/nccl) its
 * rule holds for; docs/nccl-model.md has the evidence. Nothing here reads
 * the node, prints or keeps state.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* NCCL_VERSION_CODE of NCCL >= 2.9: 2.27.3 is 22703. */
#define NCCL_VER(x, y, z) ((x) * 10000 + (y) * 100 + (z))
/* The oldest and the newest release the rules were read at. */
#define NCCL_VER_OLDEST NCCL_VER(2, 12, 7)
#define NCCL_VER_NEWEST NCCL_VER(2, 30, 7)

/*
 * NCCL's path types (src/graph/topo.h PATH_*) in one stable order. NCCL
 * numbers them differently per release (C2C appears in 2.26.2, P2C in
 * 2.27.3, P2C and PXN swap in 2.27.5); nccl_path_code() gives NCCL's
 * number, which is what NCCL compares.
 */
enum nccl_ptype {
	NPT_LOC, NPT_NVL, NPT_NVB, NPT_C2C, NPT_PIX, NPT_PXB, NPT_P2C,
	NPT_PXN, NPT_PHB, NPT_SYS, NPT_NET, NPT_DIS,
	NPT_COUNT
};

const char *nccl_ptype_name(enum nccl_ptype t);
/* NCCL's integer for t in version ver, or -1 when ver has no such type. */
int nccl_path_code(int ver, enum nccl_ptype t);

/* --- configuration values ------------------------------------------------ */

/*
 * ncclGetLevel (src/graph/paths.cc, 2.12.7-2.30.7): returns 0 and
 * sets *level, -ENOENT when NCCL ignores the value (NULL, or neither a
 * name nor a leading digit: the default applies), -ERANGE when the number
 * is one NCCL indexes its table out of bounds with (undefined in NCCL).
 */
int nccl_parse_level(int ver, const char *s, enum nccl_ptype *level);

/*
 * ncclLoadParam (src/misc/param.cc, 2.13.4+; the NCCL_PARAM macro of
 * src/include/param.h before): strtoll base 0, trailing text ignored, no
 * digits read as 0, overflow (errno) keeps the default, unset or empty
 * keeps the default. Returns true when the value came from s.
 */
bool nccl_parse_param(const char *s, int64_t deflt, int64_t *out);

/* NCCL_NET_GDR_READ default (paths.cc NCCL_PARAM(NetGdrRead)): -2, auto. */
#define NCCL_GDR_READ_DEFAULT (-2)
/* NCCL_NET_GDR_READ as NCCL holds it: > 0 on, 0 off, < 0 auto (rule 3). */
int64_t nccl_gdr_read_param(const char *s);

/* NCCL_NET_GDR_C2C default: 0 in 2.26.x, 1 since 2.27.3; -1 before 2.26.2. */
int nccl_gdr_c2c_default(int ver);
/* NCCL_PXN_C2C default: 0 in 2.27.x, 1 since 2.28.3; -1 before 2.27.3. */
int nccl_pxn_c2c_default(int ver);
/* The GDR level NCCL uses when NCCL_NET_GDR_LEVEL is unset. */
enum nccl_ptype nccl_default_gdr_level(int ver, int64_t gdr_c2c);

/* --- paths (src/graph/paths.cc ncclTopoComputePaths) ---------------------- */

/*
 * A GPU's path to its local CPU: c2c_link when NVML reports an active
 * NVLink-C2C link (xml.cc, sm >= 90), cc the compute capability (90).
 * PHB (PCI) before 2.19.1 or without C2C; NVL 2.19.1-2.25.1 (the C2C
 * link was an NVLink); C2C since 2.26.2 (topo.cc ncclTopoAddC2c).
 */
enum nccl_ptype nccl_gpu_cpu_path(int ver, bool c2c_link, int cc);

/* mergePathType: PHB over C2C is P2C (2.27.5+); otherwise the larger code. */
enum nccl_ptype nccl_merge_path(int ver, enum nccl_ptype a, enum nccl_ptype b);

/*
 * The GPU->NIC path after the C2C step: gpu_net as the PCI walk gave it,
 * gpu_cpu / net_cpu the GPU's and the NIC's path to the GPU's local CPU,
 * net_is_local whether the NIC is in the GPU's local set (2.29.2+ only
 * rewrites those).
 */
enum nccl_ptype nccl_p2c_path(int ver, enum nccl_ptype gpu_net,
			      enum nccl_ptype gpu_cpu, enum nccl_ptype net_cpu,
			      bool net_is_local);

/*
 * The GPU->NIC path after ncclTopoComputePaths' last step, "update path
 * when we don't want to / can't use GPU Direct RDMA": gpu_net the path so
 * far (after P2C and PXN), gdr_write ncclTopoCheckGdr(gpu, net, read=0)'s
 * answer on it, gpu_cpu / cpu_net the GPU's path to its local CPU and that
 * CPU's path to the NIC. Returns true when NCCL re-routes the pair through
 * the CPU, with the new type in *out (else *out = gpu_net).
 */
bool nccl_nogdr_path(int ver, enum nccl_ptype gpu_net, bool gdr_write,
		     enum nccl_ptype gpu_cpu, enum nccl_ptype cpu_net,
		     enum nccl_ptype *out);

struct nccl_pxn_in {
	int ver;
	int64_t pxn_disable;		/* NCCL_PXN_DISABLE, default 0 */
	int64_t pxn_c2c;		/* NCCL_PXN_C2C */
	enum nccl_ptype gpu_net;	/* this GPU's path to the NIC */
	double gpu_net_bw;
	enum nccl_ptype peer_net;	/* the relay GPU's path to the NIC */
	double peer_net_bw;
	bool peer_nvlink;		/* relay <-> GPU NVL or better */
	bool same_system;		/* relay on the same node (MNNVL) */
	/*
	 * 2.18.1+: the relay is the NIC's local GPU (ncclTopoGetLocalGpu);
	 * 2.12.x-2.13.x: the relay's preferred NIC is this one. 2.14-2.17
	 * take any qualifying peer.
	 */
	bool peer_is_relay;
	bool peer_gdr_read;		/* 2.30.3+: GDR read on relay->NIC */
};

/* Does NCCL route this GPU's traffic to the NIC through the peer (PXN)? */
bool nccl_pxn_applies(const struct nccl_pxn_in *in);

/* --- ncclTopoCheckGdr ---------------------------------------------- */

enum nccl_gdr_mode { NCCL_GDR_DISABLED, NCCL_GDR_DEFAULT, NCCL_GDR_PCI };

enum nccl_gdr_why {
	NCCL_GDR_OK,
	NCCL_GDR_NO_SUPPORT,		/* NIC or GPU gdrSupport is 0 */
	NCCL_GDR_MLO_PART,		/* MLO partition, NET_GDR_MLOPART=0 */
	NCCL_GDR_READ_OFF,		/* NCCL_NET_GDR_READ=0 */
	NCCL_GDR_READ_DEFAULT_OFF,	/* read rule: no NVLink peer */
	NCCL_GDR_TOO_FAR,		/* distance > level */
};

struct nccl_gdr_in {
	int ver;
	bool read;			/* send: the NIC reads the GPU */
	bool net_gdr;			/* NIC gdrSupport */
	bool gpu_gdr;			/* GPU gdrSupport */
	bool mlo_part;			/* GPU is an MLO partition */
	int cc;				/* compute capability: 90 */
	int ngpus;			/* GPUs in NCCL's topology */
	bool nvlink_peer;		/* another GPU at PATH_NVL */
	enum nccl_ptype dist;		/* GPU->NIC, after PXN/P2C */
	enum nccl_ptype relay_dist;	/* with dist PXN: relay GPU->NIC */
	bool cpu_c2c;			/* deciding GPU->CPU is C2C */
	int64_t gdr_read;		/* NCCL_NET_GDR_READ */
	int64_t gdr_c2c;		/* NCCL_NET_GDR_C2C */
	int64_t gdr_mlopart;		/* NCCL_NET_GDR_MLOPART */
	bool level_set;			/* NCCL_NET_GDR_LEVEL parsed */
	enum nccl_ptype level;
};

struct nccl_gdr_out {
	enum nccl_gdr_mode mode;
	enum nccl_gdr_why why;
	enum nccl_ptype distance;	/* what NCCL compared */
	enum nccl_ptype level;
};

/* 0, or -EINVAL when a path type does not exist in in->ver. */
int nccl_gdr_decide(const struct nccl_gdr_in *in, struct nccl_gdr_out *out);

/* --- mechanism: DMA-BUF or peermem --------------------------------- */

/* init.cc dmaBufSupported: the communicator's DMA-BUF support. */
bool nccl_dmabuf_comm(int ver, int64_t dmabuf_enable, bool plugin_dmabuf,
		      int cuda_driver, int attr_dmabuf);
/* net_ib ncclIbDmaBufSupport: errno of ibv_reg_dmabuf_mr(fd -1). */
bool nccl_dmabuf_probe_ok(int ver, int probe_errno);

enum nccl_mech { NCCL_MECH_HOST, NCCL_MECH_DMABUF, NCCL_MECH_PEERMEM };

struct nccl_mech_out {
	bool net_gdr;		/* topo.cc NIC gdrSupport */
	enum nccl_mech mech;	/* what net.cc registers with */
	bool no_fallback;	/* a failed regMrDmaBuf fails the job */
	bool dmabuf_unprobed;	/* 2.13.4: DMA-BUF, NIC unprobed */
};

/*
 * topo.cc gdrSupport and net.cc useDmaBuf. use_gdr: ncclTopoCheckGdr's
 * answer for this direction (pass true to get net_gdr first).
 */
void nccl_mechanism(int ver, bool use_gdr, bool comm_dmabuf, bool nic_dmabuf,
		    bool peermem, struct nccl_mech_out *out);

/* --- devices -------------------------------------------------------- */

#define NCCL_IF_PREFIX 64
#define NCCL_MAX_IFS 32

struct nccl_if {
	char prefix[NCCL_IF_PREFIX];
	int port;		/* -1: any */
	int rail, plane;	/* 2.30.7+, -1 when absent */
};

struct nccl_hca_filter {
	bool exclude;		/* leading ^ */
	bool exact;		/* = after the optional ^ */
	int n;
	struct nccl_if ifs[NCCL_MAX_IFS];
};

/*
 * NCCL_IB_HCA as net_ib's ncclIbInitDevices reads it, entries by
 * src/misc/utils.cc parseStringList. 0, or -ENAMETOOLONG when an entry
 * is longer than the 63 characters NCCL < 2.30.7 has room for (NCCL
 * overflows its buffer there).
 */
int nccl_hca_parse(int ver, const char *env, struct nccl_hca_filter *f);
/* matchIfList ^ exclude: does NCCL use port `port` of device `dev`? */
bool nccl_hca_match(const struct nccl_hca_filter *f, const char *dev,
		    int port);

/* NCCL_NET: does the value select the transport called `name` ("IB")? */
bool nccl_net_selects(int ver, const char *env, const char *name);

/* One GID table entry: raw bytes, and the gid_attrs/types file's verdict. */
struct nccl_gid {
	uint8_t raw[16];
	int roce_ver;		/* 1, 2; 0 unrecognised; -1 unreadable */
};

#define NCCL_AF_INET 4
#define NCCL_AF_INET6 6

/* getGidAddrFamily: NCCL_AF_INET for IPv4-mapped (and ff0e::ffff:). */
int nccl_gid_family(const uint8_t raw[16]);
/* validGid: configured and not link-local. */
bool nccl_gid_valid(const uint8_t raw[16]);

struct nccl_gid_in {
	int ver;
	bool infiniband;	/* link layer IB (else Ethernet/RoCE) */
	int64_t gid_index;	/* NCCL_IB_GID_INDEX */
	int64_t roce_ver;	/* NCCL_IB_ROCE_VERSION_NUM, default 2 */
	int64_t flid_index;	/* ..._ROUTABLE_FLID_GID_INDEX (1) */
	int family;		/* NCCL_IB_ADDR_FAMILY (AF_INET) */
	bool range_set;		/* NCCL_IB_ADDR_RANGE parsed */
	uint8_t range[16];	/* network, 4 bytes for AF_INET */
	int prefixlen;
	const struct nccl_gid *tbl;
	int n;			/* gid_tbl_len */
};

/* NCCL_IB_GID_INDEX default: 0 before 2.21.5, -1 (choose) since. */
int64_t nccl_gid_index_default(int ver);
/*
 * net_ib ncclIbGetGidIndex. 0 and *index, or -EIO when NCCL would fail
 * (a gid_attrs/types file it reads is unreadable), -EINVAL on a table
 * NCCL would query out of range.
 */
int nccl_gid_index(const struct nccl_gid_in *in, int *index);

/* NCCL_IB_DATA_DIRECT (2.27.3+): the devices NCCL exposes per mlx5 port. */
struct nccl_dd_out {
	bool plain;		/* "mlx5_N", PCI path of the function */
	bool dma;		/* "mlx5_N_dma", PCI path from mlx5dv */
};
void nccl_data_direct(int ver, int64_t dd_param, bool dd_capable,
		      struct nccl_dd_out *out);

/* cudawrap.cc ncclCuMemEnable: does NCCL allocate with cuMemCreate? */
int64_t nccl_cumem_param_default(int ver);
bool nccl_cumem_enable(int ver, int64_t param, int cuda_driver,
		       bool has_cumem_create, int attr_vmm, int attr_gdr_vmm);

/* --- topology ------------------------------------------------------- */

/* topo.cc ncclTopoGetIntDevice: vendor, device, subsystem ids in one. */
uint64_t nccl_pci_id(unsigned int vendor, unsigned int device,
		     unsigned int sub_vendor, unsigned int sub_device);
/* topo.cc getBcmGen: 4 or 5 for a Broadcom PEX switch level, else 0. */
int nccl_bcm_gen(int ver, uint64_t id, int level);
/* ncclTopoFlattenBcmSwitches: is child merged into parent? */
bool nccl_bcm_flattens(int ver, uint64_t parent, uint64_t child);
/*
 * The path type NCCL gives two devices below one PCI tree turn, from the
 * number of PCI switch nodes on the path once flattened: 1 PIX, more PXB.
 */
enum nccl_ptype nccl_pci_switch_path(int nswitches);

/*
 * A PCI link's bandwidth in GB/s as NCCL sets it (topo.cc ncclTopoAddPci
 * width * speed / 80, kvDictPciGen; xml.cc link_speed/link_width): the
 * lower of the device's and its port's max_link_speed text, the narrower
 * max_link_width (0 -> 16). port_speed/port_width NULL: the NVML branch
 * of 2.30.7 (the GPU's current link, not compared with its port).
 */
double nccl_pci_bw(const char *dev_speed, const char *port_speed,
		   const char *dev_width, const char *port_width);
/*
 * net_ib's port speed in Mbps (ncclIbSpeed * ncclIbWidth) from the sysfs
 * rate text ("400 Gb/sec (4X NDR)"), with the tables of version ver; 0
 * when the text names no width and speed.
 */
int nccl_ib_port_mbps(int ver, const char *rate);
/*
 * Does NCCL read /sys/kernel/pci_switch_link/virtual_switch_links (xml.cc
 * getBcmLinks 2.22.3-2.30.4, src/os/linux.cc ncclOsGetBcmLinks 2.30.7)?
 */
bool nccl_bcm_virtual_links(int ver);
/* topo.cc ncclTopoAddNet: net.bw = mbps / 8000 GB/s, mbps <= 0 -> 10000. */
double nccl_net_bw(int mbps);

/*
 * xml.cc ncclTopoGetXmlFromSys: a device hangs off the CPU node named by
 * its numa_node text, so -1 is a CPU of its own. Same CPU: PHB, else SYS.
 */
enum nccl_ptype nccl_cpu_path(int numa_a, int numa_b);

/* A GPU's path to one NIC, as ncclTopoGetLocal compares them. */
struct nccl_net_path {
	enum nccl_ptype type;
	double bw;
};

/*
 * ncclTopoGetLocal: the NICs with the best bandwidth, then the best type.
 * Writes their indices to locals (room for n; NULL: count only), returns
 * their count.
 */
int nccl_local_nets(int ver, const struct nccl_net_path *paths, int n,
		    int *locals);

/* ncclTopoComputePaths' rewrites of a GPU->NIC path. */
enum nccl_rewrite { NCCL_RW_P2C, NCCL_RW_PXN, NCCL_RW_NOGDR };
/*
 * Does the rewrite change the NIC's path to the GPU (netNode->paths[GPU],
 * what ncclTopoGetLocal(NET, ..., GPU) reads) as well?
 */
bool nccl_rewrite_net_side(int ver, enum nccl_rewrite rw);

/*
 * ncclTopoGetLocalNet's localGpuCount (2.18.5+): ncclTopoGetLocal from the
 * first of the GPU's local NICs to every GPU; net_gpu holds that NIC's
 * paths to the n GPUs (the NIC's side: nccl_rewrite_net_side).
 */
int nccl_net_local_gpus(int ver, const struct nccl_net_path *net_gpu, int n);

enum nccl_netdevs { NCCL_NETDEVS_AUTO, NCCL_NETDEVS_ALL, NCCL_NETDEVS_MAX };
/* NCCL_NETDEVS_POLICY (2.28.3+); unknown values are AUTO. */
enum nccl_netdevs nccl_netdevs_parse(const char *env, int *max);

struct nccl_rail_in {
	int ver;
	int gpu_dev;		/* CUDA device index of the GPU */
	int channel;
	int local_nets;		/* count from nccl_local_nets */
	int local_gpus;		/* nccl_net_local_gpus */
	/* 2.18.1-2.18.3: position among GPUs with the same local set */
	int same_set_index, same_set_count;
	enum nccl_netdevs policy;
	int policy_max;
};

/*
 * ncclTopoGetLocalNet: index into the local NIC list of the NIC NCCL
 * gives this GPU on this channel; -EINVAL when NCCL would fail.
 */
int nccl_rail_pick(const struct nccl_rail_in *in);

/* One RDMA device's usable ports (ACTIVE, IB or Ethernet, NCCL_IB_HCA). */
struct nccl_fusion_in {
	int ver;
	int ports;
	const char *merge_nics;		/* NCCL_IB_MERGE_NICS, NULL: unset */
	const char *merge_level;	/* NCCL_NET_MERGE_LEVEL (2.24.3+) */
	bool mixed;			/* 2.20.3-2.23.4: groups differ in size */
};

/* Ports NCCL fuses into one device (1: each port its own device). */
int nccl_fused_ports(const struct nccl_fusion_in *in);

/* "mlx5_0+mlx5_0": the fused device's name as NCCL prints it. */
void nccl_fused_name(char *buf, size_t len, const char *dev, int ports);

/* ncclTopoAddC2c's findLocalCpu can circle (2.19.3-2.26.1). */
bool nccl_local_cpu_search_circles(int ver);

#endif
