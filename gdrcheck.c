// SPDX-License-Identifier: MIT
/*
 * gdrcheck - can a NIC on this node DMA straight into GPU memory, by which
 * mechanism, and if not, which gate stops it?
 *
 * Options (one table, opt_table), the run (one context: struct gdr_ctx
 * holding the sysroot, the libpci access, the gate selection and the
 * probes' caches), the report, the exit status. The work lives below, one
 * folder per layer, each including only the ones under it (Makefile,
 * tests/check-layers.sh): core/ (result model, names), decode/ (pure
 * parsers), access/ (sysroot files, vendor libraries in the worker),
 * nccl/, gate/ (catalog gate/gates.def, context, inventory, PCIe tree),
 * probes/ (the gate functions), engine/ (chain, verdict, policy) and
 * report/ (the renderers).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "access/capture.h"
#include "access/vendor_json.h"
#include "access/outfile.h"
#include "access/pci.h"
#include "access/symtab.h"
#include "access/sysroot.h"
#include "access/vendor.h"
#include "engine/gates.h"
#include "nccl/rules.h"
#include "probes/peer_session.h"
#include "probes/probes.h"
#include "report/codes.h"

#define EXIT_USAGE 2
#define EXIT_UNDECIDED 3
#define DEFAULT_TIMEOUT 30.0
/* Slurm's HealthCheckProgram gets 60 s; leave a margin. */
#define DEFAULT_DEADLINE 45.0
/* Two-node mode waits for the other side: a Slurm step's two tasks may
 * start tens of seconds apart. */
#define DEFAULT_PEER_DEADLINE 120.0
#define DEFAULT_MIN_BANDWIDTH 0.5

static void usage(FILE *out)
{
	fputs("Usage: gdrcheck [OPTION]...\n"
	      "Check whether GPUDirect RDMA works on this node, by which mechanism\n"
	      "(DMA-BUF or nvidia-peermem), and which gate stops it if not.\n"
	      "\n"
	      "  -j, --json               print the report as JSON (--format json)\n"
	      "      --format FORMAT      text (default), json, junit (JUnit XML for CI)\n"
	      "                           or prometheus (node_exporter textfile)\n"
	      "  -q, --quiet              print only the verdict line\n"
	      "      --redact             mask the hostname, GPU UUIDs, GIDs, GUIDs and\n"
	      "                           MACs (for bug tickets)\n"
	      "      --only LIST          run only these gates or layers (comma list)\n"
	      "      --skip LIST          do not run these gates or layers\n"
	      "  -o, --output FILE        write the report to FILE\n"
	      "  -r, --require POLICY     auto (default), any, dmabuf, peermem or nccl:\n"
	      "                           which path must be READY for exit status 0;\n"
	      "                           auto is nccl when NCCL is found for the\n"
	      "                           node (libnccl.so.2, NCCL_* settings), else any\n"
	      "      --every-gpu          policy: every GPU must be READY with one of its\n"
	      "                           nearest NICs\n"
	      "      --max-distance CLASS policy: only GPU-NIC pairs at most CLASS apart\n"
	      "                           count (PIX, PXB, PHB, NODE, SYS)\n"
	      "      --warn-fails         policy: any WARN result fails (exit 1)\n"
	      "      --exempt-port LIST   a lost or trained-down rail on these ports\n"
	      "                           (mlx5_6/1, or mlx5_6 for all) does not fail\n"
	      "                           the node (also: 'exempt-port LIST' lines in\n"
	      "                           /etc/gdrcheck/gdrcheck.conf)\n"
	      "      --capture FILE       also write the /sys, /proc and /dev files the\n"
	      "                           report read and the node's other answers\n"
	      "                           (vendor libraries, environment, NCCL) to\n"
	      "                           FILE (.tar.gz, scrubbed), for --sysroot\n"
	      "                           replays elsewhere\n"
	      "      --sysroot DIR        read /sys, /proc and /dev below DIR\n"
	      "      --libcuda PATH       libcuda to load (default libcuda.so.1,\n"
	      "                           or $GDRCHECK_LIBCUDA)\n"
	      "      --libibverbs PATH    libibverbs to load (default libibverbs.so.1,\n"
	      "                           or $GDRCHECK_LIBIBVERBS)\n"
	      "      --libnvml PATH       NVML to load (default libnvidia-ml.so.1,\n"
	      "                           or $GDRCHECK_LIBNVML)\n"
	      "      --libmlx5 PATH       libmlx5 to load for Data Direct (default\n"
	      "                           libmlx5.so.1, or $GDRCHECK_LIBMLX5)\n"
	      "      --libpci PATH        libpci to load (default libpci.so.3,\n"
	      "                           or $GDRCHECK_LIBPCI)\n"
	      "      --libnccl PATH       the libnccl.so.2 whose version NCCL rules follow\n"
	      "                           (read, never loaded; default: found as the\n"
	      "                           dynamic loader would)\n"
	      "      --nccl-version X.Y.Z model this NCCL release (2.12.7 to 2.30.7)\n"
	      "      --pci-dump FILE      read PCI config space from an `lspci -xxxx`\n"
	      "                           capture instead of sysfs\n"
	      "  -t, --timeout SECONDS    limit for each vendor-library stage (default 30)\n"
	      "      --deadline SECONDS   limit for the whole run, every stage included\n"
	      "                           (default 45)\n"
	      "      --no-alloc           allocate no GPU memory (nodes running jobs):\n"
	      "                           no registration, no transfer\n"
	      "      --no-datapath        register, but run no loopback transfer\n"
	      "      --every-pair         run the loopback transfer on every GPU-NIC\n"
	      "                           pair (default: each GPU's rails and each\n"
	      "                           NIC's nearest GPU; the rest are registered)\n"
	      "      --reg-size BYTES     GPU buffer per GPU for the registrations and\n"
	      "                           transfers (K/M suffix; default 2M, 4K to 1G)\n"
	      "      --listen [ADDR:]PORT two-node mode: wait for the other node's\n"
	      "                           gdrcheck --peer, then test every rail against\n"
	      "                           it (default port 18515)\n"
	      "      --peer HOST[:PORT]   two-node mode: connect to the other node's\n"
	      "                           gdrcheck --listen and test every rail\n"
	      "      --token-file FILE    two-node mode: the shared secret (first line);\n"
	      "                           also $GDRCHECK_PEER_TOKEN, or both tasks of one\n"
	      "                           Slurm job; --token STRING shows it in ps\n"
	      "      --token STRING       the shared secret on the command line\n"
	      "      --pairs LIST         two-node mode: test these GPUs' rails only\n"
	      "                           (comma list of GPU indices, or all)\n"
	      "      --min-bandwidth F    two-node mode: a rail below F x its line rate\n"
	      "                           (the smaller port rate and PCIe link) fails\n"
	      "                           (0 to 1, default 0.5)\n"
	      "      --color[=WHEN]       colour: auto (default), always, never\n"
	      "      --no-color           same as --color=never\n"
	      "  -v, --verbose            show the evidence under each result\n"
	      "  -L, --list-gates         list the gates in chain order and exit\n"
	      "      --list-codes         list every gate's reason codes, meanings and\n"
	      "                           remedies (with --json: as JSON) and exit\n"
	      "  -h, --help               show this help and exit\n"
	      "  -V, --version            show the version and exit\n"
	      "\n"
	      "Exit status: 0 READY (READY-UNPROVEN with --no-alloc), 1 BLOCKED,\n"
	      "2 usage error, 3 could not decide.\n",
	      out);
}

/* The message quotes the user's words: cleaned as the report's strings are. */
static int __attribute__((format(printf, 1, 2)))
usage_error(const char *fmt, ...)
{
	char msg[1024], shown[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	report_clean(shown, sizeof(shown), msg);
	fprintf(stderr, "gdrcheck: %s\nTry 'gdrcheck --help' for more "
		"information.\n", shown);
	return EXIT_USAGE;
}

/*
 * getopt's complaint, naming the option itself: in a cluster such as -jx
 * that is -x (optopt), not the word. A long option's optopt is its value
 * (0 when unknown), so a word starting "--" is named as written, up to
 * any "=value".
 */
static bool long_is(const char *name, int opt);

static int bad_option(int c, const char *word)
{
	/* glibc's optopt is a plain char: 0xff comes as -1. */
	int opt = optopt < 0 ? optopt & 0xff : optopt;
	char name[64];

	/*
	 * In a bundle (`--quiet -Zj`) getopt has not moved on: word is the
	 * argument before the bundle. It names the error only when the
	 * failing option is that long option (--require with no value).
	 */
	if (!strncmp(word, "--", 2) && long_is(word + 2, opt))
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(word, "="),
			 word);
	else if (opt > 0 && opt < 256 && opt != '-')
		snprintf(name, sizeof(name), "-%c", opt);
	else
		snprintf(name, sizeof(name), "%s", word);
	if (c == ':')
		return usage_error("option '%s' needs an argument", name);
	return usage_error("unknown option '%s'", name);
}

/*
 * SOURCE_DATE_EPOCH (reproducible-builds.org): decimal seconds from 1970,
 * at most the last second of year 9999 so the timestamp keeps its four
 * digit year. Anything else is refused, not guessed at.
 */
#define EPOCH_MAX 253402300799LL

static int parse_epoch(const char *s, time_t *out)
{
	long long v;
	char *end;

	if (!s || !*s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v > EPOCH_MAX)
		return -1;
	*out = (time_t)v;
	return 0;
}

/* --- the options, one row each ------------------------------------------- */

/* What the setters fill: the options, and --only/--skip until the end. */
struct parsing {
	struct options *o;
	gate_mask only, skip;
	bool only_given;
};

struct opt_desc;
/* Store arg (NULL for a flag); 0, or usage_error()'s exit status. */
typedef int (*opt_set_fn)(struct parsing *p, const struct opt_desc *d,
			  const char *arg);

struct opt_desc {
	const char *name;		/* --name */
	char short_name;		/* -x, or 0 */
	int has_arg;			/* no_argument, required_argument... */
	opt_set_fn set;
	size_t field;			/* offsetof(struct options, ...) */
};

/* The generic setters write the row's field: a bool or a string. */
#define FIELD(p, d, type) ((type *)(void *)((char *)(p)->o + (d)->field))

static int set_true(struct parsing *p, const struct opt_desc *d,
		    const char *arg)
{
	*FIELD(p, d, bool) = true;
	return 0;
}

static int set_string(struct parsing *p, const struct opt_desc *d,
		      const char *arg)
{
	*FIELD(p, d, const char *) = arg;
	return 0;
}

/* arg as one of words[0..n-1]: its index, or -1. */
static int pick(const char *arg, const char *const *words, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(arg, words[i]))
			return i;
	return -1;
}

static int set_json(struct parsing *p, const struct opt_desc *d,
		    const char *arg)
{
	p->o->format = FMT_JSON;
	return 0;
}

static int set_format(struct parsing *p, const struct opt_desc *d,
		      const char *arg)
{
	static const char *const words[] = {
		[FMT_TEXT] = "text", [FMT_JSON] = "json",
		[FMT_JUNIT] = "junit", [FMT_PROMETHEUS] = "prometheus",
	};
	int k = pick(arg, words, 4);

	if (k < 0)
		return usage_error("invalid --format '%s' (text, json, junit "
				   "or prometheus)", arg);
	p->o->format = (enum out_format)k;
	return 0;
}

static int set_exempt(struct parsing *p, const struct opt_desc *d,
		      const char *arg)
{
	if (p->o->nexempt >= MAX_EXEMPT_OPTS)
		return usage_error("too many --exempt-port options (at most "
				   "%d; each takes a comma list)",
				   MAX_EXEMPT_OPTS);
	if (!*arg || strspn(arg, ", \t") == strlen(arg))
		return usage_error("--exempt-port needs a port (mlx5_6/1) or "
				   "a device (mlx5_6)");
	p->o->exempt[p->o->nexempt++] = arg;
	return 0;
}

static int set_require(struct parsing *p, const struct opt_desc *d,
		       const char *arg)
{
	static const char *const words[] = {
		[REQUIRE_ANY] = "any", [REQUIRE_DMABUF] = "dmabuf",
		[REQUIRE_PEERMEM] = "peermem", [REQUIRE_NCCL] = "nccl",
		[REQUIRE_AUTO] = "auto",
	};
	int k = pick(arg, words, 5);

	if (k < 0)
		return usage_error("invalid --require '%s' (auto, any, "
				   "dmabuf, peermem or nccl)", arg);
	p->o->require = (enum require_policy)k;
	return 0;
}

static int set_color(struct parsing *p, const struct opt_desc *d,
		     const char *arg)
{
	/* --color alone is auto; --no-color (no argument) is never. */
	static const char *const words[] = { "never", "always", "auto" };
	int k = arg ? pick(arg, words, 3) : 2;

	if (!strcmp(d->name, "no-color"))
		k = 0;
	if (k < 0)
		return usage_error("invalid --color '%s' (auto, always or "
				   "never)", arg);
	p->o->color = k == 2 ? -1 : k;
	return 0;
}

static int set_max_distance(struct parsing *p, const struct opt_desc *d,
			    const char *arg)
{
	p->o->max_distance = -1;
	for (int k = TOPO_PIX; k <= TOPO_SYS; k++)
		if (!strcmp(arg, topo_class_name((enum topo_class)k)))
			p->o->max_distance = k;
	if (p->o->max_distance < 0)
		return usage_error("invalid --max-distance '%s' (PIX, PXB, "
				   "PHB, NODE or SYS)", arg);
	return 0;
}

/* --only and --skip: parsed here, once, into gate masks. */
static int set_gates(struct parsing *p, const struct opt_desc *d,
		     const char *arg)
{
	bool only = !strcmp(d->name, "only");
	char bad[64];
	gate_mask m;

	if (gates_parse_list(arg, &m, bad, sizeof(bad))) {
		if (!bad[0])
			return usage_error("empty gate or layer name in --%s "
					   "'%s'", d->name, arg);
		return usage_error("unknown gate or layer '%s' in --%s%s",
				   bad, d->name, gates_list_hint(bad));
	}
	/* A repeated --only or --skip replaces the earlier one. */
	if (only) {
		p->only = m;
		p->only_given = true;
	} else {
		p->skip = m;
	}
	return 0;
}

/* --nccl-version X.Y.Z: a release inside the modelled range (nccl/rules.h). */
static int set_nccl_version(struct parsing *p, const struct opt_desc *d,
			    const char *arg)
{
	unsigned int x, y, z;
	char tail;

	if (sscanf(arg, "%u.%u.%u%c", &x, &y, &z, &tail) != 3 ||
	    x > 9 || y > 99 || z > 99 ||
	    NCCL_VER((int)x, (int)y, (int)z) < NCCL_VER_OLDEST ||
	    NCCL_VER((int)x, (int)y, (int)z) > NCCL_VER_NEWEST)
		return usage_error("invalid --%s '%s' (X.Y.Z from 2.12.7 to "
				   "2.30.7, the releases the NCCL model covers)",
				   d->name, arg);
	p->o->nccl_version = NCCL_VER((int)x, (int)y, (int)z);
	return 0;
}

static int set_timeout(struct parsing *p, const struct opt_desc *d,
		       const char *arg)
{
	char *end;

	errno = 0;
	p->o->timeout = strtod(arg, &end);
	/* Plain decimal seconds: no hex, exponent or "inf". */
	if (errno || end == arg || *end || arg[strspn(arg, "0123456789.")] ||
	    !(p->o->timeout >= 0.1 && p->o->timeout <= 3600))
		return usage_error("invalid --timeout '%s' (seconds, 0.1 to "
				   "3600)", arg);
	return 0;
}

static int set_deadline(struct parsing *p, const struct opt_desc *d,
			const char *arg)
{
	char *end;

	errno = 0;
	p->o->deadline = strtod(arg, &end);
	if (errno || end == arg || *end ||
	    !(p->o->deadline >= 0.1 && p->o->deadline <= 86400))
		return usage_error("invalid --deadline '%s' (seconds, 0.1 to "
				   "86400)", arg);
	p->o->deadline_given = true;
	return 0;
}

static int set_pci_dump(struct parsing *p, const struct opt_desc *d,
			const char *arg)
{
	struct stat st;

	/* libpci reads it blocking: a FIFO or device would hang. */
	if (stat(arg, &st) || access(arg, R_OK))
		return usage_error("cannot read --pci-dump '%s': %s", arg,
				   strerror(errno));
	if (!S_ISREG(st.st_mode))
		return usage_error("--pci-dump '%s' is not a regular file",
				   arg);
	p->o->pci_dump = arg;
	return 0;
}

static int set_reg_size(struct parsing *p, const struct opt_desc *d,
			const char *arg)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (*end == 'K' || *end == 'k')
		shift = 10, end++;
	else if (*end == 'M' || *end == 'm')
		shift = 20, end++;
	else if (*end == 'G' || *end == 'g')
		shift = 30, end++;
	/* Range before the shift: 16E M must not wrap to 1M. */
	if (v > (1ull << 30) >> shift)
		errno = ERANGE;
	v <<= shift;
	if (errno || end == arg || *end || arg[0] < '0' || arg[0] > '9' ||
	    v < 4096 || v > (1ull << 30) || v % 4096)
		return usage_error("invalid --reg-size '%s' (4K to 1G, a "
				   "multiple of 4K)", arg);
	p->o->reg_bytes = v;
	return 0;
}

static int set_endpoint(struct parsing *p, const struct opt_desc *d,
			const char *arg)
{
	char host[256], port[16];

	if (peer_parse_endpoint(arg, host, sizeof(host), port, sizeof(port)))
		return usage_error("invalid --%s '%s' (%s)", d->name, arg,
				   d->field == offsetof(struct options, listen) ?
				   "[ADDR:]PORT" : "HOST[:PORT]");
	return set_string(p, d, arg);
}

static int set_pairs(struct parsing *p, const struct opt_desc *d,
		     const char *arg)
{
	const char *s = arg;

	(void)d;
	if (strcmp(arg, "all")) {
		while (*s) {
			char *end;
			long v = strtol(s, &end, 10);

			if (end == s || v < 0 || v >= PEER_MAX_RAILS ||
			    (*end && *end != ','))
				return usage_error("invalid --pairs '%s' (GPU "
						   "indices 0-%d, comma "
						   "separated, or all)", arg,
						   PEER_MAX_RAILS - 1);
			s = *end ? end + 1 : end;
			if (!*s && *end == ',')
				return usage_error("invalid --pairs '%s' "
						   "(ends in a comma)", arg);
		}
	}
	p->o->pairs = arg;
	return 0;
}

static int set_min_bandwidth(struct parsing *p, const struct opt_desc *d,
			     const char *arg)
{
	char *end;
	double v;

	(void)d;
	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !(v >= 0 && v <= 1))
		return usage_error("invalid --min-bandwidth '%s' (a fraction "
				   "of the line rate, 0 to 1)", arg);
	p->o->min_bandwidth = v;
	return 0;
}

static int show_help(struct parsing *p, const struct opt_desc *d,
		     const char *arg)
{
	usage(stdout);
	exit(0);
}

static int show_version(struct parsing *p, const struct opt_desc *d,
			const char *arg)
{
	printf("gdrcheck %s\n", GDRCHECK_VERSION);
	exit(0);
}

#define OFF(f) offsetof(struct options, f)
static const struct opt_desc opt_table[] = {
	{ "json", 'j', no_argument, set_json, 0 },
	{ "format", 0, required_argument, set_format, 0 },
	{ "quiet", 'q', no_argument, set_true, OFF(quiet) },
	{ "redact", 0, no_argument, set_true, OFF(redact) },
	{ "every-gpu", 0, no_argument, set_true, OFF(every_gpu) },
	{ "max-distance", 0, required_argument, set_max_distance, 0 },
	{ "warn-fails", 0, no_argument, set_true, OFF(warn_fails) },
	{ "exempt-port", 0, required_argument, set_exempt, 0 },
	{ "capture", 0, required_argument, set_string, OFF(capture) },
	{ "only", 0, required_argument, set_gates, 0 },
	{ "skip", 0, required_argument, set_gates, 0 },
	{ "output", 'o', required_argument, set_string, OFF(output) },
	{ "require", 'r', required_argument, set_require, 0 },
	{ "sysroot", 0, required_argument, set_string, OFF(sysroot) },
	{ "libcuda", 0, required_argument, set_string, OFF(libcuda) },
	{ "libibverbs", 0, required_argument, set_string, OFF(libibverbs) },
	{ "libpci", 0, required_argument, set_string, OFF(libpci) },
	{ "libnvml", 0, required_argument, set_string, OFF(libnvml) },
	{ "libmlx5", 0, required_argument, set_string, OFF(libmlx5) },
	{ "libnccl", 0, required_argument, set_string, OFF(libnccl) },
	{ "nccl-version", 0, required_argument, set_nccl_version, 0 },
	{ "pci-dump", 0, required_argument, set_pci_dump, 0 },
	{ "timeout", 't', required_argument, set_timeout, 0 },
	{ "deadline", 0, required_argument, set_deadline, 0 },
	{ "no-alloc", 0, no_argument, set_true, OFF(no_alloc) },
	{ "no-datapath", 0, no_argument, set_true, OFF(no_datapath) },
	{ "every-pair", 0, no_argument, set_true, OFF(every_pair) },
	{ "reg-size", 0, required_argument, set_reg_size, 0 },
	{ "listen", 0, required_argument, set_endpoint, OFF(listen) },
	{ "peer", 0, required_argument, set_endpoint, OFF(peer) },
	{ "token", 0, required_argument, set_string, OFF(token) },
	{ "token-file", 0, required_argument, set_string, OFF(token_file) },
	{ "pairs", 0, required_argument, set_pairs, 0 },
	{ "min-bandwidth", 0, required_argument, set_min_bandwidth, 0 },
	{ "color", 0, optional_argument, set_color, 0 },
	{ "no-color", 0, no_argument, set_color, 0 },
	{ "verbose", 'v', no_argument, set_true, OFF(verbose) },
	{ "list-gates", 'L', no_argument, set_true, OFF(list_gates) },
	{ "list-codes", 0, no_argument, set_true, OFF(list_codes) },
	{ "help", 'h', no_argument, show_help, 0 },
	{ "version", 'V', no_argument, show_version, 0 },
};
#undef OFF
#define NOPTS (sizeof(opt_table) / sizeof(opt_table[0]))
/* getopt's value for a row: its short letter, else 256 + its index. */
#define OPT_LONG_BASE 256

/* Is long option `name` (up to '=') the one getopt reports as opt? */
static bool long_is(const char *name, int opt)
{
	size_t n = strcspn(name, "=");

	if (opt <= 0)
		return true;		/* an unknown long option */
	for (size_t i = 0; i < NOPTS; i++)
		if (strlen(opt_table[i].name) == n &&
		    !strncmp(opt_table[i].name, name, n))
			return opt_table[i].short_name == opt ||
			       opt == OPT_LONG_BASE + (int)i;
	return false;
}

/* getopt_long's view of the table: long options and the short string. */
static void getopt_tables(struct option *lo, char *shorts)
{
	char *s = shorts;

	*s++ = ':';		/* a missing argument is ':', not '?' */
	for (size_t i = 0; i < NOPTS; i++) {
		const struct opt_desc *d = &opt_table[i];

		lo[i] = (struct option){ d->name, d->has_arg, NULL,
			d->short_name ? d->short_name :
			OPT_LONG_BASE + (int)i };
		if (d->short_name) {
			*s++ = d->short_name;
			if (d->has_arg == required_argument)
				*s++ = ':';
		}
	}
	lo[NOPTS] = (struct option){ NULL, 0, NULL, 0 };
	*s = '\0';
}

/* The row getopt's value c stands for, or NULL (an unknown option). */
static const struct opt_desc *opt_row(int c)
{
	if (c >= OPT_LONG_BASE && c < OPT_LONG_BASE + (int)NOPTS)
		return &opt_table[c - OPT_LONG_BASE];
	for (size_t i = 0; c > 0 && c < OPT_LONG_BASE && i < NOPTS; i++)
		if (opt_table[i].short_name == c)
			return &opt_table[i];
	return NULL;
}

static void options_defaults(struct options *o)
{
	memset(o, 0, sizeof(*o));
	o->color = -1;
	o->max_distance = -1;
	o->require = REQUIRE_AUTO;
	o->timeout = DEFAULT_TIMEOUT;
	o->deadline = DEFAULT_DEADLINE;
	o->min_bandwidth = DEFAULT_MIN_BANDWIDTH;
	o->libcuda = getenv("GDRCHECK_LIBCUDA");
	o->libibverbs = getenv("GDRCHECK_LIBIBVERBS");
	o->libnvml = getenv("GDRCHECK_LIBNVML");
	o->libmlx5 = getenv("GDRCHECK_LIBMLX5");
	o->libpci = getenv("GDRCHECK_LIBPCI");
}

/* What is checked once every option is in: the whole command line. */
/*
 * path as the file it names: realpath when it exists, else its directory's
 * realpath and its own name (a file --output would create).
 */
static void target_of(const char *path, char *buf, size_t len, int depth)
{
	char dir[2 * PATH_MAX + 2], rd[PATH_MAX], lnk[PATH_MAX];
	const char *base = strrchr(path, '/');
	struct stat st;
	ssize_t n;

	if (realpath(path, rd)) {
		snprintf(buf, len, "%s", rd);
		return;
	}
	/* A dangling link: the file --output would write through it. */
	if (depth < 8 && !lstat(path, &st) && S_ISLNK(st.st_mode) &&
	    (n = readlink(path, lnk, sizeof(lnk) - 1)) > 0) {
		lnk[n] = '\0';
		if (lnk[0] != '/' && base)
			snprintf(dir, sizeof(dir), "%.*s/%s",
				 (int)(base - path), path, lnk);
		else
			snprintf(dir, sizeof(dir), "%s", lnk);
		target_of(dir, buf, len, depth + 1);
		return;
	}
	snprintf(dir, sizeof(dir), "%.*s", base ? (int)(base - path) : 1,
		 base ? (base == path ? "/" : path) : ".");
	if (!realpath(dir, rd))
		snprintf(rd, sizeof(rd), "%.4000s", dir);
	snprintf(buf, len, "%s/%s", rd, base ? base + 1 : path);
}

/* Do --output and --capture name one file (directly or through a link)? */
static bool same_output(const char *a, const char *b)
{
	char ta[PATH_MAX + 256], tb[PATH_MAX + 256];
	struct stat sa, sb;

	if (!stat(a, &sa) && !stat(b, &sb))
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	target_of(a, ta, sizeof(ta), 0);
	target_of(b, tb, sizeof(tb), 0);
	return !strcmp(ta, tb);
}

/*
 * --token-file's first line into o->token_buf: a regular file only, opened
 * without blocking (a FIFO there must not hold the run before its deadline
 * starts), at most one buffer of it read.
 */
static int read_token_file(struct options *o)
{
	size_t cap = sizeof(o->token_buf) - 1, len;
	const char *why = NULL;
	struct stat st;
	ssize_t n = -1;
	int fd;

	fd = open(o->token_file, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return usage_error("cannot read --token-file '%s': %s",
				   o->token_file, strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		why = "not a regular file";
	else if ((n = read(fd, o->token_buf, cap)) < 0)
		why = strerror(errno);
	close(fd);
	if (!why) {
		o->token_buf[n] = '\0';
		len = strcspn(o->token_buf, "\r\n");
		if (!len)
			why = "its first line is empty";
		else if (len == cap)
			why = "its first line is longer than 256 bytes";
		o->token_buf[len] = '\0';
	}
	if (why)
		return usage_error("cannot read --token-file '%s': %s",
				   o->token_file, why);
	return 0;
}

/* The shared secret: --token, --token-file, the environment, Slurm. */
static int peer_token(struct options *o)
{
	const char *env = getenv("GDRCHECK_PEER_TOKEN");
	const char *job = getenv("SLURM_JOB_ID");

	if (o->token && o->token_file)
		return usage_error("--token and --token-file: give one");
	if (o->token) {
		o->token_source = "--token";
	} else if (o->token_file) {
		int ret = read_token_file(o);

		if (ret)
			return ret;
		o->token = o->token_buf;
		o->token_source = "--token-file";
	} else if (env && *env) {
		o->token = env;
		o->token_source = "GDRCHECK_PEER_TOKEN";
	} else if (job && *job) {
		snprintf(o->token_buf, sizeof(o->token_buf), "slurm-job-%s",
			 job);
		o->token = o->token_buf;
		o->token_source = "SLURM_JOB_ID";
	}
	if (!o->token || !*o->token)
		return usage_error("two-node mode needs a shared token: "
				   "--token-file FILE, GDRCHECK_PEER_TOKEN, "
				   "or both sides as tasks of one Slurm job");
	return 0;
}

static int peer_options(struct options *o)
{
	if (!o->listen && !o->peer) {
		if (o->token || o->token_file || o->pairs)
			return usage_error("--token, --token-file and --pairs "
					   "go with --listen or --peer");
		return 0;
	}
	if (o->listen && o->peer)
		return usage_error("--listen and --peer: one side listens, the "
				   "other connects");
	if (o->sysroot && !o->libcuda)
		return usage_error("two-node mode tests this node's hardware: "
				   "no --sysroot (or name --libcuda too)");
	if (!o->deadline_given)
		o->deadline = DEFAULT_PEER_DEADLINE;
	return peer_token(o);
}

static int options_finish(struct parsing *p, int argc, char **argv)
{
	const char *epoch = getenv("SOURCE_DATE_EPOCH");
	struct options *o = p->o;
	time_t when;

	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (epoch && *epoch && parse_epoch(epoch, &when))
		return usage_error("invalid SOURCE_DATE_EPOCH '%.64s' (whole "
				   "seconds since 1970, 0 to %lld)", epoch,
				   EPOCH_MAX);
	if (o->sysroot && !o->sysroot[0])
		return usage_error("empty --sysroot");
	/* One would overwrite the other: the archive was silently lost. */
	if (o->output && o->capture && same_output(o->output, o->capture))
		return usage_error("--output '%s' and --capture '%s' name the "
				   "same file", o->output, o->capture);
	o->gates = (p->only_given ? p->only : GATE_ALL) & ~p->skip;
	return peer_options(o);
}

static int parse_options(int argc, char **argv, struct options *o)
{
	struct option lo[NOPTS + 1];
	char shorts[2 * NOPTS + 2];
	struct parsing p = { .o = o };
	int c, li, ret;

	options_defaults(o);
	getopt_tables(lo, shorts);
	opterr = 0;
	while ((li = -1, c = getopt_long(argc, argv, shorts, lo, &li)) != -1) {
		const struct opt_desc *d = opt_row(c);

		if (!d)		/* '?' unknown, ':' argument missing */
			return bad_option(c, argv[optind - 1]);
		/* An empty value is never meant (dlopen("") loads ourselves). */
		if (optarg && !optarg[0] && d->has_arg != optional_argument) {
			char name[40] = { '-', (char)c, '\0' };

			if (li >= 0)
				snprintf(name, sizeof(name), "--%s", d->name);
			return usage_error("option '%s' needs a non-empty value",
					   name);
		}
		ret = d->set(&p, d, optarg);
		if (ret)
			return ret;
	}
	return options_finish(&p, argc, argv);
}

static void on_signal(int sig)
{
	(void)sig;
	vendor_interrupted = 1;
}

/* SIGINT/SIGTERM stop the vendor stages; a partial report still comes. */
static void catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: the worker wait must wake up. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/*
 * `gdrcheck | head -1`: a reader that stops reading is not a failure of
 * the check. SIGPIPE is ignored from the report's writing on (the vendor
 * workers have ended by then, and never inherit it), so a write to a
 * closed pipe fails with EPIPE and the run ends quietly with the verdict's
 * exit status instead of dying by the signal (141).
 */
static void quiet_sigpipe(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPIPE, &sa, NULL);
}

static void fill_meta(struct report *r, struct sysroot *sr,
		      const struct options *o)
{
	struct report_meta *m = &r->meta;
	const char *epoch = getenv("SOURCE_DATE_EPOCH");
	time_t now = time(NULL), when;
	char raw[128];
	struct tm tm;

	snprintf(m->tool_version, sizeof(m->tool_version), "%s",
		 GDRCHECK_VERSION);
	if (sysroot_read_line(sr, "/proc/sys/kernel/hostname", m->hostname,
			      sizeof(m->hostname)))
		snprintf(m->hostname, sizeof(m->hostname), "unknown");
	if (sysroot_read_line(sr, "/proc/sys/kernel/osrelease", m->kernel,
			      sizeof(m->kernel)))
		snprintf(m->kernel, sizeof(m->kernel), "unknown");
	report_clean(m->sysroot, sizeof(m->sysroot), sysroot_get(sr));
	/* The hostname and release are the system's bytes: the model's rule. */
	snprintf(raw, sizeof(raw), "%s", m->hostname);
	report_clean(m->hostname, sizeof(m->hostname), raw);
	snprintf(raw, sizeof(raw), "%s", m->kernel);
	report_clean(m->kernel, sizeof(m->kernel), raw);
	/*
	 * Reproducible reports (tests, archives) honour SOURCE_DATE_EPOCH,
	 * which parse_options refused unless in range.
	 */
	if (epoch && *epoch && parse_epoch(epoch, &when) == 0)
		now = when;
	m->generated_epoch = (long long)now;
	if (!gmtime_r(&now, &tm) || tm.tm_year > 9999 - 1900 ||
	    !strftime(m->generated_at, sizeof(m->generated_at),
		      "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(m->generated_at, sizeof(m->generated_at),
			 "1970-01-01T00:00:00Z");
	/* auto is resolved after the gates (policy_resolve). */
	m->require = require_name(o->require);
	m->require_auto = o->require == REQUIRE_AUTO;
}

/*
 * The text report's width: GDRCHECK_WIDTH (40 to 1000 columns), else the
 * terminal's when the report goes to one, else 80.
 */
static int text_width(FILE *out)
{
	const char *env = getenv("GDRCHECK_WIDTH");
	struct winsize ws;
	char *end;
	long w;

	if (env && *env) {
		errno = 0;
		w = strtol(env, &end, 10);
		if (!errno && !*end && w >= 40 && w <= 1000)
			return (int)w;
	}
	if (isatty(fileno(out)) && !ioctl(fileno(out), TIOCGWINSZ, &ws) &&
	    ws.ws_col >= 40)
		return ws.ws_col;
	return 80;
}

static int render(const struct report *r, const struct options *o, FILE *out)
{
	struct render_opts ro = { .verbose = o->verbose, .width = text_width(out) };

	if (o->color == 1)
		ro.color = true;
	else if (o->color == -1)
		ro.color = !o->output && isatty(STDOUT_FILENO) &&
			   !getenv("NO_COLOR");
	if (o->quiet)
		return render_quiet(r, out);
	if (o->format == FMT_JSON)
		return render_json(r, out);
	if (o->format == FMT_JUNIT)
		return render_junit(r, out);
	if (o->format == FMT_PROMETHEUS)
		return render_prometheus(r, out);
	return render_text(r, &ro, out);
}

/*
 * The renderers stream the report and allocate nothing once they have
 * started writing, so the only way to half a report is a failing write.
 * A --output file is written as access/outfile.h says: a new or regular
 * file under a fresh temporary name, then renamed into place (readers such
 * as node_exporter's textfile collector never see half a report); anything
 * else (/dev/null, a FIFO, a symlink) directly, never replaced.
 */
static int write_report(const struct report *r, const struct options *o)
{
	struct outfile of;
	FILE *out;
	int ret;

	if (!o->output) {
		ret = render(r, o, stdout) || fflush(stdout) ? -1 : 0;
		if (ret && errno == EPIPE)
			return 0;	/* `gdrcheck | head`: see quiet_sigpipe */
		if (ret)
			fprintf(stderr, "gdrcheck: writing the report failed: %s\n",
				strerror(errno));
		return ret;
	}
	ret = outfile_open(&of, o->output);
	if (ret) {
		fprintf(stderr, "gdrcheck: cannot write %s: %s\n", o->output,
			strerror(-ret));
		return -1;
	}
	out = fdopen(of.fd, "w");
	if (!out) {
		ret = -errno;
		close(of.fd);
		outfile_finish(&of, false);
		fprintf(stderr, "gdrcheck: cannot write %s: %s\n", o->output,
			strerror(-ret));
		return -1;
	}
	errno = 0;
	ret = render(r, o, out) ? -(errno ? errno : EIO) : 0;
	if (fclose(out) && !ret)
		ret = -(errno ? errno : EIO);
	if (!ret)
		ret = outfile_finish(&of, true);
	else
		outfile_finish(&of, false);
	if (ret) {
		fprintf(stderr, "gdrcheck: writing %s failed: %s\n", o->output,
			strerror(-ret));
		return -1;
	}
	return 0;
}

/*
 * The vendor stages to run. A --sysroot replay analyses a captured node:
 * this host's libcuda and libibverbs would answer for this host, so only a
 * library named (--libcuda, --libibverbs, GDRCHECK_LIB*) is loaded. And a
 * vendor library is called only for the layers that need it.
 */
static void vendor_setup(struct vendor_options *vo, const struct options *o,
			 struct sysroot *sr, double t0)
{
	memset(vo, 0, sizeof(*vo));
	vo->libcuda = o->libcuda;
	vo->libibverbs = o->libibverbs;
	vo->skip_cuda = o->sysroot && !o->libcuda;
	vo->skip_verbs = o->sysroot && !o->libibverbs;
	vo->libnvml = o->libnvml;
	vo->skip_nvml = o->sysroot && !o->libnvml;
	vo->libmlx5 = o->libmlx5;
	vo->skip_mlx5 = o->sysroot && !o->libmlx5;
	/*
	 * NCCL_IB_DATA_DIRECT=0 from the environment: NCCL registers through
	 * ibv_reg_dmabuf_mr, so the registration stage does too (conf files
	 * and the version are the NCCL model's: data.nccl calls a proof made
	 * the other way unproven).
	 */
	{
		int64_t dd;

		if (nccl_parse_param(getenv("NCCL_IB_DATA_DIRECT"), 1, &dd))
			vo->no_data_direct = dd <= 0;
	}
	vo->stage_timeout = o->timeout;
	vo->run_started_ms = t0;
	vo->run_deadline_ms = t0 + o->deadline * 1e3;
	vo->no_alloc = o->no_alloc;
	gates_vendor_skips(o, vo);	/* the selected gates' stages */
	vo->no_datapath = o->no_datapath;
	vo->every_pair = o->every_pair;
	vo->reg_bytes = o->reg_bytes;
	vo->sysroot = sr;
}

/*
 * A --sysroot replay of a capture that holds the node's vendor answers
 * (access/vendor_json.h) decides from them: no local library is loaded
 * unless one is named. True when *vf was filled that way; a file that
 * cannot be replayed leaves its reason in err ("" when there is none).
 */
static bool replay_vendor_facts(const struct options *o, struct sysroot *sr,
				struct vendor_facts *vf, char *err, size_t errlen)
{
	err[0] = '\0';
	if (!o->sysroot || o->libcuda || o->libibverbs)
		return false;
	return vendor_json_replay(sr, vf, err, errlen) > 0;
}

/* The vendor answers: replayed from a capture, or asked of the libraries. */
static void vendor_answers(const struct vendor_options *vo,
			   const struct options *o, struct sysroot *sr,
			   struct vendor_facts *vf)
{
	char replay_err[VF_TEXT];

	if (!replay_vendor_facts(o, sr, vf, replay_err, sizeof(replay_err))) {
		vendor_collect(vo, vf);
		snprintf(vf->replay_error, sizeof(vf->replay_error), "%s",
			 replay_err);
	}
	vendor_json_record(sr, vf);	/* --capture: the answers, for a replay */
}

/* The library gates of a replay say where their answers came from. */
static void replay_evidence(struct report *r, const struct vendor_facts *vf)
{
	if (!vf->replayed_from[0])
		return;
	for (size_t i = 0; i < r->nres; i++) {
		struct result *res = &r->res[i];

		if (res->gate == &gate_descs[G_GPU_LIBCUDA] ||
		    res->gate == &gate_descs[G_GPU_NVML] ||
		    res->gate == &gate_descs[G_NIC_LIBIBVERBS])
			ev_str(res, "replayed_from", "%s", vf->replayed_from);
	}
}

/* The report's account of each worker stage that ran. */
static void record_workers(struct report *rep, const struct vendor_facts *vf)
{
	static const char *const states[] = {
		[STAGE_NOT_RUN] = NULL, [STAGE_RUNNING] = "running",
		[STAGE_DONE] = "done", [STAGE_TIMEOUT] = "timeout",
		[STAGE_CRASHED] = "crashed", [STAGE_FAILED] = "failed",
		[STAGE_INTERRUPTED] = "interrupted",
		[STAGE_SKIPPED_DEP] = "skipped",
		[STAGE_DEADLINE] = "deadline",
	};

	for (int s = 0; s < WSTAGE_COUNT && s < REPORT_MAX_WORKERS; s++) {
		const struct stage_status *st = &vf->stage[s];
		struct worker_meta *w = &rep->meta.workers[rep->meta.nworkers];

		if (!states[st->state])
			continue;
		w->stage = stage_name((enum worker_stage)s);
		w->state = states[st->state];
		w->pid = st->pid;
		w->seconds = st->seconds;
		w->signal = st->signal;
		snprintf(w->call, sizeof(w->call), "%s", st->call);
		rep->meta.nworkers++;
	}
}

/* Write --capture's archive; a failure makes the run undecided. */
static void finish_capture(struct report *rep, const struct options *o)
{
	int ret = capture_write(o->capture);

	snprintf(rep->meta.capture, sizeof(rep->meta.capture), "%s",
		 o->capture);
	if (ret) {
		fprintf(stderr, "gdrcheck: cannot write --capture %s: %s\n",
			o->capture, strerror(-ret));
		rep->meta.capture[0] = '\0';
		rep->exit_code = EXIT_UNDECIDED;
	}
}

/*
 * The PCI tree needs no vendor answer: it is read while the vendor workers
 * wait on the driver (vendor_options.meanwhile), or before the gates when
 * no worker ran. Once per run.
 */
static void read_pci_tree(void *arg)
{
	struct gdr_ctx *ctx = arg;
	struct pci_source ps = { .libpci = ctx->opt->libpci,
				 .dump = ctx->opt->pci_dump };

	if (ctx->pci_read)
		return;
	ctx->pci_read = true;
	ctx->pci_open_err = pci_open(&ctx->pci, &ps, ctx->sr);
	pcitree_build(ctx);
}

/* The gates over what the vendor stages learnt, folded into a verdict. */
static void run_gates(struct gdr_ctx *ctx, struct report *rep,
		      const struct options *opt)
{
	enum require_policy req;

	read_pci_tree(ctx);
	inventory_build(ctx);
	gates_run(ctx);
	stage_output_evidence(ctx);
	replay_evidence(rep, ctx->vf);
	fixes_in_context(rep);
	req = policy_resolve(rep, opt->require);
	verdict_fold(rep, req);
	policy_apply(rep, opt);
	policy_overall(rep, req, opt->warn_fails);
}

/* Two-node mode: the other node, the rails against it, the wire's verdict. */
static void run_peer(struct gdr_ctx *ctx, struct report *rep,
		     const struct options *opt, const struct vendor_options *vo)
{
	if (!opt->listen && !opt->peer)
		return;
	peer_session_run(ctx, vo);
	gates_run_peer(ctx);
	policy_wire(rep, opt->warn_fails);
}

int main(int argc, char **argv)
{
	struct vendor_options vo;
	struct vendor_facts *vf;
	struct ksym_prefetch *ksym = NULL;
	struct options opt;
	struct report rep;
	struct gdr_ctx ctx;
	struct sysroot *sr;
	double t0 = now_ms();
	int ret;

	ret = parse_options(argc, argv, &opt);
	if (ret)
		return ret;
	sr = sysroot_new(opt.sysroot);
	if (sr && opt.sysroot && !sysroot_is_dir(sr, "/") &&
	    (errno == EMFILE || errno == ENFILE)) {
		/* Starved of descriptors: the run cannot decide, say so. */
		fprintf(stderr, "gdrcheck: cannot open --sysroot '%s': %s\n",
			opt.sysroot, strerror(errno));
		sysroot_free(sr);
		return EXIT_UNDECIDED;
	}
	if (sr && opt.sysroot && !sysroot_is_dir(sr, "/")) {
		sysroot_free(sr);
		return usage_error("--sysroot '%s' is not a directory",
				   opt.sysroot);
	}
	if (sr && opt.list_gates) {
		sysroot_free(sr);
		gates_list(stdout);
		return 0;
	}
	if (sr && opt.list_codes) {
		sysroot_free(sr);
		return catalog_print(stdout, opt.format == FMT_JSON) ?
		       EXIT_UNDECIDED : 0;
	}
	vf = calloc(1, sizeof(*vf));
	if (!sr || !vf) {
		fputs("gdrcheck: out of memory\n", stderr);
		sysroot_free(sr);
		free(vf);
		return EXIT_UNDECIDED;
	}

	catch_signals();
	if (opt.capture)
		capture_enable(sr);
	memset(&ctx, 0, sizeof(ctx));
	ctx.opt = &opt;
	ctx.vf = vf;
	ctx.rep = &rep;
	ctx.sr = sr;
	vendor_setup(&vo, &opt, sr, t0);
	vo.meanwhile = read_pci_tree;
	vo.meanwhile_arg = &ctx;
	/* Host work that needs no vendor answer runs while the worker waits
	 * on the driver (not for a capture, which holds its answers). */
	if (gate_selected(&opt, &gate_descs[G_MECH_PEERMEM_API]) &&
	    !(opt.sysroot && sysroot_is_dir(sr, "/gdrcheck")))
		ksym = ksym_prefetch_start(sr);
	vo.spare_child = ksym_prefetch_pid(ksym);
	vendor_answers(&vo, &opt, sr, vf);
	vo.meanwhile = NULL;	/* once: not again for two-node mode's stage */
	ksym_prefetch_join(ksym);

	report_init(&rep);
	fill_meta(&rep, sr, &opt);
	record_workers(&rep, vf);
	ctx.ksym = ksym;
	run_gates(&ctx, &rep, &opt);
	versions_collect(&ctx);
	run_peer(&ctx, &rep, &opt, &vo);
	rep.meta.total_ms = now_ms() - t0;
	if (vendor_interrupted) {
		rep.meta.interrupted = true;
		rep.exit_code = EXIT_UNDECIDED;
	}
	if (opt.capture)
		finish_capture(&rep, &opt);
	if (opt.redact)
		report_redact(&rep);
	/* Only the text and JSON reports show folded results. */
	if (!opt.quiet && (opt.format == FMT_TEXT || opt.format == FMT_JSON))
		report_fold(&rep);

	quiet_sigpipe();
	ret = write_report(&rep, &opt) ? EXIT_UNDECIDED : rep.exit_code;
	vendor_reap_finished();
	inventory_free(&ctx.inv);
	pcitree_free(&ctx);
	pci_close(ctx.pci);
	probe_caches_free(&ctx);
	peer_session_free(&ctx);
	sysroot_free(sr);
	report_free(&rep);
	ksym_prefetch_free(ksym);
	vendor_facts_free(vf);
	free(vf);
	return ret;
}
