// The floor of a pipe writer that lends its pages: N bytes to standard output as numbered
// 128-byte records (the stdout_writer example's: "record ", 20 digits counted up in
// place, spaces, a newline), copied into a ring of 16 page-aligned 256 KiB buffers (4 MiB,
// 4 x the 1 MiB pipe it asks for), each full buffer handed to the pipe with vmsplice(2).
// No checks beyond the calls' own: the bare copies and calls StdoutWriter's lending makes.
//
//     cc -O2 -o /tmp/lend_floor tools/lend_floor.c
//     /tmp/lend_floor 4294967296 | READER
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

enum { RECORD = 128, BUFFER = 256 << 10, RING = 16 };

static int lend(char *p, size_t n) {
    while (n > 0) {
        struct iovec iov = {p, n};
        ssize_t w = vmsplice(1, &iov, 1, 0);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int main(int argc, char **argv) {
    unsigned long long n = argc > 1 ? strtoull(argv[1], 0, 10) : 1ULL << 30;
    fcntl(1, F_SETPIPE_SZ, 1 << 20);
    char *ring = aligned_alloc(4096, (size_t)BUFFER * RING);
    if (!ring) return 1;
    char record[RECORD];
    memset(record, ' ', sizeof record);
    memcpy(record, "record ", 7);
    memset(record + 7, '0', 20);
    record[RECORD - 1] = '\n';
    size_t slot = 0, len = 0;
    for (unsigned long long done = 0; done < n; done += RECORD) {
        size_t take = n - done < RECORD ? (size_t)(n - done) : RECORD;
        char *buf = ring + slot * BUFFER;
        memcpy(buf + len, record, take);
        len += take;
        for (int d = 26; d >= 7; d--) {
            record[d] = record[d] == '9' ? '0' : record[d] + 1;
            if (record[d] != '0') break;
        }
        if (len + RECORD > BUFFER) {
            if (lend(buf, len)) return 1;
            len = 0;
            slot = (slot + 1) % RING;
        }
    }
    if (len && lend(ring + slot * BUFFER, len)) return 1;
    return 0;
}
