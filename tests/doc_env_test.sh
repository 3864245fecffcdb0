#!/bin/sh
# The GPK_* environment variables the library reads (src/, include/) are
# exactly those of the table in docs/guide.md ("Environment variables"),
# at most 12 of them.  Usage: doc_env_test.sh SOURCE_DIR
set -u
root=${1:-.}
tmp=${TMPDIR:-/tmp}/gpk-doc-env.$$
trap 'rm -f "$tmp".*' EXIT
# names read through getenv or gpk__env_int
grep -rhoE '(getenv|gpk__env_int)\("GPK_[A-Z0-9_]+"' "$root/src" "$root/include" |
  sed -E 's/.*"(GPK_[A-Z0-9_]+)"/\1/' | sort -u >"$tmp.code"
# the table's first column
sed -n '/^### Environment variables/,/^### /p' "$root/docs/guide.md" |
  grep -oE '^\| `GPK_[A-Z0-9_]+`' | sed -E 's/.*`(GPK_[A-Z0-9_]+)`/\1/' | sort -u >"$tmp.doc"
fail=0
for v in $(comm -23 "$tmp.code" "$tmp.doc"); do echo "read by the library, not in docs/guide.md's table: $v"; fail=1; done
for v in $(comm -13 "$tmp.code" "$tmp.doc"); do echo "in docs/guide.md's table, read nowhere: $v"; fail=1; done
n=$(wc -l <"$tmp.code")
[ "$n" -le 12 ] || { echo "the library reads $n GPK_* variables, more than 12"; fail=1; }
[ $fail -eq 0 ] && echo "doc_env: $n variables, all in the table"
exit $fail
