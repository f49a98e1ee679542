//! Community plugins by reference, against a real OCI distribution server
//! (`docker-registry`, CNCF distribution, which `.ci/run` installs) started
//! on 127.0.0.1 for each test: `assay plugin publish`, `add`, `update`, runs
//! that read the plugin store offline, a moved tag, tampered blobs, cosign
//! signatures, and components at URLs.

use crate::fake_server::{FakeServer, Reply};
use crate::util::{assay_command, fixture, stderr, stdout};
use assay::sandbox::sha256_hex;
use oci_client::client::{ClientConfig, ClientProtocol, Config, ImageLayer};
use oci_client::manifest::OciImageManifest;
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};
use p256::ecdsa::signature::Signer as _;
use p256::ecdsa::{Signature, SigningKey};
use p256::pkcs8::EncodePublicKey as _;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A `docker-registry` on 127.0.0.1, storing into a temporary folder;
/// killed on drop.
struct Registry {
    child: Child,
    host: String,
    storage: tempfile::TempDir,
}

impl Registry {
    fn start() -> Registry {
        let binary = std::env::var_os("ASSAY_TEST_REGISTRY").unwrap_or_else(|| "docker-registry".into());
        let storage = tempfile::tempdir().unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let config = storage.path().join("config.yml");
        let data = storage.path().join("data");
        let yaml = format!(
            "version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:{port}\n",
            data.display()
        );
        std::fs::write(&config, yaml).unwrap();
        let child = Command::new(&binary)
            .arg("serve")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot start {binary:?} ({e}): the registry tests need CNCF distribution's registry \
                     (`apt-get install docker-registry`, as .ci/run does, or ASSAY_TEST_REGISTRY=PATH)"
                )
            });
        let registry = Registry { child, host: format!("127.0.0.1:{port}"), storage };
        let started = Instant::now();
        while std::net::TcpStream::connect(&registry.host).is_err() {
            assert!(started.elapsed() < Duration::from_secs(20), "the registry did not start listening");
            std::thread::sleep(Duration::from_millis(50));
        }
        registry
    }

    fn reference(&self, repository_and_tag: &str) -> String {
        format!("{}/{repository_and_tag}", self.host)
    }

    /// The file the registry keeps the blob `sha256` in.
    fn blob_file(&self, sha256: &str) -> PathBuf {
        self.storage.path().join(format!("data/docker/registry/v2/blobs/sha256/{}/{sha256}/data", &sha256[..2]))
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A project folder and a plugin store of its own: a machine of its own.
struct Machine {
    dir: tempfile::TempDir,
}

impl Machine {
    fn new() -> Machine {
        Machine { dir: tempfile::tempdir().unwrap() }
    }

    fn config(&self) -> PathBuf {
        self.dir.path().join("assay.toml")
    }

    fn store(&self) -> PathBuf {
        self.dir.path().join("cache/assay/plugins")
    }

    fn assay(&self, args: &[&str]) -> Output {
        assay_command()
            .current_dir(self.dir.path())
            .env("XDG_CACHE_HOME", self.dir.path().join("cache"))
            .env_remove("ASSAY_REGISTRY_USERNAME")
            .env_remove("ASSAY_REGISTRY_PASSWORD")
            .args(args)
            .output()
            .unwrap()
    }

    /// `assay check` of a key of the hostile fixture: `count` passes,
    /// `panic` fails the check with an error.
    fn check(&self, key: &str) -> Output {
        self.assay(&["check", "--key", key, "--actual", "\"abc\"", "--expected", "3", "--json"])
    }

    fn config_text(&self) -> String {
        std::fs::read_to_string(self.config()).unwrap_or_default()
    }
}

fn hostile() -> Vec<u8> {
    std::fs::read(fixture("plugins/hostile/hostile.wasm")).unwrap()
}

/// `component` with a custom section appended: another sha256, the same
/// plugin (a new release that changed nothing that runs).
fn rereleased(component: &[u8], note: &str) -> Vec<u8> {
    let mut bytes = component.to_vec();
    let name = "assay-test-release";
    let mut payload = vec![name.len() as u8];
    payload.extend_from_slice(name.as_bytes());
    payload.extend_from_slice(note.as_bytes());
    assert!(payload.len() < 128, "one LEB128 byte");
    bytes.push(0);
    bytes.push(payload.len() as u8);
    bytes.extend_from_slice(&payload);
    bytes
}

fn write_component(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn ok(output: &Output) -> String {
    assert_eq!(output.status.code(), Some(0), "stdout:\n{}\nstderr:\n{}", stdout(output), stderr(output));
    stdout(output)
}

fn publish(machine: &Machine, reference: &str, component: &[u8]) -> String {
    let file = write_component(machine.dir.path(), "publish.wasm", component);
    let out = ok(&machine.assay(&["plugin", "publish", reference, file.to_str().unwrap()]));
    let pinned = out.lines().next().unwrap().strip_prefix("Published ").unwrap().to_owned();
    pinned.split_once('@').unwrap().1.to_owned()
}

#[test]
fn add_pins_a_published_plugin_and_runs_read_it_from_the_store_without_the_network() {
    let registry = Registry::start();
    let author = Machine::new();
    let reference = registry.reference("acme/hostile:1.0.0");
    let file = write_component(author.dir.path(), "hostile.wasm", &hostile());
    let published = ok(&author.assay(&["plugin", "publish", &reference, file.to_str().unwrap()]));
    assert!(published.starts_with(&format!("Published {reference}@sha256:")), "{published}");
    assert!(published.contains("hostile 0.1.0 provides:\n"), "{published}");
    assert!(published.contains(&format!("Add it to a project with `assay plugin add {reference}`.")), "{published}");

    let user = Machine::new();
    let added = ok(&user.assay(&["plugin", "add", &reference]));
    let sha256 = sha256_hex(&hostile());
    let manifest = published.lines().next().unwrap().strip_prefix("Published ").unwrap();
    assert!(added.starts_with(&format!("Fetched {manifest}\nsha256 {sha256}\nhostile 0.1.0 provides:\n")), "{added}");
    assert!(added.contains("\n  count "), "the key table: {added}");
    assert!(added.contains("It asks for: log\n"), "{added}");
    assert!(added.contains("Added [plugins.hostile] to assay.toml:\n  [plugins.hostile]\n"), "{added}");
    let config = user.config_text();
    assert_eq!(config, format!("[plugins.hostile]\noci = \"{manifest}\"\nsha256 = \"{sha256}\"\n"));
    assert!(user.store().join(format!("sha256/{sha256}.wasm")).is_file());

    // Offline: the registry is gone, the run reads the store.
    drop(registry);
    let passed = ok(&user.check("count"));
    assert!(passed.starts_with("{\"pass\":true,\"outcome\":\"pass\","), "{passed}");
    let failed = user.check("panic");
    assert!(stdout(&failed).starts_with("{\"pass\":false,\"outcome\":\"error\","), "{}", stdout(&failed));

    // A teammate's machine has no copy, and the registry is down: the
    // error names the entry and what failed.
    let teammate = Machine::new();
    std::fs::write(teammate.config(), &config).unwrap();
    let refused = teammate.check("count");
    assert_eq!(refused.status.code(), Some(1), "{}", stderr(&refused));
    let error = stderr(&refused);
    assert!(error.contains("in [plugins.hostile] of assay.toml: `"), "{error}");
    assert!(error.contains("error sending request") || error.contains("onnect"), "{error}");
}

#[test]
fn a_teammate_fetches_by_the_pin_and_a_moved_tag_changes_nothing_until_update() {
    let registry = Registry::start();
    let author = Machine::new();
    let reference = registry.reference("acme/hostile:1");
    let first = publish(&author, &reference, &hostile());
    let user = Machine::new();
    ok(&user.assay(&["plugin", "add", &reference]));
    let pinned = user.config_text();

    // The publisher moves the tag to a new release.
    let second_release = rereleased(&hostile(), "2");
    let second = publish(&author, &reference, &second_release);
    assert_ne!(first, second);

    // A run, here and on a new machine, uses the pinned release.
    let teammate = Machine::new();
    std::fs::write(teammate.config(), &pinned).unwrap();
    for machine in [&user, &teammate] {
        let listed = ok(&machine.assay(&["plugins"]));
        assert!(listed.contains(&format!("hostile 0.1.0 (oci `{reference}@{first}`)\n")), "{listed}");
        assert!(listed.contains(&format!("sha256 {}", sha256_hex(&hostile()))), "{listed}");
        assert!(!listed.contains(&sha256_hex(&second_release)), "{listed}");
    }
    assert_eq!(user.config_text(), pinned, "a run never moves a pin");

    // `update` follows the tag, says what moved and writes the new pins.
    let updated = ok(&user.assay(&["plugin", "update"]));
    let (old, new) = (sha256_hex(&hostile()), sha256_hex(&second_release));
    assert!(updated.starts_with("hostile: updated to hostile 0.1.0 ("), "{updated}");
    assert!(updated.contains(&format!("  sha256 {old} -> {new}\n")), "{updated}");
    let config = user.config_text();
    assert!(config.contains(&format!("oci = \"{reference}@{second}\"")), "{config}");
    assert!(config.contains(&format!("sha256 = \"{new}\"")), "{config}");
    let again = ok(&user.assay(&["plugin", "update", "hostile"]));
    assert_eq!(again, format!("hostile: up to date (hostile 0.1.0, sha256 {new})\n"));

    // A release that asks for more than `grants` allows is not taken.
    let probe = std::fs::read(fixture("plugins/capability-probe/capability-probe.wasm")).unwrap();
    publish(&author, &reference, &probe);
    let refused = user.assay(&["plugin", "update"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stdout(&refused));
    let error = stderr(&refused);
    assert!(error.contains("now asks for judge and embeddings, which `grants` does not allow"), "{error}");
    assert_eq!(user.config_text(), config, "nothing written");

    // update NAME of something that is not a community plugin.
    let unknown = user.assay(&["plugin", "update", "nope"]);
    assert!(stderr(&unknown).contains("assay.toml has no [plugins.nope] (it has: hostile)"), "{}", stderr(&unknown));
}

#[test]
fn a_tampered_blob_in_the_registry_or_the_store_is_refused() {
    let registry = Registry::start();
    let author = Machine::new();
    let reference = registry.reference("acme/hostile:1");
    publish(&author, &reference, &hostile());
    let user = Machine::new();
    ok(&user.assay(&["plugin", "add", &reference]));
    let sha256 = sha256_hex(&hostile());

    // The store's copy changed on disk: its pin refuses it.
    let stored = user.store().join(format!("sha256/{sha256}.wasm"));
    let mut bytes = std::fs::read(&stored).unwrap();
    *bytes.last_mut().unwrap() ^= 1;
    std::fs::write(&stored, &bytes).unwrap();
    let refused = user.assay(&["plugins"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(stderr(&refused).contains(&format!("but assay.toml pins {sha256}")), "{}", stderr(&refused));

    // The registry's copy changed on disk: a machine fetching it refuses it.
    std::fs::remove_file(&stored).unwrap();
    let blob = registry.blob_file(&sha256);
    let mut bytes = std::fs::read(&blob).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&blob, &bytes).unwrap();
    let refused = user.assay(&["plugins"]);
    assert_eq!(refused.status.code(), Some(1), "{}", stdout(&refused));
    let error = stderr(&refused);
    assert!(error.contains("in [plugins.hostile] of assay.toml: `"), "{error}");
    assert!(error.contains(&format!("not the pinned sha256:{sha256}: refusing it")), "{error}");
    assert!(!stored.exists(), "nothing stored");
}

/// A cosign key pair made from a fixed secret.
fn cosign_key(dir: &Path, name: &str, secret: u8) -> (SigningKey, PathBuf) {
    let key = SigningKey::from_bytes(&[secret; 32].into()).unwrap();
    let pem = key.verifying_key().to_public_key_pem(p256::pkcs8::LineEnding::LF).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, pem).unwrap();
    (key, path)
}

/// Signs the manifest `digest` of `reference` as `cosign sign --key` does:
/// a simple-signing payload as a layer of the manifest tagged
/// `sha256-H.sig`, its DER signature in the layer's annotation.
fn cosign_sign(reference: &str, digest: &str, key: &SigningKey) {
    let reference: Reference = reference.parse().unwrap();
    let payload = serde_json::json!({
        "critical": {
            "identity": {"docker-reference": format!("{}/{}", reference.registry(), reference.repository())},
            "image": {"docker-manifest-digest": digest},
            "type": "cosign container image signature",
        },
        "optional": null,
    });
    let payload = serde_json::to_vec(&payload).unwrap();
    let signature: Signature = key.sign(&payload);
    let encoded = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, signature.to_der().as_bytes());
    let annotations = BTreeMap::from([("dev.cosignproject.cosign/signature".to_owned(), encoded)]);
    let layer = ImageLayer::new(payload, "application/vnd.dev.cosign.simplesigning.v1+json".into(), Some(annotations));
    let config = Config::new(b"{}".to_vec(), "application/vnd.oci.image.config.v1+json".into(), None);
    let tag = format!("{}.sig", digest.replace(':', "-"));
    let target = Reference::with_tag(reference.registry().into(), reference.repository().into(), tag);
    push(&target, layer, config);
}

fn push(target: &Reference, layer: ImageLayer, config: Config) {
    let client = Client::new(ClientConfig { protocol: ClientProtocol::Http, ..ClientConfig::default() });
    let manifest = OciImageManifest::build(std::slice::from_ref(&layer), &config, None);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(client.push(target, &[layer], config, &RegistryAuth::Anonymous, Some(manifest))).unwrap();
}

#[test]
fn cosign_key_requires_a_signature_by_that_key_before_first_use_on_every_machine() {
    let registry = Registry::start();
    let author = Machine::new();
    let reference = registry.reference("acme/hostile:1");
    let digest = publish(&author, &reference, &hostile());
    let user = Machine::new();
    let (publisher, public) = cosign_key(user.dir.path(), "acme.pub", 7);
    let (_, stranger) = cosign_key(user.dir.path(), "stranger.pub", 9);

    // Unsigned: refused, nothing written, nothing stored.
    let refused = user.assay(&["plugin", "add", &reference, "--cosign-key", "acme.pub"]);
    assert_eq!(refused.status.code(), Some(1), "{}", stdout(&refused));
    let error = stderr(&refused);
    let tag = format!("{}.sig", digest.replace(':', "-"));
    assert!(
        error.contains(&format!(
            "has no valid cosign signature by `acme.pub`: the registry has no signatures for it (no `{tag}`)"
        )),
        "{error}"
    );
    assert!(error.contains("cosign sign --key"), "{error}");
    assert!(!user.config().exists());
    assert!(!user.store().join(format!("sha256/{}.wasm", sha256_hex(&hostile()))).exists());

    // Signed by the publisher: added, with the key written beside it.
    cosign_sign(&reference, &digest, &publisher);
    let added = ok(&user.assay(&["plugin", "add", &reference, "--cosign-key", "acme.pub"]));
    assert!(added.contains("signed: a cosign signature by `acme.pub` verified\n"), "{added}");
    let config = user.config_text();
    assert!(config.ends_with("cosign-key = \"acme.pub\"\n"), "{config}");

    // Another key's holder did not sign it.
    let other = Machine::new();
    std::fs::copy(&stranger, other.dir.path().join("stranger.pub")).unwrap();
    let refused = other.assay(&["plugin", "add", &reference, "--cosign-key", "stranger.pub"]);
    assert!(stderr(&refused).contains("of the signatures at `"), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("it is not signed by this key"), "{}", stderr(&refused));

    // A teammate's first use verifies too; so does a machine that has the
    // component already from a project that did not ask for a signature.
    let teammate = Machine::new();
    std::fs::write(teammate.config(), &config).unwrap();
    std::fs::copy(&public, teammate.dir.path().join("acme.pub")).unwrap();
    assert!(ok(&teammate.check("count")).contains("\"pass\":true"));
    let unsigned_reference = registry.reference("acme/hostile:unsigned");
    let unsigned_digest = publish(&author, &unsigned_reference, &rereleased(&hostile(), "unsigned"));
    let casual = Machine::new();
    ok(&casual.assay(&["plugin", "add", &unsigned_reference]));
    let strict = casual.config_text().replace("[plugins.hostile]", "[plugins.hostile]\ncosign-key = \"acme.pub\"");
    std::fs::write(casual.config(), strict).unwrap();
    std::fs::copy(&public, casual.dir.path().join("acme.pub")).unwrap();
    let refused = casual.check("count");
    assert_eq!(refused.status.code(), Some(1), "{}", stdout(&refused));
    let tag = format!("{}.sig", unsigned_digest.replace(':', "-"));
    assert!(stderr(&refused).contains(&format!("no `{tag}`")), "{}", stderr(&refused));
}

#[test]
fn what_is_not_a_matcher_component_is_refused_by_name() {
    let registry = Registry::start();
    let user = Machine::new();

    // A container image's manifest, not a Wasm component's.
    let image = registry.reference("acme/image:1");
    let layer = ImageLayer::new(b"not wasm".to_vec(), "application/vnd.oci.image.layer.v1.tar".into(), None);
    let config = Config::new(b"{}".to_vec(), "application/vnd.oci.image.config.v1+json".into(), None);
    push(&image.parse().unwrap(), layer, config);
    let refused = user.assay(&["plugin", "add", &image]);
    assert_eq!(refused.status.code(), Some(1));
    let error = stderr(&refused);
    assert!(
        error.contains("is not a Wasm component: its config is `application/vnd.oci.image.config.v1+json`"),
        "{error}"
    );

    // A Wasm artifact whose component is no matcher plugin (an agent).
    let agent = registry.reference("acme/agent:1");
    let bytes = std::fs::read(fixture("plugins/wat/hostile-agent.wasm")).unwrap();
    let layer = ImageLayer::new(bytes, "application/wasm".into(), None);
    let config = Config::new(b"{}".to_vec(), "application/vnd.wasm.config.v0+json".into(), None);
    push(&agent.parse().unwrap(), layer, config);
    let refused = user.assay(&["plugin", "add", &agent]);
    assert_eq!(refused.status.code(), Some(1), "{}", stdout(&refused));
    assert!(stderr(&refused).contains("is not a matcher plugin assay can load: "), "{}", stderr(&refused));

    // A tag nobody pushed, a reference without a registry, a bad grant.
    let missing = user.assay(&["plugin", "add", &registry.reference("acme/nothing:1")]);
    assert!(stderr(&missing).contains("the registry has no such manifest"), "{}", stderr(&missing));
    let bare = user.assay(&["plugin", "add", "acme/rouge:1"]);
    assert_eq!(bare.status.code(), Some(2));
    assert!(stderr(&bare).contains("it names no registry"), "{}", stderr(&bare));
    assert!(!user.config().exists(), "nothing written");

    // A label that is taken.
    let reference = registry.reference("acme/hostile:1");
    let author = Machine::new();
    publish(&author, &reference, &hostile());
    ok(&user.assay(&["plugin", "add", &reference]));
    let twice = user.assay(&["plugin", "add", &reference]);
    assert_eq!(twice.status.code(), Some(2));
    let error = stderr(&twice);
    assert!(error.contains("[plugins.hostile] is taken"), "{error}");
    assert!(error.contains("`assay plugin update hostile`"), "{error}");
    ok(&user.assay(&["plugin", "add", &reference, "--name", "hostile-two"]));
}

#[test]
fn a_component_at_a_url_is_pinned_by_its_sha256() {
    let served = std::sync::Arc::new(std::sync::Mutex::new(hostile()));
    let body = served.clone();
    let server = FakeServer::start(move |_| {
        let bytes = body.lock().unwrap().clone();
        let mut reply = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/wasm\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            bytes.len()
        )
        .into_bytes();
        reply.extend_from_slice(&bytes);
        Reply::Raw(reply)
    });
    let url = format!("{}/hostile.wasm", server.url());
    let user = Machine::new();
    let added = ok(&user.assay(&["plugin", "add", &url]));
    assert!(added.starts_with(&format!("Fetched {url}\n")), "{added}");
    let sha256 = sha256_hex(&hostile());
    assert_eq!(user.config_text(), format!("[plugins.hostile]\nurl = \"{url}\"\nsha256 = \"{sha256}\"\n"));
    assert!(ok(&user.check("count")).contains("\"pass\":true"));

    // The server now sends something else: a new machine refuses it.
    *served.lock().unwrap() = rereleased(&hostile(), "changed");
    let teammate = Machine::new();
    std::fs::write(teammate.config(), user.config_text()).unwrap();
    let refused = teammate.check("count");
    assert_eq!(refused.status.code(), Some(1));
    assert!(stderr(&refused).contains(&format!("not the pinned {sha256}: refusing it")), "{}", stderr(&refused));

    // A server announcing more than a component may be is not read.
    let huge = FakeServer::start(|_| {
        Reply::Raw(b"HTTP/1.1 200 OK\r\ncontent-length: 1000000000\r\nconnection: close\r\n\r\n".to_vec())
    });
    let refused = user.assay(&["plugin", "add", &format!("{}/huge.wasm", huge.url())]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        stderr(&refused).contains("is 1000000000 bytes, more than the 64 MiB a component may be"),
        "{}",
        stderr(&refused)
    );

    // cosign signatures live in registries.
    let key = cosign_key(user.dir.path(), "k.pub", 3).1;
    let refused = user.assay(&["plugin", "add", &url, "--name", "other", "--cosign-key", key.to_str().unwrap()]);
    assert!(stderr(&refused).contains("a URL has none"), "{}", stderr(&refused));
}
