#!/usr/bin/env bash
# build.sh NAME OUTPUT — builds one tool from the Go module proxy into OUTPUT, showing progress.
#
# NAME is one of: kube-apiserver, etcd (from this module's go.mod), or controller-gen@VERSION,
# golangci-lint@VERSION (each from its own published module, so its dependency graph stays its own).
# The Makefile calls this only when OUTPUT is missing; OUTPUT's path carries the version.
set -euo pipefail

name=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$(dirname "$out")"
out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
log=$(mktemp)
trap 'rm -f "$log"' EXIT

case "$name" in
  kube-apiserver) dir=$here; pkg=k8s.io/kubernetes/cmd/kube-apiserver; mode=build ;;
  etcd)           dir=$here; pkg=./etcd; mode=build ;;
  controller-gen@*) dir=$here; pkg=sigs.k8s.io/controller-tools/cmd/controller-gen@${name#*@}; mode=install ;;
  golangci-lint@*)  dir=$here; pkg=github.com/golangci/golangci-lint/v2/cmd/golangci-lint@${name#*@}; mode=install ;;
  *) echo "build.sh: unknown tool '$name' (want kube-apiserver, etcd, controller-gen@V or golangci-lint@V)" >&2; exit 2 ;;
esac

echo "==> building $name into ${out#"$PWD"/} (first build can take several minutes on 2 cores)"
start=$(date +%s)
cd "$dir"
# -v names each package as it is compiled: count them as the progress line.
if [ "$mode" = build ]; then
  cmd=(go build -v -trimpath -o "$out.tmp" "$pkg")
else
  tmpbin=$(mktemp -d)
  cmd=(env GOBIN="$tmpbin" go install -v -trimpath "$pkg")
fi
set +e
"${cmd[@]}" 2>&1 | tee "$log" | awk '{ n++; if (n % 200 == 0) { printf "    %s: %d packages compiled\n", "'"$name"'", n; fflush() } }'
rc=${PIPESTATUS[0]}
set -e
if [ "$rc" -ne 0 ]; then
  echo "build.sh: building $name failed; the last lines of the build:" >&2
  tail -n 30 "$log" >&2
  exit "$rc"
fi
if [ "$mode" = build ]; then
  mv "$out.tmp" "$out"
else
  mv "$tmpbin"/* "$out"
  rmdir "$tmpbin"
fi
echo "==> built $name in $(( $(date +%s) - start ))s"
