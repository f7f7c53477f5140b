// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for a capture's vendor answers (access/vendor_json.c,
 * gdrcheck/vendor-facts.json): for any bytes, decoding either refuses
 * with a reason or yields facts whose counts fit their arrays (a replay
 * indexes the arrays by them), and what decoded encodes and decodes again.
 *
 * Input: the file's bytes.
 */
#include <stdio.h>
#include <string.h>

#include "access/vendor_json.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Large: static, not on libFuzzer's stack. */
	static struct vendor_facts a, b;
	char err[512] = "", *text = malloc(size ? size : 1), *again;

	FUZZ_ASSERT(text);
	if (size)
		memcpy(text, data, size);
	if (vendor_json_decode(text, size, &a, err, sizeof(err))) {
		FUZZ_ASSERT(err[0]);	/* a refusal says why */
		free(text);
		return 0;
	}
	FUZZ_ASSERT(a.cuda.gpus_recorded >= 0 &&
		    a.cuda.gpus_recorded <= a.cap.gpus);
	FUZZ_ASSERT(a.nvml.gpus_recorded >= 0 &&
		    a.nvml.gpus_recorded <= a.cap.gpus);
	FUZZ_ASSERT(a.verbs.count >= 0);
	FUZZ_ASSERT(a.reg.npairs >= 0 && a.reg.npairs <= a.cap.pairs);
	FUZZ_ASSERT(a.reg.nnics >= 0 && a.reg.nnics <= a.cap.nics);
	again = vendor_json_encode(&a);
	FUZZ_ASSERT(again);
	FUZZ_ASSERT(!vendor_json_decode(again, strlen(again), &b, err,
					sizeof(err)));
	vendor_facts_free(&b);
	vendor_facts_free(&a);
	free(again);
	free(text);
	return 0;
}
