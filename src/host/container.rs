//! Whether this process runs inside a container, which one, and what its
//! cgroup lets it use. Every clue is recorded as evidence, since none is
//! certain alone:
//! - `/run/.containerenv` (podman; filled with engine, name, id, image and
//!   image id only for `--privileged` containers, empty otherwise);
//! - `/.dockerenv` (docker);
//! - `container=…` in pid 1's environment (podman, lxc, systemd-nspawn);
//! - the cgroup path (`libpod-<id>`, `docker-<id>`, `/docker/<id>`,
//!   `kubepods`, `lxc.payload`).
//!
//! The image is visible from inside only where the runtime says so; where
//! it is not, it is not guessed.

use serde::{Deserialize, Serialize};

/// A container this process runs in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Container {
    /// `podman`, `docker`, `kubernetes`, `lxc`, `systemd-nspawn`, or what
    /// pid 1's `container=` says; `unknown` when only a marker file does.
    pub runtime: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The container's id (from `.containerenv` or the cgroup path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_id: Option<String>,
    /// What said so, one clue per entry.
    pub evidence: Vec<String>,
}

/// The files the detection reads, so a test can stand in for them.
pub struct Clues {
    /// `/run/.containerenv`, if it exists (maybe empty).
    pub containerenv: Option<String>,
    pub dockerenv: bool,
    /// pid 1's environment (NUL-separated), if readable.
    pub pid1_environ: Option<String>,
    /// `/proc/self/cgroup`.
    pub cgroup: Option<String>,
}

impl Clues {
    /// This machine's clues.
    pub fn here() -> Clues {
        Clues {
            containerenv: std::fs::read_to_string("/run/.containerenv").ok(),
            dockerenv: std::path::Path::new("/.dockerenv").exists(),
            pid1_environ: std::fs::read("/proc/1/environ").ok().map(|b| String::from_utf8_lossy(&b).into_owned()),
            cgroup: std::fs::read_to_string("/proc/self/cgroup").ok(),
        }
    }
}

/// The container this process runs in, if any clue says so.
pub fn detect() -> Option<Container> {
    detect_from(&Clues::here())
}

/// [`detect`] from given clues.
pub fn detect_from(clues: &Clues) -> Option<Container> {
    let mut c = Container::default();
    let set_runtime = |c: &mut Container, r: &str| {
        if c.runtime.is_empty() || c.runtime == "unknown" {
            c.runtime = r.to_string();
        }
    };
    if let Some(text) = &clues.containerenv {
        c.evidence.push("/run/.containerenv exists".into());
        for line in text.lines() {
            let Some((k, v)) = line.split_once('=') else { continue };
            let v = v.trim().trim_matches('"').to_string();
            if v.is_empty() {
                continue;
            }
            match k.trim() {
                "engine" => {
                    let (runtime, version) = v.split_once('-').unwrap_or((v.as_str(), ""));
                    set_runtime(&mut c, runtime);
                    c.version = (!version.is_empty()).then(|| version.to_string());
                }
                "name" => c.name = Some(v),
                "id" => c.id = Some(v),
                "image" => c.image = Some(v),
                "imageid" => c.image_id = Some(v),
                _ => {}
            }
        }
        set_runtime(&mut c, "podman");
    }
    if clues.dockerenv {
        c.evidence.push("/.dockerenv exists".into());
        set_runtime(&mut c, "docker");
    }
    if let Some(env) = &clues.pid1_environ {
        if let Some(v) = env.split(['\0', '\n']).find_map(|kv| kv.strip_prefix("container=")).filter(|v| !v.is_empty())
        {
            c.evidence.push(format!("container={v} in pid 1's environment"));
            set_runtime(&mut c, v);
        }
    }
    if let Some(cg) = &clues.cgroup {
        if let Some((runtime, id)) = cgroup_container(cg) {
            c.evidence.push(format!("cgroup path names {runtime}"));
            set_runtime(&mut c, runtime);
            if c.id.is_none() {
                c.id = id;
            }
        }
    }
    (!c.evidence.is_empty()).then(|| {
        set_runtime(&mut c, "unknown");
        c
    })
}

/// The runtime (and container id) a `/proc/self/cgroup` path names.
fn cgroup_container(text: &str) -> Option<(&'static str, Option<String>)> {
    let hex_id = |s: &str| {
        let id: String = s.chars().take_while(|c| c.is_ascii_hexdigit()).collect();
        (id.len() >= 12).then_some(id)
    };
    for line in text.lines() {
        let path = line.splitn(3, ':').nth(2).unwrap_or("");
        for part in path.split('/') {
            if let Some(rest) = part.strip_prefix("libpod-") {
                return Some(("podman", hex_id(rest)));
            }
            if let Some(rest) = part.strip_prefix("docker-") {
                return Some(("docker", hex_id(rest)));
            }
        }
        if let Some(rest) = path.split("/docker/").nth(1) {
            return Some(("docker", hex_id(rest)));
        }
        if path.contains("kubepods") {
            return Some(("kubernetes", None));
        }
        if path.contains("lxc.payload") {
            return Some(("lxc", None));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a plain `podman run` (runc, cgroup v1) shows inside, as read
    /// on this project's machine.
    const PODMAN_CGROUP: &str =
        "9:name=systemd:/libpod_parent/libpod-21bd6a6fdb694f77799ee7022b0144184c19ea383da46ee49e6aa8075c28c8ae\n\
        1:cpu:/libpod_parent/libpod-21bd6a6fdb694f77799ee7022b0144184c19ea383da46ee49e6aa8075c28c8ae\n";

    fn none() -> Clues {
        Clues { containerenv: None, dockerenv: false, pid1_environ: None, cgroup: None }
    }

    #[test]
    fn a_plain_podman_container_is_found_by_three_clues_without_its_image() {
        let clues = Clues {
            containerenv: Some(String::new()),
            pid1_environ: Some("PATH=/usr/bin\0TERM=xterm\0container=podman\0HOSTNAME=21bd6a6fdb69\0".into()),
            cgroup: Some(PODMAN_CGROUP.into()),
            ..none()
        };
        let c = detect_from(&clues).unwrap();
        assert_eq!(c.runtime, "podman");
        assert_eq!(c.evidence.len(), 3, "{c:?}");
        assert!(c.id.as_deref().unwrap().starts_with("21bd6a6fdb69"));
        assert_eq!((c.image, c.version), (None, None));
    }

    #[test]
    fn a_privileged_podman_container_names_its_engine_and_image() {
        let env = "engine=\"podman-4.3.1\"\nname=\"infallible_chaum\"\nid=\"76f638c070e3\"\nimage=\"localhost/bbtest:latest\"\nimageid=\"644b81ba01ca\"\nrootless=0\n";
        let c = detect_from(&Clues { containerenv: Some(env.into()), ..none() }).unwrap();
        assert_eq!((c.runtime.as_str(), c.version.as_deref()), ("podman", Some("4.3.1")));
        assert_eq!(c.image.as_deref(), Some("localhost/bbtest:latest"));
        assert_eq!((c.name.as_deref(), c.image_id.as_deref()), (Some("infallible_chaum"), Some("644b81ba01ca")));
    }

    #[test]
    fn docker_kubernetes_and_bare_metal() {
        let d = detect_from(&Clues {
            dockerenv: true,
            cgroup: Some("0::/system.slice/docker-0123456789abcdef.scope\n".into()),
            ..none()
        })
        .unwrap();
        assert_eq!((d.runtime.as_str(), d.id.as_deref()), ("docker", Some("0123456789abcdef")));
        let k = detect_from(&Clues { cgroup: Some("0::/kubepods/burstable/pod1/abc\n".into()), ..none() }).unwrap();
        assert_eq!(k.runtime, "kubernetes");
        let bare = Clues {
            pid1_environ: Some("HOME=/\0TERM=linux\0".into()),
            cgroup: Some("0::/user.slice/user-0.slice/session-1.scope\n".into()),
            ..none()
        };
        assert_eq!(detect_from(&bare), None);
    }
}
