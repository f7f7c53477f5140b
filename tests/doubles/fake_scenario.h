/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_FAKE_SCENARIO_H
#define GDRCHECK_FAKE_SCENARIO_H

/*
 * Shared by the libcuda and libibverbs test doubles. Each double links its
 * own copy; everything here is hidden so two doubles loaded into one process
 * never bind to each other's state.
 *
 * Scenario file: one "key = value" per line; blank lines and lines whose
 * first non-blank character is '#' are ignored. Whitespace around key and
 * value is trimmed; a value may be wrapped in double quotes to keep leading
 * or trailing blanks. A later duplicate key wins. A line without '=' is a
 * test setup error and aborts.
 */
#include <stdbool.h>

#define FAKE_HIDDEN __attribute__((visibility("hidden")))

/* Parse the file named by env var @env (unset: every key has its default). */
FAKE_HIDDEN void fake_scenario_load(const char *env);

/* NULL when the key is absent. */
FAKE_HIDDEN const char *fake_get(const char *key);
/* Integer value (strtoll base 0, so 0x.. works); garbage aborts. */
FAKE_HIDDEN long long fake_get_ll(const char *key, long long dflt);
/* printf-style key construction: fake_getf_ll(0, "gpu%d.attr.%d", i, a). */
FAKE_HIDDEN const char *fake_getf(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
FAKE_HIDDEN long long fake_getf_ll(long long dflt, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Fault injection at the entry of exported call @name; @idx is the device
 * ordinal/index the call is about, or -1. For each kind the per-device key
 * "kind.NAME.idx" is looked up before "kind.NAME". Precedence:
 *   hang.NAME = 1      sleeps forever (never returns)
 *   crash.NAME = 1     raise(SIGSEGV)
 *   exit.NAME = N      _exit(N), a library calling exit
 *   fail.NAME = V      returns true and stores V in *val (V = 0: no fault)
 * The caller turns V into its own error convention. Before those, in this
 * order, misbehaviours that let the call go on:
 *   print.NAME = N     N bytes of junk (escapes, bad UTF-8, a NUL, a JSON
 *                      look-alike), half to stdout through stdio, half to
 *                      the stderr descriptor
 *   forkhold.NAME = 1  fork a helper that sleeps forever holding every
 *                      inherited descriptor
 *   forkescape.NAME = 1  the same, after setsid() (out of the group)
 *   closefds.NAME = 1  close every descriptor above 2
 *   ignterm.NAME = 1   ignore and block SIGTERM and SIGINT
 */
FAKE_HIDDEN bool fake_fault(const char *name, int idx, long long *val);

/*
 * Resource ledger. With env FAKE_LEDGER_DIR set, the file
 * "$FAKE_LEDGER_DIR/<tag>.<pid>" is rewritten (atomically, by rename) after
 * every acquire/release and once more at unload, so it survives _exit() and
 * crashes. One line per row, all rows always present, fixed order:
 *     <name> <acquired> <released>\n
 * e.g. "mem 1 1". Balanced means acquired == released on every line. A
 * forked child inherits the counts and writes its own <pid> file.
 */
FAKE_HIDDEN void fake_ledger_init(const char *tag, const char *const *names,
				  int n);
FAKE_HIDDEN void fake_ledger_acquire(int row);
FAKE_HIDDEN void fake_ledger_release(int row);

#endif
