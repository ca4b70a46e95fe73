/* The records the eBPF program and user space (src/engine/bpf/layout.rs) share: the keys
 * and values of the maps user space reads or fills, and the headers of the records the
 * rings carry, with the numbers both sides must agree on. One source: layout.rs's test
 * `records_h_and_layout_rs_agree_on_every_field` compiles a program over this header with
 * the host's C compiler and checks the offset and size of every field against layout.rs.
 *
 * It needs u8, u32, u64, s64 declared before it (kernel.h here, <stdint.h> there).
 *
 * SPDX-License-Identifier: MIT OR GPL-2.0 */
#ifndef IOLAB_RECORDS_H
#define IOLAB_RECORDS_H

/* What a followed call does (layout.rs `role`). */
enum role {
	ROLE_NONE = 0,
	ROLE_READ = 1,
	ROLE_WRITE = 2,
	ROLE_COPY = 3,
	ROLE_SYNC = 4,
	ROLE_MSYNC = 5,
	ROLE_SEEK = 6,
	ROLE_OPEN = 7,
	ROLE_CLOSE = 8,
	ROLE_FD = 9,      /* dup, dup2, dup3, fcntl: counted on the descriptor's target */
	ROLE_MMAP = 10,
	ROLE_MUNMAP = 11,
	ROLE_RING = 12,
	ROLE_OTHER = 13,  /* close_range, sync: counted apart */
	ROLE_LOOKUP = 14, /* stat, access: a path looked up */
	ROLE_RENAME = 15,
	ROLE_TRUNCATE = 16,
	ROLE_SYNC_ALL = 17, /* sync: counted apart, and a change: every file synced */
};

/* `call_def.flags` of a sync that syncs its whole file system (syncfs). */
#define SYNCS_ALL 1

#define NO_ARG 0xff
#define FLAGS_CREAT 0xfe   /* creat(2): O_CREAT | O_TRUNC */
#define FLAGS_HOW 0xfd     /* openat2(2): the flags are in the struct open_how of argument 2 */

/* An entry of the `syscalls` table, filled by user space (layout.rs `CallDef`). */
struct call_def {
	u8 role;
	u8 index;    /* the call's position in Sys::ALL: the key of its counts */
	u8 fd;       /* argument of the (source) descriptor */
	u8 pos;      /* argument of an explicit offset, or NO_ARG */
	u8 fd2;      /* copies: argument of the destination descriptor */
	u8 pos_ptr;  /* copies: argument of a pointer to the source offset, or NO_ARG */
	u8 pos2_ptr; /* copies: argument of a pointer to the destination offset, or NO_ARG */
	u8 flags;    /* opens: argument of the flags, FLAGS_CREAT or FLAGS_HOW */
	u8 path;     /* opens, lookups, renames: argument of the (old) path, or NO_ARG */
	u8 dirfd;    /* argument of its directory descriptor, or NO_ARG (the working directory) */
	u8 path2;    /* renames: argument of the new path */
	u8 dirfd2;   /* renames: argument of its directory descriptor */
};

#define MAX_SYSCALLS 512
#define BUCKETS 32
#define PATH_MAX 4096

/* Indexes of `counters` (layout.rs `Counter`). */
enum counter {
	C_PROCESSES = 0, /* processes forked by traced tasks */
	C_THREADS = 1,   /* threads started by traced tasks */
	C_EXECS = 2,
	C_LOST_CALLS = 3, /* calls on targets that did not fit, or whose entry did not fit */
	C_LOST_TASKS = 4,
	C_LOST_PATHS = 5,
	C_LOST_EVENTS = 6,
	C_STACKS = 7, /* stacks sampled: at most MAX_STACKS (a stack that does not fit is none) */
	C_LOST_LOOKUPS = 8,
	C_COUNTERS = 16,
};

/* Kinds of `events` (events.rs `kind`). */
enum event_kind {
	EV_EXEC = 1,    /* a: parent's pid, b, c: start_code, end_code; data: filename, NUL, args */
	EV_FORK = 2,    /* a: parent's pid */
	EV_OPENED = 3,  /* an open asked O_CREAT or O_TRUNC: a: f_mode, b: the flags asked */
	EV_TRUNCATED = 4,
	EV_DIRTIED = 5,
	EV_SYNCED = 6,
	EV_RENAMED = 7, /* k: the directory relative paths start from; data: old, NUL, new */
	EV_LOOKUP = 8,  /* a: result, b: ns; data: the path */
	EV_FAILED_OPEN = 9,
	EV_STACK = 10,  /* a: ip, b, c: start_code, end_code; data: the words at the stack pointer */
	EV_SYNCED_ALL = 11, /* sync or syncfs: every file (of a file system) synced */
};

#define EVENT_DATA 8192

/* A target: its device, inode number and generation (layout.rs `Key`). */
struct key {
	u64 dev;
	u64 ino;
	u32 gen; /* i_generation: a new file that reuses a freed inode number has another */
	u32 pad;
};

/* One direction of a target's data (layout.rs `RawFlow`). */
struct flow {
	u64 calls, bytes, ns, sequential, repeated, direct, synced, first, last;
	u64 gap_ns, gaps; /* the time since the task's previous followed call ended */
	u64 sizes[BUCKETS];
};

/* layout.rs `RawCallStat`. */
struct call_stat {
	u64 calls, errors, ns;
};

/* Calls of the first DATA_CALLS entries of Sys::ALL (the reads and writes) are counted in
 * the target's stats; the others in `sys_stats`. */
#define DATA_CALLS 16

/* Everything counted of one target (layout.rs `Stats`). */
struct stats {
	u32 mode, rdev;
	u64 size;
	struct flow read, write;
	u64 syncs, sync_ns, opens;
	u64 o_direct, o_sync, o_dsync, o_append, o_trunc, o_creat;
	u64 seeks, mmaps, mmap_bytes, ring_enters, ring_submissions, errors;
	struct call_stat data_calls[DATA_CALLS];
	/* The first process that used it, and its calls, bytes and time: most targets have
	 * one, which then costs no look-up in `uses`. */
	u32 pid1, pad1;
	u64 calls1, bytes1, ns1;
};

/* A target and a call's index, or a process's pid (layout.rs `SysKey`). */
struct sys_key {
	u64 dev;
	u64 ino;
	u32 gen;
	u32 index;
};

/* Calls, bytes and time of one process on one target (layout.rs `RawUse`). */
struct use {
	u64 calls, bytes, ns;
};

/* Page faults on the maps of a file (layout.rs `RawFaults`). */
struct faults {
	u64 faults, added, far, last;
};

/* A record of the `events`, `lookup_ring` and `stacks` rings: its header (layout.rs
 * `EventHeader`), then `len` bytes of `data`. */
struct event {
	u32 kind, pid;
	u64 at;
	struct sys_key k; /* the target, and the call's index */
	u64 a, b, c;
	u32 len, pad;
	char data[EVENT_DATA];
};
#define EVENT_HEADER 72
_Static_assert(__builtin_offsetof(struct event, data) == EVENT_HEADER, "the header's size");

/* A record of the `paths` ring: its header (layout.rs `PathEventHeader`), then `len`
 * bytes of `path`. */
struct path_event {
	u64 dev, ino;
	u32 gen;
	u32 len;
	u32 complete;
	u32 pad;
	char path[PATH_MAX];
};
#define PATH_EVENT_HEADER 32
_Static_assert(__builtin_offsetof(struct path_event, path) == PATH_EVENT_HEADER,
	       "the header's size");

#endif
