//! Who wrote a machine profile (`profile`): the user, the iolab build and the
//! machine, so that a profile is followed only by the same three.
//!
//! **Why**: the profile lives in a cache folder found through `XDG_CACHE_HOME` or `HOME`,
//! which another user's `sudo iolab bench`, an older iolab or a copied home folder can
//! fill. A default that follows such a file serves reads or writes by someone else's
//! measurements (issue 48: a plain map followed on a warm 4 GiB file read at 0.45× a
//! `pread` loop). So a profile records its writer, and [`Provenance::check`] refuses one
//! whose file belongs to another user, or that another user, another iolab version or
//! profile format, or another machine wrote, or that records no writer (made before it was
//! recorded), with a reason the defaults' `why()` strings carry.
//!
//! **What identifies**: the effective uid; `CARGO_PKG_VERSION` and [`SCHEMA`] (two builds of
//! one version with the same schema share a profile: their measurements mean the same);
//! `/etc/machine-id` (else `/var/lib/dbus/machine-id`), stable across reboots, beside the
//! kernel release, core count and CPU model the profile already records. Where no
//! machine-id exists the other three must do.
//!
//! **System calls**: `geteuid`, and one read of the machine-id file per process.

use std::path::Path;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

/// The profile's format and meaning: raised when an entry's meaning changes, so that a
/// profile of the same version but older meaning is not followed.
pub const SCHEMA: u32 = 1;

/// This iolab's version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Who wrote a profile.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provenance {
    /// The effective uid of the process that wrote it.
    pub uid: u32,
    /// The iolab version that wrote it.
    pub version: String,
    /// Its format ([`SCHEMA`] then).
    pub schema: u32,
    /// The machine's `/etc/machine-id` (empty where there is none).
    pub machine_id: String,
}

/// The effective uid of this process.
pub fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// This machine's machine-id: `/etc/machine-id`, else `/var/lib/dbus/machine-id`, else
/// empty. Read once per process.
pub fn machine_id() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| {
        ["/etc/machine-id", "/var/lib/dbus/machine-id"]
            .iter()
            .find_map(|p| {
                let id = std::fs::read_to_string(p).ok()?;
                let id = id.trim();
                (!id.is_empty()).then(|| id.to_string())
            })
            .unwrap_or_default()
    })
}

/// The first 8 characters of a machine-id, for messages.
fn short(id: &str) -> &str {
    if id.is_empty() {
        "none"
    } else {
        id.get(..8).unwrap_or(id)
    }
}

impl Provenance {
    /// This process: its effective uid, this iolab and this machine.
    pub fn here() -> Provenance {
        Provenance {
            uid: effective_uid(),
            version: VERSION.to_string(),
            schema: SCHEMA,
            machine_id: machine_id().to_string(),
        }
    }

    /// Whether a profile at `path`, whose file belongs to `owner` and which records
    /// `written_by`, may be followed by this process; else why not, ending `: ignored`.
    pub fn check(written_by: Option<&Provenance>, owner: u32, path: &Path) -> Result<(), String> {
        Provenance::check_against(written_by, owner, path, &Provenance::here())
    }

    /// [`Provenance::check`] for a process that is `here`.
    fn check_against(
        written_by: Option<&Provenance>,
        owner: u32,
        path: &Path,
        here: &Provenance,
    ) -> Result<(), String> {
        let path = path.display();
        if owner != here.uid {
            return Err(format!(
                "the profile in {path} belongs to uid {owner}, this process runs as uid {}: \
                 ignored",
                here.uid
            ));
        }
        let Some(w) = written_by else {
            return Err(format!(
                "the profile in {path} does not record who wrote it (an iolab before \
                 {VERSION} made it): ignored"
            ));
        };
        if w.uid != here.uid {
            return Err(format!(
                "the profile in {path} was written by uid {}, this process runs as uid {}: \
                 ignored",
                w.uid, here.uid
            ));
        }
        if w.version != here.version {
            return Err(format!(
                "the profile in {path} was written by iolab {}, this is {}: ignored",
                w.version, here.version
            ));
        }
        if w.schema != here.schema {
            return Err(format!(
                "the profile in {path} has format {}, this iolab reads format {}: ignored",
                w.schema, here.schema
            ));
        }
        if w.machine_id != here.machine_id {
            return Err(format!(
                "the profile in {path} was written on another machine (machine-id {}…, this \
                 is {}…): ignored",
                short(&w.machine_id),
                short(&here.machine_id)
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_is_followed_only_by_its_writer_on_its_machine() {
        let here = Provenance {
            uid: 1000,
            version: "0.1.0".into(),
            schema: SCHEMA,
            machine_id: "3d1219c7c4c5404aaa1f6d2a48adfda4".into(),
        };
        let path = Path::new("/home/a/.cache/iolab/auto.json");
        let check = |w: Option<&Provenance>, owner| {
            Provenance::check_against(w, owner, path, &here)
                .err()
                .unwrap_or_default()
        };
        assert_eq!(check(Some(&here), 1000), "");
        assert_eq!(
            check(Some(&here), 0),
            "the profile in /home/a/.cache/iolab/auto.json belongs to uid 0, this process \
             runs as uid 1000: ignored"
        );
        assert!(check(None, 1000).contains("does not record who wrote it"));
        let other = |change: fn(&mut Provenance)| {
            let mut w = here.clone();
            change(&mut w);
            check(Some(&w), 1000)
        };
        assert!(
            other(|w| w.uid = 0).contains("was written by uid 0, this process runs as uid 1000")
        );
        assert_eq!(
            other(|w| w.version = "0.0.9".into()),
            "the profile in /home/a/.cache/iolab/auto.json was written by iolab 0.0.9, this is \
             0.1.0: ignored"
        );
        assert!(other(|w| w.schema = SCHEMA + 1).contains("has format"));
        assert!(
            other(|w| w.machine_id = "ffffffffeeee".into())
                .contains("another machine (machine-id ffffffff…, this is 3d1219c7…): ignored")
        );
    }

    #[test]
    fn here_is_this_process() {
        let here = Provenance::here();
        assert_eq!(here.uid, effective_uid());
        assert_eq!(here.version, VERSION);
        assert_eq!(here.machine_id, machine_id());
    }
}
