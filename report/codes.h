/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_CODES_H
#define GDRCHECK_CODES_H

#include <stdbool.h>
#include <stdio.h>

/*
 * --list-codes: every gate of the catalog with its layer, scope, stages
 * and dependencies, and every reason code with its statuses, meaning and
 * remedies; as text, or as a JSON document when json. 0, or -1 when out
 * failed.
 */
int catalog_print(FILE *out, bool json);

#endif
