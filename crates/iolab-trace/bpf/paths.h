/* Files and their names: the file behind a descriptor, a target's key, and the paths sent
 * to user space (a file's, walked up its dentries across mounts; a lookup's, a failed
 * open's and a rename's, as the command gave them, with the folder they start from).
 *
 * SPDX-License-Identifier: MIT OR GPL-2.0 */
#ifndef IOLAB_PATHS_H
#define IOLAB_PATHS_H

#include "events.h"

#define MAX_DEPTH 512

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

#endif
