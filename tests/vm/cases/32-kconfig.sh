#!/bin/sh
# host.kconfig on the Debian kernel the guest runs: there is no
# /proc/config.gz (Debian builds without CONFIG_IKCONFIG), so the gate reads
# /boot/config-$(uname -r), the file the kernel package ships (put into the
# image by build-initramfs.sh). Expect KCONFIG_OK with the option values
# exactly as grep finds them in that file; then the same file with
# CONFIG_INFINIBAND_USER_MEM taken out (a copy over it, restored) must turn
# the gate BLOCKED KCONFIG_NO_USER_MEM: the result follows the real file.
set -eu
# shellcheck source=../guest/lib.sh
. /opt/vm/lib.sh
need_gdrcheck

cfg=/boot/config-$(uname -r)
check "$cfg is in the image" test -r "$cfg"
check "no /proc/config.gz on this kernel" test ! -e /proc/config.gz
val() { sed -n "s/^$1=//p" "$cfg"; }
dmabuf=$(val CONFIG_DMA_SHARED_BUFFER)
ib=$(val CONFIG_INFINIBAND)
umem=$(val CONFIG_INFINIBAND_USER_MEM)
say "$cfg: DMA_SHARED_BUFFER=$dmabuf INFINIBAND=$ib INFINIBAND_USER_MEM=$umem"
cp "$cfg" orig.config
trap 'cp orig.config "$cfg"' EXIT
trap 'exit 143' TERM INT

run_json ok.json "$GDRCHECK" --json --only host.kconfig
jq_checks ok.json --arg src "$cfg" --arg d "$dmabuf" --arg i "$ib" --arg u "$umem" <<'CHECKS'
host.kconfig PASS KCONFIG_OK from /boot/config-RELEASE
	.results[] | select(.gate=="host.kconfig") | .status=="PASS" and
	.reason_code=="KCONFIG_OK" and .evidence.source==$src
its values are the file's
	.results[] | select(.gate=="host.kconfig") | .evidence |
	.CONFIG_DMA_SHARED_BUFFER==$d and .CONFIG_INFINIBAND==$i and
	.CONFIG_INFINIBAND_USER_MEM==$u
CHECKS

grep -v '^CONFIG_INFINIBAND_USER_MEM=' orig.config >"$cfg"
run_json nouser.json "$GDRCHECK" --json --only host.kconfig
cp orig.config "$cfg"
jq_checks nouser.json --arg src "$cfg" <<'CHECKS'
without CONFIG_INFINIBAND_USER_MEM: BLOCKED KCONFIG_NO_USER_MEM
	.results[] | select(.gate=="host.kconfig") | .status=="BLOCKED" and
	.reason_code=="KCONFIG_NO_USER_MEM" and .evidence.source==$src and
	.evidence.CONFIG_INFINIBAND_USER_MEM=="not set"
CHECKS
check "$cfg restored" cmp -s orig.config "$cfg"
