// SPDX-License-Identifier: MIT
/* Sysroot-aware file access: the only place that touches /sys, /proc, /dev. */
#include "access/sysroot.h"
#include "access/capture.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char sysroot_dir[PATH_MAX] = "";

/*
 * Paths sysroot_realpath has walked whose every component is known not to
 * be a symlink: the last few results, and the directories that held the
 * last few links it followed (/sys/bus/pci/devices, /sys/class/infiniband).
 * PCI devices are resolved in sorted order and share long prefixes
 * (/sys/devices/pci0000:00/0000:00:01.0/...): without this, most of the
 * lstat calls on a 400-function tree re-check the same directories.
 */
#define KNOWN_PATHS 4
static char known_paths[KNOWN_PATHS][PATH_MAX];
static unsigned int known_next;

static void remember_not_link(const char *path)
{
	for (int i = 0; i < KNOWN_PATHS; i++)
		if (!strcmp(known_paths[i], path))
			return;
	snprintf(known_paths[known_next], PATH_MAX, "%s", path);
	known_next = (known_next + 1) % KNOWN_PATHS;
}

void sysroot_set(const char *dir)
{
	size_t n;

	memset(known_paths, 0, sizeof(known_paths));

	if (!dir || !strcmp(dir, "/")) {
		sysroot_dir[0] = '\0';
		return;
	}
	snprintf(sysroot_dir, sizeof(sysroot_dir), "%s", dir);
	n = strlen(sysroot_dir);
	while (n > 0 && sysroot_dir[n - 1] == '/')
		sysroot_dir[--n] = '\0';
}

const char *sysroot_get(void)
{
	return sysroot_dir[0] ? sysroot_dir : "/";
}

char *sysroot_path(char *buf, size_t len, const char *path)
{
	int n = snprintf(buf, len, "%s%s", sysroot_dir, path);

	if (n < 0 || (size_t)n >= len)
		return NULL;
	return buf;
}

/*
 * A listing is replayed only if its entries exist: record the directories
 * and links in it (files count once they are read).
 */
static void capture_listing(const char *dir, char **names, size_t n)
{
	capture_dir(dir);
	for (size_t i = 0; i < n; i++) {
		char rel[PATH_MAX], p[PATH_MAX], target[PATH_MAX];
		struct stat st;
		ssize_t len;

		if (snprintf(rel, sizeof(rel), "%s/%s", dir, names[i]) >=
		    (int)sizeof(rel) || !sysroot_path(p, sizeof(p), rel) ||
		    lstat(p, &st))
			continue;
		if (S_ISDIR(st.st_mode)) {
			capture_dir(rel);
		} else if (S_ISLNK(st.st_mode)) {
			len = readlink(p, target, sizeof(target) - 1);
			if (len < 0)
				continue;
			target[len] = '\0';
			capture_link(rel, target);
		}
	}
}

bool sysroot_exists(const char *path)
{
	char p[PATH_MAX];
	struct stat st;

	if (!sysroot_path(p, sizeof(p), path) || access(p, F_OK))
		return false;
	if (capture_enabled() && stat(p, &st) == 0)
		capture_exists(path, S_ISDIR(st.st_mode));
	return true;
}

bool sysroot_is_dir(const char *path)
{
	char p[PATH_MAX];
	struct stat st;

	if (!sysroot_path(p, sizeof(p), path) || stat(p, &st) ||
	    !S_ISDIR(st.st_mode))
		return false;
	capture_dir(path);
	return true;
}

ssize_t sysroot_read(const char *path, char *buf, size_t len)
{
	char p[PATH_MAX];
	size_t used = 0;
	ssize_t ret;
	bool whole;
	int fd;

	if (len == 0)
		return -EINVAL;
	buf[0] = '\0';
	if (!sysroot_path(p, sizeof(p), path))
		return -ENAMETOOLONG;
	/* O_NONBLOCK: a FIFO planted in a capture must not hang us. */
	fd = open(p, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	/*
	 * A sysfs attribute comes whole from one read (and a captured one is
	 * a regular file, where a short read is the end): no second read to
	 * see the end. procfs files can come in pieces: read to the end.
	 */
	whole = !strncmp(path, "/sys/", 5);
	for (;;) {
		if (used == len - 1) {
			char probe;

			/* Full: one more byte means the file is too big. */
			if (read(fd, &probe, 1) > 0) {
				ret = -EFBIG;
				goto out;
			}
			break;
		}
		ret = read(fd, buf + used, len - 1 - used);
		if (ret < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			goto out;
		}
		if (ret == 0)
			break;
		used += (size_t)ret;
		if (whole && used < len - 1)
			break;
	}
	buf[used] = '\0';
	ret = (ssize_t)used;
	capture_file(path, buf, used);
out:
	close(fd);
	if (ret < 0)
		buf[0] = '\0';
	return ret;
}

int sysroot_read_line(const char *path, char *buf, size_t len)
{
	char tmp[4096];
	ssize_t n = sysroot_read(path, tmp, sizeof(tmp));
	char *nl;
	size_t l;

	if (len)
		buf[0] = '\0';
	if (n < 0)
		return (int)n;
	nl = strchr(tmp, '\n');
	if (nl)
		*nl = '\0';
	l = strlen(tmp);
	while (l > 0 && (tmp[l - 1] == ' ' || tmp[l - 1] == '\t' ||
			 tmp[l - 1] == '\r'))
		tmp[--l] = '\0';
	if (l >= len)
		return -EOVERFLOW;
	memcpy(buf, tmp, l + 1);
	return 0;
}

int sysroot_read_ll(const char *path, long long *val)
{
	char line[128];
	char *end;
	long long v;
	int ret = sysroot_read_line(path, line, sizeof(line));
	bool hex;

	if (ret)
		return ret;
	hex = line[0] == '0' && (line[1] == 'x' || line[1] == 'X');
	if (!line[0] || (hex && !line[2]))
		return -EINVAL;
	errno = 0;
	v = strtoll(line, &end, hex ? 16 : 10);
	if (errno || *end)
		return -EINVAL;
	*val = v;
	return 0;
}

int sysroot_link_name(const char *path, char *buf, size_t len)
{
	char p[PATH_MAX], target[PATH_MAX];
	const char *base;
	ssize_t n;

	if (!sysroot_path(p, sizeof(p), path))
		return -ENAMETOOLONG;
	n = readlink(p, target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = '\0';
	capture_link(path, target);
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (strlen(base) >= len)
		return -EOVERFLOW;
	strcpy(buf, base);
	return 0;
}

/* Append component to path (in place), handling "." and "..". */
static int path_push(char *path, size_t len, const char *comp, size_t clen)
{
	size_t n = strlen(path);

	if (clen == 0 || (clen == 1 && comp[0] == '.'))
		return 0;
	if (clen == 2 && comp[0] == '.' && comp[1] == '.') {
		char *slash = strrchr(path, '/');

		if (slash)
			*slash = '\0';
		return 0;
	}
	if (n + 1 + clen >= len)
		return -ENAMETOOLONG;
	path[n] = '/';
	memcpy(path + n + 1, comp, clen);
	path[n + 1 + clen] = '\0';
	return 0;
}

/* Is path a remembered path or one of its leading directories? */
static bool known_not_link(const char *path)
{
	size_t n = strlen(path);

	for (int i = 0; n && i < KNOWN_PATHS; i++)
		if (!strncmp(known_paths[i], path, n) &&
		    (known_paths[i][n] == '/' || known_paths[i][n] == '\0'))
			return true;
	return false;
}

/*
 * Walk path component by component, following symlinks inside the sysroot
 * (absolute link targets are re-rooted). At most 40 links, like the kernel.
 */
int sysroot_realpath(const char *path, char *buf, size_t len)
{
	char todo[PATH_MAX], done[PATH_MAX] = "";
	char full[PATH_MAX], target[PATH_MAX];
	int links = 0;

	if (snprintf(todo, sizeof(todo), "%s", path) >= (int)sizeof(todo))
		return -ENAMETOOLONG;
	while (todo[0]) {
		char *comp = todo, *next;
		size_t clen;
		struct stat st;
		ssize_t n;

		while (*comp == '/')
			comp++;
		next = strchr(comp, '/');
		clen = next ? (size_t)(next - comp) : strlen(comp);
		if (clen == 0)
			break;
		{
			char saved[PATH_MAX];
			int ret;

			snprintf(saved, sizeof(saved), "%s", done);
			ret = path_push(done, sizeof(done), comp, clen);
			if (ret)
				return ret;
			if (known_not_link(done)) {
				memmove(todo, comp + clen, strlen(comp + clen) + 1);
				continue;
			}
			if (!sysroot_path(full, sizeof(full), done[0] ? done : "/"))
				return -ENAMETOOLONG;
			if (lstat(full, &st) < 0)
				return -errno;
			if (!S_ISLNK(st.st_mode)) {
				memmove(todo, comp + clen, strlen(comp + clen) + 1);
				continue;
			}
			if (++links > 40)
				return -ELOOP;
			if (saved[0])	/* the link's directory: no links */
				remember_not_link(saved);
			n = readlink(full, target, sizeof(target) - 1);
			if (n < 0)
				return -errno;
			target[n] = '\0';
			capture_link(done, target);
			/* Rest of the path after this component. */
			{
				char rest[PATH_MAX];

				snprintf(rest, sizeof(rest), "%s", comp + clen);
				if (snprintf(todo, sizeof(todo), "%s%s", target,
					     rest) >= (int)sizeof(todo))
					return -ENAMETOOLONG;
			}
			if (target[0] == '/')
				done[0] = '\0';
			else
				snprintf(done, sizeof(done), "%s", saved);
		}
	}
	if (!done[0])
		snprintf(done, sizeof(done), "/");
	if (strlen(done) >= len)
		return -ENAMETOOLONG;
	strcpy(buf, done);
	remember_not_link(done);
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int sysroot_list(const char *dir, char ***names, size_t *count)
{
	char p[PATH_MAX];
	char **v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d;
	int ret = 0;

	*names = NULL;
	*count = 0;
	if (!sysroot_path(p, sizeof(p), dir))
		return -ENAMETOOLONG;
	d = opendir(p);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			char **nv = realloc(v, ncap * sizeof(*v));

			if (!nv) {
				ret = -ENOMEM;
				goto fail;
			}
			v = nv;
			cap = ncap;
		}
		v[n] = strdup(de->d_name);
		if (!v[n]) {
			ret = -ENOMEM;
			goto fail;
		}
		n++;
	}
	closedir(d);
	if (capture_enabled())
		capture_listing(dir, v, n);
	if (n)
		qsort(v, n, sizeof(*v), cmp_names);
	*names = v;
	*count = n;
	return 0;
fail:
	closedir(d);
	sysroot_free_list(v, n);
	return ret;
}

void sysroot_free_list(char **names, size_t count)
{
	for (size_t i = 0; i < count; i++)
		free(names[i]);
	free(names);
}

int sysroot_access(const char *path)
{
	char p[PATH_MAX];
	struct stat st;

	if (!sysroot_path(p, sizeof(p), path))
		return -ENAMETOOLONG;
	/* stat, not access(): the errno says absent or unreadable. */
	if (stat(p, &st))
		return -errno;
	if (capture_enabled())
		capture_exists(path, S_ISDIR(st.st_mode));
	return 0;
}
