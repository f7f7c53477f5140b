// SPDX-License-Identifier: MIT
#include "decode/parse.h"
#include "decode/cuda_api.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int parse_kernel_release(const char *s, struct kver *v)
{
	char *end;
	long p[3] = { 0, 0, 0 };
	int i;

	if (!s || !isdigit((unsigned char)s[0]))
		return -EINVAL;
	for (i = 0; i < 3; i++) {
		errno = 0;
		p[i] = strtol(s, &end, 10);
		if (errno || end == s || p[i] < 0 || p[i] > 100000)
			return -EINVAL;
		s = end;
		if (*s != '.' || !isdigit((unsigned char)s[1]))
			break;
		s++;
	}
	if (i == 0)
		return -EINVAL;	/* "6" alone is no release: major.minor at least */
	v->major = (int)p[0];
	v->minor = (int)p[1];
	v->patch = (int)p[2];
	return 0;
}

int kver_cmp(const struct kver *a, int major, int minor)
{
	if (a->major != major)
		return a->major < major ? -1 : 1;
	if (a->minor != minor)
		return a->minor < minor ? -1 : 1;
	return 0;
}

static int parse_limit(const char *tok, long long *val)
{
	char *end;

	if (!strcmp(tok, "unlimited")) {
		*val = LIMIT_UNLIMITED;
		return 0;
	}
	errno = 0;
	*val = strtoll(tok, &end, 10);
	if (errno || end == tok || *end || *val < 0)
		return -EINVAL;
	return 0;
}

int parse_memlock(const char *limits, long long *soft, long long *hard)
{
	const char *line = strstr(limits, "Max locked memory");
	char s[32], h[32];

	if (!line)
		return -EINVAL;
	if (sscanf(line + strlen("Max locked memory"), " %31s %31s", s, h) != 2)
		return -EINVAL;
	if (parse_limit(s, soft) || parse_limit(h, hard))
		return -EINVAL;
	return 0;
}

int parse_status(const char *status, long *euid, unsigned long long *capeff)
{
	const char *uid = strstr(status, "\nUid:");
	const char *cap = strstr(status, "\nCapEff:");
	long r, e;

	if (uid)
		uid++;
	else if (!strncmp(status, "Uid:", 4))
		uid = status;
	if (!uid || sscanf(uid + 4, "%ld %ld", &r, &e) != 2 || e < 0)
		return -EINVAL;
	*euid = e;
	*capeff = 0;
	if (cap && sscanf(cap + 8, "%llx", capeff) != 1)
		return -EINVAL;
	return 0;
}

int parse_nvidia_version(const char *text, enum nv_flavour *flavour,
			 char *version, size_t len)
{
	const char *p, *eol;
	size_t n;

	*flavour = NV_FLAVOUR_UNKNOWN;
	if (len)
		version[0] = '\0';
	if (strncmp(text, "NVRM version:", 13))
		return -EINVAL;
	eol = strchr(text, '\n');
	if (!eol)
		eol = text + strlen(text);
	n = (size_t)(eol - text);
	if (memmem(text, n, "Open Kernel Module", 18))
		*flavour = NV_FLAVOUR_OPEN;
	else if (memmem(text, n, "Kernel Module", 13))
		*flavour = NV_FLAVOUR_PROPRIETARY;
	else
		return -EINVAL;
	/* The version is the first token that looks like 580.159.04. */
	for (p = text + 13; p < eol; p++) {
		size_t tl = 0;
		bool dot = false;

		if (!isdigit((unsigned char)*p) ||
		    (p > text && !isspace((unsigned char)p[-1])))
			continue;
		while (p + tl < eol && (isdigit((unsigned char)p[tl]) ||
					p[tl] == '.')) {
			dot |= p[tl] == '.';
			tl++;
		}
		/* "580.159.04", never "535." */
		if (dot && p[tl - 1] != '.' &&
		    (p + tl == eol || isspace((unsigned char)p[tl]))) {
			if (tl >= len)
				return -EINVAL;
			memcpy(version, p, tl);
			version[tl] = '\0';
			return 0;
		}
		p += tl;
	}
	return -EINVAL;
}

const char *nv_flavour_name(enum nv_flavour f)
{
	return f == NV_FLAVOUR_OPEN ? "open" :
	       f == NV_FLAVOUR_PROPRIETARY ? "proprietary" : "unknown";
}

int parse_num_name(const char *s, int *num, char *name, size_t len)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || v < 0 || v > 255 || *end != ':')
		return -EINVAL;
	end++;
	while (*end == ' ')
		end++;
	if (!*end || strlen(end) >= len)
		return -EINVAL;
	*num = (int)v;
	strcpy(name, end);
	return 0;
}

/* One hex field of a resource line: -ERANGE when it overflows 64 bits. */
static int resource_field(const char **p, unsigned long long *val)
{
	char *end;

	while (**p == ' ' || **p == '\t')
		(*p)++;
	if (!isxdigit((unsigned char)**p))
		return -EINVAL;
	errno = 0;
	*val = strtoull(*p, &end, 16);
	if (errno == ERANGE)
		return -ERANGE;
	if (errno || end == *p)
		return -EINVAL;
	*p = end;
	return 0;
}

int parse_resource_line(const char *text, int index,
			unsigned long long *start, unsigned long long *end,
			unsigned long long *flags)
{
	const char *line = text;
	int ret;

	for (int i = 0; i < index; i++) {
		line = strchr(line, '\n');
		if (!line)
			return -EINVAL;
		line++;
	}
	if ((ret = resource_field(&line, start)) ||
	    (ret = resource_field(&line, end)) ||
	    (ret = resource_field(&line, flags)))
		return ret;
	if (*line && *line != '\n' && *line != ' ' && *line != '\t')
		return -EINVAL;
	/* An empty BAR is 0 0 0; anything else spans at least one byte. */
	if (*end < *start || (*start == 0 && *end == ULLONG_MAX))
		return -ERANGE;
	return 0;
}

#define IORESOURCE_MEM 0x200

int pci_nth_mem_bar(const char *text, int n, int *reg,
		    unsigned long long *start, unsigned long long *end)
{
	/* Lines 0-5 are the six BAR registers; 6 is the expansion ROM. */
	for (int i = 0; i < 6; i++) {
		unsigned long long s, e, flags;

		int ret = parse_resource_line(text, i, &s, &e, &flags);

		if (ret) {
			*reg = i;	/* the line at fault */
			return ret;
		}
		if ((s == 0 && e == 0) || !(flags & IORESOURCE_MEM))
			continue;
		if (n-- == 0) {
			*reg = i;
			*start = s;
			*end = e;
			return 0;
		}
	}
	return -ENOENT;
}

int parse_gid(const char *s, bool *zero)
{
	int groups = 0, digits = 0;

	*zero = true;
	for (; *s && *s != '\n'; s++) {
		if (*s == ':') {
			if (digits != 4)
				return -EINVAL;
			groups++;
			digits = 0;
			continue;
		}
		if (!isxdigit((unsigned char)*s))
			return -EINVAL;
		if (*s != '0')
			*zero = false;
		digits++;
	}
	if (digits != 4 || groups != 7)
		return -EINVAL;
	return 0;
}

const char *container_from_cgroup(const char *cgroup)
{
	static const char *const runtimes[] = {
		"kubepods", "docker", "containerd", "libpod", "lxc", "garden",
	};

	for (size_t i = 0; i < sizeof(runtimes) / sizeof(runtimes[0]); i++)
		if (strstr(cgroup, runtimes[i]))
			return runtimes[i];
	return NULL;
}

void cuda_version_string(int v, char *buf, size_t len)
{
	snprintf(buf, len, "%d.%d", v / 1000, (v % 1000) / 10);
}

struct classified classify_dmabuf_probe(int err)
{
	switch (err) {
	case EBADF:
		return (struct classified){ ST_PASS, "PROVIDER_DMABUF_OK",
			"provider implements dma-buf MRs (fd -1 rejected with EBADF)" };
	case EOPNOTSUPP:
		return (struct classified){ ST_BLOCKED, "PROVIDER_LACKS_DMABUF",
			"the verbs provider (or libibverbs) lacks dma-buf MRs (EOPNOTSUPP)" };
	case EPROTONOSUPPORT:
		return (struct classified){ ST_BLOCKED, "KERNEL_LACKS_DMABUF",
			"the kernel RDMA stack lacks dma-buf MRs (EPROTONOSUPPORT)" };
	default:
		return (struct classified){ ST_ERROR, "PROVIDER_PROBE_UNEXPECTED",
			"unexpected answer to the dma-buf probe" };
	}
}

struct classified classify_reg_errno(int err, bool dmabuf)
{
	switch (err) {
	case EFAULT:
		return dmabuf ?
			(struct classified){ ST_BLOCKED, "DMABUF_EFAULT",
				"the kernel could not map the dma-buf (EFAULT)" } :
			(struct classified){ ST_BLOCKED, "NO_PEER_MEMORY_CLIENT",
				"EFAULT: no peer-memory client claims GPU addresses "
				"(nvidia_peermem not loaded)" };
	case ENOMEM:
		return (struct classified){ ST_BLOCKED, "PIN_LIMIT",
			"ENOMEM: RLIMIT_MEMLOCK or the pinnable memory (BAR1) "
			"is exhausted" };
	case EPERM:
	case EACCES:
		return (struct classified){ ST_BLOCKED, "REG_PERMISSION",
			"permission denied (memlock limit without CAP_IPC_LOCK?)" };
	case EOPNOTSUPP:
		return (struct classified){ ST_BLOCKED, dmabuf ?
			"PROVIDER_LACKS_DMABUF" : "REG_NOT_SUPPORTED",
			"EOPNOTSUPP: the provider does not support this "
			"registration" };
	case EPROTONOSUPPORT:
		return (struct classified){ ST_BLOCKED, "KERNEL_LACKS_DMABUF",
			"EPROTONOSUPPORT: the kernel lacks dma-buf MRs" };
	case EINVAL:
		return (struct classified){ ST_BLOCKED, dmabuf ?
			"DMABUF_OFFSETS_REJECTED" : "REG_EINVAL",
			dmabuf ? "EINVAL: offset, length or iova rejected" :
			"EINVAL: range or access flags rejected" };
	case EBADF:
		return (struct classified){ ST_BLOCKED, "DMABUF_BAD_FD",
			"EBADF: the exported fd is not a usable dma-buf" };
	default:
		return (struct classified){ ST_ERROR, "REG_UNEXPECTED",
			"unexpected registration error" };
	}
}

struct classified classify_wc_status(int status)
{
	switch (status) {
	case 4: /* IBV_WC_LOC_PROT_ERR */
		return (struct classified){ ST_BLOCKED, "WC_LOC_PROT_ERR",
			"local protection error: the NIC could not DMA the "
			"memory (IOMMU or ACS blocking peer traffic, or a bad MR)" };
	case 10: /* IBV_WC_REM_ACCESS_ERR */
		return (struct classified){ ST_BLOCKED, "WC_REM_ACCESS_ERR",
			"remote access error: the GPU MR's rkey or access "
			"rights were refused" };
	case 12: /* IBV_WC_RETRY_EXC_ERR */
		return (struct classified){ ST_BLOCKED, "WC_RETRY_EXC_ERR",
			"retries exceeded: no answer (link, GID or routing, or "
			"a DMA fault on the responder)" };
	case 5: /* IBV_WC_WR_FLUSH_ERR */
		return (struct classified){ ST_ERROR, "WC_FLUSH_ERR",
			"flushed: the QP was already in error" };
	default:
		return (struct classified){ ST_BLOCKED, "WC_ERROR",
			"the RDMA operation completed with an error" };
	}
}

struct classified classify_open_errno(int err)
{
	switch (err) {
	case EACCES:
	case EPERM:
		return (struct classified){ ST_BLOCKED, "UVERBS_PERMISSION",
			"no permission to open the uverbs device" };
	case ENOENT:
	case ENXIO:
	case ENODEV:
		return (struct classified){ ST_BLOCKED, "UVERBS_NODE_MISSING",
			"the uverbs character device is missing" };
	default:
		return (struct classified){ ST_BLOCKED, "UVERBS_OPEN_FAILED",
			"ibv_open_device failed" };
	}
}

bool open_errno_is_device(int err)
{
	return err && !strcmp(classify_open_errno(err).code,
			      "UVERBS_OPEN_FAILED");
}

void format_bytes(unsigned long long v, char *buf, size_t len)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double d = (double)v;
	unsigned int u = 0;

	/* 1048575 bytes is "1.0 MiB", not "1024.0 KiB". */
	while (u < 4 && d >= 1023.95) {
		d /= 1024;
		u++;
	}
	if (d == (double)(unsigned long long)d)
		snprintf(buf, len, "%.0f %s", d, units[u]);
	else
		snprintf(buf, len, "%.1f %s", d, units[u]);
}

enum path_state path_state_of(int ret)
{
	if (ret == 0)
		return PATH_PRESENT;
	/* Only "no such entry" is absence; EACCES, ELOOP, EIO... hide it. */
	if (ret == -ENOENT || ret == -ENOTDIR)
		return PATH_ABSENT;
	return PATH_UNREADABLE;
}

int parse_link_speed(const char *s, double *gts)
{
	char *end;

	*gts = 0;
	if (!isdigit((unsigned char)s[0]))
		return -EINVAL;	/* "Unknown", "Unknown speed", "" */
	errno = 0;
	*gts = strtod(s, &end);
	if (errno || end == s || strncmp(end, " GT/s", 5) ||
	    (end[5] && end[5] != ' '))
		return -EINVAL;
	/* 2.5 (gen 1) to 64 (gen 6); room for two more generations. */
	if (!isfinite(*gts) || *gts < 2.5 || *gts > 256)
		return -ERANGE;
	return 0;
}

int parse_link_width(const char *s, int *width)
{
	char *end;
	long v;

	*width = 0;
	if (!isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v > INT_MAX)
		return errno == ERANGE || v > INT_MAX ? -ERANGE : -EINVAL;
	*width = (int)v;
	/* The widths PCIe defines (x0 is a link that is down). */
	switch (v) {
	case 1: case 2: case 4: case 8: case 12: case 16: case 32:
		return 0;
	default:
		return -ERANGE;
	}
}

int numa_node_check(long long node, int nodes)
{
	if (node == -1)
		return 0;	/* no NUMA affinity: a legitimate answer */
	if (node < 0 || node >= NUMA_NODES_MAX)
		return -ERANGE;
	if (nodes > 0 && node >= nodes)
		return -ERANGE;	/* a node the machine does not have */
	return 0;
}

int cuda_attr_check(int attr, int val)
{
	switch (attr) {
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED:
		return val == 0 || val == 1 ? 0 : -ERANGE;
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS:
		/* A bit mask of HOST and MEMOPS. */
		return val >= 0 && val <= (CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_HOST |
			CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_MEMOPS) ? 0 : -ERANGE;
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING:
		return val == CU_GPU_DIRECT_RDMA_WRITES_ORDERING_NONE ||
		       val == CU_GPU_DIRECT_RDMA_WRITES_ORDERING_OWNER ||
		       val == CU_GPU_DIRECT_RDMA_WRITES_ORDERING_ALL_DEVICES ?
		       0 : -ERANGE;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
		return val >= 1 && val <= 99 ? 0 : -ERANGE;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
		return val >= 0 && val <= 9 ? 0 : -ERANGE;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE:
		return cuda_compute_mode_name(val) ? 0 : -ERANGE;
	default:
		return -EINVAL;
	}
}

const char *cuda_compute_mode_name(int mode)
{
	switch (mode) {
	case CU_COMPUTEMODE_DEFAULT: return "DEFAULT";
	case CU_COMPUTEMODE_EXCLUSIVE_THREAD: return "EXCLUSIVE_THREAD";
	case CU_COMPUTEMODE_PROHIBITED: return "PROHIBITED";
	case CU_COMPUTEMODE_EXCLUSIVE_PROCESS: return "EXCLUSIVE_PROCESS";
	default: return NULL;
	}
}

int cuda_driver_version_check(int v)
{
	/* CUDA 1.0 is 1000; 1000 * major + 10 * minor. */
	return v >= 1000 && v < 1000000 ? 0 : -ERANGE;
}

int ib_port_state_check(int num, const char *name)
{
	/* enum ib_port_state, as sysfs prints it ("4: ACTIVE"). */
	static const char *const names[] = {
		"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER",
	};

	if (num < 0 || num >= (int)(sizeof(names) / sizeof(names[0])))
		return -ERANGE;
	return strcmp(names[num], name) ? -ERANGE : 0;
}

int parse_kmsg_symbol_version(const char *rec, char *mod, size_t mlen,
			      char *sym, size_t slen)
{
	static const char what[] = ": disagrees about version of symbol ";
	const char *msg = strchr(rec, ';'), *hit, *end;

	if (!msg || msg == rec || !mlen || !slen)
		return -EINVAL;
	msg++;
	hit = strstr(msg, what);
	if (!hit || hit == msg || memchr(msg, ' ', (size_t)(hit - msg)))
		return -ENOENT;
	end = hit + sizeof(what) - 1;
	if (!*end || *end == '\n' || *end == ' ')
		return -ENOENT;
	snprintf(mod, mlen, "%.*s", (int)(hit - msg), msg);
	snprintf(sym, slen, "%.*s", (int)strcspn(end, " \n"), end);
	return 0;
}

int parse_kconfig_line(const char *line, const char *opt, char *val,
		       size_t vlen)
{
	size_t n = strlen(opt);

	if (!strncmp(line, opt, n) && line[n] == '=') {
		snprintf(val, vlen, "%.*s", (int)strcspn(line + n + 1, "\n"),
			 line + n + 1);
		return 1;
	}
	if (!strncmp(line, "# ", 2) && !strncmp(line + 2, opt, n) &&
	    !strncmp(line + 2 + n, " is not set", 11)) {
		if (vlen)
			val[0] = '\0';
		return 0;
	}
	return -ENOENT;
}
