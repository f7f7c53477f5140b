#!/bin/sh
# A stand-in for srun: records its arguments in $FAKE_SRUN_LOG, skips the
# options, then runs the command once per node of $FAKE_SRUN_NODES (a space
# separated list) with SLURMD_NODENAME set, as one task per node would.
# Exits with the highest task status, as srun does.
set -u
: "${FAKE_SRUN_NODES:?}" "${FAKE_SRUN_LOG:?}"
printf '%s\n' "$*" >>"$FAKE_SRUN_LOG"
while [ $# -gt 0 ]; do
	case $1 in
	-*) shift ;;
	*) break ;;
	esac
done
worst=0
for node in $FAKE_SRUN_NODES; do
	SLURMD_NODENAME=$node "$@"
	rc=$?
	[ $rc -gt $worst ] && worst=$rc
done
exit $worst
