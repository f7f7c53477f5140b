/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_NCCL_CONF_H
#define GDRCHECK_NCCL_CONF_H

/*
 * NCCL's configuration as NCCL reads it (src/misc/param.cc initEnvFunc,
 * setEnvFile, ncclGetEnv): the process environment first, then
 * NCCL_CONF_FILE (2.23.4+, when set and non-empty) or ~/.nccl.conf, then
 * /etc/nccl.conf. Files are merged with setenv(name, value, 0): a name
 * already set keeps its value, so within a file the first line wins.
 * Files are read below the sysroot (access/sysroot.h).
 */
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

enum nccl_conf_src {
	NCCL_SRC_UNSET,
	NCCL_SRC_ENV,		/* the process environment */
	NCCL_SRC_CONF_FILE,	/* the file NCCL_CONF_FILE names */
	NCCL_SRC_HOME_FILE,	/* $HOME/.nccl.conf */
	NCCL_SRC_SYSTEM_FILE,	/* /etc/nccl.conf */
};

struct nccl_conf_entry {
	char *name;
	char *value;
	enum nccl_conf_src src;
	int line;		/* line in its file; 0 for the environment */
};

/* One file NCCL would open, and what happened when we read it. */
struct nccl_conf_file {
	enum nccl_conf_src src;
	char path[PATH_MAX];
	int err;		/* 0 read, -ENOENT absent (NCCL skips it) */
	bool used;		/* NCCL opens it in this configuration */
};

struct nccl_conf {
	int ver;
	const char *const *envp;	/* not owned */
	struct nccl_conf_file file[2];	/* user or home, /etc */
	struct nccl_conf_entry *e;	/* file values, first wins */
	size_t n, cap;
};

/*
 * Read (in the tree sr) the files NCCL `ver` would read for an environment envp (a NULL
 * terminated "NAME=value" array, e.g. environ; HOME is taken from it).
 * 0, or -ENOMEM. A file that cannot be read is recorded in c->file[].err,
 * not an error of the load.
 */
struct sysroot;
int nccl_conf_load(struct nccl_conf *c, struct sysroot *sr, int ver,
		   const char *const *envp);

/* The value NCCL's getenv(name) returns, with its origin; NULL if unset. */
const char *nccl_conf_get(const struct nccl_conf *c, const char *name,
			  enum nccl_conf_src *src, int *line);

const char *nccl_conf_src_name(enum nccl_conf_src s);

/*
 * The first NCCL_* setting NCCL would see (the environment first, then the
 * files in the order read), its origin in *src; NULL when there is none.
 * Such a setting says the node's jobs run NCCL.
 */
const char *nccl_conf_first_setting(const struct nccl_conf *c,
				    enum nccl_conf_src *src);

void nccl_conf_free(struct nccl_conf *c);

#endif
