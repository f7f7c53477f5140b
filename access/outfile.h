/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_OUTFILE_H
#define GDRCHECK_OUTFILE_H

/*
 * Files the tool writes (--output, --capture), written so that nothing
 * else is ever damaged:
 *  - a new name, or an existing regular file: written to a fresh temporary
 *    file in the same directory (random name, O_CREAT|O_EXCL|O_NOFOLLOW, so
 *    a link planted at any name is never followed), then renamed into
 *    place: readers never see half a file;
 *  - anything else that exists (/dev/null, /dev/stdout, a FIFO, a device,
 *    a symlink): opened and written directly, never created, renamed over
 *    or replaced; a symlink is written through to what it points at, and
 *    the link itself stays (a dangling one is an error: nothing is created
 *    through it).
 */
#include <stdbool.h>

struct outfile {
	int fd;			/* write here; the caller closes it */
	bool renames;		/* tmp is renamed onto path at the end */
	char path[4096];
	char tmp[4096];
};

/* 0 or -errno; on error nothing was created. */
int outfile_open(struct outfile *of, const char *path);

/*
 * After the caller closed of->fd: ok, move the temporary file into place;
 * not ok, remove it. 0 or -errno (the temporary file is gone either way).
 */
int outfile_finish(struct outfile *of, bool ok);

#endif
