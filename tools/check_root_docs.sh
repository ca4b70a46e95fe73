#!/usr/bin/env bash
# The stable surface's pages link nowhere into the laboratory (issue #48, point 6).
#
# Builds `cargo doc -p iolab --no-deps` into a fresh folder and greps the pages of the
# crate root's items (struct.*, enum.*, fn.*, type.*, trait.*, macro.* at doc/iolab/) for a
# link into `lab/`: a lab type in a public field or signature, or a doc link to one. Prints
# each offending link and exits 1; exits 0 when there are none.
#
# Usage: tools/check_root_docs.sh   (from anywhere in the repository; about 10 s once built)
set -euo pipefail
cd "$(dirname "$0")/.."

# Pages not checked, with why (none now).
pending=()

# rustdoc leaves the pages of items that no longer exist: start from an empty folder.
target=$(cargo metadata --no-deps --format-version 1 |
  sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
host=$(rustc -vV | sed -n 's/^host: //p')
rm -rf "$target/doc/iolab" "$target/$host/doc/iolab"

generated=$(cargo doc -p iolab --no-deps 2>&1 | tee /dev/stderr |
  sed -n 's/^ *Generated \(.*\)\/index\.html$/\1/p' | tail -n 1)
if [ -z "$generated" ] || [ ! -d "$generated" ]; then
  echo "check_root_docs: cannot find the pages cargo doc generated" >&2
  exit 2
fi

found=0
checked=0
for page in "$generated"/{struct,enum,fn,type,trait,macro}.*.html; do
  [ -e "$page" ] || continue
  name=$(basename "$page")
  if printf '%s\n' "${pending[@]}" | grep -qx "$name"; then
    continue
  fi
  checked=$((checked + 1))
  links=$(grep -oE 'href="(\.\./)*lab/[^"]*"' "$page" | sort -u || true)
  if [ -n "$links" ]; then
    found=1
    printf '%s\n' "$links" | sed "s|^|$name: |"
  fi
done

if [ "$found" = 1 ]; then
  echo "check_root_docs: root items link into iolab::lab (above)" >&2
  exit 1
fi
# The published crate (no `lab` feature) documents no laboratory, and stays small.
if [ -e "$generated/lab" ]; then
  echo "check_root_docs: the default build documents iolab::lab; it belongs behind the lab feature" >&2
  exit 1
fi
items=$(grep -oE '<li><a href="[^"]+">' "$generated/all.html" | wc -l)
if [ "$items" -ge 60 ]; then
  echo "check_root_docs: $items public items (all.html); the stable surface aims under 60" >&2
  exit 1
fi
echo "check_root_docs: $checked root item pages, no link into iolab::lab, no lab module, $items public items"
