//! NVIDIA Xid events from the kernel log: the lines the driver writes when
//! a GPU faults (`NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the
//! bus.`). NVML only delivers Xids to a process that was listening when
//! they happened, so passive checks read them where NHC's and GCM's Xid
//! checks do: the kernel's ring buffer (`/dev/kmsg`, this boot's records)
//! or a log file (`journalctl -k -b`, `/var/log/kern.log`, `dmesg`). A
//! reboot clears the ring buffer; a file holds what it holds.

use std::io::Read;
use std::path::Path;

use crate::vocab::health::XidEvent;

/// The kernel's ring buffer.
pub const KMSG: &str = "/dev/kmsg";

/// The longest message kept per event (a line can carry a register dump).
const MAX_TEXT: usize = 160;

/// Every Xid event of `path` (a file, or `/dev/kmsg`), in order, or why
/// the log could not be read.
pub fn xids(path: &Path) -> Result<Vec<XidEvent>, String> {
    let text = if path == Path::new(KMSG) { read_kmsg(path)? } else { read_file(path)? };
    Ok(text.lines().filter_map(parse).collect())
}

fn read_file(path: &Path) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// `/dev/kmsg` gives one record per read and `EAGAIN` once the records
/// present are read (opened non-blocking); `EPIPE` means records were
/// overwritten while reading, and reading goes on.
fn read_kmsg(path: &Path) -> Result<String, String> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| format!("{}: {e} (reading the kernel log needs root or CAP_SYSLOG where dmesg_restrict is set; or give --kernel-log FILE)", path.display()))?;
    let mut out = String::new();
    let mut buf = vec![0u8; 8192];
    loop {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                out.push_str(&String::from_utf8_lossy(&buf[..n]));
                if !out.ends_with('\n') {
                    out.push('\n');
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e) if e.raw_os_error() == Some(libc::EPIPE) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("{}: {e}", path.display())),
        }
    }
    Ok(out)
}

/// One line's Xid event: `NVRM: Xid (PCI:0000:2b:00): 79, pid=…, text`
/// (older drivers print the bus id without `PCI:`).
pub fn parse(line: &str) -> Option<XidEvent> {
    let at = line.find("NVRM: Xid (")?;
    let rest = &line[at + "NVRM: Xid (".len()..];
    let (bus, after) = rest.split_once("):")?;
    let after = after.trim_start();
    let digits: String = after.chars().take_while(|c| c.is_ascii_digit()).collect();
    let code: u32 = digits.parse().ok()?;
    // A MIG instance adds itself: `(PCI:0000:01:00 GPU-I:05)`.
    let pci = bus.split_whitespace().next().unwrap_or("").trim_start_matches("PCI:");
    let message = after[digits.len()..].trim_start_matches([',', ' ']);
    let mut text: String = message.chars().filter(|c| !c.is_control()).take(MAX_TEXT).collect();
    if message.chars().count() > MAX_TEXT {
        text.push('…');
    }
    Some(XidEvent { code, pci: pci_address(pci), text })
}

/// `0000:2b:00`, `00000000:2B:00.0` → (domain, bus, device); `None` for
/// anything else.
pub fn pci_address(s: &str) -> Option<(u32, u32, u32)> {
    let s = s.split('.').next()?;
    let parts: Vec<&str> = s.split(':').collect();
    let hex = |p: &str| u32::from_str_radix(p, 16).ok();
    match parts.as_slice() {
        [d, b, dev] => Some((hex(d)?, hex(b)?, hex(dev)?)),
        [b, dev] => Some((0, hex(b)?, hex(dev)?)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xid_lines_of_every_driver_generation_are_read() {
        let e = parse("May 18 19:02:39 kernel: NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.").unwrap();
        assert_eq!((e.code, e.pci, e.text.as_str()), (79, Some((0, 0x2b, 0)), "GPU has fallen off the bus."));
        let e = parse("[ 269.5] NVRM: Xid (0000:01:00): 3, C 00000005 SC 00000007").unwrap();
        assert_eq!((e.code, e.pci), (3, Some((0, 1, 0))));
        let e = parse("6,1234,5678901,-;NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row").unwrap();
        assert_eq!((e.code, e.pci), (63, Some((0, 0x10, 0x1c))));
        assert!(e.text.starts_with("pid=1896"));
        assert!(parse("NVRM: GPU at PCI:0000:2b:00: GPU-0b11d014").is_none());
        assert!(parse("NVRM: Xid (PCI:0000:2b:00): xx, no code").is_none());
        assert_eq!(pci_address("00000000:2B:00.0"), Some((0, 0x2b, 0)));
        let e = parse("NVRM: Xid (PCI:0000:01:00 GPU-I:05): 94, pid=7194, Contained: CE User Channel (0x9).").unwrap();
        assert_eq!((e.code, e.pci), (94, Some((0, 1, 0))));
    }
}
