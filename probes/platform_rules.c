// SPDX-License-Identifier: MIT
/*
 * Platform rules from the field (issue 16): facts about the kernel a
 * mechanism needs that the chain's other gates take for granted.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "access/mlx5.h"
#include "access/sysroot.h"
#include "decode/parse.h"
#include "decode/pcie.h"
#include "probes/probes.h"

#define KALLSYMS	"/proc/kallsyms"
#define PEER_API_SYM	"ib_register_peer_memory_client"


/*
 * One kallsyms line: "ADDR TYPE NAME[\t[MODULE]]". The name must match
 * exactly: "__kstrtab_<sym>" and "__ksymtab_<sym>" are other symbols.
 */
static void ksym_line(const char *l, size_t len, const char *sym,
		      struct ksym_find *f)
{
	size_t slen = strlen(sym), i = 0, a, name;

	while (i < len && l[i] != ' ')
		i++;
	a = i;
	if (!a || i + 3 > len || l[i + 2] != ' ')
		return;
	f->lines++;
	name = i + 3;
	if (len - name < slen || memcmp(l + name, sym, slen) ||
	    (name + slen < len && l[name + slen] != '\t' &&
	     l[name + slen] != ' '))
		return;
	f->found = true;
	/* Not strspn: the line is not NUL-terminated (a read buffer). */
	for (i = 0; i < a && l[i] == '0'; i++)
		;
	f->zero_addr = i == a;
	/* A capture keeps the name, not the address (KASLR). */
	snprintf(f->kept, sizeof(f->kept), "%s%.*s", f->zero_addr ?
		 "0000000000000000" : "ffffffffffffffff",
		 (int)(len - a < 140 ? len - a : 140), l + a);
	f->module[0] = '\0';
	for (i = name + slen; i < len && l[i] != '['; i++)
		;
	if (i < len) {
		size_t m = ++i;

		while (i < len && l[i] != ']')
			i++;
		snprintf(f->module, sizeof(f->module), "%.*s", (int)(i - m),
			 l + m);
	}
}

/* Stream the file (megabytes: it does not fit a sysfs-sized buffer). */
static int ksym_scan(struct sysroot *sr, const char *sym, struct ksym_find *f)
{
	char buf[65536];
	size_t have = 0;
	int fd = sysroot_open_regular(sr, KALLSYMS), ret = 0;

	memset(f, 0, sizeof(*f));
	if (fd < 0)
		return fd;
	for (;;) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - have);
		size_t start = 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			break;
		}
		have += (size_t)n;
		for (size_t i = 0; i < have; i++) {
			if (buf[i] != '\n')
				continue;
			ksym_line(buf + start, i - start, sym, f);
			start = i + 1;
		}
		if (n == 0 || (!start && have == sizeof(buf))) {
			/* The end, or a line longer than the buffer. */
			if (have > start)
				ksym_line(buf + start, have - start, sym, f);
			break;
		}
		memmove(buf, buf + start, have - start);
		have -= start;
	}
	close(fd);
	return ret;
}

/*
 * The pass over /proc/kallsyms, in a child process while the vendor worker
 * runs: not a thread, because the worker is forked meanwhile, and a fork
 * beside a running thread hands the child whatever locks that thread held
 * (the allocator's under a sanitizer). The answer comes back through a
 * shared mapping; the supervisor may reap the child (it waits for any), so
 * `done` says the answer is there.
 */
struct ksym_shared {
	volatile int done;
	int ret;
	struct ksym_find f;
};

struct ksym_prefetch {
	pid_t pid;
	struct ksym_shared *sh;
	bool joined;
	int ret;
	struct ksym_find f;
};

/* How long the parent waits for the pass after the worker finished. */
#define KSYM_JOIN_MS 5000

struct ksym_prefetch *ksym_prefetch_start(struct sysroot *sr)
{
	struct ksym_prefetch *kp = calloc(1, sizeof(*kp));

	if (!kp)
		return NULL;
	kp->sh = mmap(NULL, sizeof(*kp->sh), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (kp->sh == MAP_FAILED) {
		free(kp);
		return NULL;
	}
	kp->pid = fork();
	if (kp->pid == 0) {
		/* The parent answers signals; this only reads one file. */
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		kp->sh->ret = ksym_scan(sr, PEER_API_SYM, &kp->sh->f);
		__atomic_store_n(&kp->sh->done, 1, __ATOMIC_RELEASE);
		_exit(0);
	}
	if (kp->pid < 0) {
		munmap(kp->sh, sizeof(*kp->sh));
		free(kp);
		return NULL;
	}
	return kp;
}

/* The child's pid, for the worker supervisor's orphan sweep to spare. */
pid_t ksym_prefetch_pid(const struct ksym_prefetch *kp)
{
	return kp && !kp->joined ? kp->pid : 0;
}

void ksym_prefetch_join(struct ksym_prefetch *kp)
{
	struct timespec nap = { 0, 2 * 1000 * 1000 };
	bool reaped = false;
	pid_t r;

	if (!kp || kp->joined)
		return;
	kp->joined = true;
	for (int waited = 0; waited < KSYM_JOIN_MS / 2; waited++) {
		if (__atomic_load_n(&kp->sh->done, __ATOMIC_ACQUIRE))
			break;
		/* Gone (killed, or reaped by the supervisor): no answer. */
		r = waitpid(kp->pid, NULL, WNOHANG);
		if (r == kp->pid || (r < 0 && errno == ECHILD)) {
			reaped = true;
			break;
		}
		nanosleep(&nap, NULL);
	}
	if (__atomic_load_n(&kp->sh->done, __ATOMIC_ACQUIRE)) {
		kp->ret = kp->sh->ret;
		kp->f = kp->sh->f;
		kp->f.kept[sizeof(kp->f.kept) - 1] = '\0';
		kp->f.module[sizeof(kp->f.module) - 1] = '\0';
	} else {
		/* Still ours (not reaped): no other process can hold the pid. */
		if (!reaped && waitpid(kp->pid, NULL, WNOHANG) == 0)
			kill(kp->pid, SIGKILL);
		/* Killed by someone else: the gate reads the file itself. */
		kp->ret = reaped ? -ECHILD : -ETIMEDOUT;
		memset(&kp->f, 0, sizeof(kp->f));
	}
	if (!reaped)
		waitpid(kp->pid, NULL, 0);	/* ECHILD: the supervisor did */
	munmap(kp->sh, sizeof(*kp->sh));
	kp->sh = NULL;
}

void ksym_prefetch_free(struct ksym_prefetch *kp)
{
	ksym_prefetch_join(kp);
	free(kp);
}

/*
 * The answer, from the node (recorded as /gdrcheck/kallsyms when
 * capturing: "lines N" or "error ERRNO", then the symbol's line with its
 * address masked) or from a capture being replayed. *absent: a replayed
 * capture without it.
 */
static int ksym_get(struct gdr_ctx *ctx, const char *sym, struct ksym_find *f,
		    bool *absent)
{
	char rec[256], *text, *line, *save = NULL;
	long lines = 0;
	int ret = 0, err = 0;

	*absent = false;
	if (!capture_replaying(ctx)) {
		if (ctx->ksym && ctx->ksym->joined &&
		    ctx->ksym->ret != -ECHILD) {
			*f = ctx->ksym->f;
			ret = ctx->ksym->ret;
		} else {
			ret = ksym_scan(ctx->sr, sym, f);
		}
		if (ret)
			snprintf(rec, sizeof(rec), "error %d\n", -ret);
		else
			snprintf(rec, sizeof(rec), "lines %ld\n%s%s", f->lines,
				 f->kept, f->found ? "\n" : "");
		capfact_write(ctx, "kallsyms", rec);
		return ret;
	}
	memset(f, 0, sizeof(*f));
	text = capfact_read(ctx, "kallsyms");
	if (!text) {
		*absent = true;
		return -ENOENT;
	}
	line = strtok_r(text, "\n", &save);
	if (!line || (sscanf(line, "lines %ld", &lines) != 1 &&
		      sscanf(line, "error %d", &err) != 1))
		err = EINVAL;
	while (!err && (line = strtok_r(NULL, "\n", &save)))
		ksym_line(line, strlen(line), sym, f);
	f->lines = lines;
	free(text);
	return err > 0 ? -err : err ? -EINVAL : 0;
}

/* What the kernel log holds about peer-memory modules. */
struct kmsg_find {
	int err;		/* 0: read to the end; else why not */
	int mismatches;		/* "disagrees about version of symbol" */
	char mod[64], sym[96];	/* the first one */
	char kept[1024];	/* the first lines that count (--capture) */
	size_t used;
};

static bool peer_module(const char *mod)
{
	return !strcmp(mod, "nvidia_peermem") || !strcmp(mod, "nv_peer_mem");
}

/* One kernel log record: does it count? */
static void kmsg_record(struct kmsg_find *k, const char *rec)
{
	char mod[64], sym[96];
	size_t len = strcspn(rec, "\n");

	if (parse_kmsg_symbol_version(rec, mod, sizeof(mod), sym,
				      sizeof(sym)) || !peer_module(mod))
		return;
	if (!k->mismatches++) {
		snprintf(k->mod, sizeof(k->mod), "%s", mod);
		snprintf(k->sym, sizeof(k->sym), "%s", sym);
	}
	if (k->used + len + 2 < sizeof(k->kept))
		k->used += (size_t)snprintf(k->kept + k->used,
					    sizeof(k->kept) - k->used, "%.*s\n",
					    (int)len, rec);
}

/*
 * The kernel log from its oldest record (read-only, non-blocking): a
 * character device or nothing, as for data.kmsg's window.
 */
static void kmsg_scan(struct sysroot *sr, struct kmsg_find *k)
{
	char rec[1024];
	struct stat sb;
	int fd = sysroot_open(sr, "/dev/kmsg", O_RDONLY | O_NONBLOCK |
			      O_CLOEXEC);

	memset(k, 0, sizeof(*k));
	if (fd < 0) {
		k->err = -fd;
		return;
	}
	if (fstat(fd, &sb) || !S_ISCHR(sb.st_mode)) {
		k->err = ENODEV;
		close(fd);
		return;
	}
	for (;;) {
		ssize_t n;

		errno = 0;
		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten records: skip ahead */
		if (n < 0 && errno != EAGAIN)
			k->err = errno ? errno : EIO;
		if (n <= 0)
			break;
		rec[n] = '\0';
		kmsg_record(k, rec);
	}
	close(fd);
}

/*
 * The kernel log's answer, from the node (recorded as /gdrcheck/kernel-log:
 * "error ERRNO count N" (ERRNO 0: read to the end; N lines counted), then
 * the first records that count) or from a capture being replayed; *absent
 * as for ksym_get.
 */
static void kmsg_get(struct gdr_ctx *ctx, struct kmsg_find *k, bool *absent)
{
	char *text, *line, *save = NULL, *rec;
	int count = 0;

	*absent = false;
	if (!capture_replaying(ctx)) {
		kmsg_scan(ctx->sr, k);
		if (sysroot_recording(ctx->sr) &&
		    asprintf(&rec, "error %d count %d\n%s", k->err,
			     k->mismatches, k->kept) >= 0) {
			capfact_write(ctx, "kernel-log", rec);
			free(rec);
		}
		return;
	}
	memset(k, 0, sizeof(*k));
	text = capfact_read(ctx, "kernel-log");
	if (!text) {
		*absent = true;
		k->err = ENOENT;
		return;
	}
	line = strtok_r(text, "\n", &save);
	if (!line || sscanf(line, "error %d count %d", &k->err, &count) != 2)
		k->err = EINVAL;
	while ((line = strtok_r(NULL, "\n", &save)))
		kmsg_record(k, line);
	/* More lines than were kept: the node's count. */
	if (count > k->mismatches)
		k->mismatches = count;
	free(text);
}

static bool peer_client_loaded(struct sysroot *sr)
{
	return sysroot_exists(sr, "/sys/kernel/mm/memory_peers/nv_mem") ||
	       sysroot_exists(sr, "/sys/kernel/mm/memory_peers/nv_mem_nc") ||
	       sysroot_exists(sr, "/sys/module/nvidia_peermem") ||
	       sysroot_exists(sr, "/sys/module/nv_peer_mem");
}

static void kmsg_evidence(struct result *r, const struct kmsg_find *k,
			  bool absent)
{
	if (absent)
		ev_str(r, "kernel_log", "not in this capture (taken by an "
		       "older gdrcheck)");
	else if (k->err)
		ev_str(r, "kernel_log", "not read (/dev/kmsg: %s)",
		       k->err == ENODEV ? "not a character device" :
		       strerror(k->err));
	else if (!k->mismatches)
		ev_str(r, "kernel_log", "no symbol version mismatch of a "
		       "peer-memory module");
	else
		ev_str(r, "kernel_log", "%d line(s) like \"%s: disagrees "
		       "about version of symbol %s\"", k->mismatches, k->mod,
		       k->sym);
}

void gate_mech_peermem_api(struct gdr_ctx *ctx, const struct target *t)
{
	struct ksym_find f;
	struct kmsg_find k;
	struct result *r;
	char efa_first[160];
	size_t efa_p2p;
	bool ks_absent, log_absent;
	int ret;

	(void)t;
	if (node_efa_only(ctx, &efa_p2p, efa_first, sizeof(efa_first))) {
		/* The efa driver's p2p provider needs no ib_core API. */
		emit(ctx, ctx->host, ST_SKIP, C_PEERMEM_API_EFA,
		     "every RDMA device is an AWS EFA: its driver pins GPU "
		     "memory without ib_core's peer-memory API; the rule does "
		     "not apply");
		return;
	}
	ret = ksym_get(ctx, PEER_API_SYM, &f, &ks_absent);
	kmsg_get(ctx, &k, &log_absent);
	if (k.mismatches && !peer_client_loaded(ctx->sr)) {
		/*
		 * gpu-operator#2868: the symbol is there, but nvidia_peermem
		 * was built against another ib_core (after an OFED upgrade).
		 */
		r = emit(ctx, ctx->host, ST_BLOCKED,
			 C_PEERMEM_API_VERSION_MISMATCH, "the kernel log says "
			 "%s disagrees about version of symbol %s: "
			 "nvidia_peermem was built against another ib_core and "
			 "cannot load", k.mod, k.sym);
		remedy_PEERMEM_API_VERSION_MISMATCH(r);
		kmsg_evidence(r, &k, log_absent);
		ev_str(r, "symbol", PEER_API_SYM);
		ev_str(r, "kallsyms", "%s", ks_absent ? "not in this capture" :
		       ret ? sysroot_strerror(-ret) :
		       f.found ? "exported" : "not listed");
		return;
	}
	if (ks_absent) {
		r = emit(ctx, ctx->host, ST_SKIP, C_NOT_REPLAYED,
			 "not replayed: this capture (an older gdrcheck's) "
			 "does not hold what the node's %s says about %s",
			 KALLSYMS, PEER_API_SYM);
		ev_str(r, "missing", "/gdrcheck/kallsyms");
		kmsg_evidence(r, &k, log_absent);
		return;
	}
	if (ret || !f.lines) {
		char why[96];

		if (ret == -ETIMEDOUT)
			snprintf(why, sizeof(why), "the pass over it did not "
				 "end within %d s of the driver's answers",
				 KSYM_JOIN_MS / 1000);
		else
			snprintf(why, sizeof(why), "%s", ret ?
				 sysroot_strerror(-ret) : "no symbol lines "
				 "(CONFIG_KALLSYMS off?)");
		r = emit(ctx, ctx->host, ST_SKIP, C_PEERMEM_API_UNREADABLE,
			 "cannot read %s: %s", KALLSYMS, why);
		ev_str(r, "path", KALLSYMS);
		kmsg_evidence(r, &k, log_absent);
		return;
	}
	if (f.found) {
		r = emit(ctx, ctx->host, ST_PASS, C_PEERMEM_API_PRESENT,
			 "ib_core exports the peer-memory API (%s in %s)",
			 PEER_API_SYM, f.module[0] ? f.module : "the kernel");
		ev_str(r, "module", "%s", f.module[0] ? f.module : "built in");
		/* Names are listed to everyone; addresses only to root. */
		ev_str(r, "address", "%s", f.zero_addr ? "0 (hidden: "
		       "kptr_restrict, not root; the name is what counts)" :
		       "non-zero");
	} else if (!sysroot_exists(ctx->sr, "/sys/module/ib_core")) {
		r = emit(ctx, ctx->host, ST_SKIP, C_PEERMEM_API_NO_IB_CORE,
			 "ib_core is not loaded (/sys/module/ib_core absent): "
			 "its exports cannot be seen");
	} else {
		r = emit(ctx, ctx->host, ST_BLOCKED, C_PEERMEM_API_MISSING,
			 "ib_core is loaded but %s lists no %s: an inbox "
			 "ib_core without the peer-memory API; nvidia_peermem "
			 "cannot load (modprobe: EINVAL)", KALLSYMS,
			 PEER_API_SYM);
		remedy_PEERMEM_API_MISSING(r);
	}
	ev_str(r, "symbol", PEER_API_SYM);
	ev_int(r, "kallsyms_lines", f.lines);
	kmsg_evidence(r, &k, log_absent);
}

/* --- kernel config ------------------------------------------------------ */

enum kopt { K_INFINIBAND, K_USER_MEM, K_DMA_BUF, K_P2PDMA, K_COUNT };

static const char *const kopt_name[K_COUNT] = {
	"CONFIG_INFINIBAND", "CONFIG_INFINIBAND_USER_MEM",
	"CONFIG_DMA_SHARED_BUFFER", "CONFIG_PCI_P2PDMA",
};

/*
 * Read the options from one config file (gzip or plain: zlib reads both).
 * val[i][0] == '\0' means not set (or not listed, which is the same).
 */
static int kconfig_read(struct sysroot *sr, const char *path,
			char val[K_COUNT][16])
{
	char line[512];
	int fd = sysroot_open_regular(sr, path);
	gzFile gz;
	struct stat sb;

	if (fd < 0)
		return fd;
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		close(fd);
		return -SYSROOT_ENOTREG;
	}
	/* --capture records the answer (kconfig_get), not this file. */
	gz = gzdopen(fd, "rb");
	if (!gz) {
		close(fd);
		return -ENOMEM;
	}
	memset(val, 0, sizeof(char[K_COUNT][16]));
	while (gzgets(gz, line, sizeof(line)))
		for (int i = 0; i < K_COUNT; i++)
			if (parse_kconfig_line(line, kopt_name[i], val[i],
					       sizeof(val[i])) >= 0)
				break;
	if (!gzeof(gz)) {
		gzclose(gz);
		return -EIO;
	}
	gzclose(gz);
	return 0;
}

static bool kset(const char *v)
{
	return v[0] && strcmp(v, "n");
}

/*
 * The options from the node's /proc/config.gz or /boot/config-RELEASE
 * (src: which), or why neither reads (why, return -1). A capture records
 * only the answer as /gdrcheck/kconfig ("source PATH" and the options'
 * lines, or "error WHY"), which a replay reads instead (-2: a capture
 * without it).
 */
static int kconfig_get(struct gdr_ctx *ctx, char val[K_COUNT][16], char *src,
		       size_t slen, char *why, size_t wlen)
{
	char rel[128], boot[200], *text, *line, *save = NULL, rec[1024];
	int ret, ret2 = -ENOENT, used;

	memset(val, 0, sizeof(char[K_COUNT][16]));
	if (capture_replaying(ctx)) {
		text = capfact_read(ctx, "kconfig");
		if (!text)
			return -2;
		line = strtok_r(text, "\n", &save);
		ret = 0;
		if (line && !strncmp(line, "source ", 7)) {
			snprintf(src, slen, "%s", line + 7);
		} else {
			snprintf(why, wlen, "%s", line && !strncmp(line,
				 "error ", 6) ? line + 6 : "unreadable record");
			ret = -1;
		}
		while (!ret && (line = strtok_r(NULL, "\n", &save)))
			for (int i = 0; i < K_COUNT; i++)
				if (parse_kconfig_line(line, kopt_name[i],
						       val[i],
						       sizeof(val[i])) >= 0)
					break;
		free(text);
		return ret;
	}
	snprintf(src, slen, "/proc/config.gz");
	ret = kconfig_read(ctx->sr, src, val);
	if (ret) {
		int rr = sysroot_read_line(ctx->sr, "/proc/sys/kernel/osrelease",
					   rel, sizeof(rel));

		snprintf(boot, sizeof(boot), "/boot/config-%s", rr ? "?" : rel);
		if (!rr)
			ret2 = kconfig_read(ctx->sr, boot, val);
		snprintf(src, slen, "%s", boot);
	}
	if (ret && ret2) {
		snprintf(why, wlen, "/proc/config.gz: %s; %s: %s",
			 sysroot_strerror(-ret), boot,
			 sysroot_strerror(-ret2));
		snprintf(rec, sizeof(rec), "error %s\n", why);
		capfact_write(ctx, "kconfig", rec);
		return -1;
	}
	used = snprintf(rec, sizeof(rec), "source %s\n", src);
	for (int i = 0; i < K_COUNT && used > 0 && (size_t)used < sizeof(rec);
	     i++)
		used += snprintf(rec + used, sizeof(rec) - (size_t)used,
				 val[i][0] ? "%s=%s\n" : "# %s is not set\n",
				 kopt_name[i], val[i]);
	capfact_write(ctx, "kconfig", rec);
	return 0;
}

void gate_host_kconfig(struct gdr_ctx *ctx, const struct target *t)
{
	char val[K_COUNT][16], why[400], src[200];
	struct result *r;
	int ret = kconfig_get(ctx, val, src, sizeof(src), why, sizeof(why));

	(void)t;
	if (ret == -2) {
		r = emit(ctx, ctx->host, ST_SKIP, C_NOT_REPLAYED,
			 "not replayed: this capture (an older gdrcheck's) "
			 "does not hold the node's kernel config options "
			 "(/proc/config.gz or /boot/config-RELEASE)");
		ev_str(r, "missing", "/gdrcheck/kconfig");
		return;
	}
	if (ret) {
		r = emit(ctx, ctx->host, ST_SKIP, C_KCONFIG_UNREADABLE,
			 "no kernel config readable (%s)", why);
		return;
	}
	if (kset(val[K_INFINIBAND]) && !kset(val[K_USER_MEM])) {
		r = emit(ctx, ctx->host, ST_BLOCKED, C_KCONFIG_NO_USER_MEM,
			 "%s has CONFIG_INFINIBAND but not "
			 "CONFIG_INFINIBAND_USER_MEM: ib_core cannot register "
			 "user memory (no ibv_reg_mr, no ibv_reg_dmabuf_mr)",
			 src);
		remedy_KCONFIG_NO_USER_MEM(r);
	} else if (!kset(val[K_DMA_BUF])) {
		r = emit(ctx, ctx->host, ST_BLOCKED, C_KCONFIG_NO_DMA_BUF,
			 "%s lacks CONFIG_DMA_SHARED_BUFFER: the NVIDIA open "
			 "module builds no dma-buf exporter", src);
		remedy_KCONFIG_NO_DMA_BUF(r);
		/* Only the DMA-BUF path needs it. */
		r->paths = P_DMABUF;
	} else if (!kset(val[K_INFINIBAND])) {
		r = emit(ctx, ctx->host, ST_PASS, C_KCONFIG_OUT_OF_TREE,
			 "%s has no in-tree RDMA stack (CONFIG_INFINIBAND not "
			 "set): ib_core comes from out of tree (MLNX_OFED/"
			 "DOCA-OFED) and these options do not apply to it", src);
	} else {
		r = emit(ctx, ctx->host, ST_PASS, C_KCONFIG_OK,
			 "%s has CONFIG_DMA_SHARED_BUFFER and "
			 "CONFIG_INFINIBAND_USER_MEM", src);
	}
	ev_str(r, "source", "%s", src);
	for (int i = 0; i < K_COUNT; i++)
		ev_str(r, kopt_name[i], "%s", val[i][0] ? val[i] : "not set");
	ev_str(r, "note", "CONFIG_PCI_P2PDMA is shown only: nvidia-uvm uses "
	       "it; the NVIDIA dma-buf exporter and ib_umem_dmabuf do not");
}

/* --- RDMA network namespaces ------------------------------------------- */

#define NETNS_MODE	"/sys/module/ib_core/parameters/netns_mode"

/*
 * Whether this process runs in a container, as host.container (the owner:
 * /.dockerenv, /run/.containerenv, /proc/1/cgroup, KUBERNETES_SERVICE_HOST,
 * replayed from a capture) found it, with the result it comes from.
 */
static void netns_container_evidence(struct result *r,
				     const struct result *ct)
{
	const char *rt = ct ? ev_find_str(ct, "runtime") : NULL;

	if (!ct)
		ev_str(r, "container", "not checked (host.container did not "
		       "run)");
	else if (ct->code_index == C_NO_CONTAINER)
		ev_str(r, "container", "no");
	else if (ct->code_index == C_CONTAINER_MARKERS_UNREADABLE)
		ev_str(r, "container", "unknown");
	else
		ev_str(r, "container", "yes (%s)", rt ? rt : "runtime unknown");
	if (ct)
		ev_str(r, "container_from", "host.container %s", ct->code);
}

void gate_nic_netns(struct gdr_ctx *ctx, const struct target *t)
{
	char mode[16];
	struct result *r;
	int ret = sysroot_read_line(ctx->sr, NETNS_MODE, mode, sizeof(mode));

	(void)t;
	/* A bool parameter reads Y or N (1/0 from older kernels). */
	if (!ret && strcmp(mode, "Y") && strcmp(mode, "N") &&
	    strcmp(mode, "1") && strcmp(mode, "0"))
		ret = -EINVAL;
	if (ret) {
		r = emit(ctx, ctx->host, ST_SKIP, C_NETNS_UNKNOWN,
			 "cannot read %s: %s (ib_core not loaded?)", NETNS_MODE,
			 ret == -EINVAL ? "not a bool" : sysroot_strerror(-ret));
		ev_str(r, "path", NETNS_MODE);
		return;
	}
	if (!strcmp(mode, "Y") || !strcmp(mode, "1")) {
		r = emit(ctx, ctx->host, ST_PASS, C_NETNS_SHARED,
			 "RDMA subsystem in shared netns mode: every RDMA device "
			 "is visible in every network namespace");
	} else if (ctx->inv.nnic) {
		r = emit(ctx, ctx->host, ST_PASS, C_NETNS_EXCLUSIVE,
			 "RDMA subsystem in exclusive netns mode: %zu RDMA "
			 "device(s) belong to this network namespace",
			 ctx->inv.nnic);
	} else {
		r = emit(ctx, ctx->host, ST_WARN, C_NETNS_EXCLUSIVE_HIDDEN,
			 "RDMA subsystem in exclusive netns mode and no RDMA "
			 "device in this network namespace: devices of other "
			 "namespaces are hidden");
		remedy_NETNS_EXCLUSIVE_HIDDEN(r);
	}
	ev_str(r, "netns_mode", "%s (%s)", mode, !strcmp(mode, "Y") ||
	       !strcmp(mode, "1") ? "shared" : "exclusive");
	ev_int(r, "rdma_devices_here", (long long)ctx->inv.nnic);
	/*
	 * host.container owns "in a container": cite it, never re-derive it
	 * (looked up after the emit: an emit may move the results).
	 */
	netns_container_evidence(r, ctx_result_of(ctx, "host.container",
						  ctx->host));
}

/* --- IOMMU groups and the driver's topology override ------------------- */

#define NV_PARAMS	"/proc/driver/nvidia/params"

/* "GrdmaPciTopoCheckOverride: N" of the driver's params; -1 if absent. */
static int grdma_override(struct sysroot *sr)
{
	static const char key[] = "GrdmaPciTopoCheckOverride: ";
	char text[16384];
	const char *p;

	if (sysroot_read(sr, NV_PARAMS, text, sizeof(text)) < 0)
		return -1;
	for (p = text; (p = strstr(p, key)); p++)
		if (p == text || p[-1] == '\n')
			return atoi(p + sizeof(key) - 1);
	return -1;
}

static int group_of(struct sysroot *sr, const char *bdf, char *g, size_t len)
{
	char p[256];

	snprintf(p, sizeof(p), "/sys/bus/pci/devices/%s/iommu_group", bdf);
	return sysroot_link_name(sr, p, g, len);
}

/* Are PCI functions a and b below different root ports (or unknown)? */
static bool apart(const struct gdr_ctx *ctx, const char *a, const char *b)
{
	int na = pcitree_find(&ctx->tree, a), nb = pcitree_find(&ctx->tree, b);

	if (na < 0 || nb < 0)
		return false;
	while (ctx->tree.n[na].parent >= 0)
		na = ctx->tree.n[na].parent;
	while (ctx->tree.n[nb].parent >= 0)
		nb = ctx->tree.n[nb].parent;
	return na != nb;
}

/*
 * The importer is the device NCCL registers through (the NCCL model
 * owns that: nccl_pair_dd). Direct-NIC with `<dev>_dma`: the NIC's
 * Data Direct function as libmlx5 named it (nic.data_direct; a far
 * pair's NIC has its function under another root port), the group
 * rdma_topo check compares. A Data Direct capable NIC that NCCL uses
 * as plain `<dev>` (NCCL_IB_DATA_DIRECT=0, an NCCL before 2.27):
 * the NIC's own function, through ibv_reg_dmabuf_mr. Without verbs
 * facts, the Data Direct function below the GPU's root port
 * (rdma_topo's pairing). Returns nic or dma (dma[20] filled).
 */
static const char *importer_of(struct gdr_ctx *ctx, int pair, const char *nic,
			       char dma[20], bool *own, bool *pf_not_dd)
{
	const struct inv_pair *pr = &ctx->inv.pair[pair];
	const char *gpu = ctx->inv.gpu[pr->gpu].pci;
	const struct verbs_nic *vn = ctx_verbs_nic(ctx, pr->nic);

	if (vn && mlx5_data_direct(vn) && nccl_pair_dd(ctx, pair)) {
		const char *fn = strrchr(vn->dd_path, '/');

		snprintf(dma, 20, "%.19s", fn ? fn + 1 : vn->dd_path);
		*own = true;
		return dma;
	}
	if (vn && mlx5_data_direct(vn))
		*pf_not_dd = true;
	else if (!direct_nic_dma_of(ctx, gpu, dma, 20))
		return dma;
	return nic;
}

/* Which device NCCL registers through: the NCCL model's answer. */
static void nccl_device_evidence(struct gdr_ctx *ctx, struct result *r,
				 int pair, bool own, bool pf_not_dd)
{
	const char *name = ctx->inv.nic[ctx->inv.pair[pair].nic].name;

	if (own)
		ev_str(r, "nccl_device", "%s_dma (the Data Direct function)",
		       name);
	else if (pf_not_dd)
		ev_str(r, "nccl_device", "%s (the NIC's own function; NCCL does "
		       "not use %s_dma here: NCCL_IB_DATA_DIRECT or its "
		       "version, see topo.nccl)", name, name);
	if (pf_not_dd)
		ev_bool(r, "nccl_pcie_mapping",
			nccl_pair_pcie_mapping(ctx, pair));
}

/* NVreg_GrdmaPciTopoCheckOverride as read (grdma_override). */
static void override_evidence(struct result *r, int ovr)
{
	if (ovr < 0)
		ev_str(r, "GrdmaPciTopoCheckOverride", "not in %s", NV_PARAMS);
	else
		ev_str(r, "GrdmaPciTopoCheckOverride", "%d (%s)", ovr,
		       ovr == 0 ? "driver decides" : ovr == 1 ?
		       "allow: topology check overridden" : ovr == 2 ?
		       "deny" : "unknown value");
}

void gate_platform_iommu_group(struct gdr_ctx *ctx, const struct target *t)
{
	const struct inv_pair *pr = &ctx->inv.pair[t->pair];
	const char *gpu = ctx->inv.gpu[pr->gpu].pci;
	const char *nic = ctx->inv.nic[pr->nic].pci;
	const struct platform_class *pc = ctx_platform(ctx);
	char gg[32] = "", ng[32] = "", dma[20];
	int ovr = grdma_override(ctx->sr), rg, rn;
	bool own = false, pf_not_dd = false;
	const struct result *rail;
	struct result *r;

	if (!nic[0]) {
		emit(ctx, pr->subject, ST_SKIP, C_PATH_UNKNOWN,
		     "no PCIe path known (see topo.path)");
		return;
	}
	nic = importer_of(ctx, t->pair, nic, dma, &own, &pf_not_dd);
	/* topo.nccl owns whether NCCL uses this pair at all. */
	rail = ctx_result_of(ctx, "topo.nccl", pr->subject);
	rg = group_of(ctx->sr, gpu, gg, sizeof(gg));
	rn = group_of(ctx->sr, nic, ng, sizeof(ng));
	/* Each device's group is its own fact, recorded at its subject. */
	if (!rg)
		report_subject_iommu_group(ctx->rep,
					   ctx->inv.gpu[pr->gpu].subject, gg);
	if (!rn && !strcmp(nic, ctx->inv.nic[pr->nic].pci))
		report_subject_iommu_group(ctx->rep,
					   ctx->inv.nic[pr->nic].subject, ng);
	if (ovr == 2) {
		r = emit(ctx, pr->subject, ST_BLOCKED, C_GRDMA_TOPO_DENY,
			 "NVreg_GrdmaPciTopoCheckOverride is 2: the NVIDIA "
			 "driver denies every dma-buf attach its topology check "
			 "decides (non-coherent GPUs)");
		remedy_GRDMA_TOPO_DENY(r);
	} else if ((rg && path_state_of(rg) == PATH_UNREADABLE) ||
		   (rn && path_state_of(rn) == PATH_UNREADABLE)) {
		bool g = rg && path_state_of(rg) == PATH_UNREADABLE;

		r = emit(ctx, pr->subject, ST_ERROR, C_IOMMU_GROUP_UNREADABLE,
			 "cannot read the IOMMU group of %s: %s", g ? gpu : nic,
			 sysroot_strerror(g ? -rg : -rn));
	} else if (rg && rn) {
		r = emit(ctx, pr->subject, ST_PASS, C_IOMMU_GROUP_NONE,
			 "neither GPU nor NIC is in an IOMMU group (no IOMMU): "
			 "the driver's group comparison sees them alike");
	} else if (!rg && !rn && !strcmp(gg, ng)) {
		r = emit(ctx, pr->subject, ST_PASS, C_IOMMU_GROUP_SHARED,
			 "GPU and NIC share IOMMU group %s", gg);
	} else if ((own && apart(ctx, gpu, dma)) ||
		   (pf_not_dd && apart(ctx, gpu, nic) && rail &&
		    rail->code_index == C_NCCL_NOT_A_RAIL)) {
		/*
		 * A GPU with another complex's Data Direct function (GB300:
		 * the other Grace's NIC), or with a NIC's own function that
		 * NCCL does not use for it (topo.nccl: not a rail): separate
		 * root ports are separate groups whatever ACS says, so the
		 * PCIe-mapped dma-buf is refused there; NCCL's rail for the
		 * GPU is another NIC (topo.nccl), so this far pair is
		 * information.
		 */
		r = emit(ctx, pr->subject, ST_SKIP, C_IOMMU_GROUPS_APART,
			 "GPU in IOMMU group %s, %s %s in %s below another root "
			 "port: no ACS setting joins them; the driver refuses a "
			 "PCIe-mapped dma-buf across them, and a GPU uses the "
			 "NIC of its own complex (see topo.nccl)", gg, own ?
			 "the NIC's Data Direct function" :
			 "the NIC's own function", nic, ng);
	} else if (pf_not_dd && pc->kind != PLAT_KIND_X86 &&
		   !nccl_pair_pcie_mapping(ctx, t->pair)) {
		/*
		 * nv_dma_buf_attach compares groups for the PCIe mapping
		 * only; NCCL exports this pair's dma-buf with another one
		 * (P2C/C2C: the default mapping) or not at all (no GDR).
		 */
		r = emit(ctx, pr->subject, ST_PASS, C_IOMMU_GROUPS_DIFFER_NO_PCIE,
			 "GPU in IOMMU group %s, %s (NCCL's device, not %s_dma) "
			 "in %s: NCCL exports no PCIe-mapped dma-buf for this "
			 "pair, the only kind refused across groups",
			 rg ? "none" : gg,
			 ctx->inv.nic[pr->nic].name, ctx->inv.nic[pr->nic].name,
			 rn ? "none" : ng);
	} else if (pc->kind == PLAT_KIND_X86) {
		r = emit(ctx, pr->subject, ST_PASS, C_IOMMU_GROUPS_DIFFER_X86,
			 "GPU in IOMMU group %s, NIC in %s: on x86 (%s) GPUs are "
			 "not coherent and the driver does not compare IOMMU "
			 "groups", rg ? "none" : gg, rn ? "none" : ng,
			 pc->cpu[0] ? pc->cpu : pc->machine);
	} else {
		r = emit(ctx, pr->subject, ST_WARN, C_IOMMU_GROUPS_DIFFER,
			 "GPU in IOMMU group %s, NIC in %s: on this coherent "
			 "platform (%s) the driver refuses a dma-buf exported "
			 "with the PCIe (BAR1) mapping type at attach; other "
			 "mappings are not affected", rg ? "none" : gg,
			 rn ? "none" : ng, pc->vera ? "Vera" :
			 pc->kind == PLAT_KIND_GRACE ||
			 pc->kind == PLAT_KIND_GRACE_DIRECT_NIC ? "Grace" :
			 pc->machine[0] ? pc->machine : "not x86");
		remedy_IOMMU_GROUPS_DIFFER(r);
	}
	ev_str(r, "gpu_group", "%s", rg ? "none" : gg);
	ev_str(r, "nic_group", "%s", rn ? "none" : ng);
	if (nic == dma)
		ev_str(r, "nic_function", "%s (%s)", dma, own ?
		       "the NIC's Data Direct function, from libmlx5" :
		       "the Data Direct function below the GPU's root port");
	else if (pf_not_dd)
		ev_str(r, "nic_function", "%s (the NIC's own function)", nic);
	nccl_device_evidence(ctx, r, t->pair, own, pf_not_dd);
	override_evidence(r, ovr);
}

/* --- arm-smmu-v3 identity domains before 6.11 --------------------------- */

/* The first "smmu3.*" unit in /sys/class/iommu (arm-smmu-v3's names). */
int smmu3_unit(struct sysroot *sr, char *buf, size_t len)
{
	char **units = NULL;
	size_t n = 0;
	int ret = sysroot_list(sr, "/sys/class/iommu", &units, &n);

	buf[0] = '\0';
	for (size_t i = 0; !ret && i < n && !buf[0]; i++)
		if (!strncmp(units[i], "smmu3.", 6))
			snprintf(buf, len, "%s", units[i]);
	sysroot_free_list(units, n);
	return ret == -ENOENT ? 0 : ret;
}

/* The last word of the command line starting with key (the kernel's). */
static const char *cmdline_word(const char *line, const char *key, char *buf,
				size_t len)
{
	size_t k = strlen(key);
	const char *found = NULL;

	for (const char *p = line; *p; ) {
		size_t w = strcspn(p, " ");

		if (w >= k && !strncmp(p, key, k)) {
			snprintf(buf, len, "%.*s", (int)w, p);
			found = buf;
		}
		p += w;
		p += strspn(p, " ");
	}
	return found;
}

void gate_platform_smmu(struct gdr_ctx *ctx, const struct target *t)
{
	const struct platform_class *pc = ctx_platform(ctx);
	char unit[64], rel[128], cmd[4096], pt[64], acs[256];
	struct result *r;
	struct kver v;
	bool identity;
	int ret;

	(void)t;
	ret = smmu3_unit(ctx->sr, unit, sizeof(unit));
	if (ret) {
		r = emit(ctx, ctx->host, ST_ERROR, C_SMMU_FACTS_UNREADABLE,
			 "cannot read /sys/class/iommu: %s",
			 sysroot_strerror(-ret));
		return;
	}
	if (!unit[0]) {
		r = emit(ctx, ctx->host, ST_SKIP, C_SMMU_NOT_APPLICABLE,
			 "no arm-smmu-v3 unit (IOMMU driver: %s): the "
			 "Grace/SMMU rule does not apply to %s",
			 plat_iommu_name(pc->iommu), pc->describe);
		return;
	}
	ret = sysroot_read_line(ctx->sr, "/proc/sys/kernel/osrelease", rel,
				sizeof(rel));
	if (!ret && parse_kernel_release(rel, &v))
		ret = -EINVAL;
	if (!ret)
		ret = sysroot_read_line(ctx->sr, "/proc/cmdline", cmd,
					sizeof(cmd));
	if (ret) {
		r = emit(ctx, ctx->host, ST_ERROR, C_SMMU_FACTS_UNREADABLE,
			 "cannot read the kernel release or command line: %s",
			 ret == -EINVAL ? "release not a version" :
			 sysroot_strerror(-ret));
		return;
	}
	/* iommu.passthrough=1/y/on, or iommu=pt (the last one counts). */
	identity = false;
	if (cmdline_word(cmd, "iommu.passthrough=", pt, sizeof(pt)))
		identity = (pt[18] && strchr("1yY", pt[18])) ||
			   !strcmp(pt + 18, "on");
	else if (cmdline_word(cmd, "iommu=pt", pt, sizeof(pt)))
		identity = !strcmp(pt, "iommu=pt");
	if (!cmdline_word(cmd, "pci=config_acs=", acs, sizeof(acs)))
		acs[0] = '\0';
	if (kver_cmp(&v, 6, 11) >= 0 || !identity) {
		r = emit(ctx, ctx->host, ST_PASS, C_SMMU_OK,
			 "arm-smmu-v3 with kernel %s: %s", rel,
			 kver_cmp(&v, 6, 11) >= 0 ? "PASIDs attach to identity "
			 "domains (>= 6.11)" : "translating domains, the PASID "
			 "bind works");
	} else if (acs[0]) {
		r = emit(ctx, ctx->host, ST_BLOCKED, C_SMMU_PASSTHROUGH_ACS,
			 "arm-smmu-v3, kernel %s < 6.11, identity domains (%s) "
			 "and ACS set on the command line (%s): nvidia_uvm's "
			 "PASID bind fails, no CUDA context can be created", rel,
			 pt, acs);
		remedy_SMMU_PASSTHROUGH_ACS(r);
	} else {
		r = emit(ctx, ctx->host, ST_WARN, C_SMMU_PASSTHROUGH,
			 "arm-smmu-v3, kernel %s < 6.11 and identity domains "
			 "(%s): enabling ACS (pci=config_acs=) would stop CUDA "
			 "contexts", rel, pt);
		remedy_SMMU_PASSTHROUGH(r);
	}
	ev_str(r, "smmu_unit", "%s", unit);
	ev_str(r, "release", "%s", rel);
	ev_str(r, "passthrough", "%s", identity ? pt : "no");
	ev_str(r, "config_acs", "%s", acs[0] ? acs : "not on the command line");
}
