#!/bin/sh
# The docs the gate catalog owns must match it: the man page's REASON CODES
# section and the JSON schema's reason_code enum are what
# `gdrcheck --list-codes --json` says (a diff when not; `make catalog-docs`
# rewrites them). Ends with "catalog: N passed, N failed".
#   tests/check-catalog.sh [--update]
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
bin=${GDRCHECK_BIN:-$top/gdrcheck}
json=$(mktemp)
trap 'rm -f "$json"' EXIT
if ! "$bin" --list-codes --json >"$json"; then
	echo "FAIL gdrcheck --list-codes --json"
	echo "catalog: 0 passed, 1 failed"
	exit 1
fi
if [ "${1:-}" = --update ]; then
	exec python3 tests/catalog-docs.py "$json" update
fi
python3 tests/catalog-docs.py "$json" check
