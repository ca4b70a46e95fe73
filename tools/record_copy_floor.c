// The floor of a writer that copies its records: N bytes to standard output as 128-byte
// records copied into an 8 KiB buffer, written with write(2) when full (the calls and
// copies StdoutWriter makes into a pipe at its 8 KiB window). The record's bytes come from
// argv, so the compiler cannot turn the copy into stores of a constant.
//
//     cc -O2 -o /tmp/record_copy_floor tools/record_copy_floor.c
//     /tmp/record_copy_floor 4294967296 0 | READER
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { RECORD = 128, BUFFER = 8192 };

static int write_all(const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(1, p, n);
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
    char record[RECORD];
    memset(record, argc > 2 ? atoi(argv[2]) : 0, sizeof record);
    static char buf[BUFFER];
    size_t len = 0;
    for (unsigned long long done = 0; done < n; done += RECORD) {
        size_t take = n - done < RECORD ? (size_t)(n - done) : RECORD;
        memcpy(buf + len, record, take);
        len += take;
        if (len + RECORD > BUFFER) {
            if (write_all(buf, len)) return 1;
            len = 0;
        }
    }
    return write_all(buf, len) ? 1 : 0;
}
