//! The queue depth `iolab random` takes for the io_uring methods without `--queue-depth`:
//! the depth `iolab bench random --sweep` measured fastest on this machine for the file's
//! size class (the profile's `random_depth`), else [`super::DEFAULT_QUEUE_DEPTH`].

use crate::read::tuning;

/// The queue depth for io_uring random reads with `method` (`uring`, `uring-direct`) of a
/// file of `len` bytes, and why: the depth `iolab bench random --sweep` measured fastest
/// here for the file's size class, beyond the noise of [`super::DEFAULT_QUEUE_DEPTH`],
/// else that depth (fio's and the suite's 32).
pub fn depth_for(method: &str, len: u64) -> (usize, String) {
    let class = crate::file::auto::size_class(len);
    let rule = super::DEFAULT_QUEUE_DEPTH;
    let measured = tuning::load_checked().map(|t| {
        t.random_depth
            .into_iter()
            .find(|d| d.method == method && d.size_class == class)
    });
    match measured {
        Ok(Some(d)) => (
            d.queue_depth.clamp(1, super::MAX_QUEUE_DEPTH),
            format!(
                "the {class} depth `iolab bench random --sweep` measured fastest here on {} \
                 ({:.0} IOPS)",
                d.measured_at.get(..10).unwrap_or(&d.measured_at),
                d.iops
            ),
        ),
        Ok(None) => (
            rule,
            format!("the rule, {rule} (no {class} depth for {method} measured beyond the noise)"),
        ),
        Err(why) => (rule, format!("the rule, {rule} ({why})")),
    }
}
