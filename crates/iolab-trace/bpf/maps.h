/* The program's maps, the state it keeps in the kernel only (a followed task's call in
 * flight, a descriptor as its entry saw it), and the small helpers every part uses.
 *
 * SPDX-License-Identifier: MIT OR GPL-2.0 */
#ifndef IOLAB_MAPS_H
#define IOLAB_MAPS_H

#include "kernel.h"
#include "records.h"

#define PATHS_BYTES (4 << 20)
#define RING_BYTES (8 << 20)

/* One descriptor of a call in flight, as seen at its entry. */
struct side {
	u64 file;
	u64 inode;
	u64 dev, ino;
	s64 pos;
	u32 flags;
	u32 mode;
	u32 rdev;
	u32 gen;
	u32 ok;
	u32 pad;
};

/* A followed task, in task-local storage: the call it is in, if any. */
struct task {
	u8 armed; /* followed (from the command's execve on) */
	u8 in_call;
	u8 role, index;
	u32 pad;
	u64 t0;
	u64 arg; /* msync's address, mmap's length, an open's flags, io_uring_enter's count */
	u64 ptr, ptr2; /* path arguments (user pointers) */
	s64 dirfd;     /* the first path's directory descriptor */
	u64 size0;     /* ftruncate: the file's size at the entry; its length in `arg` */
	u64 fault_dev, fault_ino; /* the file of the task's last fault on a map */
	u64 gap_from;     /* when its last followed call's exit was done (0: none yet) */
	u64 gap_switches; /* and its switches off the CPU then */
	u64 gap;          /* the time from then to this call's entry, or NO_GAP */
	struct side a, b;
};

#define NO_GAP ((u64)-1)

struct span {
	u64 start, end;
};

struct map_key {
	u32 tgid;
	u32 pad;
	u64 addr;
};

struct scratch {
	char buf[2 * PATH_MAX];
	struct path_event ev;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task);
} tasks SEC(".maps");

/* The command's pid, set by user space before it executes. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, u32);
	__type(value, u8);
} roots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_SYSCALLS);
	__type(key, u32);
	__type(value, struct call_def);
} syscalls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 262144);
	__type(key, struct key);
	__type(value, struct stats);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1048576);
	__type(key, struct sys_key);
	__type(value, struct call_stat);
} sys_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 64);
	__type(key, u32);
	__type(value, struct call_stat);
} other SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, C_COUNTERS);
	__type(key, u32);
	__type(value, u64);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, u64);
	__type(value, struct span);
} positions SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct map_key);
	__type(value, struct key);
} mapped SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

/* One zeroed `stats`: the value a new target starts from (too big for the stack). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct stats);
} blank SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, PATHS_BYTES);
} paths SEC(".maps");

/* Processes, changes to files, lookups and failed opens, in order. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, RING_BYTES);
} events SEC(".maps");

/* Lookups and failed opens, one record per call: a ring of their own, so that a storm of
 * them never crowds out the changes. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, RING_BYTES);
} lookup_ring SEC(".maps");

/* Sampled stacks: a ring of their own, so that a flood of them never crowds out the
 * changes the durability rules read. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, RING_BYTES);
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct event);
} event_scratch SEC(".maps");

/* Calls, bytes and time per target and process (`struct sys_key`'s index: the pid), for the
 * processes after a target's first (whose are in its stats). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, struct sys_key);
	__type(value, struct use);
} uses SEC(".maps");

/* Directories whose path was sent for the lookups relative to them. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct key);
	__type(value, u8);
} named_dirs SEC(".maps");

/* Files written since their last sync. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct key);
	__type(value, u8);
} dirty SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, struct key);
	__type(value, struct faults);
} faults SEC(".maps");

static __always_inline void bump(u32 which)
{
	u64 *c = bpf_map_lookup_elem(&counters, &which);
	if (c)
		__sync_fetch_and_add(c, 1);
}

/* Flags for a record sent to `ring` of `size` bytes: no wakeup of the reader (it polls
 * every 20 ms; a wakeup per record costs the traced task an interrupt to another CPU),
 * unless the ring is half full. */
static __always_inline u64 quiet(void *ring, u64 size)
{
	return bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA) > size / 2 ? BPF_RB_FORCE_WAKEUP
								      : BPF_RB_NO_WAKEUP;
}

static __always_inline u64 arg(struct pt_regs *regs, u32 i)
{
	return SYSCALL_ARG(regs, i);
}

static __always_inline u32 current_pid(void)
{
	return bpf_get_current_pid_tgid() >> 32;
}

#endif
