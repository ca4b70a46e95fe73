/*
 * The floor of durable appends: what one durable write costs with nothing but the system
 * calls, in the pattern a log must use against the one pg_test_fsync measures. Issue #18's
 * "best single-writer policy >= 1.0x pg_test_fsync's best" and "group commit >= 4x" are
 * judged against it (docs/findings/durable.md).
 *
 * Each run creates FILE (which must not exist), writes it full of zeros in 64 KiB writes, as
 * iolab's prealloc does (larger ones leave large page-cache folios that slow an 8 KiB
 * overwrite + fdatasync), and fsyncs it, outside the timer; then it times COUNT durable
 * writes of BYTES each, prints the writes per second and removes FILE:
 *   same      O_DIRECT|O_DSYNC pwrite at offset 0 every time (pg_test_fsync's open_datasync)
 *   advance   O_DIRECT|O_DSYNC pwrite at advancing offsets (a log's direct-dsync)
 *   bsame     pwrite + fdatasync at offset 0 (pg_test_fsync's fdatasync)
 *   badvance  pwrite + fdatasync at advancing offsets (a log's prealloc)
 *   grow      pwrite + fdatasync at the end of a file that starts empty (a log's
 *             fdatasync policy: every sync commits the new size, and a write that
 *             starts a block allocates it)
 * The direct modes need BYTES to be a multiple of 4096.
 *
 *   gcc -O2 -o /tmp/sync_floor tools/sync_floor.c
 *   /tmp/sync_floor MODE COUNT BYTES FILE
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *path;

static void die(const char *what) {
    perror(what);
    if (path) unlink(path);
    exit(1);
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s same|advance|bsame|badvance|grow COUNT BYTES FILE\n", argv[0]);
        return 2;
    }
    const char *mode = argv[1];
    long count = atol(argv[2]);
    size_t bytes = strtoul(argv[3], 0, 10);
    int direct = !strcmp(mode, "same") || !strcmp(mode, "advance");
    int advance = !strcmp(mode, "advance") || !strcmp(mode, "badvance") || !strcmp(mode, "grow");
    int grow = !strcmp(mode, "grow");
    if (!direct && !advance && strcmp(mode, "bsame")) {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    if (count <= 0 || count > 100000000 || bytes == 0 || bytes > (1 << 30) ||
        (direct && bytes % 4096)) {
        fprintf(stderr, "bad COUNT or BYTES\n");
        return 2;
    }
    /* Four writes before the timer, as pg_test_fsync's file exists before it times. */
    size_t total = ((size_t)count + 4) * bytes;
    int fd = open(argv[4], O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
        perror(argv[4]);
        return 2;
    }
    path = argv[4];
    if (!grow) {
        static char zeros[64 << 10];
        for (size_t off = 0; off < total; off += sizeof zeros)
            if (pwrite(fd, zeros, sizeof zeros, off) != (ssize_t)sizeof zeros) die("zero fill");
        if (fsync(fd)) die("fsync");
    }
    close(fd);
    fd = open(argv[4], O_RDWR | (direct ? O_DIRECT | O_DSYNC : 0));
    if (fd < 0) die("reopen");
    void *buf;
    if (posix_memalign(&buf, 4096, bytes)) die("posix_memalign");
    memset(buf, 0x5a, bytes);
    off_t off = 0;
    struct timespec start, end;
    for (long i = -4; i < count; i++) {
        if (i == 0) clock_gettime(CLOCK_MONOTONIC, &start);
        if (pwrite(fd, buf, bytes, off) != (ssize_t)bytes) die("pwrite");
        if (!direct && fdatasync(fd)) die("fdatasync");
        if (advance) off += bytes;
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    double s = (end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9;
    printf("%.0f\n", count / s);
    close(fd);
    unlink(argv[4]);
    return 0;
}
