#!/usr/bin/env python3
"""A real terminal Ctrl-C (the tty driver's SIGINT to the foreground group) at a random
moment of `iolab trace`'s start-up. Counts the runs in which the command still ran to its
end after the Ctrl-C (it wrote its mark after sleeping 2 s): a lost Ctrl-C.

Usage: tools/trace_ctrlc_pty.py IOLAB BACKEND RUNS LO HI
  e.g. tools/trace_ctrlc_pty.py target/x86_64-unknown-linux-gnu/release/iolab bpf 200 0 0.6
(the Ctrl-C comes LO..HI seconds after iolab starts; 0 of 200 lost on 28 Nov 2026, #49)."""
import os, sys, pty, random, time, shutil, tempfile
iolab, backend, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
lo, hi = float(sys.argv[4]), float(sys.argv[5])
lost = 0
codes = {}
for i in range(n):
    d = tempfile.mkdtemp()
    mark = os.path.join(d, "done")
    pid, master = pty.fork()
    if pid == 0:
        os.execv(iolab, [iolab, "trace", "--no-calibrate", "--backend", backend, "--",
                         "sh", "-c", f"sleep 2; touch {mark}"])
    time.sleep(random.uniform(lo, hi))
    os.write(master, b"\x03")
    out = b""
    while True:
        try:
            b = os.read(master, 4096)
        except OSError:
            break
        if not b:
            break
        out += b
    _, status = os.waitpid(pid, 0)
    ran = os.path.exists(mark)
    codes[os.waitstatus_to_exitcode(status)] = codes.get(os.waitstatus_to_exitcode(status), 0) + 1
    for l in out.decode(errors="replace").splitlines():
        if "cannot" in l or "error" in l: print("odd:", l)
    if ran:
        lost += 1
        print(f"run {i}: the command ran to its end; iolab: {os.waitstatus_to_exitcode(status)}:",
              [l for l in out.decode(errors="replace").splitlines() if "interrupted" in l or "exit" in l])
    os.close(master)
    shutil.rmtree(d, ignore_errors=True)
print(f"{backend}: {lost} of {n} Ctrl-Cs lost; exit codes {codes}")
