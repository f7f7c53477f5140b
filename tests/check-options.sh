#!/bin/sh
# Command-line contract: a bad option is a usage error (exit 2) with a clear
# message on stderr naming the offending option or value, and nothing on
# stdout (no half report a script could mistake for a result); the good ones
# work: --help and --version exit 0, --list-gates lists every gate a report
# can hold. Runs against the PIX fixture of the registration scenarios with
# the test doubles, so an option wrongly accepted still ends quickly.
#
#   tests/check-options.sh      env GDRCHECK_BIN: the binary (default ./gdrcheck),
#                               GDRCHECK_WRAP: a command to run it under
# Ends with "options: N passed, N failed".
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
bin=${GDRCHECK_BIN:-$top/gdrcheck}
wrap=${GDRCHECK_WRAP:-}	# e.g. valgrind (make valgrind)
work=$(mktemp -d "${TMPDIR:-/tmp}/check-options.XXXXXX")
trap 'rm -rf "$work"' EXIT
pass=0
fail=0

if ! python3 "$top/tests/scenarios/mksysroot.py" \
	"$top/tests/scenarios/reg-ok/sysroot.spec" "$work/sysroot" >/dev/null; then
	echo "options: fixture build failed"
	echo "options: 0 passed, 1 failed"
	exit 1
fi
doubles=${GDRCHECK_DOUBLES:-$top/tests/doubles}
export GDRCHECK_LIBCUDA="$doubles/libcuda-fake.so"
export GDRCHECK_LIBIBVERBS="$doubles/libibverbs-fake.so"
export FAKE_CUDA_SCENARIO="$top/tests/scenarios/reg-ok/cuda.conf"
export FAKE_VERBS_SCENARIO="$top/tests/scenarios/reg-ok/verbs.conf"
export NO_COLOR=1 SOURCE_DATE_EPOCH=0
unset FAKE_LEDGER_DIR

ok() {
	echo "PASS $1"
	pass=$((pass + 1))
}

bad() {
	echo "FAIL $1: $2"
	sed 's/^/     stderr: /' "$work/err" | head -n 3
	fail=$((fail + 1))
}

run() {
	# shellcheck disable=SC2086 # $wrap is a command line
	timeout -k 5 120 $wrap "$bin" "$@" >"$work/out" 2>"$work/err"
}

# usage TOKEN ARG...: exit 2, stdout empty, stderr names TOKEN (fixed string).
usage() {
	token=$1
	shift
	label="usage: $*"
	run "$@"
	rc=$?
	if [ $rc -ne 2 ]; then
		bad "$label" "exit status $rc, expected 2"
	elif [ -s "$work/out" ]; then
		bad "$label" "wrote $(wc -c <"$work/out") bytes to stdout"
	elif ! head -n 1 "$work/err" | grep -q '^gdrcheck: '; then
		bad "$label" "no 'gdrcheck: ' message on stderr"
	elif ! head -n 1 "$work/err" | grep -qF -- "$token"; then
		bad "$label" "the message does not name '$token'"
	else
		ok "$label"
	fi
}

S="--sysroot $work/sysroot"
# shellcheck disable=SC2086 # $S is two words
{
usage "'--bogus'" $S --bogus
usage "'-Z'" $S -Z
usage "--timeout" $S --timeout
usage "-t" $S -t
usage "--require" $S --require
usage "'bogus'" $S --require bogus
usage "'0'" $S --timeout 0
usage "'-5'" $S --timeout -5
usage "'abc'" $S --timeout abc
usage "'1e9'" $S --timeout 1e9
usage "'nan'" $S --timeout nan
usage "'0.05'" $S --timeout 0.05
usage "--deadline" $S --deadline
usage "'0'" $S --deadline 0
usage "'-3'" $S --deadline -3
usage "'1e9'" $S --deadline 1e9
usage "'inf'" $S --deadline inf
usage "'3s'" $S --deadline 3s
usage "'3'" $S --reg-size 3
usage "'5K'" $S --reg-size 5K
usage "'2T'" $S --reg-size 2T
usage "'-1'" $S --reg-size -1
usage "'0'" $S --reg-size 0
usage "'1025M'" $S --reg-size 1025M
usage "'xml'" $S --format xml
usage "--format" $S --format=
usage "'bogus.gate'" $S --only bogus.gate
usage "'nope'" $S --skip nope
usage "--only" $S --only gpu,,nic
usage "--only" $S --only=
# The selection is parsed once, word by word: the first unknown word is
# named, a gate id's prefix or a layer's is no name, --skip is as strict.
usage "'bogus'" $S --only gpu,bogus,nic
usage "'host.kern'" $S --skip host.kern
usage "'gpu.'" $S --skip nic,gpu.
usage "empty gate or layer name in --skip" $S --skip ,host
# Layer names are their gates' id prefix; the long names of schema 1 get a hint.
usage "did you mean mech?" $S --only mechanism
usage "did you mean data?" $S --skip datapath
usage "'FOO'" $S --max-distance FOO
usage "'/nonexistent'" --sysroot /nonexistent
usage "--sysroot" --sysroot ''
usage "--sysroot" --sysroot=
usage "'/nonexistent'" $S --pci-dump /nonexistent
# --nccl-version: only the releases the NCCL model covers (issue 14).
usage "'2.11.4'" $S --nccl-version 2.11.4
usage "'2.31.0'" $S --nccl-version 2.31.0
usage "'2.28'" $S --nccl-version 2.28
usage "'2.28.9x'" $S --nccl-version 2.28.9x
usage "'nccls'" $S --require nccls
usage "--exempt-port needs a port" $S --exempt-port ,
# A bad letter in a bundle is named, not the argument before it.
usage "unknown option '-Z'" $S --quiet -Zj
# --output and --capture naming one file (directly or through a link)
# would lose the archive: refused before anything is written.
usage "name the same file" $S -o "$work/same" --capture "$work/same"
ln -s same "$work/same.lnk"
usage "name the same file" $S -o "$work/same.lnk" --capture "$work/same"
if [ -e "$work/same" ]; then
	bad "--output/--capture collision" "wrote $work/same"
fi
usage "'foo'" $S foo bar
usage "'sometimes'" $S --color=sometimes
usage "--libcuda" $S --libcuda=
# Short-option clusters: the message names the option, not the word.
usage "'-t'" $S -jt
usage "'-t'" $S -vqt
usage "'-x'" $S -jx
usage "'-x'" $S -vxq
# Numbers that overflow are refused, never wrapped into range.
usage "'18014398509481985M'" $S --reg-size 18014398509481985M
usage "'17179869184K'" $S --reg-size 17179869184K
usage "'1099511627776G'" $S --reg-size 1099511627776G
usage "'18446744073709551616'" $S --reg-size 18446744073709551616
usage "'+2M'" $S --reg-size +2M
usage "'1e999'" $S --timeout 1e999
usage "'0x10'" $S --timeout 0x10
usage "'inf'" $S --timeout inf
usage "'99999999999999999999999'" $S --timeout 99999999999999999999999
# The user's words come back cleaned: no escape sequence on the terminal.
usage "'\\x1B[2J'" $S --require "$(printf '\033[2J')"
usage "'-\\x1B'" $S -j"$(printf '\033')"
}
if LC_ALL=C grep -q "$(printf '\033')" "$work/err"; then
	bad "usage errors" "an escape byte reached stderr"
fi

# SOURCE_DATE_EPOCH out of range or malformed: a usage error, never a
# year-10000 timestamp; the last second of 9999 is the largest accepted.
for epoch in 253402300800 -1 99999999999999999999 12abc 1e9 " 5"; do
	SOURCE_DATE_EPOCH=$epoch
	# shellcheck disable=SC2086
	usage "SOURCE_DATE_EPOCH" $S --json
done
SOURCE_DATE_EPOCH=253402300799
# shellcheck disable=SC2086
run $S --json
rc=$?
at=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["generated_at"])' \
	"$work/out" 2>/dev/null)
if [ "$at" = "9999-12-31T23:59:59Z" ] && [ $rc -ne 2 ]; then
	ok "SOURCE_DATE_EPOCH=253402300799 is 9999-12-31T23:59:59Z"
else
	bad "SOURCE_DATE_EPOCH=253402300799" "exit $rc, generated_at '$at'"
fi
SOURCE_DATE_EPOCH=0

# A reader that goes away (`gdrcheck | head -1`): the verdict's exit
# status, nothing on stderr, not death by SIGPIPE (141).
# shellcheck disable=SC2086
run $S
want=$?
for fmt in text json junit prometheus; do
	for reader in "head -n 1" "true"; do
		# shellcheck disable=SC2086
		{ timeout -k 5 120 $wrap "$bin" $S -v --format $fmt 2>"$work/err"
		  echo $? >"$work/rc"; } | $reader >/dev/null
		got=$(cat "$work/rc")
		if [ "$got" = "$want" ] && [ ! -s "$work/err" ]; then
			ok "--format $fmt | $reader: exit $got, quiet"
		else
			bad "--format $fmt | $reader" "exit $got (want $want)"
		fi
	done
done

# --help / --version: exit 0 on stdout, nothing on stderr.
if run --help && grep -q '^Usage: gdrcheck' "$work/out" && [ ! -s "$work/err" ]; then
	ok "--help"
else
	bad "--help" "exit status, Usage line or stderr wrong"
fi
if run -h && grep -q '^Usage: gdrcheck' "$work/out"; then ok "-h"; else bad "-h" "no usage"; fi
if run --version && grep -qE '^gdrcheck [0-9]+\.[0-9]+\.[0-9]+$' "$work/out" &&
	[ ! -s "$work/err" ]; then
	ok "--version"
else
	bad "--version" "exit status or 'gdrcheck X.Y.Z' line wrong"
fi
# --libnccl is read for its version: a FIFO or an endless device there is
# refused without blocking, and the run ends well inside its deadline.
mkfifo "$work/libnccl.fifo"
for lib in "$work/libnccl.fifo" /dev/zero "$work"; do
	timeout -k 5 60 $wrap "$bin" --sysroot "$work/sysroot" --only topo \
		--json --libnccl "$lib" >"$work/out" 2>"$work/err"
	rc=$?
	if [ $rc -ge 124 ]; then
		bad "--libnccl $lib" "hung or killed (exit $rc)"
	elif ! grep -q 'no version in its name or contents' "$work/out"; then
		bad "--libnccl $lib" "version source does not say it was unreadable"
	else
		ok "--libnccl $lib: refused, exit $rc"
	fi
done
# Every option --help shows is in the option parser: none is a usage error.
run --help
for o in $(grep -oE -- '--[a-z][a-z0-9-]+' "$work/out" | sort -u); do
	case $o in
	--help | --version | --list-gates | --list-codes) continue ;;
	--json | --quiet | --redact | --every-gpu | --warn-fails | --no-alloc | \
	--no-datapath | --every-pair | --no-color | --verbose | --color) args="$o" ;;
	--format) args="$o json" ;;
	--only) args="$o host" ;;
	--skip) args="$o host" ;;
	--output) args="$o $work/report.txt" ;;
	--require) args="$o dmabuf" ;;
	--max-distance) args="$o SYS" ;;
	--exempt-port) args="$o mlx5_0/1" ;;
	--capture)
		# make msan-check: Debian's zlib is not instrumented (not a pass).
		if [ -n "${GDRCHECK_NO_ZLIB:-}" ]; then
			echo "SKIP $o: $GDRCHECK_NO_ZLIB"
			continue
		fi
		args="$o $work/cap.tar.gz" ;;
	--sysroot) continue ;;
	--libcuda) args="$o $GDRCHECK_LIBCUDA" ;;
	--libibverbs) args="$o $GDRCHECK_LIBIBVERBS" ;;
	--libnvml) args="$o $doubles/libnvidia-ml-fake.so" ;;
	--libmlx5) args="$o $doubles/libmlx5-fake.so" ;;
	--libpci) args="$o /nonexistent/libpci.so.3" ;;
	--pci-dump) continue ;;
	--libnccl) args="$o /nonexistent/libnccl.so.2.28.9" ;;
	--nccl-version) args="$o 2.28.9" ;;
	--timeout) args="$o 5" ;;
	--deadline) args="$o 20" ;;
	--reg-size) args="$o 4K" ;;
	# Two-node mode's: accepted and refused in tests/check-peer.py.
	--listen | --peer | --token | --token-file | --pairs | --min-bandwidth)
		continue ;;
	*) bad "help lists $o" "no good value known to this test: add it"; continue ;;
	esac
	# shellcheck disable=SC2086 # word lists
	run $S $args
	rc=$?
	case $rc in
	0 | 1 | 3) ok "accepted: $args" ;;
	*) bad "accepted: $args" "exit status $rc" ;;
	esac
done

# --list-gates: every gate a full report holds, in chain order, exit 0 (the
# peer layer's run in two-node mode only: tests/check-peer.py).
run -L
rc=$?
listed_all=$(awk 'NF >= 2 && $1 ~ /^[a-z]+\.[a-z0-9_]+$/ { print $1 }' "$work/out")
listed=$(echo "$listed_all" | grep -v '^peer\.')
run $S --json --timeout 5
gates=$(python3 -c 'import json, sys
seen = []
for r in json.load(open(sys.argv[1]))["results"]:
    if r["gate"] not in seen:
        seen.append(r["gate"])
print("\n".join(seen))' "$work/out" 2>/dev/null)
if [ $rc -ne 0 ]; then
	bad "--list-gates" "exit status $rc"
elif [ -z "$gates" ]; then
	bad "--list-gates" "no JSON report to compare with"
elif [ "$listed" != "$gates" ]; then
	bad "--list-gates" "differs from the gates of a report (in order):
$(printf '%s\n' "$listed" >"$work/a"; printf '%s\n' "$gates" >"$work/b"; diff "$work/a" "$work/b")"
else
	ok "--list-gates ($(echo "$listed" | wc -l) gates, the report's order)"
fi

# --list-codes: the catalog, text and JSON, exit 0; every gate of
# --list-gates is in both, in the same order, and every code a report can
# carry is one of the JSON's codes.
run --list-codes
rc=$?
text_gates=$(awk '/^[a-z]+\.[a-z0-9_]+  layer / { print $1 }' "$work/out")
if [ $rc -ne 0 ]; then
	bad "--list-codes" "exit status $rc"
elif [ "$text_gates" != "$listed_all" ]; then
	bad "--list-codes" "its gates differ from --list-gates"
else
	ok "--list-codes (text, $(echo "$text_gates" | wc -l) gates)"
fi
run --list-codes --json
rc=$?
cp "$work/out" "$work/codes.json"
run $S --json --timeout 5
why=$(python3 -c 'import json, sys
cat = json.load(open(sys.argv[1]))
rep = json.load(open(sys.argv[2]))
codes = {c["code"]: c for c in cat["codes"]}
gates = [g["id"] for g in cat["gates"]]
if gates != sys.argv[3].split():
    print("gates differ from --list-gates")
for r in rep["results"]:
    c = codes.get(r["reason_code"])
    if c is None:
        print("report code %s not in the catalog" % r["reason_code"])
    elif c["gate"] not in (None, r["gate"]):
        print("%s emitted by %s, catalog says %s" % (c["code"], r["gate"], c["gate"]))
    elif r["status"] not in c["statuses"]:
        print("%s with status %s" % (c["code"], r["status"]))' \
	"$work/codes.json" "$work/out" "$listed_all" 2>&1)
if [ $rc -ne 0 ]; then
	bad "--list-codes --json" "exit status $rc"
elif [ -n "$why" ]; then
	bad "--list-codes --json" "$why"
else
	ok "--list-codes --json (every code of a report is in it)"
fi


# --- --output and --capture damage nothing -----------------------------------
# Each case runs in its own directory with a canary file beside the target:
# afterwards the directory holds exactly what the case expects, the canary
# is unchanged, and the planted names are as they were.
O="$S --only host"
listing() { (cd "$1" && find . | sort | while read -r f; do
	printf '%s %s\n' "$f" "$(stat -c %F "$f")"; done) ; }
fresh() {
	d="$work/out-$1"
	rm -rf "$d"
	mkdir -p "$d"
	echo "canary $1" >"$d/canary"
}
canary_ok() { [ "$(cat "$d/canary")" = "canary $1" ]; }
# --only host decides nothing (exit 3) but writes a whole report, quietly.
ran_ok() { [ $rc -eq 3 ] && [ ! -s "$work/err" ]; }
is_report() { grep -q '^gdrcheck: ' "$1" || grep -q 'GPUDirect RDMA readiness' "$1"; }

# A new file: written whole, no temporary left beside it.
fresh new
run $O -o "$d/report.txt"; rc=$?
if ran_ok && is_report "$d/report.txt" && canary_ok new &&
	[ "$(ls -A "$d" | sort | tr '\n' ' ')" = "canary report.txt " ]; then
	ok "output: new file, nothing else left"
else
	bad "output: new file" "rc $rc, dir: $(ls -A "$d" | tr '\n' ' ')"
fi
# An existing file: replaced by a rename (new inode), its mode kept.
chmod 640 "$d/report.txt"
ino=$(stat -c %i "$d/report.txt")
run $O --json -o "$d/report.txt"; rc=$?
if ran_ok && [ "$(stat -c %i "$d/report.txt")" != "$ino" ] &&
	[ "$(stat -c %a "$d/report.txt")" = 640 ] &&
	python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$d/report.txt" &&
	[ "$(ls -A "$d" | wc -l)" = 2 ]; then
	ok "output: existing file replaced whole, mode kept"
else
	bad "output: existing file" "rc $rc, mode $(stat -c %a "$d/report.txt")"
fi

# A device node is written, never replaced. As root, a private /dev/null
# node and /dev/stdout link, so that a regression damages only those.
null=/dev/null stdout=/dev/stdout
if [ "$(id -u)" = 0 ] && mknod -m 666 "$work/null" c 1 3 2>/dev/null; then
	null=$work/null
	ln -s /proc/self/fd/1 "$work/stdout"
	stdout=$work/stdout
fi
run $O -o "$null"; rc=$?
if ran_ok && [ -c "$null" ] && [ ! -s "$work/out" ] &&
	[ -z "$(ls -A "$(dirname "$null")" | grep -F '.null.')" ]; then
	ok "output: a device ($null) written directly"
else
	bad "output: a device ($null)" "rc $rc, now: $(stat -c %F "$null")"
fi
# /dev/stdout (a link to the process's stdout) likewise.
run $O -o "$stdout"; rc=$?
if ran_ok && is_report "$work/out" && [ -L "$stdout" ]; then
	ok "output: /dev/stdout written through"
else
	bad "output: /dev/stdout" "rc $rc"
fi

# A FIFO with a reader gets the report; the FIFO stays a FIFO.
fresh fifo
mkfifo "$d/pipe"
timeout 60 cat "$d/pipe" >"$work/fifo-read" &
reader=$!
run $O -o "$d/pipe"; rc=$?
wait $reader
if ran_ok && [ -p "$d/pipe" ] && is_report "$work/fifo-read" &&
	canary_ok fifo && [ "$(ls -A "$d" | wc -l)" = 2 ]; then
	ok "output: FIFO with a reader"
else
	bad "output: FIFO with a reader" "rc $rc, $(stat -c %F "$d/pipe")"
fi
# Without a reader: a clear error at once (exit 3), not a hang.
run $O -o "$d/pipe"; rc=$?
if [ $rc -eq 3 ] && [ -p "$d/pipe" ] && grep -qF "$d/pipe" "$work/err"; then
	ok "output: FIFO without a reader fails (exit 3), no hang"
else
	bad "output: FIFO without a reader" "rc $rc"
fi

# Links planted at every name a guessing attacker would try (the old
# NAME.tmp.PID for the next pids, dot names) are never followed.
fresh plant
echo "victim" >"$work/victim"
next=$(sh -c 'echo $$')
for i in $(seq 0 300); do
	ln -s "$work/victim" "$d/report.prom.tmp.$((next + i))"
done
ln -s "$work/victim" "$d/.report.prom"
ln -s "$work/victim" "$d/.report.prom.tmp"
before=$(listing "$d")
run $O --format prometheus -o "$d/report.prom"; rc=$?
after=$(listing "$d" | grep -v '^\./report\.prom regular file$')
if ran_ok && [ "$(cat "$work/victim")" = victim ] &&
	[ "$before" = "$after" ] && [ -f "$d/report.prom" ] &&
	[ ! -L "$d/report.prom" ] && canary_ok plant; then
	ok "output: planted links at temporary names never followed"
else
	bad "output: planted links" "rc $rc, victim: $(head -c 40 "$work/victim")"
fi

# The target itself a link to a file: written through, the link stays.
fresh link
echo "old" >"$d/real.txt"
ln -s real.txt "$d/report.txt"
run $O -o "$d/report.txt"; rc=$?
if ran_ok && [ -L "$d/report.txt" ] &&
	[ "$(readlink "$d/report.txt")" = real.txt ] && is_report "$d/real.txt" &&
	[ "$(ls -A "$d" | wc -l)" = 3 ] && canary_ok link; then
	ok "output: a link target is written through, the link kept"
else
	bad "output: link target" "rc $rc, $(ls -lA "$d" | tail -n +2 | tr '\n' ';')"
fi
# A dangling link: nothing is created through it (exit 3).
fresh dangling
ln -s "$work/created-through-link" "$d/report.txt"
before=$(listing "$d")
run $O -o "$d/report.txt"; rc=$?
if [ $rc -eq 3 ] && [ ! -e "$work/created-through-link" ] &&
	[ "$before" = "$(listing "$d")" ] && [ ! -s "$work/out" ]; then
	ok "output: a dangling link creates nothing (exit 3)"
else
	bad "output: dangling link" "rc $rc"
fi

# A directory, or a missing directory: clear error, exit 3, nothing made.
fresh dir
mkdir "$d/sub"
before=$(listing "$d")
run $O -o "$d/sub"; rc=$?
if [ $rc -eq 3 ] && [ "$before" = "$(listing "$d")" ] &&
	grep -qF "$d/sub" "$work/err"; then
	ok "output: a directory target fails (exit 3)"
else
	bad "output: directory target" "rc $rc"
fi
run $O -o "$d/missing/report.txt"; rc=$?
if [ $rc -eq 3 ] && [ "$before" = "$(listing "$d")" ] &&
	grep -q 'No such file or directory' "$work/err"; then
	ok "output: a missing directory fails (exit 3)"
else
	bad "output: missing directory" "rc $rc"
fi
# An unwritable directory (as an unprivileged user: root writes anyway).
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	fresh ro
	chmod 755 "$work" "$d"
	echo "keep" >"$d/report.txt"
	before=$(listing "$d")
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		timeout -k 5 120 $wrap "$bin" $O -o "$d/report.txt" \
		>"$work/out" 2>"$work/err"
	rc=$?
	chmod 700 "$work"
	if [ $rc -eq 3 ] && [ "$(cat "$d/report.txt")" = keep ] &&
		[ "$before" = "$(listing "$d")" ] &&
		grep -q 'Permission denied' "$work/err"; then
		ok "output: an unwritable directory fails (exit 3), file kept"
	else
		bad "output: unwritable directory" "rc $rc"
	fi
fi

# --capture follows the same rules.
fresh cap
for i in $(seq 0 300); do
	ln -s "$work/victim" "$d/cap.tar.gz.tmp.$((next + i))"
done
before=$(listing "$d")
run $O --capture "$d/cap.tar.gz" -o "$null"; rc=$?
after=$(listing "$d" | grep -v '^\./cap\.tar\.gz regular file$')
if ran_ok && [ "$(cat "$work/victim")" = victim ] &&
	[ "$before" = "$after" ] && tar -tzf "$d/cap.tar.gz" >/dev/null &&
	canary_ok cap; then
	ok "capture: planted links never followed, archive whole"
else
	bad "capture: planted links" "rc $rc"
fi
ln -s cap.tar.gz "$d/cap-link.tar.gz"
run $O --capture "$d/cap-link.tar.gz" -o "$null"; rc=$?
if ran_ok && [ -L "$d/cap-link.tar.gz" ] && tar -tzf "$d/cap.tar.gz" >/dev/null; then
	ok "capture: a link target is written through, the link kept"
else
	bad "capture: link target" "rc $rc"
fi
run $O --capture "$null"; rc=$?
if ran_ok && [ -c "$null" ]; then
	ok "capture: a device written directly"
else
	bad "capture: /dev/null" "rc $rc"
fi
run $O --capture "$d/missing/cap.tar.gz"; rc=$?
if [ $rc -eq 3 ] && grep -qF "cannot write --capture $d/missing" "$work/err"; then
	ok "capture: a missing directory fails (exit 3)"
else
	bad "capture: missing directory" "rc $rc"
fi

# --pci-dump: only a regular file (libpci reads it blocking).
fresh dump
mkfifo "$d/dump"
usage "not a regular file" $S --pci-dump "$d/dump"
usage "not a regular file" $S --pci-dump "$null"

# --sysroot loads no local vendor library unless one is named: a libcuda and
# a libibverbs on the default search path (the doubles, under their sonames)
# stay unloaded, and their gates say "not replayed" (SKIP), never BLOCKED.
mkdir -p "$work/libs"
ln -sf "$GDRCHECK_LIBCUDA" "$work/libs/libcuda.so.1"
ln -sf "$GDRCHECK_LIBIBVERBS" "$work/libs/libibverbs.so.1"
ln -sf "$doubles/libnvidia-ml-fake.so" "$work/libs/libnvidia-ml.so.1"
env -u GDRCHECK_LIBCUDA -u GDRCHECK_LIBIBVERBS -u GDRCHECK_LIBNVML -u GDRCHECK_LIBMLX5 \
	LD_LIBRARY_PATH="$work/libs" \
	timeout -k 5 120 $wrap "$bin" $S --json >"$work/out" 2>"$work/err"
rc=$?
if python3 - "$work/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
res = {r["gate"]: r for r in d["results"] if r["subject"] == "host"}
bad = [g for g in ("gpu.libcuda", "nic.libibverbs", "gpu.nvml")
       if res[g]["status"] != "SKIP" or res[g]["reason_code"] != "NOT_REPLAYED"]
bad += [r["gate"] for r in d["results"] if r["layer"] in ("gpu", "nic")
        and r["status"] == "BLOCKED"]
bad += ["worker " + w["stage"] for w in d["workers"]]
print(" ".join(bad))
sys.exit(1 if bad else 0)
PY
then
	ok "--sysroot: local vendor libraries not loaded, NOT_REPLAYED (rc $rc)"
else
	bad "--sysroot: vendor libraries" "$(python3 -c 'import json,sys
for r in json.load(open(sys.argv[1]))["results"][:14]: print(r["gate"], r["status"], r["reason"])' "$work/out" 2>&1 | tr '\n' ';')"
fi
# Named, they load (the scenarios depend on it).
run $S --json
if grep -q '"LIBCUDA_OK"' "$work/out" && grep -q '"LIBIBVERBS_OK"' "$work/out"; then
	ok "--sysroot: a named library is loaded"
else
	bad "--sysroot: a named library" "not loaded"
fi

# Process-local facts come from the capture's /proc/self, or are "not
# replayed" (SKIP): never this process's own limits or privileges.
cp -a "$work/sysroot" "$work/noself"
rm -rf "$work/noself/proc/self"
run --sysroot "$work/noself" --only host --json
if python3 - "$work/out" <<'PY'
import json, sys
res = {r["gate"]: r for r in json.load(open(sys.argv[1]))["results"]}
sys.exit(any(res[g]["status"] != "SKIP" or res[g]["reason_code"] != "NOT_REPLAYED"
             for g in ("host.memlock", "host.privileges")))
PY
then
	ok "--sysroot: no /proc/self in the capture: memlock, privileges NOT_REPLAYED"
else
	bad "--sysroot: no /proc/self" "$(grep -o '"reason": "[^"]*' "$work/out" | sed -n 2,3p | tr '\n' ';')"
fi

# --only/--skip select exactly: the gates named run, the others are
# excluded; a later --only replaces an earlier one; --skip wins over --only.
selected() {
	run --sysroot "$work/sysroot" --json "$@"
	python3 - "$work/out" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
ran = sorted({r["gate"] for r in res if r["reason_code"] != "EXCLUDED"})
print(",".join(ran))
PY
}
check_selected() {
	want=$1
	shift
	got=$(selected "$@")
	if [ "$got" = "$want" ]; then
		ok "selection: $*"
	else
		bad "selection: $*" "ran '$got', expected '$want'"
	fi
}
check_selected "host.kernel" --only host.kernel
check_selected "host.kernel,host.memlock" --only host.container --only host.kernel,host.memlock
check_selected "host.container,host.kconfig,host.kernel,host.privileges" --only host --skip host.memlock
check_selected "host.kernel" --only host,host.kernel --skip host.memlock,host.privileges,host.container,host.kconfig

echo "options: $pass passed, $fail failed"
[ $fail -eq 0 ]
