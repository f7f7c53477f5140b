/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_VENDOR_JSON_H
#define GDRCHECK_VENDOR_JSON_H

/*
 * The vendor-layer answers (struct vendor_facts: CUDA attributes and
 * exports, verbs devices, ports and probe results, registrations and
 * transfers as outcomes, each stage's state) as a versioned JSON document,
 * encoded and decoded with jansson. --capture stores it in the archive as
 * VENDOR_FACTS_PATH; --sysroot on an extracted capture decodes it instead
 * of loading this machine's libraries, so the replay decides as the
 * captured node did.
 *
 * Format: { "format": "gdrcheck-vendor-facts", "version": 1,
 * "facts": { "stage": [...], "cuda": {...}, "verbs": {...}, "reg": {...} } }
 * with one member per field of vendor.h's structures (same names). Text
 * that is not valid UTF-8 (a library's output) is { "hex": "..." }. A
 * reader refuses another format or version, and any member missing or of
 * the wrong type: a replay is exact or it does not happen.
 */
#include <stddef.h>

#include "access/sysroot.h"
#include "access/vendor.h"

#define VENDOR_FACTS_PATH	"/gdrcheck/vendor-facts.json"
#define VENDOR_FACTS_FORMAT	"gdrcheck-vendor-facts"
#define VENDOR_FACTS_VERSION	1

/* The document as a NUL-terminated string (free()), or NULL (no memory). */
char *vendor_json_encode(const struct vendor_facts *vf);

/*
 * Fills *vf (zeroed first) from text; 0, or -1 with why in err
 * ("version 7, this gdrcheck reads 1", "facts.cuda.count: not an integer").
 */
int vendor_json_decode(const char *text, size_t len, struct vendor_facts *vf,
		       char *err, size_t errlen);

/* --capture: hands the encoded facts to the sysroot layer's recorder. */
void vendor_json_record(struct sysroot *sr, const struct vendor_facts *vf);

/*
 * --sysroot: reads VENDOR_FACTS_PATH inside the sysroot into *vf.
 * 1 replayed (vf->replayed_from says from where), 0 no such file (a capture
 * without vendor facts), -1 unreadable or refused (why in err).
 */
int vendor_json_replay(struct sysroot *sr, struct vendor_facts *vf, char *err,
		       size_t errlen);

#endif
