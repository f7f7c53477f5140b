// SPDX-License-Identifier: MIT
/* Scenario parser, fault injection and resource ledger for the doubles. */
#include "tests/doubles/fake_scenario.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct kv {
	char *key;
	char *val;
};

static struct kv *kvs;
static int nkv;
static const char *scenario_path = "(none)";

/* A broken test setup must be loud, never a silently different scenario. */
static void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list ap;

	fputs("fake double: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && strchr(" \t\r\n", e[-1]))
		e--;
	*e = '\0';
	return s;
}

static void add(const char *key, const char *val)
{
	struct kv *n = realloc(kvs, (size_t)(nkv + 1) * sizeof(*kvs));

	if (!n)
		die("out of memory");
	kvs = n;
	kvs[nkv].key = strdup(key);
	kvs[nkv].val = strdup(val);
	if (!kvs[nkv].key || !kvs[nkv].val)
		die("out of memory");
	nkv++;
}

/*
 * Lookups by binary search over an index sorted by key, then by position:
 * a node-sized scenario (thousands of keys, asked per device and port)
 * would otherwise spend the run in strcmp. Built once the file is read.
 */
static int *order;
static int norder;

static int by_key(const void *a, const void *b)
{
	int i = *(const int *)a, j = *(const int *)b;
	int c = strcmp(kvs[i].key, kvs[j].key);

	return c ? c : (i > j) - (i < j);
}

static void index_keys(void)
{
	order = realloc(order, (size_t)(nkv ? nkv : 1) * sizeof(*order));
	if (!order)
		die("out of memory");
	for (int i = 0; i < nkv; i++)
		order[i] = i;
	qsort(order, (size_t)nkv, sizeof(*order), by_key);
	norder = nkv;
}

void fake_scenario_load(const char *env)
{
	const char *path = getenv(env);
	char line[1024];
	int lineno = 0;
	FILE *f;

	if (!path || !*path)
		return;
	f = fopen(path, "re");
	if (!f)
		die("%s=%s: cannot open scenario: %s", env, path,
		    strerror(errno));
	scenario_path = path;
	while (fgets(line, sizeof(line), f)) {
		char *key, *val, *eq;
		size_t len;

		lineno++;
		if (!strchr(line, '\n') && !feof(f))
			die("%s:%d: line too long", path, lineno);
		key = trim(line);
		if (!*key || *key == '#')
			continue;
		eq = strchr(key, '=');
		if (!eq)
			die("%s:%d: expected 'key = value': %s", path, lineno,
			    key);
		*eq = '\0';
		key = trim(key);
		val = trim(eq + 1);
		len = strlen(val);
		if (len >= 2 && val[0] == '"' && val[len - 1] == '"') {
			val[len - 1] = '\0';
			val++;
		}
		if (!*key)
			die("%s:%d: empty key", path, lineno);
		add(key, val);
	}
	fclose(f);
	index_keys();
}

const char *fake_get(const char *key)
{
	int lo = 0, hi = norder - 1, found = -1;

	/* The last of equal keys: a later duplicate wins. */
	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;
		int c = strcmp(kvs[order[mid]].key, key);

		if (c <= 0) {
			if (!c)
				found = order[mid];
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return found < 0 ? NULL : kvs[found].val;
}

long long fake_get_ll(const char *key, long long dflt)
{
	const char *v = fake_get(key);
	char *end;
	long long n;

	if (!v)
		return dflt;
	errno = 0;
	n = strtoll(v, &end, 0);
	if (errno || end == v || *end)
		die("%s: %s = '%s': not an integer", scenario_path, key, v);
	return n;
}

static void vkey(char *buf, size_t len, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

static void vkey(char *buf, size_t len, const char *fmt, va_list ap)
{
	if ((size_t)vsnprintf(buf, len, fmt, ap) >= len)
		die("scenario key too long: %s", fmt);
}

const char *fake_getf(const char *fmt, ...)
{
	char key[256];
	va_list ap;

	va_start(ap, fmt);
	vkey(key, sizeof(key), fmt, ap);
	va_end(ap);
	return fake_get(key);
}

long long fake_getf_ll(long long dflt, const char *fmt, ...)
{
	char key[256];
	va_list ap;

	va_start(ap, fmt);
	vkey(key, sizeof(key), fmt, ap);
	va_end(ap);
	return fake_get_ll(key, dflt);
}

/* "kind.NAME.idx" first, then "kind.NAME". */
static long long fault_value(const char *kind, const char *name, int idx)
{
	if (idx >= 0) {
		char key[256];

		snprintf(key, sizeof(key), "%s.%s.%d", kind, name, idx);
		if (fake_get(key))
			return fake_get_ll(key, 0);
	}
	return fake_getf_ll(0, "%s.%s", kind, name);
}

/* What a badly behaved library prints: escapes, bad UTF-8, a NUL. */
static const char junk[] = "LIBJUNK {\"verdict\": \"READY\"} \033[2J\033]0;pwned\007"
			   "\xff\xfe\xc3\x28 \xe2\x82 <![CDATA[ ]]> \0NUL\r\n";

static void print_junk(long long n)
{
	/* Half through stdio (buffered, flushed as a library would), half
	 * straight to the stderr descriptor. */
	for (int fd = 1; fd <= 2; fd++) {
		for (long long i = 0; i < n / 2; i += (long long)sizeof(junk)) {
			size_t len = sizeof(junk);

			if (n / 2 - i < (long long)len)
				len = (size_t)(n / 2 - i);
			if (fd == 1)
				fwrite(junk, 1, len, stdout);
			else if (write(2, junk, len) < 0)
				break;
		}
		fflush(stdout);
	}
}

/* A helper process the library leaves running, holding every inherited
 * descriptor (the worker's pipes included); with @escape it also leaves
 * the process group, as a daemonising helper would. */
static void fork_helper(bool escape)
{
	pid_t pid = fork();

	if (pid != 0)
		return;
	if (escape)
		setsid();
	for (;;)
		pause();
}

bool fake_fault(const char *name, int idx, long long *val)
{
	long long v;

	v = fault_value("print", name, idx);
	if (v > 0)
		print_junk(v);
	if (fault_value("forkhold", name, idx))
		fork_helper(false);
	if (fault_value("forkescape", name, idx))
		fork_helper(true);
	if (fault_value("closefds", name, idx))
		for (int fd = 3; fd < 4096; fd++)
			close(fd);
	if (fault_value("ignterm", name, idx)) {
		sigset_t set;

		signal(SIGTERM, SIG_IGN);
		signal(SIGINT, SIG_IGN);
		sigemptyset(&set);
		sigaddset(&set, SIGTERM);
		sigaddset(&set, SIGINT);
		sigprocmask(SIG_BLOCK, &set, NULL);
	}

	if (fault_value("hang", name, idx))
		for (;;)
			pause();
	if (fault_value("crash", name, idx))
		raise(SIGSEGV);
	/* exit.NAME = 0 is a meaningful status, so test presence. */
	if ((idx >= 0 && fake_getf("exit.%s.%d", name, idx)) ||
	    fake_getf("exit.%s", name))
		_exit((int)fault_value("exit", name, idx));
	v = fault_value("fail", name, idx);
	if (!v)
		return false;
	*val = v;
	return true;
}

/* --- ledger --------------------------------------------------------------- */

#define LEDGER_MAX 8

static const char *ledger_tag;
static const char *const *ledger_names;
static int ledger_n;
static long long ledger_acq[LEDGER_MAX], ledger_rel[LEDGER_MAX];
static bool ledger_touched;
static pthread_mutex_t ledger_lock = PTHREAD_MUTEX_INITIALIZER;

void fake_ledger_init(const char *tag, const char *const *names, int n)
{
	if (n > LEDGER_MAX)
		die("ledger: too many rows");
	ledger_tag = tag;
	ledger_names = names;
	ledger_n = n;
}

/*
 * Rewritten in place on every change: opened, one pwrite of the whole text
 * at offset 0, closed. The counts only grow, so the text never shrinks and
 * a process killed at any point leaves a whole ledger (the readers, the
 * test drivers, read it after the run). Writing a file and renaming it
 * over the ledger, as before, made ext4 flush the data on each rename: on
 * a node of 256 devices the doubles' own ledger was a tenth of the run.
 * No descriptor is kept between calls: a library under test may close
 * every descriptor (the NVML double's closefds fault), and a kept number
 * reused by the tool would receive the ledger. Caller holds the lock.
 */
static void ledger_write(void)
{
	const char *dir = getenv("FAKE_LEDGER_DIR");
	char path[4096], buf[1024];
	size_t used = 0;
	int fd;

	if (!dir || !*dir || !ledger_tag)
		return;
	for (int i = 0; i < ledger_n; i++)
		used += (size_t)snprintf(buf + used, sizeof(buf) - used,
					 "%s %lld %lld\n", ledger_names[i],
					 ledger_acq[i], ledger_rel[i]);
	snprintf(path, sizeof(path), "%s/%s.%d", dir, ledger_tag,
		 (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		die("FAKE_LEDGER_DIR: %s: %s", path, strerror(errno));
	if (pwrite(fd, buf, used, 0) != (ssize_t)used || close(fd))
		die("FAKE_LEDGER_DIR: %s: %s", path, strerror(errno));
}

static void ledger_bump(long long *counts, int row)
{
	if (row < 0 || row >= ledger_n)
		die("ledger: bad row %d", row);
	pthread_mutex_lock(&ledger_lock);
	counts[row]++;
	ledger_touched = true;
	ledger_write();
	pthread_mutex_unlock(&ledger_lock);
}

void fake_ledger_acquire(int row)
{
	ledger_bump(ledger_acq, row);
}

void fake_ledger_release(int row)
{
	ledger_bump(ledger_rel, row);
}

static void __attribute__((destructor)) ledger_fini(void)
{
	pthread_mutex_lock(&ledger_lock);
	if (ledger_touched)
		ledger_write();
	pthread_mutex_unlock(&ledger_lock);
}
