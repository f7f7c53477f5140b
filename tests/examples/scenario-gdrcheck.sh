#!/bin/sh
# A stand-in for gdrcheck on a "node" of a fake Slurm sweep: the node name
# ($SLURMD_NODENAME) is a scenario of tests/scenarios, whose sysroot was
# built under $SYSROOTS; runs the real ./gdrcheck on it with the test
# doubles, passing every argument through.
set -eu
: "${TOP:?}" "${SYSROOTS:?}" "${SLURMD_NODENAME:?}"
case=$TOP/tests/scenarios/$SLURMD_NODENAME
cuda=/dev/null
verbs=/dev/null
[ -f "$case/cuda.conf" ] && cuda=$case/cuda.conf
[ -f "$case/verbs.conf" ] && verbs=$case/verbs.conf
extra=
[ -f "$case/args" ] && extra=$(sed "s|@DOUBLES@|$TOP/tests/doubles|g" "$case/args")
# shellcheck disable=SC2086 # extra is a word list
exec env FAKE_CUDA_SCENARIO="$cuda" FAKE_VERBS_SCENARIO="$verbs" \
	GDRCHECK_LIBCUDA="$TOP/tests/doubles/libcuda-fake.so" \
	GDRCHECK_LIBIBVERBS="$TOP/tests/doubles/libibverbs-fake.so" \
	"$TOP/gdrcheck" --sysroot "$SYSROOTS/$SLURMD_NODENAME" "$@" $extra
