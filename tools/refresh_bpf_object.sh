#!/bin/sh
# Rebuilds the compiled eBPF objects shipped beside the program's sources
# (crates/iolab-trace/bpf/trace.bpf.x86.o and trace.bpf.arm64.o), which a build without
# clang embeds, and their manifest (bpf/shipped.txt: the sources' fingerprint and the
# clang that made them), with this machine's clang and the flags of bpf/compile.rs; then
# checks them (tests/bpf_object.rs). Run it after any change under crates/iolab-trace/bpf/,
# and commit what it writes with the change: the test fails until then.
set -eu
cd "$(dirname "$0")/.."
IOLAB_REFRESH_BPF_OBJECTS=1 cargo test --release -p iolab-trace --test bpf_object -- \
	--exact the_shipped_objects_are_what_clang_makes_of_these_sources --nocapture
cargo test --release -p iolab-trace --test bpf_object
git status --short crates/iolab-trace/bpf
