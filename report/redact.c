// SPDX-License-Identifier: MIT
/*
 * --redact: make a report safe to attach to a bug ticket. The hostname is
 * replaced wherever it appears, and GIDs, GUIDs and MAC addresses in any
 * reason, remediation, label or evidence string are masked. Everything else
 * (gate ids, reason codes, PCI addresses, versions) stays: it is what makes
 * the report useful.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/result.h"

#define HOST_MASK "<host>"

/* Length of a run of hex groups "xxxx:xxxx..." (or MAC "xx:xx:..") at p. */
static size_t hex_groups(const char *p, int width, int *groups)
{
	size_t n = 0;

	*groups = 0;
	for (;;) {
		int d = 0;

		while (d < width && isxdigit((unsigned char)p[n + (size_t)d]))
			d++;
		if (d != width || isxdigit((unsigned char)p[n + (size_t)d]))
			return *groups ? n - 1 : 0;
		n += (size_t)d;
		(*groups)++;
		if (p[n] != ':')
			return n;
		n++;
	}
}

/* Mask identifiers in place: 8x4 (GID), 4x4 (GUID), 6x2 (MAC) groups. */
static void mask_ids(char *s)
{
	for (char *p = s; *p; p++) {
		int groups;
		size_t n;

		if (p > s && (isxdigit((unsigned char)p[-1]) || p[-1] == ':'))
			continue;
		n = hex_groups(p, 4, &groups);
		if (!(n && (groups == 8 || groups == 4))) {
			n = hex_groups(p, 2, &groups);
			if (!(n && groups == 6))
				n = 0;
		}
		for (size_t i = 0; i < n; i++)
			if (p[i] != ':')
				p[i] = 'x';
		p += n ? n - 1 : 0;
	}
}

/* s with every occurrence of host masked: s itself when there is none. */
static char *mask_host(struct report *r, char *s, const char *host)
{
	size_t hl = strlen(host), ml = strlen(HOST_MASK), count = 0;
	char *out, *w;
	const char *p;

	if (hl < 2)
		return s;
	for (p = s; (p = strstr(p, host)); p += hl)
		count++;
	if (!count)
		return s;
	out = report_alloc(r, strlen(s) + count * (ml > hl ? ml - hl : 0) + 1);
	for (w = out, p = s; *p;) {
		if (!strncmp(p, host, hl)) {
			memcpy(w, HOST_MASK, ml);
			w += ml;
			p += hl;
		} else {
			*w++ = *p++;
		}
	}
	*w = '\0';
	return out;
}

static void scrub(struct report *r, char **s, const char *host)
{
	if (!*s)
		return;
	*s = mask_host(r, *s, host);
	mask_ids(*s);
}

/* Fixed-size strings: masked into the report's memory, copied back. */
static void scrub_buf(struct report *r, char *buf, size_t len,
		      const char *host)
{
	char *s = mask_host(r, buf, host);

	/* Cut between whole UTF-8 sequences when the mask made it longer. */
	if (s != buf)
		report_clean(buf, len, s);
	mask_ids(buf);
}

void report_redact(struct report *r)
{
	char host[sizeof(r->meta.hostname)];

	snprintf(host, sizeof(host), "%s", r->meta.hostname);
	for (size_t i = 0; i < r->nres; i++) {
		struct result *res = &r->res[i];

		scrub(r, &res->reason, host);
		scrub(r, &res->remediation, host);
		for (size_t e = 0; e < res->nev; e++)
			if (res->ev[e].type == EV_STR)
				scrub(r, &res->ev[e].s, host);
	}
	for (size_t i = 0; i < r->nsubj; i++)
		scrub_buf(r, r->subj[i].label, sizeof(r->subj[i].label), host);
	for (int p = 0; p < PATH_COUNT; p++)
		scrub_buf(r, r->path[p].summary, sizeof(r->path[p].summary),
			  host);
	scrub_buf(r, r->meta.sysroot, sizeof(r->meta.sysroot), host);
	snprintf(r->meta.hostname, sizeof(r->meta.hostname), HOST_MASK);
	r->meta.redacted = true;
}
