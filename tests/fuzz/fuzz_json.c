// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for the streaming JSON writer (report/json_writer.c),
 * differential against jansson: for any bytes, the writer's output must be
 * exactly what json_dumps(JSON_INDENT(2)) makes of the same value, and a
 * string that jansson refuses as UTF-8 must come out as the placeholder.
 *
 * Input: NUL-separated chunks. Each chunk becomes a string member (key from
 * its first byte); a chunk of 8 bytes also becomes a real and an integer
 * (its bits), which covers every double the writer can be handed.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>

#include "report/json_writer.h"
#include "tests/fuzz/fuzz_common.h"

#define REF_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | \
		   JSON_REAL_PRECISION(10) | JSON_ENCODE_ANY)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = NULL, *want, *s = fuzz_strndup(data, size);
	json_t *ref = json_array();
	struct json_writer w;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	FUZZ_ASSERT(f && ref);
	jw_init(&w, f);
	jw_open_array(&w, NULL);
	for (size_t at = 0; at <= size;) {
		const char *chunk = s + at;
		size_t n = strlen(chunk);
		json_t *o = json_object(), *v = json_string(chunk);
		char key[2] = { n ? chunk[0] : 'k', '\0' };

		jw_open_object(&w, NULL);
		jw_string(&w, "s", chunk);
		json_object_set_new(o, "s", v ? v :
				    json_string("<not valid UTF-8>"));
		FUZZ_ASSERT(jw_valid_utf8(chunk) == (v != NULL));
		if (n == 8) {
			double d;
			long long i;

			memcpy(&d, chunk, sizeof(d));
			memcpy(&i, chunk, sizeof(i));
			jw_real(&w, "d", d);
			/* jansson has no NaN or infinity: the writer's null. */
			json_object_set_new(o, "d", isfinite(d) ?
					    json_real(d) : json_null());
			jw_int(&w, "i", i);
			json_object_set_new(o, "i", json_integer(i));
		}
		if (jw_valid_utf8(key) && key[0] != 's' && key[0] != 'd' &&
		    key[0] != 'i') {
			jw_bool(&w, key, n & 1);
			json_object_set_new(o, key, json_boolean(n & 1));
		}
		jw_close_object(&w);
		json_array_append_new(ref, o);
		at += n + 1;
	}
	jw_close_array(&w);
	FUZZ_ASSERT(jw_finish(&w) == 0);
	FUZZ_ASSERT(fclose(f) == 0);

	want = json_dumps(ref, REF_FLAGS);
	FUZZ_ASSERT(want);
	FUZZ_ASSERT(len == strlen(want) + 1);
	FUZZ_ASSERT(!memcmp(text, want, len - 1) && text[len - 1] == '\n');
	free(want);
	free(text);
	json_decref(ref);
	free(s);
	return 0;
}
