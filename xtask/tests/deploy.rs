//! The container recipe: the Dockerfile's stages, packages and features
//! exist in this workspace, and the Kubernetes Jobs in deploy/kubernetes
//! are wired as docs/multi-client.md says (Indexed, completion index as
//! client.index, start.at, the results volume, the merge step). No
//! container engine is needed: the Jobs' own scripts, with their own
//! environment, run here as the pods would run them (the image's paths
//! swapped for this checkout's) against a real redis-server.

mod common;

use std::collections::BTreeMap;
use std::process::{Command, Stdio};

use yaml_rust2::{Yaml, YamlLoader};

use common::{root, ycsb};

fn yaml(name: &str) -> Yaml {
    let path = root().join("deploy/kubernetes").join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut docs =
        YamlLoader::load_from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(docs.len(), 1, "{name}: one document");
    docs.remove(0)
}

fn str_of<'a>(y: &'a Yaml, what: &str) -> &'a str {
    y.as_str()
        .unwrap_or_else(|| panic!("{what}: not a string: {y:?}"))
}

fn container(job: &Yaml) -> &Yaml {
    let containers = job["spec"]["template"]["spec"]["containers"]
        .as_vec()
        .unwrap();
    assert_eq!(containers.len(), 1);
    &containers[0]
}

/// The container's environment: plain values, and `fieldRef:<path>`.
fn env(job: &Yaml) -> BTreeMap<String, String> {
    container(job)["env"]
        .as_vec()
        .unwrap()
        .iter()
        .map(|e| {
            let name = str_of(&e["name"], "env name").to_string();
            let value = match e["value"].as_str() {
                Some(v) => v.to_string(),
                None => format!(
                    "fieldRef:{}",
                    str_of(&e["valueFrom"]["fieldRef"]["fieldPath"], &name)
                ),
            };
            (name, value)
        })
        .collect()
}

/// The container's command (`/bin/sh -c`) and its script.
fn command(job: &Yaml) -> (Vec<String>, String) {
    let c = container(job);
    let command: Vec<String> = c["command"]
        .as_vec()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    assert_eq!(command, ["/bin/sh", "-c"]);
    (command, str_of(&c["args"][0], "args").to_string())
}

fn script(job: &Yaml) -> String {
    command(job).1
}

fn cargo_metadata() -> serde_json::Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(root())
        .args(["metadata", "--format-version", "1", "--no-deps", "--frozen"])
        .output()
        .unwrap();
    assert!(out.status.success());
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_indexed_jobs_and_the_merge_step_are_wired_as_documented() {
    let pvc = yaml("results-pvc.yaml");
    assert_eq!(str_of(&pvc["kind"], "kind"), "PersistentVolumeClaim");
    let claim = str_of(&pvc["metadata"]["name"], "pvc name");
    let modes = pvc["spec"]["accessModes"].as_vec().unwrap();
    assert!(modes.iter().any(|m| m.as_str() == Some("ReadWriteMany")));

    for (file, phase) in [("load-job.yaml", "load"), ("run-job.yaml", "run")] {
        let job = yaml(file);
        assert_eq!(str_of(&job["apiVersion"], file), "batch/v1");
        assert_eq!(str_of(&job["kind"], file), "Job");
        let spec = &job["spec"];
        assert_eq!(str_of(&spec["completionMode"], file), "Indexed");
        let completions = spec["completions"].as_i64().unwrap();
        assert_eq!(spec["parallelism"].as_i64(), Some(completions), "{file}");
        assert_eq!(spec["backoffLimit"].as_i64(), Some(0), "{file}");
        assert_eq!(
            str_of(&spec["template"]["spec"]["restartPolicy"], file),
            "Never"
        );
        let env = env(&job);
        assert_eq!(
            env["JOB_COMPLETION_INDEX"],
            "fieldRef:metadata.annotations['batch.kubernetes.io/job-completion-index']"
        );
        assert_eq!(env["CLIENTS"], completions.to_string(), "{file}");
        assert!(env.contains_key("START_AT"), "{file}");
        let text = script(&job);
        for wiring in [
            format!("exec ycsb {phase} redis"),
            "client.count=\"$CLIENTS\"".into(),
            "client.index=\"$JOB_COMPLETION_INDEX\"".into(),
            "start.at=\"$START_AT\"".into(),
            format!("exportfile=\"$RESULTS/{phase}/client-$JOB_COMPLETION_INDEX.json\""),
        ] {
            assert!(text.contains(&wiring), "{file}: no {wiring} in\n{text}");
        }
        // The exports go to the shared volume.
        let mount = &container(&job)["volumeMounts"][0];
        assert_eq!(str_of(&mount["mountPath"], file), env["RESULTS"]);
        let volume = &job["spec"]["template"]["spec"]["volumes"][0];
        assert_eq!(volume["name"], mount["name"]);
        assert_eq!(
            str_of(&volume["persistentVolumeClaim"]["claimName"], file),
            claim
        );
        let image = str_of(&container(&job)["image"], file);
        assert!(image.ends_with(":client"), "{file}: {image}");
    }
    let merge = yaml("merge-job.yaml");
    assert_ne!(merge["spec"]["completionMode"].as_str(), Some("Indexed"));
    let text = script(&merge);
    assert!(
        text.contains("ycsb merge -o \"$RESULTS/$phase/merged.json\""),
        "{text}"
    );
    assert_eq!(
        env(&merge)["CLIENTS"],
        env(&yaml("run-job.yaml"))["CLIENTS"]
    );
    assert_eq!(
        merge["spec"]["template"]["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"]
            .as_str(),
        Some(claim)
    );
}

/// Runs a Job's script as pod `index` would, with the Job's environment
/// and `overrides` (this machine's paths and server).
fn run_pod(job: &Yaml, index: Option<usize>, overrides: &[(&str, String)]) -> std::process::Child {
    let mut env = env(job);
    env.retain(|_, v| !v.starts_with("fieldRef:"));
    if let Some(i) = index {
        env.insert("JOB_COMPLETION_INDEX".into(), i.to_string());
    }
    for (k, v) in overrides {
        env.insert((*k).into(), v.clone());
    }
    let bin = ycsb().parent().unwrap().to_path_buf();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // Exactly the container's own command and argument, from the Job's
    // YAML: the script is the shipped file's, nothing interpolated.
    let (command, script) = command(job);
    Command::new(&command[0])
        .args(&command[1..])
        .arg(script)
        .env_clear()
        .env("PATH", path)
        .envs(env)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn wait(child: std::process::Child, what: &str) -> String {
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{what}: {err}");
    err.into_owned()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// redis-server on loopback, killed on drop.
struct Redis(std::process::Child, u16);

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_jobs_scripts_load_run_and_merge_against_redis() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let server = Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no", "--dir"])
        .arg(dir.path())
        .stdout(Stdio::null())
        .spawn()
        .expect("redis-server runs (Debian package redis-server)");
    let redis = Redis(server, port);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", redis.1)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "redis-server did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let results = dir.path().join("results");
    let overrides = |start_at: Option<String>| {
        let mut o = vec![
            ("REDIS_HOST", "127.0.0.1".to_string()),
            ("REDIS_PORT", port.to_string()),
            ("RECORDS", "1000".to_string()),
            ("OPERATIONS", "200".to_string()),
            ("THREADS", "2".to_string()),
            (
                "WORKLOAD",
                root().join("workloads/workloada").display().to_string(),
            ),
            ("RESULTS", results.display().to_string()),
        ];
        if let Some(at) = start_at {
            o.push(("START_AT", at));
        }
        o
    };
    let load = yaml("load-job.yaml");
    let clients = load["spec"]["completions"].as_i64().unwrap() as usize;
    // The load with the Job's own START_AT, which has passed: each pod
    // warns and starts at once.
    let pods: Vec<_> = (0..clients)
        .map(|i| run_pod(&load, Some(i), &overrides(None)))
        .collect();
    for (i, pod) in pods.into_iter().enumerate() {
        let err = wait(pod, &format!("load pod {i}"));
        assert!(err.contains("ycsb: warning: start.at"), "{err}");
    }
    let out = Command::new("redis-cli")
        .args(["-p", &port.to_string(), "DBSIZE"])
        .output()
        .unwrap();
    let keys: u64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    // Every record loaded once (the store keeps one index key beside them).
    assert_eq!(keys - 1, 1000);

    // The run with a start time two seconds ahead, as docs/multi-client.md
    // sets it.
    let at = chrono_free_rfc3339(5);
    let run = yaml("run-job.yaml");
    let pods: Vec<_> = (0..clients)
        .map(|i| run_pod(&run, Some(i), &overrides(Some(at.clone()))))
        .collect();
    for (i, pod) in pods.into_iter().enumerate() {
        let err = wait(pod, &format!("run pod {i}"));
        // Held, or (on a machine too loaded to start a pod in five
        // seconds) started at once with the warning.
        assert!(
            err.contains("start.at: holding until") || err.contains("warning: start.at"),
            "{err}"
        );
        let export: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(results.join(format!("run/client-{i}.json"))).unwrap(),
        )
        .unwrap();
        let config = export["config"].as_array().unwrap();
        let value = |key: &str| {
            config
                .iter()
                .find(|c| c["key"] == key)
                .and_then(|c| c["value"].as_str())
                .map(str::to_string)
        };
        assert_eq!(value("start.at"), Some(at.clone()));
        assert_eq!(value("client.index"), Some(i.to_string()));
        // Both RFC 3339 in UTC with whole seconds: ordered as text.
        let started = export["metadata"]["start_time"].as_str().unwrap();
        let started_utc = utc_seconds(started);
        assert!(
            started_utc >= at,
            "pod {i} started {started_utc} before {at}"
        );
    }
    let merge = yaml("merge-job.yaml");
    let report = wait_out(
        run_pod(&merge, None, &[("RESULTS", results.display().to_string())]),
        "merge pod",
    );
    assert!(
        report.contains("[OVERALL], Throughput(ops/sec)"),
        "{report}"
    );
    let merged: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(results.join("run/merged.json")).unwrap())
            .unwrap();
    assert_eq!(merged["phases"][0]["operations"], 200 * clients as u64);
    let load_merged: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(results.join("load/merged.json")).unwrap())
            .unwrap();
    assert_eq!(load_merged["phases"][0]["operations"], 1000);
    assert!(results.join("run/merged/READ.hdr").is_file());
    drop(redis);
}

fn wait_out(child: std::process::Child, what: &str) -> String {
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// An RFC 3339 time in UTC, whole seconds, through `date`.
fn utc_seconds(rfc3339: &str) -> String {
    let out = Command::new("date")
        .args(["-u", "-d", rfc3339, "+%Y-%m-%dT%H:%M:%SZ"])
        .output()
        .unwrap();
    assert!(out.status.success(), "date -d {rfc3339}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// RFC 3339 (UTC, whole seconds) `ahead` seconds from now, from the
/// system's `date` (xtask has no date crate).
fn chrono_free_rfc3339(ahead: u64) -> String {
    let out = Command::new("date")
        .args(["-u", "-d", &format!("+{ahead} sec"), "+%Y-%m-%dT%H:%M:%SZ"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn the_dockerfile_builds_real_packages_and_features() {
    let text = std::fs::read_to_string(root().join("Dockerfile")).unwrap();
    let meta = cargo_metadata();
    let packages: Vec<&str> = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    let cli = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "ycsb-cli")
        .unwrap();
    let features = cli["features"].as_object().unwrap();
    // Continued lines joined, as the shell sees them.
    let text = text.replace("\\\n", " ");
    let mut stages = Vec::new();
    let mut builds = Vec::new();
    for line in text.lines().map(str::trim) {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.first() == Some(&"FROM") {
            assert_eq!(words.len(), 4, "{line}");
            assert!(words[2].eq_ignore_ascii_case("AS"), "{line}");
            stages.push(words[3].to_string());
        }
        if let Some(from) = words.iter().find_map(|w| w.strip_prefix("--from=")) {
            assert!(
                stages.iter().any(|s| s == from),
                "COPY from unknown stage {from}"
            );
        }
        if words.first() == Some(&"COPY") && !line.contains("--from=") {
            let source = words[1];
            assert!(
                source == "." || root().join(source).exists(),
                "COPY of missing {source}"
            );
        }
        if let Some(at) = words.windows(2).position(|w| w == ["cargo", "build"]) {
            let args = &words[at..];
            builds.push((stages.last().cloned().unwrap(), args.join(" ")));
            assert!(args.contains(&"--locked"), "{line}");
            for pair in args.windows(2) {
                if pair[0] == "-p" {
                    assert!(packages.contains(&pair[1]), "no package {}", pair[1]);
                }
                if pair[0] == "--features" {
                    for f in pair[1].split(',') {
                        assert!(features.contains_key(f), "ycsb-cli has no feature {f}");
                    }
                }
            }
        }
    }
    assert_eq!(stages, ["build-client", "build-full", "client", "full"]);
    let client = &builds.iter().find(|(s, _)| s == "build-client").unwrap().1;
    assert!(
        client.contains("--no-default-features --features redis,http"),
        "{client}"
    );
    let full = &builds.iter().find(|(s, _)| s == "build-full").unwrap().1;
    assert!(!full.contains("--no-default-features"), "{full}");
    // The Rust image is at least the workspace's rust-version.
    let rust = text
        .lines()
        .find_map(|l| l.strip_prefix("ARG RUST_VERSION="))
        .unwrap();
    let wanted = cli["rust_version"].as_str().unwrap();
    let version = |v: &str| -> Vec<u32> { v.split('.').map(|n| n.parse().unwrap()).collect() };
    assert!(version(rust) >= version(wanted), "{rust} < {wanted}");
    // The build context leaves the build output out.
    let ignore = std::fs::read_to_string(root().join(".dockerignore")).unwrap();
    assert!(ignore.lines().any(|l| l == "/target"), "{ignore}");
}
