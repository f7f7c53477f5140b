// SPDX-License-Identifier: MIT
/* The --capture archive: a ustar file set, gzip'd with zlib. */
#include "access/capture.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "access/outfile.h"
#include "access/sysroot.h"

enum entry_type { E_FILE, E_DIR, E_LINK };

struct entry {
	char *path;		/* absolute, inside the sysroot */
	enum entry_type type;
	char *data;		/* file bytes or link target */
	size_t len;
};

/*
 * One archive per process (one --capture FILE per run); sr is the tree
 * being recorded, whose recorder hook feeds it.
 */
static struct {
	bool on;
	struct sysroot *sr;
	struct entry *v;
	size_t n, cap;
} cap;

static void capture_file(void *arg, const char *path, const char *data,
			 size_t len);
static void capture_dir(void *arg, const char *path);
static void capture_link(void *arg, const char *path, const char *target);
static void capture_exists(void *arg, const char *path, bool is_dir);
static void add(const char *in, enum entry_type type, const char *data,
		size_t len);

/* The sysroot layer reports what it read through this hook. */
static const struct sysroot_recorder recorder = {
	.file = capture_file,
	.dir = capture_dir,
	.link = capture_link,
	.exists = capture_exists,
};

/*
 * The environment variables gates read with getenv() (NCCL's settings,
 * HOME for ~/.nccl.conf, CUDA_VISIBLE_DEVICES) as /gdrcheck/environ,
 * "NAME=value" a line, so that a replay does not read the replaying
 * host's.
 */
static bool environ_kept(const char *e)
{
	/* Addresses and host ids identify the machine; no gate reads them. */
	if (!strncmp(e, "NCCL_COMM_ID=", 13) || !strncmp(e, "NCCL_HOSTID=", 12))
		return false;
	return !strncmp(e, "NCCL_", 5) || !strncmp(e, "HOME=", 5) ||
	       !strncmp(e, "CUDA_VISIBLE_DEVICES=", 21);
}

static void capture_environ(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	if (!m)
		return;
	for (char **e = environ; e && *e; e++)
		if (environ_kept(*e) && !strchr(*e, '\n'))
			fprintf(m, "%s\n", *e);
	if (!fclose(m) && text)
		add("/gdrcheck/environ", E_FILE, text, len);
	free(text);
}

void capture_enable(struct sysroot *sr)
{
	cap.on = true;
	cap.sr = sr;
	sysroot_set_recorder(sr, &recorder, NULL);
	capture_environ();
}

bool capture_enabled(void)
{
	return cap.on;
}

static struct entry *find(const char *path)
{
	for (size_t i = 0; i < cap.n; i++)
		if (!strcmp(cap.v[i].path, path))
			return &cap.v[i];
	return NULL;
}

/*
 * Entries are stored under their canonical path (the symlinks on the way
 * are entries of their own), so that extracting the archive never writes
 * through a link. Links and files keep their own name in a canonical dir.
 */
static bool canonical(const char *path, enum entry_type type, char *out,
		      size_t len)
{
	char dir[4096], real[4096];
	const char *base;

	/* The process's own files stay under /proc/self, not /proc/<pid>. */
	if (!strncmp(path, "/proc/self/", 11))
		return snprintf(out, len, "%s", path) < (int)len;
	if (type == E_DIR)
		return !sysroot_realpath(cap.sr, path, out, len);
	base = strrchr(path, '/');
	if (!base || (size_t)(base - path) >= sizeof(dir))
		return false;
	memcpy(dir, path, (size_t)(base - path));
	dir[base - path] = '\0';
	if (sysroot_realpath(cap.sr, dir[0] ? dir : "/", real, sizeof(real)))
		return false;
	return snprintf(out, len, "%s%s", strcmp(real, "/") ? real : "",
			base) < (int)len;
}

/*
 * path without "." and ".." components (in place), so that no archive
 * member name climbs out of the directory it is unpacked into; false when
 * it would climb above the root.
 */
static bool lexical(char *path)
{
	char *out = path, *in = path;

	if (*in != '/')
		return false;
	while (*in) {
		size_t n;

		in += strspn(in, "/");
		n = strcspn(in, "/");
		if (!n)
			break;
		if (n == 1 && in[0] == '.') {
			in += n;
			continue;
		}
		if (n == 2 && in[0] == '.' && in[1] == '.') {
			if (out == path)
				return false;
			while (out > path && *--out != '/')
				;
			in += n;
			continue;
		}
		*out++ = '/';
		memmove(out, in, n);
		out += n;
		in += n;
	}
	if (out == path)
		*out++ = '/';
	*out = '\0';
	return true;
}

static void add(const char *in, enum entry_type type, const char *data,
		size_t len)
{
	static int depth;
	char path[4096];
	struct entry *e;
	bool ok;

	if (!cap.on || !in[0] || !strcmp(in, "/"))
		return;
	/* Resolving records the links on the way (shorter paths: bounded). */
	depth++;
	ok = depth < 16 && canonical(in, type, path, sizeof(path));
	depth--;
	if (!ok)
		snprintf(path, sizeof(path), "%s", in);
	/* /proc/self/.. and the like: never a member name with "..". */
	if (!lexical(path) || !strcmp(path, "/") || find(path))
		return;
	if (cap.n == cap.cap) {
		size_t ncap = cap.cap ? cap.cap * 2 : 256;
		struct entry *nv = realloc(cap.v, ncap * sizeof(*nv));

		if (!nv)
			return;	/* a smaller capture, never a crash */
		cap.v = nv;
		cap.cap = ncap;
	}
	e = &cap.v[cap.n];
	e->path = strdup(path);
	e->data = data ? malloc(len + 1) : NULL;
	if (!e->path || (data && !e->data)) {
		free(e->path);
		free(e->data);
		return;
	}
	if (data) {
		memcpy(e->data, data, len);
		e->data[len] = '\0';
	}
	e->type = type;
	e->len = len;
	cap.n++;
}

static void capture_file(void *arg, const char *path, const char *data,
			 size_t len)
{
	add(path, E_FILE, data, len);
}

static void capture_dir(void *arg, const char *path)
{
	add(path, E_DIR, NULL, 0);
}

static void capture_link(void *arg, const char *path, const char *target)
{
	add(path, E_LINK, target, strlen(target));
}

/* Device nodes and marker files only need to exist in a replay. */
static void capture_exists(void *arg, const char *path, bool is_dir)
{
	if (is_dir)
		add(path, E_DIR, NULL, 0);
	else
		add(path, E_FILE, "", 0);
}

/* --- scrubbing ------------------------------------------------------------ */

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

/* The keys environ_kept leaves out, as "NAME=" (what they identify). */
static bool identity_key(const char *line)
{
	line += strspn(line, " \t");
	return !strncmp(line, "NCCL_COMM_ID", 12) ||
	       !strncmp(line, "NCCL_HOSTID", 11);
}

/*
 * An NCCL configuration file (/etc/nccl.conf, ~/.nccl.conf, whatever
 * NCCL_CONF_FILE names) keeps its settings but not the rendezvous address
 * or host id the environment's copy is scrubbed of: those lines go.
 */
static void scrub_identity_lines(struct entry *e)
{
	size_t used = 0;
	char *out;

	if (!e->data || (!memmem(e->data, e->len, "NCCL_COMM_ID", 12) &&
			 !memmem(e->data, e->len, "NCCL_HOSTID", 11)))
		return;
	out = malloc(e->len + 1);
	if (!out)
		return;
	for (size_t at = 0; at < e->len;) {
		const char *nl = memchr(e->data + at, '\n', e->len - at);
		size_t n = nl ? (size_t)(nl - (e->data + at)) + 1 : e->len - at;
		char line[64];

		snprintf(line, sizeof(line), "%.*s", (int)(n < 63 ? n : 63),
			 e->data + at);
		if (!identity_key(line)) {
			memcpy(out + used, e->data + at, n);
			used += n;
		}
		at += n;
	}
	out[used] = '\0';
	free(e->data);
	e->data = out;
	e->len = used;
}

/* Replace what identifies the machine; the meaning stays for a replay. */
static void scrub(struct entry *e)
{
	char *out;

	if (e->type != E_FILE)
		return;
	if (strncmp(e->path, "/sys/", 5) && strncmp(e->path, "/proc/", 6))
		scrub_identity_lines(e);
	if (!strcmp(e->path, "/proc/sys/kernel/hostname")) {
		free(e->data);
		e->data = strdup("captured-node\n");
		e->len = e->data ? strlen(e->data) : 0;
	} else if (strstr(e->path, "/gids/")) {
		/*
		 * Non-zero stays non-zero: a synthetic GID per index, of the
		 * same kind (zero, link-local, IPv4-mapped, other IPv6), so a
		 * replay picks the GID NCCL would (ncclIbGetGidIndex).
		 */
		const char *idx = strrchr(e->path, '/') + 1;
		bool zero = !strncmp(e->data, "0000:0000:0000:0000:0000:0000:0000:0000", 39);
		bool v4 = !strncmp(e->data, "0000:0000:0000:0000:0000:ffff:", 30);
		bool ll = !strncmp(e->data, "fe80:", 5);

		if (asprintf(&out, "%s:%04x\n", zero ?
			     "0000:0000:0000:0000:0000:0000:0000" :
			     v4 ? "0000:0000:0000:0000:0000:ffff:0a00" :
			     ll ? "fe80:0000:0000:0000:0000:0000:0000" :
			     "fd00:0000:0000:0000:0000:0000:0000", zero ? 0 :
			     (unsigned int)atoi(idx) + 1) < 0)
			return;
		free(e->data);
		e->data = out;
		e->len = strlen(out);
	} else if (!strcmp(e->path, "/proc/cmdline")) {
		char *copy = strdup(e->data), *tok, *save = NULL;
		size_t used = 0;

		out = calloc(1, e->len + 2);
		if (!copy || !out) {
			free(copy);
			free(out);
			return;
		}
		for (tok = strtok_r(copy, " \n", &save); tok;
		     tok = strtok_r(NULL, " \n", &save))
			if (strstr(tok, "iommu") || strstr(tok, "dmar") ||
			    strstr(tok, "acs"))
				used += (size_t)sprintf(out + used, "%s%s",
							used ? " " : "", tok);
		out[used++] = '\n';
		free(copy);
		free(e->data);
		e->data = out;
		e->len = used;
	} else if (ends_with(e->path, "/cgroup") || ends_with(e->path, "node_guid")) {
		/* Container ids and GUIDs: mask long hex runs. */
		for (size_t i = 0; i < e->len; i++) {
			size_t j = i;

			while (j < e->len && isxdigit((unsigned char)e->data[j]))
				j++;
			if (j - i >= 12)
				memset(e->data + i, 'x', j - i);
			i = j;
		}
	}
}

/* --- ustar ---------------------------------------------------------------- */

static int put_header(gzFile gz, const char *name, char type, size_t size,
		      const char *link)
{
	unsigned char h[512];
	unsigned int sum = 0;

	memset(h, 0, sizeof(h));
	snprintf((char *)h, 100, "%s", name);
	snprintf((char *)h + 100, 8, "%07o", type == '5' ? 0755 : 0644);
	snprintf((char *)h + 108, 8, "%07o", 0);
	snprintf((char *)h + 116, 8, "%07o", 0);
	snprintf((char *)h + 124, 12, "%011zo", size);
	snprintf((char *)h + 136, 12, "%011lo", 0UL);
	memset(h + 148, ' ', 8);
	h[156] = (unsigned char)type;
	if (link)
		snprintf((char *)h + 157, 100, "%s", link);
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	for (size_t i = 0; i < sizeof(h); i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	h[154] = '\0';
	h[155] = ' ';
	return gzwrite(gz, h, sizeof(h)) == sizeof(h) ? 0 : -EIO;
}

static int put_data(gzFile gz, const char *data, size_t len)
{
	static const char zeros[512];

	if (len && gzwrite(gz, data, (unsigned int)len) != (int)len)
		return -EIO;
	if (len % 512 && gzwrite(gz, zeros, (unsigned int)(512 - len % 512)) !=
	    (int)(512 - len % 512))
		return -EIO;
	return 0;
}

/* GNU long names/links for paths past ustar's 100 bytes. */
static int put_long(gzFile gz, char type, const char *s)
{
	size_t len = strlen(s) + 1;

	int ret = put_header(gz, "././@LongLink", type, len, NULL);

	return ret ? ret : put_data(gz, s, len);
}

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->path,
		      ((const struct entry *)b)->path);
}

int capture_write(const char *file)
{
	static const char zeros[1024];
	struct outfile of;
	gzFile gz;
	int ret = outfile_open(&of, file);

	if (ret)
		return ret;
	/* gzclose() closes the fd; outfile_finish() then renames or removes. */
	gz = gzdopen(of.fd, "wb9");
	if (!gz) {
		close(of.fd);
		outfile_finish(&of, false);
		return -ENOMEM;
	}
	qsort(cap.v, cap.n, sizeof(*cap.v), cmp_entry);
	for (size_t i = 0; i < cap.n && !ret; i++) {
		struct entry *e = &cap.v[i];
		char name[4096];

		scrub(e);
		snprintf(name, sizeof(name), "%s%s", e->path + 1,
			 e->type == E_DIR ? "/" : "");
		if (strlen(name) >= 100)
			ret = put_long(gz, 'L', name);
		if (!ret && e->type == E_LINK && e->len >= 100)
			ret = put_long(gz, 'K', e->data);
		if (ret)
			break;
		ret = put_header(gz, name, e->type == E_DIR ? '5' :
				 e->type == E_LINK ? '2' : '0',
				 e->type == E_FILE ? e->len : 0,
				 e->type == E_LINK ? e->data : NULL);
		if (!ret && e->type == E_FILE)
			ret = put_data(gz, e->data, e->len);
	}
	if (!ret && gzwrite(gz, zeros, sizeof(zeros)) != sizeof(zeros))
		ret = -EIO;
	if (gzclose(gz) != Z_OK && !ret)
		ret = -EIO;
	if (ret)
		outfile_finish(&of, false);
	else
		ret = outfile_finish(&of, true);
	return ret;
}
