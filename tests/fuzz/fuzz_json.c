// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for the JSON output (report/json_out.c): for any
 * bytes, the pieces dumped one by one by jansson and indented to their
 * depth must be exactly what json_dumps(JSON_INDENT(2)) makes of the whole
 * tree, and a string or key that jansson refuses as UTF-8 must come out as
 * the placeholder.
 *
 * Input: NUL-separated chunks. Each chunk becomes a string member (key from
 * its first byte); a chunk of 8 bytes also becomes a real and an integer
 * (its bits), which covers every double the output can be handed.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>

#include "report/json_out.h"
#include "tests/fuzz/fuzz_common.h"

static json_t *piece(const char *chunk, size_t n, bool ref)
{
	json_t *o = json_object(), *v = json_string(chunk);
	char key[2] = { n ? chunk[0] : 'k', '\0' };

	FUZZ_ASSERT(o);
	/* The reference: jansson's own refusal, then the placeholder. */
	if (ref)
		json_object_set_new(o, "s", v ? v :
				    json_string(JSON_OUT_NOT_UTF8));
	else
		FUZZ_ASSERT(!jo_set(o, "s", jo_string(chunk)));
	if (!ref)
		json_decref(v);
	if (n == 8) {
		double d;
		long long i;

		memcpy(&d, chunk, sizeof(d));
		memcpy(&i, chunk, sizeof(i));
		/* jansson has no NaN or infinity: null. */
		json_object_set_new(o, "d", ref ? (isfinite(d) ? json_real(d) :
				    json_null()) : jo_real(d));
		json_object_set_new(o, "i", json_integer(i));
	}
	if (key[0] != 's' && key[0] != 'd' && key[0] != 'i') {
		if (ref) {
			json_t *k = json_string(key);

			json_object_set_new(o, k ? key : JSON_OUT_NOT_UTF8,
					    json_boolean(n & 1));
			json_decref(k);
		} else {
			FUZZ_ASSERT(!jo_set(o, key, json_boolean(n & 1)));
		}
	}
	return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = NULL, *want, *s = fuzz_strndup(data, size);
	json_t *ref = json_array();
	struct json_out *o = malloc(sizeof(*o));
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	FUZZ_ASSERT(f && ref && o);
	jo_init(o, f);
	jo_raw(o, "[");
	for (size_t at = 0; at <= size;) {
		const char *chunk = s + at;
		size_t n = strlen(chunk);

		jo_raw(o, at ? ",\n  " : "\n  ");
		jo_value(o, piece(chunk, n, false), 1);
		json_array_append_new(ref, piece(chunk, n, true));
		at += n + 1;
	}
	jo_raw(o, "\n]");
	FUZZ_ASSERT(jo_finish(o) == 0);
	FUZZ_ASSERT(fclose(f) == 0);

	want = json_dumps(ref, JSON_OUT_FLAGS);
	FUZZ_ASSERT(want);
	FUZZ_ASSERT(len == strlen(want));
	FUZZ_ASSERT(!memcmp(text, want, len));
	free(want);
	free(text);
	free(o);
	json_decref(ref);
	free(s);
	return 0;
}
