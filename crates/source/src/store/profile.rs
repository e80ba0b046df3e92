//! The AWS shared files, `~/.aws/credentials` and `~/.aws/config`: the
//! settings of one profile, as the AWS CLI reads them. object_store reads
//! only `AWS_*` variables, so `AWS_PROFILE` and the files are perfq's to
//! read.
//!
//! The format is INI: `[name]` sections (`[profile name]` in the config
//! file, except `[default]`), `key = value` lines, `#` and `;` comments.
//! An indented line continues the key above it (the config file's nested
//! settings, `s3 =` then `  addressing_style = path`): those are passed
//! over, as no setting perfq reads is nested.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The settings of one profile, from both files (the credentials file's
/// win, as the AWS CLI has it).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Profile {
    settings: HashMap<String, String>,
}

impl Profile {
    /// Profile `name` from the files at `config` and `credentials`; a file
    /// that does not exist holds nothing.
    pub fn read(name: &str, config: &Path, credentials: &Path) -> std::io::Result<Profile> {
        let mut settings = HashMap::new();
        // In the config file a profile other than the default is headed
        // `[profile NAME]`; older files also say `[NAME]`.
        let headings = [format!("profile {name}"), name.to_string()];
        if let Some(text) = read_if_there(config)? {
            let wanted = |h: &str| headings.iter().any(|w| w == h);
            settings.extend(section(&text, wanted));
        }
        if let Some(text) = read_if_there(credentials)? {
            settings.extend(section(&text, |h| h == name));
        }
        Ok(Profile { settings })
    }

    /// Profile `name` from where the AWS CLI looks: `AWS_CONFIG_FILE` and
    /// `AWS_SHARED_CREDENTIALS_FILE`, else `~/.aws/config` and
    /// `~/.aws/credentials`.
    pub fn from_home(name: &str) -> std::io::Result<Profile> {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let file = |var: &str, default: &str| {
            std::env::var_os(var)
                .map(PathBuf::from)
                .or_else(|| home.as_ref().map(|h| h.join(".aws").join(default)))
        };
        match (
            file("AWS_CONFIG_FILE", "config"),
            file("AWS_SHARED_CREDENTIALS_FILE", "credentials"),
        ) {
            (Some(config), Some(credentials)) => Profile::read(name, &config, &credentials),
            _ => Ok(Profile::default()),
        }
    }

    /// A setting, by its key in the files (`aws_access_key_id`, `region`,
    /// `endpoint_url`, …).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.settings.get(key).map(String::as_str)
    }

    /// Whether the files held nothing for the profile.
    pub fn is_empty(&self) -> bool {
        self.settings.is_empty()
    }
}

fn read_if_there(path: &Path) -> std::io::Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(std::io::Error::new(
            e.kind(),
            format!("{}: {e}", path.display()),
        )),
    }
}

/// The `key = value` lines of the sections whose heading `wanted` takes,
/// later ones winning.
fn section(text: &str, wanted: impl Fn(&str) -> bool) -> Vec<(String, String)> {
    let mut inside = false;
    let mut found = Vec::new();
    for line in text.lines() {
        let indented = line.starts_with([' ', '\t']);
        let line = line.trim();
        if line.is_empty() || line.starts_with(['#', ';']) {
            continue;
        }
        if let Some(heading) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            inside = wanted(heading.trim());
            continue;
        }
        if !inside || indented {
            continue;
        }
        if let Some((key, value)) = line.split_once('=') {
            found.push((key.trim().to_ascii_lowercase(), value.trim().to_string()));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_is_read_from_both_files_the_credentials_winning() {
        let dir = tempfile::tempdir().expect("dir");
        let config = dir.path().join("config");
        let credentials = dir.path().join("credentials");
        std::fs::write(
            &config,
            "[default]\nregion = eu-west-1\n\n[profile lab]\nregion = us-west-2\n\
             endpoint_url = http://127.0.0.1:9000\ns3 =\n  addressing_style = path\n\
             aws_access_key_id = FROMCONFIG\n",
        )
        .expect("config");
        std::fs::write(
            &credentials,
            "# keys\n[lab]\naws_access_key_id = AKIDLAB\naws_secret_access_key = s3cr3t\n\
             [default]\naws_access_key_id = AKIDDEFAULT\n",
        )
        .expect("credentials");
        let lab = Profile::read("lab", &config, &credentials).expect("lab");
        assert_eq!(lab.get("region"), Some("us-west-2"));
        assert_eq!(lab.get("endpoint_url"), Some("http://127.0.0.1:9000"));
        assert_eq!(lab.get("aws_access_key_id"), Some("AKIDLAB"));
        assert_eq!(lab.get("aws_secret_access_key"), Some("s3cr3t"));
        assert_eq!(lab.get("addressing_style"), None);
        let default = Profile::read("default", &config, &credentials).expect("default");
        assert_eq!(default.get("region"), Some("eu-west-1"));
        assert_eq!(default.get("aws_access_key_id"), Some("AKIDDEFAULT"));
        let none = Profile::read("nobody", &config, &credentials).expect("nobody");
        assert!(none.is_empty());
        let missing = Profile::read("lab", &dir.path().join("x"), &dir.path().join("y"));
        assert!(missing.expect("no files").is_empty());
    }
}
