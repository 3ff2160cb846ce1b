//! `with_all!`: declares a field-less enum together with `ALL`, its variants in declaration
//! order, so a table walked or indexed by it can never miss a variant added later.

/// Declares the enum and `ALL`, in order (`v as usize` indexes it).
macro_rules! with_all {
    ($(#[$meta:meta])* $vis:vis enum $name:ident {
        $($(#[$vmeta:meta])* $variant:ident),* $(,)?
    }) => {
        $(#[$meta])* $vis enum $name { $($(#[$vmeta])* $variant),* }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),*];
        }
    };
}
pub(crate) use with_all;

#[cfg(test)]
mod tests {
    with_all! {
        #[derive(Debug, Clone, Copy, PartialEq)]
        enum Three { A, B, C }
    }

    #[test]
    fn all_holds_every_variant_at_its_index() {
        assert_eq!(Three::ALL, [Three::A, Three::B, Three::C]);
        assert!(Three::ALL.iter().enumerate().all(|(i, v)| *v as usize == i));
    }
}
