/* Page faults on the maps of files, outside any system call, and the pages they add to
 * the page cache. Optional: user space runs without them on a kernel that lacks these
 * tracepoints.
 *
 * SPDX-License-Identifier: MIT OR GPL-2.0 */
#ifndef IOLAB_FAULTS_H
#define IOLAB_FAULTS_H

#include "paths.h"

#define FAR_PAGES 64

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

#endif
