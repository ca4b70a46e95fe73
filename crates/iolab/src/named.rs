//! One way to name things: every enum a user picks by name (a read method, a write method,
//! an edit strategy, a durable policy, a kernel, …) gets its list ([`ALL`](crate::named::Named::all)), its
//! kebab-case name shared by the CLI, the JSON results and the docs, `Display`, and
//! `FromStr` with one error ([`UnknownName`](crate::UnknownName)) that lists the valid names, from one
//! declaration (`named_enum!`).
//!
//! The macro is exported at the crate's root because a `macro_rules!` macro can only leave
//! its crate that way, but hidden there: it is the laboratory's (`iolab::lab::named::named_enum!`),
//! not the stable surface. [`UnknownName`](crate::UnknownName), the error a user's `parse` of a
//! choice gets, is at the root.

use std::fmt;

/// A name that none of a choice's values has: ``unknown method `mmapp`; one of: auto, …``.
///
/// The error of `str::parse` for every choice enum ([`CountMethod`](crate::CountMethod),
/// [`EditStrategy`](crate::EditStrategy), …); `?` turns it into an
/// [`Error::UnknownName`](crate::Error::UnknownName).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownName {
    /// What was being named: `method`, `strategy`, `policy`, `kernel`, `suite`, …
    pub kind: &'static str,
    /// The name given.
    pub name: String,
    /// The valid names, in order.
    pub expected: Vec<&'static str>,
}

impl fmt::Display for UnknownName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown {} `{}`; one of: {}",
            self.kind,
            self.name,
            self.expected.join(", ")
        )
    }
}

impl std::error::Error for UnknownName {}

/// A value picked by name: implemented by `named_enum!`.
pub trait Named: Copy + Eq + 'static {
    /// What the values are called in messages: `method`, `strategy`, …
    const KIND: &'static str;

    /// Every value, in the order they are listed and measured.
    fn all() -> &'static [Self];

    /// The value's kebab-case name.
    fn name(self) -> &'static str;

    /// The value called `name`.
    fn from_name(name: &str) -> Result<Self, UnknownName> {
        Self::all()
            .iter()
            .copied()
            .find(|v| v.name() == name)
            .ok_or_else(|| UnknownName {
                kind: Self::KIND,
                name: name.to_string(),
                expected: Self::all().iter().map(|v| v.name()).collect(),
            })
    }
}

/// Declares an enum whose values are picked by name: the enum (with `Clone`, `Copy`,
/// `Debug`, `PartialEq`, `Eq`, `Hash`), an inherent `ALL` array and `name()`, [`Named`],
/// `Display` and `FromStr` (error: [`UnknownName`](crate::UnknownName)).
///
/// ```
/// iolab::lab::named::named_enum! {
///     /// A colour.
///     pub enum Colour: "colour" {
///         /// Red.
///         Red = "red",
///         /// Dark blue.
///         DarkBlue = "dark-blue",
///     }
/// }
/// assert_eq!(Colour::ALL, [Colour::Red, Colour::DarkBlue]);
/// assert_eq!("dark-blue".parse::<Colour>().unwrap(), Colour::DarkBlue);
/// assert_eq!(Colour::Red.to_string(), "red");
/// assert_eq!(Colour::DarkBlue.variant(), "DarkBlue");
/// assert_eq!(
///     "blue".parse::<Colour>().unwrap_err().to_string(),
///     "unknown colour `blue`; one of: red, dark-blue"
/// );
/// ```
// Exported (the only way out of the crate for `macro_rules!`) but hidden at the root;
// documented where it is meant to be named, `iolab::lab::named`.
#[doc(hidden)]
#[macro_export]
macro_rules! named_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $Name:ident : $kind:literal {
            $( $(#[$vmeta:meta])* $Variant:ident = $name:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        $vis enum $Name {
            $( $(#[$vmeta])* $Variant, )+
        }

        impl $Name {
            /// Every value, in the order they are listed and measured.
            pub const ALL: [$Name; [$( stringify!($Variant) ),+].len()] = [$( $Name::$Variant ),+];

            /// The kebab-case name shared by the CLI, the JSON results and the docs.
            pub const fn name(self) -> &'static str {
                match self {
                    $( $Name::$Variant => $name, )+
                }
            }

            /// The value's name in Rust code (`MmapAvx2` for `mmap-avx2`), for rendering
            /// calls that compile.
            pub const fn variant(self) -> &'static str {
                match self {
                    $( $Name::$Variant => stringify!($Variant), )+
                }
            }
        }

        // The laboratory's trait (`iolab::lab::named::Named`): hidden on the enum's page,
        // which documents the same through the inherent `ALL` and `name()`.
        #[doc(hidden)]
        impl $crate::named::Named for $Name {
            const KIND: &'static str = $kind;

            fn all() -> &'static [Self] {
                &Self::ALL
            }

            fn name(self) -> &'static str {
                $Name::name(self)
            }
        }

        impl ::std::fmt::Display for $Name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl ::std::str::FromStr for $Name {
            type Err = $crate::named::UnknownName;

            fn from_str(s: &str) -> ::std::result::Result<Self, Self::Err> {
                <$Name as $crate::named::Named>::from_name(s)
            }
        }
    };
}
