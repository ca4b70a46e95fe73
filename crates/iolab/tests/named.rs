//! Every enum a user picks by name shares one mechanism (`iolab_lab::named::named_enum!`): its names
//! are unique kebab-case words that round-trip through `FromStr` and `Display`, and an
//! unknown name is refused with one message that lists the valid ones, in order.

use iolab::UnknownName;
use iolab_lab::named::Named;

/// Checks one named enum; `kind` is the word its errors use.
fn check<T: Named + std::fmt::Display + std::str::FromStr<Err = UnknownName> + std::fmt::Debug>(
    kind: &str,
) {
    assert_eq!(T::KIND, kind);
    let names: Vec<&str> = T::all().iter().map(|v| v.name()).collect();
    assert!(!names.is_empty());
    for (i, &value) in T::all().iter().enumerate() {
        let name = value.name();
        assert!(
            !name.is_empty()
                && name.bytes().all(|b| b.is_ascii_lowercase()
                    || b.is_ascii_digit()
                    || b == b'-'
                    || b == b'_'),
            "{kind} name {name:?} is not kebab-case"
        );
        assert!(!names[..i].contains(&name), "{kind} name {name} twice");
        assert_eq!(value.to_string(), name);
        assert_eq!(name.parse::<T>().unwrap(), value);
        assert_eq!(T::from_name(name).unwrap(), value);
    }
    let err = "no-such-name".parse::<T>().unwrap_err();
    assert_eq!(err.kind, kind);
    assert_eq!(err.name, "no-such-name");
    assert_eq!(err.expected, names);
    assert_eq!(
        err.to_string(),
        format!(
            "unknown {kind} `no-such-name`; one of: {}",
            names.join(", ")
        )
    );
    // Names are exact: no case folding, no trimming.
    assert!(names[0].to_uppercase().parse::<T>().is_err() || names[0].to_uppercase() == names[0]);
    assert!(format!(" {}", names[0]).parse::<T>().is_err());
}

#[test]
fn every_named_enum_round_trips_and_lists_its_names() {
    check::<iolab_lab::read::CountMethod>("method");
    check::<iolab_lab::read::CountHint>("hint");
    check::<iolab_lab::write::Method>("method");
    check::<iolab_lab::random::Method>("method");
    check::<iolab_lab::random::Pattern>("pattern");
    check::<iolab_lab::edit::EditStrategy>("strategy");
    check::<iolab_lab::append::Strategy>("strategy");
    check::<iolab_lab::durable::LogPolicy>("policy");
    check::<iolab_lab::kernel::Kernel>("kernel");
}

#[test]
fn all_is_the_inherent_list_in_order() {
    assert_eq!(iolab_lab::kernel::Kernel::ALL.len(), 3);
    assert_eq!(
        <iolab_lab::read::CountMethod as Named>::all(),
        &iolab_lab::read::CountMethod::ALL[..]
    );
    assert_eq!(
        iolab_lab::read::CountMethod::ALL.last(),
        Some(&iolab_lab::read::CountMethod::Auto)
    );
}
