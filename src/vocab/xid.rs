//! NVIDIA's Xid catalog (`data/reference/xid-catalog.tsv`, from
//! [`SOURCE`]): what each Xid code means and the action NVIDIA says is
//! immediately needed to get the system back into service, its
//! "Resolution Bucket (Immediate Action)". `analysis::fleet::health` turns
//! a bucket into drain, reset or warn.

/// The catalog's page.
pub const SOURCE: &str = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html";

const CATALOG: &str = include_str!("../../data/reference/xid-catalog.tsv");

/// One row of the catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XidEntry {
    pub code: u32,
    /// `ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS`.
    pub mnemonic: &'static str,
    /// `GPU has fallen off the bus`.
    pub description: &'static str,
    /// The immediate-action bucket (`RESTART_BM`, `RESET_GPU`, ...);
    /// `None` where the catalog gives none.
    pub immediate: Option<&'static str>,
}

/// Every row, in code order.
pub fn catalog() -> impl Iterator<Item = XidEntry> {
    CATALOG.lines().filter(|l| !l.starts_with('#') && !l.starts_with("code\t")).filter_map(|l| {
        let mut f = l.split('\t');
        let code = f.next()?.parse().ok()?;
        let (mnemonic, description, immediate) = (f.next()?, f.next()?, f.next()?);
        Some(XidEntry { code, mnemonic, description, immediate: (immediate != "?").then_some(immediate) })
    })
}

/// The catalog's row for `code`.
pub fn entry(code: u32) -> Option<XidEntry> {
    catalog().find(|e| e.code == code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalog_reads_whole_and_in_order() {
        let all: Vec<XidEntry> = catalog().collect();
        assert_eq!(all.len(), 172);
        assert!(all.windows(2).all(|w| w[0].code + 1 == w[1].code));
        let e = entry(79).unwrap();
        assert_eq!((e.mnemonic, e.immediate), ("ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS", Some("RESTART_BM")));
        assert_eq!(entry(95).unwrap().immediate, Some("RESET_GPU"));
        assert_eq!(entry(170).unwrap().immediate, None);
        assert!(entry(9999).is_none());
    }
}
