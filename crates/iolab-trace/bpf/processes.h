/* Processes: the command's tasks followed from its execve on, every thread and child they
 * start followed too, and each program executed sent with its arguments.
 *
 * SPDX-License-Identifier: MIT OR GPL-2.0 */
#ifndef IOLAB_PROCESSES_H
#define IOLAB_PROCESSES_H

#include "paths.h"

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

#endif
