#!/bin/bash
# Cold sequential reads of FILE, interleaved: fio's io_uring O_DIRECT read at depths 32 and 8
# (1 MiB blocks; its own runtime) against `iolab count` with uring-direct at depth 32, at
# its default, and with no option (auto). Every read starts cold: the page cache is
# dropped before each (needs root). Prints each row's times, one round per column.
#
#   sudo tools/cold_read_vs_fio.sh FILE [ROUNDS] [IOLAB]
#
# docs/findings/count.md (26 Nov 2026) has the runs this made.
set -euo pipefail
F=$1
R=${2:-3}
B=${3:-target/x86_64-unknown-linux-gnu/release/iolab}
fioq() {
    fio --name=r --filename="$F" --rw=read --bs=1M --iodepth="$1" --ioengine=io_uring \
        --direct=1 --readonly --output-format=terse 2>&1 |
        awk -F';' -v o="$1" '{print "fio-depth-" o, $9/1000}'
}
ioq() {
    local label=$1
    shift
    local s e
    s=$(date +%s.%N)
    "$B" count "$@" "$F" >/dev/null
    e=$(date +%s.%N)
    echo "$label $(echo "$e - $s" | bc)"
}
for _ in $(seq "$R"); do
    for t in A B C D E; do
        sync
        echo 1 >/proc/sys/vm/drop_caches
        case $t in
        A) fioq 32 ;;
        B) ioq uring-direct-depth-32 --method uring-direct --queue-depth 32 ;;
        C) fioq 8 ;;
        D) ioq uring-direct-default --method uring-direct ;;
        E) ioq auto ;;
        esac
    done
done | awk '{a[$1] = a[$1] " " $2} END {for (k in a) print k ":" a[k]}'
