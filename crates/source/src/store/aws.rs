//! An S3 client configured as the AWS tools would be: the `AWS_*`
//! variables first (object_store reads them all), then the profile
//! `AWS_PROFILE` names (else `default`) in the shared files, which
//! object_store does not read. Plain http only where the endpoint says
//! `http://`. No secret goes into an error.

use object_store::aws::{AmazonS3, AmazonS3Builder, AmazonS3ConfigKey};

use super::profile::Profile;

/// The client of `bucket`, or why none can be made (never a secret).
pub(super) fn store(bucket: &str) -> Result<AmazonS3, String> {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let named = env("AWS_PROFILE").or_else(|| env("AWS_DEFAULT_PROFILE"));
    let name = named.clone().unwrap_or_else(|| "default".into());
    let profile =
        Profile::from_home(&name).map_err(|e| format!("cannot read the AWS profile files: {e}"))?;
    if named.is_some() && profile.is_empty() {
        return Err(format!(
            "AWS_PROFILE names {name:?}, which neither ~/.aws/config nor ~/.aws/credentials holds"
        ));
    }
    let mut b = AmazonS3Builder::from_env().with_bucket_name(bucket);
    let mut from_profile = |key: AmazonS3ConfigKey, vars: &[&str], setting: &str| {
        if vars.iter().all(|v| env(v).is_none()) {
            if let Some(value) = profile.get(setting) {
                b = b.clone().with_config(key, value);
            }
        }
    };
    // Keys come as a pair: a key id from the environment is never
    // matched with a secret from a file.
    if env("AWS_ACCESS_KEY_ID").is_none() {
        from_profile(AmazonS3ConfigKey::AccessKeyId, &[], "aws_access_key_id");
        from_profile(
            AmazonS3ConfigKey::SecretAccessKey,
            &[],
            "aws_secret_access_key",
        );
        from_profile(AmazonS3ConfigKey::Token, &[], "aws_session_token");
    }
    from_profile(
        AmazonS3ConfigKey::Region,
        &["AWS_REGION", "AWS_DEFAULT_REGION"],
        "region",
    );
    let endpoint_vars = ["AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "AWS_ENDPOINT"];
    from_profile(AmazonS3ConfigKey::Endpoint, &endpoint_vars, "endpoint_url");
    let endpoint = endpoint_vars
        .iter()
        .find_map(|v| env(v))
        .or_else(|| profile.get("endpoint_url").map(str::to_string));
    if let Some(e) = &endpoint {
        if e.starts_with("http://") {
            b = b.with_allow_http(true);
        } else if !e.starts_with("https://") {
            return Err(format!(
                "the endpoint {e:?} is not an http:// or https:// URL"
            ));
        }
    }
    let has_keys = b
        .get_config_value(&AmazonS3ConfigKey::AccessKeyId)
        .is_some();
    let metadata_off = env("AWS_EC2_METADATA_DISABLED").is_some_and(|v| v == "true");
    if !has_keys && metadata_off && env("AWS_WEB_IDENTITY_TOKEN_FILE").is_none() {
        return Err(
            "no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, \
                    or AWS_PROFILE"
                .into(),
        );
    }
    b.build().map_err(|e| super::one_line(&e))
}
