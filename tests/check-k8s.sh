#!/bin/sh
# The Kubernetes manifests (examples/kubernetes/*.yaml) against the API's own
# schemas: kubernetes-models from the npm registry (tests/k8s/package-lock.json
# pins it), every document by its apiVersion and kind. A manifest with a known
# error must fail first, so the validator is shown to validate.
#   tests/check-k8s.sh   ends with "k8s: N passed, N failed"
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
k8s=$top/tests/k8s
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	echo "k8s: node and npm are needed (tests/install-deps.sh installs them)"
	echo "k8s: 0 passed, 1 failed"
	exit 1
fi
if [ ! -d "$k8s/node_modules/kubernetes-models" ]; then
	(cd "$k8s" && npm ci --no-audit --no-fund --loglevel=error) || {
		echo "k8s: npm ci failed"
		echo "k8s: 0 passed, 1 failed"
		exit 1
	}
fi
bad=$(mktemp "${TMPDIR:-/tmp}/k8s-bad.XXXXXX.yaml")
pair=$(mktemp "${TMPDIR:-/tmp}/k8s-pair.XXXXXX.yaml")
trap 'rm -f "$bad" "$pair"' EXIT
# containerPort must be an integer: the validator has to say so.
cat >"$bad" <<'YAML'
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: known-bad}
spec:
  selector: {matchLabels: {app: x}}
  template:
    metadata: {labels: {app: x}}
    spec:
      containers: [{name: c, image: i, ports: [{containerPort: "abc"}]}]
YAML
pass=0
fail=0
if node "$k8s/validate.mjs" "$bad" >/dev/null 2>&1; then
	echo "FAIL a known-bad manifest validated: the validator validates nothing"
	fail=$((fail + 1))
else
	echo "PASS a known-bad manifest is refused"
	pass=$((pass + 1))
fi
# One Job of a pair sweep, renamed as examples/kubernetes/README.md does.
P=gdrcheck-pair-7
sed -e "s/gdrcheck-pair-0\.gdrcheck-pair\$/$P-0.$P/" -e "s/gdrcheck-pair\$/$P/" \
	-e 's/"NODE_A", "NODE_B"/"gpu-01", "gpu-02"/' \
	"$top/examples/kubernetes/gdrcheck-pair-job.yaml" >"$pair"
if [ "$(grep -c "gdrcheck-pair-7" "$pair")" -ge 9 ] && grep -q '"gpu-01", "gpu-02"' "$pair" &&
	grep -q 'value: gdrcheck-pair-7-0.gdrcheck-pair-7$' "$pair" &&
	grep -q 'name: gdrcheck-pair-token$' "$pair"; then
	echo "PASS the README's renaming of the pair Job (names, selector, subdomain, listener, nodes; not the Secret)"
	pass=$((pass + 1))
else
	echo "FAIL the README's renaming of the pair Job"
	fail=$((fail + 1))
fi
out=$(node "$k8s/validate.mjs" "$top"/examples/kubernetes/*.yaml "$pair" 2>&1)
echo "$out" | grep -v '^k8s:'
p=$(echo "$out" | grep -c '^PASS')
f=$(echo "$out" | grep -c '^FAIL')
[ "$p" -eq 0 ] && f=$((f + 1))
echo "k8s: $((pass + p)) passed, $((fail + f)) failed"
[ $((fail + f)) -eq 0 ]
