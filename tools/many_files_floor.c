/*
 * The floor of counting many files: what the system calls alone cost, with no counting,
 * no output and no process start in the time. Issue #16's "6x wc -l on 100 000 files" is
 * judged against it (docs/findings/count.md, "Many files").
 *
 * Reads a NUL-separated list (as `--files0-from`), shares it out among threads (file i to
 * thread i % T) and, per file, makes the calls that MODE names, timing the whole loop:
 *   0  open + close
 *   1  openat relative to the parent folder's descriptor (one lookup step) + close
 *  +4  one read(2) of up to 64 KiB (the files are smaller)
 *  +2  fstat(2) of the open file (the kind and size `wc` needs for its column width)
 * so 12 is open + read + close, 14 adds the fstat iolab makes.
 *
 *   gcc -O2 -pthread -o /tmp/floor tools/many_files_floor.c
 *   iolab gen tree --files 100000 --out DIR; (cd DIR/.. && find DIR -type f -print0 > list)
 *   /tmp/floor MODE list [THREADS, default 2]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char **names;
static long count, mode, threads = 2;

static void *work(void *arg) {
    long t = (long)arg, failed = 0;
    static __thread char buf[64 << 10];
    char dir[4096] = "";
    int dfd = -1;
    for (long i = t; i < count; i += threads) {
        int fd;
        if (mode & 1) {
            char *slash = strrchr(names[i], '/');
            size_t len = slash ? (size_t)(slash - names[i]) : 0;
            if (len >= sizeof dir) { failed++; continue; }
            if (dfd < 0 || strncmp(dir, names[i], len) != 0 || dir[len] != 0) {
                if (dfd >= 0) close(dfd);
                memcpy(dir, names[i], len);
                dir[len] = 0;
                dfd = open(len ? dir : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
            }
            fd = openat(dfd, slash ? slash + 1 : names[i], O_RDONLY | O_CLOEXEC);
        } else {
            fd = open(names[i], O_RDONLY | O_CLOEXEC);
        }
        if (fd < 0) { failed++; continue; }
        if (mode & 2) { struct stat st; if (fstat(fd, &st)) failed++; }
        if (mode & 4) { if (read(fd, buf, sizeof buf) < 0) failed++; }
        close(fd);
    }
    if (dfd >= 0) close(dfd);
    return (void *)failed;
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: %s MODE LIST [THREADS]\n", argv[0]); return 2; }
    mode = atol(argv[1]);
    if (argc > 3) threads = atol(argv[3]);
    if (threads < 1 || threads > 64) { fprintf(stderr, "threads: 1 to 64\n"); return 2; }
    FILE *f = fopen(argv[2], "r");
    if (!f) { perror(argv[2]); return 1; }
    size_t cap = 0, slots = 0;
    char *line = NULL;
    ssize_t len;
    while ((len = getdelim(&line, &cap, 0, f)) > 0) {
        if (line[len - 1] == 0) len--;
        if ((size_t)count == slots) names = realloc(names, (slots = slots * 2 + 1024) * sizeof *names);
        names[count++] = strndup(line, len);
    }
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    pthread_t th[64];
    for (long t = 0; t < threads; t++) pthread_create(&th[t], NULL, work, (void *)t);
    long failed = 0;
    for (long t = 0; t < threads; t++) { void *r; pthread_join(th[t], &r); failed += (long)r; }
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("mode %ld, %ld files, %ld threads: %.1f ms (%ld failed calls)\n", mode, count, threads,
           (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6, failed);
    return failed != 0;
}
