// SPDX-License-Identifier: MIT
/*
 * Platform rules from the field (issue 16): facts about the kernel a
 * mechanism needs that the chain's other gates take for granted.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "access/sysroot.h"
#include "decode/parse.h"
#include "probes/probes.h"

#define KALLSYMS	"/proc/kallsyms"
#define PEER_API_SYM	"ib_register_peer_memory_client"

/* What one pass over /proc/kallsyms found. */
struct ksym_find {
	long lines;		/* symbol lines seen */
	bool found;
	bool zero_addr;		/* its address reads as 0 (kptr_restrict) */
	char module[64];	/* "[ib_core]" -> "ib_core"; "" when built in */
};

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
	f->zero_addr = strspn(l, "0") == a;
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
	int fd = sysroot_open(sr, KALLSYMS, O_RDONLY | O_CLOEXEC), ret = 0;

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

void gate_mech_peermem_api(struct gdr_ctx *ctx, const struct target *t)
{
	struct ksym_find f;
	struct result *r;
	int ret = ksym_scan(ctx->sr, PEER_API_SYM, &f);

	(void)t;
	if (ret || !f.lines) {
		r = emit(ctx, ctx->host, ST_SKIP, C_PEERMEM_API_UNREADABLE,
			 "cannot read %s: %s", KALLSYMS,
			 ret ? sysroot_strerror(-ret) : "no symbol lines "
			 "(CONFIG_KALLSYMS off?)");
		ev_str(r, "path", KALLSYMS);
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
}
