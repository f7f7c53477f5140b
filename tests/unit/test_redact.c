// SPDX-License-Identifier: MIT
/* --redact masks identifiers and the hostname, and nothing else. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/result.h"
#include "gate/catalog.h"

static void test_redact_masks_identifiers(void **state)
{
	struct report r;
	struct result *res;
	int host;

	(void)state;
	report_init(&r);
	snprintf(r.meta.hostname, sizeof(r.meta.hostname), "gpu-node-17");
	snprintf(r.meta.sysroot, sizeof(r.meta.sysroot), "/captures/gpu-node-17");
	host = report_subject(&r, SUBJ_HOST, "host", "gpu-node-17", NULL, -1);
	res = report_add(&r, gate_find("nic.gid"), L_NIC, P_BOTH, host, ST_PASS, "X",
			 "on gpu-node-17: GID fe80:0000:0000:0000:0c42:a1ff:fe00:0001");
	ev_str(res, "gid", "0000:0000:0000:0000:0000:ffff:0a00:0001");
	ev_str(res, "guid", "0c42:a103:00b6:7a2e");
	ev_str(res, "mac", "0c:42:a1:00:00:01");
	ev_str(res, "pci", "0000:03:00.0");
	ev_str(res, "version", "580.159.04");
	ev_str(res, "time", "02:25:06");
	result_remedy(res, "ssh gpu-node-17 and check");

	report_redact(&r);

	assert_string_equal(r.meta.hostname, "<host>");
	assert_string_equal(r.meta.sysroot, "/captures/<host>");
	assert_string_equal(r.subj[host].label, "<host>");
	assert_string_equal(res->reason,
			    "on <host>: GID xxxx:xxxx:xxxx:xxxx:xxxx:xxxx:xxxx:xxxx");
	assert_string_equal(res->ev[0].s, "xxxx:xxxx:xxxx:xxxx:xxxx:xxxx:xxxx:xxxx");
	assert_string_equal(res->ev[1].s, "xxxx:xxxx:xxxx:xxxx");
	assert_string_equal(res->ev[2].s, "xx:xx:xx:xx:xx:xx");
	/* What makes the report useful stays. */
	assert_string_equal(res->ev[3].s, "0000:03:00.0");
	assert_string_equal(res->ev[4].s, "580.159.04");
	assert_string_equal(res->ev[5].s, "02:25:06");
	assert_string_equal(res->remediation, "ssh <host> and check");
	assert_true(r.meta.redacted);
	report_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_redact_masks_identifiers),
	};

	return cmocka_run_group_tests_name("redact", tests, NULL, NULL);
}
