/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_PARSE_H
#define GDRCHECK_PARSE_H

/*
 * Pure parsers and classifiers for what sysfs, procfs and the vendor
 * libraries return. No I/O here: everything is unit tested on strings.
 *
 * Return contract: an int-returning parser gives 0 on success, -EINVAL on
 * malformed input, and where its comment says so -ERANGE (a value outside
 * its field's domain, or one that overflows) or -ENOENT (pci_nth_mem_bar:
 * fewer BARs). The others return what their comment says: a name or NULL
 * (container_from_cgroup, nv_flavour_name), a struct classified, an enum
 * path_state, or nothing (the formatters, which always write buf).
 */
#include <stdbool.h>
#include <stddef.h>

#include "core/names.h"

struct kver {
	int major, minor, patch;
};

/* "6.18.44-fc-v657-gpu" -> 6.18.44. */
int parse_kernel_release(const char *s, struct kver *v);
int kver_cmp(const struct kver *a, int major, int minor);

#define LIMIT_UNLIMITED (-1LL)
/* The "Max locked memory" line of /proc/<pid>/limits, soft and hard. */
int parse_memlock(const char *limits, long long *soft, long long *hard);

/* Effective uid and CapEff from /proc/<pid>/status. */
int parse_status(const char *status, long *euid, unsigned long long *capeff);

enum nv_flavour {
	NV_FLAVOUR_UNKNOWN = 0,
	NV_FLAVOUR_OPEN,
	NV_FLAVOUR_PROPRIETARY,
};

/* First line of /proc/driver/nvidia/version. */
int parse_nvidia_version(const char *text, enum nv_flavour *flavour,
			 char *version, size_t len);
const char *nv_flavour_name(enum nv_flavour f);

/* "4: ACTIVE" -> 4, "ACTIVE". */
int parse_num_name(const char *s, int *num, char *name, size_t len);

/*
 * Line `index` of a sysfs `resource` file -> start/end/flags. -EINVAL on a
 * malformed line, -ERANGE on a field that overflows 64 bits or a span that
 * does not fit in 64 bits (end < start, or the whole address space).
 */
int parse_resource_line(const char *text, int index,
			unsigned long long *start, unsigned long long *end,
			unsigned long long *flags);

/*
 * The n-th (0-based) populated memory BAR of a sysfs `resource` file, and
 * its register index. NVIDIA's "BAR1" is the second memory BAR: register 1
 * when BAR0 is 32-bit, register 2 when BAR0 is 64-bit (as on the H200).
 * Returns -ENOENT when there are fewer BARs, -EINVAL on malformed lines,
 * -ERANGE on values out of range (see parse_resource_line); on an error
 * *reg is the line at fault.
 */
int pci_nth_mem_bar(const char *text, int n, int *reg,
		    unsigned long long *start, unsigned long long *end);

/* A GID as sysfs prints it; *zero set when it is all zeroes. */
int parse_gid(const char *s, bool *zero);

/* Container runtime from /proc/1/cgroup text, or NULL. */
const char *container_from_cgroup(const char *cgroup);

/* CUDA driver version 13000 -> "13.0". */
void cuda_version_string(int v, char *buf, size_t len);

/*
 * Classified outcome of an errno or CUDA result: the status a gate gives
 * it, a stable reason code, and its meaning for an operator.
 */
struct classified {
	enum gdr_status status;
	const char *code;
	const char *meaning;
};

/* ibv_reg_dmabuf_mr(pd, 0, 0, 0, fd = -1, 0): NCCL's provider probe. */
struct classified classify_dmabuf_probe(int err);

/* A failed GPU memory registration (dmabuf: ibv_reg_dmabuf_mr). */
struct classified classify_reg_errno(int err, bool dmabuf);

/* A failed RDMA completion (ibv_wc_status). */
struct classified classify_wc_status(int status);

/* ibv_open_device failure. */
struct classified classify_open_errno(int err);
/* ibv_open_device's errno blames the device, not the caller's rights or
 * view of /dev (classify_open_errno's UVERBS_OPEN_FAILED): EIO and the
 * like, which any process on the node gets. */
bool open_errno_is_device(int err);

/* What a failed lookup of a path means. */
enum path_state {
	PATH_PRESENT,
	PATH_ABSENT,		/* ENOENT, ENOTDIR: it is not there */
	PATH_UNREADABLE,	/* EACCES, EPERM, ELOOP, ENAMETOOLONG, EIO... */
};
/* 0 or -errno (sysroot_access, sysroot_read...) -> its state. */
enum path_state path_state_of(int ret);

/*
 * Domains of the values sysfs and CUDA give. Each returns 0 when the value
 * is one the field can hold, -ERANGE when it is outside the field's domain
 * (the raw value still stored), -EINVAL when it is not a value at all.
 */

/* current/max_link_speed: "32.0 GT/s PCIe" -> 32.0; "Unknown" -EINVAL. */
int parse_link_speed(const char *s, double *gts);
/* current/max_link_width: 1, 2, 4, 8, 12, 16 or 32 lanes; 0 -ERANGE. */
int parse_link_width(const char *s, int *width);

/* The kernel's MAX_NUMNODES at its largest (CONFIG_NODES_SHIFT 10). */
#define NUMA_NODES_MAX 1024
/* numa_node: -1 (no affinity) or a node below nodes (0: count unknown). */
int numa_node_check(long long node, int nodes);

/* A cuDeviceGetAttribute value (attribute number, value). */
int cuda_attr_check(int attr, int val);
/* A CUcomputemode's name ("EXCLUSIVE_PROCESS"), NULL outside the enum. */
const char *cuda_compute_mode_name(int mode);
/* cuDriverGetVersion: 1000 * major + 10 * minor. */
int cuda_driver_version_check(int v);

/* A port state number and name ("4: ACTIVE") that belong together. */
int ib_port_state_check(int num, const char *name);

/*
 * A /dev/kmsg record ("PRI,SEQ,USEC,FLAGS;MESSAGE") saying a module was
 * built against another ib_core: "MOD: disagrees about version of symbol
 * SYM" (NVIDIA/gpu-operator#2868). 0 and the module and symbol names, or
 * -ENOENT when the record says something else (-EINVAL: not a record).
 */
int parse_kmsg_symbol_version(const char *rec, char *mod, size_t mlen,
			      char *sym, size_t slen);

/*
 * One line of a kernel .config for option opt ("CONFIG_X"): 1 and its value
 * ("y", "m", "0x10"...) for "CONFIG_X=v", 0 for "# CONFIG_X is not set",
 * -ENOENT for any other line.
 */
int parse_kconfig_line(const char *line, const char *opt, char *val,
		       size_t vlen);

/* Human size: 268435456 -> "256 MiB". */
void format_bytes(unsigned long long v, char *buf, size_t len);

#endif
