/* The eBPF side of `iolab trace` (loaded by src/engine/bpf/, which holds the same layouts
 * in Rust): it follows the command's tasks and folds every followed system call into
 * per-target maps in the kernel, so nothing crosses to user space per read or write; the
 * path of each new file crosses once, through a ring buffer, and the lookups, the changes
 * to files, the processes and sampled stacks through rings of their own (docs/trace.md).
 *
 * - Tasks: a followed task has a `struct task` in task-local storage (`tasks`), made when
 *   the command executes (its pid is in `roots`) and for every thread and child a followed
 *   task starts (sched_process_fork); it goes with the task. Every other task's system
 *   calls cost one empty look-up. (processes.h)
 * - Calls: BTF-typed tracepoints on sys_enter and sys_exit (this file). The entry looks the
 *   call up in `syscalls` (filled by user space from src/syscalls.rs: what the call does
 *   and where its arguments are) and notes in the task's state its descriptors' files,
 *   offsets and flags, and its start; the exit adds the result to the target's `stats`
 *   (keyed by device and inode; the read and write calls' counts per system call there
 *   too, the others' in `sys_stats`), and places each read against the previous read on
 *   the same open file, each write against the previous write (`positions`). (targets.h)
 * - Names: the first time a regular file or a directory is seen, its dentries are walked up
 *   to the root, across mounts, and the path goes to `paths` (a ring buffer). (paths.h)
 * - Changes to files, in order, and sampled stacks: rings of their own. (events.h)
 * - Faults on maps of files, outside calls. (faults.h)
 * - Identity: a target is its device, inode number and the inode's generation: a file
 *   system gives a freed inode number to the next file it makes, and without the
 *   generation that file's calls would be counted on the deleted one, under its name.
 * - Bounds: every map has a size; what does not fit is counted in `counters` and reported.
 *   (maps.h; records.h holds what user space reads or fills)
 *
 * One compilation unit: the headers below are its parts, included once each.
 *
 * SPDX-License-Identifier: MIT OR GPL-2.0 */
#include "kernel.h"
#include "records.h"
#include "maps.h"
#include "events.h"
#include "paths.h"
#include "targets.h"
#include "processes.h"
#include "faults.h"

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

/* The exit of an open that returned `ret`: counted on the file it opened, with the flags
 * asked and the file's own; a failed one sent with its path. The file's stats, or 0. */
static __always_inline struct stats *open_exit(struct task *p, s64 ret, u64 ns)
{
	if (ret < 0) {
		count_other(p->index, ret, ns);
		path_call(EV_FAILED_OPEN | (u64)p->index << 32, p->ptr, p->dirfd, ret, ns);
		return 0;
	}
	struct file *f = fd_file(bpf_get_current_task_btf(), ret);
	if (!describe(&p->a, f)) {
		count_other(p->index, ret, ns);
		return 0;
	}
	/* A new open file: nothing read or written through it yet. */
	u64 fresh = p->a.file;
	bpf_map_delete_elem(&positions, &fresh);
	fresh |= 1;
	bpf_map_delete_elem(&positions, &fresh);
	struct stats *st = target(&p->a);
	if (!st)
		return 0;
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
	return st;
}

/* What an msync found of the map holding its address: the map's first address and file. */
struct vma_found {
	u64 start;
	struct side file;
};

/* bpf_find_vma's callback: notes the map `vma` (a BTF pointer) into `found`. */
static long vma_file(struct task_struct *task, struct vm_area_struct *vma, struct vma_found *found)
{
	struct file *f = 0;
	found->start = vma->vm_start;
	READ(f, vma->vm_file);
	describe(&found->file, f);
	return 0;
}

/* The file an msync of the address `addr` syncs, into `s`; whether there is one. The map
 * that holds the address, whichever part of it the call syncs (a map synced a page at a
 * time): its file as the mmap's descriptor named it when the map starts where an mmap
 * returned (`mapped`; on overlayfs the map's own file is the layer's, another inode), else
 * the map's own file (a map split since, or made before the command was followed). When
 * the maps cannot be searched (their lock taken), the map that starts at the address. */
static __always_inline int msync_target(u64 addr, struct side *s)
{
	u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct vma_found found = {};
	struct map_key mk = {tgid, 0, addr};
	if (bpf_find_vma(bpf_get_current_task_btf(), addr, vma_file, &found, 0) == 0)
		mk.addr = found.start;
	struct key *k = bpf_map_lookup_elem(&mapped, &mk);
	if (k) {
		struct side named = {};
		named.dev = k->dev;
		named.ino = k->ino;
		named.gen = k->gen;
		named.ok = 1;
		*s = named;
	} else {
		*s = found.file;
	}
	return s->ok;
}

/* The exit of an msync of the address `p->arg`: a sync of the file mapped there. Its stats,
 * or 0. */
static __always_inline struct stats *msync_exit(struct task *p, s64 ret, u64 ns)
{
	if (!msync_target(p->arg, &p->a)) {
		count_other(p->index, ret, ns);
		return 0;
	}
	struct key k = {p->a.dev, p->a.ino, p->a.gen, 0};
	/* A file only the map named (no descriptor seen) is made a target here. */
	struct stats *st = p->a.file ? target(&p->a) : bpf_map_lookup_elem(&stats, &k);
	if (!st)
		return 0;
	count_call(&p->a, p->index, ret, ns);
	if (ret < 0) {
		__sync_fetch_and_add(&st->errors, 1);
	} else {
		__sync_fetch_and_add(&st->syncs, 1);
		__sync_fetch_and_add(&st->sync_ns, ns);
		mark_synced(p->a.dev, p->a.ino, p->a.gen);
	}
	return st;
}

/* The exit of a sync, seek, close, dup, fcntl, mmap or io_uring_enter: counted on the
 * target of the descriptor as it was at the entry. Its stats, or 0. */
static __always_inline struct stats *descriptor_exit(struct task *p, s64 ret, u64 ns)
{
	if (!p->a.ok) {
		count_other(p->index, ret, ns);
		return 0;
	}
	struct stats *st = target(&p->a);
	if (!st)
		return 0;
	count_call(&p->a, p->index, ret, ns);
	if (ret < 0 && (p->role != ROLE_MMAP || ret > -4096)) {
		__sync_fetch_and_add(&st->errors, 1);
		return st;
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
	return st;
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
	case ROLE_OPEN:
		st = open_exit(p, ret, ns);
		break;
	case ROLE_MSYNC:
		st = msync_exit(p, ret, ns);
		break;
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
	default:
		st = descriptor_exit(p, ret, ns);
		break;
	}
	if (st)
		used((struct pt_regs *)ctx[0], &p->a, st, p, ret, ns);
	p->gap_switches = task->nvcsw + task->nivcsw;
	p->gap_from = bpf_ktime_get_ns();
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
