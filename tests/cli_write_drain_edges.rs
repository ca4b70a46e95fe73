//! Edge cases of `iolab write`, `iolab drain`, `iolab bench`'s flags and `iolab methods`
//! that a new user meets: negative sizes, a `--pipe-size` past the kernel's limit, a
//! standard input `drain` cannot splice, a results folder that already holds files or
//! cannot be written, `--methods` names of another suite, an unknown workload. Each refusal
//! is one `iolab: ` line that names the argument and the cause, with a non-zero exit,
//! before anything is measured or changed. No timing is asserted.

use iolab_testkit as common;

use std::fs;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use assert_cmd::cargo::CommandCargoExt;

/// Long enough for any of these commands; a regression that starts measuring for good
/// fails the test instead of hanging it.
const TIMEOUT: Duration = Duration::from_secs(120);

/// The children's cache folder (`XDG_CACHE_HOME`): this file's own, so no test reads or
/// writes the user's machine profile.
const CACHE: &str = concat!(
    env!("CARGO_TARGET_TMPDIR"),
    "/xdg-cache-cli_write_drain_edges"
);

fn iolab() -> Command {
    let mut cmd = Command::cargo_bin("iolab").unwrap();
    cmd.env("XDG_CACHE_HOME", CACHE);
    cmd
}

/// Runs `cmd` under [`TIMEOUT`]; panics if it does not finish in time.
fn run(cmd: Command) -> Output {
    common::run_within(cmd, TIMEOUT)
}

/// Asserts exit `code` and one `iolab: ` line on stderr containing every needle; returns
/// the line.
fn one_line(o: &Output, code: i32, needles: &[&str]) -> String {
    common::assert_one_line_error(o, code, needles)
}

/// A quick `iolab bench` of one write method, with `data` and `out` as its folders.
fn quick_bench(data: &Path, out: &Path) -> Command {
    let mut cmd = iolab();
    cmd.args(["bench", "write", "--quick", "--size", "1M", "--runs", "1"])
        .args(["--methods", "raw-fd", "--no-baselines", "--cache", "warm"])
        .arg("--data")
        .arg(data)
        .arg("--out")
        .arg(out)
        .stdout(Stdio::null());
    cmd
}

#[test]
fn a_negative_size_or_count_names_its_argument() {
    let cases: [(&[&str], &str); 7] = [
        (&["write", "-m", "raw-fd", "--bytes", "-1"], "--bytes"),
        (&["write", "-m", "raw-fd", "--buffer", "-1"], "--buffer"),
        (
            &["write", "-m", "raw-fd", "--pipe-size", "-1"],
            "--pipe-size",
        ),
        (&["drain", "--limit", "-1"], "--limit"),
        (&["bench", "--size", "-1"], "--size"),
        (&["bench", "--runs", "-1"], "--runs"),
        (&["bench", "--warmup", "-1"], "--warmup"),
    ];
    for (args, flag) in cases {
        let mut cmd = iolab();
        cmd.args(args).stdin(Stdio::null()).stdout(Stdio::piped());
        let line = one_line(&run(cmd), 2, &[flag, "'-1'"]);
        assert!(!line.contains("unexpected argument"), "{args:?}: {line}");
    }
}

#[test]
fn an_endless_warmup_is_refused_before_anything_runs() {
    let dir = common::scratch();
    let mut cmd = iolab();
    cmd.args(["bench", "write", "--quick", "--warmup", "1000000"])
        .arg("--data")
        .arg(dir.path().join("data"))
        .arg("--out")
        .arg(dir.path().join("out"));
    one_line(&run(cmd), 2, &["--warmup", "warm-up rounds from 0 to"]);
    assert!(!dir.path().join("out").exists());
}

#[test]
fn a_pipe_size_past_the_kernels_limit_names_the_argument_and_the_limit() {
    let max: usize = match fs::read_to_string("/proc/sys/fs/pipe-max-size") {
        Ok(s) => s.trim().parse().unwrap(),
        Err(e) => return common::skip(format!("no /proc/sys/fs/pipe-max-size: {e}")),
    };
    let mut child = iolab()
        .args(["write", "-m", "raw-fd", "--bytes", "10", "--pipe-size"])
        .arg((2 * max).to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut data = Vec::new();
    child.stdout.take().unwrap().read_to_end(&mut data).unwrap();
    let output = child.wait_with_output().unwrap();
    if has_cap_sys_resource() {
        // CAP_SYS_RESOURCE lifts the limit: the pipe is made that large and written.
        assert!(output.status.success(), "{output:?}");
        assert_eq!(data.len(), 10);
    } else {
        one_line(&output, 1, &["--pipe-size", "pipe-max-size"]);
        assert!(data.is_empty());
    }
}

/// Whether this process holds CAP_SYS_RESOURCE (bit 24 of `CapEff`), which lets a pipe
/// grow past `pipe-max-size`. Root in a container may not.
fn has_cap_sys_resource() -> bool {
    let status = fs::read_to_string("/proc/self/status").unwrap();
    let hex = status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .unwrap()
        .trim();
    u64::from_str_radix(hex, 16).unwrap() & (1 << 24) != 0
}

#[test]
fn drain_says_what_its_standard_input_is_when_it_is_no_pipe() {
    let dir = common::scratch();
    let file = dir.path().join("file");
    fs::write(&file, vec![0u8; 100_000]).unwrap();
    let cases: [(Stdio, &str); 3] = [
        (fs::File::open(&file).unwrap().into(), "a regular file"),
        (fs::File::open(dir.path()).unwrap().into(), "a directory"),
        (Stdio::null(), "/dev/null"),
    ];
    for (stdin, what) in cases {
        // Not through `run`: assert_cmd replaces the child's standard input.
        let output = iolab().arg("drain").stdin(stdin).output().unwrap();
        one_line(&output, 1, &["standard input is", what, "not a pipe"]);
    }
    assert_eq!(fs::read(&file).unwrap(), vec![0u8; 100_000]);
    // A pipe is still drained, to the byte.
    let mut writer = iolab()
        .args(["write", "-m", "raw-fd", "--bytes", "100001"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let output = iolab()
        .arg("drain")
        .stdin(writer.stdout.take().unwrap())
        .output()
        .unwrap();
    assert!(writer.wait().unwrap().success());
    assert!(output.status.success(), "{output:?}");
    assert_eq!(String::from_utf8_lossy(&output.stderr).trim(), "100001");
}

#[test]
fn bench_never_replaces_a_file_in_an_existing_results_folder() {
    let dir = common::scratch();
    let (data, out) = (dir.path().join("data"), dir.path().join("out"));
    fs::create_dir(&out).unwrap();
    fs::write(out.join("report.html"), "my own page\n").unwrap();
    let line = one_line(
        &run(quick_bench(&data, &out)),
        1,
        &["report.html", "already exists"],
    );
    assert!(line.contains(&out.display().to_string()), "{line}");
    assert_eq!(fs::read(out.join("report.html")).unwrap(), b"my own page\n");
    assert_eq!(fs::read_dir(&out).unwrap().count(), 1, "files were added");
    assert!(!data.exists(), "it measured before refusing");
}

#[test]
fn bench_refuses_a_results_folder_it_cannot_write_before_measuring() {
    let dir = common::public_scratch();
    let out = dir.path().join("read-only");
    fs::create_dir(&out).unwrap();
    fs::set_permissions(&out, std::os::unix::fs::PermissionsExt::from_mode(0o555)).unwrap();
    let fs_data = dir.path().join("data-dir");
    fs::create_dir(&fs_data).unwrap();
    fs::set_permissions(
        &fs_data,
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let output = if common::is_root() {
        // Root writes anywhere: run as nobody, who may not write into the folder.
        let exe = match common::nobody_exe(&assert_cmd::cargo::cargo_bin("iolab"), &["--version"]) {
            Ok(exe) => exe,
            Err(reason) => return common::skip(reason),
        };
        let mut cmd = exe.command();
        cmd.args(["bench", "write", "--quick", "--size", "1M", "--runs", "1"])
            .args(["--methods", "raw-fd", "--no-baselines", "--cache", "warm"])
            .arg("--data")
            .arg(fs_data.join("data"))
            .arg("--out")
            .arg(&out)
            .stdout(Stdio::null());
        common::run_as_nobody(&mut cmd);
        run(cmd)
    } else {
        run(quick_bench(&fs_data.join("data"), &out))
    };
    // "cannot write the results there", or, where nobody cannot even reach the folder
    // (a private temporary directory above it), "cannot create the results folder".
    one_line(&output, 1, &["Permission denied"]);
    assert!(
        !fs_data.join("data").exists(),
        "it measured before refusing"
    );
    assert_eq!(fs::read_dir(&out).unwrap().count(), 0);
}

#[test]
fn bench_refuses_methods_of_a_suite_it_does_not_run() {
    let dir = common::scratch();
    let (data, out) = (dir.path().join("data"), dir.path().join("out"));
    let mut cmd = iolab();
    cmd.args(["bench", "count", "--quick", "--methods", "vmsplice"])
        .arg("--data")
        .arg(&data)
        .arg("--out")
        .arg(&out);
    one_line(
        &run(cmd),
        1,
        &[
            "--methods",
            "vmsplice",
            "count suite",
            "iolab methods write",
        ],
    );
    assert!(
        !data.exists() && !out.exists(),
        "it started before refusing"
    );
}

#[test]
fn bench_methods_without_a_suite_runs_only_the_suites_that_have_them() {
    let dir = common::scratch();
    let (data, out) = (dir.path().join("data"), dir.path().join("out"));
    let mut cmd = iolab();
    cmd.args(["bench", "--quick", "--size", "1M", "--runs", "1"])
        .args(["--methods", "raw-fd", "--no-baselines", "--cache", "warm"])
        .arg("--data")
        .arg(&data)
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::null());
    let output = run(cmd);
    assert!(output.status.success(), "{output:?}");
    let json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(json["config"]["suites"], serde_json::json!(["write"]));
}

#[test]
fn methods_of_an_unknown_workload_lists_the_known_ones() {
    let mut cmd = iolab();
    cmd.args(["methods", "foo"]);
    one_line(
        &run(cmd),
        2,
        &["unknown suite `foo`; one of: count, write, edit, append, random"],
    );
}
