//! The Xid check: each Xid code the kernel log holds for a GPU, judged by
//! the immediate action of NVIDIA's catalog (`vocab::xid`).

use super::health::{Action, Check, Finding, XidEvent};

/// One finding per Xid code logged for `device`, with how often, by the
/// catalog's immediate action (Xid 154 by the recovery action it states).
pub fn xid_findings(device: &str, xids: &[XidEvent]) -> Vec<Finding> {
    let mut codes: Vec<u32> = xids.iter().map(|x| x.code).collect();
    codes.sort_unstable();
    codes.dedup();
    codes
        .into_iter()
        .map(|code| {
            let of_code: Vec<&XidEvent> = xids.iter().filter(|x| x.code == code).collect();
            let last = of_code.last().map_or("", |x| x.text.as_str());
            let (action, why) = xid_action(code, last);
            let name = match crate::vocab::xid::entry(code) {
                Some(e) => format!("Xid {code} {} ({})", e.mnemonic, e.description),
                None => format!("Xid {code} (not in NVIDIA's catalog as benchbook holds it)"),
            };
            let times = if of_code.len() > 1 { format!(" ×{}", of_code.len()) } else { String::new() };
            Finding {
                device: device.to_string(),
                check: Check::Xid,
                action,
                what: format!("{name}{times}: {why}"),
                source: Check::Xid.source(),
            }
        })
        .collect()
}

/// What an Xid asks for, and why in words.
fn xid_action(code: u32, text: &str) -> (Action, String) {
    let Some(bucket) = crate::vocab::xid::entry(code).and_then(|e| e.immediate) else {
        return (Action::Warn, "no immediate action in NVIDIA's catalog".into());
    };
    let (action, words) = match bucket {
        "CONTACT_SUPPORT" => (Action::Drain, "contact support"),
        "CHECK_MECHANICALS" => (Action::Drain, "check the device's seating and connections"),
        "UPDATE_SWFW" => (Action::Drain, "update firmware and software"),
        "RESET_GPU" => (Action::Reset, "reset the GPU"),
        "RESTART_BM" => (Action::Reset, "reboot the node"),
        "RESTART_VM" => (Action::Reset, "restart the VM that owns the GPU"),
        "WORKFLOW_XID_48" => (Action::Reset, "reset the GPU (drain and reset with Xid 63 or 64)"),
        "XID_154" => return recovery_action(text),
        "RESTART_APP" => (Action::Warn, "restart the application; the GPU needs nothing"),
        "IGNORE" => (Action::Warn, "no action needed"),
        "CHECK_UVM" => (Action::Warn, "reset the GPU only if UVM or vGPU is in use"),
        "WORKFLOW_NVLINK_ERR" | "WORKFLOW_NVLINK5_ERR" => (
            Action::Warn,
            "decode its registers by NVIDIA's NVLink workflow (the nvlink check drains a link that is down)",
        ),
        "WORKFLOW_XID_45" => (Action::Warn, "follow the other Xids' guidance (alone: restart the fabric manager)"),
        _ => (Action::Warn, "an action benchbook does not know"),
    };
    (action, format!("NVIDIA's immediate action {bucket}: {words}"))
}

/// Xid 154's own words: `GPU recovery action changed from 0x0 (None) to
/// 0x2 (Node Reboot Required)`.
fn recovery_action(text: &str) -> (Action, String) {
    let to = text.rsplit_once(" to ").map_or("", |(_, t)| t);
    let said = to.split_once('(').and_then(|(_, r)| r.split_once(')')).map_or("", |(w, _)| w.trim());
    let action = match said {
        "Drain P2P" => Action::Drain,
        "Drain and Reset" | "GPU Reset Required" | "Node Reboot Required" => Action::Reset,
        _ => Action::Warn,
    };
    let said = if said.is_empty() { "not stated in the line" } else { said };
    (action, format!("the driver's recovery action: {said}"))
}
