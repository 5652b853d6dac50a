#!/usr/bin/env bash
# update.sh [--check]: build scripting/internal/_luavm, procwalk's Lua VM,
# from upstream gopher-lua at the version in ./upstream with the patches in
# this folder applied in order (README.md lists them), and write it there;
# with --check, build it in a temporary folder and fail if the tree in the
# repository differs (.ci/run's luavm step).
#
# The steps: upstream's module from the Go module proxy (go mod download);
# its cmd/ (the glua REPL, which needs readline), .github/, go.mod and
# go.sum left out; its import paths rewritten to the tree's; the patches
# applied (they change the go-inline templates _state.go and _vm.go, never
# the generated state.go and vm.go); state.go and vm.go generated again from
# the templates by upstream's own _tools/go-inline, and gofmt, as upstream's
# Makefile does. No patch touches the grammar (parse/parser.go.y), so
# parse/parser.go is upstream's: a patch of the grammar would need goyacc
# here too. Needs go, python3 and git (for git apply).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tree=$(cd "$here/.." && pwd)/_luavm
module=github.com/yuin/gopher-lua
path=github.com/procwalk/procwalk/scripting/internal/_luavm
version=$(cat "$here/upstream")
check=false
case ${1:-} in
--check) check=true ;;
"") ;;
*) echo "usage: update.sh [--check]" >&2; exit 2 ;;
esac
export LC_ALL=C

work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
# A module of our own to download in: the repository's go.mod does not
# require gopher-lua any more.
printf 'module download\n\ngo 1.26\n' >"$work/go.mod"
src=$(cd "$work" && GOFLAGS=-mod=mod go mod download -json "$module@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[[ -d $src ]] || { echo "update.sh: could not download $module@$version" >&2; exit 1; }

out=$work/_luavm
cp -r "$src" "$out"
chmod -R u+w "$out"
rm -rf "$out/cmd" "$out/.github" "$out/go.mod" "$out/go.sum"
find "$out" \( -name '*.go' -o -name '*.y' \) -print0 | xargs -0 sed -i "s#$module#$path#g"
for p in "$here"/[0-9]*.patch; do
  # Outside any git work tree, git apply acts as patch(1) does.
  (cd "$out" && git apply --whitespace=nowarn "$p") || { echo "update.sh: $(basename "$p") does not apply" >&2; exit 1; }
done
(cd "$out" && python3 ./_tools/go-inline *.go && gofmt -w state.go vm.go)

if $check; then
  if ! diff -r "$out" "$tree" >"$work/diff"; then
    head -50 "$work/diff" >&2
    echo "update.sh: scripting/internal/_luavm differs from $module@$version with the patches in scripting/internal/luapatches: run scripting/internal/luapatches/update.sh and commit, or make the change a patch" >&2
    exit 1
  fi
  echo "scripting/internal/_luavm is $module@$version with $(ls "$here"/[0-9]*.patch | wc -l) patches"
  exit 0
fi
rm -rf "$tree"
cp -r "$out" "$tree"
echo "wrote $tree: $module@$version with $(ls "$here"/[0-9]*.patch | wc -l) patches"
