// SPDX-License-Identifier: MIT
/*
 * gdrcheck - can a NIC on this node DMA straight into GPU memory, by which
 * mechanism, and if not, which gate stops it?
 *
 * Options, the gate chain run, the report, the exit status. The work lives
 * in probes/ (the gates), access/ (files and vendor libraries) and report/.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "access/capture.h"
#include "access/outfile.h"
#include "access/pci.h"
#include "access/symtab.h"
#include "access/sysroot.h"
#include "access/vendor.h"
#include "engine/gates.h"
#include "probes/probes.h"

#define EXIT_USAGE 2
#define EXIT_UNDECIDED 3
#define DEFAULT_TIMEOUT 30.0
/* Slurm's HealthCheckProgram gets 60 s; leave a margin. */
#define DEFAULT_DEADLINE 45.0

enum {
	OPT_SYSROOT = 256,
	OPT_LIBCUDA,
	OPT_LIBIBVERBS,
	OPT_COLOR,
	OPT_NO_COLOR,
	OPT_NO_ALLOC,
	OPT_LIBPCI,
	OPT_PCI_DUMP,
	OPT_NO_DATAPATH,
	OPT_REG_SIZE,
	OPT_FORMAT,
	OPT_ONLY,
	OPT_SKIP,
	OPT_REDACT,
	OPT_EVERY_GPU,
	OPT_MAX_DISTANCE,
	OPT_WARN_FAILS,
	OPT_CAPTURE,
	OPT_DEADLINE,
	OPT_LIBNVML,
};

static const struct option long_opts[] = {
	{ "json", no_argument, NULL, 'j' },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "quiet", no_argument, NULL, 'q' },
	{ "redact", no_argument, NULL, OPT_REDACT },
	{ "every-gpu", no_argument, NULL, OPT_EVERY_GPU },
	{ "max-distance", required_argument, NULL, OPT_MAX_DISTANCE },
	{ "warn-fails", no_argument, NULL, OPT_WARN_FAILS },
	{ "capture", required_argument, NULL, OPT_CAPTURE },
	{ "only", required_argument, NULL, OPT_ONLY },
	{ "skip", required_argument, NULL, OPT_SKIP },
	{ "output", required_argument, NULL, 'o' },
	{ "require", required_argument, NULL, 'r' },
	{ "sysroot", required_argument, NULL, OPT_SYSROOT },
	{ "libcuda", required_argument, NULL, OPT_LIBCUDA },
	{ "libibverbs", required_argument, NULL, OPT_LIBIBVERBS },
	{ "libnvml", required_argument, NULL, OPT_LIBNVML },
	{ "libpci", required_argument, NULL, OPT_LIBPCI },
	{ "pci-dump", required_argument, NULL, OPT_PCI_DUMP },
	{ "timeout", required_argument, NULL, 't' },
	{ "deadline", required_argument, NULL, OPT_DEADLINE },
	{ "no-alloc", no_argument, NULL, OPT_NO_ALLOC },
	{ "no-datapath", no_argument, NULL, OPT_NO_DATAPATH },
	{ "reg-size", required_argument, NULL, OPT_REG_SIZE },
	{ "color", optional_argument, NULL, OPT_COLOR },
	{ "no-color", no_argument, NULL, OPT_NO_COLOR },
	{ "verbose", no_argument, NULL, 'v' },
	{ "list-gates", no_argument, NULL, 'L' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

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
	      "      --redact             mask the hostname, GIDs, GUIDs and MACs (for\n"
	      "                           bug tickets)\n"
	      "      --only LIST          run only these gates or layers (comma list)\n"
	      "      --skip LIST          do not run these gates or layers\n"
	      "  -o, --output FILE        write the report to FILE\n"
	      "  -r, --require POLICY     any (default), dmabuf or peermem: which path\n"
	      "                           must be READY for exit status 0\n"
	      "      --every-gpu          policy: every GPU must be READY with one of its\n"
	      "                           nearest NICs\n"
	      "      --max-distance CLASS policy: only GPU-NIC pairs at most CLASS apart\n"
	      "                           count (PIX, PXB, PHB, NODE, SYS)\n"
	      "      --warn-fails         policy: any WARN result fails (exit 1)\n"
	      "      --capture FILE       also write the /sys, /proc and /dev files the\n"
	      "                           report read to FILE (.tar.gz, scrubbed), for\n"
	      "                           --sysroot replays elsewhere\n"
	      "      --sysroot DIR        read /sys, /proc and /dev below DIR\n"
	      "      --libcuda PATH       libcuda to load (default libcuda.so.1,\n"
	      "                           or $GDRCHECK_LIBCUDA)\n"
	      "      --libibverbs PATH    libibverbs to load (default libibverbs.so.1,\n"
	      "                           or $GDRCHECK_LIBIBVERBS)\n"
	      "      --libnvml PATH       NVML to load (default libnvidia-ml.so.1,\n"
	      "                           or $GDRCHECK_LIBNVML)\n"
	      "      --libpci PATH        libpci to load (default libpci.so.3,\n"
	      "                           or $GDRCHECK_LIBPCI)\n"
	      "      --pci-dump FILE      read PCI config space from an `lspci -xxxx`\n"
	      "                           capture instead of sysfs\n"
	      "  -t, --timeout SECONDS    limit for each vendor-library stage (default 30)\n"
	      "      --deadline SECONDS   limit for the whole run, every stage included\n"
	      "                           (default 45)\n"
	      "      --no-alloc           allocate no GPU memory (nodes running jobs):\n"
	      "                           no registration, no transfer\n"
	      "      --no-datapath        register, but run no loopback transfer\n"
	      "      --reg-size BYTES     GPU buffer per GPU for the registrations and\n"
	      "                           transfers (K/M suffix; default 2M, 4K to 1G)\n"
	      "      --color[=WHEN]       colour: auto (default), always, never\n"
	      "      --no-color           same as --color=never\n"
	      "  -v, --verbose            show the evidence under each result\n"
	      "  -L, --list-gates         list the gates in chain order and exit\n"
	      "  -h, --help               show this help and exit\n"
	      "  -V, --version            show the version and exit\n"
	      "\n"
	      "Exit status: 0 READY, 1 BLOCKED, 2 usage error, 3 could not decide.\n",
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
static int bad_option(int c, const char *word)
{
	/* glibc's optopt is a plain char: 0xff comes as -1. */
	int opt = optopt < 0 ? optopt & 0xff : optopt;
	char name[64];

	if (!strncmp(word, "--", 2))
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

static int parse_options(int argc, char **argv, struct options *o)
{
	const char *epoch = getenv("SOURCE_DATE_EPOCH");
	time_t when;
	int c, li;

	memset(o, 0, sizeof(*o));
	o->color = -1;
	o->max_distance = -1;
	o->timeout = DEFAULT_TIMEOUT;
	o->deadline = DEFAULT_DEADLINE;
	o->libcuda = getenv("GDRCHECK_LIBCUDA");
	o->libibverbs = getenv("GDRCHECK_LIBIBVERBS");
	o->libnvml = getenv("GDRCHECK_LIBNVML");
	o->libpci = getenv("GDRCHECK_LIBPCI");
	opterr = 0;
	while ((li = -1, c = getopt_long(argc, argv, ":jqo:r:t:vLhV",
					 long_opts, &li)) != -1) {
		/* An empty value is never meant (dlopen("") loads ourselves). */
		if (optarg && !optarg[0] && c != OPT_COLOR) {
			char name[40] = { '-', (char)c, '\0' };

			if (li >= 0)
				snprintf(name, sizeof(name), "--%s",
					 long_opts[li].name);
			return usage_error("option '%s' needs a non-empty value",
					   name);
		}
		switch (c) {
		case 'j':
			o->format = FMT_JSON;
			break;
		case 'q':
			o->quiet = true;
			break;
		case OPT_REDACT:
			o->redact = true;
			break;
		case OPT_CAPTURE:
			o->capture = optarg;
			break;
		case OPT_EVERY_GPU:
			o->every_gpu = true;
			break;
		case OPT_WARN_FAILS:
			o->warn_fails = true;
			break;
		case OPT_MAX_DISTANCE:
			o->max_distance = -1;
			for (int k = TOPO_PIX; k <= TOPO_SYS; k++)
				if (!strcmp(optarg, topo_class_name((enum topo_class)k)))
					o->max_distance = k;
			if (o->max_distance < 0)
				return usage_error("invalid --max-distance '%s' (PIX, "
						   "PXB, PHB, NODE or SYS)", optarg);
			break;
		case OPT_FORMAT:
			if (!strcmp(optarg, "text"))
				o->format = FMT_TEXT;
			else if (!strcmp(optarg, "json"))
				o->format = FMT_JSON;
			else if (!strcmp(optarg, "junit"))
				o->format = FMT_JUNIT;
			else if (!strcmp(optarg, "prometheus"))
				o->format = FMT_PROMETHEUS;
			else
				return usage_error("invalid --format '%s' (text, "
						   "json, junit or prometheus)",
						   optarg);
			break;
		case OPT_ONLY:
		case OPT_SKIP: {
			const char *bad = gates_check_list(optarg);

			if (!bad && !optarg[0])
				bad = "";

			if (bad)
				return usage_error("unknown gate or layer '%s' in "
						   "--%s (see --list-gates)", bad,
						   c == OPT_ONLY ? "only" : "skip");
			if (c == OPT_ONLY)
				o->only = optarg;
			else
				o->skip = optarg;
			break;
		}
		case 'o':
			o->output = optarg;
			break;
		case 'r':
			if (!strcmp(optarg, "any"))
				o->require = REQUIRE_ANY;
			else if (!strcmp(optarg, "dmabuf"))
				o->require = REQUIRE_DMABUF;
			else if (!strcmp(optarg, "peermem"))
				o->require = REQUIRE_PEERMEM;
			else
				return usage_error("invalid --require '%s' "
						   "(any, dmabuf or peermem)",
						   optarg);
			break;
		case 't': {
			char *end;

			errno = 0;
			o->timeout = strtod(optarg, &end);
			/* Plain decimal seconds: no hex, exponent or "inf". */
			if (errno || end == optarg || *end ||
			    optarg[strspn(optarg, "0123456789.")] ||
			    !(o->timeout >= 0.1 && o->timeout <= 3600))
				return usage_error("invalid --timeout '%s' "
						   "(seconds, 0.1 to 3600)",
						   optarg);
			break;
		}
		case OPT_DEADLINE: {
			char *end;

			errno = 0;
			o->deadline = strtod(optarg, &end);
			if (errno || end == optarg || *end ||
			    !(o->deadline >= 0.1 && o->deadline <= 86400))
				return usage_error("invalid --deadline '%s' "
						   "(seconds, 0.1 to 86400)",
						   optarg);
			break;
		}
		case OPT_SYSROOT:
			o->sysroot = optarg;
			break;
		case OPT_LIBCUDA:
			o->libcuda = optarg;
			break;
		case OPT_LIBIBVERBS:
			o->libibverbs = optarg;
			break;
		case OPT_LIBNVML:
			o->libnvml = optarg;
			break;
		case OPT_LIBPCI:
			o->libpci = optarg;
			break;
		case OPT_PCI_DUMP: {
			struct stat st;

			/* libpci reads it blocking: a FIFO or device would hang. */
			if (stat(optarg, &st) || access(optarg, R_OK))
				return usage_error("cannot read --pci-dump '%s': %s",
						   optarg, strerror(errno));
			if (!S_ISREG(st.st_mode))
				return usage_error("--pci-dump '%s' is not a regular "
						   "file", optarg);
			o->pci_dump = optarg;
			break;
		}
		case OPT_NO_ALLOC:
			o->no_alloc = true;
			break;
		case OPT_NO_DATAPATH:
			o->no_datapath = true;
			break;
		case OPT_REG_SIZE: {
			unsigned long long v;
			char *end;

			unsigned int shift = 0;

			errno = 0;
			v = strtoull(optarg, &end, 10);
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
			if (errno || end == optarg || *end || optarg[0] < '0' ||
			    optarg[0] > '9' ||
			    v < 4096 || v > (1ull << 30) || v % 4096)
				return usage_error("invalid --reg-size '%s' (4K to "
						   "1G, a multiple of 4K)", optarg);
			o->reg_bytes = v;
			break;
		}
		case OPT_COLOR:
			if (!optarg || !strcmp(optarg, "auto"))
				o->color = -1;
			else if (!strcmp(optarg, "always"))
				o->color = 1;
			else if (!strcmp(optarg, "never"))
				o->color = 0;
			else
				return usage_error("invalid --color '%s' "
						   "(auto, always or never)",
						   optarg);
			break;
		case OPT_NO_COLOR:
			o->color = 0;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'L':
			o->list_gates = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("gdrcheck %s\n", GDRCHECK_VERSION);
			exit(0);
		case ':':
		default:
			return bad_option(c, argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (epoch && *epoch && parse_epoch(epoch, &when))
		return usage_error("invalid SOURCE_DATE_EPOCH '%.64s' (whole "
				   "seconds since 1970, 0 to %lld)", epoch,
				   EPOCH_MAX);
	if (o->sysroot && !o->sysroot[0])
		return usage_error("empty --sysroot");
	if (o->sysroot) {
		sysroot_set(o->sysroot);
		if (!sysroot_is_dir("/"))
			return usage_error("--sysroot '%s' is not a directory",
					   o->sysroot);
	}
	return 0;
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

static void fill_meta(struct report *r, const struct options *o)
{
	struct report_meta *m = &r->meta;
	const char *epoch = getenv("SOURCE_DATE_EPOCH");
	time_t now = time(NULL), when;
	char raw[128];
	struct tm tm;

	snprintf(m->tool_version, sizeof(m->tool_version), "%s",
		 GDRCHECK_VERSION);
	if (sysroot_read_line("/proc/sys/kernel/hostname", m->hostname,
			      sizeof(m->hostname)))
		snprintf(m->hostname, sizeof(m->hostname), "unknown");
	if (sysroot_read_line("/proc/sys/kernel/osrelease", m->kernel,
			      sizeof(m->kernel)))
		snprintf(m->kernel, sizeof(m->kernel), "unknown");
	report_clean(m->sysroot, sizeof(m->sysroot), sysroot_get());
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
	if (!gmtime_r(&now, &tm) || tm.tm_year > 9999 - 1900 ||
	    !strftime(m->generated_at, sizeof(m->generated_at),
		      "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(m->generated_at, sizeof(m->generated_at),
			 "1970-01-01T00:00:00Z");
	m->require = o->require == REQUIRE_DMABUF ? "dmabuf" :
		     o->require == REQUIRE_PEERMEM ? "peermem" : "any";
}

static int render(const struct report *r, const struct options *o, FILE *out)
{
	struct render_opts ro = { .verbose = o->verbose };

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

int main(int argc, char **argv)
{
	struct vendor_options vo = { 0 };
	struct pci_source ps = { 0 };
	struct vendor_facts *vf;
	struct options opt;
	struct report rep;
	struct gdr_ctx ctx;
	double t0 = now_ms();
	int ret;

	ret = parse_options(argc, argv, &opt);
	if (ret)
		return ret;
	if (opt.list_gates) {
		gates_list(stdout);
		return 0;
	}

	catch_signals();
	if (opt.capture)
		capture_enable();
	vf = calloc(1, sizeof(*vf));
	if (!vf) {
		fputs("gdrcheck: out of memory\n", stderr);
		return EXIT_UNDECIDED;
	}
	vo.libcuda = opt.libcuda;
	vo.libibverbs = opt.libibverbs;
	vo.libnvml = opt.libnvml;
	/*
	 * A --sysroot replay analyses a captured node: this host's libcuda,
	 * libibverbs and NVML would answer for this host. Only a library
	 * named (--libcuda, --libibverbs, --libnvml, GDRCHECK_LIB*) is loaded.
	 */
	vo.skip_cuda = opt.sysroot && !opt.libcuda;
	vo.skip_verbs = opt.sysroot && !opt.libibverbs;
	vo.skip_nvml = opt.sysroot && !opt.libnvml;
	vo.stage_timeout = opt.timeout;
	vo.run_started_ms = t0;
	vo.run_deadline_ms = t0 + opt.deadline * 1e3;
	vo.no_alloc = opt.no_alloc;
	/* Call into a vendor library only for the layers that need it. */
	vo.skip_cuda |= !layers_selected(&opt, 1u << L_GPU | 1u << L_MECHANISM |
					1u << L_TOPOLOGY | 1u << L_PLATFORM |
					1u << L_REGISTRATION | 1u << L_DATAPATH);
	vo.skip_export = !layers_selected(&opt, 1u << L_MECHANISM);
	vo.skip_verbs |= !layers_selected(&opt, 1u << L_NIC | 1u << L_MECHANISM |
					 1u << L_REGISTRATION | 1u << L_DATAPATH);
	/* NVML: gpu.nvml, and the NVLink facts of the topology layer. */
	vo.skip_nvml |= !layers_selected(&opt, 1u << L_GPU | 1u << L_TOPOLOGY);
	vo.skip_registration = !layers_selected(&opt, 1u << L_REGISTRATION |
						1u << L_DATAPATH);
	vo.no_datapath = opt.no_datapath;
	vo.reg_bytes = opt.reg_bytes;
	vendor_collect(&vo, vf);

	report_init(&rep);
	fill_meta(&rep, &opt);
	for (int s = 0; s < WSTAGE_COUNT && s < REPORT_MAX_WORKERS; s++) {
		static const char *const states[] = {
			[STAGE_NOT_RUN] = NULL, [STAGE_RUNNING] = "running",
			[STAGE_DONE] = "done", [STAGE_TIMEOUT] = "timeout",
			[STAGE_CRASHED] = "crashed", [STAGE_FAILED] = "failed",
			[STAGE_INTERRUPTED] = "interrupted",
			[STAGE_SKIPPED_DEP] = "skipped",
			[STAGE_DEADLINE] = "deadline",
		};
		const struct stage_status *st = &vf->stage[s];
		struct worker_meta *w = &rep.meta.workers[rep.meta.nworkers];

		if (!states[st->state])
			continue;
		w->stage = stage_name((enum worker_stage)s);
		w->state = states[st->state];
		w->pid = st->pid;
		w->seconds = st->seconds;
		w->signal = st->signal;
		snprintf(w->call, sizeof(w->call), "%s", st->call);
		rep.meta.nworkers++;
	}
	memset(&ctx, 0, sizeof(ctx));
	ctx.opt = &opt;
	ctx.vf = vf;
	ctx.rep = &rep;
	ps.libpci = opt.libpci;
	ps.dump = opt.pci_dump;
	ctx.pci_open_err = pci_open(&ps);
	pcitree_build(&ctx);
	inventory_build(&ctx);
	gates_run(&ctx);
	stage_output_evidence(&ctx);
	verdict_fold(&rep, opt.require);
	policy_apply(&rep, &opt);
	policy_overall(&rep, opt.require, opt.warn_fails);
	rep.meta.total_ms = now_ms() - t0;
	if (vendor_interrupted) {
		rep.meta.interrupted = true;
		rep.exit_code = EXIT_UNDECIDED;
	}
	if (opt.capture) {
		int cret = capture_write(opt.capture);

		snprintf(rep.meta.capture, sizeof(rep.meta.capture), "%s",
			 opt.capture);
		if (cret) {
			fprintf(stderr, "gdrcheck: cannot write --capture %s: %s\n",
				opt.capture, strerror(-cret));
			rep.meta.capture[0] = '\0';
			rep.exit_code = EXIT_UNDECIDED;
		}
	}
	if (opt.redact)
		report_redact(&rep);

	quiet_sigpipe();
	ret = write_report(&rep, &opt) ? EXIT_UNDECIDED : rep.exit_code;
	inventory_free(&ctx.inv);
	pcitree_free(&ctx);
	pci_close();
	report_free(&rep);
	free(vf);
	return ret;
}
