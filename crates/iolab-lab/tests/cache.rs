//! Evicting a file from the page cache and warming it again move its residency, where the
//! file system can evict at all (not tmpfs).

use std::io::Write;

use iolab_lab::cache::{evict, warm};

#[test]
fn evict_then_warm_moves_residency() {
    let dir = iolab_testkit::scratch();
    let path = dir.path().join("data");
    let mut f = std::fs::File::create(&path).unwrap();
    f.write_all(&vec![b'x'; 8 << 20]).unwrap();
    drop(f);
    if iolab_lab::sysinfo::is_tmpfs(dir.path()) {
        iolab_testkit::skip("the test directory is on tmpfs, where nothing can be evicted");
        return;
    }
    let evicted = evict(&path, false).unwrap();
    assert!(
        evicted.residency <= 0.05,
        "residency after eviction: {}",
        evicted.residency
    );
    let warmed = warm(&path).unwrap();
    assert!(warmed >= 0.95, "residency after warming: {warmed}");
}
