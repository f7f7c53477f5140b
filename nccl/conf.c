// SPDX-License-Identifier: MIT
/*
 * NCCL's configuration files, read the way src/misc/param.cc reads them.
 *   initEnvFunc: NCCL_CONF_FILE when set and non-empty (2.23.4+), else
 *     <home>/.nccl.conf; then /etc/nccl.conf. Paths go through a 1024-byte
 *     buffer. <home> is the passwd entry before 2.30.3 and getenv("HOME")
 *     since; we take HOME from the environment for every version.
 *   setEnvFile: one line at a time (getline before 2.30.3, fgets into 4096
 *     bytes since, so longer lines come in pieces); strip the '\n' (and
 *     since 2.30.3 a '\r'); lines starting with '#' are skipped since 2.26.2
 *     (before, they set a harmless "#..." variable, which we keep); no '='
 *     skips the line; the name is what precedes the first '=' (1023 bytes
 *     at most), the value what follows (1023 bytes at most), nothing is
 *     trimmed; setenv(name, value, 0).
 */
#include "nccl/conf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access/sysroot.h"
#include "nccl/rules.h"

#define CONF_MAX_BYTES (1 << 20)
#define NCCL_PATH_BUF 1024
#define NCCL_FIELD 1023
#define NCCL_FGETS_LINE 4095

const char *nccl_conf_src_name(enum nccl_conf_src s)
{
	static const char *const names[] = {
		[NCCL_SRC_UNSET] = "unset",
		[NCCL_SRC_ENV] = "environment",
		[NCCL_SRC_CONF_FILE] = "NCCL_CONF_FILE",
		[NCCL_SRC_HOME_FILE] = "~/.nccl.conf",
		[NCCL_SRC_SYSTEM_FILE] = "/etc/nccl.conf",
	};

	return (unsigned int)s <= NCCL_SRC_SYSTEM_FILE ? names[s] : "unknown";
}

/* getenv() over an envp array: the first "name=" entry. */
static const char *env_get(const char *const *envp, const char *name)
{
	size_t len = strlen(name);

	for (; envp && *envp; envp++)
		if (!strncmp(*envp, name, len) && (*envp)[len] == '=')
			return *envp + len + 1;
	return NULL;
}

static const struct nccl_conf_entry *entry_find(const struct nccl_conf *c,
						const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->e[i].name, name))
			return &c->e[i];
	return NULL;
}

/* setenv(name, value, 0): an empty name fails, a set name is kept. */
static int conf_set(struct nccl_conf *c, const char *name, size_t name_len,
		    const char *value, enum nccl_conf_src src, int line)
{
	struct nccl_conf_entry *e;
	char *n, *v;

	if (name_len == 0)
		return 0;
	n = strndup(name, name_len);
	if (!n)
		return -ENOMEM;
	if (env_get(c->envp, n) || entry_find(c, n)) {
		free(n);
		return 0;
	}
	v = strndup(value, NCCL_FIELD);
	if (!v)
		goto nomem;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 16;

		e = realloc(c->e, cap * sizeof(*e));
		if (!e)
			goto nomem;
		c->e = e;
		c->cap = cap;
	}
	c->e[c->n++] = (struct nccl_conf_entry){
		.name = n, .value = v, .src = src, .line = line,
	};
	return 0;
nomem:
	free(n);
	free(v);
	return -ENOMEM;
}

/* One line as setEnvFile sees it: a C string, '\n' (and '\r') stripped. */
static int conf_line(struct nccl_conf *c, char *line, enum nccl_conf_src src,
		     int lineno)
{
	size_t len = strlen(line), s;

	if (len && line[len - 1] == '\n')
		line[--len] = '\0';
	if (c->ver >= NCCL_VER(2, 30, 3) && len && line[len - 1] == '\r')
		line[--len] = '\0';
	if (c->ver >= NCCL_VER(2, 26, 0) && line[0] == '#')
		return 0;
	for (s = 0; line[s] && line[s] != '='; s++)
		;
	if (!line[s])
		return 0;
	return conf_set(c, line, s < NCCL_FIELD ? s : NCCL_FIELD, line + s + 1,
			src, lineno);
}

/*
 * Feed a file's bytes to conf_line in NCCL's pieces: whole lines
 * (getline) or at most 4095 bytes (fgets, 2.30.3+).
 */
static int conf_text(struct nccl_conf *c, enum nccl_conf_src src,
		     const char *text, size_t len)
{
	size_t max = c->ver >= NCCL_VER(2, 30, 3) ? NCCL_FGETS_LINE : len;
	size_t pos = 0;
	int lineno = 1, ret = 0;

	while (pos < len && !ret) {
		size_t end = pos;
		char *piece;

		while (end < len && end - pos < max && text[end] != '\n')
			end++;
		if (end < len && end - pos < max)
			end++;	/* take the '\n' */
		piece = strndup(text + pos, end - pos);
		if (!piece)
			return -ENOMEM;
		ret = conf_line(c, piece, src, lineno);
		if (end > pos && text[end - 1] == '\n')
			lineno++;
		free(piece);
		pos = end;
	}
	return ret;
}

static int conf_file(struct nccl_conf *c, struct sysroot *sr, int slot,
		     enum nccl_conf_src src, const char *path)
{
	struct nccl_conf_file *f = &c->file[slot];
	char *buf;
	ssize_t n;
	int ret;

	f->src = src;
	f->used = true;
	/* NCCL formats the path into char[1024]: longer names are cut. */
	snprintf(f->path, sizeof(f->path) < NCCL_PATH_BUF ?
		 sizeof(f->path) : NCCL_PATH_BUF, "%s", path);
	if (f->path[0] != '/' && strcmp(sysroot_get(sr), "/")) {
		/* Relative to NCCL's working directory: not in a capture. */
		f->err = -EXDEV;
		return 0;
	}
	buf = malloc(CONF_MAX_BYTES);
	if (!buf)
		return -ENOMEM;
	n = sysroot_read(sr, f->path, buf, CONF_MAX_BYTES);
	if (n < 0) {
		f->err = (int)n;
		free(buf);
		return 0;
	}
	f->err = 0;
	ret = conf_text(c, src, buf, (size_t)n);
	free(buf);
	return ret;
}

int nccl_conf_load(struct nccl_conf *c, struct sysroot *sr, int ver,
		   const char *const *envp)
{
	const char *user = env_get(envp, "NCCL_CONF_FILE");
	const char *home = env_get(envp, "HOME");
	char path[NCCL_PATH_BUF];
	int ret = 0;

	memset(c, 0, sizeof(*c));
	c->ver = ver;
	c->envp = envp;
	if (ver >= NCCL_VER(2, 23, 0) && user && *user) {
		ret = conf_file(c, sr, 0, NCCL_SRC_CONF_FILE, user);
	} else if (home) {
		snprintf(path, sizeof(path), "%s/.nccl.conf", home);
		ret = conf_file(c, sr, 0, NCCL_SRC_HOME_FILE, path);
	}
	if (!ret)
		ret = conf_file(c, sr, 1, NCCL_SRC_SYSTEM_FILE, "/etc/nccl.conf");
	if (ret)
		nccl_conf_free(c);
	return ret;
}

const char *nccl_conf_get(const struct nccl_conf *c, const char *name,
			  enum nccl_conf_src *src, int *line)
{
	const struct nccl_conf_entry *e;
	const char *v = env_get(c->envp, name);

	if (src)
		*src = v ? NCCL_SRC_ENV : NCCL_SRC_UNSET;
	if (line)
		*line = 0;
	if (v)
		return v;
	e = entry_find(c, name);
	if (!e)
		return NULL;
	if (src)
		*src = e->src;
	if (line)
		*line = e->line;
	return e->value;
}

const char *nccl_conf_first_setting(const struct nccl_conf *c,
				    enum nccl_conf_src *src)
{
	for (const char *const *e = c->envp; e && *e; e++)
		if (!strncmp(*e, "NCCL_", 5) && strchr(*e, '=')) {
			*src = NCCL_SRC_ENV;
			return *e;
		}
	for (size_t i = 0; i < c->n; i++)
		if (!strncmp(c->e[i].name, "NCCL_", 5)) {
			*src = c->e[i].src;
			return c->e[i].name;
		}
	*src = NCCL_SRC_UNSET;
	return NULL;
}

void nccl_conf_free(struct nccl_conf *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->e[i].name);
		free(c->e[i].value);
	}
	free(c->e);
	c->e = NULL;
	c->n = c->cap = 0;
}
