#!/bin/sh
# The manual must not drift from the binary: every long option --help shows
# and every gate --list-gates lists must be documented in man/gdrcheck.8,
# and the page must format without groff warnings.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
man="$top/man/gdrcheck.8"
pass=0
fail=0
check() {
	if grep -q -- "$2" "$man.plain"; then
		pass=$((pass + 1))
	else
		echo "FAIL: $1 is not in man/gdrcheck.8"
		fail=$((fail + 1))
	fi
}
# Render once; options appear as "\-\-json" in the source.
sed 's/\\-/-/g; s/\\&//g' "$man" >"$man.plain"
for opt in $("$top/gdrcheck" --help | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
	check "option $opt" "$opt"
done
for gate in $("$top/gdrcheck" --list-gates | awk '/^  [a-z]+\./ { print $1 }'); do
	check "gate $gate" "^\\.B $gate\$"
done
warn=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l "$man" 2>&1 >/dev/null)
if [ -n "$warn" ]; then
	echo "FAIL: groff warnings:"; echo "$warn"
	fail=$((fail + 1))
else
	pass=$((pass + 1))
fi
rm -f "$man.plain"
# README's examples are recordings, not hand copies: the block under
# "## A real report" is the H200's examples/h200/h200-report.txt, the one
# under "## A node-scale report" the scenario's expected.txt.
readme_block() {
	awk -v h="$1" '$0 == h { on = 1 } on && /^```$/ { if (n++) exit; next }
		on && n == 1' "$top/README.md"
}
for pair in "## A real report|$top/examples/h200/h200-report.txt" \
	"## A node-scale report|$top/tests/scenarios/node-8x12-broken-rail/expected.txt"; do
	heading=${pair%%|*} golden=${pair#*|}
	if readme_block "$heading" | sed 's|^sysroot  tests/|sysroot  @TOP@/tests/|' |
		diff -u "$golden" - >"$top/tests/out/readme-example.diff" 2>&1; then
		pass=$((pass + 1))
	else
		echo "FAIL: README's example under '$heading' is not $golden:"
		cat "$top/tests/out/readme-example.diff"
		fail=$((fail + 1))
	fi
done
# --help, the man page and README agree on options, defaults and ranges.
if python3 "$top/tests/check-option-docs.py" "$top/gdrcheck" "$man" \
	"$top/README.md" >"$top/tests/out/option-docs.log" 2>&1; then
	pass=$((pass + 1))
else
	cat "$top/tests/out/option-docs.log"
	fail=$((fail + 1))
fi
echo "docs: $pass passed, $fail failed"
[ $fail -eq 0 ]
