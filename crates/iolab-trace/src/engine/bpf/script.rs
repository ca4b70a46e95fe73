//! The bpftrace program: the kernel aggregates every followed call of the command's tasks
//! into maps keyed by target (the device and inode of the `struct file` behind the
//! descriptor), so nothing crosses to user space per call and memory is per target.
//!
//! - Tasks: `@traced[tid]` holds the command (the program's `$1`) and is filled from
//!   `sched_process_fork` for every thread and child of a traced task; a task's entry goes
//!   with its exit.
//! - Calls: two probes on `raw_syscalls` (`sys_enter`, `sys_exit`) rather than two per
//!   followed call, because each probe costs about 70 ms to attach and as much to detach
//!   here (measured with bpftrace 0.17 on Linux 6.18: 64 probes took 3.7 s to attach). The
//!   entry notes the start time, the descriptor(s) and the explicit offset per thread; the
//!   exit finds the `struct file` in the task's descriptor table (BTF:
//!   `curtask->files->fdt->fd[fd]`) and adds the result to the target's maps: calls,
//!   bytes, nanoseconds, a power-of-two histogram, and how many started where the previous
//!   call on that open file ended.
//! - Names: opens note the path they were given; the mode, device number and size come
//!   from the inode.
//! - The end: the tracer, once the command has exited, makes one `lseek(-1, MAGIC, 0)`;
//!   the entry probe sees it, prints the maps and a marker, and exits. The tracer reads the
//!   maps without waiting for the probes' detach.
//!
//! Only tracepoints are used (no kprobes or fentry), with the kernel's BTF.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::syscalls::{Role, Sys};

/// `O_APPEND`, `O_DSYNC` and `MAP_ANONYMOUS` as the kernel's `f_flags` and `mmap` hold them
/// (the same numbers on x86-64 and arm64).
const O_APPEND: u32 = 0o2000;
const O_DSYNC: u32 = 0o10000;
const MAP_ANONYMOUS: u32 = 0x20;

/// The offset of the tracer's `lseek(-1, MAGIC, 0)` that ends the program.
pub const MAGIC: i64 = 0x0001_01ab_7ace;

/// The marker the program prints once its probes are attached.
pub const READY: &str = "iolab-ready";

/// The marker the program prints after the maps.
pub const DONE: &str = "iolab-done";

/// The maps the program prints at the end.
const RESULT_MAPS: &[&str] = &[
    "tasks", "procs", "execs", "meta", "path", "size", "sys", "other", "err", "c", "b", "t", "s",
    "h", "dsw", "sc", "st", "oc", "odirect", "osync", "odsync", "oappend", "otrunc", "seek", "mm",
    "mmb", "ring", "ringsub",
];

/// Argument `i` of the call as a signed 64-bit number. The entry probe reads each
/// argument once into `$a{i}`, through the tracepoint's BTF struct: bpftrace 0.17 rereads
/// the kernel's list of tracepoints for every `args->` in a program (about 20 times
/// each), which made the program take seconds to compile.
fn arg(i: usize) -> String {
    format!("(int64)$a{i}")
}

/// Statements that find the `struct file` of descriptor `fd` (an expression) as `$f{n}`,
/// and open a block that runs only when there is one, with `$dev{n}`, `$ino{n}` and
/// `$i{n}` (the inode) set and the target's mode and device number noted. The caller
/// closes the block.
fn resolve(out: &mut String, fd: &str, n: u32) {
    let _ = write!(
        out,
        "  $fdt{n} = ((struct task_struct *)curtask)->files->fdt;\n\
         \x20 $fd{n} = (int64)({fd});\n\
         \x20 $ok{n} = $fd{n} >= 0 && $fd{n} < (int64)$fdt{n}->max_fds;\n\
         \x20 $f{n} = *($fdt{n}->fd + ($ok{n} ? $fd{n} : 0));\n\
         \x20 if ($ok{n} && $f{n} != 0) {{\n\
         \x20   $i{n} = $f{n}->f_inode;\n\
         \x20   $dev{n} = (uint64)$i{n}->i_sb->s_dev; $ino{n} = (uint64)$i{n}->i_ino;\n\
         \x20   @meta[$dev{n}, $ino{n}] = ((uint64)$i{n}->i_mode, (uint64)$i{n}->i_rdev);\n"
    );
}

/// The statements that add a read (`$dir` 0) or write (1) of `$ret` bytes through `$f0`
/// to its target's maps (inside [`resolve`]'s block): one copy of this code serves every
/// read and write, keyed by direction, to keep the program small (bpftrace compiles it at
/// every start).
fn flow(out: &mut String) {
    let k = "$dev0, $ino0, $dir";
    let _ = write!(
        out,
        "    if ($ret < 0) {{ @err[$dev0, $ino0] = count(); }} else {{\n\
         \x20     @c[{k}] = count(); @b[{k}] = sum($ret); @t[{k}] = sum($ns); @h[{k}] = hist($ret);\n\
         \x20     if (((uint64)$i0->i_mode & 0xf000) == 0x8000) {{\n\
         \x20       $start = $c.3 >= 0 ? $c.3 : (int64)$f0->f_pos - $ret;\n\
         \x20       if ($dir == 1 && ($f0->f_flags & {O_DSYNC})) {{ @dsw[$dev0, $ino0] = count(); }}\n\
         \x20       if ($ret > 0 && (($dir == 1 && ($f0->f_flags & {O_APPEND})) || $start == @end[(uint64)$f0])) {{ @s[{k}] = count(); }}\n\
         \x20       @end[(uint64)$f0] = $start + $ret;\n\
         \x20       @size[$dev0, $ino0] = (uint64)$i0->i_size;\n\
         \x20     }}\n\
         \x20   }}\n"
    );
}

/// The condition `$v` is one of `calls`' numbers.
fn any_of(var: &str, calls: &[Sys]) -> String {
    calls
        .iter()
        .map(|s| format!("{var} == {}", s.number()))
        .collect::<Vec<_>>()
        .join(" || ")
}

/// What the entry probe does for `sys`, as statements (calls with the same statements
/// share a branch).
fn entry_body(sys: Sys) -> String {
    // The call in flight, one tuple per thread: (number, descriptor or address, second
    // descriptor or length, offset or open flags); one map update instead of five.
    let note = |x: &str, y: &str, z: &str| {
        format!("@t0[tid] = nsecs; @call[tid] = ((int64)$id, (int64){x}, (int64){y}, (int64){z});")
    };
    match sys.role() {
        Role::Read { fd, pos } | Role::Write { fd, pos } => {
            note(&arg(fd), "0", &pos.map_or("-1".to_string(), arg))
        }
        Role::Copy { from, to } => note(&arg(from), &arg(to), "-1"),
        Role::Sync => note(&arg(0), "0", "-1"),
        Role::Msync => note("$a0", "0", "-1"),
        Role::Open { flags, creat } => {
            // open and creat take the name first, openat and openat2 second.
            let name = if matches!(sys, Sys::Openat | Sys::Openat2) {
                1
            } else {
                0
            };
            let flags = match (flags, creat) {
                (_, true) => libc::O_TRUNC.to_string(),
                (Some(i), false) => arg(i),
                (None, false) => "0".to_string(),
            };
            format!(
                "{} @fname[tid] = str(uptr($a{name}));",
                note("0", "0", &format!("(int64){flags}"))
            )
        }
        Role::Mmap => format!(
            "if (!($a3 & {MAP_ANONYMOUS})) {{ {} }}",
            note(&arg(4), "$a1", "-1")
        ),
        Role::Munmap => {
            "delete(@mdev[pid, (uint64)$a0]); delete(@mino[pid, (uint64)$a0]);".to_string()
        }
        Role::Seek | Role::Close | Role::RingEnter => {
            // Counted at entry: a close's descriptor is gone at its exit.
            let mut s = String::new();
            resolve(&mut s, &arg(0), 9);
            let k = "$dev9, $ino9";
            let _ = writeln!(s, "    @sys[{k}, $id] = count();");
            let _ = writeln!(
                s,
                "    {}",
                match sys.role() {
                    Role::Seek => format!("@seek[{k}] = count();"),
                    Role::Close => "delete(@end[(uint64)$f9]);".to_string(),
                    _ => format!(
                        "@ring[{k}] = count(); @ringsub[{k}] = sum((uint64)$a1 & 0xffffffff);"
                    ),
                }
            );
            s.push_str("  } else { @other[$id] = count(); }");
            s
        }
        Role::Dup | Role::Fcntl | Role::CloseRange | Role::SyncAll => {
            "@other[$id] = count();".to_string()
        }
        Role::Ptrace => String::new(),
    }
}

/// The calls of `followed()` whose role matches `pick`.
fn calls_where(pick: impl Fn(Role) -> bool) -> Vec<Sys> {
    followed().into_iter().filter(|s| pick(s.role())).collect()
}

/// The exit probe: one descriptor lookup and one flow for every call, then what each role
/// adds.
fn exit_probe(out: &mut String) {
    let reads = any_of(
        "$nr",
        &calls_where(|r| matches!(r, Role::Read { .. } | Role::Copy { .. })),
    );
    let writes = any_of("$nr", &calls_where(|r| matches!(r, Role::Write { .. })));
    let copies = any_of("$nr", &calls_where(|r| matches!(r, Role::Copy { .. })));
    let syncs = any_of("$nr", &calls_where(|r| r == Role::Sync));
    let msyncs = any_of("$nr", &calls_where(|r| r == Role::Msync));
    let opens = any_of("$nr", &calls_where(|r| matches!(r, Role::Open { .. })));
    let mmaps = any_of("$nr", &calls_where(|r| r == Role::Mmap));
    let _ = write!(
        out,
        "tracepoint:raw_syscalls:sys_exit /@t0[tid]/ {{\n\
         \x20 $ns = nsecs - @t0[tid]; $c = @call[tid]; $nr = $c.0;\n\
         \x20 $ret = ((struct trace_event_raw_sys_exit *)args)->ret;\n\
         \x20 if ($nr == {execve} || $nr == {execveat}) {{ if ($ret == 0) {{ @execs = count(); }} }}\n\
         \x20 else if ({msyncs}) {{\n\
         \x20   $mdev = @mdev[pid, (uint64)$c.1]; $mino = @mino[pid, (uint64)$c.1];\n\
         \x20   if ($mino != 0) {{\n\
         \x20     @sys[$mdev, $mino, $nr] = count(); @sc[$mdev, $mino] = count(); @st[$mdev, $mino] = sum($ns);\n\
         \x20   }} else {{ @other[$nr] = count(); }}\n\
         \x20 }} else {{\n\
         \x20 $open = {opens};\n\
         \x20 $dir = ({reads}) ? (uint64)0 : (({writes}) ? (uint64)1 : (uint64)2);\n",
        execve = libc::SYS_execve,
        execveat = libc::SYS_execveat,
    );
    resolve(out, "$open ? $ret : $c.1", 0);
    out.push_str("    @sys[$dev0, $ino0, $nr] = count();\n    if ($dir < 2) {\n");
    flow(out);
    let _ = write!(
        out,
        "    }} else if ({syncs}) {{\n\
         \x20     if ($ret < 0) {{ @err[$dev0, $ino0] = count(); }}\n\
         \x20     else {{ @sc[$dev0, $ino0] = count(); @st[$dev0, $ino0] = sum($ns); }}\n\
         \x20   }} else if ($open) {{\n\
         \x20     @oc[$dev0, $ino0] = count();\n\
         \x20     @path[$dev0, $ino0] = @fname[tid];\n\
         \x20     $fl = $c.3 | (int64)$f0->f_flags;\n\
         \x20     if ($fl & {direct}) {{ @odirect[$dev0, $ino0] = count(); }}\n\
         \x20     if (($fl & {sync}) == {sync}) {{ @osync[$dev0, $ino0] = count(); }}\n\
         \x20     else {{ if ($fl & {O_DSYNC}) {{ @odsync[$dev0, $ino0] = count(); }} }}\n\
         \x20     if ($fl & {O_APPEND}) {{ @oappend[$dev0, $ino0] = count(); }}\n\
         \x20     if ($fl & {trunc}) {{ @otrunc[$dev0, $ino0] = count(); }}\n\
         \x20   }} else if (({mmaps}) && ($ret >= 0 || $ret < -4095)) {{\n\
         \x20     @mm[$dev0, $ino0] = count(); @mmb[$dev0, $ino0] = sum($c.2);\n\
         \x20     @mdev[pid, (uint64)$ret] = $dev0; @mino[pid, (uint64)$ret] = $ino0;\n\
         \x20   }}\n\
         \x20 }} else {{ @other[$nr] = count(); }}\n",
        direct = libc::O_DIRECT,
        sync = libc::O_SYNC,
        trunc = libc::O_TRUNC,
    );
    // The writing side of a copy: counted, not tested for sequence.
    let _ = writeln!(out, "  if (({copies}) && $ret >= 0) {{");
    resolve(out, "$c.2", 1);
    out.push_str(
        "    @c[$dev1, $ino1, (uint64)1] = count(); @b[$dev1, $ino1, (uint64)1] = sum($ret);\n\
         \x20   @t[$dev1, $ino1, (uint64)1] = sum($ns); @h[$dev1, $ino1, (uint64)1] = hist($ret);\n\
         \x20 }\n\
         \x20 }\n\
         \x20 if ($open) { delete(@fname[tid]); }\n\
         \x20 }\n\
         \x20 delete(@t0[tid]); delete(@call[tid]);\n}\n",
    );
}

/// The calls the program follows (all but `ptrace`, which only the ptrace backend needs).
fn followed() -> Vec<Sys> {
    Sys::ALL
        .iter()
        .copied()
        .filter(|s| s.role() != Role::Ptrace)
        .collect()
}

/// The whole program; `$1` is the command's process id, `$2` the tracer's.
pub fn program() -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "BEGIN {{ @traced[$1] = 1; @tasks = count(); printf(\"{READY}\\n\"); }}"
    );
    out.push_str(
        "tracepoint:sched:sched_process_fork { $k = (struct trace_event_raw_sched_process_fork *)args; \
         if (@traced[$k->parent_pid]) { @traced[$k->child_pid] = 1; @tasks = count(); } }\n\
         tracepoint:sched:sched_process_exit /@traced[tid]/ { delete(@traced[tid]); if (tid == pid) { @procs = count(); } }\n",
    );
    // The entry probe: one branch per distinct body.
    let mut branches: BTreeMap<String, Vec<Sys>> = BTreeMap::new();
    for sys in followed() {
        branches.entry(entry_body(sys)).or_default().push(sys);
    }
    out.push_str(
        "tracepoint:raw_syscalls:sys_enter /@traced[tid] || pid == $2/ {\n  \
         $e = (struct trace_event_raw_sys_enter *)args; $id = $e->id;\n  \
         $a0 = $e->args[0]; $a1 = $e->args[1]; $a2 = $e->args[2]; $a3 = $e->args[3]; \
         $a4 = $e->args[4];\n",
    );
    let _ = writeln!(
        out,
        "  if (pid == $2) {{\n    if ($id == {} && $a1 == {MAGIC}) {{",
        libc::SYS_lseek
    );
    for map in RESULT_MAPS {
        let _ = write!(out, " print(@{map});");
    }
    let _ = writeln!(out, " printf(\"{DONE}\\n\"); exit(); }}\n  }}");
    let _ = writeln!(
        out,
        "  else if ($id == {} || $id == {}) {{ @t0[tid] = nsecs; \
         @call[tid] = ((int64)$id, (int64)0, (int64)0, (int64)-1); }}",
        libc::SYS_execve,
        libc::SYS_execveat
    );
    for (body, calls) in &branches {
        if body.is_empty() {
            continue;
        }
        let _ = writeln!(out, "  else if ({}) {{\n{body}\n  }}", any_of("$id", calls));
    }
    out.push_str("}\n");
    exit_probe(&mut out);
    out.push_str(
        "END { clear(@traced); clear(@t0); clear(@call); clear(@end); clear(@fname); \
         clear(@mdev); clear(@mino); }\n",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_follows_every_call() {
        let p = program();
        for sys in followed() {
            assert!(p.contains(&format!("$id == {}", sys.number())), "{sys:?}");
        }
        assert_eq!(p.matches('{').count(), p.matches('}').count());
        // Five probes: BEGIN, fork, exit, and the two on raw_syscalls (plus END).
        assert_eq!(p.matches("tracepoint:").count(), 4);
    }
}
