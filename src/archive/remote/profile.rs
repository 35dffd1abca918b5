//! The AWS shared profile (`~/.aws/credentials`, `~/.aws/config`), for
//! what the environment does not set: keys, region and endpoint, as the
//! AWS CLI reads them. Only these five settings are read.

use std::path::PathBuf;

use object_store::aws::AmazonS3ConfigKey;

#[derive(Debug, Default, Clone, PartialEq)]
pub struct Profile {
    pub access_key_id: Option<String>,
    pub secret_access_key: Option<String>,
    pub session_token: Option<String>,
    pub region: Option<String>,
    pub endpoint_url: Option<String>,
}

impl Profile {
    /// Profile `AWS_PROFILE` (default `default`) from the two files
    /// (`AWS_SHARED_CREDENTIALS_FILE`, `AWS_CONFIG_FILE` move them).
    pub fn load() -> Profile {
        let name = std::env::var("AWS_PROFILE").unwrap_or_else(|_| "default".into());
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
        let file = |var: &str, default: &str| std::env::var_os(var).map_or_else(|| home.join(default), PathBuf::from);
        let credentials = std::fs::read_to_string(file("AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials"));
        let config = std::fs::read_to_string(file("AWS_CONFIG_FILE", ".aws/config"));
        let mut p = Profile::default();
        // The config file names a profile `[profile NAME]` (but `[default]`).
        let config_section = if name == "default" { name.clone() } else { format!("profile {name}") };
        for (text, section) in [(config.ok(), config_section), (credentials.ok(), name)] {
            if let Some(text) = text {
                p.read(&text, &section);
            }
        }
        p
    }

    /// Take this section's settings from an INI text (later files win).
    fn read(&mut self, text: &str, section: &str) {
        let mut inside = false;
        for line in text.lines() {
            let line = line.trim();
            if line.starts_with('#') || line.starts_with(';') || line.is_empty() {
                continue;
            }
            if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                inside = name.trim() == section;
                continue;
            }
            let Some((key, value)) = line.split_once('=') else { continue };
            let value = Some(value.trim().to_string()).filter(|v| !v.is_empty());
            if !inside || value.is_none() {
                continue;
            }
            match key.trim() {
                "aws_access_key_id" => self.access_key_id = value,
                "aws_secret_access_key" => self.secret_access_key = value,
                "aws_session_token" => self.session_token = value,
                "region" => self.region = value,
                "endpoint_url" => self.endpoint_url = value,
                _ => {}
            }
        }
    }

    /// The builder settings the environment left unset.
    pub fn settings(&self) -> Vec<(AmazonS3ConfigKey, String)> {
        let unset = |vars: &[&str]| vars.iter().all(|v| std::env::var_os(v).is_none());
        let mut out = Vec::new();
        // Keys go together: a key id from the environment with a profile's secret would never sign.
        if unset(&["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"]) {
            if let (Some(id), Some(secret)) = (&self.access_key_id, &self.secret_access_key) {
                out.push((AmazonS3ConfigKey::AccessKeyId, id.clone()));
                out.push((AmazonS3ConfigKey::SecretAccessKey, secret.clone()));
                if let Some(token) = &self.session_token {
                    out.push((AmazonS3ConfigKey::Token, token.clone()));
                }
            }
        }
        if let Some(region) = self.region.as_ref().filter(|_| unset(&["AWS_REGION", "AWS_DEFAULT_REGION"])) {
            out.push((AmazonS3ConfigKey::Region, region.clone()));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_is_read_as_the_aws_cli_reads_it() {
        let config =
            "[default]\nregion = eu-west-1\n[profile lab]\nregion = garage\nendpoint_url = http://127.0.0.1:3900\n";
        let credentials = "[default]\naws_access_key_id = AKIADEFAULT\n[lab]\n# a comment\naws_access_key_id = GK123\naws_secret_access_key = s3cr3t\n";
        let mut p = Profile::default();
        p.read(config, "profile lab");
        p.read(credentials, "lab");
        assert_eq!(p.region.as_deref(), Some("garage"));
        assert_eq!(p.endpoint_url.as_deref(), Some("http://127.0.0.1:3900"));
        assert_eq!(p.access_key_id.as_deref(), Some("GK123"));
        assert_eq!(p.secret_access_key.as_deref(), Some("s3cr3t"));
        let mut d = Profile::default();
        d.read(config, "default");
        d.read(credentials, "default");
        assert_eq!((d.region.as_deref(), d.access_key_id.as_deref()), (Some("eu-west-1"), Some("AKIADEFAULT")));
        assert_eq!(d.secret_access_key, None, "a key id without its secret");
    }
}
