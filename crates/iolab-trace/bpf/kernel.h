/* The kernel's types and BPF helpers that trace.bpf.c uses, declared by hand instead of a
 * generated vmlinux.h: only the fields read, each struct marked preserve_access_index so
 * that clang records every field access and the loader (aya) moves it to where the running
 * kernel's BTF (/sys/kernel/btf/vmlinux) puts that field (CO-RE). The layouts below are
 * therefore never trusted, only the field names and types.
 *
 * SPDX-License-Identifier: MIT OR GPL-2.0 */
#ifndef IOLAB_KERNEL_H
#define IOLAB_KERNEL_H

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef signed int s32;
typedef signed long long s64;

#define SEC(name) __attribute__((section(name), used))
#define __always_inline inline __attribute__((always_inline))
#define CORE __attribute__((preserve_access_index))

/* BTF-defined maps, as libbpf and aya read them. */
#define __uint(name, val) int (*name)[val]
#define __type(name, val) typeof(val) *name

enum {
	BPF_MAP_TYPE_HASH = 1,
	BPF_MAP_TYPE_ARRAY = 2,
	BPF_MAP_TYPE_PERCPU_ARRAY = 6,
	BPF_MAP_TYPE_LRU_HASH = 9,
	BPF_MAP_TYPE_RINGBUF = 27,
	BPF_MAP_TYPE_TASK_STORAGE = 29,
};
#define BPF_F_NO_PREALLOC 1
#define BPF_LOCAL_STORAGE_GET_F_CREATE 1
#define BPF_ANY 0
#define BPF_NOEXIST 1

/* Helpers, by their numbers in the kernel's enum bpf_func_id. */
static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)1;
static long (*bpf_map_update_elem)(void *map, const void *key, const void *value, u64 flags) = (void *)2;
static long (*bpf_map_delete_elem)(void *map, const void *key) = (void *)3;
static u64 (*bpf_ktime_get_ns)(void) = (void *)5;
static u64 (*bpf_get_current_pid_tgid)(void) = (void *)14;
static u64 (*bpf_get_current_task)(void) = (void *)35;
static long (*bpf_probe_read_user)(void *dst, u32 size, const void *src) = (void *)112;
static long (*bpf_probe_read_kernel)(void *dst, u32 size, const void *src) = (void *)113;
static long (*bpf_ringbuf_output)(void *ringbuf, void *data, u64 size, u64 flags) = (void *)130;
static u64 (*bpf_ringbuf_query)(void *ringbuf, u64 flags) = (void *)134;
#define BPF_RB_NO_WAKEUP 1
#define BPF_RB_FORCE_WAKEUP 2
#define BPF_RB_AVAIL_DATA 0
static void *(*bpf_task_storage_get)(void *map, void *task, void *value, u64 flags) = (void *)156;
static void *(*bpf_get_current_task_btf)(void) = (void *)158;
static long (*bpf_find_vma)(void *task, u64 addr, void *callback_fn, void *callback_ctx,
			    u64 flags) = (void *)180;
static long (*bpf_loop)(u32 nr_loops, void *callback_fn, void *callback_ctx, u64 flags) = (void *)181;
static long (*bpf_probe_read_user_str)(void *dst, u32 size, const void *src) = (void *)114;
static long (*bpf_probe_read_kernel_str)(void *dst, u32 size, const void *src) = (void *)115;

/* The field offset of `field` in `type` on the running kernel (a CO-RE relocation). */
#define FIELD_OFFSET(type, field) __builtin_preserve_field_info(((type *)0)->field, 0)

/* Reads `src` (a field access through CO-RE structs) into `dst`: for pointers the verifier
 * cannot follow itself (those read from memory as plain numbers). */
#define READ(dst, src) \
	bpf_probe_read_kernel(&(dst), sizeof(dst), __builtin_preserve_access_index(&(src)))

/* Flags whose values differ between architectures (asm/fcntl.h). */
#if defined(__TARGET_ARCH_x86)
#define O_DIRECT 040000
#elif defined(__TARGET_ARCH_arm64)
#define O_DIRECT 0200000
#endif
#define O_CREAT 0100
#define O_TRUNC 01000
#define O_APPEND 02000
#define O_DSYNC 010000
#define __O_SYNC 04000000
#define O_SYNC (__O_SYNC | O_DSYNC)
#define MAP_ANONYMOUS 0x20
#define S_IFMT 0170000
#define S_IFREG 0100000
#define S_IFDIR 0040000
#define E2BIG 7
#define EEXIST 17
#define AT_FDCWD -100

#if defined(__TARGET_ARCH_x86)
struct pt_regs {
	unsigned long di, si, dx, r10, r8, r9, ip, sp;
} CORE;
/* The user instruction and stack pointers a system call's registers hold. */
#define USER_IP(regs) ((regs)->ip)
#define USER_SP(regs) ((regs)->sp)
/* Argument `i` of the system call whose registers `regs` (a BTF pointer) holds. */
#define SYSCALL_ARG(regs, i)                                                           \
	((i) == 0 ? (regs)->di : (i) == 1 ? (regs)->si : (i) == 2 ? (regs)->dx :          \
	 (i) == 3 ? (regs)->r10 : (i) == 4 ? (regs)->r8 : (regs)->r9)
#elif defined(__TARGET_ARCH_arm64)
struct user_pt_regs {
	u64 regs[31];
} CORE;
struct pt_regs {
	struct user_pt_regs user_regs;
	u64 sp, pc;
} CORE;
#define USER_IP(regs) ((regs)->pc)
#define USER_SP(regs) ((regs)->sp)
#define SYSCALL_ARG(regs, i)                                                           \
	((i) == 0 ? (regs)->user_regs.regs[0] : (i) == 1 ? (regs)->user_regs.regs[1] :   \
	 (i) == 2 ? (regs)->user_regs.regs[2] : (i) == 3 ? (regs)->user_regs.regs[3] :    \
	 (i) == 4 ? (regs)->user_regs.regs[4] : (regs)->user_regs.regs[5])
#else
#error "trace.bpf.c knows the system call registers of x86-64 and arm64 only"
#endif

struct qstr {
	u32 len;
	const unsigned char *name;
} CORE;

struct inode;

struct dentry {
	struct dentry *d_parent;
	struct qstr d_name;
	struct inode *d_inode;
} CORE;

struct vfsmount {
	struct dentry *mnt_root;
} CORE;

struct mount {
	struct mount *mnt_parent;
	struct dentry *mnt_mountpoint;
	struct vfsmount mnt;
} CORE;

struct path {
	struct vfsmount *mnt;
	struct dentry *dentry;
} CORE;

struct super_block {
	u32 s_dev;
} CORE;

struct inode {
	u16 i_mode;
	unsigned long i_ino;
	struct super_block *i_sb;
	s64 i_size;
	u32 i_rdev;
	u32 i_generation;
} CORE;

struct file {
	struct path f_path;
	struct inode *f_inode;
	unsigned int f_flags;
	unsigned int f_mode;
	s64 f_pos;
} CORE;

/* A map of a process: its first address, and the file it maps (0: anonymous). */
struct vm_area_struct {
	unsigned long vm_start;
	struct file *vm_file;
} CORE;

struct fs_struct {
	struct path pwd;
} CORE;

struct mm_struct {
	unsigned long start_code, end_code, arg_start, arg_end, env_end;
	struct file *exe_file;
} CORE;

struct linux_binprm {
	const char *filename;
} CORE;

struct address_space {
	struct inode *host;
} CORE;

struct folio {
	struct address_space *mapping;
} CORE;

struct fdtable {
	unsigned int max_fds;
	struct file **fd;
} CORE;

struct files_struct {
	struct fdtable *fdt;
} CORE;

struct task_struct {
	int pid;
	int tgid;
	struct files_struct *files;
	struct fs_struct *fs;
	struct mm_struct *mm;
	struct task_struct *real_parent;
	unsigned long nvcsw, nivcsw; /* switches off the CPU: waits, and preemptions */
} CORE;

#endif
