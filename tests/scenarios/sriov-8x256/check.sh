# args: --timeout 120 --deadline 300, not the defaults: under ASan on two
# busy cores the registration stage of this many devices takes tens of
# seconds, and the case tests completeness, not the deadline.
# Issue 24 item 3: a node whose count of RDMA devices passes every former
# fixed array (8 GPUs, 8 ConnectX-7 PFs with 31 SR-IOV VFs each: 256 RDMA
# devices, 2048 pairs) gives a complete report (tests/scenarios/node-scale-check.py).
set -eu
python3 "$TOP/tests/scenarios/node-scale-check.py" "$WORK/out.json" \
	"$WORK/cuda.conf" "$WORK/verbs.conf"
