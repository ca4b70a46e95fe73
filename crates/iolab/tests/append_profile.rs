//! `AppendFile`'s buffer without a size asked for, in children of this test binary with a
//! cache folder (`XDG_CACHE_HOME`) of their own: the rule's 64 KiB without a profile, the
//! profile's `append` `buffer` winner with one, and a size asked for over both.

use iolab_lab::profile::Record as _;
use iolab_testkit as common;

use std::path::Path;

use iolab::{AppendFile, AppendOptions};
use iolab_lab::file::append::DEFAULT_BUFFER_SIZE;
use iolab_lab::profile::{self, Strategies, StrategyWinner};

/// Set (to a cache folder) for [`buffer_child`].
const CHILD_ENV: &str = "IOLAB_APPEND_PROFILE_CACHE";

/// The child half: no profile, then one naming 256 KiB for this folder's device.
#[test]
fn buffer_child() {
    let Some(cache) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let dir = Path::new(&cache);
    let log = AppendFile::create(dir.join("rule.log")).unwrap();
    assert_eq!(log.buffer_size(), DEFAULT_BUFFER_SIZE);
    assert!(
        log.why().starts_with("the rule, 64.0 KiB (") && log.why().contains("profile"),
        "{}",
        log.why()
    );
    let winner = StrategyWinner {
        condition: "buffer".into(),
        method: "append-file".into(),
        runner_up: "the rule's buffer".into(),
        lead: 1.2,
        measured_at: "2026-11-26T15:00:00Z".into(),
        device: profile::device_of(dir),
        bytes: Some(256 << 10),
    };
    profile::save(|p| p.record_strategy(Strategies::Append, "buffer", Some(winner.clone())))
        .unwrap();
    let mut log = AppendFile::create(dir.join("measured.log")).unwrap();
    assert_eq!(log.buffer_size(), 256 << 10);
    assert!(
        log.why()
            .contains("the buffer winner `iolab bench` measured here on 2026-11-26"),
        "{}",
        log.why()
    );
    log.append(b"one record\n").unwrap();
    log.close().unwrap();
    assert_eq!(
        std::fs::read(dir.join("measured.log")).unwrap(),
        b"one record\n"
    );
    let asked = AppendOptions::new()
        .buffer_size(4096)
        .open(dir.join("asked.log"))
        .unwrap();
    assert_eq!(
        (asked.buffer_size(), asked.why()),
        (4096, "4.00 KiB, as the options asked")
    );
    // A winner from another device is not followed, and the reason says so.
    let elsewhere = StrategyWinner {
        device: Some("250:250".into()),
        ..winner
    };
    profile::save(|p| p.record_strategy(Strategies::Append, "buffer", Some(elsewhere))).unwrap();
    let log = AppendFile::create(dir.join("elsewhere.log")).unwrap();
    assert_eq!(log.buffer_size(), DEFAULT_BUFFER_SIZE);
    assert!(
        log.why().contains("measured on device 250:250"),
        "{}",
        log.why()
    );
}

#[test]
fn append_file_takes_the_profiles_buffer_and_says_why() {
    let cache = common::scratch();
    common::run_child_with_cache("buffer_child", CHILD_ENV, cache.path());
}
