#!/bin/bash
# nhc-run.bash NHCFILE CHECK [ARG]...: what LBNL NHC does with a check file
# (NHC is not packaged in Debian): source it, then run the check function
# with stand-ins of NHC's die, log and dbg. Each prints one line on stdout,
# "DIE <status> <message>", "LOG <message>", "DBG <message>"; die returns
# (as NHC does with NHC_CHECK_ALL=1), so the check's own "return 1" after
# it is exercised. Exits with the check's return status.
die() {
	local rc=$1
	shift
	echo "DIE $rc $*"
	return "$rc"
}
log() { echo "LOG $*"; }
dbg() { echo "DBG $*"; }
# shellcheck disable=SC1090 # the check file under test
. "$1" || exit 99
shift
"$@"
