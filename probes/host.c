// SPDX-License-Identifier: MIT
/* Layer 0: the host — kernel, memlock, privileges, container. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access/sysroot.h"
#include "decode/parse.h"
#include "probes/probes.h"

#define OSRELEASE	"/proc/sys/kernel/osrelease"
#define SELF_LIMITS	"/proc/self/limits"
#define SELF_STATUS	"/proc/self/status"

#define CAP_IPC_LOCK	14
#define CAP_SYS_ADMIN	21

void gate_host_kernel(struct gdr_ctx *ctx, const struct target *t)
{
	char rel[128];
	struct kver v;
	struct result *r;
	int ret = sysroot_read_line(ctx->sr, OSRELEASE, rel, sizeof(rel));

	if (ret) {
		r = emit(ctx, ctx->host, ST_ERROR, C_KERNEL_UNREADABLE,
			 "cannot read %s: %s", OSRELEASE, sysroot_strerror(-ret));
		ev_str(r, "path", OSRELEASE);
		return;
	}
	if (parse_kernel_release(rel, &v)) {
		r = emit(ctx, ctx->host, ST_ERROR, C_KERNEL_UNPARSEABLE,
			 "kernel release \"%s\" is not a version", rel);
		ev_str(r, "release", "%s", rel);
		return;
	}
	if (kver_cmp(&v, 5, 12) >= 0) {
		r = emit(ctx, ctx->host, ST_PASS, C_KERNEL_DMABUF_OK,
			 "kernel %s can import dma-bufs into RDMA MRs (>= 5.12)",
			 rel);
	} else {
		r = emit(ctx, ctx->host, ST_BLOCKED, C_KERNEL_TOO_OLD_FOR_DMABUF,
			 "kernel %s predates RDMA dma-buf MRs (needs >= 5.12)",
			 rel);
		remedy_KERNEL_TOO_OLD_FOR_DMABUF(r);
	}
	ev_str(r, "release", "%s", rel);
	ev_str(r, "minimum", "5.12");
}

/*
 * The limits and privileges of this process mean nothing for a captured
 * node: under --sysroot they come from the capture's /proc/self, or not
 * at all.
 */
static bool not_in_capture(struct gdr_ctx *ctx, const char *path)
{
	struct result *r;

	if (!ctx->opt->sysroot)
		return false;
	r = emit(ctx, ctx->host, ST_SKIP, C_NOT_REPLAYED,
		 "not replayed: %s is not in the capture (--sysroot analyses "
		 "a captured node, not this process)", path);
	ev_str(r, "path", "%s", path);
	return true;
}

static bool has_ipc_lock(struct sysroot *sr)
{
	char text[8192];
	unsigned long long capeff;
	long euid;

	return sysroot_read(sr, SELF_STATUS, text, sizeof(text)) > 0 &&
	       !parse_status(text, &euid, &capeff) &&
	       (capeff & (1ULL << CAP_IPC_LOCK));
}

void gate_host_memlock(struct gdr_ctx *ctx, const struct target *t)
{
	char text[8192], human[32];
	long long soft, hard;
	struct result *r;
	ssize_t n = sysroot_read(ctx->sr, SELF_LIMITS, text, sizeof(text));

	if (n == -ENOENT && not_in_capture(ctx, SELF_LIMITS))
		return;
	if (n < 0) {
		r = emit(ctx, ctx->host, ST_ERROR, C_MEMLOCK_UNREADABLE,
			 "cannot read %s: %s", SELF_LIMITS, sysroot_strerror((int)-n));
		return;
	}
	if (parse_memlock(text, &soft, &hard)) {
		emit(ctx, ctx->host, ST_ERROR, C_MEMLOCK_UNPARSEABLE,
		     "no valid \"Max locked memory\" line in %s", SELF_LIMITS);
		return;
	}
	if (soft == LIMIT_UNLIMITED) {
		r = emit(ctx, ctx->host, ST_PASS, C_MEMLOCK_UNLIMITED,
			 "RLIMIT_MEMLOCK is unlimited");
	} else if (has_ipc_lock(ctx->sr)) {
		/* ib_umem_get() ignores the limit for CAP_IPC_LOCK holders. */
		format_bytes((unsigned long long)soft, human, sizeof(human));
		r = emit(ctx, ctx->host, ST_PASS, C_MEMLOCK_CAP_IPC_LOCK,
			 "RLIMIT_MEMLOCK is %s, but CAP_IPC_LOCK lifts it for "
			 "RDMA registrations", human);
	} else {
		format_bytes((unsigned long long)soft, human, sizeof(human));
		r = emit(ctx, ctx->host, ST_WARN, C_MEMLOCK_LIMITED,
			 "RLIMIT_MEMLOCK is %s: host-memory registrations beyond "
			 "it fail with ENOMEM", human);
		remedy_MEMLOCK_LIMITED(r);
	}
	ev_int(r, "soft_bytes", soft);
	ev_int(r, "hard_bytes", hard);
}

void gate_host_privileges(struct gdr_ctx *ctx, const struct target *t)
{
	char text[8192];
	unsigned long long capeff;
	struct result *r;
	long euid;
	ssize_t n = sysroot_read(ctx->sr, SELF_STATUS, text, sizeof(text));

	if (n == -ENOENT && not_in_capture(ctx, SELF_STATUS))
		return;
	if (n < 0 || parse_status(text, &euid, &capeff)) {
		emit(ctx, ctx->host, ST_ERROR, C_PRIVILEGES_UNREADABLE,
		     "cannot read the effective uid from %s", SELF_STATUS);
		return;
	}
	if (euid == 0) {
		r = emit(ctx, ctx->host, ST_PASS, C_ROOT, "running as root");
	} else {
		r = emit(ctx, ctx->host, ST_WARN, C_NOT_ROOT,
			 "not root (uid %ld): config space beyond 64 bytes and "
			 "the kernel log are unreadable; gates needing them SKIP",
			 euid);
		remedy_NOT_ROOT(r);
	}
	ev_int(r, "euid", euid);
	ev_bool(r, "cap_ipc_lock", capeff & (1ULL << CAP_IPC_LOCK));
	ev_bool(r, "cap_sys_admin", capeff & (1ULL << CAP_SYS_ADMIN));
}

/* Entries of dir whose names start with prefix (all when ""); -errno. */
static int count_entries(struct sysroot *sr, const char *dir,
			 const char *prefix)
{
	char **names;
	size_t count, n = 0;
	int ret = sysroot_list(sr, dir, &names, &count);

	if (ret)
		return ret;
	for (size_t i = 0; i < count; i++)
		if (!strncmp(names[i], prefix, strlen(prefix)))
			n++;
	sysroot_free_list(names, count);
	return (int)n;
}

/*
 * KUBERNETES_SERVICE_HOST in this process's environment. Under cgroup v2
 * with a cgroup namespace /proc/1/cgroup reads "0::/" in a containerd pod
 * without /.dockerenv: the kubelet's service variables are then the only
 * marker. A live run asks getenv(); --capture records this one variable as
 * the capture's /proc/self/environ, never the real environment (secrets);
 * under --sysroot that file (NUL-separated) is read.
 */
static bool in_kubernetes(struct gdr_ctx *ctx)
{
	static const char var[] = "KUBERNETES_SERVICE_HOST=";
	char env[16384];
	ssize_t n;

	if (!ctx->opt->sysroot) {
		const char *v = getenv("KUBERNETES_SERVICE_HOST");

		/* --capture keeps this one variable, nothing else of environ. */
		if (v && sysroot_recording(ctx->sr)) {
			int len = snprintf(env, sizeof(env), "%s%s", var, v);

			if (len > 0 && (size_t)len < sizeof(env))
				sysroot_record_file(ctx->sr, "/proc/self/environ",
						    env, (size_t)len + 1);
		}
		return v != NULL;
	}
	n = sysroot_read_bin(ctx->sr, "/proc/self/environ", env, sizeof(env));

	for (ssize_t i = 0; i < n; ) {
		size_t len = strnlen(env + i, (size_t)(n - i));

		if (len >= sizeof(var) - 1 && !strncmp(env + i, var,
						       sizeof(var) - 1))
			return true;
		i += (ssize_t)len + 1;
	}
	return false;
}

/*
 * In a container the runtime decides what RDMA needs beyond the host: the
 * uverbs character devices (sysfs is not per container, /dev is) and the
 * memlock limit with CAP_IPC_LOCK. host.memlock owns the limit; this gate
 * cites its result and adds what a container changes: a capability added
 * to a non-root container (Kubernetes securityContext) lands in the
 * bounding set only, never in CapEff (no ambient capabilities), and the
 * limit is inherited from the runtime daemon, 8 MiB for containerd under
 * systemd (nvidia-container-toolkit#2037, k8s-rdma-shared-dev-plugin#93).
 */
void gate_host_container(struct gdr_ctx *ctx, const struct target *t)
{
	const char *runtime = NULL;
	const struct result *memlock;
	const char *memlock_code;
	bool memlock_limited;
	char cgroup[8192], status[8192];
	unsigned long long capeff = 0;
	struct result *r;
	bool unsure = false, k8s, caps_known = false;
	long euid = -1;
	int ibdevs = -1, uverbs = -1;
	ssize_t n;
	int ret;

	if (sysroot_exists(ctx->sr, "/.dockerenv"))
		runtime = "docker";
	else if (sysroot_exists(ctx->sr, "/run/.containerenv"))
		runtime = "podman";
	else if (path_state_of(sysroot_access(ctx->sr, "/.dockerenv")) ==
		 PATH_UNREADABLE ||
		 path_state_of(sysroot_access(ctx->sr, "/run/.containerenv")) ==
		 PATH_UNREADABLE)
		unsure = true;
	n = sysroot_read(ctx->sr, "/proc/1/cgroup", cgroup, sizeof(cgroup));
	if (!runtime && n > 0)
		runtime = container_from_cgroup(cgroup);
	k8s = in_kubernetes(ctx);
	if (!runtime && k8s)
		runtime = "kubernetes";

	if (runtime) {
		ibdevs = count_entries(ctx->sr, "/sys/class/infiniband", "");
		uverbs = count_entries(ctx->sr, "/dev/infiniband", "uverbs");
		if (uverbs == -ENOENT)
			uverbs = 0;
		if (sysroot_read(ctx->sr, SELF_STATUS, status,
				 sizeof(status)) > 0 &&
		    !parse_status(status, &euid, &capeff))
			caps_known = true;
	}
	memlock = ctx_result_of(ctx, "host.memlock", ctx->host);
	/* Valid until the next emit, which may move the results. */
	memlock_code = memlock ? memlock->code : NULL;
	memlock_limited = memlock && memlock->code_index == C_MEMLOCK_LIMITED;

	if (runtime && ibdevs > 0 && uverbs == 0) {
		r = emit(ctx, ctx->host, ST_WARN, C_CONTAINER_NO_UVERBS,
			 "in a container (%s): %d RDMA device(s) in "
			 "/sys/class/infiniband but no /dev/infiniband/uverbs* "
			 "node: the runtime passed sysfs through, not the "
			 "devices", runtime, ibdevs);
		remedy_CONTAINER_NO_UVERBS(r);
	} else if (runtime && caps_known &&
		   !(capeff & (1ULL << CAP_IPC_LOCK)) && memlock_limited) {
		r = emit(ctx, ctx->host, ST_WARN, C_CONTAINER_MEMLOCK_NO_IPC_LOCK,
			 "in a container (%s) as uid %ld: CAP_IPC_LOCK is not "
			 "effective (CapEff %016llx) and host.memlock says: %s",
			 runtime, euid, capeff, memlock->reason);
		remedy_CONTAINER_MEMLOCK_NO_IPC_LOCK(r, euid != 0);
	} else if (runtime) {
		r = emit(ctx, ctx->host, ST_PASS, C_IN_CONTAINER,
			 "running in a container (%s): device nodes, memlock "
			 "and capabilities come from the runtime", runtime);
	} else if (unsure) {
		r = emit(ctx, ctx->host, ST_SKIP, C_CONTAINER_MARKERS_UNREADABLE,
			 "cannot look at /.dockerenv or /run/.containerenv: "
			 "container or not is unknown");
	} else {
		r = emit(ctx, ctx->host, ST_PASS, C_NO_CONTAINER,
			 "no container markers found");
	}
	ev_str(r, "runtime", "%s", runtime ? runtime : "none");
	ev_bool(r, "cgroup_readable", n >= 0);
	ev_bool(r, "dev_infiniband", sysroot_is_dir(ctx->sr, "/dev/infiniband"));
	if (runtime) {
		ev_bool(r, "kubernetes", k8s);
		if (ibdevs >= 0)
			ev_int(r, "rdma_devices", ibdevs);
		if (uverbs >= 0)
			ev_int(r, "uverbs_nodes", uverbs);
		if (caps_known) {
			ev_int(r, "euid", euid);
			ev_bool(r, "cap_ipc_lock",
				capeff & (1ULL << CAP_IPC_LOCK));
		}
		if (memlock_code)
			ev_str(r, "memlock", "%s", memlock_code);
	}
	ret = sysroot_access(ctx->sr, "/dev/nvidiactl");
	/* Unreadable is not absent: say which. */
	if (path_state_of(ret) == PATH_UNREADABLE)
		ev_str(r, "dev_nvidiactl", "unreadable: %s",
		       strerrorname_np(-ret));
	else
		ev_bool(r, "dev_nvidiactl", !ret);
}
