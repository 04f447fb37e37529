//! S3's condition on a multipart upload, which `object_store` does not
//! send itself.
//!
//! S3 creates an object only if its key is absent when the upload's last
//! request, `CompleteMultipartUpload`, carries `If-None-Match: *` (AWS S3
//! since 2024, MinIO, moto). `object_store` sends that header only for its
//! own copies, and its `put_multipart` takes no condition; the only other
//! conditional write it has is a single PUT of a body held in memory,
//! which for a full image is the whole database. So the S3 client is built
//! with [`CreateOnlyConnector`], a thin layer over `object_store`'s own
//! HTTP client that adds the header to the completion of an upload whose
//! key is registered for a create ([`CreateOnly::register`]); the upload
//! itself is `store::s3_upload`'s. The header joins the request after it
//! is signed, as `object_store` adds it itself; S3 signs only the headers
//! a request lists.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use object_store::client::{
    HttpClient, HttpConnector, HttpError, HttpRequest, HttpResponse, HttpService, ReqwestConnector,
};
use object_store::path::Path;
use object_store::ClientOptions;

/// The keys with a conditional upload under way, shared by the stores of
/// one S3 client and its HTTP client. A key can be registered more than
/// once (two writers of one process racing for it), so each holds a count.
///
/// The stores sharing a client have different prefixes, and a request is
/// matched by the key its path ends with: an upload of a registered key
/// always carries the condition. Another store's upload whose key ends
/// with a registered one at a `/` (prefix `x/a` beside prefix `a`, the same
/// level and file name, both uploads under way at once) carries it too;
/// that can only refuse an overwrite, which its round retries, and never
/// lets a create overwrite.
#[derive(Debug, Default)]
pub(crate) struct CreateOnly {
    keys: Mutex<HashMap<String, usize>>,
}

impl CreateOnly {
    /// Marks `key` create-only until the returned guard drops.
    pub(crate) fn register(self: &Arc<Self>, key: &Path) -> Registered {
        let key = key.as_ref().to_string();
        *self.lock().entry(key.clone()).or_default() += 1;
        Registered {
            set: self.clone(),
            key,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, usize>> {
        self.keys.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether a request completes an upload of a registered key. The URL's
    /// path is the bucket's (path style) or the host's, then the key,
    /// percent-encoded segment by segment.
    fn completes_a_create(&self, req: &HttpRequest) -> bool {
        if req.method() != http::Method::POST {
            return false;
        }
        let completes = req
            .uri()
            .query()
            .is_some_and(|q| q.split('&').any(|p| p.starts_with("uploadId=")));
        if !completes {
            return false;
        }
        let path = percent_encoding::percent_decode_str(req.uri().path()).decode_utf8_lossy();
        self.lock().keys().any(|key| {
            path.strip_suffix(key.as_str())
                .is_some_and(|rest| rest.ends_with('/'))
        })
    }
}

/// A key's registration, undone when dropped.
pub(crate) struct Registered {
    set: Arc<CreateOnly>,
    key: String,
}

impl Drop for Registered {
    fn drop(&mut self) {
        let mut keys = self.set.lock();
        if let Some(count) = keys.get_mut(&self.key) {
            *count -= 1;
            if *count == 0 {
                keys.remove(&self.key);
            }
        }
    }
}

/// `object_store`'s reqwest client, with [`CreateOnly`]'s condition added.
#[derive(Debug)]
pub(crate) struct CreateOnlyConnector(pub(crate) Arc<CreateOnly>);

impl HttpConnector for CreateOnlyConnector {
    fn connect(&self, options: &ClientOptions) -> object_store::Result<HttpClient> {
        let inner = ReqwestConnector::default().connect(options)?;
        Ok(HttpClient::new(CreateOnlyService {
            inner,
            creates: self.0.clone(),
        }))
    }
}

#[derive(Debug)]
struct CreateOnlyService {
    inner: HttpClient,
    creates: Arc<CreateOnly>,
}

#[async_trait::async_trait]
impl HttpService for CreateOnlyService {
    async fn call(&self, mut req: HttpRequest) -> std::result::Result<HttpResponse, HttpError> {
        if self.creates.completes_a_create(&req) {
            req.headers_mut().insert(
                http::header::IF_NONE_MATCH,
                http::HeaderValue::from_static("*"),
            );
        }
        self.inner.execute(req).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(method: http::Method, uri: &str) -> HttpRequest {
        let mut req = HttpRequest::new(object_store::client::HttpRequestBody::empty());
        *req.method_mut() = method;
        *req.uri_mut() = uri.parse().unwrap();
        req
    }

    #[test]
    fn only_the_completion_of_a_registered_keys_upload_is_conditional() {
        let set = Arc::new(CreateOnly::default());
        let key = Path::from("app db/0009/0000000000000001-0000000000000006.ltx");
        let complete = "http://s3.test/bucket/app%20db/0009/0000000000000001-0000000000000006.ltx?uploadId=abc";
        assert!(!set.completes_a_create(&request(http::Method::POST, complete)));
        let registered = set.register(&key);
        let twice = set.register(&key);
        assert!(set.completes_a_create(&request(http::Method::POST, complete)));
        // Virtual-hosted style: the key right after the host.
        let hosted = "http://bucket.s3.test/app%20db/0009/0000000000000001-0000000000000006.ltx?uploadId=abc";
        assert!(set.completes_a_create(&request(http::Method::POST, hosted)));
        // The upload's start and its parts, another key ending the same way.
        let start =
            "http://s3.test/bucket/app%20db/0009/0000000000000001-0000000000000006.ltx?uploads";
        assert!(!set.completes_a_create(&request(http::Method::POST, start)));
        let part = "http://s3.test/bucket/app%20db/0009/0000000000000001-0000000000000006.ltx?partNumber=1&uploadId=abc";
        assert!(!set.completes_a_create(&request(http::Method::PUT, part)));
        let other = "http://s3.test/bucket/xapp%20db/0009/0000000000000001-0000000000000006.ltx?uploadId=abc";
        assert!(!set.completes_a_create(&request(http::Method::POST, other)));
        drop(registered);
        assert!(set.completes_a_create(&request(http::Method::POST, complete)));
        drop(twice);
        assert!(!set.completes_a_create(&request(http::Method::POST, complete)));
    }
}
