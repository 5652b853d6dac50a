#!/usr/bin/env bash
# build-telegraf.sh OUT: build Telegraf with inputs.procwalk compiled in, plus
# the plugins procwalk's end-to-end test uses, into the binary OUT.
#
# Telegraf's main package cannot be imported, so this copies Telegraf's source
# from the Go module cache, adds this adapter as plugins/inputs/procwalk with
# the one-line registration file that each of Telegraf's own plugins has in
# plugins/inputs/all/, points the copy's go.mod at this procwalk tree, and
# builds with "custom" tags so only the listed plugins are compiled. (The
# adapter is copied rather than imported as a module: a local replace of
# both procwalk modules makes the nested package path ambiguous to Go.)
#
# Env: TELEGRAF_VERSION (default v1.37.2); TELEGRAF_TAGS (extra build tags).
set -euo pipefail
out=${1:?usage: build-telegraf.sh OUT}
case $out in /*) ;; *) out=$PWD/$out ;; esac
version=${TELEGRAF_VERSION:-v1.37.2}
here=$(cd "$(dirname "$0")" && pwd)
tags="custom,inputs.procwalk,inputs.exec,inputs.execd,inputs.procstat,outputs.file,outputs.influxdb,outputs.prometheus_client,processors.rename,parsers.influx,serializers.influx,serializers.prometheus${TELEGRAF_TAGS:+,$TELEGRAF_TAGS}"

src=$(go mod download -json "github.com/influxdata/telegraf@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -d "$src" ] || { echo "build-telegraf: could not download telegraf@$version" >&2; exit 1; }
work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
cp -r "$src" "$work/telegraf"
chmod -R u+w "$work/telegraf"
cd "$work/telegraf"
mkdir -p plugins/inputs/procwalk
cp "$here/procwalk.go" plugins/inputs/procwalk/procwalk.go
cat > plugins/inputs/all/procwalk.go <<'GO'
//go:build !custom || inputs.procwalk

package all

import _ "github.com/influxdata/telegraf/plugins/inputs/procwalk" // register inputs.procwalk
GO
go mod edit \
  -require=github.com/procwalk/procwalk@v0.0.0-00010101000000-000000000000 \
  -replace=github.com/procwalk/procwalk="$here/../.."
# -mod=mod records the checksums of procwalk's few requirements in the copy.
GOFLAGS=-mod=mod go build -tags "$tags" -o "$out" ./cmd/telegraf
echo "built $out with $tags" >&2
