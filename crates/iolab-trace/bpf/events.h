/* The records of the `events`, `lookup_ring` and `stacks` rings: the changes to files in
 * order (a file dirtied, synced, made, truncated), and the user stacks sampled at calls.
 *
 * SPDX-License-Identifier: MIT OR GPL-2.0 */
#ifndef IOLAB_EVENTS_H
#define IOLAB_EVENTS_H

#include "maps.h"

#define STACK_BYTES 8192
#define MAX_STACKS 8192
#define ARGS_BYTES 512
#define NAME_BYTES 256

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

#endif
