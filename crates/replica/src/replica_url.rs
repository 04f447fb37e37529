//! Reading a replica URL (`file:///abs/dir` or `s3://bucket/prefix`) and
//! the S3 options into an `object_store` backend and the layout its LTX
//! files follow: checks of the URL, Litestream's query parameters, the
//! usual AWS environment variables, and the retry policy.
//!
//! It makes no request: a missing bucket or a wrong key shows at the
//! store's first operation. Its one piece of state is the process's S3
//! clients, one per bucket, endpoint, region, credentials and addressing
//! style, shared by every store that names the same ones (each keeps its
//! own prefix) and dropped with the last of them: one connection pool and
//! one set of credentials per bucket, however many databases replicate
//! there. The blocking store API itself lives in `store`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::local::LocalFileSystem;
use object_store::path::Path;
use object_store::ObjectStore;

use crate::create_only::{CreateOnly, CreateOnlyConnector};
use crate::error::{Error, Result};

/// Retries of one S3 request, and how long they may take in all.
const S3_RETRIES: usize = 3;
const S3_RETRY_TIMEOUT: Duration = Duration::from_secs(10);

/// S3 settings. Each one left `None` falls back to the usual environment
/// variable, then to a default.
#[derive(Clone, Debug, Default)]
pub struct S3Options {
    /// `AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`; default AWS itself.
    pub endpoint: Option<String>,
    /// `AWS_REGION`, `AWS_DEFAULT_REGION`; default `us-east-1`.
    pub region: Option<String>,
    /// `AWS_ACCESS_KEY_ID` (required).
    pub access_key_id: Option<String>,
    /// `AWS_SECRET_ACCESS_KEY` (required).
    pub secret_access_key: Option<String>,
    /// `AWS_SESSION_TOKEN`; default none.
    pub session_token: Option<String>,
    /// Bucket in the path rather than the host name: `AWS_S3_FORCE_PATH_STYLE`;
    /// default true when an endpoint is given (S3-compatible servers), else false.
    pub force_path_style: Option<bool>,
}

/// The folder (under the folder or prefix that holds the replica) where
/// the process leases of every replica beside it live; see `lease_root`.
pub(crate) const LEASE_FOLDER: [&str; 2] = [".offloop", "leases"];

#[derive(Clone)]
pub(crate) enum Layout {
    Folder {
        root: PathBuf,
    },
    S3 {
        prefix: Path,
        /// The keys whose uploads must create, shared with the S3 client.
        creates: Arc<CreateOnly>,
    },
}

impl Layout {
    pub(crate) fn level_dir(&self, level: u8) -> Path {
        match self {
            Layout::Folder { root } => {
                // Checked absolute when the store was opened.
                let base = Path::from_absolute_path(root).unwrap_or_default();
                base.join("ltx").join(level.to_string())
            }
            Layout::S3 { prefix, .. } => prefix.clone().join(format!("{level:04x}")),
        }
    }
}

/// The backend and layout for the replica at `url`, and the key of its
/// lease root (see [`lease_root`]).
pub(crate) fn backend(
    url: &str,
    s3: &S3Options,
) -> Result<(Arc<dyn ObjectStore>, Layout, LeaseRootPlace)> {
    let parsed =
        url::Url::parse(url).map_err(|e| Error::Config(format!("bad replica URL {url:?}: {e}")))?;
    let (store, layout, place): (Arc<dyn ObjectStore>, Layout, LeaseRootPlace) =
        match parsed.scheme() {
            "file" => {
                let root = parsed
                    .to_file_path()
                    .ok()
                    .filter(|p| p.is_absolute())
                    .ok_or_else(|| {
                        Error::Config(format!("replica URL {url:?} needs an absolute path"))
                    })?;
                if root.exists() && !root.is_dir() {
                    return Err(Error::Config(format!(
                        "replica path {} is a file, not a folder",
                        root.display()
                    )));
                }
                Path::from_absolute_path(&root)
                    .map_err(|e| Error::Config(format!("replica path {}: {e}", root.display())))?;
                let fs = LocalFileSystem::new().with_fsync(true);
                let parent = root.parent().unwrap_or(&root).to_path_buf();
                let folder = LEASE_FOLDER.iter().fold(parent.clone(), |p, s| p.join(s));
                let place = LeaseRootPlace {
                    key: format!("file://{}", parent.display()),
                    layout: Layout::Folder { root: folder },
                };
                (Arc::new(fs), Layout::Folder { root }, place)
            }
            "s3" => {
                let (client, prefix) = resolve_s3(&parsed, s3)?;
                let parent: Path = {
                    let parts: Vec<_> = prefix.parts().collect();
                    Path::from_iter(parts[..parts.len().saturating_sub(1)].iter().cloned())
                };
                // Not the secrets: two stores that differ only there would
                // share a lease root's renewals, and a key is never shown.
                let key = format!(
                    "s3://{}/{}?endpoint={}&region={}&key={}&path_style={}",
                    client.bucket,
                    parent,
                    client.endpoint.as_deref().unwrap_or(""),
                    client.region,
                    client.key_id,
                    client.path_style
                );
                let (store, creates) = shared_s3(client, &parsed)?;
                let folder = LEASE_FOLDER.iter().fold(parent, |p, s| p.join(*s));
                let place = LeaseRootPlace {
                    key,
                    layout: Layout::S3 {
                        prefix: folder,
                        creates: creates.clone(),
                    },
                };
                (store, Layout::S3 { prefix, creates }, place)
            }
            other => {
                return Err(Error::Config(format!(
                    "replica URL {url:?}: unknown scheme {other:?} (use file:// or s3://)"
                )))
            }
        };
    Ok((store, layout, place))
}

/// Where the process leases of a replica live: the folder or prefix that
/// holds the replica (its parent: `file:///srv/replicas/tenant-1` has
/// `/srv/replicas`, `s3://bucket/tenants/t1` has `tenants`, `s3://bucket/t1`
/// the bucket's top), in its [`LEASE_FOLDER`], on the same S3 client.
/// Every replica with the same parent on the same client has the same
/// `key`, and a process holds one lease there for all of them.
#[derive(Clone)]
pub(crate) struct LeaseRootPlace {
    pub(crate) key: String,
    pub(crate) layout: Layout,
}

/// What tells one S3 client from another: every setting the client is
/// built from. Stores whose settings are equal share one client.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct S3Client {
    bucket: String,
    endpoint: Option<String>,
    region: String,
    key_id: String,
    secret: String,
    token: Option<String>,
    path_style: bool,
}

/// The process's S3 clients while any store holds one, each with the
/// create-only keys its HTTP layer consults. Entries whose client is gone
/// are dropped at the next lookup.
type S3Clients = HashMap<S3Client, (Weak<AmazonS3>, Arc<CreateOnly>)>;
static S3_CLIENTS: Mutex<Option<S3Clients>> = Mutex::new(None);

/// The client for `client`'s settings: the one a live store already
/// uses, or a new one.
fn shared_s3(client: S3Client, url: &url::Url) -> Result<(Arc<dyn ObjectStore>, Arc<CreateOnly>)> {
    let mut guard = S3_CLIENTS.lock().unwrap_or_else(PoisonError::into_inner);
    let clients = guard.get_or_insert_with(HashMap::new);
    clients.retain(|_, (store, _)| store.strong_count() > 0);
    if let Some((store, creates)) = clients.get(&client) {
        if let Some(store) = store.upgrade() {
            return Ok((store, creates.clone()));
        }
    }
    let creates = Arc::new(CreateOnly::default());
    let store = Arc::new(build_s3(&client, &creates, url)?);
    clients.insert(client, (Arc::downgrade(&store), creates.clone()));
    Ok((store, creates))
}

/// The S3 client's settings and the replica's prefix, from the URL, the
/// options and the environment.
fn resolve_s3(url: &url::Url, opts: &S3Options) -> Result<(S3Client, Path)> {
    let env = |names: &[&str]| {
        names
            .iter()
            .find_map(|n| std::env::var(n).ok().filter(|v| !v.is_empty()))
    };
    let query = |name: &str| {
        url.query_pairs()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    };
    let bucket = url
        .host_str()
        .filter(|b| !b.is_empty())
        .ok_or_else(|| Error::Config(format!("S3 replica URL {url} names no bucket")))?;
    let prefix = url.path().trim_matches('/');
    if prefix.is_empty() {
        return Err(Error::Config(format!(
            "S3 replica URL {url} needs a path after the bucket (s3://{bucket}/PATH)"
        )));
    }
    let prefix = Path::parse(prefix)
        .map_err(|e| Error::Config(format!("S3 replica path {prefix:?}: {e}")))?;

    let endpoint = opts
        .endpoint
        .clone()
        .or_else(|| query("endpoint"))
        .or_else(|| env(&["AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"]));
    let region = opts
        .region
        .clone()
        .or_else(|| query("region"))
        .or_else(|| env(&["AWS_REGION", "AWS_DEFAULT_REGION"]))
        .unwrap_or_else(|| "us-east-1".into());
    let key_id = opts
        .access_key_id
        .clone()
        .or_else(|| env(&["AWS_ACCESS_KEY_ID"]));
    let secret = opts
        .secret_access_key
        .clone()
        .or_else(|| env(&["AWS_SECRET_ACCESS_KEY"]));
    let token = opts
        .session_token
        .clone()
        .or_else(|| env(&["AWS_SESSION_TOKEN"]));
    let path_style = opts
        .force_path_style
        .or_else(|| query("forcePathStyle").map(|v| v == "true"))
        .or_else(|| env(&["AWS_S3_FORCE_PATH_STYLE"]).map(|v| v == "true"))
        .unwrap_or(endpoint.is_some());
    // Without keys object_store would ask the cloud's instance metadata
    // service; a replica names its credentials instead.
    let (Some(key_id), Some(secret)) = (key_id, secret) else {
        return Err(Error::Config(
            "S3 replica needs credentials: set access_key_id and secret_access_key \
             (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)"
                .into(),
        ));
    };
    let client = S3Client {
        bucket: bucket.to_string(),
        endpoint,
        region,
        key_id,
        secret,
        token,
        path_style,
    };
    Ok((client, prefix))
}

fn build_s3(client: &S3Client, creates: &Arc<CreateOnly>, url: &url::Url) -> Result<AmazonS3> {
    let S3Client {
        bucket,
        endpoint,
        region,
        key_id,
        secret,
        token,
        path_style,
    } = client.clone();

    // A few quick retries: the replicator retries a failed upload itself,
    // with its own backoff, and must hear of an outage in seconds (for
    // `lastError`), not after object_store's default three minutes.
    let retry = object_store::RetryConfig {
        max_retries: S3_RETRIES,
        retry_timeout: S3_RETRY_TIMEOUT,
        ..Default::default()
    };
    let mut b = AmazonS3Builder::new()
        .with_http_connector(CreateOnlyConnector(creates.clone()))
        .with_retry(retry)
        .with_bucket_name(bucket)
        .with_region(region)
        .with_access_key_id(key_id)
        .with_secret_access_key(secret)
        .with_virtual_hosted_style_request(!path_style);
    if let Some(token) = token {
        b = b.with_token(token);
    }
    if let Some(endpoint) = endpoint {
        b = b
            .with_allow_http(endpoint.starts_with("http://"))
            .with_endpoint(endpoint);
    }
    b.build()
        .map_err(|e| Error::Config(format!("S3 replica {url}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s3(bucket_and_prefix: &str, key_id: &str) -> (Arc<dyn ObjectStore>, Layout, LeaseRootPlace) {
        let opts = S3Options {
            endpoint: Some("http://127.0.0.1:9".into()),
            access_key_id: Some(key_id.into()),
            secret_access_key: Some("secret".into()),
            ..S3Options::default()
        };
        backend(&format!("s3://{bucket_and_prefix}"), &opts).unwrap()
    }

    #[test]
    fn stores_of_one_bucket_and_credentials_share_one_s3_client_while_one_lives() {
        let (a, _, _) = s3("shared/tenant-a", "k");
        let (b, layout, _) = s3("shared/tenant-b", "k");
        assert!(Arc::ptr_eq(&a, &b), "one client for the bucket");
        assert!(matches!(layout, Layout::S3 { prefix, .. } if prefix.as_ref() == "tenant-b"));
        let (other_bucket, _, _) = s3("elsewhere/tenant-a", "k");
        assert!(!Arc::ptr_eq(&a, &other_bucket));
        let (other_keys, _, _) = s3("shared/tenant-a", "k2");
        assert!(!Arc::ptr_eq(&a, &other_keys));
        let gone = Arc::downgrade(&a);
        drop((a, b));
        assert!(
            gone.upgrade().is_none(),
            "the client goes with its last store"
        );
    }

    #[test]
    fn replicas_with_one_parent_on_one_client_share_a_lease_root_beside_them() {
        let (_, _, a) = s3("shared/tenants/a", "k");
        let (_, _, b) = s3("shared/tenants/b", "k");
        assert_eq!(a.key, b.key);
        assert!(
            matches!(&a.layout, Layout::S3 { prefix, .. } if prefix.as_ref() == "tenants/.offloop/leases")
        );
        let (_, _, top) = s3("shared/app", "k");
        assert!(
            matches!(&top.layout, Layout::S3 { prefix, .. } if prefix.as_ref() == ".offloop/leases")
        );
        assert_ne!(top.key, a.key);
        assert_ne!(s3("shared/tenants/a", "k2").2.key, a.key, "another client");
        assert_ne!(s3("other/tenants/a", "k").2.key, a.key, "another bucket");
        let (_, _, f) = backend("file:///srv/replicas/t1", &S3Options::default()).unwrap();
        assert_eq!(f.key, "file:///srv/replicas");
        assert!(
            matches!(&f.layout, Layout::Folder { root } if root == std::path::Path::new("/srv/replicas/.offloop/leases"))
        );
    }
}
