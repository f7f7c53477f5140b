// SPDX-License-Identifier: MIT
/*
 * --redact: make a report safe to attach to a bug ticket. The hostname is
 * replaced where it is a whole token, GPU and MIG UUIDs become numbered
 * placeholders (equal UUIDs, equal placeholders), and GIDs, GUIDs and MAC
 * addresses in any reason, remediation, label or evidence string are
 * masked. Everything else
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

/* A byte that continues a hostname-like word ("mlx5" in "mlx5_0"). */
static bool word_byte(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-';
}

/* Does host occur at p as a whole token of s? */
static bool host_at(const char *s, const char *p, const char *host, size_t hl)
{
	return !strncmp(p, host, hl) && (p == s || !word_byte(p[-1])) &&
	       !word_byte(p[hl]);
}

/*
 * s with the hostname masked where it is a whole token (never inside
 * another word or a device name: a host named mlx5 leaves mlx5_0 alone);
 * s itself when there is none.
 */
static char *mask_word(struct report *r, char *s, const char *host,
		       const char *mask)
{
	size_t hl = strlen(host), ml = strlen(mask), count = 0;
	char *out, *w;
	const char *p;

	/* One letter identifies nothing, and " x " joins pair lists. */
	if (hl < 2)
		return s;
	for (p = s; (p = strstr(p, host)); p++)
		count += host_at(s, p, host, hl);
	if (!count)
		return s;
	out = report_alloc(r, strlen(s) + count * (ml > hl ? ml - hl : 0) + 1);
	for (w = out, p = s; *p;) {
		if (host_at(s, p, host, hl)) {
			memcpy(w, mask, ml);
			w += ml;
			p += hl;
		} else {
			*w++ = *p++;
		}
	}
	*w = '\0';
	return out;
}

static char *mask_host(struct report *r, char *s, const char *host)
{
	return mask_word(r, s, host, HOST_MASK);
}

/*
 * GPU and MIG UUIDs ("GPU-" or "MIG-" and 36 characters of 8-4-4-4-12
 * hex) become "GPU-<uuidN>" (N in order of first sight), so equal UUIDs
 * read equal and a report still says which GPU is which.
 */
#define UUID_LEN 36
struct uuid_map {
	char seen[64][UUID_LEN + 1];
	int n;
};

static bool is_uuid(const char *p)
{
	static const int dash[] = { 8, 13, 18, 23 };

	for (int i = 0, d = 0; i < UUID_LEN; i++) {
		if (d < 4 && i == dash[d]) {
			if (p[i] != '-')
				return false;
			d++;
		} else if (!isalnum((unsigned char)p[i])) {
			return false;	/* hex on real GPUs; any letter masks */
		}
	}
	return !isalnum((unsigned char)p[UUID_LEN]);
}

static char *mask_uuids(struct report *r, char *s, struct uuid_map *m)
{
	size_t len = strlen(s);
	char *out = NULL, *w = NULL;

	for (size_t i = 0; i < len;) {
		char tag[32];
		int k;

		if (i + 4 + UUID_LEN > len ||
		    (strncmp(s + i, "GPU-", 4) && strncmp(s + i, "MIG-", 4)) ||
		    (i && word_byte(s[i - 1])) || !is_uuid(s + i + 4)) {
			if (w)
				*w++ = s[i];
			i++;
			continue;
		}
		for (k = 0; k < m->n && strncmp(m->seen[k], s + i + 4,
						  UUID_LEN); k++)
			;
		if (k == m->n && m->n < 64) {
			memcpy(m->seen[m->n], s + i + 4, UUID_LEN);
			m->seen[m->n++][UUID_LEN] = '\0';
		}
		if (!out) {
			/* A placeholder is never longer than a UUID. */
			out = report_alloc(r, len + 1);
			memcpy(out, s, i);
			w = out + i;
		}
		snprintf(tag, sizeof(tag), "%.4s<uuid%d>", s + i, k);
		memcpy(w, tag, strlen(tag));
		w += strlen(tag);
		i += 4 + UUID_LEN;
	}
	if (!out)
		return s;
	*w = '\0';
	return out;
}

static void scrub(struct report *r, char **s, const char *host,
		  struct uuid_map *m)
{
	if (!*s)
		return;
	*s = mask_uuids(r, mask_host(r, *s, host), m);
	mask_ids(*s);
}

/* Fixed-size strings: masked into the report's memory, copied back. */
static void scrub_buf(struct report *r, char *buf, size_t len,
		      const char *host, struct uuid_map *m)
{
	char *s = mask_uuids(r, mask_host(r, buf, host), m);

	/* Cut between whole UTF-8 sequences when the mask made it longer. */
	if (s != buf)
		report_clean(buf, len, s);
	mask_ids(buf);
}

/* Length of a dotted-quad IPv4 address at p, or 0. */
static size_t ipv4_at(const char *p)
{
	size_t n = 0;

	for (int part = 0; part < 4; part++) {
		int d = 0;

		while (isdigit((unsigned char)p[n]) && d < 3)
			n++, d++;
		if (!d || isdigit((unsigned char)p[n]))
			return 0;
		if (part < 3 && p[n++] != '.')
			return 0;
	}
	return n;
}

/* IPv4 addresses in place: each digit an x (RoCE GIDs' addresses). */
static void mask_ipv4(char *s)
{
	for (char *p = s; *p; p++) {
		size_t n;

		if (p > s && (isalnum((unsigned char)p[-1]) || p[-1] == '.'))
			continue;
		n = ipv4_at(p);
		for (size_t i = 0; i < n; i++)
			if (p[i] != '.')
				p[i] = 'x';
		p += n ? n - 1 : 0;
	}
}

/*
 * Two-node mode: the other node's name and address, wherever the peer
 * results or the peer object carry them (its GIDs are 8x4 groups:
 * mask_ids took them already).
 */
static void redact_peer(struct report *r)
{
	struct peer_report *p = &r->peer;
	char name[sizeof(p->peer_host)], addr[sizeof(p->peer_addr)];

	if (!p->active)
		return;
	snprintf(name, sizeof(name), "%s", p->peer_host);
	/* "10.0.0.2:18515": the address without its port. */
	snprintf(addr, sizeof(addr), "%.*s", (int)strcspn(p->peer_addr, ":"),
		 p->peer_addr);
	for (size_t i = 0; i < r->nres; i++) {
		struct result *res = &r->res[i];

		if (res->layer != L_PEER)
			continue;
		for (int k = 0; k < 2; k++) {
			const char *w = k ? addr : name;
			const char *mask = k ? "<peer-addr>" : "<peer-host>";

			if (!*w)
				continue;
			res->reason = mask_word(r, res->reason, w, mask);
			for (size_t e = 0; e < res->nev; e++)
				if (res->ev[e].type == EV_STR)
					res->ev[e].s = mask_word(r, res->ev[e].s,
								 w, mask);
		}
		mask_ipv4(res->reason);
		for (size_t e = 0; e < res->nev; e++)
			if (res->ev[e].type == EV_STR)
				mask_ipv4(res->ev[e].s);
	}
	for (int i = 0; i < p->nrails; i++)
		snprintf(p->rails[i].peer_host, sizeof(p->rails[i].peer_host),
			 "<peer-host>");
	snprintf(p->peer_host, sizeof(p->peer_host), "<peer-host>");
	snprintf(p->peer_addr, sizeof(p->peer_addr), "<peer-addr>");
	snprintf(p->endpoint, sizeof(p->endpoint), "<peer-endpoint>");
	p->peer_summary[0] = '\0';
}

void report_redact(struct report *r)
{
	char host[sizeof(r->meta.hostname)];
	struct uuid_map *m = report_alloc(r, sizeof(*m));

	m->n = 0;
	snprintf(host, sizeof(host), "%s", r->meta.hostname);
	/* The GPUs' own UUIDs first: <uuid0> is GPU0's. */
	for (size_t i = 0; i < r->nsubj; i++)
		scrub_buf(r, r->subj[i].uuid, sizeof(r->subj[i].uuid), host, m);
	for (size_t i = 0; i < r->nres; i++) {
		struct result *res = &r->res[i];

		scrub(r, &res->reason, host, m);
		scrub(r, &res->remediation, host, m);
		for (size_t e = 0; e < res->nev; e++)
			if (res->ev[e].type == EV_STR)
				scrub(r, &res->ev[e].s, host, m);
	}
	for (size_t i = 0; i < r->nsubj; i++)
		scrub_buf(r, r->subj[i].label, sizeof(r->subj[i].label), host,
			  m);
	for (int p = 0; p < PATH_COUNT; p++)
		scrub_buf(r, r->path[p].summary, sizeof(r->path[p].summary),
			  host, m);
	scrub_buf(r, r->meta.sysroot, sizeof(r->meta.sysroot), host, m);
	redact_peer(r);
	snprintf(r->meta.hostname, sizeof(r->meta.hostname), HOST_MASK);
	r->meta.redacted = true;
}
