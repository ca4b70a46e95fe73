// The `fstream` baseline of `iolab bench append`: the write-up's experiment, timed the
// way iolab times its own append strategies.
//
// Usage: append_fstream FILE RECORDS PAYLOAD_BYTES
//
// Opens FILE as the write-up did (std::fstream, in | out | app | ate, here also binary),
// appends RECORDS records of PAYLOAD_BYTES bytes each with fstream::write, then flushes.
// Record i is the bytes (i + j) mod 256 for j = 0 .. PAYLOAD_BYTES-1, the same content
// iolab's strategies write, so the file can be verified the same way. Only the loop and
// the final flush are timed. Prints one line on stdout:
//
//   ns <loop nanoseconds> syscw <write calls> user_ns <user CPU> sys_ns <system CPU>
//
// where `syscw` is the change of the `syscw` counter of /proc/thread-self/io (write,
// writev, pwrite… calls made by this thread) over the loop, or -1 if it cannot be read.
//
// Compiled by iolab at benchmark time with `c++ -O2`. Where the writev in the write-up's
// strace comes from: basic_filebuf::xsputn (bits/fstream.tcc) copies a write into its
// 8 KiB buffer while it fits; otherwise it calls std::__basic_file<char>::xsputn_2, which
// is compiled into libstdc++.so and issues one writev(buffer, new bytes).

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include <sys/resource.h>
#include <time.h>

namespace {

// The write calls this thread has made so far, or -1.
long long write_calls() {
    std::FILE* f = std::fopen("/proc/thread-self/io", "r");
    if (f == nullptr) {
        return -1;
    }
    char line[128];
    long long calls = -1;
    while (std::fgets(line, sizeof line, f) != nullptr) {
        if (std::strncmp(line, "syscw:", 6) == 0) {
            calls = std::strtoll(line + 6, nullptr, 10);
            break;
        }
    }
    std::fclose(f);
    return calls;
}

long long now_ns() {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<long long>(t.tv_sec) * 1000000000LL + t.tv_nsec;
}

long long cpu_ns(const timeval& t) {
    return static_cast<long long>(t.tv_sec) * 1000000000LL + static_cast<long long>(t.tv_usec) * 1000LL;
}

bool parse_count(const char* text, unsigned long long* out) {
    char* end = nullptr;
    errno = 0;
    *out = std::strtoull(text, &end, 10);
    return errno == 0 && end != text && *end == '\0';
}

}  // namespace

int main(int argc, char** argv) {
    unsigned long long records = 0;
    unsigned long long payload = 0;
    if (argc != 4 || !parse_count(argv[2], &records) || !parse_count(argv[3], &payload)) {
        std::fprintf(stderr, "usage: append_fstream FILE RECORDS PAYLOAD_BYTES\n");
        return 2;
    }
    // Record i starts at offset i mod 256 of this pattern.
    std::string pattern(256 + payload, '\0');
    for (std::size_t k = 0; k < pattern.size(); ++k) {
        pattern[k] = static_cast<char>(k & 255);
    }
    std::fstream out(argv[1], std::fstream::in | std::fstream::out | std::fstream::app |
                                  std::fstream::ate | std::fstream::binary);
    if (!out.is_open()) {
        std::fprintf(stderr, "cannot open %s: %s\n", argv[1], std::strerror(errno));
        return 1;
    }
    const std::streamsize size = static_cast<std::streamsize>(payload);

    rusage before{};
    getrusage(RUSAGE_THREAD, &before);
    const long long calls_before = write_calls();
    const long long start = now_ns();
    for (unsigned long long i = 0; i < records; ++i) {
        out.write(pattern.data() + (i & 255), size);
    }
    out.flush();
    const long long elapsed = now_ns() - start;
    const long long calls_after = write_calls();
    rusage after{};
    getrusage(RUSAGE_THREAD, &after);

    if (!out) {
        std::fprintf(stderr, "cannot append to %s: %s\n", argv[1], std::strerror(errno));
        return 1;
    }
    const long long calls = (calls_before < 0 || calls_after < 0) ? -1 : calls_after - calls_before;
    std::printf("ns %lld syscw %lld user_ns %lld sys_ns %lld\n", elapsed, calls,
                cpu_ns(after.ru_utime) - cpu_ns(before.ru_utime),
                cpu_ns(after.ru_stime) - cpu_ns(before.ru_stime));
    return 0;
}
