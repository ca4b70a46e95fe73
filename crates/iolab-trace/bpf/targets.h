/* A target's counts: its stats made (and named) on first sight, each call counted on it,
 * each read and write placed against the previous one on the same open file, and each
 * process's share.
 *
 * SPDX-License-Identifier: MIT OR GPL-2.0 */
#ifndef IOLAB_TARGETS_H
#define IOLAB_TARGETS_H

#include "paths.h"

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
	/* The first calls of each kind on the target are sampled too (a file's fsync or a map's
	 * msync after its open and first writes), as under ptrace. */
	if (n >= 3 && n % 4096 != 0) {
		struct sys_key k = {s->dev, s->ino, s->gen, p->index};
		struct call_stat *c = bpf_map_lookup_elem(&sys_stats, &k);
		if (c)
			n = c->calls - 1;
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

#endif
