//! A bitset with one bit per point of a tensor, allocated fallibly (a bound
//! in the trillions must give an error, not an allocation abort). Used by
//! the point checks (needed points) and the interpreter (computed and
//! in-progress points).

/// A fixed-size bitset.
#[derive(Clone, Debug, Default)]
pub struct Bits(Vec<u64>);

impl Bits {
    /// `len` bits, all set or all clear; `None` if the memory cannot be had.
    pub fn new(len: u64, all: bool) -> Option<Self> {
        let words = usize::try_from(len.div_ceil(64)).ok()?;
        let mut v = Vec::new();
        v.try_reserve_exact(words).ok()?;
        v.resize(words, if all { u64::MAX } else { 0 });
        Some(Self(v))
    }

    /// Bit `i` (false past the end).
    pub fn get(&self, i: usize) -> bool {
        self.0.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
    }

    /// Sets bit `i` to `on` (ignored past the end).
    pub fn put(&mut self, i: usize, on: bool) {
        if let Some(w) = self.0.get_mut(i / 64) {
            if on {
                *w |= 1 << (i % 64);
            } else {
                *w &= !(1 << (i % 64));
            }
        }
    }

    /// Sets bit `i`.
    pub fn set(&mut self, i: usize) {
        self.put(i, true);
    }
}

#[cfg(test)]
mod tests {
    use super::Bits;

    #[test]
    fn bits_set_clear_and_bounds() {
        let mut b = Bits::new(130, false).unwrap();
        b.set(129);
        assert!(b.get(129) && !b.get(128) && !b.get(500));
        b.put(129, false);
        assert!(!b.get(129));
        assert!(Bits::new(70, true).unwrap().get(69));
        assert!(Bits::new(u64::MAX, false).is_none());
    }
}
