// SPDX-License-Identifier: MIT
/* Report and capture files: a temporary file and a rename, or a direct write. */
#include "access/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ".NAME.XXXXXXXXXXXX" beside NAME, created only if no such name exists. */
static int create_tmp(struct outfile *of)
{
	static const char digits[] = "0123456789abcdefghijklmnopqrstuv";
	const char *base = strrchr(of->path, '/');
	int dirlen = base ? (int)(base - of->path + 1) : 0;

	base = base ? base + 1 : of->path;
	for (int tries = 0; tries < 64; tries++) {
		unsigned char rnd[12];
		char suffix[sizeof(rnd) + 1];
		int fd;

		if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
			return -EIO;
		for (size_t i = 0; i < sizeof(rnd); i++)
			suffix[i] = digits[rnd[i] % 32];
		suffix[sizeof(rnd)] = '\0';
		if (snprintf(of->tmp, sizeof(of->tmp), "%.*s.%s.%s", dirlen,
			     of->path, base, suffix) >= (int)sizeof(of->tmp))
			return -ENAMETOOLONG;
		fd = open(of->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
			  O_CLOEXEC | O_NOCTTY, 0666);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/* How long a FIFO target may wait for its reader to open it. */
#define FIFO_READER_WAIT_MS 5000

/*
 * O_NONBLOCK only for the open: a FIFO without a reader is ENXIO at once
 * instead of blocking, so its reader is polled for within a deadline.
 */
static int open_direct(const char *path)
{
	const struct timespec step = { 0, 20 * 1000 * 1000 };
	int waited = 0, fd;
	struct stat st;
	bool fifo = !stat(path, &st) && S_ISFIFO(st.st_mode);

	for (;;) {
		fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
		if (fd >= 0)
			return fd;
		if (!fifo || errno != ENXIO || waited >= FIFO_READER_WAIT_MS)
			return -errno;
		nanosleep(&step, NULL);
		waited += 20;
	}
}

int outfile_open(struct outfile *of, const char *path)
{
	struct stat st;
	int fd;

	memset(of, 0, sizeof(*of));
	of->fd = -1;
	if (!path[0])
		return -ENOENT;
	if (snprintf(of->path, sizeof(of->path), "%s", path) >=
	    (int)sizeof(of->path))
		return -ENAMETOOLONG;
	if (lstat(path, &st)) {
		if (errno != ENOENT)
			return -errno;
	} else if (!S_ISREG(st.st_mode)) {
		/*
		 * Not ours to replace: write into it as it is. No O_CREAT, so
		 * a dangling link creates nothing; a FIFO gets a bounded wait
		 * for its reader, not a hang.
		 */
		fd = open_direct(path);
		if (fd < 0)
			return fd;
		if (fstat(fd, &st) || S_ISDIR(st.st_mode) ||
		    fcntl(fd, F_SETFL, 0) ||
		    (S_ISREG(st.st_mode) && ftruncate(fd, 0))) {
			int err = errno ? errno : EISDIR;

			close(fd);
			return -err;
		}
		of->fd = fd;
		return 0;
	}
	fd = create_tmp(of);
	if (fd < 0) {
		of->tmp[0] = '\0';
		return fd;
	}
	/* Replacing a file keeps its permissions (the umask's otherwise). */
	if (!lstat(path, &st) && S_ISREG(st.st_mode))
		(void)fchmod(fd, st.st_mode & 07777);
	of->fd = fd;
	of->renames = true;
	return 0;
}

int outfile_finish(struct outfile *of, bool ok)
{
	int ret = 0;

	if (!of->renames)
		return 0;
	/* rename() replaces the name itself: it never writes through a link. */
	if (ok && rename(of->tmp, of->path))
		ret = -errno;
	if (!ok || ret)
		unlink(of->tmp);
	of->renames = false;
	return ret;
}
