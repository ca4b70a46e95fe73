/* The eBPF side of `iolab trace` (loaded by src/engine/bpf/, which holds the same layouts
 * in Rust): it follows the command's tasks and folds every followed system call into
 * per-target maps in the kernel, so nothing crosses to user space per read or write; the
 * path of each new file crosses once, through a ring buffer, and the lookups, the changes
 * to files, the processes and sampled stacks through rings of their own (docs/trace.md).
 *
 * - Tasks: a followed task has a `struct task` in task-local storage (`tasks`), made when
 *   the command executes (its pid is in `roots`) and for every thread and child a followed
 *   task starts (sched_process_fork); it goes with the task. Every other task's system
 *   calls cost one empty look-up.
 * - Calls: BTF-typed tracepoints on sys_enter and sys_exit. The entry looks the call up in
 *   `syscalls` (filled by user space from src/syscalls.rs: what the call does and where
 *   its arguments are) and notes in the task's state its descriptors' files, offsets and
 *   flags, and its start; the exit adds the result to the target's `stats` (keyed by
 *   device and inode; the read and write calls' counts per system call there too, the
 *   others' in `sys_stats`), and places each read against the previous read on the same
 *   open file, each write against the previous write (`positions`).
 * - Names: the first time a regular file or a directory is seen, its dentries are walked up
 *   to the root, across mounts, and the path goes to `paths` (a ring buffer).
 * - Identity: a target is its device, inode number and the inode's generation: a file
 *   system gives a freed inode number to the next file it makes, and without the
 *   generation that file's calls would be counted on the deleted one, under its name.
 * - Bounds: every map has a size; what does not fit is counted in `counters` and reported.
 *
 * SPDX-License-Identifier: MIT OR GPL-2.0 */
#include "kernel.h"

/* What a followed call does (src/engine/bpf/layout.rs, `Role`). */
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

/* src/engine/bpf/layout.rs `CallDef`. */
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
#define MAX_DEPTH 512

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

/* Kinds of `events` (collect.rs `EventKind`). */
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

#define STACK_BYTES 8192
#define MAX_STACKS 8192
#define ARGS_BYTES 512
#define NAME_BYTES 256
#define EVENT_DATA 8192
#define PATHS_BYTES (4 << 20)
#define RING_BYTES (8 << 20)
#define FAR_PAGES 64

struct key {
	u64 dev;
	u64 ino;
	u32 gen; /* i_generation: a new file that reuses a freed inode number has another */
	u32 pad;
};

struct flow {
	u64 calls, bytes, ns, sequential, repeated, direct, synced, first, last;
	u64 gap_ns, gaps; /* the time since the task's previous followed call ended */
	u64 sizes[BUCKETS];
};

struct call_stat {
	u64 calls, errors, ns;
};

/* Calls of the first DATA_CALLS entries of Sys::ALL (the reads and writes) are counted in
 * the target's stats; the others in `sys_stats`. */
#define DATA_CALLS 16

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
_Static_assert(sizeof(struct stats) == 1240, "layout.rs holds the same struct");
_Static_assert(sizeof(struct key) == 24, "layout.rs holds the same struct");

struct sys_key {
	u64 dev;
	u64 ino;
	u32 gen;
	u32 index;
};
_Static_assert(sizeof(struct sys_key) == 24, "layout.rs holds the same struct");

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

struct use {
	u64 calls, bytes, ns;
};

/* Page faults on the maps of a file (events.rs `Faults`). */
struct faults {
	u64 faults, added, far, last;
};

struct event {
	u32 kind, pid;
	u64 at;
	struct sys_key k; /* the target, and the call's index */
	u64 a, b, c;
	u32 len, pad;
	char data[EVENT_DATA];
};
#define EVENT_HEADER 72
_Static_assert(__builtin_offsetof(struct event, data) == EVENT_HEADER,
	       "collect.rs reads the same header");

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
	       "collect.rs reads the same header");

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

/* The file behind descriptor `fd` of `task` (a BTF pointer: the verifier follows its
 * fields itself), or 0. */
static __always_inline struct file *fd_file(struct task_struct *task, s64 fd)
{
	if (fd < 0)
		return 0;
	struct files_struct *files = task->files;
	if (!files)
		return 0;
	struct fdtable *fdt = files->fdt;
	if (!fdt || fd >= fdt->max_fds)
		return 0;
	struct file **table = fdt->fd;
	struct file *f = 0;
	bpf_probe_read_kernel(&f, sizeof(f), &table[fd]);
	return f;
}

/* Notes what `f` is into `s`; returns whether there is a file. */
static __always_inline int describe(struct side *s, struct file *f)
{
	struct inode *i = 0;
	struct super_block *sb = 0;
	u32 dev = 0;
	unsigned long ino = 0;
	u16 mode = 0;
	if (!f)
		return 0;
	READ(i, f->f_inode);
	READ(sb, i->i_sb);
	READ(dev, sb->s_dev);
	READ(ino, i->i_ino);
	READ(mode, i->i_mode);
	READ(s->rdev, i->i_rdev);
	READ(s->gen, i->i_generation);
	READ(s->flags, f->f_flags);
	READ(s->pos, f->f_pos);
	s->file = (u64)f;
	s->inode = (u64)i;
	s->dev = dev;
	s->ino = ino;
	s->mode = mode;
	s->ok = 1;
	return 1;
}

/* A walk from a dentry up to the root, one component per step of bpf_loop (a loop the
 * verifier checks once, not once per component). */
struct walk {
	struct dentry *d;
	struct vfsmount *vm;
	struct mount *mnt;
	u32 off; /* the path so far is scratch.buf[off .. PATH_MAX) */
	u32 complete;
};

static long walk_step(u64 i, struct walk *w)
{
	u32 zero = 0;
	struct scratch *s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return 1;
	/* Every READ starts from a kernel type (CO-RE relocates accesses from there). */
	struct dentry *d = w->d, *root = 0, *parent = 0;
	struct vfsmount *vm = w->vm;
	struct mount *mnt = w->mnt;
	READ(root, vm->mnt_root);
	READ(parent, d->d_parent);
	if (d == root) {
		struct mount *up = 0;
		READ(up, mnt->mnt_parent);
		if (up == mnt) {
			w->complete = 1;
			return 1;
		}
		READ(w->d, mnt->mnt_mountpoint);
		w->mnt = up;
		w->vm = (void *)up + FIELD_OFFSET(struct mount, mnt);
		return 0;
	}
	if (d == parent) {
		/* The root of a file system mounted nowhere (an internal one). */
		w->complete = 1;
		return 1;
	}
	u32 len = 0;
	const unsigned char *name = 0;
	READ(len, d->d_name.len);
	READ(name, d->d_name.name);
	if (len > 255)
		len = 255;
	u32 off = w->off;
	if (off > PATH_MAX || len + 2 > off)
		return 1;
	off -= len + 1;
	s->buf[off & (PATH_MAX - 1)] = '/';
	bpf_probe_read_kernel(&s->buf[(off + 1) & (PATH_MAX - 1)], len & 255, name);
	w->off = off;
	w->d = parent;
	return 0;
}

/* Sends the path of the dentry `d` on the mount `vm` (a regular file or a directory) to
 * user space under the key `k`: its dentries walked up to the root of their mount, then
 * from the mount point up, to the root of the mount tree. A path deeper than MAX_DEPTH
 * components or longer than PATH_MAX is sent cut, with `complete` 0. */
static __always_inline void name_dentry(struct dentry *d, struct vfsmount *vm, struct key *k)
{
	u32 zero = 0;
	struct walk w = {};
	w.d = d;
	w.vm = vm;
	w.mnt = (void *)w.vm - FIELD_OFFSET(struct mount, mnt);
	w.off = PATH_MAX;
	bpf_loop(MAX_DEPTH, walk_step, &w, 0);
	struct scratch *s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return;
	u32 off = w.off;
	if (off > PATH_MAX)
		return;
	if (off == PATH_MAX) {
		s->buf[PATH_MAX - 1] = '/';
		off = PATH_MAX - 1;
	}
	u32 len = PATH_MAX - off;
	s->ev.dev = k->dev;
	s->ev.ino = k->ino;
	s->ev.gen = k->gen;
	s->ev.len = len;
	s->ev.complete = w.complete;
	bpf_probe_read_kernel(s->ev.path, len & (PATH_MAX - 1), &s->buf[off & (PATH_MAX - 1)]);
	if (bpf_ringbuf_output(&paths, &s->ev, PATH_EVENT_HEADER + (len & (PATH_MAX - 1)),
			       quiet(&paths, PATHS_BYTES)))
		bump(C_LOST_PATHS);
}

/* Sends the path of `f` (a regular file or a directory) under the key `k`. */
static __always_inline void name_target(struct file *f, struct key *k)
{
	struct dentry *d = 0;
	struct vfsmount *vm = 0;
	READ(d, f->f_path.dentry);
	READ(vm, f->f_path.mnt);
	name_dentry(d, vm, k);
}

/* Notes the size of the regular file `s` describes in its stats. */
static __always_inline void size_of(struct stats *st, struct side *s)
{
	struct inode *i = (struct inode *)s->inode;
	s64 size = 0;
	READ(size, i->i_size);
	st->size = size;
}

/* The stats of the target `s` describes, made (and named) on first sight; 0 when the map
 * is full. */
static __always_inline struct stats *target(struct side *s)
{
	struct key k = {s->dev, s->ino, s->gen, 0};
	struct stats *st = bpf_map_lookup_elem(&stats, &k);
	if (st)
		return st;
	u32 zero = 0;
	struct stats *z = bpf_map_lookup_elem(&blank, &zero);
	if (!z)
		return 0;
	long err = bpf_map_update_elem(&stats, &k, z, BPF_NOEXIST);
	st = bpf_map_lookup_elem(&stats, &k);
	if (!st) {
		bump(C_LOST_CALLS);
		return 0;
	}
	if (err == 0) {
		st->mode = s->mode;
		st->rdev = s->rdev;
		u32 type = s->mode & S_IFMT;
		if (type == S_IFREG)
			size_of(st, s);
		if (type == S_IFREG || type == S_IFDIR)
			name_target((struct file *)s->file, &k);
	}
	return st;
}

/* Counts one call of `index` on the target `s` describes. */
static __always_inline void count_call(struct side *s, u8 index, s64 ret, u64 ns)
{
	struct sys_key k = {s->dev, s->ino, s->gen, index};
	struct call_stat *c = bpf_map_lookup_elem(&sys_stats, &k);
	if (!c) {
		struct call_stat z = {};
		bpf_map_update_elem(&sys_stats, &k, &z, BPF_NOEXIST);
		c = bpf_map_lookup_elem(&sys_stats, &k);
		if (!c)
			return;
	}
	__sync_fetch_and_add(&c->calls, 1);
	__sync_fetch_and_add(&c->ns, ns);
	if (ret < 0)
		__sync_fetch_and_add(&c->errors, 1);
}

/* Counts a call that names no target. */
static __always_inline void count_other(u8 index, s64 ret, u64 ns)
{
	u32 i = index;
	struct call_stat *c = bpf_map_lookup_elem(&other, &i);
	if (!c)
		return;
	__sync_fetch_and_add(&c->calls, 1);
	__sync_fetch_and_add(&c->ns, ns);
	if (ret < 0)
		__sync_fetch_and_add(&c->errors, 1);
}

static __always_inline u32 current_pid(void)
{
	return bpf_get_current_pid_tgid() >> 32;
}

/* The per-CPU event to fill, its header set: `kind`, by process `pid`, now. */
static __always_inline struct event *new_event(u32 kind, u32 pid)
{
	u32 zero = 0;
	struct event *e = bpf_map_lookup_elem(&event_scratch, &zero);
	if (!e)
		return 0;
	e->kind = kind;
	e->pid = pid;
	e->at = bpf_ktime_get_ns();
	e->k.dev = 0;
	e->k.ino = 0;
	e->k.gen = 0;
	e->k.index = 0;
	e->a = 0;
	e->b = 0;
	e->c = 0;
	e->len = 0;
	return e;
}

static __always_inline void send(struct event *e)
{
	u32 len = e->len;
	if (len > EVENT_DATA)
		len = EVENT_DATA;
	void *ring = (void *)&events;
	u32 lost = C_LOST_EVENTS;
	if (e->kind == EV_STACK) {
		ring = (void *)&stacks;
		lost = C_COUNTERS;
	} else if (e->kind == EV_LOOKUP || e->kind == EV_FAILED_OPEN) {
		ring = (void *)&lookup_ring;
		lost = C_LOST_LOOKUPS;
	}
	if (bpf_ringbuf_output(ring, e, EVENT_HEADER + len, quiet(ring, RING_BYTES)) &&
	    lost < C_COUNTERS)
		bump(lost);
}

/* A change of kind `kind_gen & 0xffffffff` to the file (dev, ino, `kind_gen >> 32`: its
 * generation; five arguments at most). Global functions (this one and the two
 * after it) are verified once, not at each caller. */
__attribute__((noinline)) int change(u64 kind_gen, u64 dev, u64 ino, u64 a, u64 b)
{
	u32 kind = kind_gen & 0xffffffff, gen = kind_gen >> 32;
	struct event *e = new_event(kind, current_pid());
	if (!e)
		return 0;
	e->k.dev = dev;
	e->k.ino = ino;
	e->k.gen = gen;
	e->a = a;
	e->b = b;
	send(e);
	return 0;
}

/* A write to the regular file (dev, ino, gen) through a descriptor without O_DSYNC: dirty
 * until synced. */
__attribute__((noinline)) int mark_dirty(u64 dev, u64 ino, u32 gen)
{
	struct key k = {dev, ino, gen, 0};
	if (bpf_map_lookup_elem(&dirty, &k))
		return 0;
	u8 one = 1;
	bpf_map_update_elem(&dirty, &k, &one, BPF_ANY);
	change(EV_DIRTIED | (u64)(gen) << 32, dev, ino, 0, 0);
	return 0;
}

/* A sync of (dev, ino, gen): a change, whether it looked dirty or not. */
__attribute__((noinline)) int mark_synced(u64 dev, u64 ino, u32 gen)
{
	struct key k = {dev, ino, gen, 0};
	/* Every sync is a change (a sync of a file that looks clean too: its dirty mark may
	 * have been evicted, or its size cut since). */
	bpf_map_delete_elem(&dirty, &k);
	change(EV_SYNCED | (u64)(gen) << 32, dev, ino, 0, 0);
	return 0;
}

/* The key of `i` into `k`. */
static __always_inline void inode_key(struct inode *i, struct key *k)
{
	struct super_block *sb = 0;
	u32 dev = 0;
	unsigned long ino = 0;
	READ(sb, i->i_sb);
	READ(dev, sb->s_dev);
	READ(ino, i->i_ino);
	READ(k->gen, i->i_generation);
	k->dev = dev;
	k->ino = ino;
}

/* The directory a relative path of `task` starts from: its working directory
 * (`AT_FDCWD`) or the folder open at `dirfd`; its dentry, mount and key; 0 when none. */
static __always_inline int dir_of(struct task_struct *task, s64 dirfd, struct dentry **d,
				  struct vfsmount **vm, struct key *k)
{
	struct dentry *dd = 0;
	struct vfsmount *mm = 0;
	if (dirfd == AT_FDCWD) {
		struct fs_struct *fs = task->fs;
		if (fs) {
			READ(dd, fs->pwd.dentry);
			READ(mm, fs->pwd.mnt);
		}
	} else {
		struct file *f = fd_file(task, dirfd);
		if (f) {
			READ(dd, f->f_path.dentry);
			READ(mm, f->f_path.mnt);
		}
	}
	struct inode *i = 0;
	if (dd)
		READ(i, dd->d_inode);
	if (!i || !mm)
		return 0;
	inode_key(i, k);
	*d = dd;
	*vm = mm;
	return 1;
}

/* A lookup or a failed open of the path at `ptr` (user memory) by call `index`: its path,
 * result and time, sent for user space to count (a run of 50 000 distinct paths costs less
 * so than a map read back entry by entry). A global function: verified once. */
__attribute__((noinline)) int path_call(u64 kind_index, u64 ptr, s64 dirfd, s64 ret, u64 ns)
{
	u32 kind = kind_index & 0xffffffff, index = kind_index >> 32;
	if (!ptr)
		return 0;
	struct event *e = new_event(kind, current_pid());
	if (!e)
		return 0;
	long n = bpf_probe_read_user_str(e->data, NAME_BYTES, (void *)ptr);
	/* Unreadable, or empty: an fstat through AT_EMPTY_PATH. */
	if (n <= 1)
		return 0;
	e->len = n;
	e->a = ret;
	e->b = ns;
	e->k.index = index;
	/* A relative path: the key of the directory it starts from (a name asked in each of
	 * many folders is not a path asked again). */
	if (e->data[0] != '/') {
		struct dentry *d = 0;
		struct vfsmount *vm = 0;
		struct key k = {};
		if (dir_of(bpf_get_current_task_btf(), dirfd, &d, &vm, &k)) {
			e->k.dev = k.dev;
			e->k.ino = k.ino;
			e->k.gen = k.gen;
			/* The directory's path, sent the first time. */
			u8 one = 1;
			if (bpf_map_update_elem(&named_dirs, &k, &one, BPF_NOEXIST) == 0)
				name_dentry(d, vm, &k);
		}
	}
	send(e);
	return 0;
}

/* A rename that succeeded: both paths (`ptr`, `ptr2`: user memory), and the directory
 * relative ones start from (`dirfd`). A global function: verified once. */
__attribute__((noinline)) int renamed(u64 ptr, u64 ptr2, s64 dirfd)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct event *e = new_event(EV_RENAMED, current_pid());
	if (!e)
		return 0;
	long n = bpf_probe_read_user_str(e->data, NAME_BYTES, (void *)ptr);
	if (n <= 0)
		return 0;
	/* n <= NAME_BYTES (a longer path is cut, its NUL last). */
	u32 off = n > NAME_BYTES ? NAME_BYTES : n;
	long m = bpf_probe_read_user_str(&e->data[off & (2 * NAME_BYTES - 1)], NAME_BYTES,
					 (void *)ptr2);
	if (m <= 0)
		return 0;
	e->len = off + (m > NAME_BYTES ? NAME_BYTES : m);
	struct dentry *d = 0;
	struct vfsmount *vm = 0;
	struct key k = {};
	if (dir_of(task, dirfd, &d, &vm, &k)) {
		e->k.dev = k.dev;
		e->k.ino = k.ino;
		e->k.gen = k.gen;
		name_dentry(d, vm, &k);
	}
	send(e);
	return 0;
}

/* The user stack of the current task at the call's exit (instruction pointer `ip`, stack
 * pointer `sp`), for the target (dev, ino, `gen_index & 0xffffffff`) and the call of index
 * `gen_index >> 32`. A global function: verified once. */
__attribute__((noinline)) int sample_stack(u64 ip, u64 sp, u64 dev, u64 ino, u64 gen_index)
{
	struct event *e = new_event(EV_STACK, current_pid());
	if (!e)
		return 0;
	e->k.dev = dev;
	e->k.ino = ino;
	e->k.gen = gen_index & 0xffffffff;
	e->k.index = gen_index >> 32;
	e->a = ip;
	struct task_struct *task = bpf_get_current_task_btf();
	struct mm_struct *mm = task->mm;
	u64 top = 0, len = STACK_BYTES;
	if (mm) {
		e->b = mm->start_code;
		e->c = mm->end_code;
		top = mm->env_end;
	}
	/* The stack above the stack pointer, a KiB at a time: a read that meets a page never
	 * touched (a large local buffer) or the end of the mapping fails, and that KiB is left
	 * zero; on the main thread's stack, no further than the end of the environment
	 * strings at its top. */
	if (top > sp && top - sp < STACK_BYTES)
		len = (top - sp) & ~7ULL;
	if (len > STACK_BYTES)
		len = STACK_BYTES;
	u32 got = 0;
	for (u32 i = 0; i < STACK_BYTES / 1024; i++) {
		u32 at = i * 1024;
		if (at >= len)
			break;
		char *to = &e->data[at & (STACK_BYTES - 1)];
		if (bpf_probe_read_user(to, 1024, (void *)(sp + at)) == 0) {
			got = at + 1024;
		} else {
			/* A hole: zeros (no return address), and go on past it. */
			for (u32 j = 0; j < 1024; j += 8)
				*(u64 *)(to + j) = 0;
		}
	}
	e->len = got;
	send(e);
	return 0;
}

/* Counts the call on the target `s` for the current process: in its stats for the first
 * process that used it, else in `uses`; samples the stack of the first calls and one in
 * 4096 after (events.rs `sampled`). */
static __always_inline void used(struct pt_regs *regs, struct side *s, struct stats *st,
				 struct task *p, s64 ret, u64 ns)
{
	if (!s->ok)
		return;
	u32 pid = current_pid();
	u64 bytes = 0;
	if ((p->role == ROLE_READ || p->role == ROLE_WRITE || p->role == ROLE_COPY) && ret > 0)
		bytes = ret;
	u64 n = 0;
	if (st->pid1 == pid || (st->pid1 == 0 && __sync_val_compare_and_swap(&st->pid1, 0, pid) == 0)) {
		n = __sync_fetch_and_add(&st->calls1, 1);
		__sync_fetch_and_add(&st->bytes1, bytes);
		__sync_fetch_and_add(&st->ns1, ns);
	} else {
		struct sys_key k = {s->dev, s->ino, s->gen, pid};
		struct use *u = bpf_map_lookup_elem(&uses, &k);
		if (!u) {
			struct use z = {};
			bpf_map_update_elem(&uses, &k, &z, BPF_NOEXIST);
			u = bpf_map_lookup_elem(&uses, &k);
			if (!u)
				return;
		}
		n = __sync_fetch_and_add(&u->calls, 1);
		__sync_fetch_and_add(&u->bytes, bytes);
		__sync_fetch_and_add(&u->ns, ns);
	}
	if (n < 3 || n % 4096 == 0) {
		u32 which = C_STACKS;
		u64 *taken = bpf_map_lookup_elem(&counters, &which);
		if (taken && __sync_fetch_and_add(taken, 1) < MAX_STACKS)
			sample_stack(USER_IP(regs), USER_SP(regs), s->dev, s->ino,
				     s->gen | (u64)p->index << 32);
	}
}

/* The size bucket of a call that moved `n` bytes: model.rs `size_bucket`. */
static __always_inline u32 bucket(u64 n)
{
	u32 b = 0;
	if (n >> 32) { b += 32; n >>= 32; }
	if (n >> 16) { b += 16; n >>= 16; }
	if (n >> 8) { b += 8; n >>= 8; }
	if (n >> 4) { b += 4; n >>= 4; }
	if (n >> 2) { b += 2; n >>= 2; }
	if (n >> 1) { b += 1; n >>= 1; }
	b += n;
	return b > BUCKETS - 1 ? BUCKETS - 1 : b;
}

/* Adds one read or write of `ret` bytes through `s`, started at `t0`, to `fl`, placed
 * against the previous call on the same open file (model.rs `Place`). */
static __always_inline void flow_add(struct flow *fl, struct side *s, s64 ret, u64 ns, u64 t0,
				     u64 gap, int write)
{
	__sync_fetch_and_add(&fl->calls, 1);
	if (gap != NO_GAP) {
		__sync_fetch_and_add(&fl->gap_ns, gap);
		__sync_fetch_and_add(&fl->gaps, 1);
	}
	__sync_fetch_and_add(&fl->bytes, ret);
	__sync_fetch_and_add(&fl->ns, ns);
	__sync_fetch_and_add(&fl->sizes[bucket(ret) & (BUCKETS - 1)], 1);
	if (fl->first == 0)
		__sync_val_compare_and_swap(&fl->first, 0, t0);
	if (t0 > fl->last)
		fl->last = t0;
	if (s->flags & O_DIRECT)
		__sync_fetch_and_add(&fl->direct, 1);
	if (write && (s->flags & O_DSYNC))
		__sync_fetch_and_add(&fl->synced, 1);
	if ((s->mode & S_IFMT) != S_IFREG || ret <= 0)
		return;
	if (write && (s->flags & O_APPEND)) {
		__sync_fetch_and_add(&fl->sequential, 1);
		return;
	}
	u64 start = s->pos;
	/* Reads are placed against reads, writes against writes (a file's pointers are
	 * aligned, so the low bit is free for the direction). */
	u64 key = s->file | (u64)(write != 0);
	struct span *sp = bpf_map_lookup_elem(&positions, &key);
	if (!sp) {
		if (start == 0)
			__sync_fetch_and_add(&fl->sequential, 1);
		struct span now = {start, start + ret};
		bpf_map_update_elem(&positions, &key, &now, BPF_ANY);
		return;
	}
	if (start == sp->end)
		__sync_fetch_and_add(&fl->sequential, 1);
	else if (start == sp->start)
		__sync_fetch_and_add(&fl->repeated, 1);
	sp->start = start;
	sp->end = start + ret;
}

/* A read or write through `s` that returned `ret`. */
static __always_inline struct stats *transfer(struct side *s, struct task *p, s64 ret, u64 ns,
					      int write)
{
	if (!s->ok) {
		count_other(p->index, ret, ns);
		return 0;
	}
	struct stats *st = target(s);
	if (!st)
		return 0;
	if (p->index < DATA_CALLS) {
		struct call_stat *c = &st->data_calls[p->index & (DATA_CALLS - 1)];
		__sync_fetch_and_add(&c->calls, 1);
		__sync_fetch_and_add(&c->ns, ns);
		if (ret < 0)
			__sync_fetch_and_add(&c->errors, 1);
	} else {
		count_call(s, p->index, ret, ns);
	}
	if (ret < 0) {
		__sync_fetch_and_add(&st->errors, 1);
		return st;
	}
	flow_add(write ? &st->write : &st->read, s, ret, ns, p->t0, p->gap, write);
	/* A file read past the size it had when first seen has grown: its size is where the
	 * reads end, at least. */
	if (!write && ret > 0 && (s->mode & S_IFMT) == S_IFREG && s->pos + ret > (s64)st->size)
		st->size = s->pos + ret;
	if (write && (s->mode & S_IFMT) == S_IFREG) {
		size_of(st, s);
		if (ret > 0 && !(s->flags & O_DSYNC))
			mark_dirty(s->dev, s->ino, s->gen);
	}
	return st;
}

/* Where a copy's side starts: the offset the pointer in argument `ptr` holds, else the
 * descriptor's position. */
static __always_inline void copy_offset(struct pt_regs *regs, u8 ptr, struct side *s)
{
	if (ptr == NO_ARG)
		return;
	u64 at = arg(regs, ptr);
	if (at)
		bpf_probe_read_user(&s->pos, sizeof(s->pos), (void *)at);
}

SEC("tp_btf/sys_enter")
int sys_enter(u64 *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct task *p = bpf_task_storage_get(&tasks, task, 0, 0);
	if (!p || !p->armed)
		return 0;
	s64 nr = (s64)ctx[1];
	if (nr < 0 || nr >= MAX_SYSCALLS)
		return 0;
	u32 n = nr;
	struct call_def *def = bpf_map_lookup_elem(&syscalls, &n);
	/* Any call ends a fault: a page added to the cache after it is the call's (readahead,
	 * madvise), not the fault's. */
	p->fault_ino = 0;
	if (!def || def->role == ROLE_NONE)
		return 0;
	/* The program's own work since its last followed call (model.rs `Flow::gap_ns`),
	 * when it ran all along: a gap in which it waited or was preempted is not counted. */
	u64 entered = bpf_ktime_get_ns();
	u64 ran = p->gap_from && entered > p->gap_from &&
		  task->nvcsw + task->nivcsw == p->gap_switches;
	p->gap = ran ? entered - p->gap_from : NO_GAP;
	struct pt_regs *regs = (struct pt_regs *)ctx[0];
	p->role = def->role;
	p->index = def->index;
	p->a.ok = 0;
	p->b.ok = 0;
	p->arg = 0;
	p->ptr = def->path == NO_ARG ? 0 : arg(regs, def->path);
	p->ptr2 = def->path2 == NO_ARG ? 0 : arg(regs, def->path2);
	p->dirfd = def->dirfd == NO_ARG ? AT_FDCWD : (s32)arg(regs, def->dirfd);
	switch (def->role) {
	case ROLE_READ:
	case ROLE_WRITE:
		describe(&p->a, fd_file(task, arg(regs, def->fd)));
		if (def->pos != NO_ARG) {
			s64 at = arg(regs, def->pos);
			/* preadv2 and pwritev2 take -1 for the descriptor's position. */
			if (at != -1)
				p->a.pos = at;
		}
		break;
	case ROLE_COPY:
		describe(&p->a, fd_file(task, arg(regs, def->fd)));
		describe(&p->b, fd_file(task, arg(regs, def->fd2)));
		copy_offset(regs, def->pos_ptr, &p->a);
		copy_offset(regs, def->pos2_ptr, &p->b);
		break;
	case ROLE_OPEN:
		if (def->flags == FLAGS_CREAT) {
			p->arg = O_CREAT | O_TRUNC;
		} else if (def->flags == FLAGS_HOW) {
			u64 how = arg(regs, 2);
			bpf_probe_read_user(&p->arg, sizeof(p->arg), (void *)how);
		} else {
			p->arg = arg(regs, def->flags);
		}
		break;
	case ROLE_MSYNC:
		p->arg = arg(regs, 0);
		break;
	case ROLE_MUNMAP: {
		struct map_key mk = {(u32)(bpf_get_current_pid_tgid() >> 32), 0, arg(regs, 0)};
		bpf_map_delete_elem(&mapped, &mk);
		return 0;
	}
	case ROLE_MMAP:
		if (arg(regs, 3) & MAP_ANONYMOUS)
			return 0;
		describe(&p->a, fd_file(task, arg(regs, def->fd)));
		p->arg = arg(regs, 1);
		break;
	case ROLE_RING:
		describe(&p->a, fd_file(task, arg(regs, def->fd)));
		p->arg = arg(regs, 1) & 0xffffffff;
		break;
	case ROLE_OTHER:
	case ROLE_LOOKUP:
	case ROLE_RENAME:
	case ROLE_SYNC_ALL:
		break;
	case ROLE_TRUNCATE: {
		describe(&p->a, fd_file(task, arg(regs, def->fd)));
		struct inode *i = (struct inode *)p->a.inode;
		s64 size = 0;
		if (p->a.ok)
			READ(size, i->i_size);
		p->size0 = size;
		p->arg = arg(regs, 1);
		break;
	}
	default: /* sync, seek, close, dup, fcntl */
		describe(&p->a, fd_file(task, arg(regs, def->fd)));
		if (def->role == ROLE_SYNC)
			p->arg = def->flags;
		break;
	}
	p->in_call = 1;
	/* The clock starts last, so that the call's time leaves this program out. */
	p->t0 = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/sys_exit")
int sys_exit(u64 *ctx)
{
	u64 now = bpf_ktime_get_ns();
	struct task_struct *task = bpf_get_current_task_btf();
	struct task *p = bpf_task_storage_get(&tasks, task, 0, 0);
	if (!p || !p->in_call)
		return 0;
	p->in_call = 0;
	s64 ret = (s64)ctx[1];
	u64 ns = now - p->t0;
	struct stats *st = 0;
	switch (p->role) {
	case ROLE_READ:
		st = transfer(&p->a, p, ret, ns, 0);
		break;
	case ROLE_WRITE:
		st = transfer(&p->a, p, ret, ns, 1);
		break;
	case ROLE_COPY:
		/* One call, two targets: each gets half of its time (and no gap: a copy is
		 * neither flow's own call). */
		p->gap = NO_GAP;
		st = transfer(&p->a, p, ret, ns / 2, 0);
		transfer(&p->b, p, ret, ns - ns / 2, 1);
		break;
	case ROLE_OPEN: {
		if (ret < 0) {
			count_other(p->index, ret, ns);
			path_call(EV_FAILED_OPEN | (u64)p->index << 32, p->ptr, p->dirfd, ret, ns);
			break;
		}
		struct file *f = fd_file(bpf_get_current_task_btf(), ret);
		if (!describe(&p->a, f)) {
			count_other(p->index, ret, ns);
			break;
		}
		/* A new open file: nothing read or written through it yet. */
		u64 fresh = p->a.file;
		bpf_map_delete_elem(&positions, &fresh);
		fresh |= 1;
		bpf_map_delete_elem(&positions, &fresh);
		st = target(&p->a);
		if (!st)
			break;
		count_call(&p->a, p->index, ret, ns);
		__sync_fetch_and_add(&st->opens, 1);
		u64 fl = p->arg | p->a.flags;
		if (fl & O_DIRECT)
			__sync_fetch_and_add(&st->o_direct, 1);
		if ((fl & O_SYNC) == O_SYNC)
			__sync_fetch_and_add(&st->o_sync, 1);
		else if (fl & O_DSYNC)
			__sync_fetch_and_add(&st->o_dsync, 1);
		if (fl & O_APPEND)
			__sync_fetch_and_add(&st->o_append, 1);
		if (fl & O_TRUNC)
			__sync_fetch_and_add(&st->o_trunc, 1);
		if (fl & O_CREAT)
			__sync_fetch_and_add(&st->o_creat, 1);
		if ((p->arg & (O_CREAT | O_TRUNC)) && (p->a.mode & S_IFMT) == S_IFREG) {
			u32 mode = 0;
			READ(mode, f->f_mode);
			change(EV_OPENED | (u64)(p->a.gen) << 32, p->a.dev, p->a.ino, mode, p->arg);
		}
		break;
	}
	case ROLE_MSYNC: {
		struct map_key mk = {(u32)(bpf_get_current_pid_tgid() >> 32), 0, p->arg};
		struct key *k = bpf_map_lookup_elem(&mapped, &mk);
		if (!k) {
			count_other(p->index, ret, ns);
			break;
		}
		struct side s = {};
		s.dev = k->dev;
		s.ino = k->ino;
		s.gen = k->gen;
		s.ok = 1;
		st = bpf_map_lookup_elem(&stats, k);
		if (!st)
			break;
		count_call(&s, p->index, ret, ns);
		if (ret < 0) {
			__sync_fetch_and_add(&st->errors, 1);
		} else {
			__sync_fetch_and_add(&st->syncs, 1);
			__sync_fetch_and_add(&st->sync_ns, ns);
			mark_synced(k->dev, k->ino, k->gen);
		}
		break;
	}
	case ROLE_OTHER:
		count_other(p->index, ret, ns);
		break;
	case ROLE_SYNC_ALL:
		count_other(p->index, ret, ns);
		change(EV_SYNCED_ALL, 0, 0, 0, 0);
		break;
	case ROLE_LOOKUP:
		count_other(p->index, ret, ns);
		path_call(EV_LOOKUP | (u64)p->index << 32, p->ptr, p->dirfd, ret, ns);
		break;
	case ROLE_RENAME:
		count_other(p->index, ret, ns);
		if (ret == 0)
			renamed(p->ptr, p->ptr2, p->dirfd);
		break;
	default: {
		/* sync, seek, close, dup, fcntl, mmap, io_uring_enter: counted on the target of the
		 * descriptor as it was at the entry. */
		if (!p->a.ok) {
			count_other(p->index, ret, ns);
			break;
		}
		st = target(&p->a);
		if (!st)
			break;
		count_call(&p->a, p->index, ret, ns);
		if (ret < 0 && (p->role != ROLE_MMAP || ret > -4096)) {
			__sync_fetch_and_add(&st->errors, 1);
			break;
		}
		if (p->role == ROLE_SYNC) {
			__sync_fetch_and_add(&st->syncs, 1);
			__sync_fetch_and_add(&st->sync_ns, ns);
			mark_synced(p->a.dev, p->a.ino, p->a.gen);
			if (p->arg == SYNCS_ALL)
				change(EV_SYNCED_ALL, p->a.dev, 0, 0, 0);
		} else if (p->role == ROLE_TRUNCATE) {
			if (ret == 0 && p->arg < p->size0 && (p->a.mode & S_IFMT) == S_IFREG)
				change(EV_TRUNCATED | (u64)(p->a.gen) << 32, p->a.dev, p->a.ino, 0, 0);
		} else if (p->role == ROLE_SEEK) {
			__sync_fetch_and_add(&st->seeks, 1);
		} else if (p->role == ROLE_RING) {
			__sync_fetch_and_add(&st->ring_enters, 1);
			__sync_fetch_and_add(&st->ring_submissions, p->arg);
		} else if (p->role == ROLE_MMAP) {
			__sync_fetch_and_add(&st->mmaps, 1);
			__sync_fetch_and_add(&st->mmap_bytes, p->arg);
			struct map_key mk = {(u32)(bpf_get_current_pid_tgid() >> 32), 0, (u64)ret};
			struct key k = {p->a.dev, p->a.ino, p->a.gen, 0};
			bpf_map_update_elem(&mapped, &mk, &k, BPF_ANY);
		}
		break;
	}
	}
	if (p->role != ROLE_MSYNC && st)
		used((struct pt_regs *)ctx[0], &p->a, st, p, ret, ns);
	p->gap_switches = task->nvcsw + task->nivcsw;
	p->gap_from = bpf_ktime_get_ns();
	return 0;
}

/* The program a process executes: its parent, where its code is, its filename and
 * arguments. */
static __always_inline void exec_event(struct task_struct *task, struct linux_binprm *bprm)
{
	struct event *e = new_event(EV_EXEC, task->tgid);
	if (!e)
		return;
	struct task_struct *parent = task->real_parent;
	if (parent)
		e->a = parent->tgid;
	struct mm_struct *mm = task->mm;
	u64 arg_start = 0, arg_end = 0;
	if (mm) {
		e->b = mm->start_code;
		e->c = mm->end_code;
		arg_start = mm->arg_start;
		arg_end = mm->arg_end;
		/* The executable's own path (bprm->filename may be relative, or a script's). */
		struct file *exe = 0;
		READ(exe, mm->exe_file);
		if (exe) {
			struct side x = {};
			if (describe(&x, exe)) {
				struct key k = {x.dev, x.ino, x.gen, 0};
				e->k.dev = x.dev;
				e->k.ino = x.ino;
				e->k.gen = x.gen;
				name_target(exe, &k);
			}
		}
	}
	const char *name = 0;
	READ(name, bprm->filename);
	long n = bpf_probe_read_kernel_str(e->data, NAME_BYTES, name);
	if (n < 0)
		n = 0;
	u32 off = n > NAME_BYTES ? NAME_BYTES : n;
	u64 len = arg_end > arg_start ? arg_end - arg_start : 0;
	if (len > ARGS_BYTES)
		len = ARGS_BYTES;
	if (len && bpf_probe_read_user(&e->data[off & (2 * NAME_BYTES - 1)], len,
				       (void *)arg_start) == 0)
		off += len;
	e->len = off;
	send(e);
}

SEC("tp_btf/sched_process_fork")
int process_fork(u64 *ctx)
{
	struct task_struct *parent = (struct task_struct *)ctx[0];
	struct task_struct *child = (struct task_struct *)ctx[1];
	struct task *p = bpf_task_storage_get(&tasks, parent, 0, 0);
	if (!p || !p->armed)
		return 0;
	struct task *c = bpf_task_storage_get(&tasks, child, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!c) {
		bump(C_LOST_TASKS);
		return 0;
	}
	c->armed = 1;
	bump(child->pid == child->tgid ? C_PROCESSES : C_THREADS);
	if (child->pid == child->tgid) {
		struct event *e = new_event(EV_FORK, child->tgid);
		if (e) {
			e->a = parent->tgid;
			send(e);
		}
	}
	return 0;
}

SEC("tp_btf/sched_process_exec")
int process_exec(u64 *ctx)
{
	struct task_struct *task = (struct task_struct *)ctx[0];
	struct task *p = bpf_task_storage_get(&tasks, task, 0, 0);
	if (!p) {
		/* The command itself is followed from its execve on, not before. */
		u32 tid = task->pid;
		if (!bpf_map_lookup_elem(&roots, &tid))
			return 0;
		p = bpf_task_storage_get(&tasks, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!p) {
			bump(C_LOST_TASKS);
			return 0;
		}
	}
	p->armed = 1;
	p->in_call = 0;
	bump(C_EXECS);
	exec_event(task, (struct linux_binprm *)ctx[2]);
	return 0;
}


/* A fault on a map of a file, outside any system call: counted on the file, placed
 * against the previous fault on it; the task notes the file for the pages the fault adds
 * to the page cache. */
SEC("tp_btf/mm_filemap_fault")
int filemap_fault(u64 *ctx)
{
	struct task *p = bpf_task_storage_get(&tasks, bpf_get_current_task_btf(), 0, 0);
	if (!p || !p->armed || p->in_call)
		return 0;
	struct address_space *m = (struct address_space *)ctx[0];
	u64 index = ctx[1];
	struct inode *i = 0;
	READ(i, m->host);
	if (!i)
		return 0;
	struct key k = {};
	inode_key(i, &k);
	struct faults *f = bpf_map_lookup_elem(&faults, &k);
	if (!f) {
		struct faults z = {};
		z.last = index;
		bpf_map_update_elem(&faults, &k, &z, BPF_NOEXIST);
		f = bpf_map_lookup_elem(&faults, &k);
		if (!f)
			return 0;
	}
	__sync_fetch_and_add(&f->faults, 1);
	u64 last = f->last;
	if (index > last + FAR_PAGES || index + FAR_PAGES < last)
		__sync_fetch_and_add(&f->far, 1);
	f->last = index;
	p->fault_dev = k.dev;
	p->fault_ino = k.ino;
	return 0;
}

/* A folio added to the page cache: counted on the file the task is faulting on. */
SEC("tp_btf/mm_filemap_add_to_page_cache")
int page_added(u64 *ctx)
{
	struct task *p = bpf_task_storage_get(&tasks, bpf_get_current_task_btf(), 0, 0);
	if (!p || !p->armed || p->in_call || !p->fault_ino)
		return 0;
	struct folio *folio = (struct folio *)ctx[0];
	struct address_space *m = 0;
	struct inode *i = 0;
	READ(m, folio->mapping);
	if (!m)
		return 0;
	READ(i, m->host);
	if (!i)
		return 0;
	struct key k = {};
	inode_key(i, &k);
	if (k.dev != p->fault_dev || k.ino != p->fault_ino)
		return 0;
	struct faults *f = bpf_map_lookup_elem(&faults, &k);
	if (f)
		__sync_fetch_and_add(&f->added, 1);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
